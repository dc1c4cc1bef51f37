//! The model store (issue 14, library part): a store opens as it was
//! written, serving requests from it equals retraining without the
//! forgotten points, bad requests change nothing, and the audit log says
//! what happened.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mufc::{ClientId, Federation, FederationConfig, MufcError, ValidConfig};
use mufc_store::{
    AuditOutcome, ClientName, ClientRecords, FitOptions, RecordId, RecordStatus, Store, StoreError,
};
use mufc_testkit::compare;
use nalgebra::DMatrix;
use seeding::{BoxTransform, Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

fn data() -> Vec<Dataset> {
    gaussian_clients("store", Mixture::SMALL)
}

fn config() -> ValidConfig {
    FederationConfig::new(3)
        .gamma(0.1)
        .seed(5)
        .validate()
        .unwrap()
}

/// A store of [`data`] with records numbered by row (client `l`'s point
/// at position `i` is record `30 l + i`).
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

/// The federation trained from scratch without `forgotten` records and
/// `gone` clients, with the store's resolved configuration.
fn retrained(store: &Store, forgotten: &[u64], gone: &[u64]) -> Federation {
    let mut rest = Vec::new();
    for (l, d) in data().into_iter().enumerate() {
        let l = l as u64;
        if gone.contains(&l) {
            continue;
        }
        let ids: Vec<PointId> = forgotten
            .iter()
            .filter(|&&r| r / 30 == l)
            .map(|&r| d.id((r % 30) as usize))
            .collect();
        let d = d.without(&ids).unwrap();
        if !d.is_empty() {
            rest.push((ClientId(l), d));
        }
    }
    Federation::with_ids(rest, store.config()).unwrap()
}

fn records(ids: &[u64]) -> Vec<RecordId> {
    ids.iter()
        .map(|&r| RecordId::try_from(r).unwrap())
        .collect()
}

fn name(s: &str) -> ClientName {
    ClientName::new(s).unwrap()
}

#[test]
fn a_store_opens_with_the_model_it_was_written_with() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = fitted(dir.path());
    let fresh = Federation::new(data(), &config()).unwrap();
    compare(store.federation(), &fresh).unwrap();
    let probe = DMatrix::from_fn(2, 25, |r, c| ((c * 7 + r * 3) % 11) as f64 / 11.0 - 0.5);
    let labels = store.predict(&probe).unwrap();
    let centroids = store.centroids();
    drop(store);

    let opened = Store::open(&path).unwrap();
    compare(opened.federation(), &fresh).unwrap();
    assert_eq!(opened.centroids(), centroids);
    assert_eq!(opened.predict(&probe).unwrap(), labels);
    assert_eq!(centroids.len(), opened.k());
    assert_eq!(centroids.iter().map(|c| c.weight).sum::<u64>(), 120);
    // Nearest centroid, checked by hand.
    for (j, x) in probe.column_iter().enumerate() {
        let d = |c: &mufc_store::Centroid| {
            c.coords
                .iter()
                .zip(x.iter())
                .map(|(a, b)| (a - b) * (a - b))
                .sum::<f64>()
        };
        let best = (0..centroids.len())
            .min_by(|&a, &b| d(&centroids[a]).total_cmp(&d(&centroids[b])))
            .unwrap();
        assert_eq!(labels[j], best);
    }
    assert_eq!(opened.model_version(), 1);
    assert_eq!(opened.num_points(), 120);
    assert_eq!(opened.client_ids().len(), 4);
    assert_eq!(opened.record(&RecordId::from(31)), Some(name("1")));
    assert!(opened.history().unwrap().is_empty());
    // Bad input to predict is an error, not a panic.
    assert!(matches!(
        opened.predict(&DMatrix::zeros(3, 1)),
        Err(StoreError::Dimension {
            expected: 2,
            found: 3
        })
    ));
    assert!(matches!(
        opened.predict(&DMatrix::from_element(2, 2, f64::NAN)),
        Err(StoreError::NotFinite { index: 0 })
    ));
}

#[test]
fn a_transformed_store_predicts_and_reports_in_the_datas_coordinates() {
    // The data "as the user has it": the model's points mapped back by
    // x = y / 0.002 + (500, -40), so hundreds of units wide.
    let t = BoxTransform::new(vec![500.0, -40.0], 0.002).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.mufc");
    // A transform of another dimension is refused before anything is written.
    let wrong = BoxTransform::new(vec![0.0; 3], 1.0).unwrap();
    let err = Store::fit(
        &path,
        ClientRecords::numbered(data()),
        &config(),
        &FitOptions::new().with_transform(Some(wrong)),
    )
    .unwrap_err();
    assert!(matches!(err, StoreError::InvalidTransform { .. }), "{err}");
    assert!(!path.exists());

    let (store, _) = Store::fit(
        &path,
        ClientRecords::numbered(data()),
        &config(),
        &FitOptions::new().with_transform(Some(t.clone())),
    )
    .unwrap();
    let plain = Federation::new(data(), &config()).unwrap();
    // The model is the one trained on the mapped points.
    compare(store.federation(), &plain).unwrap();
    let model = plain.server().centroids().unwrap().clone_owned();
    drop(store);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.transform(), Some(&t));
    let centroids = store.centroids();
    for (c, m) in centroids.iter().zip(model.column_iter()) {
        let m: Vec<f64> = m.iter().copied().collect();
        let back = t.invert(&m);
        for (a, b) in c.coords.iter().zip(&back) {
            assert!((a - b).abs() <= 1e-9 * b.abs().max(1.0), "{a} {b}");
        }
    }
    // Every client's point, in the data's coordinates, is predicted as the
    // model predicts the mapped point.
    let server = plain.server().model().unwrap();
    for d in data() {
        for p in 0..d.len() {
            let y = d.point(p).to_vec();
            let x = DMatrix::from_column_slice(2, 1, &t.invert(&y));
            assert_eq!(
                store.predict(&x).unwrap(),
                vec![server.predict(&y).unwrap()]
            );
        }
    }
}

#[test]
fn fit_refuses_to_overwrite_unless_told_and_bad_ids() {
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = fitted(dir.path());
    drop(store);
    let before = std::fs::read(&path).unwrap();
    let err = Store::fit(
        &path,
        ClientRecords::numbered(data()),
        &config(),
        &FitOptions::new(),
    )
    .unwrap_err();
    assert!(matches!(err, StoreError::Exists { .. }), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    // Replace: a new store (here with one client fewer).
    let mut three = ClientRecords::numbered(data());
    three.pop();
    let (store, _) = Store::fit(&path, three, &config(), &FitOptions::new().replace(true)).unwrap();
    assert_eq!(store.num_points(), 90);
    drop(store);
    assert_eq!(Store::open(&path).unwrap().num_points(), 90);
    // Only the store is left in the directory (no temporary file).
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1);

    // A record id twice, a client name twice.
    let d = data();
    let two = |a: &str, b: &str, second: std::ops::Range<u64>| {
        vec![
            ClientRecords::new(name(a), d[0].clone(), records(&(0..30).collect::<Vec<_>>()))
                .unwrap(),
            ClientRecords::new(name(b), d[1].clone(), records(&second.collect::<Vec<_>>()))
                .unwrap(),
        ]
    };
    let other = dir.path().join("other.mufc");
    let err = Store::fit(&other, two("a", "b", 29..59), &config(), &FitOptions::new()).unwrap_err();
    assert!(
        matches!(&err, StoreError::DuplicateRecord(r) if *r == RecordId::from(29)),
        "{err}"
    );
    let same_name = two("a", "a", 30..60);
    let err = Store::fit(&other, same_name, &config(), &FitOptions::new()).unwrap_err();
    assert!(
        matches!(&err, StoreError::DuplicateClient(c) if c.as_str() == "a"),
        "{err}"
    );
    assert!(!other.exists());
}

#[test]
fn forgetting_equals_retraining_without_the_records_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = fitted(dir.path());
    // Two clients at once: applied.
    let r = store.forget(&records(&[3, 40, 41])).unwrap();
    assert!(!r.outcome.is_deferred());
    assert_eq!(r.clients, vec![name("0"), name("1")]);
    assert_eq!((r.version_before, r.version_after), (1, 2));
    assert_eq!(r.removed_points, 3);
    compare(store.federation(), &retrained(&store, &[3, 40, 41], &[])).unwrap();
    // One client alone: its record is erased at once (the clients equal
    // retraining), the model update deferred, then applied with the next
    // request.
    let counts = store.federation().server().counts().clone();
    let r = store.forget(&records(&[65])).unwrap();
    assert!(r.outcome.is_deferred());
    assert_eq!(r.erased_points, 1);
    assert_eq!(store.num_points(), 116);
    assert_eq!(store.federation().server().counts(), &counts);
    let erased = retrained(&store, &[3, 40, 41, 65], &[]);
    for (a, b) in store.federation().clients().iter().zip(erased.clients()) {
        let sorted = |c: &mufc::Client| {
            let mut v = c.data().ids().to_vec();
            v.sort_unstable();
            v
        };
        assert_eq!(sorted(a), sorted(b));
        assert_eq!(a.seed_ids(), b.seed_ids());
        assert_eq!(a.histogram(), b.histogram());
    }
    drop(store);
    let mut store = Store::open(&path).unwrap();
    assert_eq!(store.pending().len(), 1);
    let r = store.forget(&records(&[100, 7])).unwrap();
    assert_eq!(r.applied_requests, vec![2, 3]);
    let forgotten = [3, 40, 41, 65, 100, 7];
    compare(store.federation(), &retrained(&store, &forgotten, &[])).unwrap();
    // A whole client: alone it waits too; applied by a flush.
    let r = store.forget_client("1").unwrap();
    assert!(r.outcome.is_deferred());
    assert_eq!(r.erased_points, 28);
    assert_eq!(store.client_names(), vec![name("0"), name("2"), name("3")]);
    let r = store.flush().unwrap().unwrap();
    assert_eq!(r.removed_clients, vec![name("1")]);
    assert_eq!(r.removed_points, 28);
    compare(store.federation(), &retrained(&store, &forgotten, &[1])).unwrap();
    let in_memory = store.centroids();
    drop(store);
    let store = Store::open(&path).unwrap();
    compare(store.federation(), &retrained(&store, &forgotten, &[1])).unwrap();
    assert_eq!(store.centroids(), in_memory);
    assert_eq!(store.model_version(), 4);
    for r in forgotten.iter().chain(&[30, 59]) {
        assert_eq!(store.record(&records(&[*r])[0]), None, "record {r}");
        assert!(matches!(
            store.locate(&records(&[*r])[0]).unwrap(),
            RecordStatus::Forgotten(_)
        ));
    }
    assert_eq!(store.record(&RecordId::from(8)), Some(name("0")));
}

/// What a refused request's error must match.
type Expected = fn(&StoreError) -> bool;

#[test]
fn a_refused_request_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = fitted(dir.path());
    store.forget(&records(&[1, 31])).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let centroids = store.centroids();
    let history = store.history().unwrap();
    let refused: Vec<(Vec<RecordId>, Expected)> = vec![
        // Unknown ids, named in order, the known ones among them untouched.
        (
            records(&[5, 1000, 998, 999]),
            |e| matches!(e, StoreError::UnknownRecords { ids } if ids == &records(&[998, 999, 1000])),
        ),
        // A forgotten id among them: when it was forgotten, and the
        // unknown ones too.
        (records(&[5, 1000, 31, 999]), |e| {
            matches!(e, StoreError::AlreadyForgotten { forgotten, unknown }
                if forgotten.len() == 1 && forgotten[0].request == 1 && unknown == &records(&[999, 1000]))
        }),
        (
            records(&[5, 6, 5]),
            |e| matches!(e, StoreError::DuplicateRecord(r) if *r == RecordId::from(5)),
        ),
        (Vec::new(), |e| {
            matches!(e, StoreError::Mufc(MufcError::EmptyRequest))
        }),
    ];
    for (ids, expected) in refused {
        let err = store.forget(&ids).unwrap_err();
        assert!(expected(&err), "{ids:?}: {err}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{ids:?}");
        assert_eq!(store.centroids(), centroids);
        assert_eq!(store.history().unwrap(), history);
        assert_eq!(store.num_points(), 118);
    }
    let err = store.forget_client("9").unwrap_err();
    assert!(
        matches!(&err, StoreError::UnknownClient { name, .. } if name == "9"),
        "{err}"
    );
    assert!(
        err.to_string().contains("the store's clients: 0, 1, 2, 3"),
        "{err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // The message names the ids.
    let err = store.forget(&records(&[1000, 999])).unwrap_err();
    assert!(err.to_string().contains("999, 1000"), "{err}");
}

#[test]
fn the_audit_log_records_every_request_and_no_coordinates() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = fitted(dir.path());
    store.forget(&records(&[2])).unwrap(); // deferred: request 1
    store.forget(&records(&[33, 34])).unwrap(); // applies 1 and 2
    store.forget_client("3").unwrap(); // deferred: request 3
    store.flush().unwrap().unwrap(); // applies 3 alone
    assert!(store.flush().unwrap().is_none());
    let h = store.history().unwrap();
    let rows: Vec<_> = h
        .iter()
        .map(|e| {
            (
                e.request,
                e.client.to_string(),
                e.points,
                e.whole_client,
                e.outcome,
                e.applied.clone(),
                e.version_before,
                e.version_after,
            )
        })
        .collect();
    use AuditOutcome::{Applied, Deferred};
    assert_eq!(
        rows,
        vec![
            (1, "0".into(), 1, false, Deferred, vec![], 1, 1),
            (2, "0".into(), 1, false, Applied, vec![1], 1, 2),
            (2, "1".into(), 2, false, Applied, vec![2], 1, 2),
            (3, "3".into(), 30, true, Deferred, vec![], 2, 2),
            (3, "3".into(), 30, true, Applied, vec![3], 2, 3),
        ]
    );
    let reseeded: BTreeMap<u64, bool> = h
        .iter()
        .filter(|e| e.outcome == Applied)
        .map(|e| (e.client.as_str().parse::<u64>().unwrap(), e.reseeded))
        .collect();
    let fed_reseeded: Vec<ClientId> = store
        .federation()
        .history()
        .iter()
        .flat_map(|r| r.reseeded.clone())
        .collect();
    for (c, re) in reseeded {
        assert_eq!(re, fed_reseeded.contains(&ClientId(c)), "client {c}");
    }
    assert!(h.iter().all(|e| e.time > 1_700_000_000));
    // Both times: erased at the request, removed from the model at the
    // round (the same request when applied at once).
    assert_eq!(h[1].erased_at, h[0].time);
    assert!(
        h.iter()
            .all(|e| e.removed_at.is_none() == (e.outcome == Deferred))
    );
    assert!(
        h[4].warning
            .as_deref()
            .unwrap()
            .contains("client 3's message"),
        "{:?}",
        h[4].warning
    );
    // The audit and journal tables hold integers and short texts only: no
    // real number, so no coordinate.
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    for table in ["audit", "journal"] {
        let n: i64 = conn
            .query_row(
                &format!("SELECT count(*) FROM {table} WHERE typeof(time) <> 'integer'"),
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 0);
    }
    let texts: Vec<String> = conn
        .prepare("SELECT applied FROM audit")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(
        texts
            .iter()
            .all(|t| t.chars().all(|c| c.is_ascii_digit() || c == ',')),
        "{texts:?}"
    );
}

#[test]
fn a_request_on_a_stale_state_is_served_on_the_files_state() {
    // Two handles on one file (two processes): the second must not write
    // a state computed before the first's request; it reloads under the
    // write lock and serves its request on the file's state.
    let dir = tempfile::tempdir().unwrap();
    let (mut a, path) = fitted(dir.path());
    let mut b = Store::open(&path).unwrap();
    a.forget(&records(&[1, 31])).unwrap();
    // Reading the audit of a stale state is refused, not mixed.
    assert!(matches!(b.history(), Err(StoreError::Stale)));
    let r = b.forget(&records(&[2, 32])).unwrap();
    assert_eq!(r.request, 2);
    assert_eq!((r.version_before, r.version_after), (2, 3));
    assert_eq!(b.record(&RecordId::from(1)), None);
    // The first's request, named again through the second: forgotten.
    assert!(matches!(
        b.forget(&records(&[1, 33])),
        Err(StoreError::AlreadyForgotten { .. })
    ));
    let c = Store::open(&path).unwrap();
    compare(c.federation(), &retrained(&c, &[1, 31, 2, 32], &[])).unwrap();
    assert_eq!(c.history().unwrap().len(), 4);
}

/// A handle opened before a `fit` replaced the store (another process's
/// refit), when the old store had served no request: the journal is as
/// empty after the refit as before, and only SQLite's schema cookie tells
/// the handle that the file holds another store. Its request must be
/// served on the new store, not write the old store's state over it.
#[test]
fn a_handle_opened_before_a_refit_is_served_on_the_new_store() {
    let dir = tempfile::tempdir().unwrap();
    let (a, path) = fitted(dir.path());
    drop(a);
    let mut b = Store::open(&path).unwrap();
    let reseeded = config().into_builder().seed(9).validate().unwrap();
    let (refit, _) = Store::fit(
        &path,
        ClientRecords::numbered(data()),
        &reseeded,
        &FitOptions::new().replace(true),
    )
    .unwrap();
    drop(refit);
    assert!(matches!(b.history(), Err(StoreError::Stale)));
    b.forget(&records(&[3, 33])).unwrap();
    let c = Store::open(&path).unwrap();
    assert_eq!(
        c.config().seed(),
        9,
        "the old store's state was written back"
    );
    compare(c.federation(), &retrained(&c, &[3, 33], &[])).unwrap();
}

/// The server row keeps the last removal report, not one per request: a
/// commit does not slow down as requests pile up, and the requests are
/// still numbered on across reopening.
#[test]
fn the_server_row_does_not_grow_with_the_requests() {
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = fitted(dir.path());
    let row = |path: &Path| -> i64 {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.query_row("SELECT length(state) FROM server", [], |r| r.get(0))
            .unwrap()
    };
    let mut sizes = Vec::new();
    for i in 0..8u64 {
        // Points 10..18 of clients 0 and 2: two clients, applied at once.
        store.forget(&records(&[10 + i, 70 + i])).unwrap();
        sizes.push(row(&path));
        if i == 3 {
            drop(store);
            store = Store::open(&path).unwrap();
        }
    }
    let (first, last) = (sizes[1], sizes[7]);
    assert!(last <= first + 16, "the server row grew: {sizes:?}");
    let numbers: Vec<u64> = store.history().unwrap().iter().map(|a| a.request).collect();
    let mut distinct = numbers.clone();
    distinct.dedup();
    assert_eq!(distinct, (1..=8).collect::<Vec<u64>>(), "{numbers:?}");
    assert_eq!(store.federation().applied_requests(), 8);
}
