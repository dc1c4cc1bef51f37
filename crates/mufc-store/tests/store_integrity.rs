//! The model store refuses damage with typed errors, forgets for real
//! (the bytes of a forgotten point are in none of its files), and a
//! request that fails or crashes inside its transaction leaves the store
//! as it was (issue 14, library part).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use mufc::{FederationConfig, ValidConfig};
use mufc_store::{
    AuditOutcome, ClientRecords, FAULT_ENV, FaultPoint, FitOptions, ForgetOutcome, RecordId, Store,
    StoreError, VerifyOutcome,
};
use mufc_testkit::compare;
use seeding::Dataset;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

fn data() -> Vec<Dataset> {
    gaussian_clients("store-integrity", Mixture::SMALL)
}

fn config() -> ValidConfig {
    FederationConfig::new(3)
        .gamma(0.1)
        .seed(9)
        .validate()
        .unwrap()
}

/// Record `30 l + i` is client `l`'s point at position `i`.
fn fitted(dir: &Path) -> (Store, PathBuf) {
    let path = dir.join("model.mufc");
    let (store, _) = Store::fit(
        &path,
        ClientRecords::numbered(data()),
        &config(),
        &FitOptions::new(),
    )
    .unwrap();
    (store, path)
}

fn coords(record: u64) -> Vec<f64> {
    let d = &data()[(record / 30) as usize];
    d.point((record % 30) as usize).to_vec()
}

/// Every encoding of `x` the store could hold: postcard writes an `f64` as
/// its 8 bytes, little endian; the others are looked for too.
fn encodings(x: f64) -> Vec<Vec<u8>> {
    vec![
        x.to_le_bytes().to_vec(),
        x.to_be_bytes().to_vec(),
        format!("{x}").into_bytes(),
        format!("{x:e}").into_bytes(),
    ]
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Whether any file in `dir` (the database, a journal, a WAL, ...)
/// contains `needle`.
fn anywhere(dir: &Path, needle: &[u8]) -> bool {
    std::fs::read_dir(dir)
        .unwrap()
        .any(|e| contains(&std::fs::read(e.unwrap().path()).unwrap(), needle))
}

/// Whether every coordinate of record `r` occurs once in the data (a
/// duplicate coordinate of a kept point would be found, rightly).
fn unique(r: u64) -> bool {
    let all: Vec<f64> = (0..120).flat_map(coords).collect();
    coords(r)
        .iter()
        .all(|x| all.iter().filter(|y| y.to_bits() == x.to_bits()).count() == 1)
}

#[test]
fn forgotten_coordinates_are_in_none_of_the_stores_files() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = fitted(dir.path());
    let forgotten: Vec<u64> = [4, 5, 36, 70, 71, 72]
        .into_iter()
        .filter(|&r| unique(r))
        .collect();
    assert!(forgotten.len() >= 4);
    let kept: u64 = (100..120).find(|&r| unique(r)).unwrap();
    // Before: the search finds them (postcard's 8 bytes, little endian).
    for &r in &forgotten {
        for x in coords(r) {
            assert!(anywhere(dir.path(), &x.to_le_bytes()), "record {r} before");
        }
    }
    // Three clients in one request: applied at once.
    let ids: Vec<RecordId> = forgotten
        .iter()
        .map(|&r| RecordId::from(r as i64))
        .collect();
    assert!(!store.forget(&ids).unwrap().outcome.is_deferred());
    for &r in &forgotten {
        for x in coords(r) {
            for e in encodings(x) {
                assert!(
                    !anywhere(dir.path(), &e),
                    "record {r}: {e:?} still in the store"
                );
            }
        }
    }
    // The negative control: a kept point's bytes are found.
    for x in coords(kept) {
        assert!(anywhere(dir.path(), &x.to_le_bytes()), "kept record {kept}");
    }
    // No journal is left, and the same holds after reopening (a rollback
    // of nothing) and another request.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("model.mufc")]);
    drop(store);
    let mut store = Store::open(&path).unwrap();
    store.forget_client("1").unwrap();
    store.flush().unwrap();
    for r in forgotten.iter().copied().chain(30..60) {
        for x in coords(r) {
            assert!(!anywhere(dir.path(), &x.to_le_bytes()), "record {r}");
        }
    }
}

#[test]
fn a_deferred_request_erases_its_points_at_once() {
    // Issue 25, item 3: the privacy policy defers the model update, not
    // the erasure. A lone client's request (deferred), a lone whole
    // client (deferred), then the bytes are searched before any round.
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = fitted(dir.path());
    // Seeds among them too (a removed seed reseeds its client).
    let seeds: Vec<u64> = store.federation().clients()[0]
        .seed_ids()
        .iter()
        .map(|p| p.0)
        .collect();
    let lone: Vec<u64> = seeds
        .iter()
        .copied()
        .chain([10, 11])
        .filter(|&r| unique(r))
        .take(3)
        .collect();
    assert!(lone.len() >= 2, "{lone:?}");
    for &r in &lone {
        assert!(
            anywhere(dir.path(), &coords(r)[0].to_le_bytes()),
            "record {r} before"
        );
    }
    let counts = store.federation().server().counts().clone();
    let ids: Vec<RecordId> = lone.iter().map(|&r| RecordId::from(r as i64)).collect();
    let r = store.forget(&ids).unwrap();
    assert!(r.outcome.is_deferred());
    assert_eq!(r.erased_points, lone.len());
    assert_eq!(
        store.federation().server().counts(),
        &counts,
        "the model waits"
    );
    drop(store);
    for &r in &lone {
        for x in coords(r) {
            for e in encodings(x) {
                assert!(
                    !anywhere(dir.path(), &e),
                    "record {r}: {e:?} still in the store"
                );
            }
        }
    }
    // A whole client alone, deferred too: its rows leave at once.
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.pending().len(), 1);
    let r = store.flush().unwrap().unwrap();
    assert_eq!(r.applied_requests, vec![1]);
    let r = store.forget_client("2").unwrap();
    assert!(r.outcome.is_deferred());
    for rec in 60..90 {
        if unique(rec) {
            assert!(
                !anywhere(dir.path(), &coords(rec)[0].to_le_bytes()),
                "record {rec}"
            );
        }
    }
    // The negative control: a kept point's bytes are found.
    let kept = (100..120).find(|&r| unique(r)).unwrap();
    assert!(anywhere(dir.path(), &coords(kept)[0].to_le_bytes()));
}

#[test]
fn a_request_below_the_minimum_aggregate_erases_at_once_and_withdraws_the_model() {
    // Issue 25: a whole client leaving at the minimum (three clients,
    // three per aggregate) was refused and its coordinates stayed.
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = fitted(dir.path());
    store.forget_client("1").unwrap();
    store.flush().unwrap();
    let version = store.model_version();
    // A second connection, opened before the withdrawal: it must serve
    // its request on the state the first one committed.
    let mut other = Store::open(&path).unwrap();
    // A lone request waits; the next one withdraws the model, covering it.
    let lone = store.forget(&[RecordId::from(100)]).unwrap();
    assert!(lone.outcome.is_deferred());
    let r = store.forget_client("2").unwrap();
    let ForgetOutcome::Withdrawn(w) = &r.outcome else {
        panic!("{:?}", r.outcome)
    };
    assert_eq!((w.clients, w.min_clients, w.request), (2, 3, 3));
    assert_eq!(r.applied_requests, vec![2, 3]);
    assert_eq!(r.erased_points, 30);
    assert_eq!(store.model_version(), version + 1);
    assert!(store.centroids().is_empty() && store.pending().is_empty());
    assert!(matches!(
        store.predict(&nalgebra::DMatrix::zeros(2, 1)),
        Err(StoreError::Withdrawn(_))
    ));
    for rec in (60..90).chain([100]) {
        if unique(rec) {
            for x in coords(rec) {
                assert!(!anywhere(dir.path(), &x.to_le_bytes()), "record {rec}");
            }
        }
    }
    let stale = other.forget(&[RecordId::from(0)]).unwrap();
    assert_eq!(stale.outcome, ForgetOutcome::Withdrawn(w.clone()));
    assert_eq!(other.model_version(), version + 1);
    drop(other);
    store = Store::open(&path).unwrap();
    let kept = (90..120).find(|&r| r != 100 && unique(r)).unwrap();
    assert!(anywhere(dir.path(), &coords(kept)[0].to_le_bytes()));
    let v = store.verify().unwrap();
    assert_eq!(v.outcome(), VerifyOutcome::Withdrawn, "{:?}", v.differences);
    assert_eq!(v.clients_digest.0, v.clients_digest.1);
    let audit = store.history().unwrap();
    let last: Vec<_> = audit.iter().filter(|e| e.request == 3).collect();
    assert_eq!(last.len(), 2, "the pending client and the leaving one");
    assert!(last.iter().all(|e| e.outcome == AuditOutcome::Withdrawn));
    drop(store);

    // Reopened: still withdrawn; a later request erases, with no round
    // and no new model version.
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.federation().withdrawal(), Some(w));
    let r = store.forget(&[RecordId::from(kept as i64)]).unwrap();
    assert_eq!(r.outcome, ForgetOutcome::Withdrawn(w.clone()));
    assert_eq!(store.model_version(), version + 1);
    assert!(!anywhere(dir.path(), &coords(kept)[0].to_le_bytes()));
    assert!(store.flush().unwrap().is_none());
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Withdrawn);
    let again = store.forget(&[RecordId::from(kept as i64)]).unwrap_err();
    assert!(
        matches!(again, StoreError::AlreadyForgotten { .. }),
        "{again}"
    );
}

fn open_err(path: &Path) -> StoreError {
    Store::open(path).unwrap_err()
}

#[test]
fn a_record_edited_to_name_another_point_is_refused() {
    // Every record still names one held point once, so only the records'
    // digest tells: a forget of record 3 would have erased record 4's
    // point (or another client's).
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = fitted(dir.path());
    drop(store);
    let swaps = [
        // Two points of one client.
        "UPDATE records SET point = -1 WHERE record = 3; \
         UPDATE records SET point = 3 WHERE record = 4; \
         UPDATE records SET point = 4 WHERE record = -1 OR point = -1;",
        // The same point of two clients.
        "UPDATE records SET client = -1 WHERE record = 5; \
         UPDATE records SET client = 0 WHERE record = 35; \
         UPDATE records SET client = 1 WHERE client = -1;",
    ];
    for sql in swaps {
        let copy = dir.path().join("copy.mufc");
        std::fs::copy(&path, &copy).unwrap();
        rusqlite::Connection::open(&copy)
            .unwrap()
            .execute_batch(sql)
            .unwrap();
        let err = open_err(&copy);
        assert!(
            err.to_string()
                .contains("the records table does not match its digest"),
            "{sql}: {err}"
        );
        std::fs::remove_file(&copy).unwrap();
    }
    // The digest follows the requests: the store opens after them.
    let mut store = Store::open(&path).unwrap();
    store
        .forget(&[RecordId::from(3), RecordId::from(40)])
        .unwrap();
    store.forget_client("2").unwrap();
    drop(store);
    Store::open(&path).unwrap();
}

#[test]
fn a_flipped_byte_in_a_state_blob_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = fitted(dir.path());
    drop(store);
    let good = std::fs::read(&path).unwrap();
    // Flip a byte of a client's coordinate in the file, where it lies.
    let x = coords(45)[0].to_le_bytes();
    let at = good.windows(8).position(|w| w == x).unwrap();
    for bit in [0u8, 3, 7] {
        let mut bad = good.clone();
        bad[at + 3] ^= 1 << bit;
        std::fs::write(&path, &bad).unwrap();
        let err = open_err(&path);
        assert!(
            matches!(&err, StoreError::Corrupt { reason } if reason.contains("checksum")),
            "{err}"
        );
    }
    // Through SQLite: a changed blob, a blob moved to another client's row,
    // a missing server row.
    let edits = [
        "UPDATE clients SET state = CAST(state || x'00' AS BLOB) WHERE id = 2",
        "UPDATE clients SET state = (SELECT state FROM clients WHERE id = 0), \
         sha256 = (SELECT sha256 FROM clients WHERE id = 0) WHERE id = 1",
        "UPDATE server SET state = substr(state, 1, length(state) - 1)",
        "DELETE FROM server",
        "DELETE FROM records WHERE record = 7",
        "UPDATE records SET point = 99 WHERE record = 7",
    ];
    for sql in edits {
        std::fs::write(&path, &good).unwrap();
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(sql).unwrap();
        drop(conn);
        let err = open_err(&path);
        assert!(matches!(err, StoreError::Corrupt { .. }), "{sql}: {err}");
    }
    std::fs::write(&path, &good).unwrap();
    Store::open(&path).unwrap();
}

#[test]
fn a_truncated_or_foreign_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = fitted(dir.path());
    drop(store);
    let good = std::fs::read(&path).unwrap();
    assert!(good.len() >= 4 * 4096, "{} bytes", good.len());
    for len in [
        0,
        50,
        100,
        4096,
        good.len() / 2,
        good.len() - 4096,
        good.len() - 1,
    ] {
        std::fs::write(&path, &good[..len]).unwrap();
        let err = open_err(&path);
        assert!(
            matches!(
                err,
                StoreError::Corrupt { .. } | StoreError::NotAStore { .. }
            ),
            "{len} bytes: {err}"
        );
    }
    // Another application's SQLite database.
    let other = dir.path().join("other.db");
    rusqlite::Connection::open(&other)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let err = open_err(&other);
    assert!(
        matches!(&err, StoreError::NotAStore { reason, .. } if reason.contains("application id")),
        "{err}"
    );
}

#[test]
fn a_store_of_another_schema_version_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = fitted(dir.path());
    drop(store);
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 9)
        .unwrap();
    let err = open_err(&path);
    assert!(
        matches!(
            err,
            StoreError::SchemaVersion {
                found: 9,
                supported: 8
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("version 8"), "{err}");
}

#[test]
fn a_request_failing_inside_its_transaction_changes_nothing() {
    for at in FaultPoint::ALL {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, path) = fitted(dir.path());
        store
            .forget(&[RecordId::from(1), RecordId::from(31)])
            .unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let before = Store::open(&path).unwrap();
        store.inject_fault(Some(at));
        let err = store
            .forget(&[RecordId::from(2), RecordId::from(62)])
            .unwrap_err();
        assert!(
            matches!(err, StoreError::InjectedFault(p) if p == at),
            "{err}"
        );
        // The file and the store in memory: as before the request.
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{at}");
        compare(store.federation(), before.federation()).unwrap();
        assert_eq!(store.model_version(), 2);
        assert_eq!(
            store.record(&RecordId::from(2)),
            before.record(&RecordId::from(2))
        );
        assert_eq!(store.history().unwrap(), before.history().unwrap());
        let reopened = Store::open(&path).unwrap();
        compare(reopened.federation(), before.federation()).unwrap();
        // Without the fault the same request goes through.
        store.inject_fault(None);
        store
            .forget(&[RecordId::from(2), RecordId::from(62)])
            .unwrap();
        assert_eq!(store.model_version(), 3);
    }
}

/// The child of the abort tests ([`aborts_are_rolled_back_on_open`]):
/// serves one request with [`FAULT_ENV`] set, and aborts inside it.
const CHILD: &str = "MUFC_STORE_TEST_CHILD";

/// A process killed at each fault point of `request`'s transaction
/// leaves the store as it was (the hot journal is rolled back on open),
/// and `request` can be served again. `test` is the calling test's name:
/// the child process runs it with [`CHILD`] set, which serves `request`
/// once on the store of the path given, and aborts. `fitted` writes the
/// store in a directory, with one request served already (model version
/// 2); `request` must apply its model update at once.
pub(crate) fn aborts_are_rolled_back_on_open(
    test: &str,
    fitted: impl Fn(&Path) -> PathBuf,
    request: impl Fn(&mut Store) -> Result<mufc_store::ForgetReport, StoreError>,
) {
    if let Ok(path) = std::env::var(CHILD) {
        let mut store = Store::open(&path).unwrap();
        let _ = request(&mut store);
        // Not reached when the fault aborts the process.
        std::process::exit(0);
    }
    if !cfg!(debug_assertions) {
        // Release builds never read the variable (by design).
        return;
    }
    for at in FaultPoint::ALL {
        let dir = tempfile::tempdir().unwrap();
        let path = fitted(dir.path());
        let before = Store::open(&path).unwrap();
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            // A filter, not `--exact`: the test's full name carries the
            // module of the test binary it is linked into.
            .args([test, "--test-threads=1"])
            .env(CHILD, &path)
            .env(FAULT_ENV, at.name())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(!status.success(), "{at}: the child was not aborted");
        // The crash left a hot journal; opening rolls it back.
        let mut journal = path.clone().into_os_string();
        journal.push("-journal");
        assert!(Path::new(&journal).exists(), "{at}: no journal left");
        let after = Store::open(&path).unwrap();
        compare(after.federation(), before.federation()).unwrap();
        assert_eq!(after.model_version(), 2);
        assert_eq!(after.num_points(), before.num_points());
        assert_eq!(after.history().unwrap(), before.history().unwrap());
        // The request can be served again; its commit deletes the journal
        // (a crash may leave a journal that is not hot, holding pages of
        // the committed state only: SQLite ignores it).
        drop(before);
        let mut after = after;
        request(&mut after).unwrap();
        assert_eq!(after.model_version(), 3, "{at}");
        assert!(!Path::new(&journal).exists(), "{at}");
    }
}

#[test]
fn an_abort_inside_the_transaction_is_rolled_back_on_open() {
    aborts_are_rolled_back_on_open(
        "an_abort_inside_the_transaction_is_rolled_back_on_open",
        |dir| {
            let (mut store, path) = fitted(dir);
            store
                .forget(&[RecordId::from(1), RecordId::from(31)])
                .unwrap();
            path
        },
        |store| store.forget(&[RecordId::from(2), RecordId::from(62)]),
    );
}

/// The model store holds every record: it is created readable and
/// writable by its owner alone (mode 0600), whatever the umask.
#[cfg(unix)]
#[test]
fn a_new_store_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = fitted(dir.path());
    drop(store);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{mode:o}");
}
