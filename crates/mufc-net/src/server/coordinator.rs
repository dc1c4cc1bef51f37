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

use mufc::ClientId;
use mufc::remote::{Registration, RemoteServer, RemoteSetup};
use mufc_store::{AdmittedClient, DepartedClient, Store};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tonic::Status;

mod dealer;
mod joins;
mod leaves;
mod round;
mod schedule;
mod split;
mod withdrawal;

use super::stores::ClientStores;
use super::{Event, ServerEvent, ServerOptions, pending_setup};
use crate::NetError;
use crate::proto::client_message::Body as ClientBody;
use crate::proto::server_message::Body as ServerBody;
use crate::proto::{RoundEnd, ServerMessage, Welcome};

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
    /// The groups whose ring cannot run, with why (said once per reason).
    stalled: BTreeMap<usize, String>,
    /// The dealer's session (dealt masks), if it is connected.
    dealer: Option<dealer::DealerSession>,
    /// The clients admitted after training, in the order they joined
    /// (`joins.rs`; kept in the store).
    admitted: Vec<AdmittedClient>,
    /// The clients that left, in the order they left (`leaves.rs`; kept
    /// in the store).
    departed: Vec<DepartedClient>,
    /// The leaves heard during a round, taken once it ended.
    deferred_leaves: Vec<(ClientId, u64, crate::proto::Signed)>,
    /// The clients that said they hold no point (`withdrawal.rs`): out
    /// of the minimum aggregate's count, as those that left.
    emptied: BTreeSet<ClientId>,
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
        let mut options = options;
        let mut roster = options.roster.clone();
        let mut kept = Kept::default();
        let (remote, store) = if options.store.exists() {
            let (remote, store, k) = resume(&mut options, &mut roster, &report)?;
            kept = k;
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
        let mut coordinator = Self {
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
            stalled: BTreeMap::new(),
            dealer: None,
            admitted: kept.admitted,
            departed: kept.departed,
            deferred_leaves: Vec::new(),
            emptied: kept.emptied,
        };
        coordinator.requeue_joining();
        Ok(coordinator)
    }

    pub(super) fn roster(&self) -> &[String] {
        &self.roster
    }

    pub(super) async fn run(mut self, mut shutdown: oneshot::Receiver<()>) -> Result<(), NetError> {
        loop {
            if self.remote.is_none()
                && self.registrations.len() == self.roster.len()
                && !self.refuse_misregistered()?
            {
                self.set_up()?;
            }
            self.take_deferred_leaves();
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
                    r = self.rounds(next) => r?,
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
                if self.sessions.get(&id).is_some_and(|s| s.conn == conn) {
                    match body {
                        ClientBody::Forget(f) => self.queue_forget(id, &f),
                        ClientBody::Leave(signed) => self.leaving(id, conn, &signed),
                        _ => {}
                    }
                }
            }
            Event::Gone { id, conn } => self.gone(id, conn),
            Event::Joining {
                name,
                registration,
                certificate,
                reply,
            } => {
                let _ = reply.send(self.joining(&name, &registration, certificate));
            }
            ev @ (Event::DealerConnected { .. }
            | Event::Dealt { .. }
            | Event::DealerGone { .. }) => {
                self.dealer_event(ev);
            }
        }
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
        if self.departed.iter().any(|d| d.id == id) {
            let name = self.name_of(id);
            let reason = format!("{name} {}", super::LEFT_REFUSAL);
            let _ = outbox.try_send(Err(Status::permission_denied(reason.clone())));
            let _ = self.report.send(ServerEvent::Refused { reason });
            return;
        }
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
        self.note_points(id, registration.points == 0);
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
    /// (issue 28, item 11): a client (or the dealer) revoked while
    /// connected takes no part in another round, and is refused when it
    /// comes back. A list
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
        let dealer = self.dealer_fingerprint().map(|fp| match &list {
            Ok(l) => Ok(l.contains(&fp)),
            Err(e) => Err(e.to_string()),
        });
        drop(watched);
        if let Some(revoked) = dealer {
            self.close_revoked_dealer(revoked);
        }
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

    fn gone(&mut self, id: ClientId, conn: u64) {
        if self.sessions.get(&id).is_some_and(|s| s.conn == conn) {
            self.sessions.remove(&id);
            let name = self.name_of(id);
            let _ = self.report.send(ServerEvent::Disconnected { id, name });
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
}

/// Refuses to serve a setup (kept from before) outside the agreement.
/// What a server's store keeps of the roster's changes (issue 29).
#[derive(Default)]
struct Kept {
    admitted: Vec<AdmittedClient>,
    departed: Vec<DepartedClient>,
    emptied: BTreeSet<ClientId>,
}

/// The server resumed from its store at `options.store`: its state, the
/// store, and the roster's changes it keeps. The roster becomes the
/// store's (the one given must be its start), and the agreement counts
/// the clients admitted since training, each in any group.
fn resume(
    options: &mut ServerOptions,
    roster: &mut Vec<String>,
    report: &mpsc::UnboundedSender<ServerEvent>,
) -> Result<(RemoteServer, Store, Kept), NetError> {
    let store = Store::open(&options.store)?;
    let stored = store.roster()?.ok_or_else(|| {
        NetError::Protocol(format!(
            "{} is the store of a federation run in one process, not a server's",
            options.store.display()
        ))
    })?;
    let kept = Kept {
        admitted: store.admitted()?,
        departed: store.departed()?,
        emptied: store.emptied()?.into_iter().collect(),
    };
    // The clients admitted since training follow the roster the server
    // was started with (the federation file's, which may name them
    // already).
    let first = stored.len().saturating_sub(kept.admitted.len());
    if roster.len() < first || !stored.starts_with(roster) {
        check_roster(roster, &stored, "the store's")?;
    }
    if let Some(a) = &mut options.agreement {
        a.clients = a.clients.max(stored.len());
        a.admitted = kept.admitted.iter().map(|c| c.id).collect();
    }
    *roster = stored;
    let ids = (0..roster.len() as u64).map(ClientId).collect();
    let remote = RemoteServer::from_snapshot(store.server_snapshot(), ids)?;
    check_agreed(options, remote.setup())?;
    let _ = report.send(ServerEvent::Resumed {
        rounds: remote.rounds(),
    });
    // A setup left from before training is superseded.
    let _ = pending_setup::remove(&pending_setup::path_of(&options.store));
    Ok((remote, store, kept))
}

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
