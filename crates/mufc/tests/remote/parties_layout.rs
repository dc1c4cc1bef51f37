//! A layout of one's own ([`Layout::from_groups`]) as parties: the setup
//! carries it ([`RemoteSetup::with_layout`]), the parties trained in it
//! serve every request exactly (every node equals retraining in the same
//! groups), and restored from their bytes after each request they keep it.
//! Across processes a client refuses a setup whose groups are not its
//! topology's (a server choosing the groups could place a client among
//! parties of its own). Layouts and requests are drawn from
//! `testdata::rng` and named in every failure.

use super::parties::{SOURCES, apply, assert_nodes_equal_retraining, draw_request, serve};
use super::parties_saved::reloaded;
use super::*;
use mufc::remote::{Agreement, InProcess};
use mufc::{Layout, Topology};

/// A random partition of `ids` into groups of at least `min` clients
/// (shuffled, so that a group's clients are not consecutive ids), under
/// one root or a binary tree.
fn draw_layout(rng: &mut ChaCha8Rng, ids: &[ClientId], min: usize) -> Layout {
    let mut shuffled = ids.to_vec();
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, rng.random_range(0..=i));
    }
    let count = rng.random_range(1..=(ids.len() / min).max(1));
    let mut groups = vec![Vec::new(); count];
    for (i, c) in shuffled.into_iter().enumerate() {
        groups[i % count].push(c);
    }
    let fan_out = rng.random_bool(0.5).then_some(2);
    Layout::from_groups(groups, fan_out).unwrap()
}

#[test]
fn parties_in_a_layout_of_their_own_serve_every_request_exactly() {
    let mut rng = testdata::rng("parties-layout");
    let (mut served, mut grouped) = (0, 0);
    for (s, masks) in SOURCES.iter().enumerate() {
        for case in 0..2 {
            let mix = Mixture {
                clients: rng.random_range(6..=9),
                per_client: rng.random_range(15..=25),
                ..Mixture::SMALL
            };
            let seed = rng.random_range(0..1000);
            let data = with_ids(&gaussian_clients(&format!("layout-{s}-{case}-{seed}"), mix));
            let ids: Vec<ClientId> = data.iter().map(|(c, _)| *c).collect();
            let layout = draw_layout(&mut rng, &ids, 3);
            let mut what = format!("{:?}, seed {seed}, {:?}", masks(), layout.groups());
            let config = FederationConfig::new(2)
                .client_k(2)
                .channel(Channel::scma(masks()))
                .min_clients(2)
                .seed(seed)
                .validate()
                .unwrap();
            let mut parties =
                InProcess::train_with_layout(data.clone(), &config, layout.clone()).unwrap();
            assert_eq!(parties.server().groups(), layout.groups(), "{what}");
            assert_eq!(parties.training().len(), layout.groups().len(), "{what}");
            assert_nodes_equal_retraining(&parties, &data, &format!("{what}: training"));
            grouped += usize::from(layout.groups().len() > 1);
            let mut rest = data;
            let mut whole_left = true;
            for _ in 0..3 {
                let Some(request) = draw_request(&mut rng, &parties, &mut whole_left, &mut what)
                else {
                    continue;
                };
                serve(&mut parties, &request, &what);
                apply(&mut rest, &request);
                served += 1;
                parties = reloaded(&parties, &what);
                assert_eq!(
                    parties.server().setup().layout(),
                    Some(&layout),
                    "{what}: restored"
                );
                if parties.waiting().is_empty() && parties.withdrawal().is_none() {
                    assert_nodes_equal_retraining(&parties, &rest, &format!("{what}: restored"));
                }
            }
            // Every group's rounds stayed inside it.
            for r in parties.training() {
                let g = r.report.group.unwrap();
                assert_eq!(r.report.included, layout.groups()[g], "{what}");
            }
            if parties.withdrawal().is_none() {
                parties
                    .flush()
                    .unwrap_or_else(|e| panic!("{what}: flush: {e}"));
                assert_nodes_equal_retraining(&parties, &rest, &format!("{what}: flushed"));
            }
        }
    }
    assert!(
        served >= 12 && grouped >= 2,
        "{served} requests, {grouped} cases in groups"
    );
}

#[test]
fn a_layout_that_is_not_the_rosters_is_refused() {
    let regs: Vec<Registration> = (0..6)
        .map(|i| Registration {
            id: ClientId(i),
            points: 30,
            dim: 2,
            scale: 1,
        })
        .collect();
    let config = FederationConfig::new(2).min_clients(2).validate().unwrap();
    let setup = RemoteSetup::new(&config, &regs).unwrap();
    let groups = |gs: &[&[u64]]| {
        Layout::from_groups(
            gs.iter()
                .map(|g| g.iter().map(|&c| ClientId(c)).collect())
                .collect(),
            None,
        )
        .unwrap()
    };
    // A client missing, a client outside the roster, a group below the
    // smallest aggregate: refused.
    for bad in [
        groups(&[&[0, 1, 2], &[3, 4]]),
        groups(&[&[0, 1, 2], &[3, 4, 5, 9]]),
        groups(&[&[0, 1, 2, 3, 4], &[5]]),
    ] {
        let refused = setup.clone().with_layout(bad.clone());
        assert!(
            matches!(
                refused,
                Err(MufcError::InvalidLayout(_) | MufcError::GroupTooSmall { .. })
            ),
            "{:?}: {refused:?}",
            bad.groups()
        );
    }
    // The plain mode sums nothing: no groups.
    let plain = FederationConfig::new(2)
        .min_clients(2)
        .channel(Channel::Plain)
        .validate()
        .unwrap();
    let plain = RemoteSetup::new(&plain, &regs).unwrap();
    assert!(
        plain
            .with_layout(groups(&[&[0, 1, 2], &[3, 4, 5]]))
            .is_err()
    );
    // Across processes the agreement holds the topology: a server's own
    // groups are refused, the topology's accepted.
    let agreed = Agreement::new(6);
    let own = setup
        .clone()
        .with_layout(groups(&[&[0, 2, 4], &[1, 3, 5]]))
        .unwrap();
    let why = agreed.check_setup(&own).unwrap_err();
    assert!(why.contains("groups"), "{why}");
    assert!(agreed.check_setup(&setup).is_ok());
    let topology = FederationConfig::new(2)
        .min_clients(2)
        .topology(Topology::Groups { size: 3 })
        .validate()
        .unwrap();
    let by_topology = RemoteSetup::new(&topology, &regs).unwrap();
    assert!(agreed.check_setup(&by_topology).is_ok());
    let regrouped = by_topology
        .with_layout(groups(&[&[0, 1, 5], &[2, 3, 4]]))
        .unwrap();
    assert!(agreed.check_setup(&regrouped).is_err());
}
