//! The removal requests the parties' driver serves (Algorithm 4), as
//! [`Federation`](crate::Federation) serves them: each checked against
//! the clients and the pending requests, forgotten at once by the clients
//! it names, then served by one round in every group whose changed clients
//! are enough for the lone-update policy, and answered with a
//! [`RemovalReport`].

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use seeding::PointId;

use super::InProcess;
use super::regroup::Ready;
use crate::remote::RemoteClient;
use crate::remote::client::Staged;
use crate::state::{check_request, still_added, still_pending};
use crate::{
    Channel, ClientId, MufcError, MufcResult, PendingRequest, RemovalReport, RemovalRequest,
    Withdrawal,
};

/// A client a request names, having forgotten: its points and clustering
/// after (staged, the client unchanged yet), what it lost and its own
/// unlearning time.
struct Forgot {
    staged: Staged,
    points: u64,
    reseeded: bool,
    own: Duration,
}

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
    /// ([`RemovalOutcome::Deferred`](crate::RemovalOutcome::Deferred), [`Self::pending`]) until a later
    /// request brings enough, or [`Self::flush`]; the rounds it ran are
    /// [`Self::last_rounds`].
    ///
    /// The request is checked whole before any client forgets, against
    /// the clients and the pending requests, as
    /// [`Federation::remove`](crate::Federation::remove) checks it: on an
    /// error in it nothing changes. A client removed whole has left: it
    /// stays in the roster with no point, and a request that would leave
    /// fewer than [`ValidConfig::min_clients`](crate::ValidConfig::min_clients)
    /// clients with points (with groups: in a group that no other can
    /// take, `Layout::check_mergeable`; one that can merges when its round
    /// runs) withdraws the model
    /// (docs/threat-model.md P4, [`RemovalOutcome::Withdrawn`](crate::RemovalOutcome::Withdrawn)): the
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
        self.run_or_wait(number, &named, wall, &own)
    }

    /// Request `number`, accepted with its clients `named` changed: the
    /// rounds of the groups ready for the lone-update policy, or its
    /// report as one that waits.
    pub(super) fn run_or_wait(
        &mut self,
        number: u64,
        named: &BTreeSet<ClientId>,
        wall: Instant,
        own: &BTreeMap<ClientId, Duration>,
    ) -> MufcResult<RemovalReport> {
        match self.ready(None, named) {
            Some(ready) => self.serve(ready, number, wall, own),
            None => Ok(self.deferred(number, wall, own)),
        }
    }

    /// The requests accepted so far (applied, pending or withdrawn).
    pub(crate) fn requests(&self) -> u64 {
        self.requests
    }

    /// Why the model was withdrawn (docs/threat-model.md P4), if a
    /// request left too few clients.
    pub fn withdrawal(&self) -> Option<&Withdrawal> {
        self.withdrawn.as_ref()
    }

    /// Applies every pending request now, with one round in every group
    /// with a waiting client, however few they are (the report of a round
    /// that changes one client's message alone tells the server that
    /// change: docs/threat-model.md U3, [`RemovalReport::privacy_warning`](crate::RemovalReport::privacy_warning));
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

    /// What each client a checked `request` names would be after
    /// forgetting its points (a client named whole, every one), staged:
    /// no client changes here.
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
        self.server.withdrawal_if_gone(&gone, self.requests)
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
        // A group left regrouped by a split whose rounds did not all
        // commit runs whatever the policy: the policy allowed the split.
        let gone = self.emptied();
        let regrouped = self.server.regrouped(&gone);
        let ready: Ready = (self.server.groups().iter().enumerate())
            .filter_map(|(g, members)| {
                let updated: Vec<ClientId> = (members.iter().copied())
                    .filter(|c| self.waiting.contains_key(c))
                    .collect();
                let runs = regrouped.contains(&g)
                    || match forced {
                        Some(groups) => groups.contains(&g) && !updated.is_empty(),
                        None => {
                            !updated.is_empty()
                                && (plain || config.updates_enough(members.len(), updated.len()))
                                && self.merge_allowed(g, &gone)
                        }
                    };
                runs.then_some((g, updated))
            })
            .collect();
        let ready = self.with_merge_targets(ready, &gone);
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
        let Some(number) = self.numbers_of(runs).last().copied() else {
            return Ok(None);
        };
        self.serve(ready, number, wall, &BTreeMap::new()).map(Some)
    }

    /// The numbers of the pending removals and additions that name a
    /// client `runs` accepts, in order.
    fn numbers_of(&self, runs: impl Fn(ClientId) -> bool) -> Vec<u64> {
        let removals = (self.pending.iter())
            .filter(|p| p.request.named().any(&runs))
            .map(|p| p.number);
        let additions = (self.additions.iter())
            .filter(|a| a.named().any(&runs))
            .map(|a| a.number);
        let mut numbers: Vec<u64> = removals.chain(additions).collect();
        numbers.sort_unstable();
        numbers
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
        let batches = self.batches(ready)?;
        let runs = |c: ClientId| batches.iter().flatten().any(|(_, u)| u.contains(&c));
        let numbers = self.numbers_of(runs);
        let mut done = BTreeMap::new();
        let mut parts = Vec::new();
        for batch in batches {
            let rounds = self.run_batch(&batch)?;
            self.last.extend(rounds);
            for (_, updated) in batch {
                for c in &updated {
                    if let Some(w) = self.waiting.remove(c) {
                        done.insert(*c, w);
                    }
                }
                let pending = std::mem::take(&mut self.pending);
                self.pending = still_pending(pending, |c| updated.contains(&c));
                let additions = std::mem::take(&mut self.additions);
                self.additions = still_added(additions, |c| updated.contains(&c));
                parts.push(updated);
            }
        }
        Ok(self.applied(number, numbers, &parts, &done, (wall, own)))
    }
    /// The round of group `g` with its clients `updated` that changed: a
    /// change round where the server runs one, else whole.
    pub(super) fn group_round(
        &mut self,
        g: usize,
        updated: &[ClientId],
    ) -> MufcResult<super::DrivenRound> {
        let plain = self.server.setup().config().channel() == &Channel::Plain;
        // In the plain mode the clients that changed send alone (the
        // server holds the others' centroids). Else every member sends,
        // those that left too, with nothing: a client refuses a ring that
        // omits a client of its last sum (the server could difference the
        // two), and a leave is not announced to the others (issue 29).
        let ring = match plain {
            true => updated.to_vec(),
            false => self.server.groups()[g].clone(),
        };
        // A group that runs only because a split regrouped it has no
        // change round: its sum is a new one.
        let changed = (!updated.is_empty()).then_some(updated.len());
        // A change round whose sum did not decode is tried once more, as
        // `mufc-net`'s scheduler does: the server then runs a whole round
        // (a round failed since its last commit).
        match self.round(&ring, changed) {
            Err(MufcError::ChangeUndecoded { .. }) => self.round(&ring, changed),
            r => r,
        }
    }
}
