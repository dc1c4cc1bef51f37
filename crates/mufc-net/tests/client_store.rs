//! A client's store holds its records: it is created new, readable and
//! writable by its owner alone (issue 28, item 10), whatever the umask,
//! and never over an existing file or through a symbolic link.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use mufc_net::client_store::ClientStore;
use testkit::mufc::{Mixture, gaussian_clients};

#[cfg(unix)]
#[test]
fn a_new_client_store_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-mode", Mixture::net(1));
    let path = dir.path().join("a.db");
    ClientStore::create(&path, "a", &data[0]).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
    // It opens and holds what it was given.
    let store = ClientStore::open(&path).unwrap();
    assert_eq!(store.name().unwrap(), "a");
}

#[test]
fn a_client_store_is_not_created_over_a_file_or_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-exists", Mixture::net(1));
    let taken = dir.path().join("taken.db");
    std::fs::write(&taken, b"someone else's").unwrap();
    let err = ClientStore::create(&taken, "a", &data[0]).unwrap_err();
    assert!(err.to_string().contains("exists"), "{err}");
    assert_eq!(std::fs::read(&taken).unwrap(), b"someone else's");
    #[cfg(unix)]
    {
        let link = dir.path().join("link.db");
        std::os::unix::fs::symlink(dir.path().join("elsewhere.db"), &link).unwrap();
        let err = ClientStore::create(&link, "a", &data[0]).unwrap_err();
        assert!(err.to_string().contains("exists"), "{err}");
        assert!(!dir.path().join("elsewhere.db").exists());
    }
}

/// A point outside the model's box would fail every round the client
/// joins, and its coordinate would reach the server in the refusal
/// (issue 28, item 10): the store refuses it at import, names the point
/// and the remedy, and writes nothing.
#[test]
fn points_outside_the_box_are_refused_at_import() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-box", Mixture::net(1));
    let inside = &data[0];
    for (row, bad) in [(3usize, 0.75), (0, -0.500_000_1), (7, 150.0)] {
        let mut points = inside.points().clone();
        points[(1, row)] = bad;
        let outside = seeding::Dataset::new(points).unwrap();
        let path = dir.path().join(format!("outside-{row}.db"));
        let err = ClientStore::create(&path, "a", &outside)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("outside the model's box") && err.contains(&format!("row {row}")),
            "{err}"
        );
        assert!(err.contains("bounds"), "the remedy: {err}");
        assert!(!path.exists(), "nothing is written");
    }
    // The box's own edges are inside.
    let mut points = inside.points().clone();
    points[(0, 0)] = 0.5;
    points[(1, 0)] = -0.5;
    let edge = seeding::Dataset::new(points).unwrap();
    ClientStore::create(dir.path().join("edge.db"), "a", &edge).unwrap();
}
