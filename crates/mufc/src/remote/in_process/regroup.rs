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

use std::collections::BTreeSet;

use super::InProcess;
use crate::{ClientId, MufcError, MufcResult};

/// The groups that run a round, each with its clients that changed.
pub(super) type Ready = Vec<(usize, Vec<ClientId>)>;

/// Groups whose rounds run together: one, or the two halves of a split.
pub(super) type Batch = Ready;

impl InProcess {
    /// `ready` in batches, every full group split first
    /// ([`Self::split_group`]): its batch is the group with its changed
    /// clients that stay and the new group (the last) with those that
    /// moved, whose rounds commit together. The groups a split left
    /// regrouped (its rounds did not commit) run together too.
    pub(super) fn split_full(&mut self, ready: Ready) -> MufcResult<Vec<Batch>> {
        let gone = self.emptied();
        let regrouped = self.server.regrouped(&gone);
        let (unfinished, ready): (Ready, Ready) =
            ready.into_iter().partition(|(g, _)| regrouped.contains(g));
        let mut batches = Vec::with_capacity(ready.len() + 1);
        if !unfinished.is_empty() {
            batches.push(unfinished);
        }
        for (g, updated) in ready {
            if !self.server.is_full(g, &gone) {
                batches.push(vec![(g, updated)]);
                continue;
            }
            self.split_group(g, &gone)?;
            let groups = self.server.groups();
            let n = groups.len() - 1;
            let (moved, stay) = updated.into_iter().partition(|c| groups[n].contains(c));
            batches.push(vec![(g, stay), (n, moved)]);
        }
        Ok(batches)
    }

    /// Splits group `g` (the clients of `gone` count for no size): each
    /// client and the dealer is checked to take the new setup, then the
    /// server splits, and every party takes it.
    fn split_group(&mut self, g: usize, gone: &BTreeSet<ClientId>) -> MufcResult<()> {
        let setup = self.server.setup().split(g, gone)?;
        for c in &self.clients {
            if let Some(own) = c.setup() {
                setup.taken_since(own).map_err(MufcError::Remote)?;
            }
        }
        self.server.split(g, gone)?;
        if let Some(dealer) = &mut self.dealer {
            dealer.take(&setup)?;
        }
        for c in &mut self.clients {
            c.adopt(&setup)?;
        }
        Ok(())
    }
}
