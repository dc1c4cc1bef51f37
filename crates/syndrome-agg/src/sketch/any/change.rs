//! [`AnySketch::change`](super::AnySketch::change) on each concrete
//! sketch: the count at one key changed in place, at the cost of one
//! insert.

use field::FiniteField;
use num_bigint::{BigInt, BigUint};
use num_traits::Zero;

use super::convert;
use crate::error::SketchResult;
use crate::params::ValidSketchParams;
use crate::sketch::LinearSketch;
use crate::sketch::integer::IntegerSketch;

/// A count through a field sketch's policy, zero for no entry.
fn policy_count<F: FiniteField>(
    params: &ValidSketchParams<F>,
    count: &BigInt,
) -> SketchResult<F::Elem> {
    if count.is_zero() {
        Ok(params.field().zero())
    } else {
        params.signed_count(count.clone())
    }
}

/// `to - from` as a field element, both through the policy; `None` when
/// the count does not change (nothing to insert). The field, wide-key and
/// partitioned sketches are linear in the count, so each inserts this
/// (the wide-key sketch at the key's little-endian bytes: its payload
/// channels are linear in the count too).
pub(super) fn count_change<F: FiniteField>(
    params: &ValidSketchParams<F>,
    from: &BigInt,
    to: &BigInt,
) -> SketchResult<Option<F::Elem>> {
    if from == to {
        return Ok(None);
    }
    let (to, from) = (policy_count(params, to)?, policy_count(params, from)?);
    Ok(Some(params.field().sub(&to, &from)))
}

/// [`AnySketch::change`](super::AnySketch::change) on an integer sketch: its counts are
/// positive, so the sketch of `from` is subtracted (in the ring) and the
/// sketch of `to` added, both built (and checked) first.
pub(super) fn ring(
    s: &mut IntegerSketch,
    key: &BigUint,
    from: &BigInt,
    to: &BigInt,
) -> SketchResult<()> {
    if from == to {
        return Ok(());
    }
    let one = |count: &BigInt| -> SketchResult<Option<IntegerSketch>> {
        if count.is_zero() {
            return Ok(None);
        }
        let mut one = IntegerSketch::new(s.params());
        convert::insert_integer(&mut one, key, count.clone())?;
        Ok(Some(one))
    };
    let (old, new) = (one(from)?, one(to)?);
    if let Some(old) = old {
        s.subtract(&old)?;
    }
    if let Some(new) = new {
        s.add(&new)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::AnySketch;
    use super::*;
    use crate::sketch::any::params::{ValidAnyParams, every_scheme};

    /// Random histograms changed entry by entry: the changed sketch is
    /// the sketch of the new histogram, element for element; a refused
    /// change leaves the sketch as it was.
    fn changes(params: &ValidAnyParams) -> SketchResult<()> {
        // A small linear congruential generator: the cases are fixed.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % n
        };
        // Twelve keys spread over [1, N]: several bytes long where the
        // domain allows (a key's bytes are read in one order only).
        let step = (params.sketch_params().key_domain() - 1u8) / 12u8;
        let key_of = |i: usize| BigUint::from(1u8) + &step * i;
        let encode = |h: &[u64]| -> SketchResult<AnySketch> {
            let mut s = AnySketch::new(params);
            for (key, &c) in h.iter().enumerate().filter(|(_, c)| **c > 0) {
                s.insert(&key_of(key), &c.into())?;
            }
            Ok(s)
        };
        for _ in 0..20 {
            // Counts of the twelve keys (zero: no entry), totals within 50.
            let mut h: Vec<u64> = (0..12).map(|_| next(3) * next(4)).collect();
            let mut s = encode(&h)?;
            for _ in 0..8 {
                let key = usize::try_from(next(12)).unwrap();
                let to = next(5);
                s.change(&key_of(key), &BigInt::from(h[key]), &BigInt::from(to))?;
                h[key] = to;
                assert_eq!(s, encode(&h)?);
            }
            // Refused: a key outside [1, N], a count above the bound,
            // a negative count.
            let refused = [
                (BigUint::from(0u8), 0i64, 1i64),
                (key_of(2), 0, 51),
                (key_of(2), i64::try_from(h[2]).unwrap(), -1),
            ];
            for (i, (key, from, to)) in refused.into_iter().enumerate() {
                let mut t = s.clone();
                let r = t.change(&key, &from.into(), &to.into());
                assert!(r.is_err(), "refusal {i} was accepted");
                assert_eq!(t, s);
            }
        }
        Ok(())
    }

    #[test]
    fn a_changed_count_gives_the_sketch_of_the_changed_vector() {
        for p in every_scheme() {
            changes(&p).unwrap();
        }
    }
}
