//! The same parties across processes as in one process (issue 27): for
//! every mask source (dealt, pairwise, SecAgg) and topology (flat, a
//! tree of two groups), a federation over loopback trains, then serves
//! requests drawn at random (a client's points, a seed among them with
//! even odds, of either group) and a client's removal of every point it
//! holds (its whole data); after each acknowledged request every node of
//! the server's stored model equals, bit for bit, the parties driven in
//! one process ([`InProcess`]) that served the same requests, and at the
//! end training from scratch on the points that remain. The lone-update
//! policy holds the same requests back across processes as in one
//! process, and serves two requests asked at once alike. Every wait is
//! bounded; the draw is named in every failure.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::expect_used)]

use mufc::remote::InProcess;
use mufc::{
    Channel, ClientId, FederationConfig, Layout, Masks, NodeId, RemovalRequest, SecAggOptions,
};
use mufc_store::Store;
use rand::RngExt;
use seeding::{Dataset, PointId};

use crate::dealer::Keys;
use crate::federation::{Loopback, data, until_client, until_server};
use mufc_net::client::ClientEvent;
use mufc_net::client_store::ClientStore;
use mufc_net::server::ServerEvent;

/// Every node of the model stored at `fed`'s server is `parties`'s.
fn assert_same_model(fed: &Loopback, parties: &InProcess, what: &str) {
    let stored = Store::open(&fed.store).unwrap();
    let stored = stored.federation();
    let nodes = stored.layout().map_or(1, Layout::nodes);
    for n in 0..nodes {
        let (mine, theirs) = (
            stored.node(NodeId(n)).unwrap(),
            parties.server().node(NodeId(n)).unwrap(),
        );
        assert_eq!(mine.counts(), theirs.counts(), "{what}: node {n}");
        assert_eq!(mine.centroids(), theirs.centroids(), "{what}: node {n}");
    }
}

/// Every node of the model stored at `fed`'s server equals training from
/// scratch on `rest` (a client with no point left takes no part), in
/// the groups of `parties`' setup without those clients, bit for bit.
/// SecAgg with no dropout: the masks cancel in the sum, so the mask
/// source cannot change the model.
fn assert_equals_retraining(
    fed: &Loopback,
    parties: &InProcess,
    rest: &[(ClientId, Dataset)],
    what: &str,
) {
    let kept: Vec<(ClientId, Dataset)> = (rest.iter())
        .filter(|(_, d)| !d.is_empty())
        .cloned()
        .collect();
    let config = (parties.server().setup().config().clone().into_builder())
        .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
        .validate()
        .unwrap();
    let retrained = match parties.server().setup().layout() {
        None => InProcess::train(kept, &config),
        Some(layout) => {
            let holds = |c: &ClientId| kept.iter().any(|(k, _)| k == c);
            let groups = (layout.groups().iter())
                .map(|g| g.iter().copied().filter(holds).collect())
                .collect();
            let smaller = Layout::from_groups(groups, layout.fan_out()).unwrap();
            InProcess::train_with_layout(kept, &config, smaller)
        }
    };
    let retrained = retrained.unwrap_or_else(|e| panic!("{what}: retraining: {e}"));
    assert_same_model(fed, &retrained, &format!("{what}: retraining"));
}

/// A random request of one client, not among `spared`, that holds more
/// than three points: one to three of its points, and one of its seeds
/// among them always when `seed`, else with even odds; named in `what`.
fn draw_request(
    rng: &mut impl RngExt,
    parties: &InProcess,
    spared: &[usize],
    seed: bool,
    what: &mut String,
) -> (usize, Vec<PointId>) {
    let live: Vec<usize> = (0..parties.clients().len())
        .filter(|c| !spared.contains(c) && parties.clients()[*c].data().len() > 3)
        .collect();
    let c = live[rng.random_range(0..live.len())];
    let client = &parties.clients()[c];
    let held = client.data().ids();
    let mut ids: std::collections::BTreeSet<PointId> = (0..rng.random_range(1..=3))
        .map(|_| held[rng.random_range(0..held.len())])
        .collect();
    if (seed || rng.random_bool(0.5)) && !client.seeds().is_empty() {
        ids.insert(client.seeds()[rng.random_range(0..client.seeds().len())]);
    }
    let ids: Vec<PointId> = ids.into_iter().collect();
    what.push_str(&format!("; client {c} forgets {ids:?}"));
    (c, ids)
}

/// Client 2 (which forgets every point last) and, with groups, the
/// clients of client `c`'s group.
fn same_group(parties: &InProcess, c: usize) -> Vec<usize> {
    let id = ClientId(c as u64);
    let mut spared: Vec<usize> = match parties.server().setup().layout() {
        Some(l) => (l.groups().iter().find(|g| g.contains(&id)).into_iter())
            .flatten()
            .filter_map(|c| usize::try_from(c.0).ok())
            .collect(),
        None => Vec::new(),
    };
    spared.push(2);
    spared
}

/// A federation of `data` under `config` over loopback, trained (with
/// its dealer when the masks are dealt).
async fn trained(
    config: mufc::ValidConfig,
    data: &[Dataset],
) -> (Loopback, Option<mufc_net::dealer::DealerHandle>) {
    if matches!(
        config.channel().as_scma().map(mufc::Scma::masks),
        Some(Masks::Dealer)
    ) {
        let (fed, dealer) = Keys::new(data.len()).started(config, data).await;
        return (fed, Some(dealer));
    }
    let mut fed = Loopback::start_with(config, data, Vec::new(), async |_| {}).await;
    until_server(&mut fed.server, |e| {
        matches!(e, ServerEvent::Trained { .. })
    })
    .await;
    (fed, None)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mask_source_and_topology_across_processes_is_the_parties_in_one_process() {
    let sources = [
        Masks::Dealer,
        Masks::Pairwise,
        Masks::SecAgg(SecAggOptions::new()),
    ];
    let topologies = [
        mufc::Topology::Flat,
        mufc::Topology::Tree {
            group_size: 3,
            fan_out: 2,
        },
    ];
    let data = data(6);
    let ids: Vec<(ClientId, Dataset)> = (data.iter().enumerate())
        .map(|(i, d)| (ClientId(i as u64), d.clone()))
        .collect();
    let mut rng = testdata::rng("mufc-net-parties");
    for masks in sources {
        for topology in topologies {
            let mut what = format!("{masks:?}, {topology:?}");
            let config = FederationConfig::new(3)
                .channel(Channel::scma(masks))
                .topology(topology)
                // Each request is served on its own (the lone-update
                // policy across processes is tested in mufc-cli).
                .min_updating_clients(1)
                // Client 2's group keeps two clients with points once it
                // forgets every one: in process the driver would withdraw
                // the model below the minimum, and across processes a
                // client's leave is not yet told to the server (issue 29).
                .min_clients(2)
                .seed(17)
                .validate()
                .unwrap();
            let (mut fed, dealer) = trained(config.clone(), &data).await;
            let mut parties = InProcess::train(ids.clone(), &config).unwrap();
            assert_same_model(&fed, &parties, &format!("{what}: training"));
            // Two requests drawn at random, then client 2 forgets every
            // point it holds. The first removes a seed (its client
            // reseeds); with a tree, the second is of the other group.
            let mut rest = ids.clone();
            let mut first = None;
            for r in 0..3 {
                let (c, points) = match (r, first) {
                    (0, _) => draw_request(&mut rng, &parties, &[2], true, &mut what),
                    (1, Some(f)) => {
                        let spared = same_group(&parties, f);
                        draw_request(&mut rng, &parties, &spared, false, &mut what)
                    }
                    _ => (2, data[2].ids().to_vec()),
                };
                first = first.or(Some(c));
                fed.forget(c, &points).await;
                // The first request removes a seed (the client reseeds
                // from it, Algorithm 3).
                let seeds = parties.clients()[c].seeds();
                assert!(r > 0 || points.iter().any(|p| seeds.contains(p)), "{what}");
                let request = RemovalRequest::points(ClientId(c as u64), points.clone());
                parties.remove(&request).unwrap();
                let d = &mut rest[c].1;
                *d = d.without(&points).unwrap();
                assert_same_model(&fed, &parties, &format!("{what}: request {r}"));
            }
            assert_equals_retraining(&fed, &parties, &rest, &what);
            if let Some(d) = dealer {
                d.stop().await.unwrap();
            }
            fed.stop().await;
        }
    }
}

/// Client `c`'s store records a request to forget `ids` (its client
/// sends it when it next can); the request's number.
fn ask(fed: &Loopback, c: usize, ids: &[PointId]) -> u64 {
    ClientStore::open(&fed.clients[c].0)
        .unwrap()
        .request(ids)
        .unwrap()
}

/// The removal rounds the server committed since its events were last
/// read, waiting up to 300 ms for the next event (the server reports a
/// commit right after it tells the clients).
async fn removal_rounds(fed: &mut Loopback) -> usize {
    let mut rounds = 0;
    while let Ok(Some(e)) = tokio::time::timeout(
        std::time::Duration::from_millis(300),
        fed.server.next_event(),
    )
    .await
    {
        rounds += usize::from(matches!(e, ServerEvent::RoundCommitted(r) if !r.training));
    }
    rounds
}

/// Waits until client `c` says its request `request` is acknowledged.
async fn acknowledged(fed: &mut Loopback, c: usize, request: u64) {
    until_client(&mut fed.clients[c].1, |e| {
        matches!(e, ClientEvent::RoundEnded { acknowledged, .. } if acknowledged.contains(&request))
    })
    .await;
}

/// The lone-update policy across processes is the parties' in one
/// process: with a minimum of two, one client's request waits (the
/// server says so), and the request of a second client of the same group
/// brings one round that serves both; two requests asked at once are
/// served alike. Each time the stored model is `InProcess`'s after the
/// same requests, bit for bit, flat and in a tree, with dealt masks (a
/// change round) and SecAgg.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lone_update_policy_across_processes_is_the_parties_in_one_process() {
    let data = data(6);
    let ids: Vec<(ClientId, Dataset)> = (data.iter().enumerate())
        .map(|(i, d)| (ClientId(i as u64), d.clone()))
        .collect();
    let tree = mufc::Topology::Tree {
        group_size: 3,
        fan_out: 2,
    };
    for (masks, topology) in [
        (Masks::Dealer, mufc::Topology::Flat),
        (Masks::SecAgg(SecAggOptions::new()), tree),
    ] {
        let what = format!("{masks:?}, {topology:?}");
        let config = FederationConfig::new(3)
            .channel(Channel::scma(masks))
            .topology(topology)
            .min_updating_clients(2)
            .seed(19)
            .validate()
            .unwrap();
        let (mut fed, dealer) = trained(config.clone(), &data).await;
        let mut parties = InProcess::train(ids.clone(), &config).unwrap();
        // Client 0 alone: it waits, in both.
        let first = ask(&fed, 0, &[PointId(2)]);
        until_server(&mut fed.server, |e| {
            matches!(
                e,
                ServerEvent::Deferred {
                    id: ClientId(0),
                    ..
                }
            )
        })
        .await;
        let request = RemovalRequest::points(ClientId(0), vec![PointId(2)]);
        let report = parties.remove(&request).unwrap();
        assert!(report.outcome.is_deferred(), "{what}");
        assert!(parties.last_rounds().is_empty(), "{what}");
        assert_same_model(&fed, &parties, &format!("{what}: one waits"));
        // Client 1 (the same group) completes it: one round for both.
        let second = ask(&fed, 1, &[PointId(5)]);
        acknowledged(&mut fed, 0, first).await;
        acknowledged(&mut fed, 1, second).await;
        assert_eq!(
            removal_rounds(&mut fed).await,
            1,
            "{what}: one round for both"
        );
        let request = RemovalRequest::points(ClientId(1), vec![PointId(5)]);
        assert_eq!(parties.remove(&request).unwrap().requests, [1, 2], "{what}");
        assert_eq!(parties.last_rounds().len(), 1, "{what}");
        assert_same_model(&fed, &parties, &format!("{what}: both served"));
        // Two requests of one group asked at once.
        let (a, b) = (ask(&fed, 3, &[PointId(7)]), ask(&fed, 4, &[PointId(8)]));
        acknowledged(&mut fed, 3, a).await;
        acknowledged(&mut fed, 4, b).await;
        let request = RemovalRequest::points(ClientId(3), vec![PointId(7)])
            .with_points(ClientId(4), vec![PointId(8)]);
        parties.remove(&request).unwrap();
        assert!(parties.waiting().is_empty(), "{what}");
        assert_same_model(&fed, &parties, &format!("{what}: asked at once"));
        if let Some(d) = dealer {
            d.stop().await.unwrap();
        }
        fed.stop().await;
    }
}

/// A server that announces masks derived from the federation seed
/// (`insecure_deterministic_masks`: anyone who knows the seed could
/// unmask every message) gets no message from any client across
/// processes: every client refuses the round before it sends anything
/// (its operator did not allow such masks), and no round trains, with
/// pairwise masks and with SecAgg. The same refusal by the parties in one
/// process, the dealer's included, is
/// `crates/mufc/tests/remote/parties_plain.rs::a_server_cannot_make_the_masks_derive_from_the_seed`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_across_processes_refuse_masks_derived_from_the_seed() {
    let data = data(3);
    for masks in [Masks::Pairwise, Masks::SecAgg(SecAggOptions::new())] {
        let what = format!("{masks:?}");
        let config = FederationConfig::new(3)
            .channel(Channel::scma(masks))
            .insecure_deterministic_masks(true)
            .seed(23)
            .validate()
            .unwrap();
        let mut fed = Loopback::start_with(config, &data, Vec::new(), async |_| {}).await;
        for c in 0..data.len() {
            until_client(&mut fed.clients[c].1, |e| {
                matches!(e, ClientEvent::RefusedRound { reason, .. }
                    if reason.contains("derives every mask from the federation seed"))
            })
            .await;
        }
        // No round trained: the server has no model to store.
        let trained = tokio::time::timeout(std::time::Duration::from_millis(500), async {
            while let Some(e) = fed.server.next_event().await {
                if matches!(e, ServerEvent::Trained { .. }) {
                    return true;
                }
            }
            false
        })
        .await;
        assert!(!trained.unwrap_or(false), "{what}: a round trained");
        fed.stop().await;
    }
}
