//! Groups that grow full as clients join (issue 29): when a group whose
//! round is about to run holds twice the smallest size a group may have,
//! the driver splits it first, every party takes the new layout, and both
//! halves run a whole round in the same request.
//!
//! Why at the round and not at the join: the lone-update policy decides
//! whether the group's round may run from the clients that changed in the
//! group as it was (docs/threat-model.md U3); the two halves' sums add up
//! to that group's, so splitting at the round shows the server nothing
//! the policy did not allow, and each half is a sum of at least the
//! minimum aggregate (P4).
//!
//! Groups that a leave takes below the minimum aggregate merge the same
//! way, at their round: the clients left move to the smallest group that
//! meets the minimum, which runs a whole round, and the emptied group's
//! model is set to nothing in the same batch; the moved clients count as
//! changed there for the policy (`merge_allowed`).

use std::collections::BTreeSet;

use super::{DrivenRound, InProcess};
use crate::remote::{RemoteServer, RemoteSetup};
use crate::{ClientId, MufcError, MufcResult};

/// The groups that run a round, each with its clients that changed.
pub(super) type Ready = Vec<(usize, Vec<ClientId>)>;

/// Groups whose rounds run together: one; the two halves of a split; a
/// group emptied by a merge and the group that took its clients.
pub(super) type Batch = Ready;

impl InProcess {
    /// `ready` in batches of groups whose rounds commit together. A group
    /// left with fewer clients than the minimum aggregate merges first
    /// ([`Self::take_new_groups`] with `Layout::merge`): its batch is the
    /// group, emptied, and the group that takes its clients, whose round
    /// is whole. A full group splits ([`RemoteServer::is_full`]):
    /// its batch is the group with its changed clients that stay and the
    /// new group (the last) with those that moved. The groups a split or
    /// merge left regrouped (its rounds did not commit) run together too.
    pub(super) fn batches(&mut self, ready: Ready) -> MufcResult<Vec<Batch>> {
        let gone = self.emptied();
        let mut batches: Vec<Batch> = Vec::with_capacity(ready.len() + 1);
        // Merges first: a group below the minimum runs no round of its own,
        // even one a failed split or merge left regrouped.
        let (merging, ready): (Ready, Ready) =
            (ready.into_iter()).partition(|(g, _)| self.server.merge_target(*g, &gone).is_some());
        let mut ready = ready;
        for (h, updated) in merging {
            let Some(m) = self.server.merge_target(h, &gone) else {
                continue;
            };
            let setup = self.server.setup().merge(h, m, &gone)?;
            let moved: Vec<ClientId> = (self.server.groups()[h].iter())
                .filter(|c| !gone.contains(c))
                .copied()
                .collect();
            self.take_new_groups(&setup, |server| server.merge(h, m, &gone))?;
            let groups = self.server.groups();
            let (stay, _): (Vec<ClientId>, Vec<ClientId>) =
                updated.into_iter().partition(|c| groups[h].contains(c));
            // The clients that moved count as changed in the group that
            // takes them (for the report's lone-update warning too).
            let changed = |c: &&ClientId| self.waiting.contains_key(c) || moved.contains(c);
            let grown: Vec<ClientId> = groups[m].iter().filter(changed).copied().collect();
            // The group that takes the clients runs once, in this batch.
            ready.retain(|(g, _)| *g != m);
            let into = batches.iter_mut().find(|b| b.iter().any(|(g, _)| *g == m));
            match into {
                Some(batch) => {
                    batch.retain(|(g, _)| *g != m);
                    batch.extend([(h, stay), (m, grown)]);
                }
                None => batches.push(vec![(h, stay), (m, grown)]),
            }
        }
        let regrouped = self.server.regrouped(&gone);
        let (unfinished, ready): (Ready, Ready) =
            ready.into_iter().partition(|(g, _)| regrouped.contains(g));
        if !unfinished.is_empty() {
            batches.push(unfinished);
        }
        for (g, updated) in ready {
            if !self.server.is_full(g, &gone) {
                batches.push(vec![(g, updated)]);
                continue;
            }
            let setup = self.server.split_setup(g, &gone)?;
            self.take_new_groups(&setup, |server| server.split(g, &gone))?;
            let groups = self.server.groups();
            let n = groups.len() - 1;
            let (moved, stay) = updated.into_iter().partition(|c| groups[n].contains(c));
            batches.push(vec![(g, stay), (n, moved)]);
        }
        Ok(batches)
    }

    /// `ready` with the group each merging group's clients move to, with
    /// its waiting clients: it runs in the merge's batch, whether or not
    /// it was ready alone ([`Self::merge_allowed`] counted its changes).
    pub(super) fn with_merge_targets(&self, mut ready: Ready, gone: &BTreeSet<ClientId>) -> Ready {
        let targets: Vec<usize> = (ready.iter())
            .filter_map(|(h, _)| self.server.merge_target(*h, gone))
            .collect();
        for m in targets {
            if ready.iter().all(|(g, _)| *g != m) {
                let waits = |c: &&ClientId| self.waiting.contains_key(c);
                let members = &self.server.groups()[m];
                ready.push((m, members.iter().filter(waits).copied().collect()));
            }
        }
        ready.sort_by_key(|(g, _)| *g);
        ready
    }

    /// Whether the round of group `h`, whose clients would merge into
    /// another, may run under the lone-update policy: the clients that
    /// move enter the other group's sum as new clients do, so they count
    /// as changed there with that group's own (docs/threat-model.md U3).
    /// `true` for a group that does not merge.
    pub(super) fn merge_allowed(&self, h: usize, gone: &BTreeSet<ClientId>) -> bool {
        let Some(m) = self.server.merge_target(h, gone) else {
            return true;
        };
        let waits = |c: &ClientId| self.waiting.contains_key(c);
        self.server.merge_allowed(h, m, gone, waits)
    }

    /// Takes the groups of `setup`, the federation's with a group split or
    /// merged: each client and the dealer is checked to take it, then the
    /// server changes as `change` says, and every party takes it.
    fn take_new_groups(
        &mut self,
        setup: &RemoteSetup,
        change: impl FnOnce(&mut RemoteServer) -> MufcResult<()>,
    ) -> MufcResult<()> {
        for c in &self.clients {
            if let Some(own) = c.setup() {
                setup.taken_since(own).map_err(MufcError::Remote)?;
            }
        }
        change(&mut self.server)?;
        if let Some(dealer) = &mut self.dealer {
            dealer.take(setup)?;
        }
        for c in &mut self.clients {
            c.adopt(setup)?;
        }
        Ok(())
    }

    /// Runs a batch of groups: one group's round as a removal runs it;
    /// several groups' whole rounds collected before any commits, then
    /// every group of the batch with no client left holding points
    /// emptied (its clients moved to another group of the batch).
    pub(super) fn run_batch(&mut self, batch: &Batch) -> MufcResult<Vec<DrivenRound>> {
        if let [(g, updated)] = &batch[..] {
            return Ok(vec![self.group_round(*g, updated)?]);
        }
        let gone = self.emptied();
        let groups = self.server.groups();
        let (rings, empties): (Vec<usize>, Vec<usize>) = (batch.iter().map(|(g, _)| *g))
            .partition(|g| groups[*g].iter().any(|c| !gone.contains(c)));
        let rings: Vec<Vec<ClientId>> = rings.iter().map(|g| groups[*g].clone()).collect();
        let rounds = self.rounds_together(&rings)?;
        for h in empties {
            self.server.empty_group(h)?;
        }
        Ok(rounds)
    }
}
