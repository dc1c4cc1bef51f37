//! The removal requests the parties' driver serves (Algorithm 4), as
//! [`Federation`](crate::Federation) serves them: each checked against
//! the clients and the pending requests, forgotten at once by the clients
//! it names, then served by one round in every group whose changed clients
//! are enough for the lone-update policy, and answered with a
//! [`RemovalReport`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use seeding::PointId;

use super::{InProcess, Waiting};
use crate::federation::{
    check_remaining, check_request, client_times, privacy_warning, request_times, withdrawal_after,
};
use crate::remote::RemoteClient;
use crate::remote::client::Forgetting;
use crate::{
    Channel, ClientId, DecodeKind, Involvement, MufcError, MufcResult, NodeId, PendingRequest,
    RemovalOutcome, RemovalReport, RemovalRequest, ServerUpdate, StageTimes, Withdrawal,
};

/// A client a request names, having forgotten: its points and clustering
/// after (staged, the client unchanged yet), what it lost and its own
/// unlearning time.
struct Forgot {
    staged: Forgetting,
    points: u64,
    reseeded: bool,
    own: Duration,
}

/// The groups that run a round, each with its clients that changed, in
/// group order.
type Ready = Vec<(usize, Vec<ClientId>)>;

impl InProcess {
    /// Serves a removal request (Algorithm 4) and reports it as
    /// [`Federation::remove`](crate::Federation::remove) does: every
    /// client it names forgets its points at once (a client removed whole
    /// forgets every one, and stays in the roster with none); then every
    /// group whose changed clients are enough for the lone-update policy
    /// ([`ValidConfig::updates_enough`](crate::ValidConfig::updates_enough),
    /// docs/threat-model.md U3) runs one round, a change round where the
    /// server can run one
    /// ([`RemoteServer::start_change_round`](super::RemoteServer::start_change_round)).
    /// A request naming a group with too few waits whole
    /// ([`RemovalOutcome::Deferred`], [`Self::pending`]) until a later
    /// request brings enough, or [`Self::flush`]; the rounds it ran are
    /// [`Self::last_rounds`].
    ///
    /// The request is checked whole before any client forgets, against
    /// the clients and the pending requests, as
    /// [`Federation::remove`](crate::Federation::remove) checks it: on an
    /// error in it nothing changes. A client removed whole has left: it
    /// stays in the roster with no point, and a request that would leave
    /// fewer than [`ValidConfig::min_clients`](crate::ValidConfig::min_clients)
    /// clients with points (in a group, with groups) withdraws the model
    /// (docs/threat-model.md P4, [`RemovalOutcome::Withdrawn`]): the
    /// clients forget, no round runs, the server forgets its model
    /// ([`Self::withdrawal`]), and every later request is served by the
    /// clients alone.
    ///
    /// **The erasure is not undone by a failed round.** Once the request
    /// is accepted, its clients have forgotten, as a client across
    /// processes forgets before it answers. A round that fails leaves its
    /// group's model as it was, and the request pending: the next
    /// request's rounds, or [`Self::flush`], carry the new histograms (a
    /// request over several groups may so be applied in parts, as in
    /// [`Federation`](crate::Federation)).
    ///
    /// # Errors
    ///
    /// [`MufcError::EmptyRequest`], [`MufcError::UnknownClient`],
    /// [`MufcError::RepeatedClient`], [`MufcError::UnknownPoint`],
    /// [`MufcError::RepeatedPoint`], [`MufcError::AlreadyPending`], with
    /// nothing changed; a round's errors, with the request accepted.
    pub fn remove(&mut self, request: &RemovalRequest) -> MufcResult<RemovalReport> {
        let wall = Instant::now();
        self.check(request)?;
        let forgotten = self.forgotten(request)?;
        self.last.clear();
        self.requests += 1;
        let number = self.requests;
        // The withdrawal the request finds, or brings (`true`).
        let withdrawal = match &self.withdrawn {
            Some(w) => Some((w.clone(), false)),
            None => self.too_few_left(&forgotten).map(|w| (w, true)),
        };
        let named: BTreeSet<ClientId> = forgotten.keys().copied().collect();
        let mut own = BTreeMap::new();
        for (id, f) in forgotten {
            let w = self.waiting.entry(id).or_default();
            w.points = w.points.saturating_add(f.points);
            w.left |= f.staged.data().is_empty();
            w.reseeded |= f.reseeded;
            own.insert(id, f.own);
            let at = self.at(id)?;
            if let Some(client) = self.clients.get_mut(at) {
                client.take(f.staged);
            }
        }
        self.pending.push(PendingRequest {
            number,
            request: request.clone(),
        });
        if let Some(withdrawal) = withdrawal {
            return Ok(self.serve_withdrawn(number, withdrawal, wall, &own));
        }
        match self.ready(None, &named) {
            Some(ready) => self.serve(ready, number, wall, &own),
            None => Ok(self.deferred(number, wall, &own)),
        }
    }

    /// Why the model was withdrawn (docs/threat-model.md P4), if a
    /// request left too few clients.
    pub fn withdrawal(&self) -> Option<&Withdrawal> {
        self.withdrawn.as_ref()
    }

    /// Applies every pending request now, with one round in every group
    /// with a waiting client, however few they are (the report of a round
    /// that changes one client's message alone tells the server that
    /// change: docs/threat-model.md U3, [`RemovalReport::privacy_warning`]);
    /// `None` when nothing is pending.
    ///
    /// # Errors
    ///
    /// A round's errors; the requests of a group whose round failed stay
    /// pending.
    pub fn flush(&mut self) -> MufcResult<Option<RemovalReport>> {
        let all = (0..self.server.groups().len()).collect();
        self.flush_groups(&all)
    }

    /// Applies now the pending requests' parts in the groups of `clients`
    /// (the whole federation when flat), as [`Self::flush`] does all of
    /// them: how a deadline is kept
    /// ([`Federation::flush_clients`](crate::Federation::flush_clients)).
    /// `None` when none of `clients` waits.
    ///
    /// # Errors
    ///
    /// As [`Self::flush`].
    pub fn flush_clients(&mut self, clients: &[ClientId]) -> MufcResult<Option<RemovalReport>> {
        let waiting = |c: &ClientId| self.waiting.contains_key(c);
        let groups = (self.server.groups().iter().enumerate())
            .filter(|(_, members)| clients.iter().any(|c| members.contains(c) && waiting(c)))
            .map(|(g, _)| g)
            .collect();
        self.flush_groups(&groups)
    }

    /// The clients whose points changed and whose group's round waits
    /// (for the lone-update policy, or after a failed round), in id order.
    pub fn waiting(&self) -> Vec<ClientId> {
        self.waiting.keys().copied().collect()
    }

    /// The requests accepted whose rounds wait, oldest first, each
    /// restricted to the clients that still wait.
    pub fn pending(&self) -> &[PendingRequest] {
        &self.pending
    }

    /// The reports of the requests applied or withdrawn so far, oldest
    /// first (a deferred request's report is not kept: the report of the
    /// round that applies it lists it).
    pub fn history(&self) -> &[RemovalReport] {
        &self.history
    }

    /// The rounds the last [`Self::remove`], [`Self::flush`] or
    /// [`Self::flush_clients`] ran, in group order, with what each cost
    /// the parties.
    pub fn last_rounds(&self) -> &[super::DrivenRound] {
        &self.last
    }

    /// Who took part in the rounds of the last request or flush, as
    /// [`Federation::last_involvement`](crate::Federation::last_involvement)
    /// counts them: the clients that joined a round, the messages and
    /// bytes they sent, the groups that ran one (none when flat), and the
    /// models updated (the root's, and with groups those on the paths from
    /// the groups that ran). `None` when the last request ran no round.
    pub fn last_involvement(&self) -> Option<Involvement> {
        if self.last.is_empty() {
            return None;
        }
        let groups: Vec<usize> = (self.last.iter()).filter_map(|r| r.report.group).collect();
        let nodes = match self.server.setup().layout() {
            Some(layout) => (groups.iter())
                .flat_map(|&g| layout.path(NodeId(g)))
                .collect::<BTreeSet<NodeId>>()
                .len(),
            None => 1,
        };
        let sum = |f: fn(&super::PartyCosts) -> usize| self.last.iter().map(|r| f(&r.costs)).sum();
        Some(Involvement {
            clients: sum(|c| c.joins.len()),
            messages: sum(|c| c.messages),
            groups,
            nodes,
            bytes: sum(|c| usize::try_from(c.bytes_up).unwrap_or(usize::MAX)),
        })
    }

    /// Checks `request` against the clients and the pending requests, as
    /// the federation in one process checks it.
    fn check(&self, request: &RemovalRequest) -> MufcResult<()> {
        let left_waiting = |c| self.waiting.get(&c).is_some_and(|w| w.left);
        check_request(
            request,
            &self.pending,
            |c| match self.client(c)? {
                // A client that left with a request whose round waits has
                // no point to look for: naming it again is a conflict.
                left if left.data().is_empty() && left_waiting(c) => Ok(None),
                // One that left earlier is unknown, as in `Federation`.
                left if left.data().is_empty() => Err(MufcError::UnknownClient(c)),
                client => Ok(Some(client.data())),
            },
            left_waiting,
        )
    }

    /// Copies of the clients a checked `request` names, each having
    /// forgotten its points (a client named whole, every one).
    fn forgotten(&self, request: &RemovalRequest) -> MufcResult<BTreeMap<ClientId, Forgot>> {
        let whole = request
            .clients_removed()
            .iter()
            .map(|&c| Ok((c, self.client(c)?.data().ids().to_vec())));
        let points = request
            .point_entries()
            .iter()
            .map(|(c, ids)| Ok((*c, ids.clone())));
        whole
            .chain(points)
            .map(|named: MufcResult<(ClientId, Vec<PointId>)>| {
                let (id, ids) = named?;
                let start = Instant::now();
                let (staged, reseeded) = self.client(id)?.forgetting(&ids)?;
                let left = staged.data().is_empty();
                let forgot = Forgot {
                    staged,
                    points: ids.len() as u64,
                    reseeded: reseeded && !left,
                    own: if left {
                        Duration::ZERO
                    } else {
                        start.elapsed()
                    },
                };
                Ok((id, forgot))
            })
            .collect()
    }

    /// The withdrawal a request calls for when the clients `forgotten`
    /// leave fewer than the minimum aggregate with points: in a group,
    /// with groups, or in the federation (a whole group may leave).
    fn too_few_left(&self, forgotten: &BTreeMap<ClientId, Forgot>) -> Option<Withdrawal> {
        let left = |c: &RemoteClient| {
            forgotten
                .get(&c.id())
                .map_or(c.data().is_empty(), |f| f.staged.data().is_empty())
        };
        let gone: BTreeSet<ClientId> = (self.clients.iter().filter(|c| left(c)))
            .map(RemoteClient::id)
            .collect();
        let layout = self.server.setup().layout();
        let min_clients = self.server.setup().config().min_clients();
        let remaining = self.clients.len() - gone.len();
        let refusal = check_remaining(layout.as_ref(), min_clients, &gone, remaining).err()?;
        withdrawal_after(&refusal, self.requests, self.server.rounds())
    }

    /// The groups whose waiting clients run a round now, each with them:
    /// with `forced`, exactly those groups, however few wait; else those
    /// with enough for the lone-update policy. `None` when the request of
    /// the clients `named` waits whole, as
    /// [`Federation::remove`](crate::Federation::remove) holds it, until
    /// every group it names is ready. The plain mode shows the server
    /// every message: no policy hides a change there.
    fn ready(&self, forced: Option<&BTreeSet<usize>>, named: &BTreeSet<ClientId>) -> Option<Ready> {
        let config = self.server.setup().config();
        let plain = config.channel() == &Channel::Plain;
        let ready: Ready = (self.server.groups().iter().enumerate())
            .filter_map(|(g, members)| {
                let updated: Vec<ClientId> = (members.iter().copied())
                    .filter(|c| self.waiting.contains_key(c))
                    .collect();
                let runs = match forced {
                    Some(groups) => groups.contains(&g),
                    None => plain || config.updates_enough(members.len(), updated.len()),
                };
                (!updated.is_empty() && runs).then_some((g, updated))
            })
            .collect();
        let held = |c: &ClientId| !ready.iter().any(|(_, u)| u.contains(c));
        (!named.iter().any(held)).then_some(ready)
    }

    /// Runs the rounds of the `forced` groups' waiting clients: the
    /// report answers the last pending request they name.
    fn flush_groups(&mut self, forced: &BTreeSet<usize>) -> MufcResult<Option<RemovalReport>> {
        let wall = Instant::now();
        self.last.clear();
        let ready = self.ready(Some(forced), &BTreeSet::new());
        let ready = ready.unwrap_or_default();
        let runs = |c: ClientId| ready.iter().any(|(_, u)| u.contains(&c));
        let Some(number) = (self.pending.iter().rev())
            .find(|p| p.request.named().any(runs))
            .map(|p| p.number)
        else {
            return Ok(None);
        };
        self.serve(ready, number, wall, &BTreeMap::new()).map(Some)
    }

    /// One round in every `ready` group, a change round where the server
    /// runs one, else whole; the clients of a group whose round committed
    /// wait no more, and the pending requests lose their parts there. The
    /// report answers request `number`; `own`: the unlearning times of its
    /// clients.
    fn serve(
        &mut self,
        ready: Ready,
        number: u64,
        wall: Instant,
        own: &BTreeMap<ClientId, Duration>,
    ) -> MufcResult<RemovalReport> {
        let runs = |c: ClientId| ready.iter().any(|(_, u)| u.contains(&c));
        let numbers: Vec<u64> = (self.pending.iter())
            .filter(|p| p.request.named().any(runs))
            .map(|p| p.number)
            .collect();
        let plain = self.server.setup().config().channel() == &Channel::Plain;
        let mut done = BTreeMap::new();
        let mut parts = Vec::new();
        for (g, updated) in ready {
            let members = &self.server.groups()[g];
            // In the plain mode the clients that changed send alone (the
            // server holds the others' centroids). Else every member
            // sends, those that left too, with nothing: a client refuses a
            // ring that omits a client of its last sum (the server could
            // difference the two), and a leave is not announced to the
            // others (issue 29).
            let ring = if plain {
                updated.clone()
            } else {
                members.clone()
            };
            // A change round whose sum did not decode is tried once more,
            // as `mufc-net`'s scheduler does: the server then runs a
            // whole round (a round failed since its last commit).
            let round = match self.round(&ring, Some(updated.len())) {
                Err(MufcError::ChangeUndecoded { .. }) => self.round(&ring, Some(updated.len()))?,
                r => r?,
            };
            self.last.push(round);
            for c in &updated {
                if let Some(w) = self.waiting.remove(c) {
                    done.insert(*c, w);
                }
            }
            let pending = std::mem::take(&mut self.pending);
            self.pending = (pending.into_iter())
                .filter_map(|p| {
                    let rest = p.request.restricted(|c| !updated.contains(&c));
                    (!rest.is_empty()).then_some(PendingRequest {
                        number: p.number,
                        request: rest,
                    })
                })
                .collect();
            parts.push(updated);
        }
        Ok(self.applied(number, numbers, &parts, &done, (wall, own)))
    }

    /// The report of the rounds [`Self::last_rounds`], which applied the
    /// requests `numbers` (answering `number`) and changed the clients
    /// `done`, in groups `parts`.
    fn applied(
        &mut self,
        number: u64,
        numbers: Vec<u64>,
        parts: &[Vec<ClientId>],
        done: &BTreeMap<ClientId, Waiting>,
        (wall, own): (Instant, &BTreeMap<ClientId, Duration>),
    ) -> RemovalReport {
        let config = self.server.setup().config();
        let needed = config.min_updating_clients();
        let plain = config.channel() == &Channel::Plain;
        let (mut times, mut owns, mut encode) = (StageTimes::default(), Vec::new(), Vec::new());
        let mut dropped = Vec::new();
        for r in &self.last {
            times.sum += r.report.protocol;
            times.decode += r.report.decode_time;
            times.server += r.report.server_time;
            times.protocol_client_max += r.costs.protocol_client_max;
            times.protocol_client_sum += r.costs.protocol_client_sum;
            times.offline += r.costs.dealer;
            for (id, t) in &r.costs.joins {
                owns.push(own.get(id).copied().unwrap_or_default());
                encode.push(*t);
            }
            dropped.extend(r.report.dropped.iter().copied());
        }
        client_times(&mut times, &owns, &encode);
        times.wall = wall.elapsed();
        dropped.sort_by_key(|(c, _)| *c);
        let last = self.last.last();
        let bytes_per_client = last.map_or(0, |r| {
            let members = r.costs.joins.len().max(1) as u64;
            usize::try_from(r.costs.bytes_up / members).unwrap_or(usize::MAX)
        });
        let report = RemovalReport {
            request: number,
            outcome: RemovalOutcome::Applied,
            requests: numbers,
            removed_points: points_of(done),
            removed_clients: clients_where(done, |w| w.left),
            reseeded: clients_where(done, |w| w.reseeded),
            updated_clients: done.keys().copied().collect(),
            decode: last.map_or(DecodeKind::Skipped, |r| r.report.decode),
            server: last.map_or(ServerUpdate::Unchanged, |r| r.report.update.clone()),
            times,
            bytes_per_client,
            nonzero_bins: self.server.server().nonzero_bins(),
            included: self.model_clients(),
            dropped,
            lone_update: parts.iter().any(|p| p.len() == 1),
            // The plain mode shows the server every message: no round
            // hides more than another.
            privacy_warning: (!plain)
                .then(|| parts.iter().find_map(|p| privacy_warning(p, needed)))
                .flatten(),
        };
        self.history.push(report.clone());
        report
    }

    /// The report of request `number`, which waits: its points are
    /// forgotten, the model is unchanged.
    fn deferred(
        &self,
        number: u64,
        wall: Instant,
        own: &BTreeMap<ClientId, Duration>,
    ) -> RemovalReport {
        let outcome = RemovalOutcome::Deferred {
            pending_clients: self.waiting(),
            needed: self.server.setup().config().min_updating_clients(),
        };
        RemovalReport {
            nonzero_bins: self.server.server().nonzero_bins(),
            included: self.model_clients(),
            ..RemovalReport::without_round(number, outcome, times_of(own, wall))
        }
    }

    /// The report of request `number` once the model is withdrawn (by
    /// this request when `withdrawal` says so): every pending request is
    /// covered, and no round runs again.
    fn serve_withdrawn(
        &mut self,
        number: u64,
        (w, now): (Withdrawal, bool),
        wall: Instant,
        own: &BTreeMap<ClientId, Duration>,
    ) -> RemovalReport {
        let waited = std::mem::take(&mut self.waiting);
        let requests = (std::mem::take(&mut self.pending).iter())
            .map(|p| p.number)
            .collect();
        let server = if now {
            self.server.withdraw();
            self.withdrawn = Some(w.clone());
            ServerUpdate::Cleared
        } else {
            ServerUpdate::Unchanged
        };
        let report = RemovalReport {
            requests,
            removed_points: points_of(&waited),
            removed_clients: clients_where(&waited, |w| w.left),
            reseeded: clients_where(&waited, |w| w.reseeded),
            updated_clients: clients_where(&waited, |w| !w.left),
            server,
            ..RemovalReport::without_round(
                number,
                RemovalOutcome::Withdrawn(w),
                times_of(own, wall),
            )
        };
        self.history.push(report.clone());
        report
    }

    /// The clients whose data the model holds, in id order: those the
    /// last rounds included, but a client whose leave a round applied (it
    /// sent its last change there, and holds nothing more).
    fn model_clients(&self) -> Vec<ClientId> {
        let gone = |c: ClientId| !self.waiting.contains_key(&c) && self.has_left(c);
        let included = self.server.fit_report().map(|r| r.included.iter());
        (included.into_iter().flatten().copied())
            .filter(|&c| !gone(c))
            .collect()
    }

    /// Whether client `c` holds no point: it left whole.
    fn has_left(&self, c: ClientId) -> bool {
        self.client(c).is_ok_and(|c| c.data().is_empty())
    }
}

/// The points the clients `waited` forgot, in all.
fn points_of(waited: &BTreeMap<ClientId, Waiting>) -> usize {
    let points = waited
        .values()
        .fold(0u64, |n, w| n.saturating_add(w.points));
    usize::try_from(points).unwrap_or(usize::MAX)
}

/// The clients of `waited` that `f` accepts, in id order.
fn clients_where(
    waited: &BTreeMap<ClientId, Waiting>,
    f: impl Fn(&Waiting) -> bool,
) -> Vec<ClientId> {
    (waited.iter().filter(|(_, w)| f(w)))
        .map(|(c, _)| *c)
        .collect()
}

/// The times of a request that ran no round: its clients' own
/// unlearning and the wall time since `wall`.
fn times_of(own: &BTreeMap<ClientId, Duration>, wall: Instant) -> StageTimes {
    request_times(&own.values().copied().collect::<Vec<_>>(), wall)
}
