//! A sketch chosen at run time from public parameters (minisketch's
//! `Construct`): [`AnySketch`] picks the scheme and the field and hides
//! the dispatch behind [`LinearSketch`], so that a consumer builds, masks,
//! aggregates, frames and decodes without naming a concrete field.
//!
//! Keys are [`BigUint`]s in `[1, N]` and counts [`BigInt`]s; elements are
//! the canonical representatives (`0..M`) of the chosen field's or ring's
//! elements, so frames, masks and decoded vectors are bit for bit those of
//! the concrete sketch underneath.

pub(crate) mod concrete;
mod convert;
pub(crate) mod cost;
pub(crate) mod params;

use std::sync::OnceLock;

use field::{BigPrime, Fp64, Mersenne127};
use num_bigint::{BigInt, BigUint};
use num_traits::Zero;

use self::params::{ParamsInner, ValidAnyParams, canon, mismatch, uncanon};
use super::LinearSketch;
use crate::error::{ParamsError, SketchError, SketchResult};
use crate::sketch::field::Sketch;
use crate::sketch::integer::IntegerSketch;
use crate::sketch::partitioned::PartitionedSketch;
use crate::sketch::wide::WideSketch;
use crate::sparse::SparseVector;

/// The concrete sketch behind an [`AnySketch`].
// The partitioned sketch holds its parameters (and their keyed hasher);
// sketches are few and long-lived, so the variant's size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
enum SketchInner {
    Word(Sketch<Fp64>),
    F127(Sketch<Mersenne127>),
    Big(Sketch<BigPrime>),
    Wide(WideSketch<Fp64>),
    Integer(IntegerSketch),
    Partitioned(PartitionedSketch<Fp64>),
}

/// A sketch whose scheme and field were chosen at run time from
/// [`AnyParams`](crate::AnyParams): keys [`BigUint`] in `[1, N]`, counts [`BigInt`],
/// elements canonical [`BigUint`]s. Frames, masks and decoded vectors are
/// those of the concrete sketch underneath.
///
/// Counts go through the count policy: unsigned and field-element counts
/// decode to their canonical representative, signed ones to the centered
/// one.
///
/// # Example
///
/// A round with dealer masks, the same code for every scheme:
///
/// ```
/// use syndrome_agg::masking::deal_zero_sum_masks;
/// use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
/// use syndrome_agg::{
///     Aggregator, AnyParams, AnySketch, CountPolicy, LinearParams, LinearSketch, Scheme,
///     SketchParams,
/// };
///
/// let ctx = RoundContext { session: SessionId([2; 32]), round: 0 };
/// for scheme in [Scheme::FieldKeys, Scheme::WideKeys { hash_key: [9; 32] }, Scheme::Integer] {
///     let sketch = SketchParams::new(3, 1000u32).with_counts(CountPolicy::unsigned(100u32));
///     let params = AnyParams::new(scheme, sketch).validate()?;
///     let masks = deal_zero_sum_masks(&params.mask_domain(), 2, params.num_elements(), &mut rand::rng());
///     let mut server = Aggregator::<AnySketch>::new(&params, ctx, 2);
///     let a = AnySketch::encode(&params, [(10u32.into(), 3.into())])?;
///     let b = AnySketch::encode(&params, [(999u32.into(), 4.into())])?;
///     server.accept(&a.mask(&masks[0], 1, ctx)?)?;
///     server.accept(&b.mask(&masks[1], 2, ctx)?)?;
///     assert_eq!(
///         server.decode()?.into_entries(),
///         vec![(10u32.into(), 3.into()), (999u32.into(), 4.into())]
///     );
/// }
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug)]
pub struct AnySketch {
    params: ValidAnyParams,
    inner: SketchInner,
    /// The canonical elements, computed on first read and dropped on
    /// every change.
    canonical: OnceLock<Vec<BigUint>>,
}

impl PartialEq for AnySketch {
    fn eq(&self, other: &Self) -> bool {
        self.params == other.params && self.inner == other.inner
    }
}

impl AnySketch {
    fn wrap(params: &ValidAnyParams, inner: SketchInner) -> Self {
        Self {
            params: params.clone(),
            inner,
            canonical: OnceLock::new(),
        }
    }

    fn changed(&mut self) {
        self.canonical = OnceLock::new();
    }

    fn to_canonical(&self) -> Vec<BigUint> {
        match &self.inner {
            SketchInner::Word(s) => canon(s.field(), s.elements()),
            SketchInner::F127(s) => canon(s.field(), s.elements()),
            SketchInner::Big(s) => canon(s.field(), s.elements()),
            SketchInner::Wide(s) => canon(s.params().field(), s.elements()),
            SketchInner::Integer(s) => s.elements().to_vec(),
            SketchInner::Partitioned(s) => canon(s.field(), s.elements()),
        }
    }

    /// `self op= other` on the concrete sketches.
    fn combine(&mut self, other: &Self, subtract: bool) -> SketchResult<()> {
        fn op<S: LinearSketch>(a: &mut S, b: &S, subtract: bool) -> SketchResult<()> {
            if subtract { a.subtract(b) } else { a.add(b) }
        }
        match (&mut self.inner, &other.inner) {
            (SketchInner::Word(a), SketchInner::Word(b)) => op(a, b, subtract)?,
            (SketchInner::F127(a), SketchInner::F127(b)) => op(a, b, subtract)?,
            (SketchInner::Big(a), SketchInner::Big(b)) => op(a, b, subtract)?,
            (SketchInner::Wide(a), SketchInner::Wide(b)) => op(a, b, subtract)?,
            (SketchInner::Integer(a), SketchInner::Integer(b)) => op(a, b, subtract)?,
            (SketchInner::Partitioned(a), SketchInner::Partitioned(b)) => op(a, b, subtract)?,
            _ => return Err(mismatch()),
        }
        self.changed();
        Ok(())
    }
}

impl LinearSketch for AnySketch {
    type Params = ValidAnyParams;
    type Key = BigUint;
    type Count = BigInt;
    type Elem = BigUint;

    fn new(params: &ValidAnyParams) -> Self {
        let inner = match &params.inner {
            ParamsInner::Word(p) => SketchInner::Word(Sketch::new(p)),
            ParamsInner::F127(p) => SketchInner::F127(Sketch::new(p)),
            ParamsInner::Big(p) => SketchInner::Big(Sketch::new(p)),
            ParamsInner::Wide(p) => SketchInner::Wide(WideSketch::new(p)),
            ParamsInner::Integer(p) => SketchInner::Integer(IntegerSketch::new(p)),
            ParamsInner::Partitioned(p) => SketchInner::Partitioned(PartitionedSketch::new(p)),
        };
        Self::wrap(params, inner)
    }

    fn params(&self) -> &ValidAnyParams {
        &self.params
    }

    /// Adds `count` at `key`: the count goes through the policy (as
    /// [`ValidSketchParams::signed_count`](crate::ValidSketchParams::signed_count)); wide keys travel as their
    /// little-endian bytes; integer counts must be positive.
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`] outside `[1, N]`;
    /// [`ParamsError::InvalidCount`] for a count the policy refuses.
    fn insert(&mut self, key: &BigUint, count: &BigInt) -> SketchResult<()> {
        let domain = self.params.sketch_params().key_domain();
        if key.is_zero() || key > domain {
            return Err(SketchError::Params(ParamsError::KeyOutOfDomain {
                key: key.to_string(),
                domain: domain.to_string(),
            }));
        }
        match &mut self.inner {
            SketchInner::Word(s) => convert::insert_field(s, key, count.clone())?,
            SketchInner::F127(s) => convert::insert_field(s, key, count.clone())?,
            SketchInner::Big(s) => convert::insert_field(s, key, count.clone())?,
            SketchInner::Wide(s) => convert::insert_wide(s, key, count.clone())?,
            SketchInner::Integer(s) => convert::insert_integer(s, key, count.clone())?,
            SketchInner::Partitioned(s) => convert::insert_partitioned(s, key, count.clone())?,
        }
        self.changed();
        Ok(())
    }

    fn add(&mut self, other: &Self) -> SketchResult<()> {
        self.combine(other, false)
    }

    fn subtract(&mut self, other: &Self) -> SketchResult<()> {
        self.combine(other, true)
    }

    fn elements(&self) -> &[BigUint] {
        self.canonical.get_or_init(|| self.to_canonical())
    }

    fn into_elements(mut self) -> Vec<BigUint> {
        match self.canonical.take() {
            Some(v) => v,
            None => self.to_canonical(),
        }
    }

    fn from_elements(params: &ValidAnyParams, elements: Vec<BigUint>) -> SketchResult<Self> {
        let inner = match &params.inner {
            ParamsInner::Word(p) => {
                SketchInner::Word(Sketch::from_elements(p, uncanon(p.field(), &elements)?)?)
            }
            ParamsInner::F127(p) => {
                SketchInner::F127(Sketch::from_elements(p, uncanon(p.field(), &elements)?)?)
            }
            ParamsInner::Big(p) => {
                SketchInner::Big(Sketch::from_elements(p, uncanon(p.field(), &elements)?)?)
            }
            ParamsInner::Wide(p) => SketchInner::Wide(WideSketch::from_elements(
                p,
                uncanon(p.field(), &elements)?,
            )?),
            ParamsInner::Integer(p) => {
                SketchInner::Integer(IntegerSketch::from_elements(p, elements.clone())?)
            }
            ParamsInner::Partitioned(p) => SketchInner::Partitioned(
                PartitionedSketch::from_elements(p, uncanon(p.field(), &elements)?)?,
            ),
        };
        let s = Self::wrap(params, inner);
        // The elements are canonical (checked above): keep them.
        let _ = s.canonical.set(elements);
        Ok(s)
    }

    /// The concrete sketch's decoder; wide keys are read back as
    /// little-endian integers, and entries are sorted by key.
    fn decode(&self) -> SketchResult<SparseVector<BigUint, BigInt>> {
        match &self.inner {
            SketchInner::Word(s) => convert::decode_field(s),
            SketchInner::F127(s) => convert::decode_field(s),
            SketchInner::Big(s) => convert::decode_field(s),
            SketchInner::Wide(s) => convert::decode_wide(s),
            SketchInner::Integer(s) => convert::decode_integer(s),
            SketchInner::Partitioned(s) => convert::decode_partitioned(s),
        }
    }

    fn is_zero(&self) -> bool {
        self.elements().iter().all(Zero::is_zero)
    }
}
