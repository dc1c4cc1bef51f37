//! The groups' state as the layout changes (issue 29): every group's
//! aggregation sized for clients that joined, a full group split in two
//! with the tree above laid out again, and a group's clients moved to
//! another with the group emptied.

use std::collections::{BTreeMap, BTreeSet};

use super::super::setup::Setup;
use super::{Group, Tree, fit_inner, group_aggregation};
use crate::aggregation::Aggregation;
use crate::layout::Layout;
use crate::server::decode::Decoded;
use crate::{ClientId, MufcError, MufcResult, Server, ServerUpdate};

impl Tree {
    /// The groups once clients joined into `layout` (the same shape, with
    /// new members, [`Layout::absorbing`]): each group's aggregation built
    /// for its members at the new `capacity`, its round counter going on
    /// and its last sum its model's counts, so that its next round is
    /// whole; the models unchanged.
    pub(crate) fn admitting(
        &self,
        setup: &Setup,
        layout: Layout,
        capacity: usize,
    ) -> MufcResult<Self> {
        if layout.groups().len() != self.groups.len() {
            return Err(MufcError::InvalidLayout(
                "clients that join add no group".into(),
            ));
        }
        let mut groups = Vec::with_capacity(self.groups.len());
        for (g, before) in self.groups.iter().enumerate() {
            groups.push(Group {
                aggregation: self.going_on(setup, g, &layout, capacity)?,
                included: before.included.clone(),
            });
        }
        Ok(Self {
            layout,
            groups,
            nodes: self.nodes.clone(),
        })
    }

    /// The groups with group `g` split as `layout` says (`Layout::split_moving`:
    /// the new group is the last): `g`'s aggregation built for the members
    /// it keeps (its counter going on, its last sum its model's counts), a
    /// new group with no sum and an empty model, and the inner nodes fit
    /// again over the new shape. The root's counts are unchanged, and so
    /// is every group's model: the clients that moved stay in `g`'s sum
    /// until the two groups' rounds run ([`Self::regrouped`]).
    pub(crate) fn split(
        &self,
        setup: &Setup,
        g: usize,
        layout: Layout,
        capacity: usize,
    ) -> MufcResult<Self> {
        let n = self.groups.len();
        if layout.groups().len() != n + 1 || g >= n {
            return Err(MufcError::InvalidLayout(format!(
                "group {g} of {n} does not split into {} groups",
                layout.groups().len()
            )));
        }
        let mut groups = self.groups.clone();
        groups[g].aggregation = self.going_on(setup, g, &layout, capacity)?;
        groups.push(Group {
            aggregation: group_aggregation(setup, n, &layout.groups()[n], Some(capacity))?,
            included: Vec::new(),
        });
        let mut nodes = self.nodes[..n].to_vec();
        nodes.push(setup.server()?);
        fit_inner(setup, &layout, &mut nodes)?;
        Ok(Self {
            layout,
            groups,
            nodes,
        })
    }

    /// The groups with group `h`'s present clients moved to group `m` as
    /// `layout` says (`Layout::merge`): `m`'s aggregation built for its
    /// members (its counter going on, its last sum its model's counts), so
    /// that its next round is whole; every model unchanged until that
    /// round and `h`'s emptying ([`Self::empty_group`]) commit.
    pub(crate) fn merging(
        &self,
        setup: &Setup,
        m: usize,
        layout: Layout,
        capacity: usize,
    ) -> MufcResult<Self> {
        if layout.groups().len() != self.groups.len() || m >= self.groups.len() {
            return Err(MufcError::InvalidLayout(format!(
                "no merge into group {m} of {}",
                self.groups.len()
            )));
        }
        let mut groups = self.groups.clone();
        groups[m].aggregation = self.going_on(setup, m, &layout, capacity)?;
        Ok(Self {
            layout,
            groups,
            nodes: self.nodes.clone(),
        })
    }

    /// Group `g`'s aggregation for its members in `layout` at `capacity`,
    /// going on from its aggregation now: its round counter goes on (no
    /// round's secrets are drawn twice) and its last sum is its model's
    /// counts, so that its next round is whole.
    fn going_on(
        &self,
        setup: &Setup,
        g: usize,
        layout: &Layout,
        capacity: usize,
    ) -> MufcResult<Aggregation> {
        let mut fresh = group_aggregation(setup, g, &layout.groups()[g], Some(capacity))?;
        fresh.continuing(&self.groups[g].aggregation, self.nodes[g].counts());
        Ok(fresh)
    }

    /// Empties group `h`, whose clients with points all moved to another
    /// group (the others left, with nothing to send): its model forgets
    /// its counts, the models on its path lose them, and its sum holds no
    /// client. Nothing is decoded: the server knows the sum of clients
    /// with no points. Gives the root's update.
    pub(crate) fn empty_group(
        &mut self,
        root: &mut Server,
        h: usize,
        parallel: bool,
    ) -> MufcResult<ServerUpdate> {
        let update = self.set_group(root, h, Decoded::Full(Vec::new()), parallel)?;
        self.groups[h].included.clear();
        Ok(update)
    }

    /// The groups whose sum does not match their members since a split or
    /// a merge, present clients being those not in `gone`: one that holds
    /// a client of another group, one with a present member another
    /// group's sum holds, or one that never summed and has a present
    /// member. Each must run a whole round (or, with no present member,
    /// be emptied), whatever the lone-update policy: the change was served
    /// by a round the policy allowed, whose groups did not all commit.
    pub(crate) fn regrouped(&self, gone: &BTreeSet<ClientId>) -> Vec<usize> {
        (self.regrouped_linked(gone).into_iter())
            .map(|(g, _)| g)
            .collect()
    }

    /// [`Self::regrouped`], each group with whether another group's sum
    /// is involved (it holds a client of another group, or a present
    /// member of it is in another's sum): such groups' rounds must
    /// commit together (a split's two halves); a group that merely never
    /// summed is not.
    pub(crate) fn regrouped_linked(&self, gone: &BTreeSet<ClientId>) -> Vec<(usize, bool)> {
        let groups = self.layout.groups();
        // Which group's sum holds each client: one walk of the sums.
        let summed: BTreeMap<ClientId, usize> = (self.groups.iter().enumerate())
            .flat_map(|(g, group)| group.included.iter().map(move |c| (*c, g)))
            .collect();
        let summed_by = |c: &ClientId| summed.get(c).copied();
        (0..groups.len())
            .filter_map(|g| {
                let foreign =
                    (self.groups[g].included.iter()).any(|c| groups[g].binary_search(c).is_err());
                let elsewhere = (groups[g].iter())
                    .any(|c| !gone.contains(c) && summed_by(c).is_some_and(|h| h != g));
                let unsummed = self.groups[g].included.is_empty()
                    && groups[g].iter().any(|c| !gone.contains(c));
                let linked = foreign || elsewhere;
                (linked || unsummed).then_some((g, linked))
            })
            .collect()
    }
}
