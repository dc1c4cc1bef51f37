//! Groups across processes (issue 16): the server runs one group's round
//! at a time and keeps every node's model, equal to the tree trained in
//! one process; a removal involves its group only; a restarted server
//! resumes its groups from what a store keeps; and a client refuses a
//! ring outside its group, drawn at random by a lying server.

use super::*;
use mufc::{Layout, NodeId, Topology};

const TOPOLOGY: Topology = Topology::Tree {
    group_size: 3,
    fan_out: 2,
};

fn grouped(seed: u64) -> (Vec<Dataset>, ValidConfig) {
    let mix = Mixture {
        clients: 9,
        ..Mixture::SMALL
    };
    let data = gaussian_clients("remote-groups", mix);
    let config = (config(2, 0.0, 3, seed).into_builder())
        .topology(TOPOLOGY)
        .validate()
        .unwrap();
    (data, config)
}

/// One round in each group of `groups`, with its members.
fn run_groups(server: &mut RemoteServer, clients: &mut [RemoteClient], groups: &[usize]) {
    let layout = server.setup().layout().unwrap().clone();
    for &g in groups {
        let ids = &layout.groups()[g];
        let (first, last) = (at(ids[0]), at(ids[ids.len() - 1]));
        let out = run_round(server, &mut clients[first..=last], &BTreeMap::new()).unwrap();
        assert_eq!(out.report.included, *ids, "group {g}");
    }
}

/// Every node's counts and centroids are those of the tree trained in
/// one process on `data`, bit for bit.
pub(super) fn assert_equals_tree(server: &RemoteServer, data: &[(ClientId, Dataset)], what: &str) {
    let config = (server.setup().config().clone().into_builder())
        .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
        .validate()
        .unwrap();
    let fed = Federation::with_ids(data.to_vec(), &config).unwrap();
    assert_eq!(fed.layout(), server.setup().layout(), "{what}");
    assert_same_nodes(server, &fed, what);
}

/// Every node's counts and centroids (the root alone when flat),
/// `server`'s against `fed`'s, bit for bit.
pub(super) fn assert_same_nodes(server: &RemoteServer, fed: &Federation, what: &str) {
    for n in 0..fed.layout().map_or(1, Layout::nodes) {
        let (mine, theirs) = (
            server.node(NodeId(n)).unwrap(),
            fed.node(NodeId(n)).unwrap(),
        );
        assert_eq!(mine.counts(), theirs.counts(), "{what}: node {n}");
        assert_eq!(
            centroid_bits(mine),
            centroid_bits(theirs),
            "{what}: node {n}"
        );
    }
}

#[test]
fn a_tree_across_processes_is_the_tree_in_one_process_and_a_removal_stays_in_its_group() {
    let (data, config) = grouped(41);
    let (mut server, mut clients) = federation(&data, &config);
    let layout = server.setup().layout().unwrap().clone();
    assert_eq!(layout.groups().len(), 3);
    // Training: one round per group; the model exists once all ran.
    run_groups(&mut server, &mut clients, &[0, 1]);
    assert!(!server.is_trained());
    assert!(matches!(server.snapshot(), Err(MufcError::NoServerModel)));
    run_groups(&mut server, &mut clients, &[2]);
    assert!(server.is_trained());
    let mut now = with_ids(&data);
    assert_equals_tree(&server, &now, "training");

    let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(41);
    for step in 0..4 {
        let g = rng.random_range(0..3);
        let ids = layout.groups()[g].clone();
        // Two members forget one or two points each.
        for &c in &ids[..2] {
            let n = now[at(c)].1.len();
            let take = rng.random_range(1..=2);
            let pts: Vec<PointId> = now[at(c)].1.ids()[n - take..].to_vec();
            clients[at(c)].forget(&pts).unwrap();
            now[at(c)].1 = now[at(c)].1.without(&pts).unwrap();
        }
        let sessions: Vec<usize> = clients.iter().map(|c| c.sessions().len()).collect();
        let before: Vec<BTreeMap<_, _>> = (0..layout.nodes())
            .map(|n| server.node(NodeId(n)).unwrap().counts().clone())
            .collect();
        run_groups(&mut server, &mut clients, &[g]);
        // Only the group's members joined; only the path's models moved.
        for (c, client) in clients.iter().enumerate() {
            let joined = client.sessions().len() - sessions[c];
            assert_eq!(
                joined,
                usize::from(ids.contains(&ClientId(c as u64))),
                "step {step}"
            );
        }
        let path = layout.path(NodeId(g));
        for (n, counts) in before.iter().enumerate() {
            let moved = server.node(NodeId(n)).unwrap().counts() != counts;
            assert_eq!(moved, path.contains(&NodeId(n)), "step {step}, node {n}");
        }
        assert_equals_tree(&server, &now, &format!("removal {step} in group {g}"));
    }

    // The server restarts from what its store keeps (no client's point),
    // saved and loaded, and serves the next removal exactly.
    let bytes = postcard::to_allocvec(&server.snapshot().unwrap()).unwrap();
    let kept: mufc::ServerSnapshot = postcard::from_bytes(&bytes).unwrap();
    let roster = server.setup().roster().to_vec();
    let mut resumed = RemoteServer::from_snapshot(kept, roster).unwrap();
    assert_eq!(resumed.rounds(), server.rounds());
    clients[0].forget(&[now[0].1.ids()[0]]).unwrap();
    clients[1].forget(&[now[1].1.ids()[0]]).unwrap();
    for c in [0, 1] {
        let first = now[c].1.ids()[0];
        now[c].1 = now[c].1.without(&[first]).unwrap();
    }
    run_groups(&mut resumed, &mut clients, &[0]);
    assert_equals_tree(&resumed, &now, "after the restart");
}

#[test]
fn a_server_refuses_a_round_across_groups() {
    let (data, config) = grouped(42);
    let (mut server, _) = federation(&data, &config);
    let err = server
        .start_round(&[ClientId(0), ClientId(1), ClientId(3)])
        .unwrap_err();
    assert!(
        matches!(&err, MufcError::Remote(m) if m.contains("one group")),
        "{err}"
    );
}

/// A lying server announces rings drawn at random among the roster, of
/// the group's size (so that the protocol's parameters are those of an
/// honest round): a client joins exactly when the ring is its own group.
#[test]
fn a_client_joins_only_rings_inside_its_group() {
    let (data, config) = grouped(43);
    let (mut server, mut clients) = federation(&data, &config);
    run_groups(&mut server, &mut clients, &[0, 1, 2]);
    let layout: Layout = server.setup().layout().unwrap().clone();
    let mut rng = <ChaCha8Rng as rand::SeedableRng>::seed_from_u64(43);
    let (mut joined, mut refused) = (0, 0);
    for trial in 0..60 {
        let me = ClientId(rng.random_range(0..9));
        let g = layout.group_of(me).unwrap();
        // An honest announcement of the client's group, its ring replaced.
        let (mut a, _) = server.start_round(&layout.groups()[g]).unwrap();
        let mut ring = draw_clients(&mut rng, 9, 2);
        ring.retain(|c| *c != me);
        while ring.len() < 2 {
            let c = ClientId(rng.random_range(0..9));
            if c != me && !ring.contains(&c) {
                ring.push(c);
            }
        }
        ring.push(me);
        let own = ring.iter().all(|c| layout.group_of(*c) == Some(g));
        if own {
            // The honest ring (the graph's order).
            ring = a.spec.ring.clone();
        }
        a.spec.ring = ring.clone();
        let mut client = clients[at(me)].clone();
        match client.join(&a) {
            Ok(_) => {
                assert!(own, "trial {trial}: {me} joined the ring {ring:?}");
                joined += 1;
            }
            Err(MufcError::RoundRefused { reason, .. }) => {
                assert!(!own, "trial {trial}: {me} refused its group: {reason}");
                assert!(reason.contains("outside the group of client"), "{reason}");
                refused += 1;
            }
            Err(e) => panic!("trial {trial}: {e}"),
        }
    }
    assert!(
        joined > 0 && refused > 0,
        "{joined} joined, {refused} refused"
    );
}

/// A server stopped before every group trained has no store to resume
/// from: a new one, set up from the same registrations, trains every
/// group again, with clients that already committed their group's
/// training round under the old one; its tree is the one trained in one
/// process, and it serves removals exactly.
#[test]
fn a_server_restarted_mid_training_trains_every_group_again() {
    let (data, config) = grouped(44);
    let (mut first, mut clients) = federation(&data, &config);
    run_groups(&mut first, &mut clients, &[0, 1]);
    assert!(matches!(first.snapshot(), Err(MufcError::NoServerModel)));
    drop(first);
    let regs: Vec<Registration> = clients.iter().map(RemoteClient::registration).collect();
    let setup = RemoteSetup::new(&config, &regs).unwrap();
    let mut second = RemoteServer::new(setup).unwrap();
    run_groups(&mut second, &mut clients, &[2, 0, 1]);
    assert!(second.is_trained());
    let mut now = with_ids(&data);
    assert_equals_tree(&second, &now, "trained again");

    let gone = [PointId(0), PointId(3)];
    clients[4].forget(&gone).unwrap();
    clients[5].forget(&gone[..1]).unwrap();
    now[4].1 = now[4].1.without(&gone).unwrap();
    now[5].1 = now[5].1.without(&gone[..1]).unwrap();
    run_groups(&mut second, &mut clients, &[1]);
    assert_equals_tree(&second, &now, "a removal after training again");
}
