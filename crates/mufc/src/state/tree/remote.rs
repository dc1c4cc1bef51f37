//! The groups of a server run across processes ([`crate::remote`]): one
//! group's round at a time, decoded against that group's last sum, then
//! the models on the group's path to the root, as [`Tree::remove`] does
//! in one process.

use std::collections::{BTreeMap, BTreeSet};

use num_bigint::BigUint;

use super::super::setup::Setup;
use super::{Group, Tree, delta_of, group_aggregation};
use crate::aggregation::{Aggregation, Pending};
use crate::layout::Layout;
use crate::server::InputChange;
use crate::server::decode::Decoded;
use crate::{ClientId, MufcError, MufcResult, Server, ServerUpdate};

/// What a group's round across processes leaves to commit once its sum
/// is decoded.
pub(crate) struct FinishedRound {
    /// The aggregation's sum after the round.
    pub(crate) pending: Pending,
    /// The round's number.
    pub(crate) round: u64,
    /// The clients the round's sum holds.
    pub(crate) included: Vec<ClientId>,
}

impl Tree {
    /// The groups of a server across processes before any round: each
    /// group's aggregation under the roster's sketch parameters
    /// (`capacity`, the root's), and empty models.
    pub(crate) fn serving(setup: &Setup, layout: Layout, capacity: usize) -> MufcResult<Self> {
        let mut groups = Vec::with_capacity(layout.groups().len());
        for (g, ids) in layout.groups().iter().enumerate() {
            groups.push(Group {
                aggregation: group_aggregation(setup, g, ids, Some(capacity))?,
                included: Vec::new(),
            });
        }
        let nodes = (0..layout.nodes().saturating_sub(1))
            .map(|_| setup.server())
            .collect::<MufcResult<_>>()?;
        Ok(Self {
            layout,
            groups,
            nodes,
        })
    }

    /// The group every client of `ring` belongs to: a round runs inside
    /// one group, whose masks cancel only among its members.
    ///
    /// # Errors
    ///
    /// [`MufcError::UnknownClient`] for a client in no group;
    /// [`MufcError::Remote`] for a ring across groups, or none.
    pub(crate) fn group_of_ring(&self, ring: &[ClientId]) -> MufcResult<usize> {
        let mut group = None;
        for c in ring {
            let g = self
                .layout
                .group_of(*c)
                .ok_or(MufcError::UnknownClient(*c))?;
            if group.is_some_and(|h| h != g) {
                return Err(MufcError::Remote(format!(
                    "a round runs inside one group: client {c} is in group {g}, not {}",
                    group.unwrap_or_default()
                )));
            }
            group = Some(g);
        }
        group.ok_or_else(|| MufcError::Remote("a round needs clients".into()))
    }

    /// Group `g`'s aggregation (`None` out of range).
    pub(crate) fn group_aggregation(&mut self, g: usize) -> Option<&mut Aggregation> {
        self.groups.get_mut(g).map(|group| &mut group.aggregation)
    }

    /// Group `g`'s decoded counts, its last sum (`None` out of range).
    pub(crate) fn group_counts(&self, g: usize) -> Option<&BTreeMap<BigUint, u64>> {
        self.nodes.get(g).map(Server::counts)
    }

    /// The clients group `g`'s aggregate holds: its last committed
    /// round's included clients (empty before one, or out of range).
    pub(crate) fn group_included(&self, g: usize) -> &[ClientId] {
        self.groups.get(g).map_or(&[], |group| &group.included)
    }

    /// Takes the clients `gone` off every group's included clients: they
    /// left after their whole removal's round committed, so each sum
    /// holds nothing of theirs and no later ring names them.
    pub(crate) fn left(&mut self, gone: &[ClientId]) {
        for group in &mut self.groups {
            group.included.retain(|c| !gone.contains(c));
        }
    }

    /// Group `g`'s aggregation, to read (`None` out of range).
    pub(crate) fn group_aggregation_ref(&self, g: usize) -> Option<&Aggregation> {
        self.groups.get(g).map(|group| &group.aggregation)
    }

    /// Whether group `g` has committed a round.
    pub(crate) fn group_trained(&self, g: usize) -> bool {
        self.groups
            .get(g)
            .is_some_and(|group| !group.included.is_empty())
    }

    /// Whether every group with clients has committed a round.
    pub(crate) fn trained(&self) -> bool {
        (0..self.groups.len()).all(|g| self.group_trained(g) || self.layout.groups()[g].is_empty())
    }

    /// Commits group `g`'s finished round: its model takes the decoded
    /// sum (or difference), the models on its path the difference, the
    /// root last; then its aggregation keeps the sum and the clients the
    /// round included. Gives the root's update.
    pub(crate) fn commit_group(
        &mut self,
        root: &mut Server,
        g: usize,
        decoded: Decoded,
        finished: FinishedRound,
        parallel: bool,
    ) -> MufcResult<ServerUpdate> {
        let FinishedRound {
            pending,
            round,
            included,
        } = finished;
        let update = self.set_group(root, g, decoded, parallel)?;
        let group = &mut self.groups[g];
        group.aggregation.commit_remote(pending, round);
        group.included = included;
        Ok(update)
    }

    /// Sets group `g`'s model to the `decoded` sum (or difference), and
    /// the models on its path to the root by the change, the root last:
    /// gives the root's update.
    pub(super) fn set_group(
        &mut self,
        root: &mut Server,
        g: usize,
        decoded: Decoded,
        parallel: bool,
    ) -> MufcResult<ServerUpdate> {
        let leaf = (self.nodes.get(g)).ok_or_else(|| MufcError::Remote(format!("no group {g}")))?;
        let delta = delta_of(leaf, &decoded);
        let plan = leaf.plan(InputChange::Counts(decoded))?;
        self.update_paths(
            root,
            &BTreeSet::from([g]),
            BTreeMap::from([(g, delta)]),
            vec![(g, plan)],
            parallel,
        )
    }
}
