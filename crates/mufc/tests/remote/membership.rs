//! A round's membership is a rule the clients check (issue 28, item 5): a
//! server that holds S(all) and then S(all but v) holds v's histogram.
//! After a sum, every client of it refuses a ring that leaves out one of
//! that sum's clients; a client the protocol dropped inside a ring that
//! named it is not in the sum, and may be left out next.

use super::*;

/// A server drawing a ring without one client of the last sum, the
/// victim and the ring's size drawn at random: every client asked to
/// join refuses before it sends anything, naming the client left out;
/// the full ring is joined; after a round in which the victim dropped
/// out inside the protocol, a ring without it is joined.
#[test]
fn a_client_refuses_a_ring_that_omits_a_client_of_the_last_sum() {
    let mut rng = testdata::rng("remote-membership");
    for case in 0..3 {
        let (data, config, _) = dropout_federation(&format!("remote-membership-{case}"), case);
        let (mut server, mut clients) = federation(&data, &config);
        let n = clients.len();
        run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
        let all: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
        for c in &clients {
            assert_eq!(c.last_sum(), all.as_slice(), "case {case}");
        }
        let victim = all[rng.random_range(0..n)];
        // At least the minimum aggregate (3).
        let size = rng.random_range(3..n);
        let ring: Vec<ClientId> = shuffled(&mut rng, &all, 1)
            .into_iter()
            .filter(|c| *c != victim)
            .take(size)
            .collect();
        let what = format!("case {case}: ring {ring:?} without {victim}");
        let (announcement, _round) = server.start_round(&ring).unwrap();
        for c in clients.iter_mut().filter(|c| ring.contains(&c.id())) {
            let sessions = c.sessions().len();
            let refused = c.join(&announcement).unwrap_err();
            let MufcError::RoundRefused { reason, .. } = &refused else {
                panic!("{what}: {refused}");
            };
            let named = all
                .iter()
                .find(|o| reason.contains(&format!("omits client {o},")));
            assert!(named.is_some_and(|o| !ring.contains(o)), "{what}: {reason}");
            assert_eq!(c.sessions().len(), sessions, "{what}: nothing joined");
        }
        // The victim drops out inside a ring that names it: the sum is of
        // the others, and a ring without it is fine from then on.
        let faults = BTreeMap::from([(victim, Fault::Silent(SecAggStep::MaskedInput))]);
        let out = run_round(&mut server, &mut clients, &faults).unwrap();
        assert!(!out.report.included.contains(&victim), "{what}");
        let others: Vec<ClientId> = all.iter().copied().filter(|c| *c != victim).collect();
        for c in clients.iter().filter(|c| c.id() != victim) {
            assert_eq!(c.last_sum(), others.as_slice(), "{what}");
        }
        let (announcement, _round) = server.start_round(&others).unwrap();
        for c in clients.iter_mut().filter(|c| c.id() != victim) {
            c.join(&announcement).unwrap();
        }
        // And the server's model says whom it holds.
        assert_eq!(server.included(0), out.report.included, "{what}");
    }
}

/// With groups, the rule binds a client to its own group only: after
/// every group's training round, each client's last sum is its group's
/// members (never the roster); a ring of its group that leaves out one of
/// them (victim and group drawn at random) is refused by every member
/// asked; the full ring of its group is joined, though the other groups'
/// members are in no ring of it.
#[test]
fn with_groups_a_client_requires_only_its_own_groups_last_sum() {
    let mut rng = testdata::rng("remote-membership-groups");
    let mix = Mixture {
        clients: 8,
        per_client: 20,
        ..Mixture::SMALL
    };
    let data = gaussian_clients("remote-membership-groups", mix);
    let config = (config(2, 0.0, 3, 5).into_builder())
        .topology(mufc::Topology::Groups { size: 4 })
        .validate()
        .unwrap();
    let (mut server, mut clients) = federation(&data, &config);
    let layout = server.setup().layout().unwrap();
    let groups = layout.groups().to_vec();
    assert!(groups.len() >= 2 && groups.iter().all(|g| g.len() >= 4));
    for g in &groups {
        let (first, last) = (at(g[0]), at(g[g.len() - 1]));
        run_round(&mut server, &mut clients[first..=last], &BTreeMap::new()).unwrap();
    }
    for c in &clients {
        let mine = groups.iter().find(|g| g.contains(&c.id())).unwrap();
        assert_eq!(c.last_sum(), mine.as_slice(), "client {}", c.id());
    }
    for case in 0..4 {
        let g = &groups[rng.random_range(0..groups.len())];
        let victim = g[rng.random_range(0..g.len())];
        let ring: Vec<ClientId> = g.iter().copied().filter(|c| *c != victim).collect();
        let what = format!("case {case}: ring {ring:?} without {victim}");
        let (announcement, _round) = server.start_round(&ring).unwrap();
        for c in clients.iter_mut().filter(|c| ring.contains(&c.id())) {
            let refused = c.join(&announcement).unwrap_err();
            let MufcError::RoundRefused { reason, .. } = &refused else {
                panic!("{what}: {refused}");
            };
            assert!(
                reason.contains(&format!("omits client {victim},")),
                "{what}: {reason}"
            );
        }
        let (announcement, _round) = server.start_round(g).unwrap();
        for c in clients.iter_mut().filter(|c| g.contains(&c.id())) {
            c.join(&announcement)
                .unwrap_or_else(|e| panic!("{what}: the full group refused: {e}"));
        }
    }
}
