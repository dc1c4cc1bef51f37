//! Where the masks of a round come from: one protocol of the parties
//! each (`halves.rs`), run by the parties' drivers (`remote`, `mufc-net`).
//! The settings each needs live here.

use super::secure::SecAggSettings;

/// Where the masks of a round come from.
#[derive(Clone, Debug)]
pub(crate) enum MaskSource {
    /// The dealer as a party (`framed/dealer.rs`,
    /// [`RemoteDealer`](crate::remote::RemoteDealer)).
    Dealer,
    /// Pairwise masks: a key directory the parties exchange
    /// (`framed/`).
    Pairwise,
    /// The dropout-tolerant protocol, run afresh every round.
    SecAgg(SecAggSettings),
}
