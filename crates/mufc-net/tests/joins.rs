//! A client that joins the trained federation over loopback (issue 29):
//! with `admit_new_clients`, a client whose name is not on the roster,
//! holding a certificate of the federation's authority, is admitted; its
//! first round is whole and the model is then the in-process federation's
//! on every client's records, bit for bit; a later removal and a server
//! restart keep it exact. Without the option it is refused, and a
//! certificate of another authority never joins.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions};
use mufc_net::client::ClientEvent;
use mufc_net::client_store::ClientStore;
use mufc_net::server::ServerEvent;
use seeding::Dataset;

use super::federation::{
    Loopback, assert_stored_model, assert_stored_model_of, data, until_client, until_server,
};

/// Six clients' data: five train, the sixth joins; room for all.
fn config(masks: Masks, all: &[Dataset]) -> mufc::ValidConfig {
    let total: usize = all.iter().map(Dataset::len).sum();
    FederationConfig::new(3)
        .channel(Channel::scma(masks))
        .min_updating_clients(1)
        .max_points(total as u64)
        .seed(11)
        .validate()
        .unwrap()
}

/// Starts client `c5` on a new store of `data`, and waits until the
/// server admitted it and a round that includes it committed.
async fn join_c5(fed: &mut Loopback, data: &Dataset) {
    fed.start_new_client("c5", data);
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::Admitted { id, name } if *id == ClientId(5) && name == "c5"),
    )
    .await;
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::RoundCommitted(r) if r.included.contains(&ClientId(5))),
    )
    .await;
}

async fn a_client_joins(masks: Masks) {
    let all = data(6);
    let mut fed = Loopback::trained(config(masks, &all), &all[..5]).await;
    assert_stored_model(&fed.store, &all[..5]);
    fed.server_options.admit_new_clients = true;
    let mut fed = fed.restart_server(async |_| {}).await;
    join_c5(&mut fed, &all[5]).await;
    assert_stored_model(&fed.store, &all);
    // A member forgets a point: exact on the six clients.
    let gone = all[1].id(3);
    fed.forget(1, &[gone]).await;
    let mut rest = all.clone();
    rest[1] = rest[1].without(&[gone]).unwrap();
    assert_stored_model(&fed.store, &rest);
    // Restarted, the server knows the new client (the roster it was
    // started with does not name it), which forgets a point too.
    let mut fed = fed.restart_server(async |_| {}).await;
    let gone = all[5].id(0);
    fed.forget(5, &[gone]).await;
    rest[5] = rest[5].without(&[gone]).unwrap();
    assert_stored_model(&fed.store, &rest);
    fed.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_joins_a_trained_federation_exactly() {
    a_client_joins(Masks::SecAgg(SecAggOptions::new())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_joins_with_pairwise_masks_exactly() {
    a_client_joins(Masks::Pairwise).await;
}

/// Without `admit_new_clients` a name not on the roster is refused, and
/// nothing changes: the model is the five clients'.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_not_on_the_roster_is_refused_without_admission() {
    let all = data(6);
    let mut fed = Loopback::trained(config(Masks::Pairwise, &all), &all[..5]).await;
    let path = fed.store.with_file_name("c5.db");
    ClientStore::create(&path, "c5", &all[5]).unwrap();
    let c5 = fed.start_client("c5", &path);
    until_server(&mut fed.server, |e| {
        matches!(e, ServerEvent::Refused { reason } if reason.contains("c5 is not in the roster"))
    })
    .await;
    let _ = c5.stop().await;
    assert_stored_model(&fed.store, &all[..5]);
    fed.stop().await;
}

/// A client leaves (issue 29): its whole removal's round commits, it
/// signs its leave, the server keeps it and closes the session, and the
/// client stops. With pairwise masks every member of a ring must answer:
/// the next removal runs without the leaver only because every member
/// checked its leave. The model equals the in-process fit on the clients
/// that remain, before and after a server restart, and the store it left
/// refuses to run again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaves_and_the_rings_go_on_without_it() {
    let all = data(5);
    let mut fed = Loopback::trained(config(Masks::Pairwise, &all), &all).await;
    let path = fed.leave(4).await;
    assert_stored_model(&fed.store, &all[..4]);
    // A removal at a member: a pairwise ring of the four that remain.
    let gone = all[1].id(3);
    fed.forget(1, &[gone]).await;
    let mut rest = all[..4].to_vec();
    rest[1] = rest[1].without(&[gone]).unwrap();
    assert_stored_model(&fed.store, &rest);
    let mut fed = fed.restart_server(async |_| {}).await;
    let gone = all[2].id(0);
    fed.forget(2, &[gone]).await;
    rest[2] = rest[2].without(&[gone]).unwrap();
    assert_stored_model(&fed.store, &rest);
    // The store that left runs no client again.
    let again = fed.start_client_result("c4", &path);
    assert!(
        again
            .unwrap_err()
            .to_string()
            .contains("left the federation")
    );
    // A client stopped after the server took its leave, before it noted
    // it: the server refuses it as one that left, and it notes it then.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("DELETE FROM meta WHERE key = 'left'", [])
        .unwrap();
    drop(conn);
    let mut again = fed.start_client("c4", &path);
    until_client(&mut again, |e| matches!(e, ClientEvent::Left)).await;
    again.stop().await.unwrap();
    assert!(ClientStore::open(&path).unwrap().left().unwrap());
    fed.stop().await;
}

/// Issue 29's whole story over loopback: five clients train (one with
/// only part of its records), the records that arrive are added, a sixth
/// client joins, one leaves; after each step the model equals the
/// in-process federation's fit on the records present, bit for bit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_arrive_a_client_joins_another_leaves_and_the_model_stays_exact() {
    let all = data(6);
    let mut present = all[..5].to_vec();
    let later: Vec<_> = all[2].ids()[20..].to_vec();
    present[2] = all[2].without(&later).unwrap();
    let mut fed =
        Loopback::trained(config(Masks::SecAgg(SecAggOptions::new()), &all), &present).await;
    assert_stored_model(&fed.store, &present);
    fed.add(2, &all[2].only(&later).unwrap()).await;
    present[2] = all[2].clone();
    assert_stored_model(&fed.store, &present);
    fed.server_options.admit_new_clients = true;
    let mut fed = fed.restart_server(async |_| {}).await;
    join_c5(&mut fed, &all[5]).await;
    present.push(all[5].clone());
    assert_stored_model(&fed.store, &present);
    let (path, _) = &fed.clients[3];
    ClientStore::open(path).unwrap().request_leave().unwrap();
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::Left { id, .. } if *id == ClientId(3)),
    )
    .await;
    let kept: Vec<(ClientId, Dataset)> = (0u64..)
        .map(ClientId)
        .zip(present)
        .filter(|(c, _)| *c != ClientId(3))
        .collect();
    assert_stored_model_of(&fed.store, kept);
    fed.stop().await;
}

/// A lone join waits for the lone-update policy across processes, as a
/// lone removal does, through a server restart (a join is never a
/// catch-up round, which would run alone and show the server the new
/// client's whole histogram); a member's request then runs one round for
/// both, and the model equals the in-process fit on every client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lone_join_waits_for_another_request_across_a_restart() {
    let all = data(6);
    let total: usize = all.iter().map(Dataset::len).sum();
    let config = FederationConfig::new(3)
        .channel(Channel::scma(Masks::Pairwise))
        .min_updating_clients(2)
        .max_points(total as u64)
        .seed(11)
        .validate()
        .unwrap();
    let mut fed = Loopback::trained(config, &all[..5]).await;
    fed.server_options.admit_new_clients = true;
    let mut fed = fed.restart_server(async |_| {}).await;
    fed.start_new_client("c5", &all[5]);
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::Deferred { id, .. } if *id == ClientId(5)),
    )
    .await;
    // No round runs for the join alone, before or after a restart.
    let mut fed = fed.restart_server(async |_| {}).await;
    let quiet = tokio::time::timeout(std::time::Duration::from_secs(2), async {
        until_server(&mut fed.server, |e| {
            matches!(e, ServerEvent::RoundStarted { .. })
        })
        .await;
    })
    .await;
    assert!(quiet.is_err(), "a round ran for the lone join");
    assert_stored_model(&fed.store, &all[..5]);
    // A member's removal: one round for both.
    let gone = all[0].id(1);
    fed.forget(0, &[gone]).await;
    let mut rest = all.clone();
    rest[0] = rest[0].without(&[gone]).unwrap();
    assert_stored_model(&fed.store, &rest);
    fed.stop().await;
}

/// A member offline when a client joins (issue 29): the join's round runs
/// without it (a SecAgg dropout), and when it comes back it checks the
/// admission it missed, takes the setup that admits the new client, and
/// its catch-up round brings its data back; the model is then the
/// in-process fit on all six clients.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_offline_at_a_join_takes_the_new_setup_when_it_comes_back() {
    let all = data(6);
    let total: usize = all.iter().map(Dataset::len).sum();
    let config = FederationConfig::new(3)
        .channel(Channel::scma(Masks::SecAgg(
            SecAggOptions::new().dropout(0.25),
        )))
        .min_updating_clients(1)
        .max_points(total as u64)
        .seed(11)
        .validate()
        .unwrap();
    let mut fed = Loopback::trained(config, &all[..5]).await;
    fed.server_options.admit_new_clients = true;
    let mut fed = fed.restart_server(async |_| {}).await;
    // Client c0 is offline while c5 joins.
    let (path0, c0) = fed.clients.remove(0);
    c0.stop().await.unwrap();
    join_c5(&mut fed, &all[5]).await;
    let c0 = fed.start_client("c0", &path0);
    fed.clients.insert(0, (path0, c0));
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::RoundCommitted(r) if r.included.contains(&ClientId(0))),
    )
    .await;
    // The in-process fit, with no dropout simulated (every client
    // answered the last round).
    let stored = mufc_store::Store::open(&fed.store).unwrap();
    let config = (stored.config().clone().into_builder())
        .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
        .validate()
        .unwrap();
    let fit = mufc::Federation::new(all.clone(), &config).unwrap();
    let model = stored.federation().server();
    assert_eq!(model.counts(), fit.server().counts());
    assert_eq!(model.centroids(), fit.server().centroids());
    fed.stop().await;
}

/// Two clients join at once (two sessions asking together): each gets an
/// id of its own, in the order the server took them, and the model is
/// then the in-process fit on all seven clients.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_join_at_once() {
    let all = data(7);
    let mut fed = Loopback::trained(config(Masks::Pairwise, &all), &all[..5]).await;
    fed.server_options.admit_new_clients = true;
    let mut fed = fed.restart_server(async |_| {}).await;
    for (i, name) in [(5, "c5"), (6, "c6")] {
        fed.start_new_client(name, &all[i]);
    }
    let mut admitted = std::collections::BTreeMap::new();
    until_server(&mut fed.server, |e| {
        if let ServerEvent::Admitted { id, name } = e {
            admitted.insert(name.clone(), *id);
        }
        matches!(e, ServerEvent::RoundCommitted(r)
            if r.included.contains(&ClientId(5)) && r.included.contains(&ClientId(6)))
    })
    .await;
    // The ids follow the order of admission; the data follows the ids.
    let mut present = all[..5].to_vec();
    let mut joined: Vec<(ClientId, usize)> = [("c5", 5), ("c6", 6)]
        .map(|(n, i)| (admitted[n], i))
        .to_vec();
    joined.sort_unstable();
    assert_eq!(
        joined.iter().map(|(c, _)| *c).collect::<Vec<_>>(),
        [ClientId(5), ClientId(6)]
    );
    present.extend(joined.iter().map(|(_, i)| all[*i].clone()));
    assert_stored_model(&fed.store, &present);
    fed.stop().await;
}

/// With pairwise masks every member of a ring must answer: a client that
/// joins while a member is offline is admitted, but no round runs
/// without that member (the model stays the five clients'); once it is
/// back, one round includes both and the model is the in-process fit on
/// the six clients.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pairwise_join_waits_for_a_member_that_is_offline() {
    let all = data(6);
    let mut fed = Loopback::trained(config(Masks::Pairwise, &all), &all[..5]).await;
    fed.server_options.admit_new_clients = true;
    let mut fed = fed.restart_server(async |_| {}).await;
    let (path0, c0) = fed.clients.remove(0);
    c0.stop().await.unwrap();
    fed.start_new_client("c5", &all[5]);
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::Admitted { id, .. } if *id == ClientId(5)),
    )
    .await;
    assert_stored_model(&fed.store, &all[..5]);
    let c0 = fed.start_client("c0", &path0);
    fed.clients.insert(0, (path0, c0));
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::RoundCommitted(r) if r.included.len() == 6),
    )
    .await;
    assert_stored_model(&fed.store, &all);
    fed.stop().await;
}

/// A client joins while another leaves (SecAgg): the leave's round and
/// the join's are served as they come, and the model is then the
/// in-process fit on the clients that remain, each under its own id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_joins_while_another_leaves() {
    let all = data(6);
    let secagg = Masks::SecAgg(SecAggOptions::new());
    let mut fed = Loopback::trained(config(secagg, &all), &all[..5]).await;
    fed.server_options.admit_new_clients = true;
    let mut fed = fed.restart_server(async |_| {}).await;
    let (leaving, _) = &fed.clients[4];
    ClientStore::open(leaving).unwrap().request_leave().unwrap();
    fed.start_new_client("c5", &all[5]);
    let (mut left, mut joined) = (false, false);
    until_server(&mut fed.server, |e| {
        left |= matches!(e, ServerEvent::Left { id, .. } if *id == ClientId(4));
        joined |= matches!(e, ServerEvent::RoundCommitted(r) if r.included.contains(&ClientId(5)));
        left && joined
    })
    .await;
    let kept: Vec<(ClientId, Dataset)> = (0u64..)
        .map(ClientId)
        .zip(all)
        .filter(|(c, _)| *c != ClientId(4))
        .collect();
    assert_stored_model_of(&fed.store, kept);
    fed.stop().await;
}
