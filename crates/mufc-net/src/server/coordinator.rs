//! The one task that holds the federation: it registers sessions, decides
//! when a round runs, drives it step by step with a deadline on each, and
//! commits it to the store before it tells the clients.
//!
//! A round runs in one group ([`RemoteServer::groups`]; the whole roster
//! when flat): training is one round per group, each once its members
//! are connected, and a removal is a round of the requester's group. Only
//! the group's members hear of the round, and the others go on idle.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use mufc::ClientId;
use mufc::remote::{Registration, RemoteServer, RemoteSetup, RoundStep, ServerRound};
use mufc_store::{IfExists, RoundEntry, Store};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tonic::Status;

use super::stores::ClientStores;
use super::{Event, ServerEvent, ServerOptions, pending_setup};
use crate::NetError;
use crate::proto::client_message::Body as ClientBody;
use crate::proto::server_message::Body as ServerBody;
use crate::proto::{RoundEnd, ServerMessage, Welcome};
use crate::running::off_runtime;

/// How long the server waits before it retries a round that failed.
const RETRY: Duration = Duration::from_millis(500);

/// A client's removal requests not yet served: one entry per client,
/// whatever it sends (issue 28, item 9: 200k Forget messages from one
/// member made as many queue entries and audit rows). A round serves a
/// client's points as they are when it joins, so one round serves every
/// request it made before: the entry keeps the highest number heard (a
/// client numbers its requests in order), and the round's audit row for
/// the client names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Queued {
    client: ClientId,
    /// The client's highest number among its waiting requests.
    request: u64,
    /// Since when it waits: a round of its group runs without absent
    /// members once it has waited the join timeout.
    since: Instant,
}

/// The round to run next: a group, its ring (its members connected, and
/// every member of the group's model even if absent: issue 28, item 5),
/// and the members it brings back into the model (a catch-up round).
struct Next {
    group: usize,
    ring: Vec<ClientId>,
    catch_up: Vec<ClientId>,
}

/// One client's open session.
#[derive(Debug)]
struct Session {
    conn: u64,
    outbox: mpsc::Sender<Result<ServerMessage, Status>>,
    /// Its certificate's fingerprint (checked against the revocation
    /// list before every round).
    fingerprint: crate::revocation::Fingerprint,
    /// Its certificate (DER).
    certificate: Vec<u8>,
}

pub(super) struct Coordinator {
    options: ServerOptions,
    roster: Vec<String>,
    remote: Option<RemoteServer>,
    store: Option<Store>,
    sessions: BTreeMap<ClientId, Session>,
    registrations: BTreeMap<ClientId, Registration>,
    /// Removal requests not yet served, oldest first.
    queue: Vec<Queued>,
    retry_at: Option<Instant>,
    events: mpsc::Receiver<Event>,
    report: mpsc::UnboundedSender<ServerEvent>,
    /// The store each client spoke from (shared with the handler).
    stores: Arc<std::sync::Mutex<ClientStores>>,
    /// The revocation list (shared with the handler).
    revoked: Arc<std::sync::Mutex<crate::revocation::Watched>>,
    /// The session (connection) in which each client was last brought
    /// back into the model: a catch-up round runs once per session, so a
    /// catch-up that fails is not retried without end.
    caught_up: BTreeMap<ClientId, u64>,
}

/// What a round's events did to it.
#[derive(Default)]
struct InRound {
    refused: BTreeSet<ClientId>,
    /// The session of each client when the round started: a client that
    /// reconnects during the round has lost its part of it (its new
    /// session never heard the announcement), so the round neither waits
    /// for it nor takes its messages.
    sessions: BTreeMap<ClientId, u64>,
    /// The signed first message of each client that sent one, with its
    /// certificate: relayed with the key directory (issue 28, item 8).
    endorsed: BTreeMap<ClientId, crate::proto::Endorsed>,
    /// How many times the server sent the round's clients a step's
    /// messages: the first is the key directory.
    steps_sent: usize,
}

impl InRound {
    fn in_session(&self, id: ClientId, conn: u64) -> bool {
        self.sessions.get(&id) == Some(&conn)
    }
}

impl Coordinator {
    /// Resumes from the store if it exists.
    pub(super) fn open(
        options: ServerOptions,
        events: mpsc::Receiver<Event>,
        report: mpsc::UnboundedSender<ServerEvent>,
        stores: Arc<std::sync::Mutex<ClientStores>>,
        revoked: Arc<std::sync::Mutex<crate::revocation::Watched>>,
    ) -> Result<Self, NetError> {
        let mut roster = options.roster.clone();
        let (remote, store) = if options.store.exists() {
            let store = Store::open(&options.store)?;
            let stored = store.roster()?.ok_or_else(|| {
                NetError::Protocol(format!(
                    "{} is the store of a federation run in one process, not a server's",
                    options.store.display()
                ))
            })?;
            check_roster(&roster, &stored, "the store's")?;
            roster = stored;
            let ids = (0..roster.len() as u64).map(ClientId).collect();
            let remote = RemoteServer::resume(store.federation().clone(), ids)?;
            check_agreed(&options, remote.setup())?;
            let _ = report.send(ServerEvent::Resumed {
                rounds: remote.rounds(),
            });
            // A setup left from before training is superseded.
            let _ = pending_setup::remove(&pending_setup::path_of(&options.store));
            (Some(remote), Some(store))
        } else if let Some((names, setup)) =
            pending_setup::read(&pending_setup::path_of(&options.store))?
        {
            check_roster(&roster, &names, "the kept setup's")?;
            check_agreed(&options, &setup)?;
            roster = names;
            let _ = report.send(ServerEvent::SetupRestored);
            (Some(RemoteServer::new(setup)?), None)
        } else {
            (None, None)
        };
        if roster.is_empty() {
            return Err(NetError::Protocol("the roster names no client".into()));
        }
        Ok(Self {
            options,
            roster,
            remote,
            store,
            sessions: BTreeMap::new(),
            registrations: BTreeMap::new(),
            queue: Vec::new(),
            retry_at: None,
            events,
            report,
            stores,
            revoked,
            caught_up: BTreeMap::new(),
        })
    }

    pub(super) fn roster(&self) -> &[String] {
        &self.roster
    }

    fn may_retry(&self) -> bool {
        self.retry_at.is_none_or(|t| Instant::now() >= t)
    }

    /// The round that should start now, if any: the first group, in
    /// order, that has not trained and whose members are all connected;
    /// or that has a request (under the lone-update policy) and whose
    /// members are all connected or whose oldest request has waited the
    /// join timeout; or that has a member connected whose data its model
    /// lacks, not yet brought back in this session (a catch-up round,
    /// issue 28, item 4).
    ///
    /// A trained group's ring names every member of its model's sum,
    /// connected or not (issue 28, item 5): a ring without one would let
    /// the server difference two sums and read that member's histogram,
    /// and its clients refuse it. An absent member is a dropout at the
    /// protocol's first step, so such a round runs only when the members
    /// connected are enough for the protocol's threshold; otherwise the
    /// group waits for them.
    fn next(&self) -> Option<Next> {
        if !self.may_retry() {
            return None;
        }
        let remote = self.remote.as_ref()?;
        for (group, members) in remote.groups().iter().enumerate() {
            let connected: Vec<ClientId> = (members.iter().copied())
                .filter(|c| self.sessions.contains_key(c))
                .collect();
            let everyone = connected.len() == members.len();
            if !remote.group_trained(group) {
                // Training waits for the whole group.
                if everyone && !members.is_empty() {
                    return Some(Next {
                        group,
                        ring: members.clone(),
                        catch_up: Vec::new(),
                    });
                }
                continue;
            }
            let included = remote.included(group);
            // One entry per client (`Queued`): the entries are the
            // clients whose message the round changes.
            let waiting: Vec<&Queued> = (self.queue.iter())
                .filter(|q| members.contains(&q.client))
                .collect();
            let oldest = waiting.iter().map(|q| q.since).min();
            let removal = oldest.is_some_and(|since| {
                // The lone-update policy (issue 28, item 7).
                let enough = waiting.len() >= self.min_updating(members)
                    || since.elapsed() >= self.options.max_defer;
                enough && (everyone || since.elapsed() >= self.options.join_timeout)
            });
            let catch_up: Vec<ClientId> = (connected.iter().copied())
                .filter(|c| !included.contains(c) && self.caught_up.get(c) != self.conn_of(*c))
                .collect();
            if !removal && catch_up.is_empty() {
                continue;
            }
            let mut ring: Vec<ClientId> = connected.clone();
            ring.extend(included.iter().filter(|c| members.contains(c)));
            ring.sort_unstable();
            ring.dedup();
            let needed = remote
                .survivors_needed(group, ring.len())
                .unwrap_or(usize::MAX);
            if connected.len() >= needed {
                return Some(Next {
                    group,
                    ring,
                    catch_up,
                });
            }
        }
        None
    }

    /// The connection of `id`'s open session.
    fn conn_of(&self, id: ClientId) -> Option<&u64> {
        self.sessions.get(&id).map(|s| &s.conn)
    }

    /// When the idle loop must wake up by itself: when a failed round may
    /// be retried (a group may have become due meanwhile, its members all
    /// connected) or when the next request will have waited the join
    /// timeout, whichever comes first. Only instants still to come: a
    /// deadline passed without a round changes nothing more by itself (its
    /// group waits for its members, or for an event), and waking up for it
    /// again and again would spin.
    fn wake_at(&self) -> Option<Instant> {
        let now = Instant::now();
        let join = (self.queue.iter()).map(|q| q.since + self.options.join_timeout);
        let defer = (self.queue.iter()).filter_map(|q| q.since.checked_add(self.options.max_defer));
        join.chain(defer)
            .chain(self.retry_at)
            .filter(|t| *t > now)
            .min()
    }

    /// The fewest clients a removal round of a group of `members` may
    /// change: the configuration's `min_updating_clients`, at most the
    /// group (a larger minimum could never be met; the deadline would
    /// decide every time).
    fn min_updating(&self, members: &[ClientId]) -> usize {
        self.remote.as_ref().map_or(1, |r| {
            (r.setup().config().min_updating_clients()).clamp(1, members.len().max(1))
        })
    }

    pub(super) async fn run(mut self, mut shutdown: oneshot::Receiver<()>) -> Result<(), NetError> {
        loop {
            if self.remote.is_none()
                && self.registrations.len() == self.roster.len()
                && !self.refuse_misregistered()?
            {
                self.set_up()?;
            }
            // The revocation list is read before a round, not at every
            // event: a revoked client takes part in no round.
            let next = self.next().and_then(|_| {
                self.close_revoked();
                self.next()
            });
            if let Some(next) = next {
                // A stop is not starved by a round (issue 28, item 11): a
                // round waiting out a step deadline, or rounds back to
                // back, held SIGTERM for minutes. A round stopped before
                // its commit leaves nothing: the store is written only at
                // the commit (synchronously, never cut), and the clients
                // repeat their unacknowledged requests to the next server.
                tokio::select! {
                    biased;
                    _ = &mut shutdown => return Ok(()),
                    r = self.round(next) => r?,
                }
                continue;
            }
            let wake = self.wake_at();
            tokio::select! {
                _ = &mut shutdown => return Ok(()),
                ev = self.events.recv() => match ev {
                    Some(ev) => self.idle(ev),
                    None => return Ok(()),
                },
                () = sleep_until(wake) => {}
            }
        }
    }

    fn send(&mut self, id: ClientId, body: ServerBody) {
        let Some(s) = self.sessions.get(&id) else {
            return;
        };
        let msg = ServerMessage { body: Some(body) };
        // Never wait for a slow reader: a client whose outbox is full is
        // stuck, and is dropped like one that left.
        if s.outbox.try_send(Ok(msg)).is_err() {
            self.sessions.remove(&id);
        }
    }

    /// Tells the round's clients how it ended (the others had no part in
    /// it: with groups, another group's round numbers are not theirs).
    fn tell(&mut self, ring: &[ClientId], end: &RoundEnd) {
        for id in ring {
            self.send(*id, ServerBody::End(end.clone()));
        }
    }

    /// An event outside a round.
    fn idle(&mut self, ev: Event) {
        match ev {
            Event::Connected {
                conn,
                fingerprint,
                certificate,
                registration,
                outbox,
            } => self.connected(conn, fingerprint, certificate, registration, outbox),
            Event::Message { id, conn, body } => {
                if self.sessions.get(&id).is_some_and(|s| s.conn == conn)
                    && let ClientBody::Forget(f) = body
                {
                    self.queue_request(id, f.request);
                }
            }
            Event::Gone { id, conn } => self.gone(id, conn),
        }
    }

    /// Queues a request (again): it joins its client's entry, which
    /// waits from its first request (see [`Queued`]).
    fn queue_request(&mut self, client: ClientId, request: u64) {
        match self.queue.iter_mut().find(|q| q.client == client) {
            Some(q) => q.request = q.request.max(request),
            None => {
                self.queue.push(Queued {
                    client,
                    request,
                    since: Instant::now(),
                });
                self.report_deferred(client);
            }
        }
    }

    /// Tells the operator when `client`'s new request waits for the
    /// lone-update policy.
    fn report_deferred(&self, client: ClientId) {
        let Some(remote) = &self.remote else { return };
        let Some(members) = remote.groups().iter().find(|g| g.contains(&client)) else {
            return;
        };
        let clients = (self.queue.iter())
            .filter(|q| members.contains(&q.client))
            .count();
        let min = self.min_updating(members);
        if clients < min && remote.is_trained() {
            let _ = self.report.send(ServerEvent::Deferred {
                id: client,
                clients,
                min,
                at_most: self.options.max_defer,
            });
        }
    }

    /// Takes the requests of `members` out of the queue.
    fn take_requests(&mut self, members: &[ClientId]) -> Vec<(ClientId, u64)> {
        let (taken, kept) = std::mem::take(&mut self.queue)
            .into_iter()
            .partition(|q| members.contains(&q.client));
        self.queue = kept;
        taken
            .into_iter()
            .map(|q: Queued| (q.client, q.request))
            .collect()
    }

    fn connected(
        &mut self,
        conn: u64,
        fingerprint: crate::revocation::Fingerprint,
        certificate: Vec<u8>,
        registration: Registration,
        outbox: mpsc::Sender<Result<ServerMessage, Status>>,
    ) {
        let id = registration.id;
        self.sessions.insert(
            id,
            Session {
                conn,
                outbox,
                fingerprint,
                certificate,
            },
        );
        self.registrations.insert(id, registration);
        let name = self.name_of(id);
        let _ = self.report.send(ServerEvent::Connected { id, name });
        let rounds = self.remote.as_ref().map_or(0, RemoteServer::rounds);
        self.send(
            id,
            ServerBody::Welcome(Welcome {
                client_id: id.0,
                rounds,
            }),
        );
    }

    /// Closes the sessions whose certificate the revocation list names
    /// (issue 28, item 11): a client revoked while connected takes no
    /// part in another round, and is refused when it comes back. A list
    /// that cannot be read closes every session (fail closed).
    fn close_revoked(&mut self) {
        let mut watched = self
            .revoked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let list = watched.current();
        let closed: Vec<(ClientId, String)> = (self.sessions.iter())
            .filter_map(|(id, s)| match &list {
                Ok(l) if !l.contains(&s.fingerprint) => None,
                Ok(_) => Some((*id, "its certificate is revoked".to_string())),
                Err(e) => Some((*id, format!("the server cannot check revocations: {e}"))),
            })
            .collect();
        drop(watched);
        for (id, why) in closed {
            let name = self.name_of(id);
            if let Some(s) = self.sessions.remove(&id) {
                let _ = s
                    .outbox
                    .try_send(Err(Status::permission_denied(format!("{name}: {why}"))));
            }
            let _ = self.report.send(ServerEvent::Refused {
                reason: format!("closed the session of {name}: {why}"),
            });
        }
    }

    /// Closes the session of every client of a committed round's ring
    /// that stayed silent in it (connected when it started, not in its
    /// sum, no refusal): a session the deadline passed by may sit on a
    /// link that is down, which TCP does not report. Closed, the client
    /// connects again once it can, and its new session brings the
    /// catch-up round that puts its data back (issue 28, item 4); left
    /// open, the server would take it for connected, and its catch-up
    /// would run, once, while it cannot answer.
    fn close_silent(&mut self, ring: &[ClientId], included: &BTreeSet<ClientId>, state: &InRound) {
        for id in ring {
            let same = self
                .sessions
                .get(id)
                .is_some_and(|s| state.in_session(*id, s.conn));
            if same
                && !included.contains(id)
                && !state.refused.contains(id)
                && let Some(s) = self.sessions.remove(id)
            {
                let _ = s.outbox.try_send(Err(Status::unavailable(
                    "the client missed the round's deadline: connect again",
                )));
            }
        }
    }

    /// A client's signed first message: checked against the certificate
    /// of its session (a forged one would only fail the round at its
    /// peers), kept to be relayed with the directory, and received.
    fn endorse(
        &self,
        id: ClientId,
        signed: crate::proto::Signed,
        round: &mut ServerRound,
        state: &mut InRound,
    ) -> Result<(), String> {
        let certificate = (self.sessions.get(&id))
            .map(|s| s.certificate.clone())
            .unwrap_or_default();
        crate::endorse::verify(&certificate, &signed)?;
        round
            .receive(id, &signed.message)
            .map_err(|e| e.to_string())?;
        state.endorsed.insert(
            id,
            crate::proto::Endorsed {
                client_id: id.0,
                signed: Some(signed),
                certificate,
            },
        );
        Ok(())
    }

    fn gone(&mut self, id: ClientId, conn: u64) {
        if self.sessions.get(&id).is_some_and(|s| s.conn == conn) {
            self.sessions.remove(&id);
        }
    }

    /// An event during a round.
    fn in_round(&mut self, ev: Event, round: &mut ServerRound, state: &mut InRound) {
        match ev {
            Event::Message { id, conn, body } => {
                if self.sessions.get(&id).is_none_or(|s| s.conn != conn) {
                    return;
                }
                if !state.in_session(id, conn) {
                    // A session opened during the round: only its requests
                    // count (they wait for the next round).
                    if let ClientBody::Forget(f) = body {
                        self.queue_request(id, f.request);
                    }
                    return;
                }
                let received = match body {
                    // The first step's message must be signed: the peers
                    // check the directory against it.
                    ClientBody::Secagg(_) if state.steps_sent == 0 => {
                        Err("an unsigned first message (its keys must be signed)".to_string())
                    }
                    ClientBody::Secagg(bytes) => {
                        round.receive(id, &bytes).map_err(|e| e.to_string())
                    }
                    ClientBody::First(signed) if state.steps_sent == 0 => {
                        self.endorse(id, signed, round, state)
                    }
                    ClientBody::First(_) => {
                        Err("a signed first message after the first step".into())
                    }
                    ClientBody::Forget(f) => {
                        self.queue_request(id, f.request);
                        Ok(())
                    }
                    ClientBody::Refusal(r) => {
                        state.refused.insert(id);
                        Err(format!("refused round {}: {}", r.round, r.reason))
                    }
                    ClientBody::Hello(_) => Ok(()),
                };
                if let Err(reason) = received {
                    let _ = self.report.send(ServerEvent::Rejected { id, reason });
                }
            }
            other => self.idle(other),
        }
    }

    /// Before the set-up, refuses the clients whose registration would
    /// stop it (issue 28, item 11: one bad Hello stopped the server): a
    /// client that holds no point, or whose dimension is not the one
    /// most clients registered (on a tie, the lowest id's). Each is told
    /// why, its session closed and its registration dropped; the others
    /// wait for it to come back, and the server keeps serving. Its
    /// store's record is released too: nothing of that store is in a
    /// model, and a store imported again may replace it. Returns whether
    /// any was refused.
    ///
    /// With an agreement (the federation file), a client claiming more
    /// points than it allows, or another dimension, is refused too.
    /// Without one, or when it leaves the dimension open, the majority
    /// decides the dimension: a member that lies alone is refused, it
    /// cannot impose its dimension on the others.
    fn refuse_misregistered(&mut self) -> Result<bool, NetError> {
        let mut dims: BTreeMap<usize, (usize, ClientId)> = BTreeMap::new();
        for r in self.registrations.values() {
            let e = dims.entry(r.dim).or_insert((0, r.id));
            e.0 += 1;
            e.1 = e.1.min(r.id);
        }
        let agreed = self.options.agreement.as_ref();
        let Some(dim) = (agreed.and_then(|a| a.dim)).or_else(|| {
            (dims.iter())
                .max_by_key(|(_, (n, first))| (*n, std::cmp::Reverse(*first)))
                .map(|(d, _)| *d)
        }) else {
            return Ok(false);
        };
        let refused: Vec<(ClientId, String)> = (self.registrations.values())
            .filter_map(|r| {
                let why = if r.points == 0 {
                    "it registered no point".to_string()
                } else if let Some(Err(why)) = agreed.map(|a| a.check_registration(r)) {
                    // A claim beyond the agreement would set the grid
                    // for everybody (issue 28, item 6).
                    why
                } else if r.dim != dim {
                    format!(
                        "it registered points of dimension {}, the federation's are of {dim}",
                        r.dim
                    )
                } else {
                    return None;
                };
                Some((r.id, why))
            })
            .collect();
        for (id, why) in &refused {
            let name = self.name_of(*id);
            let reason = format!("client {name} refused before training: {why}");
            self.registrations.remove(id);
            if let Some(s) = self.sessions.remove(id) {
                let _ = s
                    .outbox
                    .try_send(Err(Status::failed_precondition(reason.clone())));
            }
            self.stores
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .release(&name)?;
            let _ = self.report.send(ServerEvent::Refused { reason });
        }
        Ok(!refused.is_empty())
    }

    /// Client `id`'s name on the roster.
    fn name_of(&self, id: ClientId) -> String {
        self.roster
            .get(usize::try_from(id.0).unwrap_or(usize::MAX))
            .cloned()
            .unwrap_or_default()
    }

    /// Builds the server's half once the whole roster has registered
    /// (the grid step and the field depend on every client's count), and
    /// keeps its setup until the store exists (`pending_setup`).
    fn set_up(&mut self) -> Result<(), NetError> {
        let regs: Vec<Registration> = self.registrations.values().copied().collect();
        let setup = match &self.options.agreement {
            Some(a) => a.resolve(&self.options.config, &regs)?,
            None => RemoteSetup::new(&self.options.config, &regs)?,
        };
        let path = pending_setup::path_of(&self.options.store);
        pending_setup::write(&path, &self.roster, &setup)?;
        self.remote = Some(RemoteServer::new(setup)?);
        Ok(())
    }

    fn remote(&mut self) -> Result<&mut RemoteServer, NetError> {
        self.remote
            .as_mut()
            .ok_or_else(|| NetError::Protocol("no federation".into()))
    }

    /// Runs one round in `next`'s group with its connected members. A
    /// round that fails is reported to them and retried later; an error
    /// here is fatal (the store cannot be created).
    async fn round(&mut self, next: Next) -> Result<(), NetError> {
        let Next {
            group,
            ring: clients,
            catch_up,
        } = next;
        for c in catch_up {
            if let Some(s) = self.sessions.get(&c) {
                self.caught_up.insert(c, s.conn);
            }
        }
        let members = self
            .remote()?
            .groups()
            .get(group)
            .cloned()
            .unwrap_or_default();
        // The group as events name it (`None` when flat).
        let grouped = self.remote()?.setup().config().topology() != mufc::Topology::Flat;
        let label = grouped.then_some(group);
        let served = self.take_requests(&members);
        let started = self.remote()?.start_round(&clients);
        let (announcement, mut round) = match started {
            Ok(x) => x,
            Err(e) => {
                self.failed(None, label, &clients, &e.to_string(), served);
                return Ok(());
            }
        };
        let number = round.spec().round;
        let _ = self.report.send(ServerEvent::RoundStarted {
            round: number,
            group: round.group(),
            clients: clients.clone(),
        });
        let bytes = announcement.to_bytes()?;
        for id in &clients {
            self.send(*id, ServerBody::Announcement(bytes.clone()));
        }
        let mut state = InRound {
            sessions: self.sessions.iter().map(|(c, s)| (*c, s.conn)).collect(),
            ..InRound::default()
        };
        let finished = loop {
            let deadline = Instant::now() + self.options.step_timeout;
            loop {
                let waiting = round
                    .expected()
                    .difference(&round.answered())
                    .filter(|c| {
                        self.sessions
                            .get(c)
                            .is_some_and(|s| state.in_session(**c, s.conn))
                            && !state.refused.contains(c)
                    })
                    .count();
                if waiting == 0 {
                    break;
                }
                tokio::select! {
                    ev = self.events.recv() => match ev {
                        Some(ev) => self.in_round(ev, &mut round, &mut state),
                        None => break,
                    },
                    () = tokio::time::sleep_until(deadline) => break,
                }
            }
            let (back, advanced) = off_runtime(round, ServerRound::advance).await;
            round = back;
            match advanced {
                Ok(RoundStep::Send(msgs)) => {
                    let firsts: Vec<crate::proto::Endorsed> =
                        std::mem::take(&mut state.endorsed).into_values().collect();
                    for (to, msg) in msgs {
                        let body = if state.steps_sent == 0 {
                            ServerBody::Directory(crate::proto::Directory {
                                secagg: msg,
                                firsts: firsts.clone(),
                            })
                        } else {
                            ServerBody::Secagg(msg)
                        };
                        self.send(to, body);
                    }
                    state.steps_sent += 1;
                }
                Ok(RoundStep::Finished) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        let remote = std::mem::take(&mut self.remote)
            .ok_or_else(|| NetError::Protocol("no federation".into()))?;
        let (remote, finished) = off_runtime(remote, move |remote: &mut RemoteServer| {
            finished.and_then(|()| remote.finish_round(round))
        })
        .await;
        self.remote = Some(remote);
        let report = match finished {
            Ok(r) => r,
            Err(e) => {
                self.failed(Some(number), label, &clients, &e.to_string(), served);
                return Ok(());
            }
        };
        if let Err(e) = self.persist(&report, &served) {
            self.failed(
                Some(number),
                label,
                &clients,
                &format!("the store refused the round: {e}"),
                served,
            );
            return Ok(());
        }
        let included: BTreeSet<ClientId> = report.included.iter().copied().collect();
        // Requests of clients the round left out wait for the next one.
        for (c, r) in served {
            if !included.contains(&c) {
                self.queue_request(c, r);
            }
        }
        let end = RoundEnd {
            round: number,
            committed: true,
            included: report.included.iter().map(|c| c.0).collect(),
            detail: String::new(),
        };
        self.tell(&clients, &end);
        self.close_silent(&clients, &included, &state);
        let trained_now = report.training && self.remote()?.is_trained();
        let _ = self.report.send(ServerEvent::RoundCommitted(report));
        if trained_now {
            let rounds = self.remote()?.rounds();
            let _ = self.report.send(ServerEvent::Trained { rounds });
        }
        Ok(())
    }

    /// Writes a committed round to the store (creating it once the model
    /// is trained: with groups, after every group's first round; a server
    /// stopped before trains its groups again); on an error the server's
    /// state goes back to the store's.
    fn persist(
        &mut self,
        report: &mufc::remote::RoundReport,
        served: &[(ClientId, u64)],
    ) -> Result<(), NetError> {
        let remote = self
            .remote
            .as_ref()
            .ok_or_else(|| NetError::Protocol("no federation".into()))?;
        if !remote.is_trained() {
            return Ok(());
        }
        let fed = remote.federation()?;
        let written = match &mut self.store {
            None => Store::create_serving(&self.options.store, fed, &self.roster, IfExists::Refuse)
                .map(|s| {
                    self.store = Some(s);
                    // The store holds the setup now (an error leaves a
                    // file the next start ignores).
                    let _ = pending_setup::remove(&pending_setup::path_of(&self.options.store));
                }),
            Some(store) => store.commit_round(
                fed,
                &RoundEntry {
                    round: report.round,
                    requests: served.to_vec(),
                    included: report.included.clone(),
                    dropped: report.dropped.iter().map(|(c, _)| *c).collect(),
                },
            ),
        };
        if let Err(e) = written {
            self.remote = match &self.store {
                Some(s) => Some(RemoteServer::resume(
                    s.federation().clone(),
                    (0..self.roster.len() as u64).map(ClientId).collect(),
                )?),
                None => None,
            };
            return Err(e.into());
        }
        Ok(())
    }

    /// A round that failed: its clients hear it, its requests wait, and
    /// the next round waits a little.
    fn failed(
        &mut self,
        round: Option<u64>,
        group: Option<usize>,
        clients: &[ClientId],
        reason: &str,
        served: Vec<(ClientId, u64)>,
    ) {
        for (c, r) in served {
            self.queue_request(c, r);
        }
        self.retry_at = Some(Instant::now() + RETRY);
        if let Some(n) = round {
            let end = RoundEnd {
                round: n,
                committed: false,
                included: Vec::new(),
                detail: reason.to_string(),
            };
            self.tell(clients, &end);
        }
        let _ = self.report.send(ServerEvent::RoundFailed {
            round,
            group,
            reason: reason.to_string(),
        });
    }
}

/// Refuses to serve a setup (kept from before) outside the agreement.
fn check_agreed(options: &ServerOptions, setup: &RemoteSetup) -> Result<(), NetError> {
    match &options.agreement {
        Some(a) => a.check_setup(setup).map_err(|why| {
            NetError::Protocol(format!("the kept setup is outside the agreement: {why}"))
        }),
        None => Ok(()),
    }
}

/// Refuses a roster given on the command line that is not the one kept
/// (`whose`: where it is kept).
fn check_roster(given: &[String], kept: &[String], whose: &str) -> Result<(), NetError> {
    if given.is_empty() || given == kept {
        return Ok(());
    }
    Err(NetError::Protocol(format!(
        "{whose} roster is {} but the server was started with {}",
        kept.join(","),
        given.join(",")
    )))
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}
