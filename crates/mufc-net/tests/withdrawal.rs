//! The minimum aggregate across processes (docs/threat-model.md P4): a
//! client that leaves, or forgets every point, says so with its request;
//! once fewer than `min_clients` clients with points are left, but some,
//! the server withdraws its model instead of running the round that would
//! decode their sum. The withdrawal is in the store before anyone hears
//! it, survives a restart, and serves every request after it; the leaver
//! then leaves. The clients that emptied themselves are kept in the
//! server's store: a server restarted counts them out before they connect.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::Path;
use std::time::Duration;

use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions};
use mufc_net::client::ClientEvent;
use mufc_net::client_store::{ClientStore, RequestStatus};
use mufc_net::server::{ServerEvent, ServerHandle};
use seeding::Dataset;

use super::federation::{Loopback, assert_stored_model_of, data, until_client};

/// Four clients, a minimum aggregate of three, masks `masks`.
fn config(masks: Masks) -> mufc::ValidConfig {
    FederationConfig::new(3)
        .channel(Channel::scma(masks))
        .min_clients(3)
        .min_updating_clients(1)
        .seed(13)
        .validate()
        .unwrap()
}

/// The server's events until `want`; every round that commits or starts
/// meanwhile, in order.
async fn server_until(
    server: &mut ServerHandle,
    mut want: impl FnMut(&ServerEvent) -> bool,
) -> Vec<ServerEvent> {
    let mut seen = Vec::new();
    tokio::time::timeout(Duration::from_secs(120), async {
        loop {
            let ev = server.next_event().await.expect("the server stopped");
            let done = want(&ev);
            if matches!(
                ev,
                ServerEvent::RoundStarted { .. } | ServerEvent::RoundCommitted(_)
            ) {
                seen.push(ev);
            }
            if done {
                return;
            }
        }
    })
    .await
    .expect("the server did not get there in time");
    seen
}

/// Waits until `n` clients connected to the server.
async fn connected(server: &mut ServerHandle, n: usize) {
    let mut seen = std::collections::BTreeSet::new();
    server_until(server, |e| {
        if let ServerEvent::Connected { id, .. } = e {
            seen.insert(*id);
        }
        seen.len() == n
    })
    .await;
}

/// Client `c` forgets `point`; waits until the request is served by
/// the withdrawal: its event, and its store's status. The request.
async fn served_by_withdrawal(fed: &mut Loopback, c: usize, point: seeding::PointId) -> u64 {
    let (path, client) = &mut fed.clients[c];
    let request = ClientStore::open(&*path)
        .unwrap()
        .request(&[point])
        .unwrap();
    until_client(client, |e| {
        matches!(e, ClientEvent::Withdrawn { acknowledged, .. } if acknowledged.contains(&request))
    })
    .await;
    let status = ClientStore::open(&*path).unwrap().status(request).unwrap();
    assert!(
        matches!(&status, Some(RequestStatus::Withdrawn { reason }) if reason.contains("minimum aggregate")),
        "{status:?}"
    );
    request
}

/// The audit rows of the server's store: outcome, client, request.
fn audit(store: &Path) -> Vec<(String, String, i64)> {
    let conn = rusqlite::Connection::open(store).unwrap();
    let mut stmt = conn
        .prepare("SELECT outcome, client, request FROM audit ORDER BY rowid")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Four clients, minimum three. Client 3 forgets every point (not a
/// leave): three are left with points, and its round runs. Client 3
/// stops, and the server restarts: its store says client 3 holds no
/// point. Client 2 leaves: two would be left, so
/// the model is withdrawn with no round; client 2's request is served by
/// it and it leaves. Later requests are served by the withdrawal, before
/// and after another restart, and no round runs again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leave_below_the_minimum_withdraws_the_model_without_a_round() {
    leave_below_the_minimum(Masks::SecAgg(SecAggOptions::new())).await;
}

async fn leave_below_the_minimum(masks: Masks) {
    let case = format!("masks {masks:?}");
    let all = data(4);
    let mut fed = Loopback::trained(config(masks), &all).await;

    let every: Vec<_> = all[3].ids().to_vec();
    fed.forget(3, &every).await;
    let ids = |c: u64| ClientId(c);
    let rest: Vec<(ClientId, Dataset)> = (0u64..)
        .zip(all[..3].iter().cloned())
        .map(|(c, d)| (ids(c), d))
        .collect();
    assert_stored_model_of(&fed.store, rest.clone());

    // Client 3 stays away: the restarted server knows from its store
    // that it holds no point.
    let (_, c3) = fed.clients.remove(3);
    c3.stop().await.unwrap();
    let mut fed = fed.restart_server(async |_| {}).await;
    connected(&mut fed.server, 3).await;
    let leaving = fed.clients[2].0.clone();
    let request = ClientStore::open(&leaving)
        .unwrap()
        .request_leave()
        .unwrap()
        .unwrap();
    let rounds = server_until(
        &mut fed.server,
        |e| matches!(e, ServerEvent::Left { id, .. } if *id == ids(2)),
    )
    .await;
    assert!(rounds.is_empty(), "{case}: a round ran: {rounds:?}");
    let stored = mufc_store::Store::open(&fed.store).unwrap();
    let w = stored
        .federation()
        .withdrawal()
        .cloned()
        .expect("withdrawn in the store");
    assert_eq!(
        (w.clients, w.min_clients, w.request),
        (2, 3, request),
        "{case}"
    );
    assert!(stored.federation().server().counts().is_empty(), "{case}");
    let (_, mut leaver) = fed.clients.remove(2);
    until_client(&mut leaver, |e| matches!(e, ClientEvent::Left)).await;
    leaver.stop().await.unwrap();
    let status = ClientStore::open(&leaving)
        .unwrap()
        .status(request)
        .unwrap();
    assert!(
        matches!(status, Some(RequestStatus::Withdrawn { .. })),
        "{case}: {status:?}"
    );

    // Every later request is served by the withdrawal, audited, and runs
    // no round, before and after a restart.
    let asked = served_by_withdrawal(&mut fed, 0, rest[0].1.id(0)).await;
    let burst = burst_served_by_few_writes(&mut fed, &rest[0].1, &case).await;
    let mut fed = fed.restart_server(async |_| {}).await;
    let again = served_by_withdrawal(&mut fed, 1, rest[1].1.id(1)).await;
    let rows = audit(&fed.store);
    let withdrawn: Vec<(String, i64)> = (rows.iter())
        .filter(|(o, c, r)| {
            o == "withdrawn" && !(c == "c0" && u64::try_from(*r).is_ok_and(|r| burst.contains(&r)))
        })
        .map(|(_, c, r)| (c.clone(), *r))
        .collect();
    assert_eq!(
        withdrawn,
        [
            ("c2".into(), request as i64),
            ("c0".into(), asked as i64),
            ("c1".into(), again as i64)
        ],
        "{case}: {rows:?}"
    );
    // The withdrawal moved the model version once.
    let version = mufc_store::Store::open(&fed.store).unwrap().model_version();
    assert_eq!(version, stored.model_version(), "{case}");
    fed.stop().await;
}

/// A round of whole histograms whose absent member is a dropout decodes
/// the sum of the clients that answered. Five clients, minimum three:
/// clients 3 and 4 forget every point (three are left with points, no
/// withdrawal), then client 0 stops. Client 1's removal waits the join
/// timeout and runs without client 0: four answer, two of them hold
/// points. The server fails the round before it unmasks anything, and
/// runs it once client 0 is back; the model is then retraining's on the
/// records left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_whose_answering_clients_with_points_are_too_few_is_not_unmasked() {
    let all = data(5);
    let mut fed = Loopback::trained(config(Masks::SecAgg(SecAggOptions::new())), &all).await;
    for c in [3, 4] {
        let every: Vec<_> = all[c].ids().to_vec();
        fed.forget(c, &every).await;
    }
    let (c0_path, c0) = fed.clients.remove(0);
    c0.stop().await.unwrap();
    let point = all[1].id(2);
    let (path, _) = &fed.clients[0];
    let request = ClientStore::open(path).unwrap().request(&[point]).unwrap();
    let mut failed = None;
    let rounds = server_until(&mut fed.server, |e| match e {
        ServerEvent::RoundFailed {
            round: Some(n),
            reason,
            ..
        } => {
            failed = Some((*n, reason.clone()));
            true
        }
        _ => false,
    })
    .await;
    let (n, reason) = failed.unwrap();
    assert!(
        reason.contains("2 of the clients that answered hold points"),
        "{reason}"
    );
    assert!(
        !rounds
            .iter()
            .any(|e| matches!(e, ServerEvent::RoundCommitted(r) if r.round == n)),
        "{rounds:?}"
    );
    let status = ClientStore::open(path).unwrap().status(request).unwrap();
    assert_eq!(status, Some(RequestStatus::Applied));

    let c0 = fed.start_client("c0", &c0_path);
    fed.clients.insert(0, (c0_path, c0));
    let (_, client) = &mut fed.clients[1];
    until_client(client, |e| {
        matches!(e, ClientEvent::RoundEnded { acknowledged, .. } if acknowledged.contains(&request))
    })
    .await;
    let left: Vec<(ClientId, Dataset)> = vec![
        (ClientId(0), all[0].clone()),
        (ClientId(1), all[1].without(&[point]).unwrap()),
        (ClientId(2), all[2].clone()),
    ];
    assert_stored_model_of(&fed.store, left);
    fed.stop().await;
}

/// Client 0 makes twenty requests at once, once the model is withdrawn
/// (its points `data`): each is served by the withdrawal, with few writes
/// (the queue keeps one entry a client, served at most once a pause). The
/// requests.
async fn burst_served_by_few_writes(fed: &mut Loopback, data: &Dataset, case: &str) -> Vec<u64> {
    let (path, client) = &mut fed.clients[0];
    let store = ClientStore::open(&*path).unwrap();
    let burst: Vec<u64> = (data.ids()[1..21].iter())
        .map(|p| store.request(&[*p]).unwrap())
        .collect();
    let last = *burst.last().unwrap();
    until_client(client, |e| {
        matches!(e, ClientEvent::Withdrawn { acknowledged, .. } if acknowledged.contains(&last))
    })
    .await;
    for r in &burst {
        let status = store.status(*r).unwrap();
        assert!(
            matches!(status, Some(RequestStatus::Withdrawn { .. })),
            "{case}: {r} {status:?}"
        );
    }
    let rows = audit(&fed.store)
        .into_iter()
        .filter(|(o, c, _)| o == "withdrawn" && c == "c0")
        .count();
    assert!(
        rows <= 6,
        "{case}: {rows} audit rows for a burst of 20 requests"
    );
    burst
}
