//! The server process: registers the roster's clients, drives training
//! and unlearning rounds ([`mufc::remote::RemoteServer`]) over their gRPC
//! sessions with a deadline on every step, and commits each round to its
//! store ([`mufc_store::Store`], without a client's point) before it tells
//! the clients. A restarted server resumes from its store.
//!
//! With groups ([`mufc::Topology`]) every round runs in one group: the
//! server trains each group once its members are connected, serves a
//! removal with a round of the requester's group, and announces a round
//! to that group's members only.
//!
//! # Example
//!
//! See `tests/federation.rs` of this crate: a server and clients in one
//! process, over loopback.

mod coordinator;
mod handler;
mod pending_setup;
mod sealed;
mod stores;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use mufc::remote::{Registration, RoundReport};
use mufc::{ClientId, ValidConfig};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot};
use tonic::Status;

pub use handler::{MAX_DIM, PROTOCOL_VERSION, check_hello};

use crate::NetError;
use crate::proto::ServerMessage;
use crate::proto::client_message::Body as ClientBody;
use crate::running::Running;

/// What the server says to a client that left (issue 29) when it comes
/// back: the client, if it was leaving, notes that it left.
pub const LEFT_REFUSAL: &str = "left the federation: it takes part in no round again";

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerOptions {
    /// The server's store: created once the model is trained (after the
    /// training round, or every group's), resumed from if it exists. Until
    /// then the setup of the first round is kept next to it, in
    /// `<store>.setup`, so that a restarted server announces the setup the
    /// clients trained in.
    pub store: PathBuf,
    /// The federation's configuration (a resumed store keeps its own).
    pub config: ValidConfig,
    /// The clients' names, in id order (a resumed store keeps its own;
    /// an empty roster takes it).
    pub roster: Vec<String>,
    /// The longest the server waits for the answers of one protocol step;
    /// a client that has not answered by then is dropped at that step.
    pub step_timeout: Duration,
    /// The longest a removal round waits for clients of its group (the
    /// roster, when flat) that are not connected before it runs without
    /// them.
    pub join_timeout: Duration,
    /// The longest a session may take to say Hello.
    pub hello_timeout: Duration,
    /// Bounds on what peers may open and send (connections, handshakes,
    /// streams, message size).
    pub limits: crate::transport::Limits,
    /// What the parties agreed on out of band
    /// ([`crate::federation_file::FederationFile::agreement`]): a client
    /// claiming more points or another dimension is refused, and the
    /// setup's grid step is never finer than agreed. `None`: the claims
    /// decide (the clients holding an agreement refuse such a setup).
    pub agreement: Option<mufc::remote::Agreement>,
    /// The longest a removal request waits for the lone-update policy
    /// (issue 28, item 7): a round of a group runs once the requests
    /// waiting name at least the configuration's
    /// [`min_updating_clients`](mufc::ValidConfig::min_updating_clients)
    /// clients of the group, or once the oldest has waited this long (7
    /// days by default, [`mufc_store::DEFAULT_MAX_DEFER`]; the round then
    /// changes one client's message, and the server learns that change).
    pub max_defer: Duration,
    /// The revocation list ([`crate::revocation`]), read again whenever
    /// it changes: a client whose certificate it lists is refused at
    /// Hello, and its open session closed before the next round. `None`:
    /// no certificate is revoked.
    pub revoked: Option<PathBuf>,
    /// Whether a client whose name is not on the roster joins the trained
    /// federation (issue 29): its certificate from the federation's
    /// authority is its admission, which every member checks before it
    /// takes the setup that admits it. Its first round is whole, and waits
    /// for the lone-update policy like a request. `false` by default: such
    /// a client is refused.
    pub admit_new_clients: bool,
}

impl ServerOptions {
    /// Options with the default timeouts (30 s per step, 60 s for absent
    /// clients, 10 s for a Hello) and [`Limits`](crate::transport::Limits)'s
    /// defaults.
    pub fn new(store: impl Into<PathBuf>, config: ValidConfig, roster: Vec<String>) -> Self {
        Self {
            store: store.into(),
            config,
            roster,
            step_timeout: Duration::from_secs(30),
            join_timeout: Duration::from_secs(60),
            hello_timeout: Duration::from_secs(10),
            limits: crate::transport::Limits::default(),
            agreement: None,
            max_defer: mufc_store::DEFAULT_MAX_DEFER,
            revoked: None,
            admit_new_clients: false,
        }
    }
}

/// What the server reports as it runs (the CLI prints them; tests and
/// benchmarks read them).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ServerEvent {
    /// Listening on this address.
    Listening(SocketAddr),
    /// Resumed from the store, trained, after this many rounds.
    Resumed {
        /// Rounds started before the restart.
        rounds: u64,
    },
    /// Started again before the model was trained: the setup of the
    /// first start, kept next to the store, was read back (the clients
    /// that joined a round accept no other), and training goes on.
    SetupRestored,
    /// A client new to the roster joined the trained federation (issue
    /// 29): it is on the roster from now on, and its first round waits
    /// for the lone-update policy.
    Admitted {
        /// Its id.
        id: ClientId,
        /// Its name.
        name: String,
    },
    /// The model is withdrawn (docs/threat-model.md P4): the clients
    /// left with points are fewer than the minimum aggregate but some, so
    /// no sum of theirs may be decoded. Kept in the store; the clients
    /// hear it, and no round runs again.
    Withdrawn(mufc::Withdrawal),
    /// A group left with fewer clients holding points than the minimum
    /// aggregate merged into another (docs/threat-model.md P4): its
    /// clients `moved` sum in group `into` from its next round, which is
    /// whole; group `from` is emptied as that round commits.
    Merged {
        /// The group that fell below the minimum.
        from: usize,
        /// The group that takes its clients.
        into: usize,
        /// The clients that moved.
        moved: Vec<ClientId>,
    },
    /// A group grown full by joins split in two (issue 29): its clients
    /// `moved` form the new group `into`; both halves run a whole round,
    /// stored in one commit.
    Split {
        /// The group that split.
        group: usize,
        /// The new group.
        into: usize,
        /// The clients that moved to it.
        moved: Vec<ClientId>,
    },
    /// A client left the federation (issue 29): its signed leave checked,
    /// kept in the store, its session closed; no later ring names it.
    Left {
        /// The client.
        id: ClientId,
        /// Its name.
        name: String,
    },
    /// A client of the roster opened a session.
    Connected {
        /// The client.
        id: ClientId,
        /// Its name.
        name: String,
    },
    /// A client's session ended: it closed it, its connection failed, or
    /// its link went down (a ping unanswered,
    /// [`crate::transport::Limits::keepalive`]).
    Disconnected {
        /// The client.
        id: ClientId,
        /// Its name.
        name: String,
    },
    /// The dealer opened its session (dealt masks): rounds can be dealt.
    DealerConnected,
    /// The dealer's session ended: a dealt round fails until it is back.
    DealerDisconnected,
    /// A session was refused (no valid certificate, not in the roster,
    /// no Hello, ...).
    Refused {
        /// Why.
        reason: String,
    },
    /// A removal request waits for the lone-update policy: the round
    /// would change fewer clients' messages than the configuration's
    /// `min_updating_clients`, which would show the server one client's
    /// change.
    Deferred {
        /// The client that asked.
        id: ClientId,
        /// The requests waiting in its group name this many clients.
        clients: usize,
        /// The policy's minimum.
        min: usize,
        /// The longest it waits ([`ServerOptions::max_defer`]).
        at_most: Duration,
    },
    /// A client's message was refused in a round (it goes on without it).
    Rejected {
        /// The client.
        id: ClientId,
        /// Why.
        reason: String,
    },
    /// A round started.
    RoundStarted {
        /// The round (each group counts its own).
        round: u64,
        /// Its group (`None` when flat).
        group: Option<usize>,
        /// Its clients.
        clients: Vec<ClientId>,
        /// Whether it is a change round: the clients send their changes
        /// since the last committed round, not their histograms
        /// ([`RemoteServer::start_change_round`](mufc::remote::RemoteServer::start_change_round)).
        changes: bool,
    },
    /// A round committed (and is stored once the model is trained).
    RoundCommitted(RoundReport),
    /// The model is trained: every group committed a round (when flat,
    /// right after the training round). The store exists from here on.
    Trained {
        /// Rounds started so far (failed ones included).
        rounds: u64,
    },
    /// A round failed: nothing changed but the round counter.
    RoundFailed {
        /// The round (`None` if it did not start).
        round: Option<u64>,
        /// Its group (`None` when flat).
        group: Option<usize>,
        /// Why.
        reason: String,
    },
}

/// What the sessions tell the coordinator.
#[derive(Debug)]
enum Event {
    Connected {
        conn: u64,
        /// The fingerprint of the client's certificate.
        fingerprint: crate::revocation::Fingerprint,
        /// The client's certificate (DER): its signed first messages are
        /// checked against it and relayed with it.
        certificate: Vec<u8>,
        registration: Registration,
        outbox: mpsc::Sender<Result<ServerMessage, Status>>,
    },
    Message {
        id: ClientId,
        conn: u64,
        body: ClientBody,
    },
    /// A client whose name is not on the roster asks to join (with
    /// [`ServerOptions::admit_new_clients`]): the coordinator answers with
    /// its id, or why not.
    Joining {
        name: String,
        registration: Registration,
        certificate: Vec<u8>,
        reply: oneshot::Sender<Result<ClientId, Status>>,
    },
    Gone {
        id: ClientId,
        conn: u64,
    },
    /// The dealer opened a session (a later one replaces it).
    DealerConnected {
        conn: u64,
        /// Its certificate's fingerprint (checked against the revocation
        /// list before every round, as a client's).
        fingerprint: crate::revocation::Fingerprint,
        outbox: mpsc::Sender<Result<crate::proto::DealRequest, Status>>,
    },
    /// The dealer's answer to a deal request.
    Dealt {
        conn: u64,
        answer: crate::proto::DealAnswer,
    },
    DealerGone {
        conn: u64,
    },
}

/// A running server.
#[derive(Debug)]
pub struct ServerHandle {
    addr: SocketAddr,
    events: mpsc::UnboundedReceiver<ServerEvent>,
    running: Running,
}

impl ServerHandle {
    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The next event (`None` once the server stopped).
    pub async fn next_event(&mut self) -> Option<ServerEvent> {
        self.events.recv().await
    }

    /// Stops the server and waits for it.
    ///
    /// # Errors
    ///
    /// The error the server stopped on, if any.
    pub async fn stop(self) -> Result<(), NetError> {
        self.running.stop().await
    }
}

/// Starts the server on `listener` with the TLS configuration `tls`
/// ([`crate::tls::server_config`]): resumes from the store if it exists,
/// else waits for every client of the roster to register and trains
/// (each group once its members are connected).
///
/// # Errors
///
/// [`NetError::Store`] for a store that does not open; [`NetError::Protocol`]
/// for a roster that contradicts the store's, or the plain mode.
pub async fn start_server(
    listener: TcpListener,
    tls: Arc<rustls::ServerConfig>,
    options: ServerOptions,
) -> Result<ServerHandle, NetError> {
    let addr = listener
        .local_addr()
        .map_err(|e| NetError::Transport(e.to_string()))?;
    check_options(&options)?;
    let (report, events) = mpsc::unbounded_channel();
    let (event_tx, event_rx) = mpsc::channel(1024);
    let stores = Arc::new(std::sync::Mutex::new(stores::ClientStores::open(
        &options.store,
    )?));
    let revoked = Arc::new(std::sync::Mutex::new(crate::revocation::Watched::new(
        options.revoked.clone(),
    )));
    let coordinator = coordinator::Coordinator::open(
        options.clone(),
        event_rx,
        report.clone(),
        stores.clone(),
        revoked.clone(),
    )?;
    let handler = handler::Handler {
        revoked,
        roster: Arc::new(coordinator.roster().to_vec()),
        events: event_tx,
        report: report.clone(),
        next_conn: AtomicU64::new(0),
        hello_timeout: options.hello_timeout,
        stores,
        admit_new: options.admit_new_clients,
    };
    let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
    let _ = report.send(ServerEvent::Listening(addr));
    let task = tokio::spawn(async move {
        let (stop_serving, serving_stopped) = oneshot::channel::<()>();
        let serve = tokio::spawn(crate::transport::serve(
            listener,
            tls,
            handler,
            options.limits,
            async move {
                let _ = serving_stopped.await;
            },
        ));
        let result = coordinator.run(shutdown_rx).await;
        let _ = stop_serving.send(());
        let _ = serve.await;
        result
    });
    Ok(ServerHandle {
        addr,
        events,
        running: Running::new("server", shutdown_tx, task),
    })
}

/// What a server's options must satisfy before it listens: no plain mode
/// (a deployment aggregates masked sketches), and with an agreement the
/// agreement's own checks, a grid step no finer than agreed, the agreed
/// policy and topology, and a roster of the agreed size.
fn check_options(options: &ServerOptions) -> Result<(), NetError> {
    // The parties run the plain mode in one process, where its operators
    // chose it; a deployment masks every message (and its clients refuse
    // a plain round anyway).
    if options.config.channel() == &mufc::Channel::Plain {
        return Err(NetError::Protocol(
            "a deployment aggregates masked sketches: the plain mode would send every \
             client's centroids in the clear"
                .into(),
        ));
    }
    if let Some(a) = &options.agreement {
        a.validate()?;
        if let Some(g) = options.config.gamma()
            && g < a.min_gamma
        {
            return Err(NetError::Protocol(format!(
                "the grid step {g} is finer than the agreed {}",
                a.min_gamma
            )));
        }
        // A server configured below the agreed policy or with another
        // topology would only see every client refuse its rounds.
        a.check_config(&options.config)
            .map_err(|why| NetError::Protocol(format!("outside the federation file: {why}")))?;
        if !options.roster.is_empty() && options.roster.len() != a.clients {
            return Err(NetError::Protocol(format!(
                "the roster names {} clients, the agreement {}",
                options.roster.len(),
                a.clients
            )));
        }
    }
    Ok(())
}
