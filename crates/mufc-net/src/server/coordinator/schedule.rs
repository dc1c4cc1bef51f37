//! When a round runs: the queue of removal requests, the lone-update
//! policy, catch-up rounds, and the ring a group's round must name.

use std::time::Duration;

use mufc::ClientId;
use mufc::remote::RemoteServer;
use tokio::time::Instant;

use super::{Coordinator, Queued};
use crate::server::ServerEvent;

/// How long the server waits before it retries a round that failed.
pub(super) const RETRY: Duration = Duration::from_millis(500);

/// The round to run next: a group, its ring (its members connected, and
/// every member of the group's model even if absent: issue 28, item 5),
/// and the members it brings back into the model (a catch-up round).
pub(super) struct Next {
    pub(super) group: usize,
    pub(super) ring: Vec<ClientId>,
    pub(super) catch_up: Vec<ClientId>,
}

impl Next {
    /// A round of `ring` in `group` that brings no member back.
    pub(super) fn whole(group: usize, ring: Vec<ClientId>) -> Self {
        Self {
            group,
            ring,
            catch_up: Vec::new(),
        }
    }
}

impl Coordinator {
    /// Says why each group of `stalled` cannot run its ring, once per
    /// reason (as a round of that group that could not start).
    fn say_stalled(&mut self, stalled: Vec<(usize, String)>) {
        // The group as events name it (`None` when flat).
        let grouped = (self.remote.as_ref())
            .is_some_and(|r| r.setup().config().topology() != mufc::Topology::Flat);
        for (group, reason) in stalled {
            if self.stalled.insert(group, reason.clone()).as_ref() != Some(&reason) {
                let _ = self.report.send(ServerEvent::RoundFailed {
                    round: None,
                    group: grouped.then_some(group),
                    reason: format!("its ring cannot run ({reason}); the group waits"),
                });
            }
        }
    }

    pub(super) fn may_retry(&self) -> bool {
        self.retry_at.is_none_or(|t| Instant::now() >= t)
    }

    /// The rounds that should start now, if any (one; a split's two
    /// halves, `split.rs`): the first group, in
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
    ///
    /// A ring whose threshold cannot be computed (the protocol's
    /// parameters refuse its size) waits too, and the server says why,
    /// once for each reason, as a round of that group that could not
    /// start.
    ///
    /// A group whose round of requests is due with every member connected
    /// and that grew full splits first (`split.rs`); the two halves' rounds
    /// then run as one batch, before any other of theirs.
    pub(super) fn next(&mut self) -> Option<Vec<Next>> {
        // Never a round of fewer clients with points than the minimum
        // aggregate (docs/threat-model.md P4, `withdrawal.rs`).
        if self.withdrawn_or_due() || !self.may_retry() {
            return None;
        }
        // A group below it merges into another first (`withdrawal.rs`).
        self.merge_if_due();
        let remote = self.remote.as_ref()?;
        let halves = remote.split_halves(&self.out_of_sums());
        let batch = (!halves.is_empty())
            .then(|| self.split_rounds(remote, &halves))
            .flatten();
        let (found, mut stalled) = match batch {
            Some(batch) => (Some(batch), Vec::new()),
            None => {
                let (found, stalled, full) = self.group_round(remote, &halves);
                if let Some(g) = full {
                    // Split, then the halves' batch (or, if its moved
                    // clients never summed, the new group's round alone).
                    return if self.split_group(g) {
                        self.next()
                    } else {
                        None
                    };
                }
                (found.map(|n| vec![n]), stalled)
            }
        };
        // Dealt masks need the dealer: a round started without it would
        // only fail, and consume a round number, every retry.
        let found = match found {
            Some(batch) if self.needs_dealer() && self.dealer.is_none() => {
                stalled.push((batch[0].group, "the dealer is not connected".into()));
                None
            }
            found => found,
        };
        self.say_stalled(stalled);
        for next in found.iter().flatten() {
            self.stalled.remove(&next.group);
        }
        found
    }

    /// The first group's round that should start now (but for the
    /// groups of a split's `halves`), with the groups whose ring cannot
    /// run and why; or the group that must split first (its round due,
    /// every member connected, full).
    fn group_round(
        &self,
        remote: &RemoteServer,
        halves: &[usize],
    ) -> (Option<Next>, Vec<(usize, String)>, Option<usize>) {
        let out = self.out_of_sums();
        let regrouped = remote.regrouped(&out);
        let merging = remote.merge_due(&out).map(|(h, _)| h);
        let mut stalled = Vec::new();
        for (group, members) in remote.groups().iter().enumerate() {
            // A group that waits for its merge runs no round of its own,
            // nor does one whose clients all moved (emptied as the round
            // of the group that took them commits), nor the half of a
            // split (its batch runs both).
            let holding = members.iter().any(|c| !out.contains(c));
            if merging == Some(group)
                || (regrouped.contains(&group) && !holding)
                || halves.contains(&group)
            {
                continue;
            }
            let connected: Vec<ClientId> = (members.iter().copied())
                .filter(|c| self.sessions.contains_key(c))
                .collect();
            // A client that left is not waited for.
            let departed = self.departed_ids();
            let present = members.iter().filter(|c| !departed.contains(c)).count();
            let everyone = connected.len() == present;
            if !remote.group_trained(group) {
                // Training waits for the whole group; a group none of
                // whose members holds points (they left, or moved by a
                // merge and it was emptied) has nothing to train.
                if everyone && present > 0 && holding {
                    let ring = members.clone();
                    return (Some(Next::whole(group, ring)), stalled, None);
                }
                continue;
            }
            let requested = self.removal_due(remote, members, everyone);
            if requested && everyone && remote.is_full(group, &out) && !regrouped.contains(&group) {
                return (None, stalled, Some(group));
            }
            // A group that took a merged group's clients runs its whole
            // round once they are all connected, whatever the policy (the
            // merge waited for it), or once a request its round serves
            // (the emptied group's) waited the join timeout: an absent
            // member, the moved client too, does not hold an erasure back.
            let waited = self.emptied_requests_waited(remote, &regrouped, &out);
            let due = requested || (regrouped.contains(&group) && (everyone || waited));
            match self.trained_round(remote, group, &connected, due) {
                Some(Ok(next)) => return (Some(next), stalled, None),
                Some(Err(reason)) => stalled.push((group, reason)),
                None => {}
            }
        }
        (None, stalled, None)
    }

    /// The round trained group `group` should run now, with its members
    /// `connected`, if any: its requests' (`due`), or a catch-up of
    /// members its model lacks; `Err` with why its ring cannot run.
    fn trained_round(
        &self,
        remote: &RemoteServer,
        group: usize,
        connected: &[ClientId],
        due: bool,
    ) -> Option<Result<Next, String>> {
        let members = remote.groups().get(group)?;
        let included = remote.included(group);
        // A client that joined waits for its request's round (the
        // lone-update policy), never for a catch-up of its own.
        let joining = self.joining_members();
        let catch_up: Vec<ClientId> = (connected.iter().copied())
            .filter(|c| !included.contains(c) && self.caught_up.get(c) != self.conn_of(*c))
            .filter(|c| !joining.contains(c))
            .collect();
        if !due && catch_up.is_empty() {
            return None;
        }
        let mut ring: Vec<ClientId> = connected.to_vec();
        ring.extend(included.iter().filter(|c| members.contains(c)));
        ring.sort_unstable();
        ring.dedup();
        let needed = match remote.survivors_needed(group, ring.len()) {
            Ok(n) => n,
            Err(e) => return Some(Err(e.to_string())),
        };
        (connected.len() >= needed).then_some(Ok(Next {
            group,
            ring,
            catch_up,
        }))
    }

    /// Whether a request of a client of a group a merge left to be
    /// emptied (regrouped, holding no point) waited the join timeout.
    fn emptied_requests_waited(
        &self,
        remote: &RemoteServer,
        regrouped: &[usize],
        out: &std::collections::BTreeSet<ClientId>,
    ) -> bool {
        let groups = remote.groups();
        let emptied: Vec<&ClientId> = (regrouped.iter())
            .filter_map(|g| groups.get(*g))
            .filter(|m| m.iter().all(|c| out.contains(c)))
            .flatten()
            .collect();
        (self.queue.iter())
            .filter(|q| emptied.contains(&&q.client))
            .any(|q| q.since.elapsed() >= self.options.join_timeout)
    }

    /// Whether the requests of the group of `members` are due a round:
    /// enough of its clients wait under the lone-update policy (issue 28,
    /// item 7), or the oldest has waited the policy's deadline; and
    /// `everyone` is connected, or the oldest has waited the join
    /// timeout.
    fn removal_due(&self, remote: &RemoteServer, members: &[ClientId], everyone: bool) -> bool {
        // One entry per client (`Queued`): the entries are the clients
        // whose message the round changes.
        let waiting: Vec<&Queued> = (self.queue.iter())
            .filter(|q| members.contains(&q.client))
            .collect();
        let oldest = waiting.iter().map(|q| q.since).min();
        oldest.is_some_and(|since| {
            let enough = (remote.setup().config()).updates_enough(members.len(), waiting.len())
                || since.elapsed() >= self.options.max_defer;
            enough && (everyone || since.elapsed() >= self.options.join_timeout)
        })
    }

    /// Whether the federation's rounds are dealt (`--masking dealer`).
    pub(super) fn needs_dealer(&self) -> bool {
        (self.remote.as_ref())
            .and_then(|r| r.setup().config().channel().as_scma())
            .is_some_and(|s| s.masks() == mufc::Masks::Dealer)
    }

    /// The connection of `id`'s open session.
    pub(super) fn conn_of(&self, id: ClientId) -> Option<&u64> {
        self.sessions.get(&id).map(|s| &s.conn)
    }

    /// When the idle loop must wake up by itself: when a failed round may
    /// be retried (a group may have become due meanwhile, its members all
    /// connected) or when the next request will have waited the join
    /// timeout, whichever comes first. Only instants still to come: a
    /// deadline passed without a round changes nothing more by itself (its
    /// group waits for its members, or for an event), and waking up for it
    /// again and again would spin.
    pub(super) fn wake_at(&self) -> Option<Instant> {
        let now = Instant::now();
        let join = (self.queue.iter()).map(|q| q.since + self.options.join_timeout);
        let defer = (self.queue.iter()).filter_map(|q| q.since.checked_add(self.options.max_defer));
        join.chain(defer)
            .chain(self.retry_at)
            .filter(|t| *t > now)
            .min()
    }

    /// The fewest clients a removal round of a group of `members` may
    /// change, as the operator is told it: the configuration's
    /// `min_updating_clients`, at most the group (the policy itself is
    /// [`mufc::ValidConfig::updates_enough`]).
    pub(super) fn min_updating(&self, members: &[ClientId]) -> usize {
        self.remote.as_ref().map_or(1, |r| {
            (r.setup().config().min_updating_clients()).clamp(1, members.len().max(1))
        })
    }

    /// Queues a client's Forget: it joins its client's entry, which
    /// waits from its first request (see [`Queued`]). The wait counts
    /// from when the client's operator asked (`asked_at`, its clock),
    /// at most [`ServerOptions::max_defer`](crate::server::ServerOptions)
    /// back: a restarted server, which hears of the request again, does
    /// not start the lone-update deadline again. A time in the future, or
    /// none, counts as now.
    ///
    /// Whether the client holds no point once the request is applied is
    /// noted first (`withdrawal.rs`: once the model is withdrawn, the
    /// queue is served by the withdrawal).
    pub(super) fn queue_forget(&mut self, client: ClientId, f: &crate::proto::Forget) {
        self.note_points(client, f.empties);
        let now_unix = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        // Whole seconds at both ends: one less, so that the wait is
        // never cut short (at most a second longer).
        let waited = Duration::from_secs(now_unix.saturating_sub(f.asked_at).saturating_sub(1))
            .min(self.options.max_defer);
        let now = Instant::now();
        let since = if f.asked_at == 0 {
            now
        } else {
            now.checked_sub(waited).unwrap_or(now)
        };
        self.queue_request(Queued {
            client,
            request: f.request,
            since,
        });
    }

    /// Queues a request (again, after a round that did not serve it,
    /// with the time it waits from): it joins its client's entry.
    pub(super) fn queue_request(&mut self, entry: Queued) {
        match self.queue.iter_mut().find(|q| q.client == entry.client) {
            Some(q) => {
                q.request = q.request.max(entry.request);
                q.since = q.since.min(entry.since);
            }
            None => {
                self.queue.push(entry);
                self.report_deferred(entry.client);
            }
        }
    }

    /// Tells the operator when `client`'s new request waits for the
    /// lone-update policy.
    pub(super) fn report_deferred(&self, client: ClientId) {
        // A withdrawn model serves every request, nothing waits.
        let Some(remote) = self.remote.as_ref().filter(|r| !r.is_withdrawn()) else {
            return;
        };
        let Some(members) = remote.groups().iter().find(|g| g.contains(&client)) else {
            return;
        };
        let clients = (self.queue.iter())
            .filter(|q| members.contains(&q.client))
            .count();
        let min = self.min_updating(members);
        if !remote
            .setup()
            .config()
            .updates_enough(members.len(), clients)
            && remote.is_trained()
        {
            let _ = self.report.send(ServerEvent::Deferred {
                id: client,
                clients,
                min,
                at_most: self.options.max_defer,
            });
        }
    }

    /// Takes the requests of `members` out of the queue.
    pub(super) fn take_requests(&mut self, members: &[ClientId]) -> Vec<Queued> {
        let (taken, kept) = std::mem::take(&mut self.queue)
            .into_iter()
            .partition(|q| members.contains(&q.client));
        self.queue = kept;
        taken
    }
}
