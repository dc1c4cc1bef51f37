//! The server's side of an aggregation round: it parses the clients'
//! frames, sums the masked sketches (the masks cancel) and decodes the
//! sum, or its difference against the last round's sum.
//!
//! After the first round the server decodes the *difference*: a sparse
//! signed vector with one entry per changed count, which the decoders
//! handle in time proportional to its size. A decoded difference is
//! accepted only if the counts it leads to are within the capacity and
//! the count bound; then they are the aggregate, certainly (both they and
//! the true aggregate have at most `t` nonzero bins and the same `2t + r`
//! syndromes, and two such vectors are equal). Otherwise, or when the
//! difference exceeds the capacity (a batch that reseeds many clients,
//! clients that dropped or came back), the whole sum is decoded.

use std::collections::{BTreeMap, BTreeSet};

use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;
use syndrome_agg::{AnySketch, DecodeError, LinearSketch, SketchError, ValidAnyParams};

use crate::MufcResult;

/// What the server decoded.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Decoded {
    /// The change of the aggregate since the last round: `(bin, change)`.
    Delta(Vec<(BigUint, i128)>),
    /// The whole aggregate.
    Full(Vec<(BigUint, u64)>),
}

impl Decoded {
    /// The total of the counts it leads to from `last`.
    pub(crate) fn total_after(&self, last: &BTreeMap<BigUint, u64>) -> i128 {
        match self {
            Self::Full(counts) => counts.iter().map(|(_, c)| i128::from(*c)).sum(),
            Self::Delta(delta) => {
                let before: i128 = last.values().map(|c| i128::from(*c)).sum();
                before + delta.iter().map(|(_, d)| *d).sum::<i128>()
            }
        }
    }
}

/// What a decoded difference must lead to: counts within the capacity and
/// the bound (see the module docs).
pub(crate) struct DeltaCheck<'a> {
    pub(crate) last: &'a BTreeMap<BigUint, u64>,
    pub(crate) capacity: usize,
    pub(crate) max_points: u64,
}

impl DeltaCheck<'_> {
    /// Whether `last + delta` has at most `capacity` nonzero counts, each
    /// in `0..=max_points`. A bin named twice is refused (the server
    /// applies entries one by one).
    pub(crate) fn accepts(&self, delta: &[(BigUint, i128)]) -> bool {
        let mut nonzero = self.last.values().filter(|c| **c > 0).count();
        let mut seen = BTreeSet::new();
        for (bin, change) in delta {
            if !seen.insert(bin) {
                return false;
            }
            let old = self.last.get(bin).copied().unwrap_or(0);
            let new = i128::from(old) + change;
            if new < 0 || new > i128::from(self.max_points) {
                return false;
            }
            match (old == 0, new == 0) {
                (true, false) => nonzero += 1,
                (false, true) => nonzero = nonzero.saturating_sub(1),
                _ => {}
            }
        }
        nonzero <= self.capacity
    }
}

/// The last round's sum and the signed parameters its differences decode
/// under; `None` for a scheme that always decodes the whole sum.
pub(crate) struct Previous<'a> {
    pub(crate) last: &'a AnySketch,
    pub(crate) delta: &'a ValidAnyParams,
}

/// Decodes `sum`: its difference against `previous` if that decodes to
/// counts `check` accepts, else the whole sum.
///
/// # Errors
///
/// The whole sum does not decode, or a count does not fit in 64 bits.
pub(crate) fn decode(
    sum: &AnySketch,
    previous: Option<Previous<'_>>,
    check: &DeltaCheck<'_>,
) -> MufcResult<Decoded> {
    if let Some(p) = previous {
        let mut diff = sum.clone();
        diff.subtract(p.last)?;
        if diff.is_zero() {
            return Ok(Decoded::Delta(Vec::new()));
        }
        let diff = diff.with_params(p.delta)?;
        // Over capacity the difference is refused, or leads to counts the
        // check rejects; the whole sum is always within capacity.
        if let Some(delta) = decode_change(&diff, check) {
            return Ok(Decoded::Delta(delta));
        }
    }
    Ok(Decoded::Full(
        sum.decode()?
            .into_entries()
            .into_iter()
            .map(|(k, c)| Ok((k, count_u64(&c)?)))
            .collect::<MufcResult<_>>()?,
    ))
}

/// A sketch of signed changes (the difference of two sums, or the sum of
/// a change round's messages) decoded to `(bin, change)` entries, if it
/// decodes and the counts it leads to pass `check`.
pub(crate) fn decode_change(
    diff: &AnySketch,
    check: &DeltaCheck<'_>,
) -> Option<Vec<(BigUint, i128)>> {
    let entries = diff.decode().ok()?;
    let delta = entries
        .entries()
        .iter()
        .map(|(k, c)| c.to_i128().map(|c| (k.clone(), c)))
        .collect::<Option<Vec<_>>>()?;
    check.accepts(&delta).then_some(delta)
}

fn count_u64(c: &BigInt) -> MufcResult<u64> {
    c.to_u64().ok_or_else(|| {
        SketchError::Decode(DecodeError::CountOutOfRange {
            key: "(aggregate)".into(),
            count: c.to_string(),
            reason: "a count does not fit in 64 bits",
        })
        .into()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decoded_difference_must_lead_to_counts_within_capacity_and_bound() {
        let b = |x: u32| BigUint::from(x);
        let last: BTreeMap<BigUint, u64> = [(b(1), 3), (b(2), 5)].into();
        let check = DeltaCheck {
            last: &last,
            capacity: 3,
            max_points: 10,
        };
        assert!(check.accepts(&[]));
        assert!(check.accepts(&[(b(1), -3), (b(7), 2), (b(8), 1)]));
        assert!(check.accepts(&[(b(2), 5)]));
        // A negative count, a count above the bound, a fourth bin, a bin
        // named twice.
        assert!(!check.accepts(&[(b(1), -4)]));
        assert!(!check.accepts(&[(b(2), 6)]));
        assert!(!check.accepts(&[(b(7), 1), (b(8), 1)]));
        assert!(!check.accepts(&[(b(1), -1), (b(1), -1)]));
    }
}
