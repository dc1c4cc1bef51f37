//! A split whose rounds do not both commit (issue 29): the group that
//! grew full is split, then the round of either half fails. The state
//! left is saved and loaded as it is, the halves are left regrouped, and
//! the next flush runs both (whatever the lone-update policy, which
//! allowed the split) so that every node's model equals retraining in the
//! new layout.
#![allow(clippy::unwrap_used)]

use rand::RngExt;
use seeding::Dataset;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

use crate::aggregation::{masked_elements, masked_message};
use crate::change_round_tests::{MaskedInputs, subset_sum};
use crate::test_channels::Sketch;
use crate::{
    AdditionRequest, ClientId, Federation, FederationConfig, Masking, MufcError, NodeId, Topology,
    ValidConfig,
};

const MIX: Mixture = Mixture {
    clients: 9,
    ..Mixture::SMALL
};

fn config() -> ValidConfig {
    FederationConfig::new(3)
        .gamma(0.05)
        .min_clients(2)
        .min_updating_clients(1)
        .topology(Topology::Tree {
            group_size: 2,
            fan_out: 2,
        })
        .max_points((MIX.clients * MIX.per_client) as u64)
        .validate()
        .unwrap()
}

/// Every node's counts and centroids in `fed` equal `other`'s.
fn same_nodes(fed: &Federation, other: &Federation, what: &str) {
    let layout = fed.layout().unwrap();
    assert_eq!(Some(layout), other.layout(), "{what}");
    for n in 0..layout.nodes() {
        let (a, b) = (fed.node(NodeId(n)).unwrap(), other.node(NodeId(n)).unwrap());
        assert_eq!(a.counts(), b.counts(), "{what}: node {n}");
        assert_eq!(a.centroids(), b.centroids(), "{what}: node {n}");
    }
}

#[test]
fn a_split_whose_half_failed_is_finished_by_the_next_flush_and_survives_a_reload() {
    let data: Vec<(ClientId, Dataset)> = (gaussian_clients("regroup-failed", MIX).into_iter())
        .enumerate()
        .map(|(i, d)| (ClientId(i as u64), d))
        .collect();
    for failing in 0..2 {
        let what = format!("the split's round {failing} fails");
        let mut fed = Federation::with_ids(data[..4].to_vec(), &config()).unwrap();
        // Groups [0 1] [2 3]; 4 and 6 join the first, 5 and 7 the second.
        // At four, the first is full, but no split is safe (the server
        // would learn 4's histogram: `RemoteServer::split_moving`).
        for (c, d) in &data[4..8] {
            fed.add(&AdditionRequest::new_client(*c, d.clone()))
                .unwrap();
        }
        assert_eq!(fed.layout().unwrap().groups().len(), 2, "{what}");
        // 8 joins the first: 4, 6 and 8 move, and a round fails.
        fed.parties_mut().injected.fail_next = true;
        fed.parties_mut().injected.pass_first = failing;
        let (c, d) = &data[8];
        let err = fed
            .add(&AdditionRequest::new_client(*c, d.clone()))
            .unwrap_err();
        assert!(matches!(err, MufcError::Remote(_)), "{what}: {err}");
        let layout = fed.layout().unwrap().clone();
        assert_eq!(layout.groups()[0], [ClientId(0), ClientId(1)], "{what}");
        assert_eq!(layout.groups()[2], [4, 6, 8].map(ClientId), "{what}");
        let gone = Default::default();
        assert!(
            !fed.parties().server().regrouped(&gone).is_empty(),
            "{what}"
        );
        // The two halves' rounds commit together: neither did, and the
        // root holds every client but the new one, once, as retraining
        // without it (the join waits; the halves' models are behind).
        let before = Federation::with_ids(data[..8].to_vec(), fed.config()).unwrap();
        assert_eq!(fed.server().counts(), before.server().counts(), "{what}");
        let retrained = Federation::with_layout(data.clone(), fed.config(), layout).unwrap();
        let mut fed = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
        assert!(fed.flush().unwrap().is_some(), "{what}");
        assert!(fed.parties().server().regrouped(&gone).is_empty(), "{what}");
        same_nodes(&fed, &retrained, &what);
    }
}

#[test]
fn a_merge_whose_round_failed_is_finished_by_the_next_flush_and_survives_a_reload() {
    let data: Vec<(ClientId, Dataset)> = (gaussian_clients("regroup-merge", MIX).into_iter())
        .take(6)
        .enumerate()
        .map(|(i, d)| (ClientId(i as u64), d))
        .collect();
    let mut fed = Federation::with_ids(data.clone(), &config()).unwrap();
    // Groups [0 1] [2 3] [4 5]: client 0 leaves, client 1 moves to the
    // first group of at least two, and the merge's round fails.
    fed.parties_mut().injected.fail_next = true;
    let err = fed
        .remove(&crate::RemovalRequest::clients(vec![ClientId(0)]))
        .unwrap_err();
    assert!(matches!(err, MufcError::Remote(_)), "{err}");
    let layout = fed.parties().server().layout().unwrap().clone();
    assert_eq!(layout.groups()[1], [1, 2, 3].map(ClientId));
    let gone = std::collections::BTreeSet::from([ClientId(0)]);
    assert_eq!(fed.parties().server().regrouped(&gone), [0, 1]);
    // Client 1's data is in group 0's sum still, once.
    let before = Federation::with_ids(data.clone(), fed.config()).unwrap();
    assert_eq!(fed.server().counts(), before.server().counts());
    let mut fed = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
    assert!(fed.flush().unwrap().is_some());
    let layout = fed.layout().unwrap().clone();
    assert!(layout.groups()[0].is_empty(), "{layout:?}");
    let retrained = Federation::with_layout(data[1..].to_vec(), fed.config(), layout).unwrap();
    same_nodes(&fed, &retrained, "merged after a failed round");
}

/// The messages of a driven round as a curious server holds them: each
/// client's masked elements and the dealer's correction (the
/// pseudo-client `u64::MAX`), tagged with the round so that two rounds'
/// messages stay apart.
fn masked_of(round: &crate::remote::DrivenRound, tag: u64) -> MaskedInputs {
    (round.received.iter())
        .filter_map(|(c, b)| {
            let elements = masked_elements(&masked_message(*c, b)?)?;
            Some((ClientId(c.0.wrapping_add(tag)), elements))
        })
        .collect()
}

/// The server of a split's two rounds (dealt masks) sees every message of
/// both halves and tries to learn less than a half's sum: it sums random
/// sets of messages of one half, or of both that are not both halves
/// whole. A twin federation in the same state runs the same split under
/// masks of its own: where masks cancel, the two sums are the same plain
/// sum. They are over each half and over unions of whole halves (a
/// positive control), and differ in every element over every other set
/// drawn.
#[test]
fn a_curious_server_learns_each_half_of_a_split_and_no_part_of_one() {
    let data: Vec<(ClientId, Dataset)> = (gaussian_clients("regroup-curious", MIX).into_iter())
        .enumerate()
        .map(|(i, d)| (ClientId(i as u64), d))
        .collect();
    let config = (config().into_builder())
        .channel(crate::test_channels::channel(Sketch::Wide, Masking::Dealer))
        .run(crate::RunOptions::new().record_messages(true))
        .validate()
        .unwrap();
    let mut fed = Federation::with_ids(data[..4].to_vec(), &config).unwrap();
    for (c, d) in &data[4..8] {
        fed.add(&AdditionRequest::new_client(*c, d.clone()))
            .unwrap();
    }
    // The fifth join splits the first group: its two halves run together.
    // A twin federation does the same under masks of its own.
    let mut twin = fed.clone();
    let (c, d) = &data[8];
    for f in [&mut fed, &mut twin] {
        f.add(&AdditionRequest::new_client(*c, d.clone())).unwrap();
    }
    let halves_of = |f: &Federation| {
        let rounds = f.parties().last_rounds();
        let groups: Vec<Option<usize>> = rounds.iter().map(|r| r.report.group).collect();
        assert_eq!(groups, [Some(0), Some(2)]);
        // The second round's messages tagged apart (ids + 2^32).
        [masked_of(&rounds[0], 0), masked_of(&rounds[1], 1 << 32)]
    };
    let (halves, twins) = (halves_of(&fed), halves_of(&twin));
    let all: MaskedInputs = halves.iter().flatten().cloned().collect();
    let ids = |m: &MaskedInputs| m.iter().map(|(c, _)| *c).collect::<Vec<_>>();
    for (half, twin) in halves.iter().zip(&twins) {
        // Each half's clients (two, then three) and the dealer's
        // correction, masked apart from the twin's; over all of them the
        // masks cancel: the half's sum is its histograms' sketch, the
        // twin's.
        assert!(half.len() == 3 || half.len() == 4);
        assert_ne!(half, twin);
        let sum = subset_sum(half, &ids(half));
        assert!(sum.iter().any(|&x| x != 0));
        assert_eq!(sum, subset_sum(twin, &ids(twin)));
    }
    // The server draws sets of messages and sums them, hoping the masks
    // cancel and leave the plain sum of those clients' sketches: that sum
    // would be the same in the twin, whose clients hold the same
    // histograms. Over a union of whole halves it is (a sum the server
    // may decode); over any other set no element is.
    let twin_all: MaskedInputs = twins.iter().flatten().cloned().collect();
    let mut rng = testdata::rng("regroup-curious-server");
    let everyone = ids(&all);
    let (mut drawn, mut unions) = (0, 0);
    while drawn < 300 {
        let subset: Vec<ClientId> = (everyone.iter().copied())
            .filter(|_| rng.random_bool(0.5))
            .collect();
        let whole = |h: &MaskedInputs| ids(h).iter().all(|c| subset.contains(c));
        let none = |h: &MaskedInputs| ids(h).iter().all(|c| !subset.contains(c));
        let (ours, theirs) = (subset_sum(&all, &subset), subset_sum(&twin_all, &subset));
        if halves.iter().all(|h| whole(h) || none(h)) {
            assert_eq!(ours, theirs, "a union of whole halves: {subset:?}");
            unions += 1;
            continue;
        }
        drawn += 1;
        assert!(
            ours.iter().zip(&theirs).all(|(a, b)| a != b),
            "the masks of {subset:?} cancel somewhere"
        );
    }
    assert!(unions > 0);
}

/// A group that a failed split left regrouped, and that a leave then
/// takes below the minimum, merges: its own round would decode the sum of
/// the one client left (a ring of it and the leaver, who sends nothing).
/// The split group's other half takes that client, and every node's model
/// equals retraining in the groups made.
#[test]
fn a_regrouped_group_below_the_minimum_merges_rather_than_runs() {
    let data: Vec<(ClientId, Dataset)> = (gaussian_clients("regroup-merge-regrouped", MIX)
        .into_iter())
    .enumerate()
    .map(|(i, d)| (ClientId(i as u64), d))
    .collect();
    let mut fed = Federation::with_ids(data[..4].to_vec(), &config()).unwrap();
    // Groups [0 1] [2 3]; 4 to 7 join; 8 joins group 0, which splits
    // into [0 1] and [4 6 8], and the split's round fails.
    for (c, d) in &data[4..8] {
        fed.add(&AdditionRequest::new_client(*c, d.clone()))
            .unwrap();
    }
    fed.parties_mut().injected.fail_next = true;
    let (c, d) = &data[8];
    fed.add(&AdditionRequest::new_client(*c, d.clone()))
        .unwrap_err();
    let none = Default::default();
    assert_eq!(fed.parties().server().regrouped(&none), [0, 2]);
    // Client 0 leaves: group 0 keeps client 1 alone.
    fed.remove(&crate::RemovalRequest::clients(vec![ClientId(0)]))
        .unwrap();
    let layout = fed.layout().unwrap().clone();
    assert!(layout.groups()[0].is_empty(), "{layout:?}");
    assert_eq!(layout.groups()[2], [1, 4, 6, 8].map(ClientId));
    let retrained = Federation::with_layout(data[1..].to_vec(), fed.config(), layout).unwrap();
    same_nodes(&fed, &retrained, "merged from a regrouped group");
}
