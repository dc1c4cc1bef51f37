//! The dealer process, with dealt masks ([`mufc::Masks::Dealer`]): a third
//! party that shares a key with each client, agreed once from their
//! long-term X25519 keys ([`mufc::remote::RemoteDealer`]). It connects to
//! the server like a client does, over TLS 1.3 with its certificate from
//! the federation's authority ([`crate::certs::FederationCa::issue_dealer`]),
//! and answers each round's deal request: it checks the round as a client
//! does (the ring, its groups, the minimum aggregate, the setup against
//! its agreement) and returns each client's sealed seed and the
//! correction the server adds to the sum. It never sees a histogram or a
//! masked message. A lost connection is retried with a growing wait.
//!
//! ```no_run
//! use mufc_net::dealer::{DealerOptions, start_dealer};
//! use syndrome_agg::masking::pairwise::MaskKeyPair;
//! # async fn run(tls: std::sync::Arc<rustls::ClientConfig>) -> Result<(), mufc_net::NetError> {
//! let key = MaskKeyPair::generate(&mut rand::rng());
//! let clients = std::collections::BTreeMap::new(); // each client's public key, pinned
//! let mut dealer = start_dealer(DealerOptions::new("127.0.0.1:7070", clients), &key, tls)?;
//! while let Some(event) = dealer.next_event().await {
//!     println!("{event:?}");
//! }
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mufc::ClientId;
use mufc::remote::{Agreement, Announcement, RemoteDealer};
pub use syndrome_agg::masking::pairwise::{MaskKeyPair, MaskPublicKey};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;

use crate::NetError;
use crate::proto::deal_answer::Outcome;
use crate::proto::dealer_message::Body;
use crate::proto::{DealAnswer, DealRequest, DealerHello, DealerMessage};
use crate::running::{Running, off_runtime};
use crate::server::PROTOCOL_VERSION;

/// A client's side of dealt masks: its long-term key pair and the
/// dealer's public key, pinned out of band (the federation file's). The
/// client agrees its key with the dealer once it has a party
/// ([`mufc::remote::RemoteClient::pair_with_dealer`]).
#[derive(Clone, Debug)]
pub struct DealerPairing {
    /// The client's long-term key pair (its secret never leaves it).
    pub own: Arc<MaskKeyPair>,
    /// The dealer's public key.
    pub dealer: MaskPublicKey,
}

impl DealerPairing {
    /// Pairs `client` with the dealer.
    ///
    /// # Errors
    ///
    /// [`NetError::Mufc`] for a low-order dealer key.
    pub fn pair(
        &self,
        mut client: mufc::remote::RemoteClient,
    ) -> Result<mufc::remote::RemoteClient, NetError> {
        client.pair_with_dealer(&self.own, &self.dealer)?;
        Ok(client)
    }
}

/// How the dealer runs.
#[derive(Clone, Debug)]
pub struct DealerOptions {
    /// The server's address, `host:port`.
    pub server: String,
    /// Each client's long-term public key, pinned out of band (the
    /// federation file's): the dealer deals for no other client.
    pub clients: BTreeMap<ClientId, MaskPublicKey>,
    /// What the dealer agreed on out of band: it deals for no setup
    /// outside it. `None`: it deals for the setup of its first deal only.
    pub agreement: Option<Agreement>,
    /// How long to wait before connecting again after a lost session
    /// (doubling up to [`Self::max_reconnect`]).
    pub reconnect: Duration,
    /// The longest wait between two attempts to connect.
    pub max_reconnect: Duration,
    /// How often the dealer pings the server (zero: never).
    pub keepalive: Duration,
    /// The largest message accepted or sent.
    pub max_message: usize,
    /// Where to look for the keys of clients that join after the dealer
    /// started (issue 29): asked when a round's roster names a client the
    /// dealer shares no key with. `None`: the dealer deals for the
    /// clients of [`Self::clients`] only.
    pub later_keys: Option<KeySource>,
}

/// The keys of clients pinned after the dealer started, as its operator
/// pins them: `mufc dealer` reads its federation file again, which
/// `mufc certs --join` extends. Each key the source gives for a client
/// the dealer does not know is pinned ([`RemoteDealer::pin_client`]); a
/// key for a client it knows is ignored (a pinned key never changes).
#[derive(Clone)]
pub struct KeySource(
    Arc<dyn Fn() -> Result<BTreeMap<ClientId, MaskPublicKey>, String> + Send + Sync>,
);

impl KeySource {
    /// A source that calls `read` for every client's pinned key.
    pub fn new(
        read: impl Fn() -> Result<BTreeMap<ClientId, MaskPublicKey>, String> + Send + Sync + 'static,
    ) -> Self {
        Self(Arc::new(read))
    }

    fn read(&self) -> Result<BTreeMap<ClientId, MaskPublicKey>, String> {
        (self.0)()
    }
}

impl std::fmt::Debug for KeySource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeySource(..)")
    }
}

impl DealerOptions {
    /// Options with the defaults (as [`crate::client::ClientOptions::new`]).
    pub fn new(server: impl Into<String>, clients: BTreeMap<ClientId, MaskPublicKey>) -> Self {
        Self {
            server: server.into(),
            clients,
            agreement: None,
            reconnect: Duration::from_secs(1),
            max_reconnect: Duration::from_secs(30),
            keepalive: crate::transport::KEEPALIVE,
            max_message: crate::transport::MAX_MESSAGE,
            later_keys: None,
        }
    }
}

/// What the dealer reports as it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DealerEvent {
    /// The server took the dealer's session.
    Connected,
    /// The dealer dealt a round.
    Dealt {
        /// The round.
        round: u64,
    },
    /// The dealer refused to deal a round (the server's request broke a
    /// check), and told the server why.
    Refused {
        /// The round.
        round: u64,
        /// Why.
        reason: String,
    },
    /// The session ended; the dealer connects again.
    Disconnected {
        /// Why.
        reason: String,
    },
}

/// A running dealer.
#[derive(Debug)]
pub struct DealerHandle {
    events: mpsc::UnboundedReceiver<DealerEvent>,
    running: Running,
}

impl DealerHandle {
    /// The next event (`None` once the dealer stopped).
    pub async fn next_event(&mut self) -> Option<DealerEvent> {
        self.events.recv().await
    }

    /// Stops the dealer and waits for it.
    ///
    /// # Errors
    ///
    /// The error the dealer stopped on, if any.
    pub async fn stop(self) -> Result<(), NetError> {
        self.running.stop().await
    }
}

/// Starts the dealer with its static key pair `key` and the TLS
/// configuration `tls` ([`crate::tls::client_config`] with the dealer's
/// certificate).
///
/// # Errors
///
/// [`NetError::Mufc`] for a low-order client key among
/// [`DealerOptions::clients`] (its agreement would contribute nothing
/// secret).
pub fn start_dealer(
    options: DealerOptions,
    key: &MaskKeyPair,
    tls: Arc<rustls::ClientConfig>,
) -> Result<DealerHandle, NetError> {
    let mut dealer = RemoteDealer::new(key, &options.clients)?;
    if let Some(a) = &options.agreement {
        dealer.agree(a.clone());
    }
    // Kept to agree the keys of clients that join.
    let own = Arc::new(MaskKeyPair::from_secret_bytes(*key.secret_bytes()));
    let (report, events) = mpsc::unbounded_channel();
    let (shutdown_tx, shutdown_rx) = oneshot::channel();
    let task = tokio::spawn(run(options, tls, (dealer, own), report, shutdown_rx));
    Ok(DealerHandle {
        events,
        running: Running::new("dealer", shutdown_tx, task),
    })
}

async fn run(
    options: DealerOptions,
    tls: Arc<rustls::ClientConfig>,
    (dealer, own): (RemoteDealer, Arc<MaskKeyPair>),
    report: mpsc::UnboundedSender<DealerEvent>,
    mut shutdown: oneshot::Receiver<()>,
) -> Result<(), NetError> {
    let mut dealer = Some(dealer);
    let mut wait = options.reconnect;
    loop {
        let mut taken = false;
        let outcome = tokio::select! {
            _ = &mut shutdown => return Ok(()),
            r = session(&options, &tls, (&mut dealer, &own), &report, &mut taken) => r,
        };
        // A server that took the session was up: the next wait starts
        // short again, however the session ended.
        if taken {
            wait = options.reconnect;
        }
        let reason = match outcome {
            Ok(()) => "the server closed the session".to_string(),
            Err(e) if crate::transport::fatal(&e) => return Err(e),
            Err(e) => e.to_string(),
        };
        let _ = report.send(DealerEvent::Disconnected { reason });
        tokio::select! {
            _ = &mut shutdown => return Ok(()),
            () = tokio::time::sleep(wait) => {}
        }
        wait = wait
            .saturating_mul(2)
            .min(options.max_reconnect.max(options.reconnect));
    }
}

/// One session: answers the server's deal requests until it closes;
/// `taken` is set once the server took the session.
async fn session(
    options: &DealerOptions,
    tls: &Arc<rustls::ClientConfig>,
    (dealer, own): (&mut Option<RemoteDealer>, &Arc<MaskKeyPair>),
    report: &mpsc::UnboundedSender<DealerEvent>,
    taken: &mut bool,
) -> Result<(), NetError> {
    let mut rpc = crate::transport::connect_counted(
        &options.server,
        tls.clone(),
        Arc::default(),
        options.max_message,
        options.keepalive,
    )
    .await?;
    let (outbox, rx) = mpsc::channel(8);
    let hello = Body::Hello(DealerHello {
        protocol: PROTOCOL_VERSION,
    });
    send(&outbox, hello).await?;
    let mut inbound = rpc
        .deal(ReceiverStream::new(rx))
        .await
        .map_err(|s| crate::transport::status_error(&s))?
        .into_inner();
    *taken = true;
    let _ = report.send(DealerEvent::Connected);
    loop {
        let request = match inbound.message().await {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(()),
            Err(status) => return Err(crate::transport::status_error(&status)),
        };
        let round = request.round;
        // A test's dealer that dies mid-deal (debug builds only).
        crate::fault::dealer_asked(round);
        // Sealing and the correction are CPU work: off the runtime.
        let held = dealer
            .take()
            .ok_or_else(|| NetError::Protocol("the dealer's state was lost".into()))?;
        let later = options.later_keys.clone().map(|s| (own.clone(), s));
        let (back, dealt) = off_runtime(held, move |d| answer(d, &request, later)).await;
        *dealer = Some(back);
        let outcome = match dealt {
            Ok(bytes) => {
                let _ = report.send(DealerEvent::Dealt { round });
                Outcome::Dealt(bytes)
            }
            Err(e) => {
                let reason = e.to_string();
                let _ = report.send(DealerEvent::Refused {
                    round,
                    reason: reason.clone(),
                });
                Outcome::Refusal(reason)
            }
        };
        let answer = DealAnswer {
            round,
            outcome: Some(outcome),
        };
        send(&outbox, Body::Answer(answer)).await?;
    }
}

/// The deal of `request`: its announcement parsed and checked to be of
/// the round the request names, then dealt. With `later` (the dealer's
/// key pair and where its operator pins keys since), a roster that names
/// a client the dealer shares no key with first pins the keys the source
/// gives for clients it does not know.
fn answer(
    dealer: &mut RemoteDealer,
    request: &DealRequest,
    later: Option<(Arc<MaskKeyPair>, KeySource)>,
) -> Result<Vec<u8>, mufc::MufcError> {
    let announcement = Announcement::from_bytes(&request.announcement)?;
    if let Some((own, source)) = later {
        pin_later_keys(dealer, &announcement, &own, &source)?;
    }
    if announcement.spec.round != request.round {
        return Err(mufc::MufcError::RoundRefused {
            round: request.round,
            reason: format!(
                "the request names round {}, its announcement round {}",
                request.round, announcement.spec.round
            ),
        });
    }
    dealer.deal(&announcement, &request.request)
}

async fn send(outbox: &mpsc::Sender<DealerMessage>, body: Body) -> Result<(), NetError> {
    outbox
        .send(DealerMessage { body: Some(body) })
        .await
        .map_err(|_| NetError::Transport("the session closed".into()))
}

/// Pins the keys `source` gives for the clients of `announcement`'s
/// roster the dealer shares no key with (clients that joined): the others
/// it gives are ignored, and a roster whose new clients the source does
/// not name is left to the deal to refuse.
fn pin_later_keys(
    dealer: &mut RemoteDealer,
    announcement: &Announcement,
    own: &MaskKeyPair,
    source: &KeySource,
) -> Result<(), mufc::MufcError> {
    let known: std::collections::BTreeSet<ClientId> = dealer.clients().collect();
    let roster = announcement.setup.roster();
    if roster.iter().all(|c| known.contains(c)) {
        return Ok(());
    }
    let keys = source.read().map_err(|why| {
        mufc::MufcError::Remote(format!("the dealer cannot read its pinned keys: {why}"))
    })?;
    for (id, key) in keys
        .iter()
        .filter(|(c, _)| !known.contains(c) && roster.contains(c))
    {
        dealer.pin_client(own, *id, key)?;
    }
    Ok(())
}
