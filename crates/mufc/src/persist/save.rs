//! Saving a federation: its bytes ([`Federation::to_bytes`]) and the
//! atomic write of a file ([`Federation::save`], see "Atomic saves" in the
//! `persist` module docs).

use std::fs::File;
use std::path::Path;

use super::format::{bad, seal};
#[cfg(doc)]
use crate::MufcError;
use crate::MufcResult;

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, written by `write`, flushed, renamed over `path`, then the
/// directory flushed (on unix; elsewhere best effort: the rename is
/// atomic, its durability up to the platform). On any error `path` is
/// untouched and the temporary file removed.
pub(crate) fn write_atomically(
    path: &Path,
    bytes: &[u8],
    write: impl FnOnce(&mut File, &[u8]) -> std::io::Result<()>,
) -> MufcResult<()> {
    let fail =
        |what: &str, e: std::io::Error| bad(format!("cannot {what} {}: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".mufc-save-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| fail("create a temporary file next to", e))?;
    write(tmp.as_file_mut(), bytes).map_err(|e| fail("write", e))?;
    tmp.as_file().sync_all().map_err(|e| fail("flush", e))?;
    tmp.persist(path).map_err(|e| fail("replace", e.error))?;
    sync_dir(dir).map_err(|e| fail("flush the directory of", e))
}

/// A body as the bytes of a saved federation: postcard, sealed.
pub(crate) fn sealed(repr: &super::body::Repr) -> MufcResult<Vec<u8>> {
    postcard::to_allocvec(repr)
        .map(|body| seal(&body))
        .map_err(|e| bad(format!("cannot serialize: {e}")))
}

/// Flushes a directory's entries (the rename of a save) to disk.
#[cfg(unix)]
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Best effort: directories cannot be opened for flushing here.
#[cfg(not(unix))]
pub(crate) fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )]

    use std::io::Write;

    use seeding_testkit::mixtures::{Mixture, gaussian_clients};

    use super::write_atomically;
    use crate::{ClientId, Federation, FederationConfig, MufcError, RemovalRequest};

    fn small() -> Federation {
        let data = gaussian_clients("persist-atomic", Mixture::TINY);
        let config = FederationConfig::new(2).gamma(0.1).validate().unwrap();
        Federation::new(data, &config).unwrap()
    }

    /// The names in `dir`.
    fn entries(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_save_that_fails_midway_leaves_the_old_file_whole_and_no_temporary_file() {
        let mut fed = small();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fed.mufc");
        fed.save(&path).unwrap();
        let v1 = fed.to_bytes().unwrap();
        let ids = |c: usize| vec![fed.clients()[c].data().id(2)];
        fed.remove(&RemovalRequest::points(ClientId(0), ids(0)).with_points(ClientId(1), ids(1)))
            .unwrap();
        let v2 = fed.to_bytes().unwrap();
        assert_ne!(v1, v2);
        let n = v2.len();
        for k in [0, 1, 7, 8, 16, 17, n / 2, n - 33, n - 32, n - 1, n] {
            // A writer that stops after k bytes with an error (a full disk,
            // a crash of the writing side).
            let err = write_atomically(&path, &v2, |f, b| {
                f.write_all(&b[..k])?;
                Err(std::io::Error::other(format!(
                    "injected failure after {k} bytes"
                )))
            })
            .unwrap_err();
            assert!(
                matches!(&err, MufcError::Persistence(m) if m.contains("injected failure")),
                "{err}"
            );
            assert_eq!(std::fs::read(&path).unwrap(), v1, "k = {k}");
            assert_eq!(Federation::load(&path).unwrap().to_bytes().unwrap(), v1);
            assert_eq!(entries(dir.path()), ["fed.mufc"], "k = {k}");
        }
        // The same save without the failure replaces the file.
        fed.save(&path).unwrap();
        assert_eq!(Federation::load(&path).unwrap().to_bytes().unwrap(), v2);
        assert_eq!(entries(dir.path()), ["fed.mufc"]);
    }

    #[test]
    fn saving_into_a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("fed.mufc");
        assert!(matches!(
            small().save(&path),
            Err(MufcError::Persistence(_))
        ));
        assert_eq!(entries(dir.path()), Vec::<String>::new());
    }
}
