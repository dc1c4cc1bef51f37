//! The client process: holds its own points and seeding state in its
//! store ([`ClientStore`]), joins the rounds the server announces
//! ([`mufc::remote::RemoteClient`]), and serves its operator's removal
//! requests: it applies each at once, connected or not (the points leave
//! its store in the same transaction), asks the server for a round, and
//! acknowledges the request once a round that included it committed. A
//! lost connection is retried; nothing the client stored is lost with it.
//! Every Hello carries the identity of the client's store, so that a
//! server admits the client only from the store it first spoke from (a
//! store imported again would bring forgotten records back). On its
//! first start the client has no store: it holds its records in memory
//! and writes its store once a server welcomed it
//! ([`ClientOptions::first_start`]).

mod holding;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mufc::remote::{Announcement, ClientRound, RemoteClient};
use mufc::{ClientId, SecAggStep};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::wrappers::ReceiverStream;

use crate::NetError;
use crate::client_store::{ClientStore, FirstStart};
use crate::fault::Asked;
use crate::proto::client_message::Body as ClientBody;
use crate::proto::server_message::Body as ServerBody;
use crate::proto::{ClientMessage, Forget, Refusal, RoundEnd};
use crate::running::Running;
use crate::running::off_runtime;
use holding::{Holding, restore};

/// How the client runs.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    /// The server's address, `host:port`.
    pub server: String,
    /// The client's store: an existing one, or, if there is none and
    /// [`Self::first_start`] is set, the one the client creates once a
    /// server welcomed it.
    pub store: PathBuf,
    /// The client's name and records when its store does not exist yet
    /// (issue 28, item 10): held in memory until a server admits the
    /// client, then written to its new store (mode 0600). Until then the
    /// only file is `<store>.identity`, the identity reserved for that
    /// store; a server refusing the client for good removes it. Ignored
    /// once the store exists (its records are the client's, whatever it
    /// forgot since); a store of another client is an error.
    pub first_start: Option<FirstStart>,
    /// How often the store is read for new removal requests.
    pub poll: Duration,
    /// How long to wait before connecting again after a lost session;
    /// the wait doubles with every failed attempt, up to
    /// [`Self::max_reconnect`], and starts again from this once a server
    /// welcomed the client.
    pub reconnect: Duration,
    /// The longest wait between two attempts to connect.
    pub max_reconnect: Duration,
    /// Where to count the bytes the client's connections carry (none
    /// counted if `None`).
    pub traffic: Option<Arc<crate::transport::Traffic>>,
    /// What the client agreed on out of band
    /// ([`crate::federation_file::FederationFile::agreement`]): it joins
    /// no round whose setup lies outside it (a finer grid step, more
    /// points, another number of clients or dimension). `None`: it
    /// trusts the server's setup.
    pub agreement: Option<mufc::remote::Agreement>,
    /// How often the client pings the server
    /// ([`crate::transport::KEEPALIVE`] by default): a server that stopped
    /// answering is taken for gone after
    /// [`crate::transport::keepalive_timeout`], and the client connects
    /// again. Zero: no pings.
    pub keepalive: Duration,
    /// The largest message the client accepts or sends
    /// ([`crate::transport::MAX_MESSAGE`] by default; the server's
    /// [`crate::transport::Limits::max_message`] must allow it too).
    pub max_message: usize,
    /// The federation's clients in id order (the federation file's):
    /// every signed key in a round's directory must be the named client's
    /// (issue 28, item 8). `None`: each must be a client certificate of
    /// the federation, a different one for every client.
    pub roster: Option<Vec<String>>,
    /// With dealt masks, the client's long-term key pair and the dealer's
    /// public key: without it the client refuses dealt rounds.
    pub dealer: Option<crate::dealer::DealerPairing>,
}

impl ClientOptions {
    /// Options with the defaults: the store read every 200 ms, a lost
    /// session retried after 1 s, then 2, 4, ... up to 30 s.
    pub fn new(server: impl Into<String>, store: impl Into<PathBuf>) -> Self {
        Self {
            server: server.into(),
            store: store.into(),
            first_start: None,
            poll: Duration::from_millis(200),
            reconnect: Duration::from_secs(1),
            max_reconnect: Duration::from_secs(30),
            traffic: None,
            max_message: crate::transport::MAX_MESSAGE,
            keepalive: crate::transport::KEEPALIVE,
            agreement: None,
            roster: None,
            dealer: None,
        }
    }
}

/// What the client reports as it runs.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientEvent {
    /// The server welcomed the client.
    Connected {
        /// Its id in the federation.
        id: ClientId,
    },
    /// The client joined a round.
    Joined {
        /// The round.
        round: u64,
    },
    /// The client refused a round (its announcement broke a check).
    RefusedRound {
        /// The round.
        round: u64,
        /// Why.
        reason: String,
    },
    /// A protocol message of the round was refused or aborted the client.
    RoundError {
        /// The round.
        round: u64,
        /// Why.
        reason: String,
    },
    /// A removal request was applied to the client's state.
    Applied {
        /// The request.
        request: u64,
        /// Whether the client reseeded.
        reseeded: bool,
    },
    /// A removal request was refused (an id the client does not hold).
    RequestRefused {
        /// The request.
        request: u64,
        /// Why.
        reason: String,
    },
    /// A round ended.
    RoundEnded {
        /// The round.
        round: u64,
        /// Whether it committed.
        committed: bool,
        /// Whether its sum holds this client.
        included: bool,
        /// The requests it acknowledged.
        acknowledged: Vec<u64>,
    },
    /// The session ended; the client connects again.
    Disconnected {
        /// Why.
        reason: String,
    },
}

/// A running client.
#[derive(Debug)]
pub struct ClientHandle {
    events: mpsc::UnboundedReceiver<ClientEvent>,
    running: Running,
}

impl ClientHandle {
    /// The next event (`None` once the client stopped).
    pub async fn next_event(&mut self) -> Option<ClientEvent> {
        self.events.recv().await
    }

    /// Stops the client and waits for it.
    ///
    /// # Errors
    ///
    /// The error the client stopped on, if any.
    pub async fn stop(self) -> Result<(), NetError> {
        self.running.stop().await
    }
}

/// Starts the client with its credentials `creds`
/// ([`crate::tls::client_credentials`]).
///
/// # Errors
///
/// [`NetError::ClientStore`] if the store does not open or is another
/// client's, if there is none and no first start, or if the first
/// start's points lie outside the model's box.
pub fn start_client(
    options: ClientOptions,
    creds: crate::tls::ClientCredentials,
) -> Result<ClientHandle, NetError> {
    let store = Holding::open(&options.store, options.first_start.as_ref())?;
    let firsts = crate::endorse::FirstMessages::new(&creds.ca_pem, options.roster.clone())?;
    let (report, events) = mpsc::unbounded_channel();
    let (shutdown_tx, shutdown_rx) = oneshot::channel();
    let task = tokio::spawn(run(options, creds, firsts, store, report, shutdown_rx));
    Ok(ClientHandle {
        events,
        running: Running::new("client", shutdown_tx, task),
    })
}

async fn run(
    options: ClientOptions,
    creds: crate::tls::ClientCredentials,
    firsts: crate::endorse::FirstMessages,
    mut store: Holding,
    report: mpsc::UnboundedSender<ClientEvent>,
    mut shutdown: oneshot::Receiver<()>,
) -> Result<(), NetError> {
    // The client's state outlives its sessions: loaded (and retrained)
    // from the store once, kept in step with it by every change.
    let mut party: Option<RemoteClient> = None;
    // Exponential backoff (issue 28, item 11): a server that is down for
    // long is not asked once a second for ever.
    let mut wait = options.reconnect;
    loop {
        let mut welcomed = false;
        let outcome = tokio::select! {
            _ = &mut shutdown => return Ok(()),
            r = session(&options, &creds, &firsts, &mut store, &report, &mut party, &mut welcomed) => r,
        };
        if welcomed {
            wait = options.reconnect;
        }
        let reason = match outcome {
            Ok(()) => "the server closed the session".to_string(),
            Err(e) if crate::transport::fatal(&e) => {
                // Refused before any welcome: a first start leaves no file.
                store.refused();
                return Err(e);
            }
            Err(e) => e.to_string(),
        };
        let _ = report.send(ClientEvent::Disconnected { reason });
        // Erasure does not wait for the server (issue 28, item 3): while
        // the client is between sessions, the operator's requests are
        // still applied at once, and the server hears of them at the next
        // welcome, as of every request not yet acknowledged.
        let reconnect = tokio::time::sleep(wait);
        wait = wait
            .saturating_mul(2)
            .min(options.max_reconnect.max(options.reconnect));
        tokio::pin!(reconnect);
        let mut poll = tokio::time::interval(options.poll);
        loop {
            tokio::select! {
                _ = &mut shutdown => return Ok(()),
                () = &mut reconnect => break,
                _ = poll.tick() => {
                    if let Some(store) = store.store() {
                        apply_requests(store, &report, &mut party, options.dealer.as_ref()).await?;
                    }
                }
            }
        }
    }
}

/// Applies the operator's new requests to the client's state and its
/// store (the points leave the store in the request's transaction);
/// returns the requests applied. A client not loaded yet is restored from
/// its store first; one no server has welcomed has no party, and its
/// store applies the request to the points alone.
async fn apply_requests(
    store: &ClientStore,
    report: &mpsc::UnboundedSender<ClientEvent>,
    party: &mut Option<RemoteClient>,
    dealer: Option<&crate::dealer::DealerPairing>,
) -> Result<Vec<u64>, NetError> {
    let pending = store.pending()?;
    if pending.is_empty() {
        return Ok(Vec::new());
    }
    if party.is_none()
        && let Some(id) = store.id()?
    {
        *party = Some(paired(restore(store, id).await?, dealer)?);
    }
    let mut applied = Vec::new();
    for (request, ids) in pending {
        // The request's own fault (an id the client does not hold) refuses
        // it; the store's ends the client.
        let outcome = match party.as_mut() {
            Some(client) => match client.forget(&ids) {
                Ok(reseeded) => {
                    store.applied(request, client)?;
                    Ok(reseeded)
                }
                Err(e) => Err(e),
            },
            None => match store.apply_unwelcomed(request, &ids) {
                Ok(()) => Ok(false),
                Err(NetError::Mufc(e)) => Err(e),
                Err(e) => return Err(e),
            },
        };
        match outcome {
            Ok(reseeded) => {
                let _ = report.send(ClientEvent::Applied { request, reseeded });
                applied.push(request);
            }
            Err(e) => {
                let reason = e.to_string();
                store.refuse(request, &reason)?;
                let _ = report.send(ClientEvent::RequestRefused { request, reason });
            }
        }
    }
    Ok(applied)
}

/// `client`, paired with the dealer when the masks are dealt.
fn paired(
    client: RemoteClient,
    dealer: Option<&crate::dealer::DealerPairing>,
) -> Result<RemoteClient, NetError> {
    match dealer {
        Some(d) => d.pair(client),
        None => Ok(client),
    }
}

/// Why the client refuses a round, as the server hears it: a protocol
/// check's reason (about the round, never the client's data), or only
/// that the client failed. Its own error may hold a record's coordinate
/// (a point outside the box) or its counts; the operator sees it in the
/// client's events, the server never does (issue 28, item 10).
fn told_the_server(e: &mufc::MufcError) -> String {
    match e {
        mufc::MufcError::RoundRefused { reason, .. } => reason.clone(),
        _ => "the client could not take part in the round (its own log says why)".into(),
    }
}

/// The message asking the server for a round for `request`, with when
/// it was asked (the lone-update deadline counts from then, across
/// server restarts).
fn forget_message(store: &ClientStore, request: u64) -> Result<ClientBody, NetError> {
    let asked_at = store.asked_at(request)?.unwrap_or(0);
    Ok(ClientBody::Forget(Forget { request, asked_at }))
}

/// The state of one session.
struct Session<'a> {
    /// What the client holds the server's setups to.
    agreement: Option<&'a mufc::remote::Agreement>,
    holding: &'a mut Holding,
    report: &'a mpsc::UnboundedSender<ClientEvent>,
    outbox: mpsc::Sender<ClientMessage>,
    party: &'a mut Option<RemoteClient>,
    /// Set once a server welcomed the client in this session.
    welcomed: &'a mut bool,
    /// The round in progress, with the requests it will acknowledge and
    /// the number of steps the server asked for so far.
    current: Option<(ClientRound, Vec<u64>, usize)>,
    /// The client's signing key.
    endorser: &'a crate::endorse::Endorser,
    /// The check of its peers' signed messages.
    firsts: &'a crate::endorse::FirstMessages,
    /// Its pairing with the dealer, with dealt masks.
    dealer: Option<&'a crate::dealer::DealerPairing>,
}

async fn session(
    options: &ClientOptions,
    creds: &crate::tls::ClientCredentials,
    firsts: &crate::endorse::FirstMessages,
    store: &mut Holding,
    report: &mpsc::UnboundedSender<ClientEvent>,
    party: &mut Option<RemoteClient>,
    welcomed: &mut bool,
) -> Result<(), NetError> {
    let traffic = options.traffic.clone().unwrap_or_default();
    let mut rpc = crate::transport::connect_counted(
        &options.server,
        creds.config.clone(),
        traffic,
        options.max_message,
        options.keepalive,
    )
    .await?;
    let (outbox, rx) = mpsc::channel(64);
    let hello = store.hello(party.as_ref())?;
    send(&outbox, ClientBody::Hello(hello)).await?;
    let mut inbound = rpc
        .join(ReceiverStream::new(rx))
        .await
        .map_err(|s| crate::transport::status_error(&s))?
        .into_inner();
    let mut s = Session {
        agreement: options.agreement.as_ref(),
        holding: store,
        report,
        outbox,
        party,
        welcomed,
        current: None,
        endorser: &creds.endorser,
        firsts,
        dealer: options.dealer.as_ref(),
    };
    let mut poll = tokio::time::interval(options.poll);
    loop {
        tokio::select! {
            msg = inbound.message() => match msg {
                Ok(Some(m)) => {
                    if let Some(body) = m.body {
                        s.on_message(body).await?;
                    }
                }
                Ok(None) => return Ok(()),
                Err(status) => return Err(crate::transport::status_error(&status)),
            },
            _ = poll.tick() => s.serve_requests().await?,
        }
    }
}

async fn send(outbox: &mpsc::Sender<ClientMessage>, body: ClientBody) -> Result<(), NetError> {
    outbox
        .send(ClientMessage { body: Some(body) })
        .await
        .map_err(|_| NetError::Transport("the session closed".into()))
}

impl Session<'_> {
    async fn on_message(&mut self, body: ServerBody) -> Result<(), NetError> {
        match body {
            ServerBody::Welcome(w) => {
                let id = ClientId(w.client_id);
                match self.party.as_ref().map(RemoteClient::id) {
                    Some(known) if known == id => {}
                    Some(known) => {
                        return Err(NetError::Protocol(format!(
                            "the server welcomed this client as {id}, earlier as {known}"
                        )));
                    }
                    None => {
                        let welcomed = self.holding.welcome(id).await?;
                        *self.party = Some(paired(welcomed, self.dealer)?);
                    }
                }
                *self.welcomed = true;
                let _ = self.report.send(ClientEvent::Connected { id });
                // The server may have restarted since: it hears again of
                // every request not yet acknowledged.
                let store = self.holding.stored()?;
                for request in store.unacknowledged()? {
                    send(&self.outbox, forget_message(store, request)?).await?;
                }
            }
            ServerBody::Announcement(bytes) => self.join(&bytes).await?,
            ServerBody::Secagg(bytes) => self.step(bytes, None).await?,
            ServerBody::Directory(d) => self.step(d.secagg, Some(d.firsts)).await?,
            ServerBody::End(end) => self.end(&end)?,
        }
        Ok(())
    }

    /// Answers the server's next message of the round in progress. The
    /// answer to the first step, the key directory, must come with the
    /// signed first messages of the clients it names (`firsts`, issue 28,
    /// item 8): the client checks them and the directory against them
    /// before it uses a key; any failure aborts it for this round.
    async fn step(
        &mut self,
        bytes: Vec<u8>,
        firsts: Option<Vec<crate::proto::Endorsed>>,
    ) -> Result<(), NetError> {
        let Some((half, _, asked)) = self.current.as_mut() else {
            return Ok(());
        };
        let round = half.round();
        let directory = *asked == 0;
        *asked += 1;
        let fault = half
            .steps()
            .get(*asked)
            .map_or(Asked::Nothing, |&step| crate::fault::asked(round, step));
        match fault {
            Asked::Reconnect => {
                return Err(NetError::Transport("dropped the session (fault)".into()));
            }
            Asked::Delay => tokio::time::sleep(crate::fault::DELAY).await,
            Asked::Nothing => {}
        }
        let checked = match (directory, firsts) {
            (true, Some(firsts)) => self.firsts.check(&firsts).map(Some),
            (true, None) => Err(NetError::Protocol(
                "the key directory came without its clients' signed messages".into(),
            )),
            (false, _) => Ok(None),
        };
        let firsts = match checked {
            Ok(f) => f,
            Err(e) => {
                // The round goes on without this client: it answers
                // nothing more in it.
                self.current = None;
                let _ = self.report.send(ClientEvent::RoundError {
                    round,
                    reason: e.to_string(),
                });
                return Ok(());
            }
        };
        let taken = self.current.take();
        let (back, handled) = off_runtime(taken, move |current| match current {
            Some((half, _, _)) => {
                if let Some(firsts) = &firsts {
                    half.check_directory(&bytes, firsts)?;
                }
                half.handle(&bytes)
            }
            None => Err(mufc::MufcError::Remote("no round in progress".into())),
        })
        .await;
        self.current = back;
        // Once the client knows whose inputs the round's sum holds, it
        // keeps them (on disk before its answer leaves): every later ring
        // must name them (issue 28, item 5).
        if let (Some((half, _, _)), Some(party)) = (self.current.as_ref(), self.party.as_mut())
            && party.took_part(half)
        {
            self.holding.stored()?.save(party)?;
        }
        match handled {
            Ok(reply) => send(&self.outbox, ClientBody::Secagg(reply)).await?,
            Err(e) => {
                if matches!(e, mufc::MufcError::RoundRefused { .. }) {
                    self.current = None;
                }
                let _ = self.report.send(ClientEvent::RoundError {
                    round,
                    reason: e.to_string(),
                });
            }
        }
        Ok(())
    }

    async fn join(&mut self, bytes: &[u8]) -> Result<(), NetError> {
        let Some(mut party) = self.party.take() else {
            return Ok(());
        };
        if let Some(a) = self.agreement {
            party.agree(a.clone());
        }
        let bytes = bytes.to_vec();
        let (party, joined) = off_runtime(party, move |client: &mut RemoteClient| {
            Announcement::from_bytes(&bytes).and_then(|a| {
                crate::fault::asked(a.spec.round, SecAggStep::AdvertiseKeys);
                client.join(&a)
            })
        })
        .await;
        let client = self.party.insert(party);
        match joined {
            Ok((half, first)) => {
                // The session is on disk before any message of it leaves:
                // a restarted client never joins it again.
                let store = self.holding.stored()?;
                store.save(client)?;
                let acks = store.unacknowledged()?;
                let round = half.round();
                self.current = Some((half, acks, 0));
                // Signed with the certificate's key: the peers check that
                // the directory gives them this client's own keys.
                let signed = self.endorser.sign(&first)?;
                send(&self.outbox, ClientBody::First(signed)).await?;
                let _ = self.report.send(ClientEvent::Joined { round });
            }
            Err(e) => {
                let round = match &e {
                    mufc::MufcError::RoundRefused { round, .. } => *round,
                    _ => 0,
                };
                let reason = e.to_string();
                send(
                    &self.outbox,
                    ClientBody::Refusal(Refusal {
                        round,
                        reason: told_the_server(&e),
                    }),
                )
                .await?;
                let _ = self
                    .report
                    .send(ClientEvent::RefusedRound { round, reason });
            }
        }
        Ok(())
    }

    fn end(&mut self, end: &RoundEnd) -> Result<(), NetError> {
        let Some(client) = self.party.as_mut() else {
            return Ok(());
        };
        let Some((half, acks, _)) = self.current.take_if(|(h, _, _)| h.round() == end.round) else {
            return Ok(());
        };
        let included = end.included.contains(&client.id().0);
        let acknowledged = if end.committed && included {
            client.commit(half);
            let store = self.holding.stored()?;
            store.acknowledge(&acks, end.round, client)?;
            acks
        } else {
            Vec::new()
        };
        let _ = self.report.send(ClientEvent::RoundEnded {
            round: end.round,
            committed: end.committed,
            included,
            acknowledged,
        });
        Ok(())
    }

    /// Applies the operator's new requests and asks the server for a
    /// round. Before the welcome the client waits: its id, and so its
    /// party, come from the server.
    async fn serve_requests(&mut self) -> Result<(), NetError> {
        if self.party.is_none() {
            return Ok(());
        }
        let Some(store) = self.holding.store() else {
            return Ok(());
        };
        for request in apply_requests(store, self.report, self.party, self.dealer).await? {
            send(&self.outbox, forget_message(store, request)?).await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server hears a protocol check's reason, and nothing of a
    /// client's own failure: no coordinate, no point, no count.
    #[test]
    fn a_refusal_tells_the_server_nothing_of_the_data() {
        let outside = mufc::MufcError::OutsideBox {
            client: ClientId(3),
            id: seeding::PointId(17),
            axis: 1,
            value: 12.375,
        };
        let told = told_the_server(&outside);
        for secret in ["12.375", "17", "axis"] {
            assert!(!told.contains(secret), "{told}");
        }
        let refused = mufc::MufcError::RoundRefused {
            round: 4,
            reason: "the ring names client 9, outside the federation's roster".into(),
        };
        assert_eq!(
            told_the_server(&refused),
            "the ring names client 9, outside the federation's roster"
        );
    }
}
