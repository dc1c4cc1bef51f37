//! A federation's state that its parties and drivers share: the setup
//! (the grid, the aggregation's parameters), the groups and the nodes'
//! models, and the book of requests (their checks, the policy's minimum,
//! what waits, the report's times). The server party and the stores keep
//! it; `Federation` and `mufc-net` drive the parties over it.

mod minimum;
mod pending;
mod requests;
pub(crate) mod setup;
mod times;
pub(crate) mod tree;
pub(crate) mod unsent;

pub(crate) use minimum::{check_remaining, withdrawal_after};
pub use pending::privacy_warning;
pub(crate) use pending::{still_added, still_pending};
pub(crate) use requests::{check_request, check_unsent};
pub(crate) use setup::Setup;
pub(crate) use times::{client_times, request_times};
pub(crate) use unsent::Unsent;

use crate::{ClientId, PendingAddition, PendingRequest, RemovalReport, Withdrawal};

/// What a federation keeps of its requests: how many were applied, the
/// reports kept, the pending removals and additions, what the aggregate
/// still holds of their clients, and the withdrawal.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestBook {
    pub(crate) applied: u64,
    pub(crate) history: Vec<RemovalReport>,
    pub(crate) pending: Vec<PendingRequest>,
    pub(crate) unsent: std::collections::BTreeMap<ClientId, Unsent>,
    pub(crate) withdrawn: Option<Withdrawal>,
    /// The additions whose rounds wait (issue 29).
    pub(crate) additions: Vec<PendingAddition>,
}
