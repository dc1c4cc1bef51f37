//! What an unlearning request did: [`UnlearnOutcome`] and
//! [`UnlearnReport`].

/// Which case of Algorithm 3 an unlearning request took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum UnlearnOutcome {
    /// No seed was removed: the seeds stay, only sizes and assignments
    /// changed (lines 2-3). Cost O(|R| + k).
    SeedsKept,
    /// Seed number `from` (0-based, in the order chosen) was the first
    /// removed: seeds `0..from` stay and seeding resumed from there on the
    /// remaining points (lines 4-14).
    Reseeded {
        /// The index of the first removed seed.
        from: usize,
    },
}

/// What an unlearning request did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UnlearnReport {
    /// Which case of Algorithm 3 happened.
    pub outcome: UnlearnOutcome,
    /// How many points were removed.
    pub removed: usize,
    /// The indices of the clusters whose seed or size changed, ascending.
    pub affected_clusters: Vec<usize>,
}

impl UnlearnReport {
    /// Whether seeding was resumed (the client's seeds changed).
    pub fn reseeded(&self) -> bool {
        matches!(self.outcome, UnlearnOutcome::Reseeded { .. })
    }
}
