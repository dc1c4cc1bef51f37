//! Any number of processes on one store (issue 25, defect 2): two
//! concurrent `mufc forget` runs could both print `applied`, leave two
//! journal entries numbered 1 and a store that no longer opened.
//!
//! A store of 8 clients with 150 points each (rows interleaved). Eight
//! workers each run `mufc forget` processes one after another (26
//! each, 208 in all) naming one to three records drawn at random from the
//! whole store, so that they collide: a request for a record another
//! worker's request forgot first is refused. A ninth thread reads the
//! store with `mufc inspect` all along. Then:
//!
//! - the store opens, and every read during the run succeeded;
//! - the journal is numbered 1, 2, ... without gaps or repeats, one entry
//!   per request that reported success (applied or deferred);
//! - every such request is applied exactly once: its records are forgotten
//!   by it (their tombstones name its number), and the numbers reported
//!   are distinct;
//! - every refused request names a record some successful request forgot,
//!   and says so;
//! - after a flush of the pending updates, the model equals retraining on
//!   the records still held, bit for bit (`mufc_testkit::compare`, and
//!   `Store::verify`).
//!
//! The draws are seeded (`MUFC_CONCURRENCY_SEED` varies them).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use mufc::{ClientId, Federation};
use mufc_store::{RecordId, RecordStatus, Store, VerifyOutcome};
use mufc_testkit::compare;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use seeding::{Dataset, PointId};

const CLIENTS: usize = 8;
const POINTS: usize = 150;
const WORKERS: usize = 8;
const PER_WORKER: usize = 26;

/// What one `mufc forget` process did.
#[derive(Debug)]
enum Outcome {
    /// Exit code 0 or 3: committed, as request `number`.
    Served { number: u64, ids: Vec<i64> },
    /// Exit code 4: refused, with its message.
    Refused { ids: Vec<i64>, stderr: String },
}

fn forget(model: &str, ids: &[i64]) -> Outcome {
    let list: Vec<String> = ids.iter().map(ToString::to_string).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_mufc"))
        .args([
            "forget",
            "--model",
            model,
            "--ids",
            &list.join(","),
            "--json",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    match out.status.code() {
        Some(0 | 3) => {
            let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            let r = j["requests"].as_array().unwrap();
            assert_eq!(r.len(), 1, "{j}");
            Outcome::Served {
                number: r[0]["request"].as_u64().unwrap(),
                ids: ids.to_vec(),
            }
        }
        Some(4) => Outcome::Refused {
            ids: ids.to_vec(),
            stderr,
        },
        other => panic!("mufc forget {ids:?} ended with {other:?}: {stderr}"),
    }
}

/// `mufc fit` of the test data (client column 0, id column 1) into
/// `model`, with `extra` options.
fn fit(data: &std::path::Path, model: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--model",
        model,
        "--client-column",
        "0",
        "--id-column",
        "1",
        "--k",
        "3",
        "--gamma",
        "0.02",
        "-q",
    ];
    args.extend_from_slice(extra);
    common::mufc(&args)
}

#[test]
fn eight_processes_serve_requests_on_one_store_exactly_once() {
    let seed: u64 = std::env::var("MUFC_CONCURRENCY_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(25);
    let dir = tempfile::tempdir().unwrap();
    let data = common::clients_csv(dir.path(), CLIENTS, POINTS, |r| 10_000 + r as i64);
    let model = dir.path().join("model.mufc");
    let m = model.to_str().unwrap().to_string();
    let out = fit(&data, &m, &[]);
    assert!(out.status.success(), "{out:?}");
    let store = Store::open(&model).unwrap();
    let config = store.config().clone();
    let initial: BTreeMap<ClientId, Dataset> = store
        .federation()
        .clients()
        .iter()
        .map(|c| (c.id(), c.data().clone()))
        .collect();
    let place: BTreeMap<i64, (ClientId, PointId)> = (0..CLIENTS * POINTS)
        .map(|r| {
            let id = 10_000 + r as i64;
            (id, store.placement(&RecordId::from(id)).unwrap())
        })
        .collect();
    drop(store);

    // A reader all along: every read must succeed (a torn read was "the
    // store is damaged").
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(Mutex::new(0usize));
    let reader = {
        let (done, reads, m) = (done.clone(), reads.clone(), m.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                let out = Command::new(env!("CARGO_BIN_EXE_mufc"))
                    .args(["inspect", "--model", &m, "--json"])
                    .output()
                    .unwrap();
                assert!(out.status.success(), "a read failed: {out:?}");
                *reads.lock().unwrap() += 1;
            }
        })
    };
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let m = m.clone();
            std::thread::spawn(move || {
                let mut rng =
                    ChaCha8Rng::seed_from_u64(seed.wrapping_mul(31).wrapping_add(w as u64));
                (0..PER_WORKER)
                    .map(|_| {
                        let n = rng.random_range(1..=3);
                        let mut ids = BTreeSet::new();
                        while ids.len() < n {
                            ids.insert(10_000 + rng.random_range(0..CLIENTS * POINTS) as i64);
                        }
                        forget(&m, &ids.into_iter().collect::<Vec<_>>())
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let outcomes: Vec<Outcome> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    done.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    assert_eq!(outcomes.len(), WORKERS * PER_WORKER);

    let mut store = Store::open(&model).unwrap();
    // The journal: 1, 2, ..., one entry per request served.
    let served: BTreeMap<u64, &Vec<i64>> = outcomes
        .iter()
        .filter_map(|o| match o {
            Outcome::Served { number, ids } => Some((*number, ids)),
            Outcome::Refused { .. } => None,
        })
        .collect();
    let n_served = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Served { .. }))
        .count();
    assert_eq!(served.len(), n_served, "two requests reported one number");
    let conn = rusqlite::Connection::open(&model).unwrap();
    let journal: Vec<u64> = conn
        .prepare("SELECT request FROM journal ORDER BY entry")
        .unwrap()
        .query_map([], |r| r.get::<_, i64>(0))
        .unwrap()
        .map(|r| u64::try_from(r.unwrap()).unwrap())
        .collect();
    drop(conn);
    assert_eq!(
        journal,
        (1..=n_served as u64).collect::<Vec<_>>(),
        "the journal is not 1..{n_served}"
    );
    assert_eq!(served.keys().copied().collect::<Vec<_>>(), journal);
    // Exactly once: each served request's records were forgotten by it.
    let mut gone = BTreeSet::new();
    for (&number, ids) in &served {
        for &id in ids.iter() {
            match store.locate(&RecordId::from(id)).unwrap() {
                RecordStatus::Forgotten(f) => assert_eq!(f.request, number, "record {id}"),
                other => panic!("record {id} of request {number}: {other:?}"),
            }
            assert!(gone.insert(id), "record {id} forgotten twice");
        }
    }
    // Every refusal names a record that a served request forgot.
    let mut refused = 0;
    for o in &outcomes {
        if let Outcome::Refused { ids, stderr } = o {
            refused += 1;
            assert!(ids.iter().any(|id| gone.contains(id)), "{ids:?}: {stderr}");
            assert!(stderr.contains("already forgotten in request"), "{stderr}");
        }
    }
    assert!(refused > 0, "no collision: the test is too gentle");
    assert!(n_served >= 150, "only {n_served} requests served");
    assert!(*reads.lock().unwrap() > 0);

    // The model after the pending updates: retraining on what is held.
    store.flush().unwrap();
    let mut lost: BTreeMap<ClientId, Vec<PointId>> = BTreeMap::new();
    for id in &gone {
        let (c, p) = place[id];
        lost.entry(c).or_default().push(p);
    }
    let rest: Vec<(ClientId, Dataset)> = initial
        .iter()
        .map(|(c, d)| {
            (
                *c,
                d.without(lost.get(c).map_or(&[][..], Vec::as_slice))
                    .unwrap(),
            )
        })
        .filter(|(_, d)| !d.is_empty())
        .collect();
    let retrained = Federation::with_ids(rest, &config).unwrap();
    compare(store.federation(), &retrained).unwrap();
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Equal);
    eprintln!(
        "seed {seed}: {n_served} requests served, {refused} refused, {} reads",
        reads.lock().unwrap()
    );
}

/// A `mufc fit --force` over a store that `mufc forget` processes are
/// serving (the auditor's finding on issue 25): the fit replaced the file
/// while a forget committed to the old one, and acknowledged erasures
/// came back with the re-import. Now the fit holds the store's write lock
/// from reading the tombstones to committing the new store in place: a
/// forget either committed before (its tombstone is inherited, the record
/// left out) or waits and is served on the new store. Every acknowledged
/// id must be forgotten in the final store, no forget may fail, and the
/// final store equals retraining on what it holds.
#[test]
fn a_refit_during_forgets_loses_no_acknowledged_erasure() {
    let dir = tempfile::tempdir().unwrap();
    let data = common::clients_csv(dir.path(), 6, 60, |r| 20_000 + r as i64);
    let model = dir.path().join("model.mufc");
    let m = model.to_str().unwrap().to_string();
    assert!(fit(&data, &m, &[]).status.success());
    let forgetter = {
        let m = m.clone();
        std::thread::spawn(move || {
            (0..60)
                .map(|i| {
                    let id = 20_000 + 6 * i;
                    (id, forget(&m, &[id]))
                })
                .collect::<Vec<_>>()
        })
    };
    // Three replacements while the forgets run.
    for _ in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(150));
        let out = fit(&data, &m, &["--force", "--skip-forgotten"]);
        assert!(out.status.success(), "{out:?}");
    }
    let outcomes = forgetter.join().unwrap();
    let store = Store::open(&model).unwrap();
    let mut acknowledged = 0;
    for (id, o) in &outcomes {
        match o {
            Outcome::Served { .. } => {
                acknowledged += 1;
                assert!(
                    matches!(
                        store.locate(&RecordId::from(*id)).unwrap(),
                        RecordStatus::Forgotten(_)
                    ),
                    "record {id}: acknowledged, but {:?}",
                    store.locate(&RecordId::from(*id)).unwrap()
                );
            }
            // Distinct ids: a refusal can only be a lost tombstone.
            Outcome::Refused { stderr, .. } => panic!("record {id} refused: {stderr}"),
        }
    }
    assert_eq!(acknowledged, 60);
    assert!(matches!(
        store.verify().unwrap().outcome(),
        VerifyOutcome::Equal | VerifyOutcome::Pending
    ));
}

/// `fit --force` replaces a store, never another file given by mistake
/// (the auditor's `--model data.csv --force` turned the data into a
/// database).
#[test]
fn fit_force_refuses_to_overwrite_what_is_not_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let data = common::clients_csv(dir.path(), 3, 20, |r| r as i64);
    let before = std::fs::read(&data).unwrap();
    let out = common::mufc(&[
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--model",
        data.to_str().unwrap(),
        "--client-column",
        "0",
        "--id-column",
        "1",
        "--k",
        "2",
        "--force",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("replacing overwrites a store only"), "{err}");
    assert_eq!(std::fs::read(&data).unwrap(), before);
}
