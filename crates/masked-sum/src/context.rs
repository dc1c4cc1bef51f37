//! The session and round a message belongs to: a leaf module that every
//! other module can name (re-exported from
//! [`masking::pairwise`](crate::masking::pairwise)).

use serde::{Deserialize, Serialize};

/// A session identifier: 32 public bytes that every party agrees on
/// (for instance a hash of the session's configuration and participants).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SessionId(pub [u8; 32]);

/// The context a mask is bound to: a session and a round within it. Masks
/// of different contexts are unrelated, so a message replayed into another
/// round does not cancel.
///
/// # Example
///
/// ```
/// use masked_sum::masking::pairwise::{RoundContext, SessionId};
///
/// let ctx = RoundContext { session: SessionId([7; 32]), round: 3 };
/// assert_eq!(ctx.next().round, 4);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RoundContext {
    /// The session.
    pub session: SessionId,
    /// The round within the session.
    pub round: u64,
}

impl RoundContext {
    /// The same session's next round (saturating).
    #[must_use]
    pub fn next(&self) -> Self {
        Self {
            session: self.session,
            round: self.round.saturating_add(1),
        }
    }
}

/// A client's id. `u64::MAX` is reserved (a holder's Shamir evaluation
/// point is its id plus one).
pub type ClientId = u64;
