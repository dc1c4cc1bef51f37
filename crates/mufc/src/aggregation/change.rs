//! Change rounds: the aggregation round of a removal that carries each
//! client's *change* instead of its whole histogram.
//!
//! A removal changes few bins: a client that loses points which were not
//! seeds changes the counts of at most `k` bins, one that reseeds at most
//! `2k` (its old bins and its new ones). So the change of the aggregate,
//! summed over the `m` clients whose histograms changed, has at most
//! `t' = 2 k m` nonzero entries, and a sketch of capacity `t'` carries it:
//! `2t' + r` syndromes instead of the `2t + r`, `t = k L`, of a whole
//! histogram. Every current client sends the sketch of its change under
//! those small signed parameters (an empty change for a client that did
//! not change), masked with fresh masks of the round as in any round; the
//! server sums them and decodes the sum of the changes directly.
//!
//! What the server learns is what a whole round teaches it: the difference
//! of two aggregates is this sum of changes (the server of a whole round
//! decodes exactly that difference, `server/decode.rs`), and `t'` is
//! computed from `m`, which the privacy policy's count of updating clients
//! already tells. The masks hide each client's change as they hide its
//! histogram.
//!
//! Exactness: the true sum of changes has at most `t'` nonzero entries
//! (honest clients), a decoded one too, and both have the same `2t' + r`
//! syndromes, so they are equal; the decoded change is also checked to
//! lead to counts within the capacity and the count bound, as a decoded
//! difference is. Should it fail to decode or be refused, the request
//! runs a whole round instead. Change rounds need every client of the last
//! round to send (dealt or pairwise masks): with SecAgg a client may drop
//! and its change would be lost, so SecAgg rounds are always whole.
//!
//! The round ([`Aggregation::open_change_remote`]) names
//! its base, the committed round its changes are taken against; each
//! client takes its change since the histogram it sent in that round, and
//! refuses a round against any other (docs/threat-model.md §2.2).

use syndrome_agg::{AnyParams, CountPolicy, SketchParams};

use super::Aggregation;
use super::halves::{RoundSpec, ServerHalf};
use super::masks::MaskSource;
use super::secrets::RoundSecrets;
use crate::{ClientId, MufcResult};

impl Aggregation {
    /// Opens a change round across processes for `clients` (in id order;
    /// the caller checked that they are exactly the clients of the last
    /// committed round) whose changes touch at most `bound` bins in all:
    /// `None`, and no round number consumed, when a change round does not
    /// apply (SecAgg masking, a scheme that decodes only whole sums, no
    /// committed aggregate yet, a bound not below the capacity), and also
    /// when a round failed since the last commit: a client of the ring may then hold another
    /// base, and would refuse). The caller runs a whole round then.
    ///
    /// # Errors
    ///
    /// As [`Self::open_remote`].
    pub(crate) fn open_change_remote(
        &mut self,
        clients: &[ClientId],
        bound: usize,
    ) -> MufcResult<Option<(RoundSpec, Box<dyn ServerHalf>)>> {
        let right_after_commit = self
            .committed
            .is_some_and(|c| c.checked_add(1) == Some(self.round));
        let applies = !matches!(self.masking, MaskSource::SecAgg(_))
            && self.scheme.delta.is_some()
            && (self.scheme.last.is_some() || self.scheme.restored.is_some())
            && right_after_commit
            && bound < self.info().capacity;
        if !applies {
            return Ok(None);
        }
        let small = self.small_at(bound.max(1))?;
        let number = self.round;
        self.round = number.saturating_add(1);
        let secrets = RoundSecrets::new(self.secrets, number)?;
        let small = &self.scheme.small[small].1;
        self.open_round(number, &secrets, clients, Some(small))
            .map(Some)
    }

    /// Where the signed parameters of capacity `t` in the scheme and
    /// field of the aggregation's own are kept (`scheme.small`), built on
    /// the first call: every party of a change round looks them up.
    pub(super) fn small_at(&mut self, t: usize) -> MufcResult<usize> {
        if let Some(at) = self.scheme.small.iter().position(|(c, _)| *c == t) {
            return Ok(at);
        }
        let full = self.scheme.params.sketch_params();
        let counts = CountPolicy::signed(self.max_points);
        let sketch = SketchParams::new(t, full.key_domain().clone())
            .with_extra(full.extra())
            .with_counts(counts);
        let p = AnyParams::new(self.scheme.params.scheme().clone(), sketch)
            .with_field_bound(self.scheme.bound.clone())
            .validate()?;
        // One more at a time: a federation sees few capacities, and a
        // block for several was the largest allocation of a client's round.
        self.scheme.small.reserve_exact(1);
        self.scheme.small.push((t, p));
        Ok(self.scheme.small.len() - 1)
    }
}
