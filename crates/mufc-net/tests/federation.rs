//! The federation over loopback, every party a task of this process (the
//! process-level tests are `mufc-cli`'s): a server and five clients train
//! a model equal, bit for bit, to the in-process `Federation`; a removal
//! asked of one client's store is acknowledged once its round committed,
//! and the model is then that of retraining without the point; records a
//! client adds give the model of training on them too. With a
//! tree of groups, every node's model is the in-process tree's and a
//! removal runs in its group alone. Every wait is bounded: the test stops
//! by itself.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mufc::{Channel, ClientId, Federation, FederationConfig, Masks, NodeId, SecAggOptions};
use mufc_net::certs::FederationCa;
use mufc_net::client::{ClientEvent, ClientHandle, ClientOptions, start_client};
use mufc_net::client_store::{ClientStore, RequestStatus};
use mufc_net::dealer::DealerPairing;
use mufc_net::server::{ServerEvent, ServerHandle, ServerOptions, start_server};
use mufc_net::tls::{client_credentials, server_config};
use mufc_store::Store;
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};
use tokio::net::TcpListener;

/// Bounds every wait.
pub(crate) const LIMIT: Duration = Duration::from_secs(60);

pub(crate) fn data(clients: usize) -> Vec<Dataset> {
    gaussian_clients("mufc-net-federation", Mixture::net(clients))
}

fn config() -> mufc::ValidConfig {
    FederationConfig::new(3)
        .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
        // One client's removal at a time (the lone-update policy is
        // tested across processes in mufc-cli).
        .min_updating_clients(1)
        .seed(11)
        .validate()
        .unwrap()
}

pub(crate) async fn until_server(
    server: &mut ServerHandle,
    mut want: impl FnMut(&ServerEvent) -> bool,
) {
    tokio::time::timeout(LIMIT, async {
        loop {
            let ev = server.next_event().await.expect("the server stopped");
            if std::env::var("DBG_EVENTS").is_ok() {
                eprintln!("EV {ev:?}");
            }
            if let ServerEvent::RoundFailed { reason, .. } = &ev {
                panic!("a round failed: {reason}");
            }
            if want(&ev) {
                return;
            }
        }
    })
    .await
    .expect("the server did not get there in time");
}

pub(crate) async fn until_client(
    client: &mut ClientHandle,
    mut want: impl FnMut(&ClientEvent) -> bool,
) {
    tokio::time::timeout(LIMIT, async {
        loop {
            let ev = client.next_event().await.expect("the client stopped");
            if want(&ev) {
                return;
            }
        }
    })
    .await
    .expect("the client did not get there in time");
}

/// A running federation over loopback: the server, and each client's
/// store and handle.
pub(crate) struct Loopback {
    _dir: tempfile::TempDir,
    pub(crate) store: PathBuf,
    pub(crate) server: ServerHandle,
    pub(crate) clients: Vec<(PathBuf, ClientHandle)>,
    /// What starts the server again ([`Self::restart_server`]).
    server_tls: Arc<rustls::ServerConfig>,
    pub(crate) server_options: ServerOptions,
    /// What issues a client's certificate, and the server's address.
    pub(crate) ca: FederationCa,
    pub(crate) addr: String,
    /// With dealt masks, each client's pairing with the dealer (by
    /// position).
    pairings: Vec<DealerPairing>,
    /// The revocation list the server reads before every round (none
    /// until a test writes it).
    pub(crate) revoked: PathBuf,
    /// The dealer's certificate (PEM), once a test started one.
    pub(crate) dealer_cert: Option<String>,
}

impl Loopback {
    async fn start(config: mufc::ValidConfig, data: &[Dataset]) -> Self {
        Self::start_with(config, data, Vec::new(), async |_| {}).await
    }

    /// [`Self::start`] with each client paired with the dealer
    /// (`pairings`, by position, or none), running `before_clients` once
    /// the server listens.
    pub(crate) async fn start_with(
        config: mufc::ValidConfig,
        data: &[Dataset],
        pairings: Vec<DealerPairing>,
        before_clients: impl AsyncFnOnce(&mut Self),
    ) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ca = FederationCa::new("loopback").unwrap();
        let server_cert = ca.issue_server(&["127.0.0.1"]).unwrap();
        let tls =
            server_config(ca.cert_pem(), &server_cert.cert_pem, &server_cert.key_pem).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let store = dir.path().join("server.db");
        let names: Vec<String> = (0..data.len()).map(|i| format!("c{i}")).collect();
        let mut options = ServerOptions::new(&store, config, names.clone());
        options.step_timeout = Duration::from_secs(20);
        options.join_timeout = Duration::from_secs(5);
        let revoked = dir.path().join("revoked.txt");
        options.revoked = Some(revoked.clone());
        let server = start_server(listener, tls.clone(), options.clone())
            .await
            .unwrap();
        let addr = server.addr().to_string();
        let mut fed = Self {
            _dir: dir,
            store,
            server,
            clients: Vec::new(),
            server_tls: tls,
            server_options: options,
            ca,
            addr,
            pairings,
            revoked,
            dealer_cert: None,
        };
        before_clients(&mut fed).await;
        for (name, d) in names.iter().zip(data) {
            let path = fed._dir.path().join(format!("{name}.db"));
            ClientStore::create(&path, name, d).unwrap();
            let client = fed.start_client(name, &path);
            fed.clients.push((path, client));
        }
        fed
    }

    /// [`Self::start`], then waits for the training round to commit.
    pub(crate) async fn trained(config: mufc::ValidConfig, data: &[Dataset]) -> Self {
        let mut fed = Self::start(config, data).await;
        until_server(
            &mut fed.server,
            |e| matches!(e, ServerEvent::RoundCommitted(r) if r.training),
        )
        .await;
        fed
    }

    /// Starts client `name` (a certificate of its own) on the store
    /// `path`.
    pub(crate) fn start_client(&self, name: &str, path: &Path) -> ClientHandle {
        self.start_client_result(name, path).unwrap()
    }

    /// [`Self::start_client`], or why the client does not start.
    pub(crate) fn start_client_result(
        &self,
        name: &str,
        path: &Path,
    ) -> Result<ClientHandle, mufc_net::NetError> {
        let cert = self.ca.issue_client(name).unwrap();
        let tls = client_credentials(self.ca.cert_pem(), &cert.cert_pem, &cert.key_pem).unwrap();
        let mut options = ClientOptions::new(&self.addr, path);
        options.poll = Duration::from_millis(50);
        let at: usize = name.trim_start_matches('c').parse().unwrap();
        options.dealer = self.pairings.get(at).cloned();
        start_client(options, tls)
    }

    /// Stops the server, runs `while_down` with the clients, and starts
    /// the server again on the same address and store.
    pub(crate) async fn restart_server(
        self,
        while_down: impl AsyncFnOnce(&mut [(PathBuf, ClientHandle)]),
    ) -> Self {
        let addr = self.server.addr();
        let Self {
            _dir,
            store,
            server,
            mut clients,
            server_tls,
            server_options,
            ca,
            addr: address,
            pairings,
            revoked,
            dealer_cert,
        } = self;
        server.stop().await.unwrap();
        while_down(&mut clients).await;
        let listener = TcpListener::bind(addr).await.unwrap();
        let server = start_server(listener, server_tls.clone(), server_options.clone())
            .await
            .unwrap();
        Self {
            _dir,
            store,
            server,
            clients,
            server_tls,
            server_options,
            ca,
            addr: address,
            pairings,
            revoked,
            dealer_cert,
        }
    }

    /// Starts client `name` (`c<i>`), new to the federation, on a new
    /// store of `data` (issue 29), last of [`Self::clients`].
    pub(crate) fn start_new_client(&mut self, name: &str, data: &Dataset) {
        let path = self.store.with_file_name(format!("{name}.db"));
        ClientStore::create(&path, name, data).unwrap();
        let client = self.start_client(name, &path);
        self.clients.push((path, client));
    }

    /// The client at place `c` of [`Self::clients`] (`c<id>`, its store
    /// `c<id>.db`) leaves with `mufc client leave`'s request (issue 29):
    /// waits until the server took its leave and the client noted it and
    /// stopped, and takes it off the clients: its store's path.
    pub(crate) async fn leave(&mut self, c: usize) -> PathBuf {
        let (path, _) = &self.clients[c];
        ClientStore::open(path).unwrap().request_leave().unwrap();
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let id = ClientId(stem.trim_start_matches('c').parse().unwrap());
        until_server(
            &mut self.server,
            |e| matches!(e, ServerEvent::Left { id: l, .. } if *l == id),
        )
        .await;
        let (path, mut leaver) = self.clients.remove(c);
        until_client(&mut leaver, |e| matches!(e, ClientEvent::Left)).await;
        leaver.stop().await.unwrap();
        assert!(ClientStore::open(&path).unwrap().left().unwrap());
        path
    }

    /// Restarts the server admitting new clients, starts client `name`
    /// (id `id`, new to the federation) on a new store of `data`, and
    /// waits until a round that includes it committed.
    pub(crate) async fn admitting(mut self, name: &str, id: ClientId, data: &Dataset) -> Self {
        self.server_options.admit_new_clients = true;
        let mut fed = self.restart_server(async |_| {}).await;
        fed.start_new_client(name, data);
        until_server(
            &mut fed.server,
            |e| matches!(e, ServerEvent::RoundCommitted(r) if r.included.contains(&id)),
        )
        .await;
        fed
    }

    /// Client `c` forgets `ids`; waits for the acknowledgement.
    pub(crate) async fn forget(&mut self, c: usize, ids: &[PointId]) {
        self.asked(c, |store| store.request(ids)).await;
    }

    /// Client `c` adds `records` (issue 29); waits for the
    /// acknowledgement.
    pub(crate) async fn add(&mut self, c: usize, records: &Dataset) {
        self.asked(c, |store| store.request_records(records)).await;
    }

    /// Client `c`'s store records the request `ask` makes; waits until a
    /// round acknowledges it, and checks the store says so.
    async fn asked(
        &mut self,
        c: usize,
        ask: impl FnOnce(&ClientStore) -> Result<u64, mufc_net::NetError>,
    ) {
        let (path, client) = &mut self.clients[c];
        let request = ask(&ClientStore::open(&*path).unwrap()).unwrap();
        until_client(client, |e| {
            matches!(e, ClientEvent::RoundEnded { acknowledged, .. } if acknowledged.contains(&request))
        })
        .await;
        assert!(matches!(
            ClientStore::open(&*path).unwrap().status(request).unwrap(),
            Some(RequestStatus::Acknowledged { .. })
        ));
    }

    pub(crate) async fn stop(self) {
        for (_, c) in self.clients {
            c.stop().await.unwrap();
        }
        self.server.stop().await.unwrap();
    }
}

/// Waits for the next round that is not training to commit: whether it
/// was a change round.
async fn next_round_changes(server: &mut ServerHandle) -> Option<bool> {
    let mut changes = None;
    until_server(server, |e| {
        if let ServerEvent::RoundStarted { changes: ch, .. } = e {
            changes = Some(*ch);
        }
        matches!(e, ServerEvent::RoundCommitted(r) if !r.training)
    })
    .await;
    changes
}

/// Every node of the stored federation (the root alone when flat) is the
/// in-process federation's on `data` with the stored configuration, bit
/// for bit, and the server holds no point.
pub(crate) fn assert_stored_model(store: &Path, data: &[Dataset]) {
    let ids = (0..data.len() as u64).map(ClientId);
    assert_stored_model_of(store, ids.zip(data.iter().cloned()).collect());
}

/// [`assert_stored_model`] with each client's id (a client's training
/// depends on it: after a client left, the others keep theirs).
pub(crate) fn assert_stored_model_of(store: &Path, data: Vec<(ClientId, Dataset)>) {
    let stored = Store::open(store).unwrap();
    let stored = stored.federation();
    assert!(stored.clients().is_empty(), "the server holds no point");
    let fed = Federation::with_ids(data, stored.config()).unwrap();
    let nodes = fed.layout().map_or(1, |l| l.nodes());
    assert_eq!(stored.layout(), fed.layout());
    for n in 0..nodes {
        let (mine, theirs) = match fed.layout() {
            Some(_) => (
                stored.node(NodeId(n)).unwrap(),
                fed.node(NodeId(n)).unwrap(),
            ),
            None => (stored.server(), fed.server()),
        };
        assert_eq!(mine.counts(), theirs.counts(), "node {n}");
        assert_eq!(mine.centroids(), theirs.centroids(), "node {n}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_clients_train_and_forget_exactly() {
    train_and_forget(config()).await;
}

/// The same with pairwise masks: the key directory travels through the
/// server like any protocol step (issue 27).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_clients_with_pairwise_masks_train_and_forget_exactly() {
    let config = FederationConfig::new(3)
        .channel(Channel::scma(Masks::Pairwise))
        // One client's removal at a time (the lone-update policy is
        // tested across processes in mufc-cli).
        .min_updating_clients(1)
        .seed(11)
        .validate()
        .unwrap();
    train_and_forget(config).await;
}

/// With pairwise masks a removal runs as a change round (each client
/// sends its change since the last committed round), and a client
/// restarted from its store still holds its base: its next removal is a
/// change round too. Each model equals retraining, bit for bit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairwise_removals_run_change_rounds_across_a_client_restart() {
    let config = FederationConfig::new(3)
        .channel(Channel::scma(Masks::Pairwise))
        .min_updating_clients(1)
        .seed(12)
        .validate()
        .unwrap();
    let data = data(5);
    let mut fed = Loopback::trained(config, &data).await;
    let mut rest = data;
    for (c, id) in [(1, 7), (1, 8)] {
        let point = PointId(id);
        fed.forget(c, &[point]).await;
        rest[c] = rest[c].without(&[point]).unwrap();
        let changes = next_round_changes(&mut fed.server).await;
        assert_eq!(
            changes,
            Some(true),
            "the removal of point {id} of client {c}"
        );
        assert_stored_model(&fed.store, &rest);
        // Client 1 stops and starts again on its store.
        let (path, client) = fed.clients.remove(c);
        client.stop().await.unwrap();
        let again = fed.start_client(&format!("c{c}"), &path);
        fed.clients.insert(c, (path, again));
    }
    fed.stop().await;
}

async fn train_and_forget(config: mufc::ValidConfig) {
    let data = data(5);
    // Training: the model is the in-process federation's, bit for bit.
    let mut fed = Loopback::trained(config, &data).await;
    assert_stored_model(&fed.store, &data);

    // Client 1 forgets a point: acknowledged once its round committed.
    fed.forget(1, &[PointId(7)]).await;
    assert_eq!(
        ClientStore::open(&fed.clients[1].0)
            .unwrap()
            .data()
            .unwrap()
            .len(),
        39
    );
    let mut rest = data;
    rest[1] = rest[1].without(&[PointId(7)]).unwrap();
    assert_stored_model(&fed.store, &rest);
    fed.stop().await;
}

/// Erasure does not wait for the server (issue 28, item 3): with the
/// server down, a client's request is applied at once (the point leaves
/// the client's store), and once the server is back the request is
/// acknowledged and the model is retraining's without the point. The
/// client kept its request pending until a server welcomed it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_removal_asked_while_the_server_is_down_is_applied_at_once() {
    let data = data(5);
    let fed = Loopback::trained(config(), &data).await;
    let mut request = 0;
    let mut fed = fed
        .restart_server(async |clients: &mut [(PathBuf, ClientHandle)]| {
            let (path, client) = &mut clients[2];
            until_client(client, |e| matches!(e, ClientEvent::Disconnected { .. })).await;
            request = ClientStore::open(&*path)
                .unwrap()
                .request(&[PointId(3)])
                .unwrap();
            until_client(
                client,
                |e| matches!(e, ClientEvent::Applied { request: r, .. } if *r == request),
            )
            .await;
            let store = ClientStore::open(&*path).unwrap();
            assert_eq!(store.status(request).unwrap(), Some(RequestStatus::Applied));
            assert!(
                !store.data().unwrap().ids().contains(&PointId(3)),
                "the point left the client's store with the server down"
            );
        })
        .await;
    let (path, client) = &mut fed.clients[2];
    until_client(client, |e| {
        matches!(e, ClientEvent::RoundEnded { acknowledged, .. } if acknowledged.contains(&request))
    })
    .await;
    assert!(matches!(
        ClientStore::open(&*path).unwrap().status(request).unwrap(),
        Some(RequestStatus::Acknowledged { .. })
    ));
    let mut rest = data;
    rest[2] = rest[2].without(&[PointId(3)]).unwrap();
    assert_stored_model(&fed.store, &rest);
    fed.stop().await;
}

/// A re-import does not bring forgotten records back (issue 28, item 2):
/// a client that forgot a point, started again from a new store imported
/// from its original data, is refused by the server (its store is not
/// the one the name spoke from) and stops saying why; the model keeps the
/// point forgotten, and the client's own store still joins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_imported_again_into_a_new_store_is_refused() {
    let data = data(5);
    let mut fed = Loopback::trained(config(), &data).await;
    fed.forget(4, &[PointId(5)]).await;
    let mut rest = data.clone();
    rest[4] = rest[4].without(&[PointId(5)]).unwrap();
    assert_stored_model(&fed.store, &rest);

    let (path, client) = fed.clients.pop().unwrap();
    client.stop().await.unwrap();
    let again = path.with_file_name("c4-imported-again.db");
    ClientStore::create(&again, "c4", &data[4]).unwrap();
    let mut imported = fed.start_client("c4", &again);
    tokio::time::timeout(LIMIT, async {
        while let Some(e) = imported.next_event().await {
            assert!(
                !matches!(e, ClientEvent::Connected { .. }),
                "the server welcomed a new store under an old name"
            );
        }
    })
    .await
    .expect("the client imported again did not stop");
    let err = imported.stop().await.unwrap_err().to_string();
    assert!(err.contains("another store than before"), "{err}");
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::Refused { reason } if reason.contains("another store")),
    )
    .await;
    assert_stored_model(&fed.store, &rest);

    let mut own = fed.start_client("c4", &path);
    until_client(&mut own, |e| matches!(e, ClientEvent::Connected { .. })).await;
    fed.clients.push((path, own));
    fed.stop().await;
}

/// A certificate the handshake refuses is not a server that is down
/// (issue 28, item 11): a client that cannot verify the server (it trusts
/// another federation's authority), or whose certificate the server
/// refuses (issued by another authority), stops at once with an error
/// that says so, instead of retrying every second for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_refused_at_the_handshake_stops_and_says_why() {
    let data = data(5);
    let fed = Loopback::start(config(), &data).await;
    let other = FederationCa::new("elsewhere").unwrap();
    let theirs = other.issue_client("c0").unwrap();
    let ours = fed.ca.issue_client("c0").unwrap();
    let cases = [
        (
            "it trusts another authority",
            client_credentials(other.cert_pem(), &ours.cert_pem, &ours.key_pem).unwrap(),
        ),
        (
            "its certificate is another authority's",
            client_credentials(fed.ca.cert_pem(), &theirs.cert_pem, &theirs.key_pem).unwrap(),
        ),
    ];
    for (i, (what, tls)) in cases.into_iter().enumerate() {
        let path = fed._dir.path().join(format!("refused-{i}.db"));
        ClientStore::create(&path, "c0", &data[0]).unwrap();
        let mut options = ClientOptions::new(&fed.addr, &path);
        options.reconnect = Duration::from_millis(100);
        let mut client = start_client(options, tls).unwrap();
        let mut disconnects = 0;
        tokio::time::timeout(LIMIT, async {
            while let Some(e) = client.next_event().await {
                disconnects += usize::from(matches!(e, ClientEvent::Disconnected { .. }));
            }
        })
        .await
        .unwrap_or_else(|_| panic!("{what}: the client kept retrying"));
        let err = client.stop().await.unwrap_err();
        assert!(
            matches!(err, mufc_net::NetError::HandshakeRefused { .. }),
            "{what}: {err}"
        );
        assert!(err.to_string().contains("certificates"), "{what}: {err}");
        // TLS 1.3 tells a client of a refusal on its first read, and a
        // session may first end as a broken pipe: a retry or two, then the
        // refusal itself.
        assert!(disconnects < 10, "{what}: {disconnects} retries");
    }
    fed.stop().await;
}

/// One bad Hello no longer stops the server (issue 28, item 11): a client
/// registering points of another dimension than the others is refused
/// before training, told why, and stops; the server keeps serving, and
/// once the client comes back from a store of the right dimension the
/// federation trains, exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_of_another_dimension_is_refused_and_the_server_goes_on() {
    let data = data(5);
    let mut wrong = data.clone();
    wrong[4] = gaussian_clients(
        "mufc-net-wrong-dim",
        Mixture {
            dim: 3,
            ..Mixture::net(1)
        },
    )
    .remove(0);
    let mut fed = Loopback::start(config(), &wrong).await;
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::Refused { reason } if reason.contains("dimension 3")),
    )
    .await;
    let (path, mut client) = fed.clients.pop().unwrap();
    tokio::time::timeout(LIMIT, async {
        while client.next_event().await.is_some() {}
    })
    .await
    .expect("the refused client did not stop");
    let err = client.stop().await.unwrap_err().to_string();
    assert!(err.contains("dimension 3"), "{err}");

    let right = path.with_file_name("c4-right.db");
    ClientStore::create(&right, "c4", &data[4]).unwrap();
    let again = fed.start_client("c4", &right);
    fed.clients.push((right, again));
    until_server(
        &mut fed.server,
        |e| matches!(e, ServerEvent::RoundCommitted(r) if r.training),
    )
    .await;
    assert_stored_model(&fed.store, &data);
    fed.stop().await;
}

/// A server that is down is asked less and less often (issue 28, item
/// 11: a client retried once a second for ever): the wait between two
/// attempts doubles up to its cap. Over 1.5 s with waits from 20 ms to
/// 320 ms the client tries about seven times (75 without the backoff),
/// and its last waits are the cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_backs_off_while_the_server_is_down() {
    let dir = tempfile::tempdir().unwrap();
    let ca = FederationCa::new("backoff").unwrap();
    let cert = ca.issue_client("c0").unwrap();
    let tls = client_credentials(ca.cert_pem(), &cert.cert_pem, &cert.key_pem).unwrap();
    let path = dir.path().join("c0.db");
    ClientStore::create(&path, "c0", &data(1)[0]).unwrap();
    // A port nobody listens on: bound, then released.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut options = ClientOptions::new(format!("127.0.0.1:{port}"), &path);
    options.reconnect = Duration::from_millis(20);
    options.max_reconnect = Duration::from_millis(320);
    let mut client = start_client(options, tls).unwrap();
    let start = std::time::Instant::now();
    let mut attempts = Vec::new();
    while start.elapsed() < Duration::from_millis(1500) {
        let left = Duration::from_millis(1500).saturating_sub(start.elapsed());
        match tokio::time::timeout(left, client.next_event()).await {
            Ok(Some(ClientEvent::Disconnected { .. })) => attempts.push(start.elapsed()),
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    client.stop().await.unwrap();
    assert!(
        (4..=12).contains(&attempts.len()),
        "{} attempts in 1.5 s: {attempts:?}",
        attempts.len()
    );
    let gaps: Vec<Duration> = attempts.windows(2).map(|w| w[1] - w[0]).collect();
    let last = *gaps.last().unwrap();
    assert!(last >= Duration::from_millis(250), "the cap: {gaps:?}");
    assert!(
        gaps[0] < Duration::from_millis(150),
        "the first wait: {gaps:?}"
    );
}

/// A client's own failure reaches the server as a bare refusal (issue 28,
/// item 10): a client whose points are one point repeated cannot train
/// three clusters of its own and refuses the training round; its error names its counts,
/// and the server hears only that it could not take part.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_refusal_tells_the_server_nothing_of_its_data() {
    let mut data = data(5);
    let same = data[4].point(0).to_vec();
    let repeated: Vec<f64> = (0..data[4].len()).flat_map(|_| same.clone()).collect();
    data[4] = Dataset::new(nalgebra::DMatrix::from_column_slice(
        2,
        data[4].len(),
        &repeated,
    ))
    .unwrap();
    let fixed_k = (config().into_builder()).client_k(3).validate().unwrap();
    let mut fed = Loopback::start(fixed_k, &data).await;
    let reason = tokio::time::timeout(LIMIT, async {
        loop {
            if let ServerEvent::Rejected {
                id: ClientId(4),
                reason,
            } = fed.server.next_event().await.expect("the server stopped")
            {
                return reason;
            }
        }
    })
    .await
    .expect("the client's refusal did not reach the server");
    assert!(reason.contains("could not take part"), "{reason}");
    for data_word in ["distinct", "point", "40"] {
        assert!(!reason.contains(data_word), "{reason}");
    }
    fed.stop().await;
}

/// A tree of three groups of two: training is one round per group, each
/// node's model is the in-process tree's; a removal is one round of the
/// requester's group, which only its members hear of.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_of_groups_trains_per_group_and_forgets_in_one() {
    let config = (config().into_builder())
        .min_clients(2)
        .topology(mufc::Topology::Tree {
            group_size: 2,
            fan_out: 2,
        })
        .validate()
        .unwrap();
    let data = data(6);
    let mut fed = Loopback::start(config, &data).await;
    let mut groups = Vec::new();
    until_server(&mut fed.server, |e| {
        if let ServerEvent::RoundCommitted(r) = e {
            assert!(r.training, "round {} of group {:?}", r.round, r.group);
            groups.push(r.group);
        }
        matches!(e, ServerEvent::Trained { .. })
    })
    .await;
    groups.sort_unstable();
    assert_eq!(
        groups,
        [Some(0), Some(1), Some(2)],
        "one training round per group"
    );
    assert_stored_model(&fed.store, &data);

    // Client 3 (group 1) forgets two points: a round of group 1 only.
    fed.forget(3, &[PointId(0), PointId(9)]).await;
    let mut rest = data;
    rest[3] = rest[3].without(&[PointId(0), PointId(9)]).unwrap();
    let mut started = None;
    until_server(&mut fed.server, |e| {
        if let ServerEvent::RoundStarted { group, clients, .. } = e {
            started = Some((*group, clients.clone()));
        }
        matches!(e, ServerEvent::RoundCommitted(r) if !r.training)
    })
    .await;
    assert_eq!(started, Some((Some(1), vec![ClientId(2), ClientId(3)])));
    // Clients outside group 1 joined their training round and nothing
    // else; client 2 both its group's rounds (client 3's events were read
    // up to its acknowledgement).
    for (c, (_, client)) in fed.clients.iter_mut().enumerate().filter(|(c, _)| *c != 3) {
        let mut joined = 0;
        while let Ok(Some(ev)) =
            tokio::time::timeout(Duration::from_millis(200), client.next_event()).await
        {
            joined += usize::from(matches!(ev, ClientEvent::Joined { .. }));
        }
        assert_eq!(joined, if c / 2 == 1 { 2 } else { 1 }, "client {c}");
    }
    assert_stored_model(&fed.store, &rest);
    fed.stop().await;
}

/// A deployment masks every message: a server configured for the plain
/// mode (every client's centroids in the clear) does not start, and says
/// why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_in_the_plain_mode_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let ca = FederationCa::new("plain").unwrap();
    let cert = ca.issue_server(&["127.0.0.1"]).unwrap();
    let tls = server_config(ca.cert_pem(), &cert.cert_pem, &cert.key_pem).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let plain = FederationConfig::new(2)
        .channel(Channel::Plain)
        .validate()
        .unwrap();
    let names = vec!["c0".to_string(), "c1".to_string(), "c2".to_string()];
    let options = ServerOptions::new(dir.path().join("server.db"), plain, names);
    let Err(err) = start_server(listener, tls, options).await else {
        panic!("a plain-mode server started");
    };
    assert!(err.to_string().contains("in the clear"), "{err}");
    assert!(!dir.path().join("server.db").exists(), "no store was made");
}

/// Records that arrive (issue 29): a client trained without some of its
/// records adds them, in two requests, the second while another client
/// forgets a point; each is acknowledged once its round committed, and
/// the model is then that of training on the records present, bit for
/// bit. With pairwise masks the additions run as change rounds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_a_client_adds_give_the_model_of_training_on_them() {
    // Room for the records that arrive: the bound on points is fixed at
    // training.
    let roomy = |masks: Masks, seed: u64| {
        FederationConfig::new(3)
            .channel(Channel::scma(masks))
            .min_updating_clients(1)
            .max_points(400)
            .seed(seed)
            .validate()
            .unwrap()
    };
    let secagg = roomy(Masks::SecAgg(SecAggOptions::new()), 11);
    for (config, changes) in [(secagg, false), (roomy(Masks::Pairwise, 13), true)] {
        let all = data(5);
        let held: Vec<PointId> = all[2].ids()[30..].to_vec();
        let later = |ids: &[PointId]| all[2].only(ids).unwrap();
        let mut present = all.clone();
        present[2] = all[2].without(&held).unwrap();
        let mut fed = Loopback::trained(config, &present).await;
        assert_stored_model(&fed.store, &present);
        for part in [&held[..4], &held[4..]] {
            let records = later(part);
            fed.add(2, &records).await;
            present[2].append(&records).unwrap();
            let change = next_round_changes(&mut fed.server).await;
            assert_eq!(change, Some(changes), "a change round with pairwise masks");
            assert_stored_model(&fed.store, &present);
            assert_eq!(
                ClientStore::open(&fed.clients[2].0)
                    .unwrap()
                    .data()
                    .unwrap()
                    .len(),
                present[2].len()
            );
        }
        // An id the client holds is refused at once, and nothing changes.
        let again = later(&held[..1]);
        let store = ClientStore::open(&fed.clients[2].0).unwrap();
        assert!(store.request_records(&again).is_err());
        assert!(store.pending().unwrap().is_empty());
        fed.stop().await;
    }
}

/// The bound on points holds across processes (issue 29): a client whose
/// own records stay within it adds one record more than the federation
/// was trained for; the server's round fails, says why, and commits
/// nothing: the stored model stays training's, and the request stays
/// applied, not acknowledged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_past_the_bound_fail_the_round_and_commit_nothing() {
    let data = data(5);
    // No room: the bound is the points at training.
    let mut fed = Loopback::trained(config(), &data).await;
    let (path, _) = &fed.clients[2];
    let store = ClientStore::open(path).unwrap();
    let one = Dataset::new(nalgebra::DMatrix::from_element(2, 1, 0.1)).unwrap();
    let (request, _) = store.request_new_records(&one).unwrap();
    // `until_server` fails on a failed round: this one is awaited.
    let why = tokio::time::timeout(LIMIT, async {
        loop {
            match fed.server.next_event().await.expect("the server stopped") {
                ServerEvent::RoundFailed { reason, .. } => return reason,
                ServerEvent::RoundCommitted(r) => {
                    panic!("round {} committed past the bound", r.round)
                }
                _ => {}
            }
        }
    })
    .await
    .expect("no round failed in time");
    assert!(why.contains("beyond the bound"), "{why}");
    assert_stored_model(&fed.store, &data);
    assert_eq!(store.status(request).unwrap(), Some(RequestStatus::Applied));
    fed.stop().await;
}

/// An addition asked while its client is stopped waits in its store; the
/// client, started again, restores itself, learns the records and asks
/// for a round, and the model is then training's on every record present.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_addition_asked_while_the_client_is_stopped_is_served_when_it_starts() {
    let config = FederationConfig::new(3)
        .channel(Channel::scma(Masks::Pairwise))
        .min_updating_clients(1)
        .max_points(400)
        .seed(14)
        .validate()
        .unwrap();
    let all = data(5);
    let arriving: Vec<PointId> = all[1].ids()[35..].to_vec();
    let mut present = all.clone();
    present[1] = all[1].without(&arriving).unwrap();
    let mut fed = Loopback::trained(config, &present).await;
    let (path, client) = fed.clients.remove(1);
    client.stop().await.unwrap();
    let request = (ClientStore::open(&path).unwrap())
        .request_records(&all[1].only(&arriving).unwrap())
        .unwrap();
    let mut again = fed.start_client("c1", &path);
    until_client(&mut again, |e| {
        matches!(e, ClientEvent::RoundEnded { acknowledged, .. } if acknowledged.contains(&request))
    })
    .await;
    fed.clients.insert(1, (path, again));
    assert_stored_model(&fed.store, &all);
    fed.stop().await;
}
