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
use std::time::{Duration, Instant};

use num_bigint::BigUint;
use syndrome_agg::AnySketch;

use super::exchange::exchange;
use super::setup::Setup;
use crate::aggregation::Aggregation;
use crate::aggregation::histogram_change;
use crate::layout::{Layout, NodeId};
use crate::server::decode::Decoded;
use crate::server::{InputChange, ServerPlan};
use crate::{
    Client, ClientId, DecodeKind, MufcError, MufcResult, SecAggStep, Server, ServerUpdate,
    StageTimes, par,
};

mod remote;
mod removal;
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

/// What the training round (flat) or rounds (one per group) did, for
/// the fit report.
pub(super) struct Fitted {
    pub(super) times: StageTimes,
    pub(super) bytes_per_client: usize,
    /// Every client the aggregate includes, in id order.
    pub(super) included: Vec<ClientId>,
    pub(super) dropped: Vec<(ClientId, SecAggStep)>,
    pub(super) messages: Option<Vec<(ClientId, Vec<u8>)>>,
}

/// What the rounds of a removal did, for the report.
pub(super) struct TreeRound {
    pub(super) times: StageTimes,
    pub(super) bytes_per_client: usize,
    pub(super) decode: DecodeKind,
    pub(super) update: ServerUpdate,
    /// Every client the root's aggregate includes, in id order.
    pub(super) included: Vec<ClientId>,
    pub(super) dropped: Vec<(ClientId, SecAggStep)>,
    /// The new unmasked sketch of each client that sent one.
    pub(super) encoded: BTreeMap<ClientId, AnySketch>,
    pub(super) messages: Option<Vec<(ClientId, Vec<u8>)>>,
    /// Who took part.
    pub(super) involved: crate::Involvement,
}

/// The clients' side of a removal, for [`Tree::remove`].
pub(super) struct TreeRequest<'a> {
    /// The clients after the request, in id order (unlearned copies for
    /// those that changed).
    pub(super) after: &'a [&'a Client],
    /// The clients whose message changed, removed ones included.
    pub(super) updated: &'a BTreeSet<ClientId>,
    /// The clients removed whole.
    pub(super) gone: &'a BTreeSet<ClientId>,
    /// The change of each updated, remaining client's histogram.
    pub(super) changes: &'a BTreeMap<ClientId, Vec<(BigUint, i128)>>,
    /// Each client's own unlearning time.
    pub(super) own: &'a BTreeMap<ClientId, Duration>,
    pub(super) client_k: usize,
    /// Whether the nodes' models update in parallel.
    pub(super) parallel: bool,
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

/// Adds one group's round times to the request's: groups run side by
/// side (the slowest client of any group), while the one server sums and
/// decodes every group in turn.
fn merge_times(into: &mut StageTimes, group: &StageTimes) {
    into.client_max = into.client_max.max(group.client_max);
    into.client_sum += group.client_sum;
    into.encode_mask_max = into.encode_mask_max.max(group.encode_mask_max);
    into.encode_mask_sum += group.encode_mask_sum;
    into.client_round_max = into.client_round_max.max(group.client_round_max);
    into.protocol_client_max = into.protocol_client_max.max(group.protocol_client_max);
    into.protocol_client_sum += group.protocol_client_sum;
    into.sum += group.sum;
    into.decode += group.decode;
    into.server += group.server;
    into.offline += group.offline;
}

impl TreeRound {
    /// Gives every client that sent a new sketch in the rounds its
    /// sketch (taken: the round keeps none).
    pub(super) fn keep_encoded(&mut self, clients: &mut [Client]) {
        for c in clients {
            if let Some(e) = self.encoded.remove(&c.id()) {
                c.keep_encoded(e);
            }
        }
    }
}

impl Tree {
    /// Trains the groups (one masked round each, Algorithm 1 inside every
    /// group), then every node's model on the sum of its children's
    /// counts; the root's (the federation's `root`) is flat MUFC's.
    /// `clients` are in id order, with their own training times `own`;
    /// each keeps the sketch it sent.
    pub(super) fn train(
        setup: &Setup,
        layout: Layout,
        clients: &mut [Client],
        own: &[Duration],
        root: &mut Server,
    ) -> MufcResult<(Self, Fitted)> {
        let capacity = setup.config.client_k().saturating_mul(clients.len());
        let mut times = StageTimes::default();
        let mut groups = Vec::with_capacity(layout.groups().len());
        let mut nodes = Vec::with_capacity(layout.nodes() - 1);
        let mut encoded = Vec::new();
        let mut dropped = Vec::new();
        let mut messages: Option<Vec<(ClientId, Vec<u8>)>> = None;
        let mut bytes_per_client = 0;
        for (g, ids) in layout.groups().iter().enumerate() {
            let mut slot = Some(group_aggregation(setup, g, ids, Some(capacity))?);
            let mut leaf = setup.server()?;
            let mut included = Vec::new();
            if !ids.is_empty() {
                let at = positions(clients, ids)?;
                let members: Vec<&Client> = at.iter().map(|&p| &clients[p]).collect();
                let own: Vec<Duration> = at.iter().map(|&p| own[p]).collect();
                // A group's first round: its model is fit on its sum.
                let x = exchange(&mut slot, &mut leaf, &members, Vec::new, None)?;
                let mut t = StageTimes::default();
                bytes_per_client = x.account(&mut t, &own, 0);
                merge_times(&mut times, &t);
                let mut kept = None;
                let done = x.commit(&mut slot, &mut kept);
                if let Some(m) = kept {
                    messages.get_or_insert_with(Vec::new).extend(m);
                }
                included = done.included.unwrap_or_default();
                dropped.extend(done.dropped);
                encoded.extend(at.into_iter().zip(done.encoded));
            }
            groups.push(Group {
                aggregation: slot.ok_or_else(crate::config::groups_need_scma)?,
                included,
            });
            nodes.push(leaf);
        }
        for (p, e) in encoded {
            if let Some(e) = e {
                clients[p].keep_encoded(e);
            }
        }
        let start = Instant::now();
        let counts = fit_inner(setup, &layout, &mut nodes)?;
        root.apply(root.plan(InputChange::Counts(Decoded::Full(counts)))?)?;
        times.server += start.elapsed();
        let tree = Self {
            layout,
            groups,
            nodes,
        };
        dropped.sort_by_key(|(c, _)| *c);
        let fitted = Fitted {
            times,
            bytes_per_client,
            included: tree.included(),
            dropped,
            messages,
        };
        Ok((tree, fitted))
    }

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

    /// The clients `clients` by group (the groups that have some, in
    /// order).
    pub(super) fn by_group(&self, clients: &[ClientId]) -> Vec<Vec<ClientId>> {
        self.by_group_with_size(clients)
            .into_iter()
            .map(|(_, part)| part)
            .collect()
    }

    /// [`Self::by_group`], each part with the number of members of its
    /// group.
    pub(super) fn by_group_with_size(&self, clients: &[ClientId]) -> Vec<(usize, Vec<ClientId>)> {
        let mut parts: BTreeMap<usize, Vec<ClientId>> = BTreeMap::new();
        for c in clients {
            if let Some(g) = self.layout.group_of(*c) {
                parts.entry(g).or_default().push(*c);
            }
        }
        let groups = self.layout.groups();
        parts
            .into_iter()
            .map(|(g, part)| (groups.get(g).map_or(part.len(), Vec::len), part))
            .collect()
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

/// What [`Tree::update_paths`] did.
struct Paths {
    /// The root's update ([`ServerUpdate::Unchanged`] when no group
    /// below it changed).
    update: ServerUpdate,
    /// The nonzero entries of the root's difference, when it ran.
    root_nonzeros: Option<usize>,
    /// The models updated, the root's included.
    nodes: usize,
}

impl Tree {
    /// Updates the models on the paths from the `affected` groups to the
    /// root: each inner node adds its affected children's differences
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
    ) -> MufcResult<Paths> {
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
        let nodes = plans.len() + usize::from(root_plan.is_some());
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
        let update = match updates.last() {
            Some(u) if root_nonzeros.is_some() => u.clone(),
            _ => ServerUpdate::Unchanged,
        };
        Ok(Paths {
            update,
            root_nonzeros,
            nodes,
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

/// The positions in `clients` (in id order) of the clients `ids`.
fn positions(clients: &[Client], ids: &[ClientId]) -> MufcResult<Vec<usize>> {
    ids.iter()
        .map(|id| {
            clients
                .binary_search_by_key(id, Client::id)
                .map_err(|_| MufcError::UnknownClient(*id))
        })
        .collect()
}
