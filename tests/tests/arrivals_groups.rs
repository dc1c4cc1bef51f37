//! Clients that join a federation with groups (issue 29): each goes to
//! the group with the fewest clients, and a group that grows to twice the
//! smallest size a group may have splits in two when its next round runs.
//! Random joins, records that arrive and removals, over groups and trees
//! and the three mask sources, with the federation saved and loaded
//! between some requests: once nothing waits, the model (every node's)
//! equals training from scratch on the records present in the layout the
//! joins made, bit for bit.
#![allow(clippy::unwrap_used)]

use mufc::{
    AdditionRequest, Channel, ClientId, Federation, FederationConfig, Masks, RemovalRequest,
    SecAggOptions, Topology,
};
use mufc_testkit::{compare_clients, compare_tree};
use rand::RngExt;
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

/// Twelve clients: four train, eight join.
const MIX: Mixture = Mixture {
    clients: 12,
    per_client: 24,
    ..Mixture::SMALL
};
const TRAINED: usize = 4;

fn configs() -> Vec<(&'static str, FederationConfig)> {
    let base = || FederationConfig::new(3).gamma(0.05).min_clients(2);
    let groups = Topology::Groups { size: 2 };
    let tree = Topology::Tree {
        group_size: 2,
        fan_out: 2,
    };
    vec![
        ("groups of 2, dealt", base().topology(groups)),
        ("tree, dealt", base().topology(tree)),
        (
            "tree, pairwise",
            base()
                .topology(tree)
                .channel(Channel::scma(Masks::Pairwise)),
        ),
        (
            "groups of 2, secagg",
            base()
                .topology(groups)
                .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new()))),
        ),
    ]
}

/// The federation retrained on the records `view` holds, in `fed`'s
/// layout.
fn retrained(fed: &Federation, view: &[(ClientId, Dataset)]) -> Federation {
    let layout = fed.layout().unwrap().clone();
    Federation::with_layout(view.to_vec(), fed.config(), layout).unwrap()
}

#[test]
fn joins_absorb_and_split_groups_and_equal_retraining_in_their_layout() {
    let mut splits = 0;
    let mut waited = 0;
    for min_updating in [1, 2] {
        for (what, config) in configs() {
            let what = format!("{what}, min updating {min_updating}");
            let mut rng = testdata::rng(&format!("arrivals-groups-{what}"));
            let mut data = gaussian_clients("arrivals-groups", MIX).into_iter();
            let trained: Vec<(ClientId, Dataset)> = (0..TRAINED as u64)
                .map(|i| (ClientId(i), data.next().unwrap()))
                .collect();
            let mut joining: Vec<(ClientId, Dataset)> = (TRAINED as u64..MIX.clients as u64)
                .map(|i| (ClientId(i), data.next().unwrap()))
                .collect();
            let all = (MIX.clients * MIX.per_client) as u64 + 20;
            let config = (config.min_updating_clients(min_updating))
                .max_points(all)
                .validate()
                .unwrap();
            let mut fed = Federation::with_ids(trained.clone(), &config).unwrap();
            let groups_at_fit = fed.layout().unwrap().groups().len();
            let mut view = trained;
            for step in 0..14 {
                let live = view.len();
                let (c, d) = view[rng.random_range(0..live)].clone();
                let report = if !joining.is_empty() && rng.random_bool(0.6) {
                    let (n, records) = joining.remove(0);
                    view.push((n, records.clone()));
                    let mut request = AdditionRequest::new_client(n, records);
                    // Now and then with a removal's worth of change
                    // elsewhere: records move between clients' views.
                    if rng.random_bool(0.3) && d.len() > 3 {
                        let id = d.ids()[rng.random_range(0..d.len())];
                        let moved = d.only(&[id]).unwrap();
                        let fresh = PointId(10_000 + step);
                        let again = Dataset::with_ids(moved.points().clone(), vec![fresh]).unwrap();
                        request = request.with_records(c, again.clone());
                        let at = view.iter().position(|(x, _)| *x == c).unwrap();
                        view[at].1.append(&again).unwrap();
                    }
                    fed.add(&request)
                } else {
                    let id = d.ids()[rng.random_range(0..d.len())];
                    let at = view.iter().position(|(x, _)| *x == c).unwrap();
                    view[at].1 = d.without(&[id]).unwrap();
                    fed.remove(&RemovalRequest::points(c, vec![id]))
                };
                let report = report.unwrap_or_else(|e| panic!("{what}, step {step}: {e}"));
                view.sort_by_key(|(c, _)| *c);
                let now = retrained(&fed, &view);
                let waits = report.outcome.is_deferred()
                    || !fed.pending().is_empty()
                    || !fed.pending_additions().is_empty();
                waited += usize::from(waits);
                let checked = match waits {
                    false => compare_tree(&fed, &now),
                    true => compare_clients(&fed, &now),
                };
                checked.unwrap_or_else(|e| panic!("{what}, step {step}: {e}"));
                if rng.random_bool(0.3) {
                    fed = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
                }
            }
            fed.flush().unwrap();
            compare_tree(&fed, &retrained(&fed, &view))
                .unwrap_or_else(|e| panic!("{what}, flushed: {e}"));
            let layout = fed.layout().unwrap();
            splits += layout.groups().len() - groups_at_fit;
            for g in layout.groups() {
                assert!((2..4).contains(&g.len()), "{what}: {layout:?}");
            }
        }
    }
    eprintln!("{splits} splits, {waited} waited");
    // Not vacuous: groups split, and joins waited for another change.
    assert!(splits > 0 && waited > 0, "{splits} splits, {waited} waited");
}
