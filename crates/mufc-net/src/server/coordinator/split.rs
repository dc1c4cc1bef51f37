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

    /// Splits group `g` (full, its round due, every member connected),
    /// as [`Self::keep_regrouped`] keeps it. Whether it split.
    pub(super) fn split_group(&mut self, g: usize) -> bool {
        let out = self.out_of_sums();
        self.keep_regrouped(g, &format!("the split of group {g}"), |after| {
            after.split(g, &out)?;
            let into = after.groups().len() - 1;
            let moved = after.groups()[into].clone();
            let what = format!("group {g} split: clients {moved:?} form group {into}");
            let event = ServerEvent::Split {
                group: g,
                into,
                moved,
            };
            Ok((what, event))
        })
    }

    /// Changes the server's groups as `change` says (giving the journal's
    /// words and the operator's event), kept in the store first, then
    /// said; on a failure (of `doing`, about `group`) nothing changes, it
    /// is reported and the next round waits a little. Whether it was
    /// kept. Merges (`withdrawal.rs`) and splits go through it.
    pub(super) fn keep_regrouped(
        &mut self,
        group: usize,
        doing: &str,
        change: impl FnOnce(&mut RemoteServer) -> Result<(String, ServerEvent), mufc::MufcError>,
    ) -> bool {
        let Some(remote) = self.remote.as_ref() else {
            return false;
        };
        let mut after = remote.clone();
        let kept = (change(&mut after).map_err(|e| e.to_string())).and_then(|(what, event)| {
            let snapshot = after.snapshot().map_err(|e| e.to_string())?;
            let store = self.store.as_mut().ok_or("the server has no store yet")?;
            (store.regroup_serving(snapshot, &what)).map_err(|e| e.to_string())?;
            Ok(event)
        });
        match kept {
            Ok(event) => {
                self.remote = Some(after);
                let _ = self.report.send(event);
                true
            }
            Err(reason) => {
                self.retry_at = Some(Instant::now() + RETRY);
                let _ = self.report.send(ServerEvent::RoundFailed {
                    round: None,
                    group: Some(group),
                    reason: format!("{doing} could not be kept: {reason}"),
                });
                false
            }
        }
    }
}
