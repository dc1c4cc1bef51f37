//! The same parties in one process and in the federation run in one
//! process (issue 27: "the same parties pass the same tests in process
//! and across processes"). [`InProcess`] drives the server's, the
//! clients' and the dealer's parties, moving only their bytes; for every
//! mask source (dealt, pairwise, SecAgg) and every topology (flat,
//! groups, a tree), training and a random sequence of removal requests
//! (points, seeds, whole clients, several groups at once), under the
//! lone-update policy or without it, leave every node's model equal, bit
//! for bit, to [`Federation`] serving the same requests (the same
//! requests waiting in both), and the root's to retraining on the points
//! that remain once nothing waits. The
//! strategy is drawn from `testdata::rng` and named in every failure.

use super::*;
use mufc::remote::InProcess;
use mufc::{
    DecodeKind, Involvement, RemovalOutcome, RemovalReport, RemovalRequest, ServerUpdate,
    StageTimes, Topology,
};

pub(super) const SOURCES: [fn() -> Masks; 3] = [
    || Masks::Dealer,
    || Masks::Pairwise,
    || Masks::SecAgg(SecAggOptions::new()),
];

pub(super) const TOPOLOGIES: [Topology; 3] = [
    Topology::Flat,
    Topology::Groups { size: 3 },
    Topology::Tree {
        group_size: 3,
        fan_out: 2,
    },
];

/// Every node's counts and centroids, `parties`' against `fed`'s.
pub(super) fn assert_same_nodes(parties: &InProcess, fed: &Federation, what: &str) {
    groups::assert_same_nodes(parties.server(), fed, what);
}

/// The parties' report of a request, `ours`, against the federation's in
/// one process, `theirs`: what was served (the requests, points, clients,
/// the model's clients and size, the dropouts, the privacy verdict) is
/// the same; how is the parties' own. Their rounds differ where the
/// parties do better: a client that leaves sends its last change, so its
/// group's round is a change round with smaller messages (the federation
/// runs a whole round), and with groups the root updates after each
/// group's round (the federation's once after them all); the times are
/// measured. A round that ran decoded something and sent bytes.
pub(super) fn assert_same_report(ours: &RemovalReport, theirs: &RemovalReport, what: &str) {
    let served = |r: &RemovalReport| RemovalReport {
        times: StageTimes::default(),
        decode: DecodeKind::Skipped,
        server: ServerUpdate::Unchanged,
        bytes_per_client: 0,
        ..r.clone()
    };
    assert_eq!(served(ours), served(theirs), "{what}");
    let ran = |r: &RemovalReport| r.decode != DecodeKind::Skipped;
    assert_eq!(ran(ours), ran(theirs), "{what}");
    assert_eq!(ran(ours), ours.bytes_per_client > 0, "{what}");
}

/// Who took part in the rounds of the request `theirs` reports (when it
/// was applied): the same groups and models in both, and while no client
/// has left whole, the same clients, messages and bytes. A client that
/// left stays in its group's ring with nothing to send (its leave is not
/// announced to the others, issue 29, and a client refuses a ring that
/// omits one of its last sum), where the federation's rounds go without
/// it.
fn assert_same_involvement(
    parties: &InProcess,
    fed: &Federation,
    theirs: &RemovalReport,
    what: &str,
) {
    if theirs.outcome != RemovalOutcome::Applied {
        assert!(parties.last_involvement().is_none(), "{what}");
        return;
    }
    let (ours, theirs) = (parties.last_involvement(), fed.last_involvement());
    let (Some(ours), Some(theirs)) = (ours.clone(), theirs) else {
        panic!("{what}: involvement {ours:?}, in one process {theirs:?}");
    };
    assert_eq!(
        (&ours.groups, ours.nodes),
        (&theirs.groups, theirs.nodes),
        "{what}"
    );
    if parties.clients().iter().all(|c| !c.data().is_empty()) {
        let counts = |i: &Involvement| (i.clients, i.messages, i.bytes);
        assert_eq!(counts(&ours), counts(theirs), "{what}");
    }
}

/// Serves `request` with the parties and with the federation in one
/// process: the reports agree ([`assert_same_report`]), and so does every
/// node's model. The federation's report.
pub(super) fn serve_both(
    parties: &mut InProcess,
    fed: &mut Federation,
    request: &RemovalRequest,
    what: &str,
) -> RemovalReport {
    let theirs = (fed.remove(request)).unwrap_or_else(|e| panic!("{what}: in one process: {e}"));
    let ours = (parties.remove(request)).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_same_report(&ours, &theirs, what);
    assert_same_nodes(parties, fed, what);
    theirs
}

/// The parties of `data` under `config`, trained, and the federation in
/// one process trained on the same data under the configuration the
/// parties resolved.
pub(super) fn trained_both(
    data: &[(ClientId, Dataset)],
    config: &ValidConfig,
) -> (InProcess, Federation) {
    let parties = InProcess::train(data.to_vec(), config).unwrap();
    let fed = Federation::with_ids(data.to_vec(), parties.server().setup().config()).unwrap();
    (parties, fed)
}

/// A random request: one to three clients (of any groups), each losing
/// one to three points (a seed among them with even odds), or, once per
/// case, every point (named whole); named in `what`.
pub(super) fn draw_request(
    rng: &mut ChaCha8Rng,
    parties: &InProcess,
    whole_left: &mut bool,
    what: &mut String,
) -> Option<RemovalRequest> {
    let live: Vec<&RemoteClient> = (parties.clients().iter())
        .filter(|c| c.data().len() > 3)
        .collect();
    if live.is_empty() {
        return None;
    }
    let n = rng.random_range(1..=3.min(live.len()));
    let mut request = RemovalRequest::new();
    let mut pool = live;
    for _ in 0..n {
        let c = pool.swap_remove(rng.random_range(0..pool.len()));
        if *whole_left && rng.random_bool(0.25) {
            *whole_left = false;
            request = request.with_clients(vec![c.id()]);
            continue;
        }
        let held = c.data().ids();
        let mut ids: BTreeSet<PointId> = (0..rng.random_range(1..=3))
            .map(|_| held[rng.random_range(0..held.len())])
            .collect();
        if rng.random_bool(0.5) && !c.seeds().is_empty() {
            ids.insert(c.seeds()[rng.random_range(0..c.seeds().len())]);
        }
        request = request.with_points(c.id(), ids.into_iter().collect());
    }
    what.push_str(&format!("; request {request:?}"));
    (!request.is_empty()).then_some(request)
}

/// `data` without what `request` names (a client named whole keeps no
/// point).
pub(super) fn apply(data: &mut [(ClientId, Dataset)], request: &RemovalRequest) {
    for (c, ids) in request.point_entries() {
        let d = &mut data[at(*c)].1;
        *d = d.without(ids).unwrap();
    }
    for c in request.clients_removed() {
        let d = &mut data[at(*c)].1;
        *d = d.without(d.ids()).unwrap();
    }
}

#[test]
fn the_parties_in_one_process_are_the_federation_for_every_mask_source_and_topology() {
    let mut rng = testdata::rng("parties-in-process");
    let (mut served, mut whole, mut waited, mut withdrawn) = (0, 0, 0, 0);
    for (s, masks) in SOURCES.iter().enumerate() {
        for topology in TOPOLOGIES {
            let mix = Mixture {
                clients: rng.random_range(6..=8),
                per_client: rng.random_range(15..=25),
                ..Mixture::SMALL
            };
            let seed = rng.random_range(0..1000);
            let min_updating = rng.random_range(1..=2);
            // With 3, a client of a group of three that leaves whole
            // withdraws the model.
            let min_clients = rng.random_range(2..=3);
            let mut what = format!(
                "{:?}, {topology:?}, seed {seed}, min_updating_clients {min_updating}, \
                 min_clients {min_clients}",
                masks()
            );
            let data = with_ids(&gaussian_clients(&format!("parties-{s}-{seed}"), mix));
            // With 2, a request naming one client of a group waits in
            // both (the lone-update policy) until another brings enough.
            let config = FederationConfig::new(2)
                .client_k(2)
                .channel(Channel::scma(masks()))
                .topology(topology)
                .min_updating_clients(min_updating)
                .min_clients(min_clients)
                .seed(seed)
                .validate()
                .unwrap();
            let (mut parties, mut fed) = trained_both(&data, &config);
            assert_same_nodes(&parties, &fed, &format!("{what}: training"));
            let mut rest = data;
            let mut whole_left = true;
            for _ in 0..3 {
                // A request naming several groups waits whole until each
                // has enough changed clients, in both.
                let Some(request) = draw_request(&mut rng, &parties, &mut whole_left, &mut what)
                else {
                    continue;
                };
                let report = serve_both(&mut parties, &mut fed, &request, &what);
                assert_same_involvement(&parties, &fed, &report, &what);
                apply(&mut rest, &request);
                served += 1;
                whole += request.clients_removed().len();
                // A client removed whole may leave a group below
                // `min_clients`: both withdraw the model, alike, and
                // serve later requests with no round.
                assert_eq!(parties.withdrawal(), fed.withdrawal(), "{what}");
                withdrawn += usize::from(fed.withdrawal().is_some());
                assert_same_nodes(&parties, &fed, &what);
                assert_eq!(parties.waiting(), fed.pending_clients(), "{what}");
                waited += usize::from(!parties.waiting().is_empty());
                if parties.waiting().is_empty() && fed.withdrawal().is_none() {
                    assert_equals_retraining(parties.server(), &rest, &what);
                }
            }
            if fed.withdrawal().is_none() {
                let report = (fed.flush()).unwrap_or_else(|e| panic!("{what}: flush: {e}"));
                let ours = (parties.flush()).unwrap_or_else(|e| panic!("{what}: flush: {e}"));
                match (ours, report) {
                    (Some(ours), Some(report)) => assert_same_report(&ours, &report, &what),
                    (ours, report) => assert_eq!(ours.is_some(), report.is_some(), "{what}"),
                }
                assert_eq!(parties.history().len(), fed.history().len(), "{what}");
                assert_same_nodes(&parties, &fed, &format!("{what}; flushed"));
                assert_equals_retraining(parties.server(), &rest, &what);
            }
        }
    }
    // The draw serves most requests, whole clients among them, and some
    // wait for the lone-update policy: the comparison cannot pass by
    // testing nothing (a withdrawal, which the draw may bring, has a test
    // of its own below).
    assert!(
        served >= 18 && whole >= 3 && waited >= 2,
        "{served} requests, {whole} whole clients, {waited} waited, {withdrawn} withdrawn"
    );
}

/// A client removed whole has left: naming it again, whole or by a point,
/// is refused as the federation in one process refuses it, and changes
/// nothing.
#[test]
fn a_client_removed_whole_is_unknown_to_later_requests() {
    let data = with_ids(&gaussian_clients("parties-left", Mixture::SMALL));
    let config = FederationConfig::new(2)
        .min_updating_clients(1)
        .seed(4)
        .validate()
        .unwrap();
    let (mut parties, mut fed) = trained_both(&data, &config);
    let gone = RemovalRequest::clients(vec![ClientId(3)]);
    parties.remove(&gone).unwrap();
    fed.remove(&gone).unwrap();
    let rounds = parties.server().rounds();
    for again in [gone, RemovalRequest::points(ClientId(3), vec![PointId(0)])] {
        let err = parties.remove(&again).unwrap_err();
        assert_eq!(err, fed.clone().remove(&again).unwrap_err(), "{again:?}");
        assert_eq!(err, MufcError::UnknownClient(ClientId(3)));
        assert_eq!(parties.server().rounds(), rounds, "{again:?}");
        assert!(parties.waiting().is_empty(), "{again:?}");
    }
}

/// A request naming what a pending request named (a point, or a client
/// that left with a request whose round waits) is refused as the
/// federation in one process refuses it, and changes nothing; a new one
/// is accepted, and the round that applies them both lists both.
#[test]
fn a_request_naming_what_waits_is_refused_as_in_the_federation() {
    let data = with_ids(&gaussian_clients("parties-pending", Mixture::SMALL));
    let config = FederationConfig::new(2)
        .min_updating_clients(3)
        .seed(6)
        .validate()
        .unwrap();
    let (mut parties, mut fed) = trained_both(&data, &config);
    let first = RemovalRequest::points(ClientId(1), vec![PointId(2), PointId(4)])
        .with_clients(vec![ClientId(3)]);
    assert_same_report(
        &parties.remove(&first).unwrap(),
        &fed.remove(&first).unwrap(),
        "first",
    );
    assert_eq!(parties.pending(), fed.pending());
    let conflicts = [
        RemovalRequest::points(ClientId(1), vec![PointId(7), PointId(4)]),
        RemovalRequest::clients(vec![ClientId(3)]),
        RemovalRequest::points(ClientId(3), vec![PointId(0)]),
        RemovalRequest::points(ClientId(0), vec![PointId(1)]).with_clients(vec![ClientId(3)]),
    ];
    for again in conflicts {
        let err = parties.remove(&again).unwrap_err();
        assert_eq!(err, fed.clone().remove(&again).unwrap_err(), "{again:?}");
        assert!(matches!(err, MufcError::AlreadyPending { .. }), "{again:?}");
        assert_eq!(parties.pending(), fed.pending(), "{again:?}");
        assert!(
            parties.clients()[0].data().contains(PointId(1)),
            "{again:?}"
        );
    }
    let second = RemovalRequest::points(ClientId(0), vec![PointId(1)]);
    let report = parties.remove(&second).unwrap();
    assert_same_report(&report, &fed.remove(&second).unwrap(), "second");
    assert_eq!(report.requests, [1, 2]);
    assert!(parties.pending().is_empty());
    assert_same_nodes(&parties, &fed, "both applied");
}

#[test]
fn a_request_the_clients_cannot_serve_changes_no_party() {
    let data = with_ids(&gaussian_clients("parties-refused", Mixture::SMALL));
    let config = FederationConfig::new(2).seed(3).validate().unwrap();
    let (mut parties, fed) = trained_both(&data, &config);
    let rounds = parties.server().rounds();
    let held = parties.clients()[1].data().ids()[0];
    let cases = [
        (RemovalRequest::new(), "empty"),
        (
            RemovalRequest::points(ClientId(1), vec![held]).with_clients(vec![ClientId(9)]),
            "an unknown client",
        ),
        (
            RemovalRequest::points(ClientId(0), vec![PointId(0)])
                .with_points(ClientId(1), vec![PointId(10_000)]),
            "an unknown point",
        ),
        (
            RemovalRequest::points(ClientId(1), vec![held, held]),
            "a point named twice",
        ),
        (
            RemovalRequest::points(ClientId(1), vec![held]).with_clients(vec![ClientId(1)]),
            "a client named twice",
        ),
    ];
    for (request, what) in cases {
        let err = parties.remove(&request).unwrap_err();
        // The same refusal as the federation in one process gives.
        assert_eq!(
            err,
            fed.clone().remove(&request).unwrap_err(),
            "{what}: {err}"
        );
        assert_eq!(parties.server().rounds(), rounds, "{what}");
        for (c, d) in parties.clients().iter().zip(fed.clients()) {
            assert_eq!(c.data().ids(), d.data().ids(), "{what}: client {}", c.id());
        }
    }
}

/// A policy minimum above a group's size: the group's round runs once
/// every member changed (it could never have more), with the same
/// requests waiting before, in the federation in one process and with the
/// parties, flat (the whole federation a group) and with groups.
#[test]
fn a_group_smaller_than_the_policy_updates_once_every_member_changed() {
    for (topology, clients) in [(Topology::Flat, 3), (Topology::Groups { size: 3 }, 6)] {
        let mix = Mixture {
            clients,
            ..Mixture::SMALL
        };
        let data = with_ids(&gaussian_clients("parties-small-group", mix));
        let config = FederationConfig::new(2)
            .topology(topology)
            .min_updating_clients(4)
            .seed(8)
            .validate()
            .unwrap();
        let (mut parties, mut fed) = trained_both(&data, &config);
        for c in 0..3 {
            let request = RemovalRequest::points(ClientId(c), vec![PointId(c + 1)]);
            let what = format!("{topology:?}, client {c}");
            let ours = parties.remove(&request).unwrap();
            let report = fed.remove(&request).unwrap();
            assert_same_report(&ours, &report, &what);
            // The third member completes the group: one round, in both.
            assert_eq!(parties.last_rounds().len(), usize::from(c == 2), "{what}");
            assert_eq!(report.outcome.is_deferred(), c < 2, "{what}");
            assert_eq!(parties.waiting(), fed.pending_clients(), "{what}");
            assert_same_nodes(&parties, &fed, &what);
        }
    }
}
