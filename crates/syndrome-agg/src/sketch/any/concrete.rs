//! The concrete sketch behind an [`AnySketch`], for generic code that
//! must run on native elements: [`ValidAnyParams::visit`] hands a
//! [`SketchVisitor`] the sketch type and field the parameters chose.
//!
//! [`AnySketch`] works on canonical [`BigUint`] elements, which is right
//! for one sketch but costs an allocation per element per operation: a
//! server that sums thousands of masked messages every round wants the
//! field's own elements. A visitor is generic code over [`ConcreteSketch`]
//! (every element native) that still never names a field; the dispatch is
//! here, once (minisketch's `Construct` does the same).

use field::{BigPrime, FiniteField, Fp64, Mersenne127};
use num_bigint::{BigInt, BigUint};
use num_traits::Zero;

use super::params::{ParamsInner, ValidAnyParams, mismatch};
use super::{AnySketch, SketchInner, convert};
use crate::error::SketchResult;
use crate::params::ValidSketchParams;
use crate::sketch::LinearSketch;
use crate::sketch::field::Sketch;
use crate::sketch::integer::IntegerSketch;
use crate::sketch::partitioned::PartitionedSketch;
use crate::sketch::wide::WideSketch;
use crate::sparse::SparseVector;

mod sealed {
    /// Only this crate's sketches are concrete sketches of an
    /// [`AnySketch`](crate::AnySketch).
    pub trait Sealed {}
}

/// A sketch type an [`AnySketch`] may hold, with the conversions generic
/// code needs: integer keys and counts in (as [`AnySketch`]'s own), integer
/// vectors out, and the way to and from an [`AnySketch`] without touching
/// the elements. Sealed: implemented by [`Sketch`] over the fields
/// [`AnyParams`](crate::AnyParams) picks, the wide-key sketch over
/// `GF(27 * 2^59 + 1)` and [`IntegerSketch`].
pub trait ConcreteSketch: LinearSketch + sealed::Sealed {
    /// The concrete parameters inside `params`, if they chose this sketch.
    fn params_of(params: &ValidAnyParams) -> Option<&Self::Params>;

    /// The concrete sketch inside `sketch`, if it is one of these.
    fn of_any(sketch: &AnySketch) -> Option<&Self>;

    /// This sketch as an [`AnySketch`] under `params`.
    ///
    /// # Errors
    ///
    /// [`ParamsError::ParamsMismatch`](crate::ParamsError::ParamsMismatch)
    /// unless `params` chose this sketch with the same parameters.
    fn into_any(self, params: &ValidAnyParams) -> SketchResult<AnySketch>;

    /// Adds `count` at `key`, as [`AnySketch`]'s `insert` does: the count
    /// through the count policy, wide keys as their little-endian bytes.
    /// The field and integer sketches refuse keys outside `[1, N]`; a
    /// wide-key sketch knows only the key's byte length (an
    /// [`AnySketch`] checks `[1, N]` before it gets here).
    ///
    /// # Errors
    ///
    /// As [`LinearSketch::insert`].
    fn insert_integer(&mut self, key: &BigUint, count: BigInt) -> SketchResult<()>;

    /// Changes the count at `key` from `from` to `to` in place (zero: no
    /// entry): the sketch becomes the one built with `to` inserted at
    /// `key` instead of `from`, element for element. Both counts go
    /// through the count policy as in [`insert_integer`](Self::insert_integer).
    /// It costs what one insert costs: the field and wide-key sketches
    /// insert the field element `to - from` (one pass over the `2t + r`
    /// elements and the payload channels), the integer sketch subtracts
    /// the sketch of `from` and inserts `to` (its counts are positive). A
    /// client that keeps its last sketch updates it by the keys whose
    /// counts changed instead of encoding every key again. Nothing
    /// changes, and nothing is checked, when `from == to`.
    ///
    /// # Errors
    ///
    /// As [`insert_integer`](Self::insert_integer), for either count; on
    /// an error the sketch is unchanged.
    ///
    /// # Example
    ///
    /// ```
    /// use syndrome_agg::field::FiniteField;
    /// use syndrome_agg::{
    ///     AnyParams, ConcreteSketch, CountPolicy, LinearSketch, Scheme, SketchParams,
    ///     SketchVisitor,
    /// };
    ///
    /// // (5, 3), (9, 1) changed to (5, 2), (7, 4): the same sketch as
    /// // encoding the new entries afresh, whatever the scheme.
    /// struct Changed;
    /// impl Changed {
    ///     fn run<S: ConcreteSketch>(params: &S::Params) -> syndrome_agg::SketchResult<bool> {
    ///         let mut s = S::new(params);
    ///         s.insert_integer(&5u32.into(), 3.into())?;
    ///         s.insert_integer(&9u32.into(), 1.into())?;
    ///         s.change_integer(&5u32.into(), &3.into(), &2.into())?;
    ///         s.change_integer(&9u32.into(), &1.into(), &0.into())?;
    ///         s.change_integer(&7u32.into(), &0.into(), &4.into())?;
    ///         let mut fresh = S::new(params);
    ///         fresh.insert_integer(&5u32.into(), 2.into())?;
    ///         fresh.insert_integer(&7u32.into(), 4.into())?;
    ///         Ok(s == fresh)
    ///     }
    /// }
    /// impl SketchVisitor for Changed {
    ///     type Output = syndrome_agg::SketchResult<bool>;
    ///     fn visit_field<S, F>(self, params: &S::Params, _field: &F) -> Self::Output
    ///     where
    ///         S: ConcreteSketch,
    ///         F: FiniteField<Elem = S::Elem>,
    ///     {
    ///         Self::run::<S>(params)
    ///     }
    ///     fn visit_ring<S: ConcreteSketch>(self, params: &S::Params) -> Self::Output {
    ///         Self::run::<S>(params)
    ///     }
    /// }
    ///
    /// for scheme in [Scheme::FieldKeys, Scheme::WideKeys { hash_key: [3; 32] }, Scheme::Integer] {
    ///     let sketch = SketchParams::new(3, 100u32).with_counts(CountPolicy::unsigned(10u32));
    ///     let params = AnyParams::new(scheme, sketch).validate()?;
    ///     assert!(params.visit(Changed)?);
    /// }
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    fn change_integer(&mut self, key: &BigUint, from: &BigInt, to: &BigInt) -> SketchResult<()>;

    /// Decodes, as [`AnySketch`]'s `decode` does: integer keys, integer
    /// counts by the count policy (centered for signed policies), sorted
    /// by key.
    ///
    /// # Errors
    ///
    /// As [`LinearSketch::decode`].
    fn decode_integers(&self) -> SketchResult<SparseVector<BigUint, BigInt>>;
}

/// Generic code run on the concrete sketch of a [`ValidAnyParams`], by
/// [`ValidAnyParams::visit`]: a sketch whose elements are those of a
/// field (which a protocol session typed by its field, such as
/// [`secagg`](crate::secagg), needs), or one over the integer ring.
///
/// # Example
///
/// A sum of two sketches on native elements, whatever the scheme:
///
/// ```
/// use syndrome_agg::field::FiniteField;
/// use syndrome_agg::{
///     AnyParams, ConcreteSketch, CountPolicy, LinearSketch, Scheme, SketchParams,
///     SketchVisitor,
/// };
///
/// struct SumOfTwo;
/// impl SumOfTwo {
///     fn run<S: ConcreteSketch>(params: &S::Params) -> syndrome_agg::SketchResult<Vec<u32>> {
///         let mut a = S::new(params);
///         a.insert_integer(&5u32.into(), 2.into())?;
///         let mut b = S::new(params);
///         b.insert_integer(&9u32.into(), 1.into())?;
///         a.add(&b)?;
///         Ok(a.decode_integers()?.into_entries().iter().map(|(k, _)| k.to_u32_digits()[0]).collect())
///     }
/// }
/// impl SketchVisitor for SumOfTwo {
///     type Output = syndrome_agg::SketchResult<Vec<u32>>;
///     fn visit_field<S, F>(self, params: &S::Params, _field: &F) -> Self::Output
///     where
///         S: ConcreteSketch,
///         F: FiniteField<Elem = S::Elem>,
///     {
///         Self::run::<S>(params)
///     }
///     fn visit_ring<S: ConcreteSketch>(self, params: &S::Params) -> Self::Output {
///         Self::run::<S>(params)
///     }
/// }
///
/// for scheme in [Scheme::FieldKeys, Scheme::WideKeys { hash_key: [3; 32] }, Scheme::Integer] {
///     let sketch = SketchParams::new(2, 100u32).with_counts(CountPolicy::unsigned(10u32));
///     let params = AnyParams::new(scheme, sketch).validate()?;
///     assert_eq!(params.visit(SumOfTwo)?, vec![5, 9]);
/// }
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
pub trait SketchVisitor {
    /// What the visit gives.
    type Output;

    /// Runs on a sketch `S` whose elements are those of `field` (the
    /// field-key schemes, and wide keys in `GF(27 * 2^59 + 1)`).
    fn visit_field<S, F>(self, params: &S::Params, field: &F) -> Self::Output
    where
        S: ConcreteSketch,
        F: FiniteField<Elem = S::Elem>;

    /// Runs on a sketch over the integer ring `Z / 2^k` (Appendix K).
    fn visit_ring<S: ConcreteSketch>(self, params: &S::Params) -> Self::Output;
}

impl ValidAnyParams {
    /// Runs `visitor` on the concrete sketch type and field (or ring)
    /// these parameters chose.
    pub fn visit<V: SketchVisitor>(&self, visitor: V) -> V::Output {
        match &self.inner {
            ParamsInner::Word(p) => visitor.visit_field::<Sketch<Fp64>, _>(p, p.field()),
            ParamsInner::F127(p) => visitor.visit_field::<Sketch<Mersenne127>, _>(p, p.field()),
            ParamsInner::Big(p) => visitor.visit_field::<Sketch<BigPrime>, _>(p, p.field()),
            ParamsInner::Wide(p) => visitor.visit_field::<WideSketch<Fp64>, _>(p, p.field()),
            ParamsInner::Integer(p) => visitor.visit_ring::<IntegerSketch>(p),
            ParamsInner::Partitioned(p) => {
                visitor.visit_field::<PartitionedSketch<Fp64>, _>(p, p.field())
            }
        }
    }
}

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

/// [`ConcreteSketch::change_integer`] on a field sketch.
fn change_field<F: FiniteField>(
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

/// [`ConcreteSketch::change_integer`] on a wide-key sketch, at the key's
/// little-endian bytes (the payload channels are linear in the count too).
fn change_wide(
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

/// [`ConcreteSketch::change_integer`] on a partitioned sketch, in the
/// key's bucket.
fn change_partitioned(
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

/// [`ConcreteSketch::change_integer`] on an integer sketch: its counts are
/// positive, so the sketch of `from` is subtracted (in the ring) and the
/// sketch of `to` added, both built (and checked) first.
fn change_ring(
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

/// `ConcreteSketch` for `$sketch`, the `$variant` variant of the
/// parameters and sketch enums: keys and counts through
/// `convert::$insert` and `convert::$decode`, changes through `$change`.
macro_rules! concrete_sketch {
    ($sketch:ty, $variant:ident, $insert:ident, $change:ident, $decode:ident) => {
        impl sealed::Sealed for $sketch {}

        impl ConcreteSketch for $sketch {
            fn params_of(params: &ValidAnyParams) -> Option<&Self::Params> {
                match &params.inner {
                    ParamsInner::$variant(p) => Some(p),
                    _ => None,
                }
            }
            fn of_any(sketch: &AnySketch) -> Option<&Self> {
                match &sketch.inner {
                    SketchInner::$variant(s) => Some(s),
                    _ => None,
                }
            }
            fn into_any(self, params: &ValidAnyParams) -> SketchResult<AnySketch> {
                if Self::params_of(params) != Some(self.params()) {
                    return Err(mismatch());
                }
                Ok(AnySketch::wrap(params, SketchInner::$variant(self)))
            }
            fn insert_integer(&mut self, key: &BigUint, count: BigInt) -> SketchResult<()> {
                convert::$insert(self, key, count)
            }
            fn change_integer(
                &mut self,
                key: &BigUint,
                from: &BigInt,
                to: &BigInt,
            ) -> SketchResult<()> {
                $change(self, key, from, to)
            }
            fn decode_integers(&self) -> SketchResult<SparseVector<BigUint, BigInt>> {
                convert::$decode(self)
            }
        }
    };
}

concrete_sketch!(Sketch<Fp64>, Word, insert_field, change_field, decode_field);
concrete_sketch!(
    Sketch<Mersenne127>,
    F127,
    insert_field,
    change_field,
    decode_field
);
concrete_sketch!(
    Sketch<BigPrime>,
    Big,
    insert_field,
    change_field,
    decode_field
);
concrete_sketch!(
    WideSketch<Fp64>,
    Wide,
    insert_wide,
    change_wide,
    decode_wide
);
concrete_sketch!(
    PartitionedSketch<Fp64>,
    Partitioned,
    insert_partitioned,
    change_partitioned,
    decode_partitioned
);
concrete_sketch!(
    IntegerSketch,
    Integer,
    insert_integer,
    change_ring,
    decode_integer
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{CountPolicy, SketchParams};
    use crate::sketch::any::params::{AnyParams, Scheme};

    /// Encodes, converts to an `AnySketch` and back, and decodes on the
    /// native sketch: the same vector as the `AnySketch` itself.
    struct RoundTrip(ValidAnyParams);

    impl RoundTrip {
        fn run<S: ConcreteSketch>(&self, params: &S::Params) -> SketchResult<()> {
            let entries = [(3u32, 2i32), (70, 5), (99, 1)];
            let mut native = S::new(params);
            let mut any = AnySketch::new(&self.0);
            for (k, c) in entries {
                native.insert_integer(&k.into(), c.into())?;
                any.insert(&k.into(), &c.into())?;
            }
            assert_eq!(S::of_any(&any), Some(&native));
            assert_eq!(native.decode_integers()?, any.decode()?);
            let back = native.clone().into_any(&self.0)?;
            assert_eq!(back, any);
            assert_eq!(back.elements(), any.elements());
            Ok(())
        }
    }

    impl SketchVisitor for RoundTrip {
        type Output = SketchResult<BigUint>;
        fn visit_field<S, F>(self, params: &S::Params, field: &F) -> Self::Output
        where
            S: ConcreteSketch,
            F: FiniteField<Elem = S::Elem>,
        {
            self.run::<S>(params)?;
            Ok(field.characteristic())
        }
        fn visit_ring<S: ConcreteSketch>(self, params: &S::Params) -> Self::Output {
            self.run::<S>(params)?;
            Ok(BigUint::from(0u8))
        }
    }

    #[test]
    fn a_visit_sees_the_sketch_and_field_the_parameters_chose() {
        let small = SketchParams::new(4, 100u32).with_counts(CountPolicy::unsigned(50u32));
        let big = SketchParams::new(4, BigUint::from(1u8) << 130u32)
            .with_counts(CountPolicy::unsigned(50u32));
        let cases = [
            (Scheme::FieldKeys, small.clone()),
            (Scheme::FieldKeys, big),
            (Scheme::WideKeys { hash_key: [1; 32] }, small.clone()),
            (Scheme::Partitioned { hash_key: [1; 32] }, small.clone()),
        ];
        for (scheme, sketch) in cases {
            let p = AnyParams::new(scheme, sketch).validate().unwrap();
            assert_eq!(p.visit(RoundTrip(p.clone())).unwrap(), p.modulus());
        }
        let p = AnyParams::new(Scheme::Integer, small).validate().unwrap();
        assert_eq!(p.visit(RoundTrip(p.clone())).unwrap(), BigUint::from(0u8));
    }

    /// Random histograms changed entry by entry: the changed sketch is
    /// the sketch of the new histogram, element for element; a refused
    /// change leaves the sketch as it was.
    struct Changes;

    impl Changes {
        fn run<S: ConcreteSketch>(params: &S::Params) -> SketchResult<()> {
            // A small linear congruential generator: the cases are fixed.
            let mut state = 0x2545_f491_4f6c_dd1d_u64;
            let mut next = |n: u64| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                (state >> 33) % n
            };
            let encode = |h: &[u64]| -> SketchResult<S> {
                let mut s = S::new(params);
                for (key, &c) in h.iter().enumerate().filter(|(_, c)| **c > 0) {
                    s.insert_integer(&BigUint::from(key + 1), c.into())?;
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
                    s.change_integer(
                        &BigUint::from(key + 1),
                        &BigInt::from(h[key]),
                        &BigInt::from(to),
                    )?;
                    h[key] = to;
                    assert_eq!(s, encode(&h)?);
                }
                // Refused: a key outside [1, N] (but for wide keys, which
                // know only the byte length), a count above the bound, a
                // negative count.
                let refused = [
                    (BigUint::from(0u8), 0i64, 1i64),
                    (BigUint::from(3u8), 0, 51),
                    (BigUint::from(3u8), i64::try_from(h[2]).unwrap(), -1),
                ];
                for (i, (key, from, to)) in refused.into_iter().enumerate() {
                    let mut t = s.clone();
                    let r = t.change_integer(&key, &from.into(), &to.into());
                    // Only the key check is the sketch's own choice.
                    assert!(i == 0 || r.is_err());
                    if r.is_err() {
                        assert_eq!(t, s);
                    }
                }
            }
            Ok(())
        }
    }

    impl SketchVisitor for Changes {
        type Output = SketchResult<()>;
        fn visit_field<S, F>(self, params: &S::Params, _field: &F) -> Self::Output
        where
            S: ConcreteSketch,
            F: FiniteField<Elem = S::Elem>,
        {
            Self::run::<S>(params)
        }
        fn visit_ring<S: ConcreteSketch>(self, params: &S::Params) -> Self::Output {
            Self::run::<S>(params)
        }
    }

    #[test]
    fn a_changed_count_gives_the_sketch_of_the_changed_vector() {
        let counts = CountPolicy::unsigned(50u32);
        let small = SketchParams::new(6, 100u32)
            .with_extra(2)
            .with_counts(counts.clone());
        let wide = SketchParams::new(6, BigUint::from(1u8) << 100u32)
            .with_extra(2)
            .with_counts(counts.clone());
        let big = SketchParams::new(6, BigUint::from(1u8) << 130u32).with_counts(counts);
        let cases = [
            (Scheme::FieldKeys, small.clone()),
            (Scheme::FieldKeys, wide.clone()),
            (Scheme::FieldKeys, big),
            (Scheme::WideKeys { hash_key: [4; 32] }, wide),
            (Scheme::Partitioned { hash_key: [4; 32] }, small.clone()),
            (Scheme::Integer, small),
        ];
        for (scheme, sketch) in cases {
            let p = AnyParams::new(scheme, sketch).validate().unwrap();
            p.visit(Changes).unwrap();
        }
    }

    #[test]
    fn a_concrete_sketch_refuses_other_parameters() {
        let a = AnyParams::new(Scheme::FieldKeys, SketchParams::new(4, 100u32))
            .validate()
            .unwrap();
        let b = AnyParams::new(Scheme::FieldKeys, SketchParams::new(5, 100u32))
            .validate()
            .unwrap();
        let s = Sketch::new(<Sketch<Fp64>>::params_of(&a).unwrap());
        assert!(s.clone().into_any(&a).is_ok());
        assert!(s.into_any(&b).is_err());
        assert!(<Sketch<Mersenne127>>::params_of(&a).is_none());
        assert!(IntegerSketch::of_any(&AnySketch::new(&a)).is_none());
    }
}
