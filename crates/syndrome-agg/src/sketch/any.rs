//! A sketch chosen at run time from public parameters (minisketch's
//! `Construct`): [`AnySketch`] picks the scheme and the field and hides
//! the dispatch behind [`LinearSketch`], so that a consumer builds, masks,
//! aggregates, frames and decodes without naming a concrete field. Each
//! operation dispatches once and then runs on the concrete sketch's own
//! elements; only the conversions at the edge (a mask or a dense vector
//! given as integers) touch canonical representatives.
//!
//! Keys are [`BigUint`]s in `[1, N]` and counts [`BigInt`]s; masks and
//! dense vectors are the canonical representatives (`0..M`) of the chosen
//! field's or ring's elements, so frames, masks and decoded vectors are
//! bit for bit those of the concrete sketch underneath.

/// Runs `$body` with `$s` bound to the concrete sketch inside `$inner`,
/// whatever its variant: the one dispatch of an operation.
macro_rules! each {
    ($inner:expr, $s:ident => $body:expr) => {
        match $inner {
            SketchInner::Word($s) => $body,
            SketchInner::F127($s) => $body,
            SketchInner::Big($s) => $body,
            SketchInner::Wide($s) => $body,
            SketchInner::Integer($s) => $body,
            SketchInner::Partitioned($s) => $body,
        }
    };
}

/// The sketch of the same variant as `$inner` that `$body` makes from
/// its concrete sketch `$s`.
macro_rules! map {
    ($inner:expr, $s:ident => $body:expr) => {
        match $inner {
            SketchInner::Word($s) => SketchInner::Word($body),
            SketchInner::F127($s) => SketchInner::F127($body),
            SketchInner::Big($s) => SketchInner::Big($body),
            SketchInner::Wide($s) => SketchInner::Wide($body),
            SketchInner::Integer($s) => SketchInner::Integer($body),
            SketchInner::Partitioned($s) => SketchInner::Partitioned($body),
        }
    };
}

/// The sketch of the variant of the parameters `$params`: `$body` made
/// with `$p`, the concrete parameters, and `$S`, the concrete sketch's
/// type.
macro_rules! build {
    ($params:expr, $p:ident, $S:ident => $body:expr) => {
        match $params {
            crate::sketch::any::params::ParamsInner::Word($p) => {
                type $S = crate::sketch::field::Sketch<::field::Fp64>;
                SketchInner::Word($body)
            }
            crate::sketch::any::params::ParamsInner::F127($p) => {
                type $S = crate::sketch::field::Sketch<::field::Mersenne127>;
                SketchInner::F127($body)
            }
            crate::sketch::any::params::ParamsInner::Big($p) => {
                type $S = crate::sketch::field::Sketch<::field::BigPrime>;
                SketchInner::Big($body)
            }
            crate::sketch::any::params::ParamsInner::Wide($p) => {
                type $S = crate::sketch::wide::WideSketch<::field::Fp64>;
                SketchInner::Wide($body)
            }
            crate::sketch::any::params::ParamsInner::Integer($p) => {
                type $S = crate::sketch::integer::IntegerSketch;
                SketchInner::Integer($body)
            }
            crate::sketch::any::params::ParamsInner::Partitioned($p) => {
                type $S = crate::sketch::partitioned::PartitionedSketch<::field::Fp64>;
                SketchInner::Partitioned($body)
            }
        }
    };
}

mod change;
mod convert;
pub(crate) mod cost;
mod dealt;
pub(crate) mod params;
mod raw;

use field::primes::FieldChoice;
use field::{BigPrime, Fp64, Mersenne127};
use num_bigint::{BigInt, BigUint};
use num_traits::Zero;

use self::params::{ParamsInner, ValidAnyParams, mismatch};
use super::{LinearSketch, MaskedSketch, RawSketch};
use crate::error::{ParamsError, SketchError, SketchResult};
use crate::sketch::field::Sketch;
use crate::sketch::integer::IntegerSketch;
use crate::sketch::partitioned::PartitionedSketch;
use crate::sketch::wide::WideSketch;
use crate::sparse::SparseVector;
use masked_sum::RoundContext;
use masked_sum::masking::pairwise::{MaskKeyPair, MaskPublicKey};

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

/// Each client's sealed seed, `(client, sealed)`, from a dealer
/// ([`AnySketch::deal`]).
pub type SealedSeeds = Vec<(u64, Vec<u8>)>;

/// A sketch whose scheme and field were chosen at run time from
/// [`AnyParams`](crate::AnyParams): keys [`BigUint`] in `[1, N]`, counts [`BigInt`],
/// masks canonical [`BigUint`]s. Its elements are the concrete sketch's,
/// opaque: every operation dispatches once and runs on them, and frames,
/// masks and decoded vectors are those of the concrete sketch underneath.
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
#[derive(Clone, Debug, PartialEq)]
pub struct AnySketch {
    params: ValidAnyParams,
    inner: SketchInner,
}

/// `$body` on the concrete sketches of the same variant inside `$a` and
/// `$b`; a mismatch error for sketches of different schemes or fields.
macro_rules! both {
    ($a:expr, $b:expr, $x:ident, $y:ident => $body:expr) => {
        match ($a, $b) {
            (SketchInner::Word($x), SketchInner::Word($y)) => $body,
            (SketchInner::F127($x), SketchInner::F127($y)) => $body,
            (SketchInner::Big($x), SketchInner::Big($y)) => $body,
            (SketchInner::Wide($x), SketchInner::Wide($y)) => $body,
            (SketchInner::Integer($x), SketchInner::Integer($y)) => $body,
            (SketchInner::Partitioned($x), SketchInner::Partitioned($y)) => $body,
            _ => Err(mismatch()),
        }
    };
}

impl AnySketch {
    fn wrap(params: &ValidAnyParams, inner: SketchInner) -> Self {
        Self {
            params: params.clone(),
            inner,
        }
    }

    /// Refuses a key outside `[1, N]`.
    fn check_key(&self, key: &BigUint) -> SketchResult<()> {
        let domain = self.params.sketch_params().key_domain();
        if key.is_zero() || key > domain {
            return Err(SketchError::Params(ParamsError::KeyOutOfDomain {
                key: key.to_string(),
                domain: domain.to_string(),
            }));
        }
        Ok(())
    }

    /// Changes the count at `key` from `from` to `to` in place (zero: no
    /// entry): the sketch becomes the one built with `to` inserted at
    /// `key` instead of `from`, element for element. Both counts go
    /// through the count policy as in [`insert`](LinearSketch::insert).
    /// It costs what one insert costs: the field and wide-key sketches
    /// insert the field element `to - from`, the integer sketch subtracts
    /// the sketch of `from` and inserts `to` (its counts are positive). A
    /// client that keeps its last sketch updates it by the keys whose
    /// counts changed instead of encoding every key again. Nothing
    /// changes, and only the key is checked, when `from == to`.
    ///
    /// # Errors
    ///
    /// As [`insert`](LinearSketch::insert), for either count; on an error
    /// the sketch is unchanged.
    ///
    /// # Example
    ///
    /// ```
    /// use syndrome_agg::{AnyParams, AnySketch, CountPolicy, LinearSketch, Scheme, SketchParams};
    ///
    /// // (5, 3), (9, 1) changed to (5, 2), (7, 4): the same sketch as
    /// // encoding the new entries afresh, whatever the scheme.
    /// for scheme in [Scheme::FieldKeys, Scheme::WideKeys { hash_key: [3; 32] }, Scheme::Integer] {
    ///     let sketch = SketchParams::new(3, 100u32).with_counts(CountPolicy::unsigned(10u32));
    ///     let params = AnyParams::new(scheme, sketch).validate()?;
    ///     let mut s = AnySketch::encode(&params, [(5u32.into(), 3.into()), (9u32.into(), 1.into())])?;
    ///     s.change(&5u32.into(), &3.into(), &2.into())?;
    ///     s.change(&9u32.into(), &1.into(), &0.into())?;
    ///     s.change(&7u32.into(), &0.into(), &4.into())?;
    ///     let fresh = AnySketch::encode(&params, [(5u32.into(), 2.into()), (7u32.into(), 4.into())])?;
    ///     assert_eq!(s, fresh);
    /// }
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    pub fn change(&mut self, key: &BigUint, from: &BigInt, to: &BigInt) -> SketchResult<()> {
        use change::count_change as delta;
        self.check_key(key)?;
        let ok = Ok(());
        match &mut self.inner {
            SketchInner::Word(s) => delta(s.params(), from, to)?.map_or(ok, |d| s.insert(key, &d)),
            SketchInner::F127(s) => delta(s.params(), from, to)?.map_or(ok, |d| s.insert(key, &d)),
            SketchInner::Big(s) => delta(s.params(), from, to)?.map_or(ok, |d| s.insert(key, &d)),
            SketchInner::Wide(s) => delta(s.params().sketch_params(), from, to)?
                .map_or(ok, |d| s.insert_bytes(&key.to_bytes_le(), &d)),
            SketchInner::Integer(s) => change::ring(s, key, from, to),
            SketchInner::Partitioned(s) => {
                delta(s.params().bucket_params(), from, to)?.map_or(ok, |d| s.insert(key, &d))
            }
        }
    }

    /// The same elements read under `params`: parameters of the same
    /// scheme, field and length that decode differently (a difference of
    /// two sums, decoded under a signed count policy).
    ///
    /// # Errors
    ///
    /// [`ParamsError::ParamsMismatch`] for parameters of another scheme
    /// or field; [`DecodeError::WrongLength`](crate::DecodeError::WrongLength)
    /// for another number of elements.
    ///
    /// # Example
    ///
    /// ```
    /// use syndrome_agg::{AnyParams, AnySketch, CountPolicy, LinearSketch, Scheme, SketchParams};
    ///
    /// let sketch = SketchParams::new(2, 100u32);
    /// let unsigned = sketch.clone().with_counts(CountPolicy::unsigned(10u32));
    /// let sums = AnyParams::new(Scheme::FieldKeys, unsigned).validate()?;
    /// let signed = sketch.with_counts(CountPolicy::signed(10u32));
    /// let changes = AnyParams::new(Scheme::FieldKeys, signed).validate()?;
    /// let before = AnySketch::encode(&sums, [(4u32.into(), 3.into())])?;
    /// let mut diff = AnySketch::encode(&sums, [(4u32.into(), 1.into())])?;
    /// diff.subtract(&before)?;
    /// let diff = diff.with_params(&changes)?;
    /// assert_eq!(diff.decode()?.into_entries(), vec![(4u32.into(), (-2).into())]);
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    pub fn with_params(self, params: &ValidAnyParams) -> SketchResult<Self> {
        let inner = match (self.inner, &params.inner) {
            (SketchInner::Word(s), ParamsInner::Word(p)) => {
                SketchInner::Word(Sketch::from_elements(p, s.into_elements())?)
            }
            (SketchInner::F127(s), ParamsInner::F127(p)) => {
                SketchInner::F127(Sketch::from_elements(p, s.into_elements())?)
            }
            (SketchInner::Big(s), ParamsInner::Big(p)) => {
                SketchInner::Big(Sketch::from_elements(p, s.into_elements())?)
            }
            (SketchInner::Wide(s), ParamsInner::Wide(p)) => {
                SketchInner::Wide(WideSketch::from_elements(p, s.into_elements())?)
            }
            (SketchInner::Integer(s), ParamsInner::Integer(p)) => {
                SketchInner::Integer(IntegerSketch::from_elements(p, s.into_elements())?)
            }
            (SketchInner::Partitioned(s), ParamsInner::Partitioned(p)) => {
                SketchInner::Partitioned(PartitionedSketch::from_elements(p, s.into_elements())?)
            }
            _ => return Err(mismatch()),
        };
        Ok(Self::wrap(params, inner))
    }

    /// The sketch as a dense vector of canonical residues (`0..M` for the
    /// field or ring of [`ValidAnyParams::modulus`]), in wire order: what
    /// a dense secure sum ([`secagg`](crate::secagg)) adds element by
    /// element. The sum of the vectors of a round's sketches is the
    /// vector of their sum.
    pub fn to_dense(&self) -> Vec<BigUint> {
        self.elements().into_owned()
    }

    /// The sketch whose dense vector is `vector` (the output of a dense
    /// secure sum).
    ///
    /// # Errors
    ///
    /// [`DecodeError::WrongLength`](crate::DecodeError::WrongLength) unless
    /// there are [`LinearParams::num_elements`](crate::LinearParams::num_elements);
    /// [`DecodeError::NonCanonical`](crate::DecodeError::NonCanonical) for
    /// a residue `>= M`.
    ///
    /// # Example
    ///
    /// ```
    /// use syndrome_agg::{AnyParams, AnySketch, CountPolicy, LinearSketch, Scheme, SketchParams};
    ///
    /// let sketch = SketchParams::new(2, 100u32).with_counts(CountPolicy::unsigned(10u32));
    /// let params = AnyParams::new(Scheme::FieldKeys, sketch).validate()?;
    /// let a = AnySketch::encode(&params, [(4u32.into(), 3.into())])?;
    /// let b = AnySketch::encode(&params, [(9u32.into(), 1.into())])?;
    /// let m = params.modulus();
    /// let sum = a.to_dense().iter().zip(b.to_dense()).map(|(x, y)| (x + y) % &m).collect();
    /// let sum = AnySketch::from_dense(&params, sum)?;
    /// assert_eq!(
    ///     sum.decode()?.into_entries(),
    ///     vec![(4u32.into(), 3.into()), (9u32.into(), 1.into())]
    /// );
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    pub fn from_dense(params: &ValidAnyParams, vector: Vec<BigUint>) -> SketchResult<Self> {
        Self::from_elements(params, vector)
    }
}

impl ValidAnyParams {
    /// The field the sketch's elements live in, for a protocol that works
    /// in a field (SecAgg); `None` for the integer scheme, whose elements
    /// live in the ring `Z / 2^k`.
    pub fn mask_field(&self) -> Option<FieldChoice> {
        match &self.inner {
            ParamsInner::Word(p) => Some(FieldChoice::Proth(*p.field())),
            ParamsInner::F127(p) => Some(FieldChoice::Mersenne127(*p.field())),
            ParamsInner::Big(p) => Some(FieldChoice::Big(p.field().clone())),
            ParamsInner::Wide(p) => Some(FieldChoice::Proth(*p.field())),
            ParamsInner::Partitioned(p) => Some(FieldChoice::Proth(*p.field())),
            ParamsInner::Integer(_) => None,
        }
    }
}

impl LinearSketch for AnySketch {
    type Params = ValidAnyParams;
    type Key = BigUint;
    type Count = BigInt;
    type Elem = BigUint;

    fn new(params: &ValidAnyParams) -> Self {
        Self::wrap(params, build!(&params.inner, p, S => S::new(p)))
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
        self.check_key(key)?;
        match &mut self.inner {
            SketchInner::Word(s) => convert::insert_field(s, key, count.clone()),
            SketchInner::F127(s) => convert::insert_field(s, key, count.clone()),
            SketchInner::Big(s) => convert::insert_field(s, key, count.clone()),
            SketchInner::Wide(s) => convert::insert_wide(s, key, count.clone()),
            SketchInner::Integer(s) => convert::insert_integer(s, key, count.clone()),
            SketchInner::Partitioned(s) => convert::insert_partitioned(s, key, count.clone()),
        }
    }

    fn add(&mut self, other: &Self) -> SketchResult<()> {
        both!(&mut self.inner, &other.inner, a, b => a.add(b))
    }

    fn subtract(&mut self, other: &Self) -> SketchResult<()> {
        both!(&mut self.inner, &other.inner, a, b => a.subtract(b))
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
        each!(&self.inner, s => s.is_zero())
    }

    // Frames and masks through `RawSketch`, whose `AnySketch` methods
    // (`raw.rs`) run on the concrete sketch; a mask of canonical residues
    // is converted once to the concrete field's elements.
    crate::sketch::linear_via_raw!();

    /// The concrete sketch's pairwise masks, drawn and added in its own
    /// field or ring: a client masks against every peer, so this is
    /// the per-element work of a round that grows with the group.
    fn mask_pairwise(
        &self,
        keys: &MaskKeyPair,
        own_id: u64,
        peers: &[(u64, MaskPublicKey)],
        context: RoundContext,
    ) -> SketchResult<MaskedSketch<Self>> {
        let inner =
            map!(&self.inner, s => s.mask_pairwise(keys, own_id, peers, context)?.into_masked());
        Ok(MaskedSketch::new(
            Self::wrap(&self.params, inner),
            own_id,
            context,
        ))
    }
}
