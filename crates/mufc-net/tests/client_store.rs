//! A client's store holds its records: it is created new, readable and
//! writable by its owner alone (issue 28, item 10), whatever the umask,
//! and never over an existing file or through a symbolic link.

#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use mufc_net::client_store::{Asked, ClientStore, RequestStatus};
use seeding::Dataset;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

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
        let outside = Dataset::new(points).unwrap();
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
    let edge = Dataset::new(points).unwrap();
    ClientStore::create(dir.path().join("edge.db"), "a", &edge).unwrap();
}

/// The bytes of `path` with the first `from` replaced by `to` (same
/// length): a bit flip on disk, under SQLite.
fn flip(path: &std::path::Path, from: &[u8], to: &[u8]) {
    let mut bytes = std::fs::read(path).unwrap();
    let at = bytes
        .windows(from.len())
        .position(|w| w == from)
        .expect("the bytes are in the file");
    bytes[at..at + to.len()].copy_from_slice(to);
    std::fs::write(path, bytes).unwrap();
}

/// A bit flip turned a pending erasure of points `17,22` into one of
/// `17,23` (issue 28, item 10): the request's checksum refuses it, at
/// open and at every read, instead of erasing the wrong record.
#[test]
fn a_flipped_bit_in_a_request_is_refused_not_applied() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-flip", Mixture::net(1));
    let path = dir.path().join("a.db");
    let store = ClientStore::create(&path, "a", &data[0]).unwrap();
    let request = store
        .request(&[seeding::PointId(17), seeding::PointId(22)])
        .unwrap();
    assert_eq!(store.pending().unwrap()[0].0, request);
    drop(store);
    // '2' is 0x32, '3' is 0x33: one bit.
    flip(&path, b"17,22", b"17,23");
    let err = ClientStore::open(&path).unwrap_err().to_string();
    assert!(err.contains("checksum") && err.contains("damaged"), "{err}");
}

/// A request's status flipped on disk is refused too (a pending erasure
/// must not vanish from the queries that look for it): here by the
/// column's CHECK, which the quick check at open reads.
#[test]
fn a_flipped_status_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-status", Mixture::net(1));
    let path = dir.path().join("a.db");
    let store = ClientStore::create(&path, "a", &data[0]).unwrap();
    store.request(&[seeding::PointId(3)]).unwrap();
    drop(store);
    flip(&path, b"pending", b"pendinf");
    let err = ClientStore::open(&path).unwrap_err().to_string();
    assert!(err.contains("damaged"), "{err}");
}

/// A truncated store is refused at open by SQLite's quick check, not
/// read with its missing pages as zeros.
#[test]
fn a_truncated_store_is_refused_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-cut", Mixture::net(1));
    let path = dir.path().join("a.db");
    drop(ClientStore::create(&path, "a", &data[0]).unwrap());
    let len = std::fs::metadata(&path).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(len - 4096).unwrap();
    drop(file);
    let err = ClientStore::open(&path).unwrap_err().to_string();
    assert!(
        err.contains("damaged") && err.contains("malformed"),
        "{err}"
    );
}

/// A store of the version before request checksums gets them at its first
/// open, and its requests read back as they were.
#[test]
fn a_store_without_request_checksums_gets_them_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-upgrade", Mixture::net(1));
    let path = dir.path().join("a.db");
    let store = ClientStore::create(&path, "a", &data[0]).unwrap();
    let first = store
        .request(&[seeding::PointId(4), seeding::PointId(9)])
        .unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch(
        "ALTER TABLE requests DROP COLUMN sha256; ALTER TABLE requests DROP COLUMN records",
    )
    .unwrap();
    drop(conn);
    let store = ClientStore::open(&path).unwrap();
    assert_eq!(
        store.pending().unwrap(),
        vec![(
            first,
            Asked::Forget(vec![seeding::PointId(4), seeding::PointId(9)])
        )]
    );
    let second = store.request(&[seeding::PointId(5)]).unwrap();
    assert_eq!(store.pending().unwrap().len(), 2);
    assert!(second > first);
}

/// A store of the version before additions (issue 29) gets the column of
/// their records at its first open; its removals keep their checksums,
/// and it takes additions then. A damaged addition is caught.
#[test]
fn a_store_before_additions_takes_them_after_its_first_open() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-additions", Mixture::net(1));
    let path = dir.path().join("a.db");
    let store = ClientStore::create(&path, "a", &data[0]).unwrap();
    let first = store.request(&[seeding::PointId(4)]).unwrap();
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("ALTER TABLE requests DROP COLUMN records")
        .unwrap();
    drop(conn);
    let store = ClientStore::open(&path).unwrap();
    let records = Dataset::with_ids(
        nalgebra::DMatrix::from_element(2, 2, 0.1),
        vec![seeding::PointId(100), seeding::PointId(101)],
    )
    .unwrap();
    let second = store.request_records(&records).unwrap();
    assert_eq!(
        store.pending().unwrap(),
        vec![
            (first, Asked::Forget(vec![seeding::PointId(4)])),
            (second, Asked::Add(records))
        ]
    );
    // Records whose ids the client holds, or of another dimension.
    let held = Dataset::with_ids(
        nalgebra::DMatrix::from_element(2, 1, 0.1),
        vec![seeding::PointId(3)],
    );
    assert!(store.request_records(&held.unwrap()).is_err());
    let flat = Dataset::with_ids(
        nalgebra::DMatrix::from_element(3, 1, 0.1),
        vec![seeding::PointId(200)],
    );
    assert!(store.request_records(&flat.unwrap()).is_err());
    drop(store);
    // The addition's records overwritten (zeros, the same length).
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute(
        "UPDATE requests SET records = zeroblob(length(records)) WHERE request = ?1",
        [i64::try_from(second).unwrap()],
    )
    .unwrap();
    drop(conn);
    let err = ClientStore::open(&path).unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
}

/// A client keeps the clients of the last sum it took part in (issue 28,
/// item 5) across restarts; stores written before it kept them, or
/// before it kept what it last sent (their state rows one or two fields
/// shorter), open with neither.
#[test]
fn the_last_sum_survives_a_restart_and_older_stores_open_without_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-last-sum", Mixture::net(1));
    let path = dir.path().join("a.db");
    let store = ClientStore::create(&path, "a", &data[0]).unwrap();
    let id = mufc::ClientId(0);
    let client =
        store
            .client(id)
            .unwrap()
            .with_last_sum(vec![mufc::ClientId(2), id, mufc::ClientId(1)]);
    store.save(&client).unwrap();
    drop(store);
    let store = ClientStore::open(&path).unwrap();
    let back = store.client(id).unwrap();
    assert_eq!(back.last_sum(), &[id, mufc::ClientId(1), mufc::ClientId(2)]);
    assert!(back.sent().is_none());
    // The previous layouts: the same row without what the client last
    // sent (postcard ends with `None`, one zero byte), and also without
    // the list (its length, one zero byte once emptied).
    store.save(&back.with_last_sum(Vec::new())).unwrap();
    drop(store);
    for shorter in 1..=2 {
        let old = cut_state(&path, shorter);
        let store = ClientStore::open(&path).unwrap();
        let old_client = store.client(id).unwrap();
        assert!(old_client.last_sum().is_empty(), "{shorter}");
        assert!(old_client.sent().is_none(), "{shorter}");
        assert_eq!(old_client.data().len(), data[0].len(), "{shorter}");
        // Put the full row back for the next cut.
        drop(store);
        restore_state(&path, &old);
    }
}

/// Cuts `n` zero bytes off the end of the store's state row (its
/// checksum made again); returns the row as it was.
fn cut_state(path: &std::path::Path, n: usize) -> Vec<u8> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let blob: Vec<u8> = conn
        .query_row("SELECT state FROM state WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    assert!(blob.ends_with(&vec![0; n]), "{blob:?}");
    write_state(&conn, &blob[..blob.len() - n]);
    blob
}

fn restore_state(path: &std::path::Path, blob: &[u8]) {
    write_state(&rusqlite::Connection::open(path).unwrap(), blob);
}

fn write_state(conn: &rusqlite::Connection, blob: &[u8]) {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"mufc-client-state/");
    h.update(blob);
    let sum = h.finalize().to_vec();
    conn.execute(
        "UPDATE state SET state = ?1, sha256 = ?2 WHERE id = 1",
        rusqlite::params![blob, sum],
    )
    .unwrap();
}

/// A store is built aside and linked into place complete: what a
/// creation stopped midway left (`<store>.creating`) neither blocks the
/// next nor stays behind, and the store's place holds nothing until the
/// store is whole.
#[test]
fn a_creation_stopped_midway_leaves_nothing_in_the_store_place() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-aside", Mixture::net(1));
    let path = dir.path().join("a.db");
    let left = dir.path().join("a.db.creating");
    std::fs::write(&left, b"half a store").unwrap();
    let store = ClientStore::create(&path, "a", &data[0]).unwrap();
    assert!(!left.exists());
    assert_eq!(store.data().unwrap(), data[0]);
    drop(store);
    assert_eq!(ClientStore::open(&path).unwrap().name().unwrap(), "a");
}

/// Two additions at once, from two handles on one store as two processes
/// would hold them: records numbered by the store get distinct ids, and
/// of two additions naming the same id exactly one is recorded (the
/// checks read the store in the request's own write).
#[test]
fn two_additions_at_once_never_share_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-concurrent-adds", Mixture::net(1));
    let path = dir.path().join("a.db");
    drop(ClientStore::create(&path, "a", &data[0]).unwrap());
    let points = Dataset::new(nalgebra::DMatrix::from_element(2, 2, 0.1)).unwrap();
    let numbered: Vec<Vec<seeding::PointId>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let store = ClientStore::open(&path).unwrap();
                    (0..15)
                        .flat_map(|_| store.request_new_records(&points).unwrap().1)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let all: Vec<seeding::PointId> = numbered.concat();
    let distinct: std::collections::BTreeSet<_> = all.iter().collect();
    assert_eq!((all.len(), distinct.len()), (60, 60), "{all:?}");
    assert!(
        all.iter().all(|id| id.0 >= 40),
        "ids the client holds reused"
    );
    // The same ids from both handles at once: one of the two is recorded.
    for round in 0..10u64 {
        let id = seeding::PointId(10_000 + round);
        let same = Dataset::with_ids(nalgebra::DMatrix::from_element(2, 1, 0.1), vec![id]);
        let same = same.unwrap();
        let recorded = std::thread::scope(|s| {
            let workers: Vec<_> = (0..2)
                .map(|_| s.spawn(|| ClientStore::open(&path).unwrap().request_records(&same)))
                .collect();
            (workers.into_iter())
                .map(|w| w.join().unwrap())
                .filter(Result::is_ok)
                .count()
        });
        assert_eq!(recorded, 1, "id {id}");
    }
    let store = ClientStore::open(&path).unwrap();
    assert_eq!(store.pending().unwrap().len(), 40);
}

/// An addition asked of a client no server has welcomed yet is applied
/// by its store alone: the records join its points, and the request is
/// applied (the server hears of it after the first welcome). A record
/// whose id the store holds is refused with nothing changed.
#[test]
fn an_unwelcomed_client_takes_an_addition_in_its_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = gaussian_clients("client-store-unwelcomed-add", Mixture::net(1));
    let path = dir.path().join("a.db");
    let store = ClientStore::create(&path, "a", &data[0]).unwrap();
    let points = Dataset::new(nalgebra::DMatrix::from_element(2, 3, -0.2)).unwrap();
    let (request, ids) = store.request_new_records(&points).unwrap();
    let (_, asked) = store.pending().unwrap().pop().unwrap();
    store.apply_unwelcomed(request, &asked).unwrap();
    assert_eq!(store.status(request).unwrap(), Some(RequestStatus::Applied));
    let held = store.data().unwrap();
    assert_eq!(held.len(), data[0].len() + 3);
    assert!(ids.iter().all(|&id| held.contains(id)));
    // The same records again (their ids now held): refused by the store.
    let again = Asked::Add(held.only(&ids).unwrap());
    assert!(store.apply_unwelcomed(request + 1, &again).is_err());
    assert_eq!(store.data().unwrap(), held);
}

/// A stateless client's log of answers (the Python binding's): each step
/// of a session is answered once; the same question and answer again is
/// a replay, taken; another question, or another answer to the same, is
/// refused; the log of a committed session goes, and the round key stays
/// with the store across opens.
#[test]
fn a_step_of_a_session_is_answered_once() {
    let dir = tempfile::tempdir().unwrap();
    let data = Dataset::new(nalgebra::DMatrix::from_element(2, 3, 0.1)).unwrap();
    let store = ClientStore::create(dir.path().join("c.db"), "site-a", &data).unwrap();
    let key = store.round_key().unwrap();
    let store = ClientStore::open(dir.path().join("c.db")).unwrap();
    assert_eq!(store.round_key().unwrap(), key);
    let other = ClientStore::create(dir.path().join("d.db"), "site-b", &data).unwrap();
    assert_ne!(other.round_key().unwrap(), key);

    let (s, t) = ([1u8; 32], [2u8; 32]);
    store.answer_once(&s, 0, &[10; 32], &[20; 32]).unwrap();
    store.answer_once(&s, 1, &[11; 32], &[21; 32]).unwrap();
    // A replay: the same question, the same answer.
    store.answer_once(&s, 0, &[10; 32], &[20; 32]).unwrap();
    store.answer_once(&s, 1, &[11; 32], &[21; 32]).unwrap();
    // Asked again otherwise, or answered otherwise: refused.
    let asked = store.answer_once(&s, 1, &[99; 32], &[21; 32]).unwrap_err();
    assert!(asked.to_string().contains("to another message"), "{asked}");
    let answered = store.answer_once(&s, 1, &[11; 32], &[99; 32]).unwrap_err();
    assert!(
        answered.to_string().contains("changed mid-round"),
        "{answered}"
    );
    // Another session is another log; the log survives a reopen.
    store.answer_once(&t, 1, &[99; 32], &[98; 32]).unwrap();
    let store = ClientStore::open(dir.path().join("c.db")).unwrap();
    assert!(store.answer_once(&s, 1, &[99; 32], &[21; 32]).is_err());
    // Once committed, the session's log goes (the client never joins it
    // again: its sessions say so).
    store.forget_answers(&s).unwrap();
    store.answer_once(&s, 1, &[99; 32], &[21; 32]).unwrap();
    store.answer_once(&t, 1, &[99; 32], &[98; 32]).unwrap();
}
