//! Groups and trees (issue 16): the root's model is flat MUFC's, bit for
//! bit, for every sketch scheme and masking; an unlearned tree is the
//! tree retrained without the points; a removal involves only the
//! affected groups; and the server sees each group's sum, never a part of
//! one (docs/threat-model.md §11).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};

use field::Field;
use field::Fp64;
use mufc::{
    Channel, ClientId, Federation, FederationConfig, Layout, Masks, MufcError, NodeId,
    RemovalOutcome, RemovalRequest, Scma, SecAggOptions, Topology, ValidConfig,
};
use mufc_testkit::{
    compare, compare_clients, compare_tree, compare_tree_model, numbered, without_request,
};
use num_bigint::BigUint;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};
use syndrome_agg::wire::{DEFAULT_MAX_FRAME, Frame};
use syndrome_agg::{CountPolicy, LinearParams, MaskedSketch, RawSketch, Sketch, SketchParams};

#[path = "groups/saved.rs"]
mod saved;

const MIX: Mixture = Mixture {
    clients: 12,
    ..Mixture::SMALL
};

fn data() -> Vec<(ClientId, Dataset)> {
    numbered(gaussian_clients("groups", MIX))
}

fn config(channel: Channel, topology: Topology) -> ValidConfig {
    FederationConfig::new(3)
        .client_k(2)
        .channel(channel)
        .topology(topology)
        .seed(5)
        .validate()
        .unwrap()
}

/// Every channel the template runs over: each sketch scheme, each
/// masking (SecAgg without dropouts: with dropouts the aggregate holds
/// the included clients only, in every topology).
fn channels() -> Vec<(&'static str, Channel)> {
    vec![
        ("auto dealer", Channel::scma(Masks::Dealer)),
        (
            "field pairwise",
            Channel::Scma(Scma::field(Masks::Pairwise)),
        ),
        ("wide dealer", Channel::Scma(Scma::wide(Masks::Dealer))),
        (
            "partitioned pairwise",
            Channel::Scma(Scma::partitioned(Masks::Pairwise)),
        ),
        (
            "field secagg",
            Channel::Scma(Scma::field(Masks::SecAgg(SecAggOptions::new()))),
        ),
    ]
}

fn topologies() -> [Topology; 3] {
    [
        Topology::Groups { size: 3 },
        Topology::Tree {
            group_size: 3,
            fan_out: 2,
        },
        Topology::Tree {
            group_size: 4,
            fan_out: 3,
        },
    ]
}

/// A random request: points of two or three clients, sometimes a client
/// whole.
fn random_request(fed: &Federation, rng: &mut StdRng) -> RemovalRequest {
    let ids = fed.client_ids();
    let mut picked = BTreeSet::new();
    while picked.len() < 2.min(ids.len()) + usize::from(rng.random_bool(0.5)) {
        picked.insert(ids[rng.random_range(0..ids.len())]);
        if picked.len() == ids.len() {
            break;
        }
    }
    let mut req = RemovalRequest::new();
    for (i, c) in picked.into_iter().enumerate() {
        let client = fed.client(c).unwrap();
        let n = client.data().len();
        if i == 0 && rng.random_bool(0.2) {
            req = req.with_clients(vec![c]);
        } else {
            let take = rng.random_range(1..=3.min(n));
            let mut pts: Vec<PointId> = client.data().ids().to_vec();
            for j in 0..take {
                let k = rng.random_range(j..n);
                pts.swap(j, k);
            }
            req = req.with_points(c, pts[..take].to_vec());
        }
    }
    req
}

/// Every node's counts are the sum of its children's, a group's the sum
/// of its members' histograms.
fn check_nodes(fed: &Federation) {
    let layout = fed.layout().unwrap();
    for (g, members) in layout.groups().iter().enumerate() {
        let mut sum: BTreeMap<BigUint, u64> = BTreeMap::new();
        for c in members {
            for (b, n) in fed.client(*c).unwrap().histogram() {
                *sum.entry(b.clone()).or_default() += n;
            }
        }
        assert_eq!(fed.node(NodeId(g)).unwrap().counts(), &sum, "group {g}");
    }
    for n in layout.groups().len()..layout.nodes() {
        let mut sum: BTreeMap<BigUint, u64> = BTreeMap::new();
        for c in layout.children(NodeId(n)) {
            for (b, k) in fed.node(c).unwrap().counts() {
                *sum.entry(b.clone()).or_default() += k;
            }
        }
        assert_eq!(fed.node(NodeId(n)).unwrap().counts(), &sum, "node {n}");
    }
}

#[test]
fn the_root_is_flat_mufc_bit_for_bit_for_every_scheme_masking_and_topology() {
    let data = data();
    let mut rng = StdRng::seed_from_u64(16);
    for (name, channel) in channels() {
        let flat_config = config(channel.clone(), Topology::Flat);
        let flat = Federation::with_ids(data.clone(), &flat_config).unwrap();
        for topology in topologies() {
            let what = format!("{name}, {topology:?}");
            let mut tree =
                Federation::with_ids(data.clone(), &config(channel.clone(), topology)).unwrap();
            let mut flat = flat.clone();
            compare(&tree, &flat)
                .map_err(|e| format!("{what}, training: {e}"))
                .unwrap();
            check_nodes(&tree);
            for step in 0..3 {
                let req = random_request(&tree, &mut rng);
                match tree.remove(&req) {
                    // No group can take a group's clients left below the
                    // minimum: the tree's model is withdrawn, flat's is
                    // not; nothing more to compare.
                    Ok(r) if r.outcome.is_withdrawn() => {
                        assert!(tree.server().model().is_none(), "{what}");
                        break;
                    }
                    // A request that names a lone client of a group waits
                    // (the policy holds per group, docs/threat-model.md
                    // §11) where flat may apply it: flushed on both.
                    other => {
                        other.unwrap();
                        tree.flush().unwrap();
                        flat.remove(&req).unwrap();
                        flat.flush().unwrap();
                    }
                }
                compare(&tree, &flat)
                    .map_err(|e| format!("{what}, removal {step} ({req:?}): {e}"))
                    .unwrap();
                check_nodes(&tree);
            }
        }
    }
}

#[test]
fn an_unlearned_tree_is_the_tree_retrained_without_the_points() {
    let mut rng = StdRng::seed_from_u64(17);
    for (name, channel) in channels().into_iter().take(3) {
        for topology in topologies() {
            let mut now = data();
            let config = config(channel.clone(), topology);
            let mut fed = Federation::with_ids(now.clone(), &config).unwrap();
            for step in 0..4 {
                let req = random_request(&fed, &mut rng);
                match fed.remove(&req) {
                    // Withdrawn: tested in `withdrawal`.
                    Ok(r) if r.outcome.is_withdrawn() => break,
                    Ok(_) => {
                        fed.flush().unwrap();
                        now = without_request(&now, &req);
                    }
                    Err(e) => panic!("{name}: {e}"),
                }
                // The groups of training less the clients that left, where
                // a group left below the minimum merged into another
                // (issue 29): every group empty or of at least the
                // minimum, every client present in one.
                let layout = fed.layout().unwrap().clone();
                assert_eq!(layout.clients(), config_clients(&now));
                let min = fed.config().min_clients();
                assert!(
                    layout
                        .groups()
                        .iter()
                        .all(|g| g.is_empty() || g.len() >= min)
                );
                let retrained = Federation::with_layout(now.clone(), fed.config(), layout).unwrap();
                compare_tree(&fed, &retrained)
                    .map_err(|e| format!("{name}, {topology:?}, removal {step}: {e}"))
                    .unwrap();
            }
        }
    }
}

fn config_clients(v: &[(ClientId, Dataset)]) -> Vec<ClientId> {
    v.iter().map(|(c, _)| *c).collect()
}

#[test]
fn a_removal_involves_only_its_group_and_the_nodes_on_its_path() {
    let topology = Topology::Tree {
        group_size: 3,
        fan_out: 2,
    };
    let mut fed =
        Federation::with_ids(data(), &config(Channel::scma(Masks::Dealer), topology)).unwrap();
    let layout = fed.layout().unwrap().clone();
    assert_eq!(layout.groups().len(), 4);
    let before: Vec<_> = (0..layout.nodes())
        .map(|n| fed.node(NodeId(n)).unwrap().clone())
        .collect();
    let rounds = fed.rounds();
    // Two clients of group 1.
    let (a, b) = (layout.groups()[1][0], layout.groups()[1][2]);
    let all = data();
    let pt = |c: ClientId| vec![all.iter().find(|(id, _)| *id == c).unwrap().1.id(0)];
    let report = fed
        .remove(&RemovalRequest::points(a, pt(a)).with_points(b, pt(b)))
        .unwrap();
    assert_eq!(fed.last_involvement().unwrap().groups, vec![1]);
    assert_eq!(fed.last_involvement().unwrap().clients, 3);
    assert_eq!(
        fed.last_involvement().unwrap().nodes,
        layout.path(NodeId(1)).len()
    );
    assert_eq!(
        fed.last_involvement().unwrap().bytes,
        3 * report.bytes_per_client
    );
    // One masked round, in group 1 only.
    assert_eq!(fed.rounds(), rounds + 1);
    let path: BTreeSet<NodeId> = layout.path(NodeId(1)).into_iter().collect();
    for (n, old) in before.iter().enumerate() {
        let node = NodeId(n);
        let same = fed.node(node).unwrap().counts() == old.counts();
        assert_eq!(same, !path.contains(&node), "{node}");
    }
    // The flat federation involves every client in the same removal.
    let mut flat = Federation::with_ids(
        data(),
        &config(Channel::scma(Masks::Dealer), Topology::Flat),
    )
    .unwrap();
    flat.remove(&RemovalRequest::points(a, pt(a)).with_points(b, pt(b)))
        .unwrap();
    assert_eq!(flat.last_involvement().unwrap().clients, 12);
    assert_eq!(flat.last_involvement().unwrap().nodes, 1);
    // One message a client with dealt masks: its masked sketch, once its
    // sealed seed came.
    assert_eq!(fed.last_involvement().unwrap().messages, 3);
    assert_eq!(flat.last_involvement().unwrap().messages, 12);

    // With SecAgg every client sends a message at every step of the
    // protocol, in its group's run or in the run of all twelve.
    let secagg = Channel::scma(Masks::SecAgg(SecAggOptions::new()));
    let messages = |topology| {
        let mut f = Federation::with_ids(data(), &config(secagg.clone(), topology)).unwrap();
        f.remove(&RemovalRequest::points(a, pt(a)).with_points(b, pt(b)))
            .unwrap();
        let who = f.last_involvement().unwrap().clone();
        (who.clients, who.messages)
    };
    let (grouped, flat) = (messages(topology), messages(Topology::Flat));
    assert_eq!((grouped.0, flat.0), (3, 12));
    assert!(grouped.1 >= 4 * 3 && grouped.1 % 3 == 0, "{grouped:?}");
    assert_eq!(flat.1, grouped.1 * 4, "{flat:?} against {grouped:?}");
}

#[test]
fn a_group_below_the_minimum_merges_into_one_that_meets_it() {
    let topology = Topology::Groups { size: 3 };
    let grouped = config(Channel::scma(Masks::Dealer), topology);
    let trained = Federation::with_ids(data(), &grouped).unwrap();
    let group = trained.layout().unwrap().groups()[0].clone();
    assert_eq!(group.len(), 3);
    // One of three leaves: the two left would be an aggregate of two, so
    // they move to the smallest group of at least three (group 1) when
    // the round runs. Alone, the leave waits for the lone-update policy
    // (the two clients that move count as changed there: enough, but the
    // leave's own group holds one change); the flush runs it.
    let mut fed = trained;
    let report = fed
        .remove(&RemovalRequest::clients(vec![group[0]]))
        .unwrap();
    assert!(report.outcome.is_deferred(), "{:?}", report.outcome);
    let mut fed = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
    fed.flush().unwrap().unwrap();
    assert!(fed.withdrawal().is_none());
    let layout = fed.layout().unwrap().clone();
    assert!(layout.groups()[0].is_empty());
    assert_eq!(layout.groups()[1].len(), 5);
    let now: Vec<(ClientId, Dataset)> =
        data().into_iter().filter(|(c, _)| *c != group[0]).collect();
    let retrained = Federation::with_layout(now, fed.config(), layout).unwrap();
    compare_tree(&fed, &retrained).unwrap();
    check_nodes(&fed);
    assert!(fed.node(NodeId(0)).unwrap().counts().is_empty());
}

/// Two groups, each left with two at once: neither can take the other's
/// clients, so the points are erased, no group decodes again, and the
/// model is withdrawn; a group whose every client leaves aggregates
/// nothing; explicit groups too small, or not naming every client once,
/// are refused.
#[test]
fn groups_that_none_can_take_withdraw_the_model_and_bad_layouts_are_refused() {
    let topology = Topology::Groups { size: 3 };
    let grouped = config(Channel::scma(Masks::Dealer), topology);
    let trained = Federation::with_ids(data(), &grouped).unwrap();
    let group = trained.layout().unwrap().groups()[0].clone();
    let halves = Layout::from_groups(
        vec![
            (0..6).map(ClientId).collect(),
            (6..12).map(ClientId).collect(),
        ],
        None,
    )
    .unwrap();
    let mut fed = Federation::with_layout(data(), &grouped, halves).unwrap();
    let leaving: Vec<ClientId> = [0, 1, 2, 3, 6, 7, 8, 9].map(ClientId).to_vec();
    let report = fed
        .remove(&RemovalRequest::clients(leaving.clone()))
        .unwrap();
    let w = fed.withdrawal().unwrap().clone();
    assert_eq!(report.outcome, RemovalOutcome::Withdrawn(w.clone()));
    assert_eq!((w.group, w.clients, w.min_clients), (Some(0), 2, 3));
    assert!(fed.client(leaving[0]).is_none());
    assert!(fed.layout().is_none() && fed.server().model().is_none());
    assert_eq!(
        Federation::from_bytes(&fed.to_bytes().unwrap())
            .unwrap()
            .withdrawal(),
        Some(&w)
    );
    // The whole group may leave: its aggregate becomes empty (each member
    // sends its last change, minus its histogram).
    let mut fed = trained;
    fed.remove(&RemovalRequest::clients(group.clone())).unwrap();
    assert_eq!(fed.last_involvement().unwrap().clients, group.len());
    assert!(fed.node(NodeId(0)).unwrap().counts().is_empty());
    check_nodes(&fed);
    // Groups, explicit: too small, or not naming every client once.
    let config = config(Channel::scma(Masks::Dealer), Topology::Flat);
    let small = Layout::from_groups(
        vec![
            (0..2).map(ClientId).collect(),
            (2..12).map(ClientId).collect(),
        ],
        None,
    )
    .unwrap();
    assert!(matches!(
        Federation::with_layout(data(), &config, small),
        Err(MufcError::GroupTooSmall {
            group: 0,
            clients: 2,
            ..
        })
    ));
    let missing = Layout::from_groups(vec![(0..11).map(ClientId).collect()], None).unwrap();
    assert!(matches!(
        Federation::with_layout(data(), &config, missing),
        Err(MufcError::InvalidLayout(_))
    ));
}

/// The parameters of the clients' messages (the root's: capacity k L).
fn params(fed: &Federation) -> syndrome_agg::ValidSketchParams<Fp64> {
    let info = fed.fit_report().sketch.clone().unwrap();
    SketchParams::new(info.capacity, fed.quantizer().unwrap().num_bins().clone())
        .with_extra(fed.config().channel().as_scma().unwrap().extra())
        .with_counts(CountPolicy::unsigned(fed.config().max_points().unwrap()))
        .validate(Fp64::proth())
        .unwrap()
}

#[test]
fn the_server_learns_each_groups_sum_and_no_part_of_one() {
    let f = Fp64::proth();
    for masks in [Masks::Dealer, Masks::Pairwise] {
        let config = FederationConfig::new(3)
            .client_k(2)
            .channel(Channel::Scma(Scma::field(masks)))
            .topology(Topology::Tree {
                group_size: 3,
                fan_out: 2,
            })
            .run(mufc::RunOptions::new().record_messages(true))
            .validate()
            .unwrap();
        let fed = Federation::with_ids(data(), &config).unwrap();
        let p = params(&fed);
        // The clients' masked sketches, and with dealt masks each group
        // round's correction from the dealer (the pseudo-client
        // u64::MAX), which the server receives too.
        let mut received: BTreeMap<ClientId, MaskedSketch<Sketch<Fp64>>> = BTreeMap::new();
        let mut corrections: Vec<MaskedSketch<Sketch<Fp64>>> = Vec::new();
        for (id, bytes) in fed.last_messages().unwrap() {
            let frame = Frame::parse(bytes, DEFAULT_MAX_FRAME).unwrap();
            let m = MaskedSketch::from_frame(&frame, &p).unwrap();
            if id.0 == u64::MAX {
                corrections.push(m);
            } else {
                received.insert(*id, m);
            }
        }
        assert_eq!(received.len(), 12);
        let dealt = matches!(masks, Masks::Dealer);
        assert_eq!(corrections.len(), if dealt { 4 } else { 0 });
        // The correction of a group: the one of its round.
        let correction_of = |g: &[ClientId]| {
            corrections
                .iter()
                .find(|c| c.context() == received[&g[0]].context())
        };
        let plain = |ids: &[ClientId]| {
            let mut sum: BTreeMap<BigUint, u64> = BTreeMap::new();
            for c in ids {
                for (b, n) in fed.client(*c).unwrap().histogram() {
                    *sum.entry(b.clone()).or_default() += n;
                }
            }
            Sketch::<Fp64>::from_unsigned(&p, sum).unwrap()
        };
        let add = |sum: &mut Vec<_>, m: &MaskedSketch<Sketch<Fp64>>| {
            for (s, x) in sum.iter_mut().zip(m.elements().iter()) {
                *s = f.add(s, x);
            }
        };
        let masked_sum = |ids: &[ClientId], with: &[&MaskedSketch<Sketch<Fp64>>]| {
            let mut sum = vec![f.zero(); p.num_elements()];
            for c in ids {
                add(&mut sum, &received[c]);
            }
            for c in with {
                add(&mut sum, c);
            }
            sum
        };
        let layout = fed.layout().unwrap();
        // A group's masked messages (and its round's correction) sum to
        // its plain sketch: the server decodes each group's sum.
        for g in layout.groups() {
            let with: Vec<_> = correction_of(g).into_iter().collect();
            assert_eq!(dealt, !with.is_empty());
            assert_eq!(masked_sum(g, &with), *plain(g).elements(), "{masks:?}");
        }
        // The attacker: the server sums any set of messages that is not
        // a union of whole groups, with any of the corrections, drawn at
        // random; the masks never cancel.
        let mut rng = StdRng::seed_from_u64(11);
        let all = fed.client_ids();
        for _ in 0..200 {
            let set: Vec<ClientId> = all
                .iter()
                .copied()
                .filter(|_| rng.random_bool(0.5))
                .collect();
            let whole_groups = layout
                .groups()
                .iter()
                .all(|g| g.iter().all(|c| set.contains(c)) || !g.iter().any(|c| set.contains(c)));
            if set.is_empty() || whole_groups {
                continue;
            }
            let with: Vec<_> = corrections
                .iter()
                .filter(|_| rng.random_bool(0.5))
                .collect();
            assert_ne!(
                masked_sum(&set, &with),
                *plain(&set).elements(),
                "{masks:?}: {set:?} with {} corrections",
                with.len()
            );
        }
    }
}

#[test]
fn requests_wait_per_group_and_the_groups_ready_go_ahead() {
    let topology = Topology::Groups { size: 3 };
    let config = config(Channel::scma(Masks::Dealer), topology);
    let mut fed = Federation::with_ids(data(), &config).unwrap();
    let groups = fed.layout().unwrap().groups().to_vec();
    let first = |c: ClientId| vec![fed.client(c).unwrap().data().id(0)];
    let (a0, a1, b0) = (groups[0][0], groups[0][1], groups[1][0]);
    let (pa0, pa1, pb0) = (first(a0), first(a1), first(b0));
    // One client in each of two groups: both wait (each group's
    // difference would reveal its lone client's change).
    let r1 = fed
        .remove(&RemovalRequest::points(a0, pa0.clone()).with_points(b0, pb0.clone()))
        .unwrap();
    assert!(r1.outcome.is_deferred());
    // A second client of group 0: group 0 goes ahead, group 1 waits on.
    let r2 = fed
        .remove(&RemovalRequest::points(a1, pa1.clone()))
        .unwrap();
    assert!(!r2.outcome.is_deferred());
    assert_eq!(r2.requests, vec![1, 2]);
    assert_eq!(fed.last_involvement().unwrap().groups, vec![0]);
    assert_eq!(r2.updated_clients, vec![a0, a1]);
    assert_eq!(fed.pending().len(), 1);
    assert_eq!(fed.pending()[0].number, 1);
    assert_eq!(
        fed.pending()[0].request,
        RemovalRequest::points(b0, pb0.clone())
    );
    // The model: exactly the tree retrained without group 0's two points;
    // the clients: without group 1's too (erased at once, its update
    // waits).
    let req = RemovalRequest::points(a0, pa0).with_points(a1, pa1);
    let now = without_request(&data(), &req);
    let layout = fed.layout().unwrap().clone();
    let retrained = Federation::with_layout(now.clone(), fed.config(), layout.clone()).unwrap();
    compare_tree_model(&fed, &retrained).unwrap();
    let erased = without_request(&now, &RemovalRequest::points(b0, pb0.clone()));
    let held = Federation::with_layout(erased, fed.config(), layout).unwrap();
    compare_clients(&fed, &held).unwrap();
    // The flush applies group 1's lone part, with a warning.
    let r3 = fed.flush().unwrap().unwrap();
    assert_eq!(fed.last_involvement().unwrap().groups, vec![1]);
    assert!(r3.lone_update && r3.privacy_warning.is_some());
    assert!(fed.pending().is_empty());
    let now = without_request(&now, &RemovalRequest::points(b0, pb0));
    let retrained =
        Federation::with_layout(now, fed.config(), fed.layout().unwrap().clone()).unwrap();
    compare_tree(&fed, &retrained).unwrap();
}
