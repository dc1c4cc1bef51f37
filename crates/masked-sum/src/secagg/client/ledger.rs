//! The client's record of the rounds it has masked in
//! (docs/threat-model.md R3): kept apart from the state machine because it
//! outlives every [`Client`](super::Client), one ledger per client across
//! rounds.

use std::collections::BTreeMap;

use crate::context::RoundContext;
use crate::error::{ProtocolError, SumError, SumResult};

/// The rounds a client has masked an input in, per session: a client
/// refuses to mask twice in one round, or in a round not after the last
/// (docs/threat-model.md R3: two masked inputs under the same masks would reveal their
/// difference).
///
/// # Example
///
/// ```
/// use masked_sum::masking::pairwise::{RoundContext, SessionId};
/// use masked_sum::secagg::client::RoundLedger;
///
/// let mut ledger = RoundLedger::default();
/// let ctx = RoundContext { session: SessionId([0; 32]), round: 4 };
/// assert!(ledger.claim(&ctx).is_ok());
/// assert!(ledger.claim(&ctx).is_err()); // the same round again
/// assert!(ledger.claim(&ctx.next()).is_ok());
/// ```
#[derive(Clone, Debug, Default)]
pub struct RoundLedger {
    last: BTreeMap<[u8; 32], u64>,
}

impl RoundLedger {
    /// Records that the client takes part in `ctx`.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::MessageRejected`] if the client already took part in
    /// this round of this session or a later one.
    pub fn claim(&mut self, ctx: &RoundContext) -> SumResult<()> {
        if let Some(last) = self.last.get(&ctx.session.0)
            && ctx.round <= *last
        {
            return Err(SumError::Protocol(ProtocolError::MessageRejected {
                reason: format!(
                    "round {} is not after round {last}, which this client already masked in",
                    ctx.round
                ),
            }));
        }
        self.last.insert(ctx.session.0, ctx.round);
        Ok(())
    }
}
