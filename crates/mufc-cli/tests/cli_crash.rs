//! The model store survives `SIGKILL` (issue 14): a sequence of removal
//! requests is served by `mufc forget` child processes, and most of them
//! are killed with `SIGKILL`, either after a random delay or in the middle
//! of the request's transaction (the fault hook of `mufc_store`, which
//! makes a debug build wait at a point of the transaction until it is
//! killed). After every attempt the test opens the store and checks:
//!
//! - it opens (a hot journal left by the kill is rolled back);
//! - the request is applied wholly or not at all (its records are all
//!   still held, or none is);
//! - an acknowledged request (the child exited with 0, applied, or 3, its
//!   model update deferred) is committed: its records are erased;
//! - every committed request is committed exactly once: the audit log
//!   numbers the requests 1, 2, ... without gaps, the model version is
//!   one more than training's per round that ran, and serving a request
//!   again after a kill that came after its commit is refused (already
//!   forgotten) and changes nothing;
//! - the clients equal retraining from scratch without every committed
//!   request's records, and the model equals retraining without those of
//!   the requests whose update ran (clients' data, seeds, histograms and
//!   the server's counts and clustering, bit for bit:
//!   `mufc_testkit::compare_clients`, `compare_model`).
//!
//! A quarter of the requests name one record of one client: the privacy
//! policy defers their model update (their records are erased at once),
//! until a later request of another client runs the round.
//!
//! The kinds of kill, the delays and the requests are drawn from a seeded
//! generator (set `MUFC_CRASH_SEED` to vary it); the test stops by itself
//! (every child is killed or waited for, and a child waiting at a fault
//! point aborts after 60 seconds if nobody kills it).
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use mufc::{ClientId, Federation};
use mufc_store::{AuditOutcome, FAULT_ENV, FaultPoint, RecordId, Store, WAIT_SUFFIX, WAITING};
use mufc_testkit::{compare_clients, compare_model};
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use seeding::{Dataset, PointId};

/// Clients, points a client, and points a client may lose.
const CLIENTS: usize = 6;
const POINTS: usize = 40;
const REMOVABLE: usize = 28;
/// Kills to reach (the issue asks for at least 50).
const KILLS: usize = 60;

/// The data: row `r` on client `c<r % CLIENTS>` with record id
/// `5000 + 7 r`.
fn data_csv(dir: &Path) -> std::path::PathBuf {
    common::clients_csv(dir, CLIENTS, POINTS, |r| 5000 + 7 * r as i64)
}

/// The requests: most name one or two records of each of two clients
/// (applied at once under the default policy of two updating clients), a
/// quarter one record of one client (its update deferred), drawn until
/// every client has lost [`REMOVABLE`] points.
fn requests(rng: &mut ChaCha8Rng, records: &BTreeMap<RecordId, ClientId>) -> Vec<Vec<RecordId>> {
    let mut per: BTreeMap<ClientId, Vec<RecordId>> = BTreeMap::new();
    for (r, &c) in records {
        per.entry(c).or_default().push(r.clone());
    }
    for v in per.values_mut() {
        v.shuffle(rng);
        v.truncate(REMOVABLE);
    }
    let mut out = Vec::new();
    loop {
        let open: Vec<ClientId> = per
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(c, _)| *c)
            .collect();
        if open.len() < 2 {
            return out;
        }
        if rng.random_range(0..4) == 0 {
            let one = *open.choose(rng).unwrap();
            out.push(vec![per.get_mut(&one).unwrap().pop().unwrap()]);
            continue;
        }
        let two: Vec<ClientId> = open.sample(rng, 2).copied().collect();
        let mut req = Vec::new();
        for c in two {
            let v = per.get_mut(&c).unwrap();
            for _ in 0..rng.random_range(1..=2) {
                if let Some(r) = v.pop() {
                    req.push(r);
                }
            }
        }
        out.push(req);
    }
}

/// How an attempt ends.
#[derive(Clone, Copy, Debug)]
enum Kill {
    /// Not killed: runs to its end.
    None,
    /// `SIGKILL` after this delay (the child may have finished by then).
    After(Duration),
    /// `SIGKILL` while the child waits at this point of the transaction.
    At(FaultPoint),
}

/// What became of a child.
struct Ended {
    /// Exited successfully: the request is acknowledged.
    acknowledged: bool,
    /// Ended by `SIGKILL`.
    killed: bool,
    stderr: String,
}

fn spawn(model: &str, request: &[RecordId], fault: Option<FaultPoint>) -> Child {
    let ids: Vec<String> = request.iter().map(ToString::to_string).collect();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mufc"));
    cmd.args([
        "forget",
        "--model",
        model,
        "--ids",
        &ids.join(","),
        "--json",
    ])
    .env_remove(FAULT_ENV)
    .stdin(Stdio::null())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    if let Some(at) = fault {
        cmd.env(FAULT_ENV, format!("{}{WAIT_SUFFIX}", at.name()));
    }
    cmd.spawn().unwrap()
}

/// Waits for `child`; a child that was not killed must have exited
/// successfully unless `may_fail`.
fn ended(mut child: Child, may_fail: bool) -> Ended {
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    if let Some(mut e) = child.stderr.take() {
        std::io::Read::read_to_string(&mut e, &mut stderr).unwrap();
    }
    let killed = status.signal() == Some(9);
    // 0: applied; 3: erased, the model update deferred.
    let acknowledged = matches!(status.code(), Some(0 | 3));
    assert!(
        acknowledged || killed || may_fail,
        "the child failed on its own ({status}): {stderr}"
    );
    Ended {
        acknowledged,
        killed,
        stderr,
    }
}

/// Runs one attempt of `request`; unless `may_fail`, a child that is not
/// killed must succeed.
fn attempt(model: &str, request: &[RecordId], kill: Kill, may_fail: bool) -> Ended {
    match kill {
        Kill::None => ended(spawn(model, request, None), may_fail),
        Kill::After(delay) => {
            let mut child = spawn(model, request, None);
            std::thread::sleep(delay);
            // Killing a child that has exited (not yet waited for) is
            // harmless: its status then says it exited.
            let _ = child.kill();
            ended(child, false)
        }
        Kill::At(at) => {
            let mut child = spawn(model, request, Some(at));
            let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
            let expected = format!("{WAITING}{}", at.name());
            let mut seen = Vec::new();
            // The child writes the line when it reaches the point, then
            // waits; a child that ends first closes the pipe.
            let reached = loop {
                match lines.next() {
                    Some(Ok(l)) if l == expected => break true,
                    Some(Ok(l)) => seen.push(l),
                    _ => break false,
                }
            };
            child.kill().unwrap();
            let mut e = ended(child, false);
            assert!(
                reached && e.killed,
                "the child did not stop at {at}: {}",
                seen.join("\n")
            );
            e.stderr = seen.join("\n");
            e
        }
    }
}

/// The federation retrained from scratch on `initial`'s data without the
/// `gone` records, with the store's resolved configuration.
fn retrained(
    initial: &BTreeMap<ClientId, Dataset>,
    place: &BTreeMap<RecordId, (ClientId, PointId)>,
    gone: &BTreeSet<RecordId>,
    config: &mufc::ValidConfig,
) -> Federation {
    let mut lost: BTreeMap<ClientId, Vec<PointId>> = BTreeMap::new();
    for r in gone {
        let (c, p) = place[r];
        lost.entry(c).or_default().push(p);
    }
    let rest = initial
        .iter()
        .map(|(c, d)| {
            let d = d
                .without(lost.get(c).map_or(&[][..], Vec::as_slice))
                .unwrap();
            (*c, d)
        })
        .collect();
    Federation::with_ids(rest, config).unwrap()
}

#[test]
fn forget_survives_sigkill_at_random_points_and_mid_transaction() {
    let seed: u64 = std::env::var("MUFC_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(14);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let data = data_csv(dir.path());
    let model = dir.path().join("model.mufc");
    let m = model.to_str().unwrap();
    let out = common::mufc(&[
        "fit",
        "--data",
        data.to_str().unwrap(),
        "--model",
        m,
        "--client-column",
        "0",
        "--id-column",
        "1",
        "--k",
        "3",
        "--gamma",
        "0.02",
        "--quiet",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // What training wrote: every client's data and where each record is.
    let store = Store::open(&model).unwrap();
    let config = store.config().clone();
    let initial: BTreeMap<ClientId, Dataset> = store
        .federation()
        .clients()
        .iter()
        .map(|c| (c.id(), c.data().clone()))
        .collect();
    let place: BTreeMap<RecordId, (ClientId, PointId)> = (0..CLIENTS * POINTS)
        .map(|r| {
            let id = RecordId::from(5000 + 7 * r as i64);
            let at = store.placement(&id).unwrap();
            (id, at)
        })
        .collect();
    drop(store);
    let owners = place.iter().map(|(r, (c, _))| (r.clone(), *c)).collect();
    let queue = requests(&mut rng, &owners);

    // The fault hook exists in debug builds only; a release test run kills
    // after random delays alone.
    let hook = cfg!(debug_assertions);
    // A first request run to its end gives the scale of the delays.
    let mut typical = Duration::from_millis(200);
    let mut applied: Vec<usize> = Vec::new();
    let mut gone: BTreeSet<RecordId> = BTreeSet::new();
    let (mut kills, mut mid_transaction, mut committed_then_killed) = (0, 0, 0);
    let mut next = 0;
    while next < queue.len() && (kills < KILLS || applied.len() < 10) {
        let request = &queue[next];
        let kill = match rng.random_range(0..10) {
            _ if next == 0 && applied.is_empty() && kills == 0 => Kill::None,
            0..=2 => Kill::None,
            3..=5 => Kill::After(typical.mul_f64(rng.random_range(0.0..1.2))),
            _ if hook => Kill::At(*FaultPoint::ALL.choose(&mut rng).unwrap()),
            _ => Kill::After(typical.mul_f64(rng.random_range(0.5..1.2))),
        };
        let start = Instant::now();
        let e = attempt(m, request, kill, false);
        if matches!(kill, Kill::None) {
            typical = start.elapsed();
        }
        if e.killed {
            kills += 1;
            if matches!(kill, Kill::At(_)) {
                mid_transaction += 1;
            }
        }

        // The store opens; the request is all there or not at all.
        let store = Store::open(&model)
            .unwrap_or_else(|err| panic!("after {kill:?} of request {next}: {err}"));
        let held = request.iter().filter(|r| store.record(r).is_some()).count();
        assert!(
            held == 0 || held == request.len(),
            "request {next} half-applied after {kill:?}: {held} of {} records held",
            request.len()
        );
        let committed = held == 0;
        assert!(
            committed || !e.acknowledged,
            "request {next} acknowledged but not applied: {}",
            e.stderr
        );
        assert!(
            !(committed && matches!(kill, Kill::At(_))),
            "request {next} committed although killed before its commit"
        );
        if committed {
            applied.push(next);
            gone.extend(request.iter().cloned());
            next += 1;
        }

        // Exactly once: the audit numbers the committed requests 1, 2,
        // ...; one model version per round that ran (a round's audit rows
        // carry the number of the request that ran it).
        let history = store.history().unwrap();
        let numbers: BTreeSet<u64> = history.iter().map(|a| a.request).collect();
        assert_eq!(
            numbers,
            (1..=applied.len() as u64).collect::<BTreeSet<_>>(),
            "audit: {history:?}"
        );
        let rounds: BTreeSet<u64> = history
            .iter()
            .filter(|a| a.outcome == AuditOutcome::Applied)
            .map(|a| a.request)
            .collect();
        assert_eq!(store.model_version(), 1 + rounds.len() as u64);
        // Request k of the store is `applied[k - 1]` of the queue; the
        // pending ones' records are erased, not yet out of the model.
        let waiting: BTreeSet<RecordId> = store
            .pending()
            .iter()
            .flat_map(|p| {
                queue[applied[usize::try_from(p.number).unwrap() - 1]]
                    .iter()
                    .cloned()
            })
            .collect();
        let in_model: BTreeSet<RecordId> = gone.difference(&waiting).cloned().collect();
        compare_clients(
            store.federation(),
            &retrained(&initial, &place, &gone, &config),
        )
        .unwrap_or_else(|d| panic!("clients after request {next} and {kill:?}: {d}"));
        compare_model(
            store.federation(),
            &retrained(&initial, &place, &in_model, &config),
        )
        .unwrap_or_else(|d| panic!("model after request {next} and {kill:?}: {d}"));
        drop(store);

        // Killed after its commit: serving it again is refused and
        // changes nothing.
        if committed && e.killed {
            committed_then_killed += 1;
            let version = Store::open(&model).unwrap().model_version();
            let again = attempt(m, request, Kill::None, true);
            assert!(!again.acknowledged);
            assert!(
                again.stderr.contains("already forgotten in request"),
                "{}",
                again.stderr
            );
            let store = Store::open(&model).unwrap();
            assert_eq!(store.model_version(), version);
        }
    }
    eprintln!(
        "seed {seed}: {kills} kills ({mid_transaction} mid-transaction), {} requests applied, \
         {committed_then_killed} killed after their commit",
        applied.len()
    );
    assert!(kills >= KILLS, "only {kills} kills");
    if hook {
        assert!(
            mid_transaction >= 10,
            "only {mid_transaction} mid-transaction kills"
        );
    }
}
