//! The groups' changes at the server (issue 29): a group grown full by
//! joins splits in two, and a group that clients left below the minimum
//! aggregate merges into another; the groups whose rounds did not all
//! commit after either are run again whatever the lone-update policy.

use std::collections::BTreeSet;

use super::RemoteServer;
use crate::state::setup::Setup;
use crate::state::tree::Tree;
use crate::{ClientId, Layout, MufcError, MufcResult, ServerUpdate};

impl RemoteServer {
    /// Whether group `g` holds enough clients not in `gone` to split in
    /// two groups of the smallest size a group may have: the topology's
    /// group size, and at least the minimum aggregate
    /// ([`Layout::is_full`](crate::Layout)).
    pub(crate) fn is_full(&self, g: usize, gone: &BTreeSet<ClientId>) -> bool {
        let config = self.setup.config();
        let Some(size) = config.topology().group_size() else {
            return false;
        };
        let smallest = size.max(config.min_clients());
        (self.layout()).is_some_and(|l| l.is_full(g, smallest, gone))
    }

    /// Splits group `g` in two ([`RemoteSetup::split`](crate::remote::RemoteSetup::split)):
    /// the setup takes the new layout, the groups' state follows
    /// (`Tree::split`); the two groups' next rounds are whole, and until
    /// both committed they are [`Self::regrouped`]. Unchanged on an error.
    pub(crate) fn split(&mut self, g: usize, gone: &BTreeSet<ClientId>) -> MufcResult<()> {
        let setup = self.setup.split(g, gone)?;
        self.regroup(setup, |tree, parts, layout, capacity| {
            tree.split(parts, g, layout, capacity)
        })
    }

    /// Takes `setup`, the federation's with its groups changed, and the
    /// groups' state `change` makes of the tree for the new layout (with
    /// the setup's parts and capacity). Unchanged on an error.
    fn regroup(
        &mut self,
        setup: crate::remote::RemoteSetup,
        change: impl FnOnce(&Tree, &Setup, Layout, usize) -> MufcResult<Tree>,
    ) -> MufcResult<()> {
        let tree = self
            .tree_for(&setup, change)?
            .ok_or(MufcError::TopologyUnsupported(
                "groups that change, without groups",
            ))?;
        self.setup = setup;
        self.tree = Some(tree);
        Ok(())
    }

    /// The groups' state `change` makes of the tree for `setup`'s layout
    /// (with its parts and capacity), built without changing the server;
    /// `None` when flat.
    pub(super) fn tree_for(
        &self,
        setup: &crate::remote::RemoteSetup,
        change: impl FnOnce(&Tree, &Setup, Layout, usize) -> MufcResult<Tree>,
    ) -> MufcResult<Option<Tree>> {
        let Some(tree) = &self.tree else {
            return Ok(None);
        };
        let layout = (setup.layout().cloned())
            .ok_or_else(|| MufcError::InvalidLayout("no groups".into()))?;
        change(tree, &setup.parts()?, layout, setup.capacity()).map(Some)
    }

    /// The groups that must run a whole round since a split, whatever
    /// the lone-update policy (`Tree::regrouped`); none when flat.
    pub(crate) fn regrouped(&self, gone: &BTreeSet<ClientId>) -> Vec<usize> {
        self.tree
            .as_ref()
            .map_or_else(Vec::new, |t| t.regrouped(gone))
    }

    /// The group the present clients of group `h` (those not in `gone`)
    /// move to when fewer than the minimum aggregate are left in it
    /// (`Layout::merge_target`); `None` when `h` does not merge.
    pub(crate) fn merge_target(&self, h: usize, gone: &BTreeSet<ClientId>) -> Option<usize> {
        let min = self.setup.config().min_clients();
        self.layout()?.merge_target(h, min, gone)
    }

    /// Moves group `h`'s present clients to group `m`
    /// ([`RemoteSetup::merge`](crate::remote::RemoteSetup::merge)): the
    /// setup takes the new layout, `m`'s next round is whole, and `h` is
    /// emptied ([`Self::empty_group`]) once that round committed; until
    /// then both are [`Self::regrouped`]. Unchanged on an error.
    pub(crate) fn merge(
        &mut self,
        h: usize,
        m: usize,
        gone: &BTreeSet<ClientId>,
    ) -> MufcResult<()> {
        let setup = self.setup.merge(h, m, gone)?;
        self.regroup(setup, |tree, parts, layout, capacity| {
            tree.merging(parts, m, layout, capacity)
        })
    }

    /// Empties group `h`, every client of which with points moved to
    /// another group (`Tree::empty_group`): gives the root's update.
    pub(crate) fn empty_group(&mut self, h: usize) -> MufcResult<ServerUpdate> {
        let parallel = self.setup.config().run().is_parallel();
        let tree = (self.tree.as_mut()).ok_or(MufcError::TopologyUnsupported("an empty group"))?;
        tree.empty_group(&mut self.server, h, parallel)
    }
}
