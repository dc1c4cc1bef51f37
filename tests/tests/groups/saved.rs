//! Saving a federation with groups (persist version 7, store schema 3):
//! a saved tree loads as itself, every node's model included, and goes on
//! unlearning exactly as the federation it was saved from; a store keeps
//! a tree across reopening.

use mufc_store::{ClientRecords, FitOptions, RecordId, Store};
use mufc_testkit::compare_tree;

use super::*;

/// Saves and loads `fed`: the loaded federation is `fed`, every node
/// included, and saves to the same bytes.
fn reloaded(fed: &Federation, what: &str) -> Federation {
    let bytes = fed.to_bytes().unwrap();
    let loaded = Federation::from_bytes(&bytes).unwrap();
    compare_tree(fed, &loaded)
        .map_err(|e| format!("{what}: {e}"))
        .unwrap();
    assert_eq!(loaded.rounds(), fed.rounds(), "{what}");
    assert_eq!(loaded.config(), fed.config(), "{what}");
    assert_eq!(loaded.to_bytes().unwrap(), bytes, "{what}: saved again");
    loaded
}

#[test]
fn a_saved_tree_loads_as_itself_and_goes_on_unlearning_alike() {
    let mut rng = StdRng::seed_from_u64(18);
    let picked = [0, 1, 4];
    for (name, channel) in picked.map(|i| channels().swap_remove(i)) {
        for topology in topologies() {
            let what = format!("{name}, {topology:?}");
            let mut fed = Federation::with_ids(data(), &config(channel.clone(), topology)).unwrap();
            let mut loaded = reloaded(&fed, &format!("{what}, trained"));
            for step in 0..3 {
                let req = random_request(&fed, &mut rng);
                let (a, b) = (fed.remove(&req), loaded.remove(&req));
                match (a, b) {
                    (Ok(a), Ok(b)) if a.outcome.is_withdrawn() => {
                        assert_eq!(a.outcome, b.outcome, "{what}");
                        assert_eq!(loaded.client_ids(), fed.client_ids(), "{what}");
                        let again = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
                        assert_eq!(again.withdrawal(), fed.withdrawal(), "{what}");
                        break;
                    }
                    (a, b) => {
                        a.unwrap();
                        b.unwrap();
                        fed.flush().unwrap();
                        loaded.flush().unwrap();
                    }
                }
                compare_tree(&fed, &loaded)
                    .map_err(|e| format!("{what}, removal {step} after loading: {e}"))
                    .unwrap();
                loaded = reloaded(&fed, &format!("{what}, removal {step}"));
            }
        }
    }
}

#[test]
fn an_emptied_group_is_saved_and_stays_empty() {
    let groups: Vec<Vec<ClientId>> = vec![
        (0..3).map(ClientId).collect(),
        (3..6).map(ClientId).collect(),
        (6..12).map(ClientId).collect(),
    ];
    let layout = Layout::from_groups(groups, Some(2)).unwrap();
    let channel = Channel::scma(Masks::Dealer);
    let mut fed =
        Federation::with_layout(data(), &config(channel, Topology::Flat), layout).unwrap();
    // Group 1 leaves whole, with points of group 2.
    let req = RemovalRequest::clients((3..6).map(ClientId).collect())
        .with_points(ClientId(6), vec![PointId(0)])
        .with_points(ClientId(7), vec![PointId(1)]);
    fed.remove(&req).unwrap();
    assert_eq!(fed.layout().unwrap().groups()[1], Vec::<ClientId>::new());
    let mut loaded = reloaded(&fed, "group 1 emptied");
    let next = RemovalRequest::points(ClientId(0), vec![PointId(2)])
        .with_points(ClientId(1), vec![PointId(3)]);
    fed.remove(&next).unwrap();
    loaded.remove(&next).unwrap();
    assert_eq!(loaded.last_involvement().unwrap().groups, vec![0]);
    compare_tree(&fed, &loaded).unwrap();
}

#[test]
fn a_store_keeps_a_tree_and_forgets_in_one_group() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tree.mufc");
    let topology = Topology::Tree {
        group_size: 3,
        fan_out: 2,
    };
    let config = config(Channel::scma(Masks::Dealer), topology);
    let datasets: Vec<Dataset> = data().into_iter().map(|(_, d)| d).collect();
    let (mut store, _) = Store::fit(
        &path,
        ClientRecords::numbered(datasets),
        &config,
        &FitOptions::new(),
    )
    .unwrap();
    let before = store.federation().clone();
    let layout = before.layout().unwrap().clone();
    assert_eq!(layout.groups().len(), 4);
    // Records of clients 3 and 4 (group 1; 30 points each).
    let report = store
        .forget(&[RecordId::from(95), RecordId::from(130)])
        .unwrap();
    assert_eq!(report.removed_points, 2);
    let after = store.federation().clone();
    // Only group 1 and the nodes above it changed.
    let path_of_1 = layout.path(NodeId(1));
    for n in 0..layout.nodes() {
        let node = NodeId(n);
        let same = before.node(node).unwrap().counts() == after.node(node).unwrap().counts();
        assert_eq!(same, !path_of_1.contains(&node), "{node}");
    }
    drop(store);
    let reopened = Store::open(&path).unwrap();
    assert_eq!(reopened.config().topology(), topology);
    compare_tree(reopened.federation(), &after).unwrap();
}
