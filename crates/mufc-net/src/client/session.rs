//! One session with the server: the Hello, the welcome, the rounds the
//! client joins step by step, and the requests it passes on meanwhile.

use mufc::remote::{Announcement, ClientRound, RemoteClient};
use mufc::{ClientId, SecAggStep};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::holding::Holding;
use super::options::{ClientEvent, ClientOptions};
use super::requests::{apply_requests, forget_message, paired, told_the_server};
use crate::NetError;
use crate::fault::Asked;
use crate::proto::client_message::Body as ClientBody;
use crate::proto::server_message::Body as ServerBody;
use crate::proto::{ClientMessage, Refusal, RoundEnd};
use crate::running::off_runtime;

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
    /// the step the server's next message asks for (its index in
    /// [`ClientRound::steps`]: 1 once the join answered the first step,
    /// 0 in a dealt round, whose client sent nothing at the join).
    current: Option<(ClientRound, Vec<u64>, usize)>,
    /// The client's signing key.
    endorser: &'a crate::endorse::Endorser,
    /// The check of its peers' signed messages, and of the clients
    /// admitted after training.
    firsts: &'a mut crate::endorse::FirstMessages,
    /// Its pairing with the dealer, with dealt masks.
    dealer: Option<&'a crate::dealer::DealerPairing>,
    /// Whether the client sent its leave in this session (issue 29): the
    /// server closes the session once it took it.
    leave_sent: bool,
}

pub(super) async fn session(
    options: &ClientOptions,
    creds: &crate::tls::ClientCredentials,
    firsts: &mut crate::endorse::FirstMessages,
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
        leave_sent: false,
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
                Ok(None) => {
                    // The server closes a session whose leave it took.
                    if s.leave_sent {
                        s.holding.stored()?.set_left()?;
                    }
                    return Ok(());
                }
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
                self.leave_if_due().await?;
            }
            ServerBody::Announcement(bytes) => self.join(&bytes).await?,
            ServerBody::Secagg(bytes) => self.step(bytes, None).await?,
            ServerBody::Directory(d) => self.step(d.secagg, Some(d.firsts)).await?,
            ServerBody::End(end) => self.end(&end)?,
            ServerBody::Admission(a) => self.admission(a)?,
            ServerBody::Departures(d) => self.departures(d)?,
            ServerBody::Withdrawn(w) => self.withdrawn(&w.reason)?,
            ServerBody::Served(s) => self.served(&s)?,
        }
        if self.current.is_none() {
            self.leave_if_due().await?;
        }
        Ok(())
    }

    /// Sends the client's signed leave once it is due (issue 29): the
    /// client is leaving, holds no point, and its whole removal's round
    /// committed. Once.
    async fn leave_if_due(&mut self) -> Result<(), NetError> {
        let Some(id) = self.party.as_ref().map(RemoteClient::id) else {
            return Ok(());
        };
        if self.leave_sent || !self.holding.stored()?.leave_due()? {
            return Ok(());
        }
        let signed = self.endorser.sign_leave(id)?;
        send(&self.outbox, ClientBody::Leave(signed)).await?;
        self.leave_sent = true;
        Ok(())
    }

    /// The server withdrew its model (docs/threat-model.md P4): every
    /// request applied and not yet acknowledged is served (no model
    /// counts its points), and no round runs again. A client that leaves
    /// sends its leave next.
    fn withdrawn(&mut self, reason: &str) -> Result<(), NetError> {
        let store = self.holding.stored()?;
        let acknowledged = store.acknowledge_withdrawn(reason)?;
        self.current = None;
        let _ = self.report.send(ClientEvent::Withdrawn {
            reason: reason.to_string(),
            acknowledged,
        });
        Ok(())
    }

    /// The server says round `served.round` served the client's requests
    /// up to `served.request` without it (its group was emptied as the
    /// round committed: the model holds none of its points): they are
    /// acknowledged in that round. A client that leaves sends its leave
    /// next.
    fn served(&mut self, served: &crate::proto::Served) -> Result<(), NetError> {
        let Some(client) = self.party.as_ref() else {
            return Ok(());
        };
        let store = self.holding.stored()?;
        let acks: Vec<u64> = (store.unacknowledged()?.into_iter())
            .filter(|r| *r <= served.request)
            .collect();
        store.acknowledge(&acks, served.round, client)?;
        let _ = self.report.send(ClientEvent::RoundEnded {
            round: served.round,
            committed: true,
            included: false,
            acknowledged: acks,
        });
        Ok(())
    }

    /// Checks the clients the server says left (issue 29): each one's
    /// certificate from the federation's authority and its signed leave
    /// ([`crate::departure::check_departures`]); then the client runs
    /// rings without them ([`RemoteClient::accept_leave`]), kept in its
    /// store. A departure that fails changes nothing, and a ring without
    /// that client is refused as before.
    fn departures(&mut self, d: crate::proto::Departures) -> Result<(), NetError> {
        let Some(party) = self.party.as_mut() else {
            return Ok(());
        };
        // Only the leaves of clients still in the last sum matter: the
        // others were taken before (the server sends every leave with
        // every announcement), and are not checked again.
        let members: Vec<(ClientId, Option<crate::proto::Signed>, Vec<u8>)> =
            (d.members.into_iter())
                .map(|m| (ClientId(m.client_id), m.leave, m.certificate))
                .filter(|(c, _, _)| party.last_sum().contains(c))
                .collect();
        if members.is_empty() {
            return Ok(());
        }
        let gone = match crate::departure::check_departures(self.firsts, &members) {
            Ok(ids) => ids,
            Err(e) => {
                let _ = self.report.send(ClientEvent::RefusedRound {
                    round: 0,
                    reason: e.to_string(),
                });
                return Ok(());
            }
        };
        for c in &gone {
            party.accept_leave(*c);
        }
        self.holding.stored()?.save(party)?;
        let _ = self.report.send(ClientEvent::Departed { ids: gone });
        Ok(())
    }

    /// Checks the clients the server says joined after training (issue
    /// 29): each one's certificate from the federation's authority, its
    /// name new to the roster, its place next on it
    /// ([`crate::endorse::FirstMessages::admit`]). Those that pass go on
    /// the roster and into the store; a member takes a setup that admits
    /// only clients so checked. An admission that fails changes nothing,
    /// and the round that would admit them is refused.
    fn admission(&mut self, a: crate::proto::Admission) -> Result<(), NetError> {
        let members: Vec<crate::client_store::Member> = (a.members.into_iter())
            .map(|m| (ClientId(m.client_id), m.name, m.certificate))
            .collect();
        match self.firsts.admit(&members) {
            Ok(gained) if gained.is_empty() => {}
            Ok(gained) => {
                self.holding.stored()?.save_admitted(&members)?;
                let _ = self.report.send(ClientEvent::Admitted { ids: gained });
            }
            Err(e) => {
                let _ = self.report.send(ClientEvent::RefusedRound {
                    round: 0,
                    reason: e.to_string(),
                });
            }
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
        let Some((half, _, next)) = self.current.as_mut() else {
            return Ok(());
        };
        let round = half.round();
        // The answer to a first step of keys is the key directory.
        let directory = *next == 1 && half.steps().first() == Some(&SecAggStep::AdvertiseKeys);
        let fault = half
            .steps()
            .get(*next)
            .map_or(Asked::Nothing, |&step| crate::fault::asked(round, step));
        *next += 1;
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
                // The server hears a protocol check's reason, and nothing
                // of a local failure (as `told_the_server`).
                let told = match &e {
                    NetError::Protocol(reason) => reason.clone(),
                    _ => "the client could not check the round's directory".into(),
                };
                return self.refuse(round, told, e.to_string()).await;
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
            Err(e @ mufc::MufcError::RoundRefused { .. }) => {
                self.refuse(round, told_the_server(&e), e.to_string())
                    .await?;
            }
            Err(e) => {
                let _ = self.report.send(ClientEvent::RoundError {
                    round,
                    reason: e.to_string(),
                });
            }
        }
        Ok(())
    }

    /// Leaves round `round`: the round goes on without this client, which
    /// answers nothing more in it and says so (`told`), so that the server
    /// stops waiting for it instead of closing it out at the step's
    /// deadline; its operator hears the whole `reason`.
    async fn refuse(&mut self, round: u64, told: String, reason: String) -> Result<(), NetError> {
        self.current = None;
        send(&self.outbox, refusal(round, told)).await?;
        let _ = self.report.send(ClientEvent::RoundError { round, reason });
        Ok(())
    }

    async fn join(&mut self, bytes: &[u8]) -> Result<(), NetError> {
        let Some(mut party) = self.party.take() else {
            return Ok(());
        };
        if let Some(a) = self.agreement {
            // The clients admitted since the agreement was written count.
            let mut a = a.clone();
            a.clients = a.clients.max(self.firsts.roster_len().unwrap_or(0));
            // Each of them checked against the authority: with groups,
            // they may sit in any group (`Agreement::admitted`).
            a.admitted = self.firsts.admitted_ids();
            party.agree(a);
        }
        self.adopt_admitting(&mut party, bytes);
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
                self.current = Some((half, acks, usize::from(first.is_some())));
                // Signed with the certificate's key: the peers check that
                // the directory gives them this client's own keys. None in
                // a dealt round: the client waits for its sealed seed.
                if let Some(first) = first {
                    let signed = self.endorser.sign(&first)?;
                    send(&self.outbox, ClientBody::First(signed)).await?;
                }
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

    /// Takes the setup of the announcement `bytes` when it is the
    /// client's own with clients admitted that the client checked
    /// ([`Self::admission`]; issue 29), with one group split or its
    /// clients moved to another, or both (`RemoteSetup::joined_since`).
    /// Any other setup is left to the join, which refuses it.
    fn adopt_admitting(&self, party: &mut RemoteClient, bytes: &[u8]) {
        let Ok(announced) = Announcement::from_bytes(bytes) else {
            return;
        };
        let Some(own) = party.setup() else { return };
        if *own == announced.setup {
            return;
        }
        let checked = |c: &ClientId| {
            let at = usize::try_from(c.0).unwrap_or(usize::MAX);
            self.firsts.roster_len().is_some_and(|n| at < n) || self.firsts.admitted(*c)
        };
        // Clients admitted, each checked; one group split (grown full) or
        // its clients moved to another (a merge, as a group falls below
        // the minimum aggregate); or clients admitted, then either.
        let taken = (announced.setup.joined_since(own)).is_ok_and(|j| j.iter().all(checked));
        if taken {
            // A setup that does not build leaves the client as it was, and
            // the join refuses the round.
            let _ = party.adopt(&announced.setup);
        }
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

/// The message telling the server that this client refuses round `round`
/// and sends nothing more in it.
fn refusal(round: u64, reason: String) -> ClientBody {
    ClientBody::Refusal(Refusal { round, reason })
}
