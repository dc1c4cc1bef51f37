//! Neighbourhoods: who masks with whom and who holds whose shares.
//!
//! Bonawitz et al. (2017) use the complete graph: every client masks with,
//! and shares its secrets to, every other. SecAgg+ (Bell et al. 2020)
//! replaces it by a Harary graph `H(n, k)` on a random ring: the clients
//! are put on a circle in a random order and each is joined to the `k / 2`
//! nearest on either side, so a client pays for `k = O(log n)` peers
//! instead of `n - 1`.
//!
//! A client's *holders* are its neighbours and itself: it keeps a share of
//! its own secrets, so that when it is alive at the end its own self-mask
//! share counts toward the threshold (as in Bonawitz et al., where shares
//! go to every client of `U_1`, the sender included).

use std::collections::BTreeMap;

use rand::Rng;
use rand::seq::SliceRandom;

use crate::context::ClientId;
use crate::error::{ProtocolError, SumResult, invalid};

/// The shape of a neighbourhood graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum GraphKind {
    /// Every client is every other's neighbour (Bonawitz et al. 2017).
    Complete,
    /// The Harary graph of even degree `degree` on a ring (SecAgg+).
    Harary {
        /// The number of neighbours of each client (even, at least 2).
        degree: usize,
    },
}

/// A neighbourhood graph over a fixed set of client ids.
///
/// # Example
///
/// ```
/// use masked_sum::secagg::graph::Neighbourhoods;
///
/// let g = Neighbourhoods::harary_with_ring((1..=10).collect(), 4)?;
/// assert_eq!(g.neighbours(1)?, vec![2, 3, 9, 10]);
/// assert_eq!(g.holders(1)?.len(), 5); // the neighbours and client 1 itself
/// assert!(g.are_neighbours(10, 2));
/// assert!(!g.are_neighbours(1, 5));
/// # Ok::<(), masked_sum::SumError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbourhoods {
    kind: GraphKind,
    /// The ring order (for the complete graph, sorted ids).
    ring: Vec<ClientId>,
    /// Each client's position on the ring.
    position: BTreeMap<ClientId, usize>,
}

impl Neighbourhoods {
    fn build(kind: GraphKind, ring: Vec<ClientId>) -> SumResult<Self> {
        if ring.is_empty() {
            return Err(invalid("a neighbourhood graph needs at least one client"));
        }
        let mut position = BTreeMap::new();
        for (i, id) in ring.iter().enumerate() {
            if *id == ClientId::MAX {
                // Shares are evaluated at id + 1, which must not wrap.
                return Err(invalid("client id u64::MAX is reserved"));
            }
            if position.insert(*id, i).is_some() {
                return Err(invalid(format!("client {id} listed twice")));
            }
        }
        Ok(Self {
            kind,
            ring,
            position,
        })
    }

    /// The complete graph over `clients`.
    ///
    /// # Errors
    ///
    /// [`SumError::InvalidParams`](crate::SumError::InvalidParams)
    /// for no client, a repeated id, or the reserved id `u64::MAX`.
    pub fn complete(clients: impl IntoIterator<Item = ClientId>) -> SumResult<Self> {
        let mut ring: Vec<ClientId> = clients.into_iter().collect();
        ring.sort_unstable();
        Self::build(GraphKind::Complete, ring)
    }

    /// The Harary graph of even `degree` over `clients` in a uniformly
    /// random ring order (SecAgg+). A degree of `n - 1` or more is the
    /// complete graph.
    ///
    /// # Errors
    ///
    /// As [`harary_with_ring`](Self::harary_with_ring).
    pub fn harary<R: Rng + ?Sized>(
        clients: impl IntoIterator<Item = ClientId>,
        degree: usize,
        rng: &mut R,
    ) -> SumResult<Self> {
        let mut ring: Vec<ClientId> = clients.into_iter().collect();
        ring.sort_unstable();
        ring.shuffle(rng);
        Self::harary_with_ring(ring, degree)
    }

    /// The Harary graph of even `degree` over the ring order `ring`.
    ///
    /// # Errors
    ///
    /// [`SumError::InvalidParams`](crate::SumError::InvalidParams)
    /// for an odd or zero degree, and as [`complete`](Self::complete).
    pub fn harary_with_ring(ring: Vec<ClientId>, degree: usize) -> SumResult<Self> {
        if degree == 0 || !degree.is_multiple_of(2) {
            return Err(invalid(format!(
                "Harary degree {degree} must be even and positive"
            )));
        }
        if degree + 1 >= ring.len() {
            let mut sorted = ring;
            sorted.sort_unstable();
            return Self::build(GraphKind::Complete, sorted);
        }
        Self::build(GraphKind::Harary { degree }, ring)
    }

    /// The graph's shape (a Harary graph as large as the complete graph
    /// reports [`GraphKind::Complete`]).
    pub fn kind(&self) -> GraphKind {
        self.kind
    }

    /// The number of clients.
    pub fn len(&self) -> usize {
        self.ring.len()
    }

    /// Whether there is no client (never: construction refuses it).
    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }

    /// The clients, in ring order.
    pub fn ring(&self) -> &[ClientId] {
        &self.ring
    }

    /// Whether `id` is a client of the graph.
    pub fn contains(&self, id: ClientId) -> bool {
        self.position.contains_key(&id)
    }

    /// The number of neighbours of each client (`n - 1` for the complete
    /// graph).
    pub fn degree(&self) -> usize {
        match self.kind {
            GraphKind::Complete => self.ring.len() - 1,
            GraphKind::Harary { degree } => degree,
        }
    }

    /// The number of holders of each client's shares: its neighbours and
    /// itself.
    pub fn holders_per_client(&self) -> usize {
        self.degree() + 1
    }

    /// Whether `a` and `b` are distinct neighbours.
    pub fn are_neighbours(&self, a: ClientId, b: ClientId) -> bool {
        let (Some(&i), Some(&j)) = (self.position.get(&a), self.position.get(&b)) else {
            return false;
        };
        if i == j {
            return false;
        }
        match self.kind {
            GraphKind::Complete => true,
            GraphKind::Harary { degree } => {
                let n = self.ring.len();
                let d = i.abs_diff(j);
                d.min(n - d) <= degree / 2
            }
        }
    }

    /// The neighbours of `id` (not `id` itself), sorted.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::InvalidPeers`] for
    /// an id that is not a client of the graph.
    pub fn neighbours(&self, id: ClientId) -> SumResult<Vec<ClientId>> {
        let Some(&i) = self.position.get(&id) else {
            return Err(crate::error::SumError::Protocol(
                ProtocolError::InvalidPeers {
                    reason: "not a client of this session",
                },
            ));
        };
        let mut out: Vec<ClientId> = match self.kind {
            GraphKind::Complete => self.ring.iter().copied().filter(|v| *v != id).collect(),
            GraphKind::Harary { degree } => {
                let n = self.ring.len();
                (1..=degree / 2)
                    .flat_map(|d| [self.ring[(i + d) % n], self.ring[(i + n - d) % n]])
                    .collect()
            }
        };
        out.sort_unstable();
        Ok(out)
    }

    /// The holders of `id`'s shares: its neighbours and itself, sorted.
    ///
    /// # Errors
    ///
    /// As [`neighbours`](Self::neighbours).
    pub fn holders(&self, id: ClientId) -> SumResult<Vec<ClientId>> {
        let mut out = self.neighbours(id)?;
        let at = out.partition_point(|v| *v < id);
        out.insert(at, id);
        Ok(out)
    }
}
