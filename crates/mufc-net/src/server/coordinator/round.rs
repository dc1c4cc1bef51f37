//! One round, from its announcement to its commit: the events during
//! it, the signed first messages, the store, and what the clients hear.

use std::collections::{BTreeMap, BTreeSet};

use mufc::remote::{RemoteServer, RoundStep, ServerRound};
use mufc::{ClientId, MufcError};
use mufc_store::{IfExists, RoundEntry, Store};
use tokio::time::Instant;
use tonic::Status;

use super::schedule::{Next, RETRY};
use super::{Coordinator, Event, Queued, ServerEvent};
use crate::NetError;
use crate::proto::RoundEnd;
use crate::proto::client_message::Body as ClientBody;
use crate::proto::server_message::Body as ServerBody;
use crate::running::off_runtime;
use crate::server::pending_setup;

/// What a round's events did to it.
#[derive(Default)]
pub(super) struct InRound {
    refused: BTreeSet<ClientId>,
    /// The session of each client when the round started: a client that
    /// reconnects during the round has lost its part of it (its new
    /// session never heard the announcement), so the round neither waits
    /// for it nor takes its messages.
    sessions: BTreeMap<ClientId, u64>,
    /// The signed first message of each client that sent one, with its
    /// certificate: relayed with the key directory (issue 28, item 8).
    endorsed: BTreeMap<ClientId, crate::proto::Endorsed>,
}

/// What a round keeps from its opening to its end, beside the server's
/// half ([`ServerRound`]).
struct OpenRound {
    number: u64,
    /// The group as events name it (`None` when flat).
    label: Option<usize>,
    /// The ring: the clients the round was announced to.
    clients: Vec<ClientId>,
    /// The queued requests the round serves.
    served: Vec<Queued>,
    /// The announcement's bytes (the dealer checks a deal against them).
    announcement: Vec<u8>,
    state: InRound,
}

/// A round decoded into the server's state in memory, not yet stored:
/// its batch's other rounds may still fail.
struct Finished {
    open: OpenRound,
    report: mufc::remote::RoundReport,
    /// The groups emptied as it committed (a merge's).
    emptied: Vec<usize>,
}

/// Whether `round` collects its first step, the clients' keys: the
/// messages that must come signed, and whose answer is the directory.
fn at_keys(round: &ServerRound) -> bool {
    round.step() == Some(mufc::SecAggStep::AdvertiseKeys)
}

impl InRound {
    pub(super) fn in_session(&self, id: ClientId, conn: u64) -> bool {
        self.sessions.get(&id) == Some(&conn)
    }
}

impl Coordinator {
    /// Closes the session of every client of a committed round's ring
    /// that stayed silent in it (connected when it started, not in its
    /// sum, no refusal): a session the deadline passed by may sit on a
    /// link that is down, which TCP does not report. Closed, the client
    /// connects again once it can, and its new session brings the
    /// catch-up round that puts its data back (issue 28, item 4); left
    /// open, the server would take it for connected, and its catch-up
    /// would run, once, while it cannot answer.
    pub(super) fn close_silent(
        &mut self,
        ring: &[ClientId],
        included: &BTreeSet<ClientId>,
        state: &InRound,
    ) {
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
    pub(super) fn endorse(
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

    /// An event during a round.
    pub(super) fn in_round(&mut self, ev: Event, round: &mut ServerRound, state: &mut InRound) {
        match ev {
            Event::Message { id, conn, body } => {
                if self.sessions.get(&id).is_none_or(|s| s.conn != conn) {
                    return;
                }
                if !state.in_session(id, conn) {
                    // A session opened during the round: only its requests
                    // count (they wait for the next round).
                    if let ClientBody::Forget(f) = body {
                        self.queue_forget(id, &f);
                    }
                    return;
                }
                let received = match body {
                    // The first step's message must be signed: the peers
                    // check the directory against it.
                    ClientBody::Secagg(_) if at_keys(round) => {
                        Err("an unsigned first message (its keys must be signed)".to_string())
                    }
                    ClientBody::Secagg(bytes) => {
                        round.receive(id, &bytes).map_err(|e| e.to_string())
                    }
                    ClientBody::First(signed) if at_keys(round) => {
                        self.endorse(id, signed, round, state)
                    }
                    ClientBody::First(_) => {
                        Err("a signed first message after the first step".into())
                    }
                    ClientBody::Forget(f) => {
                        self.queue_forget(id, &f);
                        Ok(())
                    }
                    ClientBody::Refusal(r) => {
                        state.refused.insert(id);
                        Err(format!("refused round {}: {}", r.round, r.reason))
                    }
                    // The round's sum may still name the client: its leave
                    // is taken once the round ended.
                    ClientBody::Leave(signed) => {
                        self.deferred_leaves.push((id, conn, signed));
                        Ok(())
                    }
                    ClientBody::Hello(_) => Ok(()),
                };
                if let Err(reason) = received {
                    let _ = self.report.send(ServerEvent::Rejected { id, reason });
                }
            }
            // The setup may not change under a round: the client comes
            // back once it ended.
            Event::Joining { name, reply, .. } => {
                let _ = reply.send(Err(Status::unavailable(format!(
                    "{name} joins once the round running ends"
                ))));
            }
            other => self.idle(other),
        }
    }

    /// Runs the rounds of `batch`, each in its group with its connected
    /// members: each opens ([`Self::open_round`]), collects each step
    /// until its deadline and advances ([`Self::drive`]), and is decoded
    /// into the server's state in memory ([`Self::finish`]); once every
    /// round of the batch is, they are stored in one commit and the
    /// clients told ([`Self::conclude`]). A batch of more than one round
    /// is the two halves of a split group (`split.rs`): either committed
    /// alone would leave the clients that moved in no sum, or in two. A
    /// round that fails fails its whole batch: the server's state goes
    /// back to the store's, every round's clients hear it (none of them
    /// committed: they commit when told), its requests wait, and the
    /// batch is retried later. An error here is fatal (the store cannot
    /// be created).
    pub(super) async fn rounds(&mut self, batch: Vec<Next>) -> Result<(), NetError> {
        // A split's new group trains in its batch: the model was trained.
        let trained_before = self.remote.as_ref().is_some_and(RemoteServer::is_trained);
        let mut finished = Vec::with_capacity(batch.len());
        for next in batch {
            // `None`: the round could not start (`open_round` said so).
            let failed = match self.open_round(next)? {
                None => None,
                Some((round, mut open)) => {
                    let (round, driven) = self.drive(round, &mut open).await;
                    match self.finish(round, driven).await? {
                        Ok((report, emptied)) => {
                            finished.push(Finished {
                                open,
                                report,
                                emptied,
                            });
                            continue;
                        }
                        Err(e) => Some((open, e)),
                    }
                }
            };
            return self.undo(finished, failed);
        }
        self.conclude(finished, trained_before)
    }

    /// A batch one of whose rounds failed (`failed`, with why; `None` if
    /// it could not start): the rounds of the batch decoded before it are
    /// undone (the server's state back to the store's) and fail with it.
    fn undo(
        &mut self,
        finished: Vec<Finished>,
        failed: Option<(OpenRound, String)>,
    ) -> Result<(), NetError> {
        if !finished.is_empty() {
            self.reload()?;
        }
        let why = failed.as_ref().map_or_else(
            || "the split's other round could not start".to_string(),
            |(open, e)| format!("the split's round {} failed: {e}", open.number),
        );
        for f in finished {
            self.failed_open(f.open, &why);
        }
        if let Some((open, e)) = failed {
            self.failed_open(open, &e);
        }
        Ok(())
    }

    /// An opened round that failed for `why` ([`Self::failed`]).
    fn failed_open(&mut self, open: OpenRound, why: &str) {
        let OpenRound {
            number,
            label,
            clients,
            served,
            ..
        } = open;
        self.failed(Some(number), label, &clients, why, served);
    }

    /// Opens a round: the clients that catch up, the requests it serves
    /// (a change round where the masks allow it), the announcement sent
    /// to every client of the ring. `None` when the round could not start
    /// (reported, its requests queued again).
    fn open_round(&mut self, next: Next) -> Result<Option<(ServerRound, OpenRound)>, NetError> {
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
        // A round that serves removals carries the clients' changes where
        // the masks allow it (pairwise; `RemoteServer::start_change_round`
        // runs a whole round otherwise): each queued entry is one client.
        let started = match served.len() {
            0 => self.remote()?.start_round(&clients),
            updated => self.remote()?.start_change_round(&clients, updated),
        };
        let (announcement, round) = match started {
            Ok(x) => x,
            Err(e) => {
                self.failed(None, label, &clients, &e.to_string(), served);
                return Ok(None);
            }
        };
        let number = round.spec().round;
        let _ = self.report.send(ServerEvent::RoundStarted {
            round: number,
            group: round.group(),
            clients: clients.clone(),
            changes: round.spec().sends != mufc::remote::Sends::Histograms,
        });
        let announcement = announcement.to_bytes()?;
        // The admitted clients' certificates first: a member takes a setup
        // that admits new clients only once it checked them.
        let admission = self.admission();
        let departures = self.departures();
        for id in &clients {
            if let Some(a) = &admission {
                self.send(*id, ServerBody::Admission(a.clone()));
            }
            if let Some(d) = &departures {
                self.send(*id, ServerBody::Departures(d.clone()));
            }
            self.send(*id, ServerBody::Announcement(announcement.clone()));
        }
        let state = InRound {
            sessions: self.sessions.iter().map(|(c, s)| (*c, s.conn)).collect(),
            ..InRound::default()
        };
        let open = OpenRound {
            number,
            label,
            clients,
            served,
            announcement,
            state,
        };
        Ok(Some((round, open)))
    }

    /// Collects each step's messages until every client still in answered
    /// or the step's deadline passed, and advances, until the sum is
    /// unmasked (`Ok`) or the round fails; with the round, for
    /// [`Self::conclude`].
    async fn drive(
        &mut self,
        mut round: ServerRound,
        open: &mut OpenRound,
    ) -> (ServerRound, Result<(), MufcError>) {
        loop {
            self.collect(&mut round, &mut open.state).await;
            // A client of the ring may have said it holds no point now
            // (its request comes before its message, on its one stream):
            // no sum of fewer clients with points is unmasked
            // (docs/threat-model.md P4).
            if let Some(why) = self.too_few_with_points(&round) {
                return (round, Err(MufcError::Remote(why)));
            }
            let directory = at_keys(&round);
            let (back, advanced) = off_runtime(round, ServerRound::advance).await;
            round = back;
            let step = match advanced {
                Ok(RoundStep::Send(msgs)) => {
                    self.send_step(msgs, directory, &mut open.state);
                    Ok(())
                }
                Ok(RoundStep::Finished) => return (round, Ok(())),
                // Dealt masks: the dealer's answer, then the directory
                // with the sealed seeds (the next advance).
                Ok(RoundStep::Deal(request)) => {
                    self.deal(&mut round, &mut open.state, &open.announcement, request)
                        .await
                }
                Err(e) => Err(e),
            };
            if let Err(e) = step {
                return (round, Err(e));
            }
        }
    }

    /// Serves events until every client of the current step that is still
    /// in the round (connected in the session it started with, no
    /// refusal) answered, or the step's deadline passes.
    async fn collect(&mut self, round: &mut ServerRound, state: &mut InRound) {
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
                return;
            }
            tokio::select! {
                ev = self.events.recv() => match ev {
                    Some(ev) => self.in_round(ev, round, state),
                    None => return,
                },
                () = tokio::time::sleep_until(deadline) => return,
            }
        }
    }

    /// Sends a step's messages; the answer to the keys' step is the key
    /// directory, with the signed first messages it relays.
    fn send_step(&mut self, msgs: Vec<(ClientId, Vec<u8>)>, directory: bool, state: &mut InRound) {
        let firsts: Vec<crate::proto::Endorsed> =
            std::mem::take(&mut state.endorsed).into_values().collect();
        for (to, msg) in msgs {
            let body = if directory {
                ServerBody::Directory(crate::proto::Directory {
                    secagg: msg,
                    firsts: firsts.clone(),
                })
            } else {
                ServerBody::Secagg(msg)
            };
            self.send(to, body);
        }
    }

    /// Stores the rounds `finished` (decoded into the server's state) in
    /// one commit, then tells each round's clients; a failure to store is
    /// reported to them and the rounds' requests wait.
    fn conclude(&mut self, finished: Vec<Finished>, trained_before: bool) -> Result<(), NetError> {
        let mut entries = Vec::with_capacity(finished.len());
        let mut gone_served = Vec::with_capacity(finished.len());
        for f in &finished {
            let gone = self.emptied_requests(&f.emptied);
            entries.push(RoundEntry {
                round: f.report.round,
                requests: f
                    .open
                    .served
                    .iter()
                    .map(|q| (q.client, q.request))
                    .collect(),
                included: f.report.included.clone(),
                dropped: f.report.dropped.iter().map(|(c, _)| *c).collect(),
                emptied: gone.iter().map(|q| (q.client, q.request)).collect(),
            });
            gone_served.push(gone);
        }
        let training = finished.iter().any(|f| f.report.training);
        if let Err(e) = self.persist(&entries) {
            for (f, gone) in finished.into_iter().zip(gone_served) {
                for q in gone {
                    self.queue_request(q);
                }
                self.failed_open(f.open, &format!("the store refused the round: {e}"));
            }
            return Ok(());
        }
        for (f, entry) in finished.into_iter().zip(entries) {
            self.told(f, &entry.emptied);
        }
        if training && !trained_before && self.remote()?.is_trained() {
            let rounds = self.remote()?.rounds();
            let _ = self.report.send(ServerEvent::Trained { rounds });
        }
        Ok(())
    }

    /// Tells a stored round's clients it committed, and the clients of
    /// the groups its commit emptied that their requests (`emptied`) were
    /// served; its requests of clients it left out wait for the next.
    fn told(&mut self, f: Finished, emptied: &[(ClientId, u64)]) {
        let Finished { open, report, .. } = f;
        let included: BTreeSet<ClientId> = report.included.iter().copied().collect();
        for q in open.served {
            if !included.contains(&q.client) {
                self.queue_request(q);
            }
        }
        let end = RoundEnd {
            round: open.number,
            committed: true,
            included: report.included.iter().map(|c| c.0).collect(),
            detail: String::new(),
        };
        self.tell(&open.clients, &end);
        for &(id, request) in emptied {
            let served = crate::proto::Served {
                round: open.number,
                request,
            };
            self.send(id, ServerBody::Served(served));
        }
        self.close_silent(&open.clients, &included, &open.state);
        let _ = self.report.send(ServerEvent::RoundCommitted(report));
    }

    /// Decodes the driven `round` and commits it in memory, emptying a
    /// group whose clients moved into its group (a merge,
    /// `withdrawal.rs`): its report and the groups emptied, or why it
    /// failed (the server's state as before: the store's, when the
    /// emptying failed after the round's commit).
    async fn finish(
        &mut self,
        round: ServerRound,
        driven: Result<(), MufcError>,
    ) -> Result<Result<(mufc::remote::RoundReport, Vec<usize>), String>, NetError> {
        let remote = std::mem::take(&mut self.remote)
            .ok_or_else(|| NetError::Protocol("no federation".into()))?;
        let (group, out) = (round.group().unwrap_or(0), self.out_of_sums());
        let (remote, finished) = off_runtime(remote, move |remote: &mut RemoteServer| {
            let report = driven.and_then(|()| remote.finish_round(round))?;
            Ok::<_, MufcError>((report, remote.empty_merged(group, &out)))
        })
        .await;
        self.remote = Some(remote);
        match finished {
            Ok((report, Ok(emptied))) => Ok(Ok((report, emptied))),
            Ok((_, Err(e))) => {
                self.reload()?;
                Ok(Err(e.to_string()))
            }
            Err(e) => Ok(Err(e.to_string())),
        }
    }

    /// The requests waiting at the clients of the groups `emptied`,
    /// served by their emptying: taken off the queue.
    fn emptied_requests(&mut self, emptied: &[usize]) -> Vec<Queued> {
        let members: Vec<ClientId> = (emptied.iter())
            .filter_map(|h| self.remote.as_ref()?.groups().get(*h).cloned())
            .flatten()
            .collect();
        self.take_requests(&members)
    }

    /// Writes committed rounds to the store, in one commit (creating it
    /// once the model is trained: with groups, after every group's first
    /// round; a server stopped before trains its groups again); on an
    /// error the server's state goes back to the store's.
    pub(super) fn persist(&mut self, entries: &[RoundEntry]) -> Result<(), NetError> {
        let remote = self
            .remote
            .as_ref()
            .ok_or_else(|| NetError::Protocol("no federation".into()))?;
        if !remote.is_trained() {
            return Ok(());
        }
        let server = remote.snapshot()?;
        let written = match &mut self.store {
            None => {
                Store::create_serving(&self.options.store, server, &self.roster, IfExists::Refuse)
                    .map(|s| {
                        self.store = Some(s);
                        // The store holds the setup now (an error leaves a
                        // file the next start ignores).
                        let _ = pending_setup::remove(&pending_setup::path_of(&self.options.store));
                    })
            }
            Some(store) => store.commit_rounds(server, entries),
        };
        if let Err(e) = written {
            self.reload()?;
            return Err(e.into());
        }
        Ok(())
    }

    /// The server's state back to its store's (none before the store).
    fn reload(&mut self) -> Result<(), NetError> {
        self.remote = match &self.store {
            Some(s) => Some(RemoteServer::from_snapshot(
                s.server_snapshot(),
                (0..self.roster.len() as u64).map(ClientId).collect(),
            )?),
            None => None,
        };
        Ok(())
    }

    /// A round that failed: its clients hear it, its requests wait, and
    /// the next round waits a little.
    pub(super) fn failed(
        &mut self,
        round: Option<u64>,
        group: Option<usize>,
        clients: &[ClientId],
        reason: &str,
        served: Vec<Queued>,
    ) {
        for q in served {
            self.queue_request(q);
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
