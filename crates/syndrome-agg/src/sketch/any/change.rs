//! [`AnySketch::change`](super::AnySketch::change) on each concrete
//! sketch: the count at one key changed in place, at the cost of one
//! insert.

use field::{FiniteField, Fp64};
use num_bigint::{BigInt, BigUint};
use num_traits::Zero;

use super::convert;
use crate::error::SketchResult;
use crate::params::ValidSketchParams;
use crate::sketch::LinearSketch;
use crate::sketch::field::Sketch;
use crate::sketch::integer::IntegerSketch;
use crate::sketch::partitioned::PartitionedSketch;
use crate::sketch::wide::WideSketch;

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
/// partitioned sketches are linear in the count, so each inserts this.
fn count_change<F: FiniteField>(
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

/// [`AnySketch::change`](super::AnySketch::change) on a field sketch.
pub(super) fn field<F: FiniteField>(
    s: &mut Sketch<F>,
    key: &BigUint,
    from: &BigInt,
    to: &BigInt,
) -> SketchResult<()> {
    match count_change(s.params(), from, to)? {
        Some(d) => s.insert(key, &d),
        None => Ok(()),
    }
}

/// [`AnySketch::change`](super::AnySketch::change) on a wide-key sketch, at the key's
/// little-endian bytes (the payload channels are linear in the count too).
pub(super) fn wide(
    s: &mut WideSketch<Fp64>,
    key: &BigUint,
    from: &BigInt,
    to: &BigInt,
) -> SketchResult<()> {
    match count_change(s.params().sketch_params(), from, to)? {
        Some(d) => s.insert_bytes(&key.to_bytes_le(), &d),
        None => Ok(()),
    }
}

/// [`AnySketch::change`](super::AnySketch::change) on a partitioned sketch, in the
/// key's bucket.
pub(super) fn partitioned(
    s: &mut PartitionedSketch<Fp64>,
    key: &BigUint,
    from: &BigInt,
    to: &BigInt,
) -> SketchResult<()> {
    match count_change(s.params().bucket_params(), from, to)? {
        Some(d) => s.insert(key, &d),
        None => Ok(()),
    }
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
        let encode = |h: &[u64]| -> SketchResult<AnySketch> {
            let mut s = AnySketch::new(params);
            for (key, &c) in h.iter().enumerate().filter(|(_, c)| **c > 0) {
                s.insert(&BigUint::from(key + 1), &c.into())?;
            }
            Ok(s)
        };
        for _ in 0..20 {
            // Counts of keys 1..=12 (zero: no entry), totals within 50.
            let mut h: Vec<u64> = (0..12).map(|_| next(3) * next(4)).collect();
            let mut s = encode(&h)?;
            for _ in 0..8 {
                let key = usize::try_from(next(12)).unwrap();
                let to = next(5);
                s.change(
                    &BigUint::from(key + 1),
                    &BigInt::from(h[key]),
                    &BigInt::from(to),
                )?;
                h[key] = to;
                assert_eq!(s, encode(&h)?);
            }
            // Refused: a key outside [1, N], a count above the bound,
            // a negative count.
            let refused = [
                (BigUint::from(0u8), 0i64, 1i64),
                (BigUint::from(3u8), 0, 51),
                (BigUint::from(3u8), i64::try_from(h[2]).unwrap(), -1),
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
