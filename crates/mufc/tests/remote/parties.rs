//! The parties driven in one process ([`InProcess`], which
//! [`Federation`] wraps) against retraining. For every mask source
//! (dealt, pairwise, SecAgg) and every topology (flat, groups, a tree),
//! training and a random sequence of removal requests (points, seeds,
//! whole clients, several groups at once), under the lone-update policy
//! or without it, leave every node's model equal, bit for bit, to
//! training from scratch on the points that remain, once nothing waits.
//! The same parties across processes are compared with these in
//! `crates/mufc-net/tests/parties.rs`. The strategy is drawn from
//! `testdata::rng` and named in every failure.

use super::*;
use mufc::remote::InProcess;
use mufc::{DecodeKind, Layout, NodeId, RemovalOutcome, RemovalReport, RemovalRequest, Topology};

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

/// Every node of the parties' model equals retraining on `rest` (the
/// points that remain; a client with none has left) bit for bit: in the
/// groups the parties hold, without the clients that left (a group that
/// lost every client is gone, and then the root alone is compared). The
/// retraining uses SecAgg with no dropout: masks cancel in the sum, so
/// the mask source cannot change the model.
pub(super) fn assert_nodes_equal_retraining(
    parties: &InProcess,
    rest: &[(ClientId, Dataset)],
    what: &str,
) {
    let kept: Vec<(ClientId, Dataset)> = (rest.iter())
        .filter(|(_, d)| !d.is_empty())
        .cloned()
        .collect();
    let config = (parties.server().setup().config().clone().into_builder())
        .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
        .validate()
        .unwrap();
    let Some(layout) = parties.server().setup().layout() else {
        return assert_equals_retraining(parties.server(), rest, what);
    };
    let holds = |c: &ClientId| kept.iter().any(|(k, _)| k == c);
    let groups: Vec<Vec<ClientId>> = (layout.groups().iter())
        .map(|g| g.iter().copied().filter(holds).collect::<Vec<_>>())
        .filter(|g| !g.is_empty())
        .collect();
    let every_group = groups.len() == layout.groups().len();
    let smaller = Layout::from_groups(groups, layout.fan_out()).unwrap();
    let retrained = InProcess::train_with_layout(kept, &config, smaller.clone())
        .unwrap_or_else(|e| panic!("{what}: retraining: {e}"));
    let nodes: Vec<NodeId> = if every_group {
        (0..smaller.nodes()).map(NodeId).collect()
    } else {
        vec![layout.root()]
    };
    for n in nodes {
        let theirs = if every_group { n } else { smaller.root() };
        let (mine, theirs) = (
            parties.server().node(n).unwrap(),
            retrained.server().node(theirs).unwrap(),
        );
        assert_eq!(mine.counts(), theirs.counts(), "{what}: node {n:?}");
        assert_eq!(
            centroid_bits(mine),
            centroid_bits(theirs),
            "{what}: node {n:?}"
        );
    }
}

/// The lone-update policy, from outside: when clients wait, some group
/// with waiting clients has fewer than the policy's minimum of them (a
/// request waits whole until every group it names is ready; were every
/// such group ready, their rounds would have run).
fn assert_nothing_waits_that_could_run(parties: &InProcess, what: &str) {
    let waiting = parties.waiting();
    if waiting.is_empty() || parties.withdrawal().is_some() {
        return;
    }
    let config = parties.server().setup().config();
    let held = parties.server().groups().iter().any(|g| {
        let updating = g.iter().filter(|c| waiting.contains(c)).count();
        updating > 0 && !config.updates_enough(g.len(), updating)
    });
    assert!(
        held,
        "{what}: {waiting:?} wait, every group of theirs is ready"
    );
}

/// What a report says of its rounds holds together: a request served by
/// a round decoded something and its clients sent bytes; one served
/// without a round (waiting, withdrawn) did neither.
pub(super) fn assert_report_holds(report: &RemovalReport, parties: &InProcess, what: &str) {
    let ran = report.decode != DecodeKind::Skipped;
    assert_eq!(ran, report.bytes_per_client > 0, "{what}: {report:?}");
    assert_eq!(ran, !parties.last_rounds().is_empty(), "{what}: {report:?}");
    assert_eq!(
        report.outcome == RemovalOutcome::Applied && ran,
        parties.last_involvement().is_some(),
        "{what}: {report:?}"
    );
}

/// Serves `request` with `parties`, which must accept it; the report.
pub(super) fn serve(
    parties: &mut InProcess,
    request: &RemovalRequest,
    what: &str,
) -> RemovalReport {
    let report = (parties.remove(request)).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_report_holds(&report, parties, what);
    report
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
fn the_parties_equal_retraining_for_every_mask_source_and_topology() {
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
            // With 2, a request naming one client of a group waits (the
            // lone-update policy) until another brings enough.
            let config = FederationConfig::new(2)
                .client_k(2)
                .channel(Channel::scma(masks()))
                .topology(topology)
                .min_updating_clients(min_updating)
                .min_clients(min_clients)
                .seed(seed)
                .validate()
                .unwrap();
            let mut parties = InProcess::train(data.clone(), &config).unwrap();
            assert_nodes_equal_retraining(&parties, &data, &format!("{what}: training"));
            let mut rest = data;
            let mut whole_left = true;
            for _ in 0..3 {
                // A request naming several groups waits whole until each
                // has enough changed clients.
                let Some(request) = draw_request(&mut rng, &parties, &mut whole_left, &mut what)
                else {
                    continue;
                };
                let report = serve(&mut parties, &request, &what);
                apply(&mut rest, &request);
                served += 1;
                whole += request.clients_removed().len();
                // A client removed whole may leave a group below
                // `min_clients`: the model is withdrawn, and later
                // requests are served with no round.
                assert_eq!(
                    report.outcome.is_withdrawn(),
                    parties.withdrawal().is_some() && report.decode == DecodeKind::Skipped,
                    "{what}"
                );
                withdrawn += usize::from(parties.withdrawal().is_some());
                waited += usize::from(!parties.waiting().is_empty());
                assert_nothing_waits_that_could_run(&parties, &what);
                if parties.waiting().is_empty() && parties.withdrawal().is_none() {
                    assert_nodes_equal_retraining(&parties, &rest, &what);
                }
            }
            if parties.withdrawal().is_none() {
                let flushed = (parties.flush()).unwrap_or_else(|e| panic!("{what}: flush: {e}"));
                if let Some(report) = flushed {
                    assert_report_holds(&report, &parties, &what);
                }
                assert!(parties.waiting().is_empty(), "{what}: flushed");
                assert_nodes_equal_retraining(&parties, &rest, &format!("{what}; flushed"));
            }
        }
    }
    // The draw serves most requests, whole clients among them, and some
    // wait for the lone-update policy: the comparison cannot pass by
    // testing nothing (a withdrawal, which the draw may bring, has a test
    // of its own in `parties_rounds.rs`).
    assert!(
        served >= 18 && whole >= 3 && waited >= 2,
        "{served} requests, {whole} whole clients, {waited} waited, {withdrawn} withdrawn"
    );
}

/// A client removed whole has left: naming it again, whole or by a point,
/// is refused as an unknown client, and changes nothing.
#[test]
fn a_client_removed_whole_is_unknown_to_later_requests() {
    let data = with_ids(&gaussian_clients("parties-left", Mixture::SMALL));
    let config = FederationConfig::new(2)
        .min_updating_clients(1)
        .seed(4)
        .validate()
        .unwrap();
    let mut parties = InProcess::train(data.clone(), &config).unwrap();
    let gone = RemovalRequest::clients(vec![ClientId(3)]);
    serve(&mut parties, &gone, "leave");
    let rounds = parties.server().rounds();
    for again in [gone, RemovalRequest::points(ClientId(3), vec![PointId(0)])] {
        let err = parties.remove(&again).unwrap_err();
        assert_eq!(err, MufcError::UnknownClient(ClientId(3)), "{again:?}");
        assert_eq!(parties.server().rounds(), rounds, "{again:?}");
        assert!(parties.waiting().is_empty(), "{again:?}");
    }
    let mut rest = data;
    apply(&mut rest, &RemovalRequest::clients(vec![ClientId(3)]));
    assert_nodes_equal_retraining(&parties, &rest, "left");
}

/// A request naming what a pending request named (a point, or a client
/// that left with a request whose round waits) is refused as already
/// pending, and changes nothing; a new one is accepted, and the round
/// that applies them both lists both.
#[test]
fn a_request_naming_what_waits_is_refused() {
    let data = with_ids(&gaussian_clients("parties-pending", Mixture::SMALL));
    let config = FederationConfig::new(2)
        .min_updating_clients(3)
        .seed(6)
        .validate()
        .unwrap();
    let mut parties = InProcess::train(data.clone(), &config).unwrap();
    let first = RemovalRequest::points(ClientId(1), vec![PointId(2), PointId(4)])
        .with_clients(vec![ClientId(3)]);
    assert!(serve(&mut parties, &first, "first").outcome.is_deferred());
    let pending = parties.pending().to_vec();
    assert_eq!(pending.len(), 1);
    let conflicts = [
        RemovalRequest::points(ClientId(1), vec![PointId(7), PointId(4)]),
        RemovalRequest::clients(vec![ClientId(3)]),
        RemovalRequest::points(ClientId(3), vec![PointId(0)]),
        RemovalRequest::points(ClientId(0), vec![PointId(1)]).with_clients(vec![ClientId(3)]),
    ];
    for again in conflicts {
        let err = parties.remove(&again).unwrap_err();
        assert!(matches!(err, MufcError::AlreadyPending { .. }), "{again:?}");
        assert_eq!(parties.pending(), pending, "{again:?}");
        assert!(
            parties.clients()[0].data().contains(PointId(1)),
            "{again:?}"
        );
        assert!(
            parties.clients()[1].data().contains(PointId(7)),
            "{again:?}"
        );
    }
    let second = RemovalRequest::points(ClientId(0), vec![PointId(1)]);
    let report = serve(&mut parties, &second, "second");
    assert_eq!(report.requests, [1, 2]);
    assert!(parties.pending().is_empty());
    let mut rest = data;
    apply(&mut rest, &first);
    apply(&mut rest, &second);
    assert_nodes_equal_retraining(&parties, &rest, "both applied");
}

/// A request the clients cannot serve is refused with the error that
/// names what is wrong, and changes no party: no round runs and every
/// client keeps every point.
#[test]
fn a_request_the_clients_cannot_serve_changes_no_party() {
    let data = with_ids(&gaussian_clients("parties-refused", Mixture::SMALL));
    let config = FederationConfig::new(2).seed(3).validate().unwrap();
    let mut parties = InProcess::train(data.clone(), &config).unwrap();
    let rounds = parties.server().rounds();
    let held = parties.clients()[1].data().ids()[0];
    type Expected = fn(&MufcError) -> bool;
    let cases: [(RemovalRequest, &str, Expected); 5] = [
        (RemovalRequest::new(), "empty", |e| {
            matches!(e, MufcError::EmptyRequest)
        }),
        (
            RemovalRequest::points(ClientId(1), vec![held]).with_clients(vec![ClientId(9)]),
            "an unknown client",
            |e| matches!(e, MufcError::UnknownClient(ClientId(9))),
        ),
        (
            RemovalRequest::points(ClientId(0), vec![PointId(0)])
                .with_points(ClientId(1), vec![PointId(10_000)]),
            "an unknown point",
            |e| matches!(e, MufcError::UnknownPoint { .. }),
        ),
        (
            RemovalRequest::points(ClientId(1), vec![held, held]),
            "a point named twice",
            |e| matches!(e, MufcError::RepeatedPoint { .. }),
        ),
        (
            RemovalRequest::points(ClientId(1), vec![held]).with_clients(vec![ClientId(1)]),
            "a client named twice",
            |e| matches!(e, MufcError::RepeatedClient(ClientId(1))),
        ),
    ];
    for (request, what, expected) in cases {
        let err = parties.remove(&request).unwrap_err();
        assert!(expected(&err), "{what}: {err:?}");
        assert_eq!(parties.server().rounds(), rounds, "{what}");
        for (c, (_, d)) in parties.clients().iter().zip(&data) {
            assert_eq!(c.data().ids(), d.ids(), "{what}: client {}", c.id());
        }
    }
}

/// A policy minimum above a group's size: the group's round runs once
/// every member changed (it could never have more), with the requests
/// waiting before, flat (the whole federation a group) and with groups;
/// the round leaves the model equal to retraining.
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
        let mut parties = InProcess::train(data.clone(), &config).unwrap();
        let mut rest = data;
        for c in 0..3 {
            let request = RemovalRequest::points(ClientId(c), vec![PointId(c + 1)]);
            let what = format!("{topology:?}, client {c}");
            let report = serve(&mut parties, &request, &what);
            apply(&mut rest, &request);
            // The third member completes the group: one round.
            assert_eq!(parties.last_rounds().len(), usize::from(c == 2), "{what}");
            assert_eq!(report.outcome.is_deferred(), c < 2, "{what}");
            let asked: Vec<ClientId> = (0..=c).map(ClientId).collect();
            let waiting: Vec<ClientId> = if c < 2 { asked } else { Vec::new() };
            assert_eq!(parties.waiting(), waiting, "{what}");
        }
        assert_nodes_equal_retraining(&parties, &rest, &format!("{topology:?}"));
    }
}
