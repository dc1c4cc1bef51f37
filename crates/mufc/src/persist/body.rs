//! The body of a saved federation, the postcard part of the file: what
//! is stored ([`Repr`]); its fields, in order and with their types, are
//! the format.

use num_bigint::BigUint;
use seeding::{Dataset, PointId};
use serde::{Deserialize, Serialize};

use crate::state::unsent::Unsent;
use crate::{
    ClientId, FitReport, PendingAddition, PendingRequest, RemovalReport, ValidConfig, Withdrawal,
};

/// A federation's groups (version 7): the layout, and what each group's
/// aggregate holds. The nodes' models are not stored: each is rebuilt
/// from the counts below it, as the root's is from the stored counts.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct SavedTree {
    /// The most children of an inner node (`None`: every group under
    /// the root).
    pub(crate) fan_out: Option<usize>,
    /// The groups, in order.
    pub(crate) groups: Vec<SavedGroup>,
}

/// One group of a [`SavedTree`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct SavedGroup {
    /// Its clients now (those removed whole have left it).
    pub(crate) members: Vec<ClientId>,
    /// The rounds it started (its masks' round numbers never repeat).
    pub(crate) rounds: u64,
    /// The members its last round included.
    pub(crate) included: Vec<ClientId>,
    /// Its decoded counts: the sum of the included members' histograms
    /// (checked against them when the clients are there; a server's
    /// state across processes holds no client).
    pub(crate) counts: Vec<(BigUint, u64)>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct Repr {
    pub(crate) config: ValidConfig,
    pub(crate) dim: usize,
    pub(crate) clients: Vec<(ClientId, Dataset, Vec<PointId>)>,
    pub(crate) counts: Vec<(BigUint, u64)>,
    pub(crate) capacity: Option<usize>,
    pub(crate) rounds: u64,
    pub(crate) fit_report: FitReport,
    pub(crate) history: Vec<RemovalReport>,
    pub(crate) pending: Vec<PendingRequest>,
    /// What the aggregate still holds of the clients whose rounds wait
    /// (version 8).
    pub(crate) unsent: Vec<(ClientId, Unsent)>,
    pub(crate) tree: Option<SavedTree>,
    pub(crate) withdrawn: Option<Withdrawal>,
    /// The additions whose rounds wait (version 11).
    pub(crate) additions: Vec<PendingAddition>,
    /// The clients that left whole, in id order (version 12): an id
    /// names one client for good, so a join may not take theirs.
    pub(crate) left: Vec<ClientId>,
}
