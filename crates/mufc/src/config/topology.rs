//! How the clients are organised: one flat aggregate, groups, or a tree of
//! groups ([`Topology`]).

/// How the clients of a federation are organised for aggregation.
///
/// - [`Topology::Flat`] (the default, the paper's): one masked round over
///   every client; the server sees only the sum of all L histograms, and
///   every removal re-masks all L sketches.
/// - [`Topology::Groups`] (secure aggregation with dynamic users): the
///   clients are split into groups of `size` to `2 size - 1` clients in id
///   order; masks cancel inside a group, and the server decodes each
///   group's sum. A removal runs a masked round in the affected groups
///   only.
/// - [`Topology::Tree`] (TreeAvg): the groups are the leaves of a tree of
///   fan-out `fan_out`, of any height; every node's model is kept, and a
///   removal updates only the nodes on the paths from the affected groups
///   to the root.
///
/// Every client sends its sketch under the *root's* parameters (capacity
/// `client_k * L`), so group sums add up to the flat sum: the root's model
/// is flat MUFC's, bit for bit (docs/architecture.md, "Groups and trees").
/// What the server learns is more than in the flat topology: each group's
/// sum, not only the total (docs/threat-model.md §11), so groups must
/// have at least [`FederationConfig::min_clients`](crate::FederationConfig::min_clients)
/// clients.
///
/// # Example
///
/// ```
/// use mufc::{FederationConfig, Topology};
///
/// let c = FederationConfig::new(3).topology(Topology::Tree { group_size: 4, fan_out: 2 }).validate()?;
/// assert_eq!(c.topology(), Topology::Tree { group_size: 4, fan_out: 2 });
/// // A group smaller than the minimum aggregate is refused.
/// assert!(FederationConfig::new(3).topology(Topology::Groups { size: 2 }).validate().is_err());
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Topology {
    /// One aggregate of every client.
    #[default]
    Flat,
    /// Groups of `size` to `2 size - 1` clients under one root.
    Groups {
        /// The fewest clients of a group (the last groups take the rest).
        size: usize,
    },
    /// Groups of `group_size` clients as the leaves of a tree whose nodes
    /// have at most `fan_out` children.
    Tree {
        /// The fewest clients of a group.
        group_size: usize,
        /// The most children of an inner node (at least 2).
        fan_out: usize,
    },
}

impl Topology {
    /// The fewest clients of a group (`None` when flat).
    pub fn group_size(&self) -> Option<usize> {
        match self {
            Self::Flat => None,
            Self::Groups { size } => Some(*size),
            Self::Tree { group_size, .. } => Some(*group_size),
        }
    }

    /// The most children of an inner node (`None`: flat, or groups, whose
    /// root has every group as a child).
    pub fn fan_out(&self) -> Option<usize> {
        match self {
            Self::Tree { fan_out, .. } => Some(*fan_out),
            _ => None,
        }
    }

    /// The name used by the command line: `flat`, `groups` or `tree`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Flat => "flat",
            Self::Groups { .. } => "groups",
            Self::Tree { .. } => "tree",
        }
    }
}
