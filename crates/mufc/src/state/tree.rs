//! Federations with groups ([`Topology::Groups`](crate::Topology::Groups))
//! and trees ([`Topology::Tree`](crate::Topology::Tree)): masked rounds
//! inside groups, a model at every node.
//!
//! Every client sends its sketch under the root's parameters (capacity
//! `client_k * L`, one field), masked with masks that cancel inside its
//! group only. The server decodes each group's sum, or its difference
//! against the group's last sum, exactly as the flat server decodes the
//! whole one. Above the groups nothing is decoded: sketches are linear,
//! so a node's counts are the sum of its children's, and a removal adds
//! the decoded differences of the affected groups up the paths. The
//! root's counts are therefore the flat aggregate, and the root's model,
//! fit by the same [`Server`] with the same seed on the same counts, is
//! flat MUFC's, bit for bit (the server's exact K-means depends on its
//! points only, [`seeding::ExactModel::update`]).
//!
//! A removal runs one masked round in each group that has a client whose
//! message changed (the others send nothing), then updates the models of
//! the nodes on the paths from those groups to the root.

use std::collections::{BTreeMap, BTreeSet};

use num_bigint::BigUint;

use super::setup::Setup;
use crate::aggregation::Aggregation;
use crate::aggregation::histogram_change;
use crate::layout::{Layout, NodeId};
use crate::server::decode::Decoded;
use crate::server::{InputChange, ServerPlan};
use crate::{ClientId, MufcResult, Server, ServerUpdate, par};

mod regroup;
mod remote;
pub(crate) use remote::FinishedRound;
mod saved;

/// One group's aggregation and the clients its aggregate includes.
#[derive(Clone, Debug)]
struct Group {
    aggregation: Aggregation,
    /// The members whose data the group's aggregate holds (its last
    /// round's included clients).
    included: Vec<ClientId>,
}

/// The groups and the models of every node but the root (the federation's
/// own server).
#[derive(Clone, Debug)]
pub(crate) struct Tree {
    layout: Layout,
    groups: Vec<Group>,
    /// The model of node `i`, for every node but the root.
    nodes: Vec<Server>,
}

/// A decoded change of counts, by bin.
type Delta = BTreeMap<BigUint, i128>;

fn add_into(into: &mut Delta, from: &Delta) {
    for (bin, c) in from {
        let e = into.entry(bin.clone()).or_insert(0);
        *e += c;
        if *e == 0 {
            into.remove(bin);
        }
    }
}

fn sum_counts<'a>(servers: impl IntoIterator<Item = &'a Server>) -> Vec<(BigUint, u64)> {
    let mut sum: BTreeMap<BigUint, u64> = BTreeMap::new();
    for s in servers {
        for (bin, c) in s.counts() {
            *sum.entry(bin.clone()).or_insert(0) += c;
        }
    }
    sum.into_iter().collect()
}

impl Tree {
    /// The layout.
    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The model of `node` (`None` for the root, which is the
    /// federation's server, or a node out of range).
    pub(crate) fn node(&self, node: NodeId) -> Option<&Server> {
        self.nodes.get(node.0)
    }

    /// The rounds started by every group.
    pub(crate) fn rounds(&self) -> u64 {
        self.groups.iter().map(|g| g.aggregation.rounds()).sum()
    }

    /// Every client the groups' aggregates include, in id order.
    pub(crate) fn included(&self) -> Vec<ClientId> {
        let mut all: Vec<ClientId> = self
            .groups
            .iter()
            .flat_map(|g| g.included.iter().copied())
            .collect();
        all.sort_unstable();
        all
    }
}

/// Group `g`'s aggregation of its clients `ids`: the root's sketch
/// parameters (`capacity`), its own masks and derived round secrets.
fn group_aggregation(
    setup: &Setup,
    g: usize,
    ids: &[ClientId],
    capacity: Option<usize>,
) -> MufcResult<Aggregation> {
    Ok(setup
        .aggregation_for(ids, capacity)?
        .ok_or_else(crate::config::groups_need_scma)?
        .in_group(g as u64))
}

/// The change of a group's counts a decoded round makes: the decoded
/// difference, or the new sum less the group's model's counts.
fn delta_of(leaf: &Server, decoded: &Decoded) -> Delta {
    match decoded {
        Decoded::Delta(v) => v.iter().filter(|(_, c)| *c != 0).cloned().collect(),
        Decoded::Full(v) => {
            let old: Vec<(BigUint, u64)> =
                leaf.counts().iter().map(|(b, c)| (b.clone(), *c)).collect();
            histogram_change(&old, v).into_iter().collect()
        }
    }
}

impl Tree {
    /// Updates the models on the paths from the `affected` groups to the
    /// root (the root's update: [`ServerUpdate::Unchanged`] when no group
    /// below it changed): each inner node adds its affected children's differences
    /// (`deltas`, the groups' on entry; nothing is decoded above the
    /// groups), bottom-up; then every plan (the groups' `plans` and the
    /// inner nodes') is applied, each node on its own (they are
    /// independent, in parallel when `parallel`), the root last. Every
    /// plan is computed before any model changes.
    fn update_paths(
        &mut self,
        root: &mut Server,
        affected: &BTreeSet<usize>,
        mut deltas: BTreeMap<usize, Delta>,
        mut plans: Vec<(usize, ServerPlan)>,
        parallel: bool,
    ) -> MufcResult<ServerUpdate> {
        let mut root_plan = None;
        for node in self.layout.inner_above(affected) {
            let mut delta = Delta::new();
            for child in self.layout.children(node) {
                if let Some(d) = deltas.get(&child.0) {
                    add_into(&mut delta, d);
                }
            }
            let change = InputChange::Counts(Decoded::Delta(
                delta.iter().map(|(b, c)| (b.clone(), *c)).collect(),
            ));
            if node == self.layout.root() {
                root_plan = Some((root.plan(change)?, delta.len()));
            } else {
                plans.push((node.0, self.nodes[node.0].plan(change)?));
            }
            deltas.insert(node.0, delta);
        }
        let mut by_node: BTreeMap<usize, ServerPlan> = plans.into_iter().collect();
        let mut jobs: Vec<(&mut Server, ServerPlan)> = self
            .nodes
            .iter_mut()
            .enumerate()
            .filter_map(|(i, s)| by_node.remove(&i).map(|p| (s, p)))
            .collect();
        let root_nonzeros = root_plan.as_ref().map(|(_, n)| *n);
        if let Some((plan, _)) = root_plan {
            jobs.push((root, plan));
        }
        let updates = par::map_owned(parallel, jobs, |(s, p)| s.apply(p))?;
        Ok(match updates.last() {
            Some(u) if root_nonzeros.is_some() => u.clone(),
            _ => ServerUpdate::Unchanged,
        })
    }
}

/// Fits the inner nodes but the root, bottom-up (children have smaller
/// indices), each on the sum of its children's counts, after the groups'
/// models in `nodes`; gives the root's counts, the sum of its children's.
fn fit_inner(
    setup: &Setup,
    layout: &Layout,
    nodes: &mut Vec<Server>,
) -> MufcResult<Vec<(BigUint, u64)>> {
    let sum_of = |node: NodeId, nodes: &[Server]| {
        sum_counts(layout.children(node).iter().map(|c| &nodes[c.0]))
    };
    // The nodes between the groups and the root, level by level (a
    // layout numbers the root last).
    let root = layout.root();
    for n in layout.groups().len()..root.0 {
        let counts = sum_of(NodeId(n), nodes);
        let mut s = setup.server()?;
        s.apply(s.plan(InputChange::Counts(Decoded::Full(counts)))?)?;
        nodes.push(s);
    }
    Ok(sum_of(root, nodes))
}
