//! The parties' state saved and restored ([`PartiesSnapshot`]): for every
//! mask source and topology, parties restored from their bytes after each
//! request serve the next ones as the parties that never stopped, node
//! for node and report for report, and a snapshot that does not make a
//! federation is refused. The strategy is drawn from `testdata::rng` and
//! named in every failure.

use super::parties::{SOURCES, TOPOLOGIES, apply, assert_nodes_equal_retraining, draw_request};
use super::parties_plain::assert_same_plain;
use super::*;
use mufc::remote::{InProcess, PartiesSnapshot};
use mufc::{MufcError, PersistError, RemovalReport, RemovalRequest, ServerUpdate, StageTimes};

/// Two reports of one request, by restored parties and by the parties
/// that never stopped: equal but for the times measured and the server's
/// work (a restored server refits its exact K-means from its points, its
/// per-iteration traces not being saved, so its next incremental update
/// may recompute other points than the live one's; the model is the
/// same, [`assert_same_parties`]).
fn assert_same_report(a: &RemovalReport, b: &RemovalReport, what: &str) {
    let untimed = |r: &RemovalReport| RemovalReport {
        times: StageTimes::default(),
        server: ServerUpdate::Unchanged,
        ..r.clone()
    };
    assert_eq!(untimed(a), untimed(b), "{what}");
}

/// `parties` through the bytes of their snapshot.
pub(super) fn reloaded(parties: &InProcess, what: &str) -> InProcess {
    let snapshot = parties.snapshot().unwrap_or_else(|e| panic!("{what}: {e}"));
    let bytes = postcard::to_allocvec(&snapshot).unwrap();
    let read: PartiesSnapshot = postcard::from_bytes(&bytes).unwrap();
    InProcess::restore(read).unwrap_or_else(|e| panic!("{what}: restore: {e}"))
}

/// Every node of `a` equals `b`'s, and so do the clients, the waiting
/// ones and the pending requests.
fn assert_same_parties(a: &InProcess, b: &InProcess, what: &str) {
    for (x, y) in a.clients().iter().zip(b.clients()) {
        assert_eq!((x.id(), x.data().ids()), (y.id(), y.data().ids()), "{what}");
        assert_eq!(x.seeds(), y.seeds(), "{what}");
    }
    assert_eq!(a.waiting(), b.waiting(), "{what}");
    assert_eq!(a.pending(), b.pending(), "{what}");
    assert_eq!(a.withdrawal(), b.withdrawal(), "{what}");
    // A restored server's groups hold no client whose leave a round
    // applied (it holds nothing), where the running one's keep it.
    let gone = |p: &InProcess, c: &ClientId| {
        !p.waiting().contains(c) && p.clients()[at(*c)].data().is_empty()
    };
    let groups = |p: &InProcess| -> Vec<Vec<ClientId>> {
        (p.server().groups().iter())
            .map(|g| g.iter().copied().filter(|c| !gone(p, c)).collect())
            .collect()
    };
    assert_eq!(groups(a), groups(b), "{what}");
    assert_eq!(
        a.server().server().counts(),
        b.server().server().counts(),
        "{what}"
    );
    assert_eq!(
        a.server().server().centroids(),
        b.server().server().centroids(),
        "{what}"
    );
}

#[test]
fn parties_restored_after_every_request_serve_as_those_that_never_stopped() {
    let mut rng = testdata::rng("parties-saved");
    let (mut served, mut waited, mut whole) = (0, 0, 0);
    for (s, masks) in SOURCES.iter().enumerate() {
        for topology in TOPOLOGIES {
            let mix = Mixture {
                clients: rng.random_range(6..=8),
                per_client: rng.random_range(15..=25),
                ..Mixture::SMALL
            };
            let seed = rng.random_range(0..1000);
            let min_updating = rng.random_range(1..=2);
            let mut what = format!(
                "{:?}, {topology:?}, seed {seed}, min_updating_clients {min_updating}",
                masks()
            );
            let data = with_ids(&gaussian_clients(&format!("saved-{s}-{seed}"), mix));
            let config = FederationConfig::new(2)
                .client_k(2)
                .channel(Channel::scma(masks()))
                .topology(topology)
                .min_updating_clients(min_updating)
                .min_clients(2)
                .seed(seed)
                .validate()
                .unwrap();
            let mut live = InProcess::train(data.clone(), &config).unwrap();
            let mut saved = reloaded(&live, &what);
            assert_same_parties(&saved, &live, &format!("{what}: training"));
            let mut rest = data;
            let mut whole_left = true;
            for _ in 0..3 {
                let Some(request) = draw_request(&mut rng, &live, &mut whole_left, &mut what)
                else {
                    continue;
                };
                let ours = live
                    .remove(&request)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let again =
                    (saved.remove(&request)).unwrap_or_else(|e| panic!("{what}: restored: {e}"));
                assert_same_report(&again, &ours, &what);
                assert_same_parties(&saved, &live, &what);
                apply(&mut rest, &request);
                served += 1;
                whole += request.clients_removed().len();
                waited += usize::from(!live.pending().is_empty());
                saved = reloaded(&saved, &what);
                assert_same_parties(&saved, &live, &format!("{what}: reloaded"));
            }
            live.flush().unwrap();
            saved.flush().unwrap();
            assert_same_parties(&saved, &live, &format!("{what}: flushed"));
            if saved.withdrawal().is_none() {
                assert_nodes_equal_retraining(&saved, &rest, &format!("{what}: flushed"));
            }
        }
    }
    assert!(
        served >= 18 && waited >= 2 && whole >= 3,
        "{served} requests, {waited} waited, {whole} whole clients"
    );
}

/// A withdrawn model is saved and restored withdrawn: later requests are
/// served by the clients alone, with no round.
#[test]
fn a_withdrawn_model_is_restored_withdrawn() {
    let data = with_ids(&gaussian_clients("saved-withdrawn", Mixture::SMALL));
    let config = FederationConfig::new(2)
        .min_clients(3)
        .min_updating_clients(1)
        .seed(2)
        .validate()
        .unwrap();
    let mut live = InProcess::train(data, &config).unwrap();
    let gone = RemovalRequest::clients(vec![ClientId(0), ClientId(1)]);
    assert!(live.remove(&gone).unwrap().outcome.is_withdrawn());
    let mut saved = reloaded(&live, "withdrawn");
    assert_same_parties(&saved, &live, "withdrawn");
    assert!(saved.server().is_withdrawn());
    let later = RemovalRequest::points(ClientId(2), vec![PointId(0)]);
    let rounds = saved.server().rounds();
    assert_same_report(
        &saved.remove(&later).unwrap(),
        &live.remove(&later).unwrap(),
        "later",
    );
    assert_eq!(saved.server().rounds(), rounds);
    assert!(saved.last_rounds().is_empty());
}

/// A snapshot whose parts do not make the parties is refused: a roster
/// out of order, missing a client or drawing other groups, and counts
/// that are not the clients' sum (the federation's own check).
#[test]
fn a_snapshot_that_does_not_make_the_parties_is_refused() {
    let mix = Mixture {
        clients: 6,
        ..Mixture::SMALL
    };
    let data = with_ids(&gaussian_clients("saved-refused", mix));
    let config = FederationConfig::new(2)
        .topology(mufc::Topology::Groups { size: 3 })
        .seed(9)
        .validate()
        .unwrap();
    let live = InProcess::train(data, &config).unwrap();
    let good = live.snapshot().unwrap();
    let bytes = postcard::to_allocvec(&good).unwrap();
    // The snapshot's fields, in order: the server's part, the roster
    // (a length, then the ids), the clients, the requests, the groups.
    let roster: Vec<ClientId> = good.roster().to_vec();
    let mut cases: Vec<(Vec<ClientId>, &str)> = vec![
        (
            roster.iter().rev().copied().collect(),
            "a roster out of order",
        ),
        (roster[1..].to_vec(), "a roster without a client"),
        (
            roster
                .iter()
                .copied()
                .chain([ClientId(98), ClientId(99)])
                .collect(),
            "a roster drawing other groups",
        ),
        (Vec::new(), "an empty roster"),
    ];
    for (bad, what) in cases.drain(..) {
        let mut snapshot = good.clone();
        let layout = snapshot.layout();
        let encoded =
            postcard::to_allocvec(&(snapshot.server(), &bad, snapshot.clients(), 0u64, layout));
        snapshot = postcard::from_bytes(&encoded.unwrap()).unwrap();
        let err = InProcess::restore(snapshot).unwrap_err();
        assert!(
            matches!(err, MufcError::Persist(PersistError::Corrupt { .. })),
            "{what}: {err:?}"
        );
    }
    // A client's points changed: its histogram no longer adds up to the
    // stored counts.
    let mut clients = good.clients().to_vec();
    let (id, points, _) = &clients[0];
    let fewer = points.without(&points.ids()[..3]).unwrap();
    clients[0] = (*id, fewer, clients[0].2.clone());
    let encoded =
        postcard::to_allocvec(&(good.server(), good.roster(), &clients, 0u64, good.layout()));
    let encoded = encoded.unwrap();
    let tampered: PartiesSnapshot = postcard::from_bytes(&encoded).unwrap();
    let err = InProcess::restore(tampered).unwrap_err();
    assert!(
        matches!(err, MufcError::Persistence(_)),
        "tampered points: {err:?}"
    );
    // Groups that are not the roster's, or none where the topology has
    // some.
    let roster = good.roster();
    let halves = mufc::Layout::from_groups(vec![roster[..3].to_vec(), roster[3..].to_vec()], None);
    let odd: Vec<ClientId> = roster.iter().copied().step_by(2).collect();
    let shuffled = mufc::Layout::from_groups(
        vec![
            odd.clone(),
            roster
                .iter()
                .copied()
                .filter(|c| !odd.contains(c))
                .collect(),
        ],
        None,
    );
    let short = mufc::Layout::from_groups(vec![roster[1..].to_vec()], None);
    for (layout, what) in [
        (
            Some(shuffled.unwrap()),
            "groups of the roster other than the saved ones",
        ),
        (
            Some(short.unwrap()),
            "groups without a client of the roster",
        ),
        (None, "no groups"),
    ] {
        let encoded =
            postcard::to_allocvec(&(good.server(), roster, good.clients(), 0u64, &layout));
        let snapshot: PartiesSnapshot = postcard::from_bytes(&encoded.unwrap()).unwrap();
        let err = InProcess::restore(snapshot).unwrap_err();
        assert!(
            matches!(err, MufcError::Persist(PersistError::Corrupt { .. })),
            "{what}: {err:?}"
        );
    }
    assert_eq!(good.layout(), halves.ok().as_ref(), "the topology's groups");
    // The good bytes restore.
    let read: PartiesSnapshot = postcard::from_bytes(&bytes).unwrap();
    assert!(InProcess::restore(read).is_ok());
}

/// The plain mode (Algorithm 5) restores too: the server's points are
/// rebuilt from the clients' centroids (in client order: the same points
/// as the running server's, which keeps them in the order they came), and
/// later requests are served as by the parties that never stopped.
#[test]
fn plain_parties_restore_and_serve_alike() {
    let mut rng = testdata::rng("parties-saved-plain");
    let data = with_ids(&gaussian_clients("saved-plain", Mixture::SMALL));
    let config = FederationConfig::new(2)
        .channel(Channel::Plain)
        .min_clients(2)
        .seed(4)
        .validate()
        .unwrap();
    let mut live = InProcess::train(data, &config).unwrap();
    let mut saved = reloaded(&live, "plain");
    let mut what = "plain".to_string();
    let mut whole_left = true;
    for _ in 0..3 {
        let Some(request) = draw_request(&mut rng, &live, &mut whole_left, &mut what) else {
            continue;
        };
        let ours = live.remove(&request).unwrap();
        assert_same_report(&saved.remove(&request).unwrap(), &ours, &what);
        assert_same_parties(&saved, &live, &what);
        assert_same_plain(saved.server().server(), live.server().server(), &what);
        saved = reloaded(&saved, &what);
    }
}

/// Masks are never reused: parties restored from an older snapshot serve
/// the same request again, in a round of the same number over the same
/// inputs, and every message the server receives differs from the first
/// time (a mask used twice would give the server the difference of two
/// inputs; here, with equal inputs, equal bytes). Recorded with
/// `record_messages`; without it nothing is kept.
#[test]
fn a_restored_older_snapshot_masks_the_same_round_afresh() {
    let data = with_ids(&gaussian_clients("saved-fresh", Mixture::SMALL));
    for masks in SOURCES {
        let what = format!("{:?}", masks());
        let config = |record: bool| {
            FederationConfig::new(2)
                .channel(Channel::scma(masks()))
                .run(mufc::RunOptions::new().record_messages(record))
                .seed(7)
                .validate()
                .unwrap()
        };
        let older = InProcess::train(data.clone(), &config(true))
            .unwrap()
            .snapshot()
            .unwrap();
        let request = RemovalRequest::points(ClientId(0), vec![PointId(3)])
            .with_points(ClientId(1), vec![PointId(4)]);
        let mut runs = Vec::new();
        for _ in 0..2 {
            let mut p = InProcess::restore(older.clone()).unwrap();
            p.remove(&request).unwrap();
            let [round] = p.last_rounds() else {
                panic!("{what}: one round");
            };
            runs.push((round.report.round, round.received.clone(), p));
        }
        let (first, second) = (&runs[0], &runs[1]);
        assert_eq!(first.0, second.0, "{what}: the same round number");
        assert!(first.1.len() >= 4, "{what}: {} messages", first.1.len());
        assert_eq!(first.1.len(), second.1.len(), "{what}");
        for ((a, x), (b, y)) in first.1.iter().zip(&second.1) {
            assert_eq!(a, b, "{what}");
            assert_ne!(x, y, "{what}: client {a}'s message repeats");
        }
        assert_same_parties(&first.2, &second.2, &what);
        let mut parties = InProcess::train(data.clone(), &config(false)).unwrap();
        parties.remove(&request).unwrap();
        assert!(parties.last_rounds()[0].received.is_empty(), "{what}");
    }
}
