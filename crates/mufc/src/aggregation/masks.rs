//! Where the masks of a round come from: one protocol of the parties
//! each (`halves.rs`), run in process by `relay.rs` and across processes
//! by `mufc-net`. The settings each needs live here.

use super::framed::DealerKeys;
use super::secure::SecAggSettings;

/// Where the masks of a round come from.
#[derive(Clone, Debug)]
pub(crate) enum MaskSource {
    /// The dealer as a party (`framed/dealer.rs`), with the keys the
    /// dealer the federation plays in process shares with its clients.
    Dealer(DealerKeys),
    /// Pairwise masks: a key directory the parties exchange
    /// (`framed/`).
    Pairwise,
    /// The dropout-tolerant protocol, run afresh every round.
    SecAgg(SecAggSettings),
}
