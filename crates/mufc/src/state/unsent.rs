//! What the aggregate still holds of a client whose message waits
//! ([`Unsent`]): a leaf module, so that saving a federation needs nothing
//! else of it.

use num_bigint::BigUint;

/// What the server's aggregate still holds of a client whose points a
/// request erased while the round that tells the aggregate waits (the
/// privacy policy deferred it): the client's own state is already the
/// one without the points, only its message is not sent yet.
///
/// Keeping the histogram of the last message is no copy of the erased
/// data beyond what the aggregate itself holds: it is the client's share
/// of the server's decoded counts (bins and counts, never coordinates),
/// which the next round replaces.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Unsent {
    /// The histogram of the client's last message, as the aggregate
    /// holds it.
    pub(crate) sent: Vec<(BigUint, u64)>,
    /// The points erased since that message.
    pub(crate) points: u64,
    /// Whether the client left whole.
    pub(crate) left: bool,
    /// Whether the client reseeded since (Algorithm 3).
    pub(crate) reseeded: bool,
}
