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
    /// Whether group `g` (its clients not in `gone`) is full and splits
    /// without showing the server a sum of fewer than `min_clients`
    /// clients: it holds twice the smallest size a group may have, and
    /// the clients not yet in its last sum can move to a new group with
    /// none, or at least `min_clients`, of those in it, the smallest size
    /// of them staying. A driver splits such a group ([`Self::split`])
    /// before a round of its requests runs.
    pub fn is_full(&self, g: usize, gone: &BTreeSet<ClientId>) -> bool {
        self.split_moving(g, gone).is_some()
    }

    /// The clients of group `g` that form a new group when it splits,
    /// present clients being those not in `gone`; `None` when it does not
    /// split: it holds fewer than twice the smallest size a group may
    /// have (the topology's group size, at least the minimum aggregate
    /// `min`), or no split shows the server no sum of fewer than `min`
    /// clients.
    ///
    /// Why not any half: the server holds the group's last sum (of the
    /// clients it included, `S`) and decodes both halves' sums; the last
    /// sum less the half that stays is the sum of the clients of `S` that
    /// moved (as they were), so they are none or at least `min`, and the
    /// half that stays is at least the smallest size. The clients new to
    /// the sum (joined, not yet included) all move: their sum is the
    /// round's change the lone-update policy allowed. So the new group
    /// is the new clients alone when they are enough; otherwise them
    /// with the last `max(min, smallest - new)` of `S` by id, if what
    /// stays of `S` is still the smallest size.
    pub(crate) fn split_moving(
        &self,
        g: usize,
        gone: &BTreeSet<ClientId>,
    ) -> Option<BTreeSet<ClientId>> {
        let config = self.setup.config();
        let size = config.topology().group_size()?;
        let min = config.min_clients().max(1);
        let smallest = size.max(min);
        let members = self.groups().get(g)?.clone();
        let present: Vec<ClientId> = members.into_iter().filter(|c| !gone.contains(c)).collect();
        let included = self.included(g);
        let (summed, new): (Vec<ClientId>, Vec<ClientId>) =
            present.into_iter().partition(|c| included.contains(c));
        crate::layout::split_moving(&summed, &new, smallest, min)
    }

    /// Splits group `g` in two (the clients [`Self::is_full`] says move
    /// form a new group, the last):
    /// the setup takes the new layout, the groups' state follows
    /// (`Tree::split`); the two groups' next rounds are whole, and until
    /// both committed they are [`Self::regrouped`]: a driver runs them
    /// together, and commits neither before both are decoded (in one
    /// process `InProcess` collects both; across processes the
    /// coordinator holds the first decoded in memory). Every model is
    /// unchanged by the split itself. Unchanged on an error.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidLayout`] without groups, for a group out of
    /// range or one too small to split.
    ///
    /// # Example
    ///
    /// ```
    /// use std::collections::BTreeSet;
    /// use mufc::remote::InProcess;
    /// use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions, Topology};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let data: Vec<(ClientId, Dataset)> = (0..4)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)).map(|d| (ClientId(l as u64), d)))
    ///     .collect::<Result<_, _>>()?;
    /// let config = FederationConfig::new(2)
    ///     .seed(5)
    ///     .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
    ///     .min_clients(2)
    ///     .topology(Topology::Groups { size: 2 })
    ///     .validate()?;
    /// let mut server = InProcess::train(data, &config)?.server().clone();
    /// let none = BTreeSet::new();
    /// // Two clients join the first group: four is twice the smallest group.
    /// server.admit_placed(&[ClientId(4)], &BTreeSet::from([ClientId(2), ClientId(3)]))?;
    /// assert!(!server.is_full(0, &none));
    /// server.admit_placed(&[ClientId(5)], &BTreeSet::from([ClientId(2), ClientId(3)]))?;
    /// assert!(server.is_full(0, &none));
    /// server.split(0, &none)?;
    /// assert_eq!(server.groups().len(), 3);
    /// // The upper half, 4 and 5 (in no sum yet), form the new group: only
    /// // its round must run. Had they summed in group 0, both would.
    /// assert_eq!(server.groups()[0], [0, 1].map(ClientId));
    /// assert_eq!(server.groups()[2], [4, 5].map(ClientId));
    /// assert_eq!(server.regrouped(&none), [2]);
    /// assert!(server.split_halves(&none).is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn split(&mut self, g: usize, gone: &BTreeSet<ClientId>) -> MufcResult<()> {
        let setup = self.split_setup(g, gone)?;
        self.regroup(setup, |tree, parts, layout, capacity| {
            tree.split(parts, g, layout, capacity)
        })
    }

    /// The setup with group `g` split as [`Self::split_moving`] says, the
    /// server unchanged: what each party checks before it takes it.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidLayout`] when group `g` does not split.
    pub(crate) fn split_setup(
        &self,
        g: usize,
        gone: &BTreeSet<ClientId>,
    ) -> MufcResult<crate::remote::RemoteSetup> {
        let moving = (self.split_moving(g, gone))
            .ok_or_else(|| MufcError::InvalidLayout(format!("group {g} does not split")))?;
        self.setup.split(g, &moving)
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

    /// The groups that must run a whole round since a split or a merge,
    /// whatever the lone-update policy, present clients being those not
    /// in `gone`; none when flat. A driver runs their rounds before any
    /// other of theirs.
    pub fn regrouped(&self, gone: &BTreeSet<ClientId>) -> Vec<usize> {
        self.tree
            .as_ref()
            .map_or_else(Vec::new, |t| t.regrouped(gone))
    }

    /// The groups a split left whose whole rounds must commit together,
    /// present clients being those not in `gone`: the
    /// [`Self::regrouped`] groups with a present client whose sums
    /// involve another group's (one holds a client of another group, or
    /// a member another group's sum holds), when there are more than one.
    /// Empty otherwise: a merge's taking group, a split whose moved
    /// clients had never summed, or groups that never trained each run
    /// alone.
    pub fn split_halves(&self, gone: &BTreeSet<ClientId>) -> Vec<usize> {
        let Some(tree) = &self.tree else {
            return Vec::new();
        };
        let groups = tree.layout().groups();
        let holding = |g: usize| groups[g].iter().any(|c| !gone.contains(c));
        let halves: Vec<usize> = (tree.regrouped_linked(gone).into_iter())
            .filter(|&(g, linked)| linked && holding(g))
            .map(|(g, _)| g)
            .collect();
        if halves.len() > 1 { halves } else { Vec::new() }
    }

    /// The group the present clients of group `h` (those not in `gone`)
    /// move to when fewer than the minimum aggregate are left in it
    /// (`Layout::merge_target`); `None` when `h` does not merge.
    pub(crate) fn merge_target(&self, h: usize, gone: &BTreeSet<ClientId>) -> Option<usize> {
        let min = self.setup.config().min_clients();
        self.layout()?.merge_target(h, min, gone)
    }

    /// The merge a driver across processes runs before any round
    /// (docs/threat-model.md P4): the first group `h` left with fewer
    /// clients not in `gone` than the minimum aggregate, but some, and
    /// the group `m` its clients move to (the smallest that meets the
    /// minimum); `None` when no group must merge, or none can take it
    /// (then [`Self::withdrawal_for`] withdraws the model).
    ///
    /// # Example
    ///
    /// ```
    /// use std::collections::BTreeSet;
    /// use mufc::remote::InProcess;
    /// use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions, Topology};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let data: Vec<(ClientId, Dataset)> = (0..6)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)).map(|d| (ClientId(l as u64), d)))
    ///     .collect::<Result<_, _>>()?;
    /// let config = FederationConfig::new(2)
    ///     .seed(5)
    ///     .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
    ///     .min_clients(2)
    ///     .topology(Topology::Groups { size: 3 })
    ///     .validate()?;
    /// let mut server = InProcess::train(data, &config)?.server().clone();
    /// // Two clients of the first group hold no point: its last one moves.
    /// let gone = BTreeSet::from([ClientId(0), ClientId(1)]);
    /// assert_eq!(server.merge_due(&gone), Some((0, 1)));
    /// server.merge(0, 1, &gone)?;
    /// assert_eq!(server.groups()[1], [2, 3, 4, 5].map(ClientId));
    /// assert_eq!(server.regrouped(&gone), [0, 1]);
    /// assert_eq!(server.merge_due(&gone), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn merge_due(&self, gone: &BTreeSet<ClientId>) -> Option<(usize, usize)> {
        if self.withdrawn.is_some() || !self.is_trained() {
            return None;
        }
        (0..self.groups().len()).find_map(|h| self.merge_target(h, gone).map(|m| (h, m)))
    }

    /// Whether group `h`'s clients not in `gone` may merge into group `m`
    /// under the lone-update policy (docs/threat-model.md U3): they
    /// enter `m`'s sum as new clients do, so they count as changed there
    /// with `m`'s own clients that `waits` (their requests wait). Both
    /// drivers ask it before a merge.
    pub fn merge_allowed(
        &self,
        h: usize,
        m: usize,
        gone: &BTreeSet<ClientId>,
        waits: impl Fn(&ClientId) -> bool,
    ) -> bool {
        let groups = self.groups();
        let (Some(from), Some(into)) = (groups.get(h), groups.get(m)) else {
            return false;
        };
        let moved = from.iter().filter(|c| !gone.contains(c)).count();
        let waiting = into.iter().filter(|c| waits(c)).count();
        let config = self.setup.config();
        config.updates_enough(into.len() + moved, moved + waiting)
    }

    /// After group `g`'s round committed: empties every group that holds
    /// no client outside `gone` and every client of whose sum not in
    /// `gone` is now a member of `g` (its clients moved to `g` by a
    /// merge, [`Self::merge`]), so that no client is in two groups' sums.
    /// A moved client the round did not include (it was absent) is then
    /// in no sum until its catch-up, as any absent member's data. Gives
    /// the groups emptied; none when flat.
    ///
    /// # Errors
    ///
    /// As emptying a group (the models on its path updated).
    pub fn empty_merged(&mut self, g: usize, gone: &BTreeSet<ClientId>) -> MufcResult<Vec<usize>> {
        let Some(tree) = &self.tree else {
            return Ok(Vec::new());
        };
        let groups = tree.layout().groups();
        // Every client of `h`'s sum that holds points moved to `g`, whose
        // round just committed: one it did not include (absent) is out of
        // the model until its catch-up, as any absent member's data.
        let emptied: Vec<usize> = (0..groups.len())
            .filter(|&h| h != g && groups[h].iter().all(|c| gone.contains(c)))
            .filter(|&h| {
                let moved = (tree.group_included(h).iter()).filter(|c| !gone.contains(c));
                let mut moved = moved.peekable();
                moved.peek().is_some() && moved.all(|c| groups[g].binary_search(c).is_ok())
            })
            .collect();
        for h in &emptied {
            self.empty_group(*h)?;
        }
        Ok(emptied)
    }

    /// Moves group `h`'s present clients (those not in `gone`) to group
    /// `m` (the setup's `Layout::merge`): the setup takes the new layout, `m`'s next round is whole, and `h`
    /// is emptied ([`Self::empty_merged`]) once that round committed;
    /// until then both are [`Self::regrouped`]. Each client takes the new
    /// setup as its own with one group's clients moved
    /// ([`RemoteClient::adopt`](crate::remote::RemoteClient::adopt)).
    /// Unchanged on an error.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidLayout`] without groups, for a group out of
    /// range or `h` and `m` the same.
    pub fn merge(&mut self, h: usize, m: usize, gone: &BTreeSet<ClientId>) -> MufcResult<()> {
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
