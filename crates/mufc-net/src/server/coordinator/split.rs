//! Groups that grow full as clients join, split across processes (issue
//! 29), as they split in one process: when the round of a group's
//! requests is due (the lone-update policy allowed it) and the group
//! holds twice the smallest size a group may have, the server splits it
//! first ([`RemoteServer::split`]: the upper half of its clients forms a
//! new group), keeps the new groups in the store, and runs the two
//! halves' whole rounds as one batch (`round.rs`): the first decoded is
//! held in memory, neither is stored nor told to its clients before both
//! are, so that no model ever holds the clients that moved in no sum, or
//! in two.
//!
//! Why only with every member connected: the batch's rounds are whole,
//! and a member absent from one would be left out of the model until its
//! catch-up. A split that a failure or a restart left unfinished (both
//! halves [`RemoteServer::regrouped`]) runs its batch again once every
//! member is back, or, with some absent, once a request of the halves
//! waited the join timeout (each absent member a dropout in its half's
//! ring, as in any round).

use std::collections::BTreeSet;

use mufc::ClientId;
use mufc::remote::RemoteServer;
use tokio::time::Instant;

use super::Coordinator;
use super::schedule::{Next, RETRY};
use crate::server::ServerEvent;

impl Coordinator {
    /// The groups a split left regrouped whose rounds must run together:
    /// more than one regrouped group holding points whose sum holds a
    /// client of another group, or with a member another group's sum
    /// holds. Empty when there is none, or only one (a merge's, or a
    /// split whose moved clients had never summed: its round runs alone,
    /// as any other). Groups that never trained are regrouped too, but
    /// linked to no other: each trains on its own.
    pub(super) fn split_halves(&self, remote: &RemoteServer) -> Vec<usize> {
        let out = self.out_of_sums();
        let groups = remote.groups();
        let sums: Vec<Vec<ClientId>> = (0..groups.len()).map(|g| remote.included(g)).collect();
        let summed_in = |c: &ClientId| sums.iter().position(|s| s.contains(c));
        let linked = |g: usize, members: &[ClientId]| {
            let foreign = sums[g].iter().any(|c| !members.contains(c));
            let elsewhere = (members.iter()).any(|c| summed_in(c).is_some_and(|h| h != g));
            foreign || elsewhere
        };
        let halves: Vec<usize> = (remote.regrouped(&out).into_iter())
            .filter(|&g| {
                (groups.get(g)).is_some_and(|m| m.iter().any(|c| !out.contains(c)) && linked(g, m))
            })
            .collect();
        if halves.len() > 1 { halves } else { Vec::new() }
    }

    /// The rounds of the split's `halves` if they may run now: every
    /// member of both connected, or a request of theirs waited the join
    /// timeout and each half's connected members meet its ring's
    /// threshold. Each ring names the half's members connected and every
    /// member whose data a group's sum holds (issue 28, item 5: the
    /// server could otherwise difference the sums).
    pub(super) fn split_rounds(
        &self,
        remote: &RemoteServer,
        halves: &[usize],
    ) -> Option<Vec<Next>> {
        let groups = remote.groups();
        let summed: BTreeSet<ClientId> =
            (0..groups.len()).flat_map(|g| remote.included(g)).collect();
        let departed = self.departed_ids();
        let members = |g: usize| groups.get(g).map_or(&[][..], Vec::as_slice);
        let everyone = halves.iter().all(|&g| {
            (members(g).iter())
                .filter(|c| !departed.contains(c))
                .all(|c| self.sessions.contains_key(c))
        });
        let waited = (self.queue.iter())
            .filter(|q| halves.iter().any(|&g| members(g).contains(&q.client)))
            .any(|q| q.since.elapsed() >= self.options.join_timeout);
        if !everyone && !waited {
            return None;
        }
        let mut batch = Vec::with_capacity(halves.len());
        for &group in halves {
            let connected: Vec<ClientId> = (members(group).iter().copied())
                .filter(|c| self.sessions.contains_key(c))
                .collect();
            let mut ring = connected.clone();
            ring.extend(members(group).iter().filter(|c| summed.contains(c)));
            ring.sort_unstable();
            ring.dedup();
            let needed = remote.survivors_needed(group, ring.len()).ok()?;
            if connected.len() < needed || connected.is_empty() {
                return None;
            }
            batch.push(Next::whole(group, ring));
        }
        Some(batch)
    }

    /// Splits group `g` (full, its round due, every member connected):
    /// the new groups are kept in the store first, then the operator
    /// hears it. Whether it split; a failure is reported and the round
    /// waits a little.
    pub(super) fn split_group(&mut self, g: usize) -> bool {
        let out = self.out_of_sums();
        let Some(remote) = self.remote.as_ref() else {
            return false;
        };
        let mut after = remote.clone();
        let kept = (after.split(g, &out).map_err(|e| e.to_string())).and_then(|()| {
            let into = after.groups().len() - 1;
            let moved = after.groups()[into].clone();
            let what = format!("group {g} split: clients {moved:?} form group {into}");
            let snapshot = after.snapshot().map_err(|e| e.to_string())?;
            let store = self.store.as_mut().ok_or("the server has no store yet")?;
            (store.regroup_serving(snapshot, &what)).map_err(|e| e.to_string())?;
            Ok((into, moved))
        });
        match kept {
            Ok((into, moved)) => {
                self.remote = Some(after);
                let _ = self.report.send(ServerEvent::Split {
                    group: g,
                    into,
                    moved,
                });
                true
            }
            Err(reason) => {
                self.retry_at = Some(Instant::now() + RETRY);
                let _ = self.report.send(ServerEvent::RoundFailed {
                    round: None,
                    group: Some(g),
                    reason: format!("the split of group {g} could not be kept: {reason}"),
                });
                false
            }
        }
    }
}
