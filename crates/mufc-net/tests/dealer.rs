//! Dealt masks over loopback (issue 27: every mask source runs across
//! processes): the dealer is a party of its own that connects to the
//! server with its certificate and answers each round's deal request. A
//! federation trains and forgets exactly (the removal a change round); a
//! dealer that is gone fails the round, which changes nothing, and the
//! round runs once it is back; no client can open the dealer's session,
//! and the dealer cannot join as a client.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::expect_used)]

use std::sync::Arc;

use mufc::remote::Agreement;
use mufc::{Channel, ClientId, FederationConfig, Masks};
use mufc_net::client_store::ClientStore;
use mufc_net::dealer::{
    DealerEvent, DealerHandle, DealerOptions, DealerPairing, KeySource, start_dealer,
};
use mufc_net::proto::dealer_message::Body as DealerBody;
use mufc_net::proto::{DealerHello, DealerMessage};
use mufc_net::server::ServerEvent;
use mufc_net::tls::client_config;
use seeding::PointId;
use syndrome_agg::masking::pairwise::MaskKeyPair;
use tokio_stream::wrappers::ReceiverStream;

use crate::federation::{LIMIT, Loopback, assert_stored_model, data, until_server};
use crate::groups::{assert_stored_groups, without};

/// The dealer's key pair and each client's, from the operating system.
pub(crate) struct Keys {
    dealer: Arc<MaskKeyPair>,
    clients: Vec<Arc<MaskKeyPair>>,
}

impl Keys {
    pub(crate) fn new(n: usize) -> Self {
        let fresh = || Arc::new(MaskKeyPair::generate(&mut rand::rng()));
        Self {
            dealer: fresh(),
            clients: (0..n).map(|_| fresh()).collect(),
        }
    }

    fn pairings(&self) -> Vec<DealerPairing> {
        (self.clients.iter())
            .map(|own| DealerPairing {
                own: own.clone(),
                dealer: self.dealer.public_key(),
            })
            .collect()
    }

    /// Starts the dealer of `fed` (its certificate from `fed`'s
    /// authority) and waits until the server took its session.
    async fn start_dealer(&self, fed: &mut Loopback) -> DealerHandle {
        self.start_dealer_with(fed, self.clients.len(), None, None)
            .await
    }

    /// [`Self::start_dealer`] with the keys of the first `pinned` clients,
    /// `later` the source of those pinned since, and the `agreement` it
    /// holds the setups to.
    async fn start_dealer_with(
        &self,
        fed: &mut Loopback,
        pinned: usize,
        later: Option<KeySource>,
        agreement: Option<Agreement>,
    ) -> DealerHandle {
        let public = (self.clients.iter().enumerate())
            .take(pinned)
            .map(|(i, k)| (ClientId(i as u64), k.public_key()))
            .collect();
        let cert = fed.ca.issue_dealer().unwrap();
        let tls = client_config(fed.ca.cert_pem(), &cert.cert_pem, &cert.key_pem).unwrap();
        fed.dealer_cert = Some(cert.cert_pem.clone());
        let mut options = DealerOptions::new(&fed.addr, public);
        options.reconnect = std::time::Duration::from_millis(100);
        options.later_keys = later;
        options.agreement = agreement;
        let mut dealer = start_dealer(options, &self.dealer, tls).unwrap();
        tokio::time::timeout(LIMIT, async {
            assert_eq!(dealer.next_event().await, Some(DealerEvent::Connected));
        })
        .await
        .unwrap();
        until_server(&mut fed.server, |e| {
            matches!(e, ServerEvent::DealerConnected)
        })
        .await;
        dealer
    }
}

impl Keys {
    /// A flat federation of `data` with dealt masks ([`Self::started`]).
    async fn trained(&self, data: &[seeding::Dataset]) -> (Loopback, DealerHandle) {
        self.started(dealt_config(), data).await
    }

    /// A federation of `data` under `config`, its dealer connected before
    /// the clients, once the model is trained (every group's round
    /// committed).
    pub(crate) async fn started(
        &self,
        config: mufc::ValidConfig,
        data: &[seeding::Dataset],
    ) -> (Loopback, DealerHandle) {
        let mut dealer = None;
        let mut fed = Loopback::start_with(config, data, self.pairings(), async |fed| {
            dealer = Some(self.start_dealer(fed).await);
        })
        .await;
        until_server(&mut fed.server, |e| {
            matches!(e, ServerEvent::Trained { .. })
        })
        .await;
        (fed, dealer.unwrap())
    }
}

fn dealt_config() -> mufc::ValidConfig {
    FederationConfig::new(3)
        .channel(Channel::scma(Masks::Dealer))
        .min_updating_clients(1)
        .seed(13)
        .validate()
        .unwrap()
}

/// Training and a removal with dealt masks equal the in-process
/// federation, bit for bit; the removal is a change round.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dealt_federation_trains_and_forgets_exactly() {
    let data = data(5);
    let keys = Keys::new(data.len());
    let (mut fed, dealer) = keys.trained(&data).await;
    assert_stored_model(&fed.store, &data);
    fed.forget(2, &[PointId(4)]).await;
    let mut rest = data;
    rest[2] = rest[2].without(&[PointId(4)]).unwrap();
    let mut changes = None;
    until_server(&mut fed.server, |e| {
        if let ServerEvent::RoundStarted { changes: c, .. } = e {
            changes = Some(*c);
        }
        matches!(e, ServerEvent::RoundCommitted(r) if !r.training)
    })
    .await;
    assert_eq!(changes, Some(true));
    assert_stored_model(&fed.store, &rest);
    let mut dealer = dealer;
    let mut dealt = Vec::new();
    while let Ok(Some(e)) =
        tokio::time::timeout(std::time::Duration::from_millis(100), dealer.next_event()).await
    {
        dealt.push(e);
    }
    // Training and the removal, both dealt, and nothing refused.
    assert_eq!(
        dealt,
        [
            DealerEvent::Dealt { round: 0 },
            DealerEvent::Dealt { round: 1 }
        ]
    );
    dealer.stop().await.unwrap();
    fed.stop().await;
}

/// With groups, every group's training round is dealt, a removal is a
/// dealt change round of its group alone, and every node's model is the
/// in-process tree's, bit for bit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dealt_groups_train_and_forget_in_one_group_exactly() {
    let data = data(6);
    let keys = Keys::new(data.len());
    let config = (dealt_config().into_builder())
        .topology(mufc::Topology::Groups { size: 3 })
        .validate()
        .unwrap();
    let (mut fed, dealer) = keys.started(config, &data).await;
    assert_stored_model(&fed.store, &data);
    fed.forget(4, &[PointId(2)]).await;
    let mut rest = data;
    rest[4] = rest[4].without(&[PointId(2)]).unwrap();
    let mut started = None;
    until_server(&mut fed.server, |e| {
        if let ServerEvent::RoundStarted {
            group,
            clients,
            changes,
            ..
        } = e
        {
            started = Some((*group, clients.clone(), *changes));
        }
        matches!(e, ServerEvent::RoundCommitted(r) if !r.training)
    })
    .await;
    let group1 = vec![ClientId(3), ClientId(4), ClientId(5)];
    assert_eq!(started, Some((Some(1), group1, true)));
    assert_stored_model(&fed.store, &rest);
    dealer.stop().await.unwrap();
    fed.stop().await;
}

/// With the dealer gone, a removal's round waits: none starts (no round
/// number is spent), the server says why, and the model is unchanged;
/// once the dealer is back, the round runs and commits exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_round_waits_for_the_dealer_and_changes_nothing_without_it() {
    let data = data(5);
    let keys = Keys::new(data.len());
    let (mut fed, dealer) = keys.trained(&data).await;
    dealer.stop().await.unwrap();
    until_server(&mut fed.server, |e| {
        matches!(e, ServerEvent::DealerDisconnected)
    })
    .await;
    let path = fed.clients[1].0.clone();
    let request = ClientStore::open(&path)
        .unwrap()
        .request(&[PointId(5)])
        .unwrap();
    // The round waits for the dealer: it does not start (no round number
    // is consumed), the server says why, and the model is the trained one.
    tokio::time::timeout(LIMIT, async {
        loop {
            let ev = fed.server.next_event().await.unwrap();
            match ev {
                ServerEvent::RoundFailed { reason, round, .. } => {
                    assert!(reason.contains("dealer is not connected"), "{reason}");
                    assert_eq!(round, None, "{reason}");
                    return;
                }
                ServerEvent::RoundCommitted(r) => panic!("committed without a dealer: {r:?}"),
                _ => {}
            }
        }
    })
    .await
    .unwrap();
    assert_stored_model(&fed.store, &data);
    let dealer = keys.start_dealer(&mut fed).await;
    // The request is still waiting: the server runs its round again.
    let mut rest = data;
    rest[1] = rest[1].without(&[PointId(5)]).unwrap();
    tokio::time::timeout(LIMIT, async {
        loop {
            if let ServerEvent::RoundCommitted(r) = fed.server.next_event().await.unwrap()
                && !r.training
            {
                // The first round after training: none was spent
                // while the dealer was away.
                assert_eq!(r.round, 1);
                return;
            }
        }
    })
    .await
    .unwrap();
    assert_stored_model(&fed.store, &rest);
    let status = ClientStore::open(&path).unwrap().status(request).unwrap();
    assert!(
        matches!(
            status,
            Some(mufc_net::client_store::RequestStatus::Acknowledged { .. })
                | Some(mufc_net::client_store::RequestStatus::Applied)
        ),
        "{status:?}"
    );
    dealer.stop().await.unwrap();
    fed.stop().await;
}

/// A dealer revoked while connected deals no further round: the server
/// reads the revocation list before the round and closes the dealer's
/// session, telling it why (it stops); the round fails and the model
/// stays as it was. (A revoked certificate is refused at the handshake
/// by the check clients share, `Handler::not_revoked`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dealer_revoked_while_connected_deals_no_further_round() {
    use mufc_net::revocation::{RevocationList, Revoked, fingerprint_pem};
    let data = data(5);
    let keys = Keys::new(data.len());
    let (mut fed, dealer) = keys.trained(&data).await;
    let mut list = RevocationList::default();
    list.add(Revoked {
        fingerprint: fingerprint_pem(fed.dealer_cert.as_ref().unwrap()).unwrap(),
        name: "dealer".into(),
        time: 0,
    });
    std::fs::write(&fed.revoked, list.to_text()).unwrap();
    let path = fed.clients[1].0.clone();
    ClientStore::open(&path)
        .unwrap()
        .request(&[PointId(5)])
        .unwrap();
    let mut closed = false;
    tokio::time::timeout(LIMIT, async {
        loop {
            match fed.server.next_event().await.unwrap() {
                ServerEvent::Refused { reason } => {
                    assert!(
                        reason == "closed the session of the dealer: its certificate is revoked",
                        "{reason}"
                    );
                    closed = true;
                }
                ServerEvent::RoundFailed { reason, .. } => {
                    assert!(
                        closed,
                        "the round failed before the dealer was closed: {reason}"
                    );
                    assert!(reason.contains("dealer is not connected"), "{reason}");
                    return;
                }
                ServerEvent::RoundCommitted(r) => panic!("a revoked dealer dealt: {r:?}"),
                _ => {}
            }
        }
    })
    .await
    .unwrap();
    assert_stored_model(&fed.store, &data);
    // The dealer stopped: the server told it why, for good.
    let stopped = dealer.stop().await.unwrap_err();
    assert!(stopped.to_string().contains("revoked"), "{stopped}");
    fed.stop().await;
}

/// No client can open the dealer's session (it would see the rounds'
/// rings and keys before the clients do, and could answer for the
/// dealer): a client's certificate is refused, whatever it says; and the
/// dealer's certificate opens no client session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_dealers_certificate_opens_the_dealers_session() {
    let data = data(3);
    let config = FederationConfig::new(2)
        .channel(Channel::scma(Masks::Dealer))
        .seed(14)
        .validate()
        .unwrap();
    let mut fed = Loopback::start_with(config, &data, Vec::new(), async |_| {}).await;
    let client = fed.ca.issue_client("c0").unwrap();
    let tls = client_config(fed.ca.cert_pem(), &client.cert_pem, &client.key_pem).unwrap();
    let mut rpc = mufc_net::transport::connect(&fed.addr, tls).await.unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tx.send(DealerMessage {
        body: Some(DealerBody::Hello(DealerHello { protocol: 1 })),
    })
    .await
    .unwrap();
    let refused = match rpc.deal(ReceiverStream::new(rx)).await {
        Err(status) => status,
        // TLS 1.3 may tell the refusal at the first read; a session the
        // server took would send nothing.
        Ok(stream) => {
            let first = stream.into_inner();
            let read = tokio::time::timeout(std::time::Duration::from_secs(5), async move {
                let mut first = first;
                first.message().await
            });
            match read.await {
                Ok(Err(status)) => status,
                other => panic!("the server took a client as the dealer: {other:?}"),
            }
        }
    };
    assert_eq!(refused.code(), tonic::Code::Unauthenticated, "{refused:?}");
    // No dealer ever connects: training waits for it (and the server says
    // so, starting no round), and the refusal is reported.
    tokio::time::timeout(LIMIT, async {
        loop {
            match fed.server.next_event().await.expect("the server stopped") {
                ServerEvent::Refused { reason } if reason.starts_with("the dealer") => return,
                ServerEvent::RoundFailed { round, reason, .. } => {
                    assert_eq!(round, None, "{reason}");
                    assert!(reason.contains("the dealer is not connected"), "{reason}");
                }
                ServerEvent::RoundStarted { round, .. } => panic!("round {round} started"),
                _ => {}
            }
        }
    })
    .await
    .unwrap();

    // The dealer's certificate names no client.
    let dealer = fed.ca.issue_dealer().unwrap();
    let err = mufc_net::tls::authenticate(Some(&[pem_der(&dealer.cert_pem)]), "c0").unwrap_err();
    assert!(err.to_string().contains("another party"), "{err}");
    fed.stop().await;
}

/// The DER of a PEM certificate.
fn pem_der(pem: &str) -> rustls::pki_types::CertificateDer<'static> {
    use rustls::pki_types::pem::PemObject;
    rustls::pki_types::CertificateDer::from_pem_slice(pem.as_bytes()).unwrap()
}

/// A client leaves a dealt federation (issue 29): its whole removal's
/// round is dealt, the server takes its signed leave, and the dealer then
/// deals the rings of the clients that remain; the model equals the
/// in-process fit on them after the leave and after a member's removal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_leaves_a_dealt_federation_exactly() {
    let data = data(5);
    let keys = Keys::new(data.len());
    let (mut fed, dealer) = keys.trained(&data).await;
    let _ = fed.leave(4).await;
    assert_stored_model(&fed.store, &data[..4]);
    fed.forget(1, &[PointId(3)]).await;
    let mut rest = data[..4].to_vec();
    rest[1] = rest[1].without(&[PointId(3)]).unwrap();
    assert_stored_model(&fed.store, &rest);
    dealer.stop().await.unwrap();
    fed.stop().await;
}

/// A client joins a dealt federation (issue 29): the dealer started with
/// the five clients' keys; the sixth's is pinned since (its operator's
/// federation file grew), so the dealer takes the setup that admits it
/// and deals its whole round; the model is the in-process fit on six. A
/// dealer whose operator pinned no key for it refuses that setup, and
/// nothing changes until one that has the key deals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_joins_a_dealt_federation_once_its_key_is_pinned() {
    let all = data(6);
    let keys = Keys::new(all.len());
    let total: usize = all.iter().map(seeding::Dataset::len).sum();
    let config = (dealt_config().into_builder())
        .max_points(total as u64)
        .validate()
        .unwrap();
    // Started with the five keys and no source of later ones.
    let mut blind = None;
    let mut fed = Loopback::start_with(config, &all[..5], keys.pairings(), async |fed| {
        blind = Some(keys.start_dealer_with(fed, 5, None, None).await);
    })
    .await;
    until_server(&mut fed.server, |e| {
        matches!(e, ServerEvent::Trained { .. })
    })
    .await;
    fed.server_options.admit_new_clients = true;
    let mut fed = fed.restart_server(async |_| {}).await;
    fed.start_new_client("c5", &all[5]);
    let mut blind = blind.unwrap();
    let refused = next_refusal(&mut blind).await;
    assert!(refused.contains("has not pinned"), "{refused}");
    assert_stored_model(&fed.store, &all[..5]);
    blind.stop().await.unwrap();
    // The rounds it refused failed, each with its reason, until the
    // server saw it go; none other fails.
    tokio::time::timeout(LIMIT, async {
        loop {
            match fed.server.next_event().await.expect("the server stopped") {
                ServerEvent::RoundFailed { reason, .. } => {
                    assert!(reason.contains("has not pinned"), "{reason}");
                }
                ServerEvent::DealerDisconnected => break,
                _ => {}
            }
        }
    })
    .await
    .unwrap();
    // Its operator pins the sixth key: a dealer that reads it deals.
    let public: std::collections::BTreeMap<ClientId, _> = (keys.clients.iter().enumerate())
        .map(|(i, k)| (ClientId(i as u64), k.public_key()))
        .collect();
    let source = KeySource::new(move || Ok(public.clone()));
    let dealer = keys
        .start_dealer_with(&mut fed, 5, Some(source), None)
        .await;
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::RoundCommitted(r) if r.included.contains(&ClientId(5))),
    )
    .await;
    assert_stored_model(&fed.store, &all);
    dealer.stop().await.unwrap();
    fed.stop().await;
}

/// The reason of the next round `dealer` refuses.
async fn next_refusal(dealer: &mut DealerHandle) -> String {
    tokio::time::timeout(LIMIT, async {
        loop {
            match dealer.next_event().await {
                Some(DealerEvent::Refused { reason, .. }) => break reason,
                Some(_) => {}
                None => panic!("the dealer stopped"),
            }
        }
    })
    .await
    .unwrap()
}

/// A dealt federation in groups of `size` (two must remain, room for
/// every record of `all`) of the first `trained` clients of `all`, once
/// trained, with a dealer holding the agreement that has the keys of the
/// first `pinned` clients.
async fn dealt_in_groups(
    all: &[seeding::Dataset],
    size: usize,
    trained: usize,
    pinned: usize,
) -> (Loopback, DealerHandle, Keys) {
    let keys = Keys::new(all.len());
    let total: usize = all.iter().map(seeding::Dataset::len).sum();
    let config = (dealt_config().into_builder())
        .topology(mufc::Topology::Groups { size })
        .min_clients(2)
        .max_points(total as u64)
        .validate()
        .unwrap();
    let mut dealer = None;
    let roster = &all[..trained];
    let mut fed = Loopback::start_with(config, roster, keys.pairings(), async |fed| {
        let agreed = Some(Agreement::new(trained));
        dealer = Some(keys.start_dealer_with(fed, pinned, None, agreed).await);
    })
    .await;
    until_server(&mut fed.server, |e| {
        matches!(e, ServerEvent::Trained { .. })
    })
    .await;
    (fed, dealer.unwrap(), keys)
}

/// With groups and dealt masks (issue 29): a client of the first group
/// leaves, and a client that joins goes to that group, where the
/// topology would not put it. The dealer holds the agreement: it takes
/// the setup that admits the new client (its key pinned) as the
/// agreement's groups with that client anywhere, and deals the group's
/// whole round; every node's model is the in-process fit in the groups
/// the server holds, bit for bit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_groups_a_dealt_federation_loses_a_client_and_admits_one_exactly() {
    let all = data(7);
    let (mut fed, dealer, _) = dealt_in_groups(&all, 3, 6, 7).await;
    let _ = fed.leave(1).await;
    let mut present: Vec<(ClientId, seeding::Dataset)> = (0u64..)
        .map(ClientId)
        .zip(all[..6].to_vec())
        .filter(|(c, _)| *c != ClientId(1))
        .collect();
    assert_stored_groups(&fed.store, &present);
    let fed = fed.admitting("c6", ClientId(6), &all[6]).await;
    present.push((ClientId(6), all[6].clone()));
    let groups = assert_stored_groups(&fed.store, &present);
    assert_eq!(groups[0], [0, 1, 2, 6].map(ClientId));
    dealer.stop().await.unwrap();
    fed.stop().await;
}

/// With groups and dealt masks, a group that leaves take below the
/// minimum merges (docs/threat-model.md P4): the dealer, holding the
/// agreement, takes the merged groups as its pinned setup with one
/// group's clients moved, and deals the whole round of the group that
/// takes them; the model equals the in-process fit in the groups held.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_groups_a_dealt_federation_merges_a_group_left_below_the_minimum() {
    let all = data(6);
    let (mut fed, dealer, _) = dealt_in_groups(&all, 3, 6, 6).await;
    let _ = fed.leave(1).await;
    let _ = fed.leave(1).await; // client 2
    let groups = assert_stored_groups(&fed.store, &without(&all, &[1, 2]));
    assert_eq!(groups[1], [0, 3, 4, 5].map(ClientId));
    dealer.stop().await.unwrap();
    fed.stop().await;
}

/// With groups and dealt masks, a group grown full by joins splits
/// (issue 29): the dealer, holding the agreement, takes the setup that
/// admits the newest client and splits its group at once, and deals both
/// halves' whole rounds; the model equals the in-process fit in the
/// three groups. A dealer whose operator did not pin the newest client's
/// key refuses that setup, as it refuses an admission alone: the split
/// does not carry a client past its check. The split kept, its rounds
/// waiting, a restarted server resumes both halves, which a dealer that
/// reads the key deals.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_groups_a_dealt_federation_splits_a_group_grown_full() {
    for pinned in [8, 9] {
        dealt_split(pinned).await;
    }
}

async fn dealt_split(pinned: usize) {
    let all = data(9);
    let (mut fed, mut dealer, keys) = dealt_in_groups(&all, 2, 4, pinned).await;
    let mut present: Vec<(ClientId, seeding::Dataset)> =
        (0u64..).map(ClientId).zip(all[..4].to_vec()).collect();
    for (c, data) in (4u64..).zip(&all[4..8]) {
        fed = fed.admitting(&format!("c{c}"), ClientId(c), data).await;
        present.push((ClientId(c), data.clone()));
    }
    if pinned == 8 {
        let root = |store: &std::path::Path| {
            let store = mufc_store::Store::open(store).unwrap();
            store.federation().server().counts().clone()
        };
        let before = root(&fed.store);
        fed = fed.restart_server(async |_| {}).await;
        fed.start_new_client("c8", &all[8]);
        let refused = next_refusal(&mut dealer).await;
        assert!(refused.contains("has not pinned"), "{refused}");
        // The split is kept, its rounds wait: the model is the one before.
        assert_eq!(root(&fed.store), before);
        // A server restarted resumes the split's halves; a dealer that
        // reads the new key deals both, and the model is exact.
        dealer.stop().await.unwrap();
        fed = fed.restart_server(async |_| {}).await;
        let public: std::collections::BTreeMap<ClientId, _> = (keys.clients.iter().enumerate())
            .map(|(i, k)| (ClientId(i as u64), k.public_key()))
            .collect();
        let source = KeySource::new(move || Ok(public.clone()));
        dealer = keys
            .start_dealer_with(&mut fed, 8, Some(source), None)
            .await;
        until_server(
            &mut fed.server,
            |e| matches!(e, ServerEvent::RoundCommitted(r) if r.included.contains(&ClientId(8))),
        )
        .await;
    } else {
        fed = fed.admitting("c8", ClientId(8), &all[8]).await;
    }
    present.push((ClientId(8), all[8].clone()));
    let groups = assert_stored_groups(&fed.store, &present);
    assert_eq!(groups.len(), 3);
    assert_eq!(groups[2], [4, 6, 8].map(ClientId));
    dealer.stop().await.unwrap();
    fed.stop().await;
}
