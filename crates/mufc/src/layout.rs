//! Where each client sits in a federation with groups: the groups (the
//! leaves) and the nodes above them ([`Layout`]).

use std::collections::BTreeSet;

use crate::{ClientId, MufcError, MufcResult, Topology};

mod regroup;

pub(crate) use regroup::split_moving;

/// A node of a [`Layout`]: nodes `0..groups` are the groups (the leaves),
/// the others aggregate their children; the last one is the root.
///
/// # Example
///
/// ```
/// use mufc::{ClientId, Layout, NodeId};
///
/// let layout = Layout::from_groups(vec![vec![ClientId(0)], vec![ClientId(1)], vec![ClientId(2)]], Some(2))?;
/// assert_eq!(layout.path(NodeId(0)), vec![NodeId(0), NodeId(3), NodeId(5)]);
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub usize);

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "node {}", self.0)
    }
}

/// The groups of a federation and the tree above them
/// ([`Topology::Groups`], [`Topology::Tree`]).
///
/// The layout is fixed at training: removing a client whole leaves its
/// group smaller (an emptied group aggregates nothing), so that the tree
/// retrained without some points ([`Federation::with_layout`](crate::Federation::with_layout)
/// with [`Self::without`]) has the same shape.
///
/// # Example
///
/// ```
/// use mufc::{ClientId, Layout, NodeId, Topology};
///
/// let ids: Vec<ClientId> = (0..10).map(ClientId).collect();
/// // Groups of 3 to 5 clients, in id order, under one root.
/// let layout = Layout::new(&ids, Topology::Groups { size: 3 });
/// assert_eq!(layout.groups().len(), 3);
/// assert_eq!(layout.groups()[2], vec![ClientId(6), ClientId(7), ClientId(8), ClientId(9)]);
/// assert_eq!(layout.group_of(ClientId(4)), Some(1));
/// assert_eq!(layout.height(), 1);
/// // A binary tree over 4 groups: 4 leaves, 2 inner nodes, the root.
/// let tree = Layout::new(&ids[..8], Topology::Tree { group_size: 2, fan_out: 2 });
/// assert_eq!((tree.groups().len(), tree.nodes(), tree.height()), (4, 7, 2));
/// assert_eq!(tree.root(), NodeId(6));
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "LayoutSpec", try_from = "LayoutSpec")]
pub struct Layout {
    groups: Vec<Vec<ClientId>>,
    /// The parent of every node but the root (the last node).
    parents: Vec<usize>,
    fan_out: Option<usize>,
}

/// What a layout is written as: its groups and fan-out (the nodes above
/// follow from them). Read back through [`Layout::from_groups`], so that
/// bytes from outside give a checked layout or an error.
#[derive(serde::Serialize, serde::Deserialize)]
struct LayoutSpec {
    groups: Vec<Vec<ClientId>>,
    fan_out: Option<usize>,
}

impl From<Layout> for LayoutSpec {
    fn from(l: Layout) -> Self {
        Self {
            groups: l.groups,
            fan_out: l.fan_out,
        }
    }
}

impl TryFrom<LayoutSpec> for Layout {
    type Error = MufcError;

    fn try_from(s: LayoutSpec) -> MufcResult<Self> {
        Self::from_groups(s.groups, s.fan_out)
    }
}

impl Layout {
    /// The layout `topology` gives the clients `ids` (sorted, distinct):
    /// `max(1, L / size)` groups of consecutive ids, the first ones of
    /// `floor(L / groups)` clients and the last `L mod groups` one more;
    /// then inner nodes of at most `fan_out` consecutive nodes, level by
    /// level, up to one root (with [`Topology::Groups`]: the root alone,
    /// above every group). [`Topology::Flat`] gives one group of every
    /// client.
    pub fn new(ids: &[ClientId], topology: Topology) -> Self {
        let size = topology.group_size().unwrap_or(ids.len()).max(1);
        let count = (ids.len() / size).max(1);
        let (base, extra) = (ids.len() / count, ids.len() % count);
        let mut groups = Vec::with_capacity(count);
        let mut at = 0;
        for g in 0..count {
            // The last `extra` groups take one client more.
            let len = base + usize::from(g >= count - extra);
            groups.push(ids[at..at + len].to_vec());
            at += len;
        }
        Self::shaped(groups, topology.fan_out())
    }

    /// A layout of the given groups (each client in exactly one; a group
    /// may be empty), with inner nodes of at most `fan_out` children, or
    /// one root above every group when `None`.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidLayout`]: no group, a client in two groups, or
    /// a fan-out below 2.
    pub fn from_groups(groups: Vec<Vec<ClientId>>, fan_out: Option<usize>) -> MufcResult<Self> {
        if groups.is_empty() {
            return Err(MufcError::InvalidLayout("no group".into()));
        }
        if fan_out.is_some_and(|f| f < 2) {
            return Err(MufcError::InvalidLayout("a fan-out below 2".into()));
        }
        let mut seen = BTreeSet::new();
        let mut groups = groups;
        for g in &mut groups {
            g.sort_unstable();
            for c in g.iter() {
                if !seen.insert(*c) {
                    return Err(MufcError::InvalidLayout(format!(
                        "client {c} is in two groups"
                    )));
                }
            }
        }
        Ok(Self::shaped(groups, fan_out))
    }

    fn shaped(groups: Vec<Vec<ClientId>>, fan_out: Option<usize>) -> Self {
        let mut parents: Vec<usize> = Vec::new();
        let mut level: Vec<usize> = (0..groups.len()).collect();
        let mut next_id = groups.len();
        // Always one root above the groups, even above a single group: the
        // root's model is the federation's, a group's is regional.
        loop {
            let width = fan_out.unwrap_or(level.len()).max(2);
            let mut next = Vec::new();
            for chunk in level.chunks(width) {
                for &child in chunk {
                    if parents.len() <= child {
                        parents.resize(child + 1, usize::MAX);
                    }
                    parents[child] = next_id;
                }
                next.push(next_id);
                next_id += 1;
            }
            level = next;
            if level.len() == 1 {
                break;
            }
        }
        Self {
            groups,
            parents,
            fan_out,
        }
    }

    /// The groups, each in id order.
    pub fn groups(&self) -> &[Vec<ClientId>] {
        &self.groups
    }

    /// The fan-out of the inner nodes (`None`: one root above every
    /// group).
    pub fn fan_out(&self) -> Option<usize> {
        self.fan_out
    }

    /// The number of nodes, groups included.
    pub fn nodes(&self) -> usize {
        self.parents.len() + 1
    }

    /// The root.
    pub fn root(&self) -> NodeId {
        NodeId(self.parents.len())
    }

    /// The parent of `node` (`None` for the root or a node out of range).
    pub fn parent(&self, node: NodeId) -> Option<NodeId> {
        self.parents.get(node.0).copied().map(NodeId)
    }

    /// The children of `node`, in order.
    pub fn children(&self, node: NodeId) -> Vec<NodeId> {
        (0..self.parents.len())
            .filter(|&c| self.parents[c] == node.0)
            .map(NodeId)
            .collect()
    }

    /// The nodes from `node` up to the root, both included.
    pub fn path(&self, node: NodeId) -> Vec<NodeId> {
        let mut path = vec![node];
        let mut at = node;
        while let Some(p) = self.parent(at) {
            path.push(p);
            at = p;
        }
        path
    }

    /// The edges from a group to the root.
    pub fn height(&self) -> usize {
        self.path(NodeId(0)).len() - 1
    }

    /// The group of `client`, if it is in one.
    pub fn group_of(&self, client: ClientId) -> Option<usize> {
        self.groups
            .iter()
            .position(|g| g.binary_search(&client).is_ok())
    }

    /// Every client of the layout, in id order.
    pub fn clients(&self) -> Vec<ClientId> {
        let mut all: Vec<ClientId> = self.groups.iter().flatten().copied().collect();
        all.sort_unstable();
        all
    }

    /// The same layout without the clients `gone` (their groups shrink;
    /// the shape stays).
    pub fn without(&self, gone: &[ClientId]) -> Self {
        let gone: BTreeSet<&ClientId> = gone.iter().collect();
        Self {
            groups: self
                .groups
                .iter()
                .map(|g| g.iter().filter(|c| !gone.contains(c)).copied().collect())
                .collect(),
            parents: self.parents.clone(),
            fan_out: self.fan_out,
        }
    }

    /// The inner nodes whose subtree holds a group of `groups`, bottom-up
    /// (every child before its parent), the root last.
    pub(crate) fn inner_above(&self, groups: &BTreeSet<usize>) -> Vec<NodeId> {
        let mut set = BTreeSet::new();
        for &g in groups {
            for n in self.path(NodeId(g)).into_iter().skip(1) {
                set.insert(n);
            }
        }
        // Parents have larger indices than their children.
        set.into_iter().collect()
    }

    /// Refuses a layout in which a group would hold fewer than
    /// `min_clients` clients, but some, once the clients `gone` left.
    pub(crate) fn check_sizes(
        &self,
        min_clients: usize,
        gone: &BTreeSet<ClientId>,
    ) -> MufcResult<()> {
        self.check_sizes_but(min_clients, gone, |_| false)
    }

    /// [`Self::check_sizes`], but for the groups `excused` accepts.
    pub(crate) fn check_sizes_but(
        &self,
        min_clients: usize,
        gone: &BTreeSet<ClientId>,
        excused: impl Fn(usize) -> bool,
    ) -> MufcResult<()> {
        for (g, ids) in self.groups.iter().enumerate() {
            let left = ids.iter().filter(|c| !gone.contains(c)).count();
            if left > 0 && left < min_clients && !excused(g) {
                return Err(MufcError::GroupTooSmall {
                    group: g,
                    clients: left,
                    min_clients,
                });
            }
        }
        Ok(())
    }

    /// Checks that the layout names exactly `ids` (sorted).
    pub(crate) fn check_clients(&self, ids: &[ClientId]) -> MufcResult<()> {
        let mine = self.clients();
        if mine != ids {
            let missing = ids.iter().find(|c| mine.binary_search(c).is_err());
            let extra = mine.iter().find(|c| ids.binary_search(c).is_err());
            return Err(MufcError::InvalidLayout(match (missing, extra) {
                (Some(c), _) => format!("client {c} is in no group"),
                (_, Some(c)) => format!("client {c} of a group has no data"),
                _ => "the clients differ".into(),
            }));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: u64) -> Vec<ClientId> {
        (0..n).map(ClientId).collect()
    }

    #[test]
    fn groups_cover_every_client_once_with_sizes_between_b_and_2b() {
        for l in 1..60usize {
            for b in 1..8usize {
                let layout = Layout::new(&ids(l as u64), Topology::Groups { size: b });
                assert_eq!(layout.clients(), ids(l as u64));
                for g in layout.groups() {
                    if l >= b {
                        assert!(g.len() >= b && g.len() < 2 * b, "{l} {b}: {}", g.len());
                    } else {
                        assert_eq!(g.len(), l);
                    }
                }
                assert_eq!(layout.height(), 1);
            }
        }
    }

    #[test]
    fn a_tree_has_parents_above_children_and_bounded_fan_out() {
        for groups in 1..40usize {
            for f in 2..5usize {
                let l = Layout::new(
                    &ids(groups as u64 * 3),
                    Topology::Tree {
                        group_size: 3,
                        fan_out: f,
                    },
                );
                assert_eq!(l.groups().len(), groups);
                for n in 0..l.nodes() - 1 {
                    let p = l.parent(NodeId(n)).unwrap();
                    assert!(p.0 > n);
                    assert!(l.children(p).len() <= f);
                }
                assert_eq!(l.parent(l.root()), None);
                // ceil(log_f(groups)) levels above the groups, at least one.
                let (mut width, mut height) = (groups, 0);
                while width > 1 {
                    width = width.div_ceil(f);
                    height += 1;
                }
                assert_eq!(l.height(), height.max(1), "{groups} groups, fan-out {f}");
                let all: BTreeSet<usize> = (0..groups).collect();
                assert_eq!(l.inner_above(&all).last(), Some(&l.root()));
            }
        }
    }

    #[test]
    fn explicit_groups_are_checked() {
        assert!(Layout::from_groups(vec![], None).is_err());
        assert!(Layout::from_groups(vec![vec![ClientId(1)], vec![ClientId(1)]], None).is_err());
        assert!(Layout::from_groups(vec![vec![ClientId(1)]], Some(1)).is_err());
        let l = Layout::from_groups(vec![vec![ClientId(3), ClientId(1)], vec![]], None).unwrap();
        assert_eq!(l.groups()[0], vec![ClientId(1), ClientId(3)]);
        assert!(l.check_clients(&[ClientId(1), ClientId(3)]).is_ok());
        assert!(l.check_clients(&[ClientId(1)]).is_err());
        assert!(
            l.check_clients(&[ClientId(1), ClientId(2), ClientId(3)])
                .is_err()
        );
        assert_eq!(l.without(&[ClientId(1)]).groups()[0], vec![ClientId(3)]);
    }
}
