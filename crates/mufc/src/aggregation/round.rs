//! What every part of a round shares: its inputs, number and secrets,
//! the timings it fills, and the masked vectors it records for tests.
//! The mask sources, the protocol run and the aggregation all read it,
//! and it reads none of them (only the client's message encoding).

use std::borrow::Cow;

use num_bigint::{BigInt, BigUint};
use syndrome_agg::{AnySketch, LinearSketch, ValidAnyParams};

use crate::client::message::{Encoded, sketch_of};
use crate::{ClientId, MufcResult};

/// One client's input to a round: its id and histogram, and the sketch
/// of its last message (which it updates rather than encoding afresh);
/// in a change round, the change of its histogram instead.
#[derive(Clone, Copy)]
pub(crate) struct Input<'a> {
    pub(crate) id: ClientId,
    pub(crate) histogram: &'a [(BigUint, u64)],
    pub(crate) last: Option<&'a Encoded>,
    /// A change round (see `Aggregation::change_round`): the change of the
    /// client's histogram since the last committed round, `(bin, change)`,
    /// empty for a client that did not change. Sent instead of the
    /// histogram; never kept as the client's last sketch.
    pub(crate) change: Option<&'a [(BigUint, i128)]>,
}

impl<'a> Input<'a> {
    /// The sketch the client sends under `params`: its histogram's
    /// ([`sketch_of`], from its last sketch), or in a change round the
    /// sketch of its change (signed counts: `params` are signed then),
    /// encoded afresh. The second value says whether the client keeps a
    /// new sketch as its last: never a change.
    ///
    /// # Errors
    ///
    /// A bin outside the key domain, or a count the parameters refuse.
    pub(crate) fn sketch(&self, params: &ValidAnyParams) -> MufcResult<(Cow<'a, AnySketch>, bool)> {
        match self.change {
            Some(change) => {
                let mut sketch = AnySketch::new(params);
                for (bin, c) in change {
                    sketch.insert(bin, &BigInt::from(*c))?;
                }
                Ok((Cow::Owned(sketch), false))
            }
            None => Ok((sketch_of(params, self.histogram, self.last)?, true)),
        }
    }
}

/// The change from histogram `old` to `new`, by bin (repeated bins add
/// up).
pub(crate) fn histogram_change(
    old: &[(BigUint, u64)],
    new: &[(BigUint, u64)],
) -> Vec<(BigUint, i128)> {
    let mut m: std::collections::BTreeMap<&BigUint, i128> = std::collections::BTreeMap::new();
    for (bin, c) in old {
        *m.entry(bin).or_insert(0) -= i128::from(*c);
    }
    for (bin, c) in new {
        *m.entry(bin).or_insert(0) += i128::from(*c);
    }
    m.into_iter()
        .filter(|(_, c)| *c != 0)
        .map(|(b, c)| (b.clone(), c))
        .collect()
}

/// What a client sent in the last committed round that included it: the
/// round's number and the histogram its message encoded (the base a
/// change round's change is taken against, across processes).
#[derive(Clone, Copy)]
pub(crate) struct Sent<'a> {
    pub(crate) round: u64,
    pub(crate) histogram: &'a [(BigUint, u64)],
}
