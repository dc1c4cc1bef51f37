//! Records that arrive at a model store (issue 29): random interleavings
//! of additions and removals, with the store reopened between some
//! requests, equal training from scratch on the records the store holds;
//! a bad addition, or one failing inside its transaction, changes
//! nothing; two handles adding at once lose nothing; the journal and the
//! audit say what was added; a deferred addition has a deadline.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use mufc::{ClientId, Federation, FederationConfig, ValidConfig};
use mufc_store::{
    AuditOutcome, ClientName, ClientRecords, FaultPoint, FitOptions, OnForgotten, RecordId, Store,
    StoreError, VerifyOutcome,
};
use mufc_testkit::{compare, compare_clients};
use nalgebra::DMatrix;
use rand::RngExt;
use seeding::Dataset;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

/// Every record: its client, its id and its coordinates.
#[derive(Clone)]
struct Record {
    client: u64,
    id: RecordId,
    coords: Vec<f64>,
}

/// The mixture's records, client `l`'s point `i` named `R-l-i`.
fn all_records(label: &str) -> Vec<Record> {
    let mut out = Vec::new();
    for (l, d) in gaussian_clients(label, Mixture::SMALL).iter().enumerate() {
        for i in 0..d.len() {
            out.push(Record {
                client: l as u64,
                id: RecordId::parse(&format!("R-{l}-{i}")).unwrap(),
                coords: d.point(i).to_vec(),
            });
        }
    }
    out
}

/// Record `r`'s position in its client's data.
fn index(r: &Record) -> usize {
    let id = r.id.to_string();
    id.rsplit('-').next().unwrap().parse().unwrap()
}

/// The records as the store takes them, by client.
fn client_records(records: &[&Record]) -> Vec<ClientRecords> {
    let mut by: BTreeMap<u64, Vec<&Record>> = BTreeMap::new();
    for r in records {
        by.entry(r.client).or_default().push(r);
    }
    (by.into_iter())
        .map(|(l, rs)| {
            let coords: Vec<f64> = rs.iter().flat_map(|r| r.coords.clone()).collect();
            let d = Dataset::new(DMatrix::from_column_slice(2, rs.len(), &coords)).unwrap();
            let ids = rs.iter().map(|r| r.id.clone()).collect();
            ClientRecords::new(ClientName::new(&l.to_string()).unwrap(), d, ids).unwrap()
        })
        .collect()
}

fn config(max_points: u64) -> ValidConfig {
    FederationConfig::new(3)
        .gamma(0.1)
        .seed(5)
        .max_points(max_points)
        .validate()
        .unwrap()
}

/// A store of the records `held`, with room for every record.
fn fitted(dir: &Path, all: &[Record], held: &[&Record], options: &FitOptions) -> (Store, PathBuf) {
    let path = dir.join("model.mufc");
    let config = config(all.len() as u64);
    let (store, _) = Store::fit(&path, client_records(held), &config, options).unwrap();
    (store, path)
}

/// The federation trained from scratch on the records `present`, each
/// with the point the store gave it.
fn retrained(store: &Store, present: &[&Record]) -> Federation {
    let mut by: BTreeMap<ClientId, (Vec<f64>, Vec<seeding::PointId>)> = BTreeMap::new();
    for r in present {
        let (c, p) = store.placement(&r.id).unwrap();
        let e = by.entry(c).or_default();
        e.0.extend_from_slice(&r.coords);
        e.1.push(p);
    }
    let data = (by.into_iter())
        .map(|(c, (coords, ids))| {
            let m = DMatrix::from_column_slice(2, ids.len(), &coords);
            (c, Dataset::with_ids(m, ids).unwrap())
        })
        .collect();
    Federation::with_ids(data, store.config()).unwrap()
}

#[test]
fn random_additions_and_removals_equal_retraining_and_survive_reopening() {
    let (mut waited, mut joins) = (0, 0);
    // The last client joins later, with its first batch of records.
    let newcomer = Mixture::SMALL.clients as u64 - 1;
    for seq in 0..4u64 {
        let mut rng = testdata::rng(&format!("store-additions-{seq}"));
        let all = all_records(&format!("store-additions-{seq}"));
        let (mut held, mut later): (Vec<&Record>, Vec<&Record>) = all
            .iter()
            .partition(|r| r.client != newcomer && rng.random_bool(0.75));
        let dir = tempfile::tempdir().unwrap();
        let (mut store, path) = fitted(dir.path(), &all, &held, &FitOptions::new());
        let mut joined = false;
        for step in 0..12 {
            let what = format!("sequence {seq}, step {step}");
            // Records arrive for clients that still hold some, and for
            // the new client until it joined.
            let live = |r: &&Record| {
                held.iter().any(|h| h.client == r.client) || (r.client == newcomer && !joined)
            };
            later.retain(live);
            if rng.random_bool(0.5) && !later.is_empty() {
                let n = rng.random_range(1..=4).min(later.len());
                let batch: Vec<&Record> = (0..n)
                    .map(|_| later.swap_remove(rng.random_range(0..later.len())))
                    .collect();
                let joins_now = !joined && batch.iter().any(|r| r.client == newcomer);
                let r = match joins_now {
                    true => store.add_admitting(&client_records(&batch), OnForgotten::Refuse),
                    false => store.add(&client_records(&batch), OnForgotten::Refuse),
                };
                let r = r.unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(r.added_points, n, "{what}");
                joined |= joins_now;
                joins += usize::from(joins_now);
                held.extend(batch);
            } else {
                let n = rng.random_range(1..=3).min(held.len() - 1);
                let gone: Vec<RecordId> = (0..n)
                    .map(|_| held.swap_remove(rng.random_range(0..held.len())).id.clone())
                    .collect();
                store
                    .forget(&gone)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
            }
            assert_eq!(store.num_points(), held.len(), "{what}");
            let now = retrained(&store, &held);
            let waits =
                !store.pending().is_empty() || !store.federation().pending_additions().is_empty();
            waited += usize::from(waits);
            let checked = match waits {
                false => compare(store.federation(), &now),
                true => compare_clients(store.federation(), &now),
            };
            checked.unwrap_or_else(|e| panic!("{what}: {e}"));
            let v = store.verify().unwrap();
            let expected = if waits {
                VerifyOutcome::Pending
            } else {
                VerifyOutcome::Equal
            };
            assert_eq!(v.outcome(), expected, "{what}: {:?}", v.differences);
            if rng.random_bool(0.3) {
                store = Store::open(&path).unwrap();
            }
        }
        if store.flush().unwrap().is_some() {
            compare(store.federation(), &retrained(&store, &held)).unwrap();
        }
    }
    assert!(waited > 0, "no addition or removal waited");
    assert!(joins > 0, "no client joined");
}

/// What an addition journals and audits: a deferred row with the records
/// the client added, then the round's applied row counting them, no
/// coordinate and no record id anywhere in the log.
#[test]
fn the_audit_log_counts_what_was_added() {
    let all = all_records("store-additions-audit");
    let (held, later): (Vec<&Record>, Vec<&Record>) = all.iter().partition(|r| index(r) != 7);
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = fitted(dir.path(), &all, &held, &FitOptions::new());
    let of = |l: u64| {
        later
            .iter()
            .copied()
            .filter(|r| r.client == l)
            .collect::<Vec<_>>()
    };
    let r = store
        .add(&client_records(&of(0)), OnForgotten::Refuse)
        .unwrap();
    assert!(r.outcome.is_deferred());
    let r = store
        .add(&client_records(&of(2)), OnForgotten::Refuse)
        .unwrap();
    assert_eq!(r.applied_requests, [1, 2]);
    let log = store.history().unwrap();
    assert_eq!(log.len(), 3, "{log:?}");
    assert_eq!(
        (log[0].outcome, log[0].added, log[0].points),
        (AuditOutcome::Deferred, 1, 0)
    );
    for (row, client) in log[1..].iter().zip(["0", "2"]) {
        assert_eq!(row.outcome, AuditOutcome::Applied);
        assert_eq!((row.client.as_str(), row.added, row.points), (client, 1, 0));
    }
    assert_eq!(log[1].applied, [1]);
    assert_eq!(log[2].applied, [2]);
    assert_eq!(store.model_version(), 2);
}

/// An addition the store cannot take changes nothing, the file byte for
/// byte: a record it holds, one it forgot (refused; skipped with
/// `OnForgotten::Skip`, unless it is all there is), an unknown client, a
/// client or a record named twice, a point outside the box, nothing.
#[test]
fn a_bad_addition_changes_nothing() {
    let all = all_records("store-additions-bad");
    let (held, later): (Vec<&Record>, Vec<&Record>) =
        all.iter().partition(|r| r.client != 3 || index(r) < 20);
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = fitted(dir.path(), &all, &held, &FitOptions::new());
    store
        .forget(&[held[0].id.clone(), held[40].id.clone()])
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let fresh = later[0];
    let outside = Record {
        coords: vec![0.75, 0.0],
        ..fresh.clone()
    };
    let stranger = Record {
        client: 9,
        ..fresh.clone()
    };
    let cases: Vec<(Vec<ClientRecords>, &str)> = vec![
        (client_records(&[held[5]]), "is held already (by client 0)"),
        (
            client_records(&[held[0]]),
            "brings back 1 record the store forgot",
        ),
        (client_records(&[&stranger]), "unknown client 9"),
        (
            [client_records(&[fresh]), client_records(&[later[1]])].concat(),
            "client name 3 occurs twice",
        ),
        (client_records(&[fresh, fresh]), "occurs twice"),
        (client_records(&[&outside]), "outside"),
        (Vec::new(), "empty"),
    ];
    for (clients, expected) in cases {
        let err = store.add(&clients, OnForgotten::Refuse).unwrap_err();
        assert!(err.to_string().contains(expected), "{expected}: {err}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{expected}");
    }
    let alone = store
        .add(&client_records(&[held[0]]), OnForgotten::Skip)
        .unwrap_err();
    assert!(matches!(alone, StoreError::Forgotten { .. }), "{alone}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // Skipped, the forgotten record stays out and the new one comes in.
    let r = store
        .add(&client_records(&[held[0], fresh]), OnForgotten::Skip)
        .unwrap();
    assert_eq!((r.added_points, r.skipped.len()), (1, 1));
    assert!(store.record(&held[0].id).is_none());
    assert_eq!(store.record(&fresh.id).unwrap().as_str(), "3");
}

#[test]
fn an_addition_failing_inside_its_transaction_changes_nothing() {
    let all = all_records("store-additions-fault");
    let (held, later): (Vec<&Record>, Vec<&Record>) = all.iter().partition(|r| index(r) % 10 != 9);
    for at in FaultPoint::ALL {
        let dir = tempfile::tempdir().unwrap();
        let (mut store, path) = fitted(dir.path(), &all, &held, &FitOptions::new());
        let bytes = std::fs::read(&path).unwrap();
        let before = Store::open(&path).unwrap();
        store.inject_fault(Some(at));
        let two = client_records(&[later[0], later[later.len() - 1]]);
        let err = store.add(&two, OnForgotten::Refuse).unwrap_err();
        assert!(
            matches!(err, StoreError::InjectedFault(p) if p == at),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{at}");
        compare(store.federation(), before.federation()).unwrap();
        assert!(store.record(&later[0].id).is_none(), "{at}");
        assert_eq!(store.history().unwrap(), before.history().unwrap());
        store.inject_fault(None);
        store.add(&two, OnForgotten::Refuse).unwrap();
        assert_eq!(store.model_version(), 2, "{at}");
    }
}

/// Two handles on one store add at once, each its own records, and both
/// try one shared record: every own record lands, the shared one once.
#[test]
fn two_handles_adding_at_once_lose_nothing() {
    let all = all_records("store-additions-race");
    let (held, later): (Vec<&Record>, Vec<&Record>) = all.iter().partition(|r| index(r) % 10 != 3);
    let dir = tempfile::tempdir().unwrap();
    let (store, path) = fitted(dir.path(), &all, &held, &FitOptions::new());
    drop(store);
    let shared = later[0].clone();
    let halves: Vec<Vec<Record>> = vec![
        later[1..].iter().step_by(2).map(|r| (*r).clone()).collect(),
        later[2..].iter().step_by(2).map(|r| (*r).clone()).collect(),
    ];
    let results: Vec<(usize, bool)> = std::thread::scope(|s| {
        let handles: Vec<_> = (halves.iter())
            .map(|mine| {
                let (path, shared) = (path.clone(), shared.clone());
                s.spawn(move || {
                    let mut store = Store::open(&path).unwrap();
                    let mut added = 0;
                    for r in mine {
                        added += store
                            .add(&client_records(&[r]), OnForgotten::Refuse)
                            .unwrap()
                            .added_points;
                    }
                    let won = match store.add(&client_records(&[&shared]), OnForgotten::Refuse) {
                        Ok(_) => true,
                        Err(StoreError::RecordHeld { .. }) => false,
                        Err(e) => panic!("{e}"),
                    };
                    (added, won)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(results.iter().filter(|(_, won)| *won).count(), 1);
    let store = Store::open(&path).unwrap();
    assert_eq!(store.num_points(), all.len());
    assert_eq!(
        results.iter().map(|(n, _)| n).sum::<usize>(),
        later.len() - 1
    );
    assert_ne!(store.verify().unwrap().outcome(), VerifyOutcome::Differs);
}

/// A lone addition's model update waits at most the store's deferral
/// limit, counted from the addition.
#[test]
fn a_deferred_addition_runs_at_its_deadline() {
    let all = all_records("store-additions-deadline");
    let (held, later): (Vec<&Record>, Vec<&Record>) = all.iter().partition(|r| index(r) != 1);
    let dir = tempfile::tempdir().unwrap();
    let options = FitOptions::new().with_max_defer(Duration::from_secs(3600));
    let (mut store, path) = fitted(dir.path(), &all, &held, &options);
    let r = store
        .add(&client_records(&[later[0]]), OnForgotten::Refuse)
        .unwrap();
    let deadline = store.deadline().unwrap().unwrap();
    assert!(
        matches!(r.outcome, mufc_store::ForgetOutcome::Deferred { deadline: d, .. } if d == deadline)
    );
    assert!(
        (deadline - r.time).abs_diff(3600) <= 1,
        "{deadline} {}",
        r.time
    );
    assert!(store.apply_overdue().unwrap().is_none());
    drop(store);
    // An hour later (the journal's clock moved back): the update is due.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("UPDATE journal SET time = time - 3601", [])
        .unwrap();
    drop(conn);
    let mut store = Store::open(&path).unwrap();
    let r = store
        .apply_overdue()
        .unwrap()
        .expect("the addition is overdue");
    assert!(r.overdue && r.outcome == mufc_store::ForgetOutcome::Applied);
    assert!(store.federation().pending_additions().is_empty());
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Equal);
}

/// Months of requests: 400 additions and removals of one to three records
/// at random (new records near old ones, under new ids; a removal never
/// takes a client below eight records), the store reopened every 25
/// requests and its clients checked against training from scratch; at the
/// end, once flushed, the whole model equals it and `verify` says equal.
#[test]
fn four_hundred_additions_and_removals_stay_exact() {
    let all = all_records("store-additions-soak");
    let mut rng = testdata::rng("store-additions-soak");
    let held: Vec<&Record> = all.iter().collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("model.mufc");
    let config = config(all.len() as u64 + 100);
    let (mut store, _) =
        Store::fit(&path, client_records(&held), &config, &FitOptions::new()).unwrap();
    let mut present: Vec<Record> = all.clone();
    let mut next = 0u64;
    let mut deferred = 0;
    for step in 0..400 {
        if rng.random_bool(0.5) {
            let n = rng.random_range(1..=3);
            let mut batch = Vec::new();
            for _ in 0..n {
                let src = present[rng.random_range(0..present.len())].clone();
                let jitter = (next % 7) as f64 * 1e-3;
                next += 1;
                batch.push(Record {
                    client: src.client,
                    id: RecordId::parse(&format!("N-{next}")).unwrap(),
                    coords: vec![src.coords[0] + jitter, src.coords[1]],
                });
            }
            let refs: Vec<&Record> = batch.iter().collect();
            let r = store
                .add(&client_records(&refs), OnForgotten::Refuse)
                .unwrap_or_else(|e| panic!("step {step}: {e}"));
            deferred += usize::from(r.outcome.is_deferred());
            present.extend(batch);
        } else {
            let n = rng.random_range(1..=3);
            let mut gone = Vec::new();
            for _ in 0..n {
                let i = rng.random_range(0..present.len());
                let c = present[i].client;
                if present.iter().filter(|r| r.client == c).count() > 8 {
                    gone.push(present.swap_remove(i).id);
                }
            }
            if gone.is_empty() {
                continue;
            }
            let r = store
                .forget(&gone)
                .unwrap_or_else(|e| panic!("step {step}: {e}"));
            deferred += usize::from(r.outcome.is_deferred());
        }
        if step % 25 == 0 {
            store = Store::open(&path).unwrap();
            let refs: Vec<&Record> = present.iter().collect();
            let now = retrained(&store, &refs);
            compare_clients(store.federation(), &now)
                .unwrap_or_else(|e| panic!("step {step}: {e}"));
            assert_ne!(
                store.verify().unwrap().outcome(),
                VerifyOutcome::Differs,
                "step {step}"
            );
        }
    }
    store.flush().unwrap();
    let refs: Vec<&Record> = present.iter().collect();
    compare(store.federation(), &retrained(&store, &refs)).unwrap();
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Equal);
    assert!(deferred > 0, "no request waited");
}

/// A lone addition waits; `flush` applies it (with no removal pending:
/// the flush looks at every kind of request that waits), and the model
/// then equals training on the records held.
#[test]
fn a_lone_addition_is_applied_by_a_flush() {
    let all = all_records("store-additions-flush");
    let (held, later): (Vec<&Record>, Vec<&Record>) = all.iter().partition(|r| index(r) != 2);
    let dir = tempfile::tempdir().unwrap();
    let (mut store, _) = fitted(dir.path(), &all, &held, &FitOptions::new());
    let r = store
        .add(&client_records(&[later[0]]), OnForgotten::Refuse)
        .unwrap();
    assert!(r.outcome.is_deferred());
    assert!(store.pending().is_empty(), "no removal waits");
    assert_eq!(store.pending_requests().len(), 1);
    let flushed = store.flush().unwrap().expect("the addition waits");
    assert_eq!(flushed.applied_requests, [1]);
    assert!(store.pending_requests().is_empty());
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Equal);
    assert!(store.flush().unwrap().is_none());
}

/// A process killed inside an addition's transaction, at each fault
/// point, leaves the store as it was; the addition then goes through.
#[test]
fn an_addition_killed_inside_its_transaction_is_rolled_back_on_open() {
    let all = all_records("store-additions-abort");
    let (held, later): (Vec<&Record>, Vec<&Record>) = all.iter().partition(|r| index(r) % 10 != 4);
    let two = client_records(&[later[0], later[later.len() - 1]]);
    super::store_integrity::aborts_are_rolled_back_on_open(
        "an_addition_killed_inside_its_transaction_is_rolled_back_on_open",
        |dir| {
            let (mut store, path) = fitted(dir, &all, &held, &FitOptions::new());
            // A first request, so that the model is at version 2.
            store
                .add(
                    &client_records(&[later[1], later[later.len() - 2]]),
                    OnForgotten::Refuse,
                )
                .unwrap();
            path
        },
        |store| store.add(&two, OnForgotten::Refuse),
    );
}

/// Client 3's records as a new client's, named `name`, with record ids
/// of their own (`J-i`): a site that joins with data like client 3's.
fn newcomer_records(all: &[Record], name: &str) -> Vec<ClientRecords> {
    let rs: Vec<&Record> = all.iter().filter(|r| r.client == 3).collect();
    let c = client_records(&rs).remove(0);
    let ids = (0..c.records().len())
        .map(|i| RecordId::parse(&format!("J-{name}-{i}")).unwrap())
        .collect();
    let name = ClientName::new(name).unwrap();
    vec![ClientRecords::new(name, c.data().clone(), ids).unwrap()]
}

/// Every record but client 0's last, which arrives with a join (so that
/// the join's round runs), and that record.
fn but_one(all: &[Record]) -> (Vec<&Record>, Vec<ClientRecords>) {
    let last = |r: &&Record| r.client == 0 && index(r) == 29;
    let held = all.iter().filter(|r| !last(r)).collect();
    let one = all.iter().filter(last).collect::<Vec<_>>();
    (held, client_records(&one))
}

/// A join the store cannot take changes nothing, the file byte for byte:
/// an unknown name through `add` (only `add_admitting` admits), the name
/// of a client that left (a name names one client for good), a new name
/// twice. A join failing inside its transaction leaves neither the file
/// nor the handle's names changed; it then goes through: a lone join
/// waits, a flush applies it.
#[test]
fn a_bad_or_failed_join_changes_nothing() {
    let all = all_records("store-joins-bad");
    let (held, _) = but_one(&all);
    let dir = tempfile::tempdir().unwrap();
    let (mut store, path) = fitted(dir.path(), &all, &held, &FitOptions::new());
    store.forget_client("2").unwrap();
    store.flush().unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let north = newcomer_records(&all, "north");
    let twice = [north.clone(), newcomer_records(&all, "north")].concat();
    let cases: Vec<(Vec<ClientRecords>, bool, &str)> = vec![
        (north.clone(), false, "unknown client north"),
        (
            newcomer_records(&all, "2"),
            true,
            "client 2 was already forgotten",
        ),
        (twice, true, "occurs twice"),
    ];
    for (clients, join, expected) in cases {
        let err = match join {
            true => store.add_admitting(&clients, OnForgotten::Refuse),
            false => store.add(&clients, OnForgotten::Refuse),
        };
        let err = err.unwrap_err();
        assert!(err.to_string().contains(expected), "{expected}: {err}");
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{expected}");
    }
    for at in FaultPoint::ALL {
        store.inject_fault(Some(at));
        let err = store
            .add_admitting(&north, OnForgotten::Refuse)
            .unwrap_err();
        assert!(
            matches!(err, StoreError::InjectedFault(p) if p == at),
            "{err}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "{at}");
        assert!(
            !store.client_names().iter().any(|n| n.as_str() == "north"),
            "{at}"
        );
    }
    store.inject_fault(None);
    let r = store.add_admitting(&north, OnForgotten::Refuse).unwrap();
    assert!(r.outcome.is_deferred(), "a lone join waits");
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Pending);
    store.flush().unwrap();
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Equal);
    let reopened = Store::open(&path).unwrap();
    assert!(
        reopened
            .client_names()
            .iter()
            .any(|n| n.as_str() == "north")
    );
}

/// Groups of two (and a minimum aggregate of two), every request served
/// at once, room for `max_points` points.
fn grouped_config(max_points: u64) -> ValidConfig {
    FederationConfig::new(3)
        .gamma(0.1)
        .max_points(max_points)
        .min_updating_clients(1)
        .topology(mufc::Topology::Groups { size: 2 })
        .min_clients(2)
        .validate()
        .unwrap()
}

/// With groups a new site joins the smallest group, and a site leaving a
/// group of two merges the other into the group that takes it; the store
/// verifies each against retraining in its groups, also reopened.
#[test]
fn a_site_joins_a_grouped_store_and_a_leave_merges_its_group() {
    let all = all_records("store-joins-groups");
    let (held, _) = but_one(&all);
    let north = newcomer_records(&all, "north");
    let dir = tempfile::tempdir().unwrap();
    let grouped = grouped_config(all.len() as u64 + 30);
    let path = dir.path().join("grouped.mufc");
    let (mut store, _) =
        Store::fit(&path, client_records(&held), &grouped, &FitOptions::new()).unwrap();
    let groups = store.federation().layout().unwrap().groups().len();
    store.add_admitting(&north, OnForgotten::Refuse).unwrap();
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Equal);
    let reopened = Store::open(&path).unwrap();
    assert_eq!(reopened.verify().unwrap().outcome(), VerifyOutcome::Equal);
    let layout = reopened.federation().layout().unwrap();
    assert_eq!(layout.groups().len(), groups);
    assert_eq!(layout.clients().len(), 5);
    // A client of the group of two leaves: the one left merges into the
    // other group, and the store verifies in the merged groups.
    let mut store = reopened;
    let group = store.federation().layout().unwrap().groups()[1].clone();
    assert_eq!(group.len(), 2);
    let ids = store.federation().client_ids();
    let at = ids.iter().position(|c| *c == group[0]).unwrap();
    let name = store.client_names()[at].clone();
    store.forget_client(name.as_str()).unwrap();
    let layout = store.federation().layout().unwrap().clone();
    assert!(layout.groups()[1].is_empty(), "{layout:?}");
    assert_eq!(layout.groups()[0].len(), 4);
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Equal);
    let reopened = Store::open(&path).unwrap();
    assert_eq!(reopened.verify().unwrap().outcome(), VerifyOutcome::Equal);
}

/// A process killed inside a join's transaction, at each fault point,
/// leaves the store as it was; the join then goes through.
#[test]
fn a_join_killed_inside_its_transaction_is_rolled_back_on_open() {
    let all = all_records("store-joins-abort");
    let (held, one) = but_one(&all);
    let north = [newcomer_records(&all, "north"), one].concat();
    super::store_integrity::aborts_are_rolled_back_on_open(
        "a_join_killed_inside_its_transaction_is_rolled_back_on_open",
        |dir| {
            // Room for the new client's records.
            let path = dir.join("model.mufc");
            let config = config(all.len() as u64 + 30);
            let held = client_records(&held);
            let (mut store, _) = Store::fit(&path, held, &config, &FitOptions::new()).unwrap();
            store
                .forget(&[all[0].id.clone(), all[40].id.clone()])
                .unwrap();
            path
        },
        |store| store.add_admitting(&north, OnForgotten::Refuse),
    );
}

/// Two handles on one grouped store at once, each bringing three new
/// sites one after the other while the other writes: every site gets a
/// number of its own, the groups absorb and split as the joins come (a
/// group splits once two of its new sites are in its sum and a third
/// comes: `RemoteServer::split_moving`), and the store verifies equal to
/// retraining in its groups, also reopened.
#[test]
fn two_handles_joining_a_grouped_store_at_once_lose_nothing() {
    let all = all_records("store-joins-groups-race");
    let (held, _) = but_one(&all);
    let dir = tempfile::tempdir().unwrap();
    let grouped = grouped_config(all.len() as u64 + 200);
    let path = dir.path().join("grouped.mufc");
    let (store, _) =
        Store::fit(&path, client_records(&held), &grouped, &FitOptions::new()).unwrap();
    let groups_at_fit = store.federation().layout().unwrap().groups().len();
    drop(store);
    let sites = [["north", "south", "centre"], ["east", "west", "coast"]];
    std::thread::scope(|s| {
        for names in &sites {
            let (path, all) = (path.clone(), &all);
            s.spawn(move || {
                let mut store = Store::open(&path).unwrap();
                for name in names {
                    let site = newcomer_records(all, name);
                    store.add_admitting(&site, OnForgotten::Refuse).unwrap();
                }
            });
        }
    });
    let store = Store::open(&path).unwrap();
    let names: Vec<String> = store.client_names().iter().map(|n| n.to_string()).collect();
    for name in sites.iter().flatten() {
        assert!(names.iter().any(|n| n == name), "{names:?}");
    }
    let layout = store.federation().layout().unwrap();
    assert_eq!(layout.clients().len(), 10);
    assert!(
        layout.groups().len() > groups_at_fit,
        "no group split: {layout:?}"
    );
    assert!(
        layout.groups().iter().all(|g| (2..=4).contains(&g.len())),
        "{layout:?}"
    );
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Equal);
}
