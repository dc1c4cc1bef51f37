//! Clients that leave and join a federation of groups over loopback
//! (issue 29): the leaver's group goes on without it, a new client goes
//! to the group with the fewest clients left, and after each step every
//! node's model equals the in-process federation's fit on the records
//! present in the groups the server holds, bit for bit, through a
//! restart. A group left below the minimum merges, and a group grown
//! full splits, as in one process.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::Path;

use mufc::{Channel, ClientId, Federation, FederationConfig, Masks, NodeId};
use mufc::{SecAggOptions, Topology};
use mufc_net::client_store::ClientStore;
use mufc_net::server::ServerEvent;
use mufc_store::Store;
use seeding::Dataset;

use super::federation::{Loopback, data, until_server};

/// Groups of three, of which two must remain; room for every record.
fn config(masks: Masks, all: &[Dataset]) -> mufc::ValidConfig {
    let total: usize = all.iter().map(Dataset::len).sum();
    FederationConfig::new(3)
        .channel(Channel::scma(masks))
        .topology(Topology::Groups { size: 3 })
        .min_clients(2)
        .min_updating_clients(1)
        .max_points(total as u64)
        .seed(11)
        .validate()
        .unwrap()
}

/// Groups of two, both of which must remain: a group of four is full
/// (twice the smallest group) and splits.
fn split_config(masks: Masks, all: &[Dataset]) -> mufc::ValidConfig {
    let total: usize = all.iter().map(Dataset::len).sum();
    FederationConfig::new(3)
        .channel(Channel::scma(masks))
        .topology(Topology::Groups { size: 2 })
        .min_clients(2)
        .min_updating_clients(1)
        .max_points(total as u64)
        .seed(11)
        .validate()
        .unwrap()
}

/// A federation of `all` over loopback, once every group trained.
async fn trained(masks: Masks, all: &[Dataset]) -> Loopback {
    trained_with(config(masks, all), all).await
}

/// A federation of `data` configured by `config` over loopback, once
/// every group trained.
async fn trained_with(config: mufc::ValidConfig, data: &[Dataset]) -> Loopback {
    let mut fed = Loopback::start_with(config, data, Vec::new(), async |_| {}).await;
    until_server(&mut fed.server, |e| {
        matches!(e, ServerEvent::Trained { .. })
    })
    .await;
    fed
}

/// Each client's records of `all` by id, but for the clients `gone`.
pub(crate) fn without(all: &[Dataset], gone: &[u64]) -> Vec<(ClientId, Dataset)> {
    (0u64..)
        .map(ClientId)
        .zip(all.iter().cloned())
        .filter(|(c, _)| !gone.contains(&c.0))
        .collect()
}

/// Every node of the stored federation is the in-process federation's
/// on `present` (each client's records by id) in the stored groups less
/// the clients not present, bit for bit; returns the stored groups.
pub(crate) fn assert_stored_groups(
    store: &Path,
    present: &[(ClientId, Dataset)],
) -> Vec<Vec<ClientId>> {
    let stored = Store::open(store).unwrap();
    let stored = stored.federation();
    let layout = stored.layout().unwrap().clone();
    let gone: Vec<ClientId> = (layout.clients().into_iter())
        .filter(|c| !present.iter().any(|(p, _)| p == c))
        .collect();
    let held = layout.without(&gone);
    let fed = Federation::with_layout(present.to_vec(), stored.config(), held).unwrap();
    for n in 0..layout.nodes() {
        let (mine, theirs) = (
            stored.node(NodeId(n)).unwrap(),
            fed.node(NodeId(n)).unwrap(),
        );
        assert_eq!(mine.counts(), theirs.counts(), "node {n}");
        assert_eq!(mine.centroids(), theirs.centroids(), "node {n}");
    }
    layout.groups().to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_groups_a_client_leaves_another_joins_and_the_model_stays_exact() {
    leaves_and_joins(Masks::SecAgg(SecAggOptions::new())).await;
}

/// The same with pairwise masks, where every member of a ring must
/// answer: the leaver's group runs without it only because the server
/// and every member took it off the group's sum.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_groups_with_pairwise_masks_a_client_leaves_another_joins_exactly() {
    leaves_and_joins(Masks::Pairwise).await;
}

async fn leaves_and_joins(masks: Masks) {
    let all = data(7);
    let mut fed = trained_with(config(masks, &all), &all[..6]).await;
    let mut present: Vec<(ClientId, Dataset)> =
        (0u64..).map(ClientId).zip(all[..6].to_vec()).collect();
    let groups = assert_stored_groups(&fed.store, &present);
    assert_eq!(groups, [[0, 1, 2].map(ClientId), [3, 4, 5].map(ClientId)]);

    // Client 4 leaves: its group of two goes on (the minimum is two).
    fed.leave(4).await;
    present.retain(|(c, _)| *c != ClientId(4));
    assert_stored_groups(&fed.store, &present);
    // A removal in that group: a ring of the two left.
    let gone = all[5].id(4);
    fed.forget(4, &[gone]).await; // client 5, now at place 4
    present[4].1 = present[4].1.without(&[gone]).unwrap();
    assert_stored_groups(&fed.store, &present);

    // A new client joins the group with the fewest clients left (the
    // second: counted with the leaver, the groups are even, and the
    // first would take it).
    let fed = fed.admitting("c6", ClientId(6), &all[6]).await;
    present.push((ClientId(6), all[6].clone()));
    let groups = assert_stored_groups(&fed.store, &present);
    assert_eq!(groups[0], [0, 1, 2].map(ClientId));
    assert_eq!(groups[1], [3, 4, 5, 6].map(ClientId));

    // Restarted, the server keeps both; the new client and a client of
    // the other group forget a point each.
    let mut fed = fed.restart_server(async |_| {}).await;
    let gone = all[6].id(0);
    fed.forget(5, &[gone]).await; // client 6, last
    present[5].1 = present[5].1.without(&[gone]).unwrap();
    let gone = all[1].id(2);
    fed.forget(1, &[gone]).await;
    present[1].1 = present[1].1.without(&[gone]).unwrap();
    assert_stored_groups(&fed.store, &present);
    fed.stop().await;
}

/// A group that leaves take below the minimum aggregate merges across
/// processes (docs/threat-model.md P4) instead of withdrawing the model:
/// its last client moves to the other group, whose whole round runs, and
/// the group is emptied as that round commits, which serves the leaver's
/// request (it was in no round: the server tells it). The model equals
/// the in-process fit in the groups the server holds, bit for bit,
/// before and after a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_groups_a_group_left_below_the_minimum_merges_into_another_exactly() {
    merges(Masks::SecAgg(SecAggOptions::new())).await;
}

/// The same with pairwise masks: every member of the group that takes
/// the moved client must answer, the moved one too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_groups_with_pairwise_masks_a_group_left_below_the_minimum_merges_exactly() {
    merges(Masks::Pairwise).await;
}

async fn merges(masks: Masks) {
    let all = data(6);
    let mut fed = trained(masks, &all).await;
    let mut present: Vec<(ClientId, Dataset)> = (0u64..).map(ClientId).zip(all.clone()).collect();
    // Client 1 leaves: its group keeps two, the minimum.
    fed.leave(1).await;
    present.retain(|(c, _)| *c != ClientId(1));
    assert_stored_groups(&fed.store, &present);
    // Client 2 leaves: its group would keep one, which moves.
    fed.leave(1).await;
    present.retain(|(c, _)| *c != ClientId(2));
    let groups = assert_stored_groups(&fed.store, &present);
    assert_eq!(groups[0], [1, 2].map(ClientId));
    assert_eq!(groups[1], [0, 3, 4, 5].map(ClientId));
    // The moved client and one of its new group forget a point each.
    let gone = all[0].id(1);
    fed.forget(0, &[gone]).await;
    present[0].1 = present[0].1.without(&[gone]).unwrap();
    assert_stored_groups(&fed.store, &present);
    let mut fed = fed.restart_server(async |_| {}).await;
    let gone = all[4].id(2);
    fed.forget(2, &[gone]).await; // client 4
    present[2].1 = present[2].1.without(&[gone]).unwrap();
    assert_stored_groups(&fed.store, &present);
    fed.stop().await;
}

/// A merge is kept in the store before any client hears of it: the
/// moved client is offline, so the round of the group that takes it
/// waits (its catch-up cannot run); a server restarted then resumes the
/// merged groups, runs that round once the client is back, and serves
/// the leave; the model equals the in-process fit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_kept_before_its_round_survives_a_server_restart() {
    let all = data(6);
    let mut fed = trained(Masks::SecAgg(SecAggOptions::new()), &all).await;
    fed.leave(1).await;
    // Client 0 goes offline; client 2 leaves: client 0 is moved.
    let (path0, c0) = fed.clients.remove(0);
    c0.stop().await.unwrap();
    let (path2, _) = &fed.clients[0];
    ClientStore::open(path2).unwrap().request_leave().unwrap();
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::Merged { from: 0, into: 1, moved } if *moved == [ClientId(0)]),
    )
    .await;
    let kept = Store::open(&fed.store).unwrap();
    let layout = kept.federation().layout().unwrap().clone();
    assert_eq!(layout.groups()[1], [0, 3, 4, 5].map(ClientId));
    drop(kept);
    let mut fed = fed.restart_server(async |_| {}).await;
    let c0 = fed.start_client("c0", &path0);
    fed.clients.push((path0, c0));
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::Left { id, .. } if *id == ClientId(2)),
    )
    .await;
    let groups = assert_stored_groups(&fed.store, &without(&all, &[1, 2]));
    assert_eq!(groups[1], [0, 3, 4, 5].map(ClientId));
    fed.stop().await;
}

/// A member of the group that takes the moved client is offline: the
/// merge's round runs at once all the same (the moved client's data is
/// not in that group's model: a catch-up, with the absent member a
/// dropout) and serves the leave, so an erasure does not wait for an
/// absent member; when the member is back a catch-up round brings its
/// data in, and the model equals the in-process fit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_round_runs_without_an_absent_member_of_the_taking_group() {
    let all = data(6);
    let mut fed = trained(Masks::SecAgg(SecAggOptions::new()), &all).await;
    fed.leave(1).await;
    let (path5, c5) = fed.clients.remove(4);
    c5.stop().await.unwrap();
    fed.leave(1).await; // client 2: served by the merge's round
    let c5 = fed.start_client("c5", &path5);
    fed.clients.push((path5, c5));
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::RoundCommitted(r) if r.included.contains(&ClientId(5))),
    )
    .await;
    let groups = assert_stored_groups(&fed.store, &without(&all, &[1, 2]));
    assert_eq!(groups[1], [0, 3, 4, 5].map(ClientId));
    fed.stop().await;
}

/// A group grown full by joins splits across processes (issue 29), as it
/// does in one process. New clients go to the group with the fewest
/// (4, 6 and 8 to the first group of two, 5 and 7 to the second). At 6's
/// round the first holds four, twice the smallest group, but no split
/// is safe: the server would see its last sum less the half that stays,
/// the sum of fewer than two clients (`RemoteServer::split_moving`), so
/// it grows. At 8's round, 4 and 6 (in its sum) and 8 (new) form a new
/// group, and both halves' whole rounds are stored in one commit. The
/// model equals the in-process fit in the three groups, bit for bit,
/// before and after a removal in the new group and a restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_group_grown_full_by_joins_splits_across_processes_exactly() {
    splits(Masks::SecAgg(SecAggOptions::new())).await;
}

/// The same with pairwise masks: each half's ring is its own, every
/// member of it answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_pairwise_masks_a_group_grown_full_by_joins_splits_exactly() {
    splits(Masks::Pairwise).await;
}

async fn splits(masks: Masks) {
    let all = data(9);
    let mut fed = trained_with(split_config(masks, &all), &all[..4]).await;
    let mut present: Vec<(ClientId, Dataset)> =
        (0u64..).map(ClientId).zip(all[..4].to_vec()).collect();
    for (c, data) in (4u64..).zip(&all[4..]) {
        fed = fed.admitting(&format!("c{c}"), ClientId(c), data).await;
        present.push((ClientId(c), data.clone()));
        let groups = assert_stored_groups(&fed.store, &present);
        assert_eq!(groups.len(), if c < 8 { 2 } else { 3 }, "after {c} joined");
    }
    let groups = assert_stored_groups(&fed.store, &present);
    assert_eq!(
        groups,
        [vec![0, 1], vec![2, 3, 5, 7], vec![4, 6, 8]]
            .map(|g| g.into_iter().map(ClientId).collect::<Vec<_>>())
    );
    // Client 4, now in the new group, forgets a point; restarted, the
    // server keeps the three groups, and client 0 forgets one.
    let gone = all[4].id(1);
    fed.forget(4, &[gone]).await;
    present[4].1 = present[4].1.without(&[gone]).unwrap();
    assert_stored_groups(&fed.store, &present);
    let mut fed = fed.restart_server(async |_| {}).await;
    let gone = all[0].id(3);
    fed.forget(0, &[gone]).await;
    present[0].1 = present[0].1.without(&[gone]).unwrap();
    assert_eq!(assert_stored_groups(&fed.store, &present).len(), 3);
    fed.stop().await;
}

/// The lone-update policy gates a merge across processes
/// (docs/threat-model.md U3), as in one process: clients 1 and 2 leave
/// their group of three at once, so client 0 must move into the other
/// group, where it enters the sum as a new client does, one change where
/// the policy asks for two. The merge waits for the deadline; or, in a
/// second federation, for a request of the other group, which makes two.
/// Either way the model then equals the in-process fit in the groups
/// held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_waits_for_the_lone_update_policy_across_processes() {
    let all = data(6);
    for deadline in [true, false] {
        let config = (config(Masks::SecAgg(SecAggOptions::new()), &all).into_builder())
            .min_updating_clients(2)
            .validate()
            .unwrap();
        let mut fed = trained_with(config, &all).await;
        let wait = std::time::Duration::from_secs(if deadline { 4 } else { 600 });
        fed.server_options.max_defer = wait;
        let mut fed = fed.restart_server(async |_| {}).await;
        let asked = std::time::Instant::now();
        for c in [1, 2] {
            ClientStore::open(&fed.clients[c].0)
                .unwrap()
                .request_leave()
                .unwrap();
        }
        let mut present = without(&all, &[1, 2]);
        if !deadline {
            // Client 3 forgets a point: the other group's change, and the
            // moved client's, make two.
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            let gone = all[3].id(1);
            ClientStore::open(&fed.clients[3].0)
                .unwrap()
                .request(&[gone])
                .unwrap();
            present[1].1 = present[1].1.without(&[gone]).unwrap();
        }
        until_server(&mut fed.server, |e| {
            matches!(
                e,
                ServerEvent::Merged {
                    from: 0,
                    into: 1,
                    ..
                }
            )
        })
        .await;
        let waited = asked.elapsed();
        if deadline {
            assert!(waited >= std::time::Duration::from_secs(2), "{waited:?}");
        } else {
            assert!(waited < std::time::Duration::from_secs(60), "{waited:?}");
        }
        until_server(
            &mut fed.server,
            |e| matches!(e, ServerEvent::Left { id, .. } if *id == ClientId(2)),
        )
        .await;
        // The leave was served by the merge's round, which took client 0.
        let groups = assert_stored_groups(&fed.store, &present);
        assert_eq!(groups[1], [0, 3, 4, 5].map(ClientId));
        fed.stop().await;
    }
}

/// A merge's round does not wait for the client that moves (deletion
/// goes on while a party is offline): clients 1 and 2 leave the group of
/// 0, 1 and 2, and 0, which moves, is offline. Once the leave waited the
/// join timeout, the taking group's round runs without 0, the first
/// group is emptied and the leave is served: the model holds neither the
/// leavers nor, until it is back, client 0, as an offline member's data
/// waits for its catch-up. Back, 0 is caught up, and each time the model
/// equals the in-process fit on the clients it holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_merge_serves_the_leave_while_the_moved_client_is_offline() {
    let all = data(6);
    let mut fed = trained(Masks::SecAgg(SecAggOptions::new()), &all).await;
    fed.leave(1).await;
    let (path0, c0) = fed.clients.remove(0);
    c0.stop().await.unwrap();
    fed.leave(0).await; // client 2, served without client 0
    let groups = assert_stored_groups(&fed.store, &without(&all, &[0, 1, 2]));
    assert_eq!(groups[1], [0, 3, 4, 5].map(ClientId));
    let c0 = fed.start_client("c0", &path0);
    fed.clients.push((path0, c0));
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::RoundCommitted(r) if r.included.contains(&ClientId(0))),
    )
    .await;
    assert_stored_groups(&fed.store, &without(&all, &[1, 2]));
    fed.stop().await;
}
