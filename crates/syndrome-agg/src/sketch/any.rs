//! A sketch chosen at run time from public parameters (minisketch's
//! `Construct`): [`AnySketch`] picks the scheme and the field and hides
//! the dispatch behind [`LinearSketch`], so that a consumer builds, masks,
//! aggregates, frames and decodes without naming a concrete field.
//!
//! Keys are [`BigUint`]s in `[1, N]` and counts [`BigInt`]s; elements are
//! the canonical representatives (`0..M`) of the chosen field's or ring's
//! elements, so frames, masks and decoded vectors are bit for bit those of
//! the concrete sketch underneath.

use std::sync::OnceLock;

use field::primes::{FieldChoice, cheapest_field};
use field::{BigPrime, FiniteField, Mersenne61, Mersenne127};
use num_bigint::{BigInt, BigUint};
use num_traits::{Signed, Zero};
use rand::Rng;

use super::{LinearParams, LinearSketch};
use crate::context::RoundContext;
use crate::error::{DecodeError, ParamsError, SketchError, SketchResult, invalid};
use crate::integer::{IntegerParams, IntegerRing, ValidIntegerParams};
use crate::masking::MaskDomain;
use crate::params::{CountPolicy, SketchParams, ValidSketchParams};
use crate::sketch::field::Sketch;
use crate::sketch::integer::IntegerSketch;
use crate::sketch::wide::{ValidWideKeyParams, WideKeyParams, WideSketch};
use crate::sparse::SparseVector;
use crate::wire::Frame;

/// Which kind of sketch [`AnyParams`] builds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scheme {
    /// Keys are elements of the cheapest prime field that holds the key
    /// domain and the count bound (Algorithm 2 of the paper):
    /// `GF(2^61 - 1)`, `GF(2^127 - 1)` or the smallest prime above the
    /// bound, via [`cheapest_field`].
    FieldKeys,
    /// Keys travel as their little-endian bytes (at most
    /// `ceil(bits(N) / 8)`) in a wide-key sketch over `GF(2^61 - 1)` (see
    /// [`WideSketch`]), hashed under the session's public `hash_key`.
    WideKeys {
        /// The public 32-byte hash key of the session.
        hash_key: [u8; 32],
    },
    /// The deterministic integer sketch of Appendix K
    /// ([`IntegerSketch`]); the count policy must be
    /// [`CountPolicy::Unsigned`].
    Integer,
}

/// The public parameters of an [`AnySketch`]: a [`Scheme`], capacity `t`,
/// key domain `[1, N]`, `r` extra check syndromes and the count policy.
/// [`validate`](Self::validate) picks the field.
///
/// # Example
///
/// ```
/// use syndrome_agg::{AnyParams, AnySketch, CountPolicy, LinearParams, LinearSketch, Scheme};
///
/// let params = AnyParams::new(Scheme::FieldKeys, 4, 1u32 << 20)
///     .with_counts(CountPolicy::unsigned(1000u32))
///     .validate()?;
/// assert_eq!(params.modulus_bits(), 61); // GF(2^61 - 1) holds 2^20 keys
/// let mut s = AnySketch::new(&params);
/// s.insert(&7u32.into(), &3.into())?;
/// assert_eq!(s.decode()?.into_entries(), vec![(7u32.into(), 3.into())]);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnyParams {
    scheme: Scheme,
    capacity: usize,
    key_domain: BigUint,
    extra: usize,
    counts: CountPolicy,
    field_bound: BigUint,
}

impl AnyParams {
    /// Capacity `t` over keys `1..=key_domain`, with
    /// [`DEFAULT_EXTRA`](crate::params::DEFAULT_EXTRA) check syndromes and
    /// [`CountPolicy::FieldElements`].
    pub fn new(scheme: Scheme, capacity: usize, key_domain: impl Into<BigUint>) -> Self {
        Self {
            scheme,
            capacity,
            key_domain: key_domain.into(),
            extra: crate::params::DEFAULT_EXTRA,
            counts: CountPolicy::FieldElements,
            field_bound: BigUint::zero(),
        }
    }

    /// Sets `r`.
    #[must_use]
    pub fn with_extra(mut self, extra: usize) -> Self {
        self.extra = extra;
        self
    }

    /// Sets the count policy.
    #[must_use]
    pub fn with_counts(mut self, counts: CountPolicy) -> Self {
        self.counts = counts;
        self
    }

    /// Asks the [`Scheme::FieldKeys`] field to hold `bound` too, so that
    /// related parameters (unsigned sums and their signed differences)
    /// land in one field.
    #[must_use]
    pub fn with_field_bound(mut self, bound: impl Into<BigUint>) -> Self {
        self.field_bound = bound.into();
        self
    }

    /// Checks the parameters and picks the field (or ring).
    ///
    /// # Errors
    ///
    /// As [`SketchParams::validate`], [`WideKeyParams::validate`] and
    /// [`IntegerParams::validate`]; [`ParamsError::InvalidParams`] for an
    /// integer scheme without an unsigned count policy, or wide keys longer
    /// than a `usize`.
    pub fn validate(self) -> SketchResult<ValidAnyParams> {
        let inner = match &self.scheme {
            Scheme::FieldKeys => {
                let base = SketchParams::new(self.capacity, self.key_domain.clone())
                    .with_extra(self.extra)
                    .with_counts(self.counts.clone());
                let bound = base.field_bound().max(self.field_bound.clone());
                match cheapest_field(&bound) {
                    FieldChoice::Mersenne61(f) => ParamsInner::F61(base.validate(f)?),
                    FieldChoice::Mersenne127(f) => ParamsInner::F127(base.validate(f)?),
                    FieldChoice::Big(f) => ParamsInner::Big(base.validate(f)?),
                }
            }
            Scheme::WideKeys { hash_key } => {
                let key_len = usize::try_from(self.key_domain.bits().div_ceil(8))
                    .map_err(|_| invalid("wide keys longer than a usize"))?;
                ParamsInner::Wide(
                    WideKeyParams::new(self.capacity, key_len, *hash_key)
                        .with_extra(self.extra)
                        .with_counts(self.counts.clone())
                        .validate(Mersenne61)?,
                )
            }
            Scheme::Integer => {
                let CountPolicy::Unsigned { max_total } = &self.counts else {
                    return Err(invalid("the integer scheme needs unsigned counts"));
                };
                ParamsInner::Integer(
                    IntegerParams::new(self.capacity, self.key_domain.clone(), max_total.clone())
                        .with_extra(self.extra)
                        .validate()?,
                )
            }
        };
        Ok(ValidAnyParams {
            params: self,
            inner,
        })
    }
}

/// The concrete parameters behind [`ValidAnyParams`]. A new field (an
/// NTT-friendly prime, say) is one more variant here and in
/// [`SketchInner`], invisible to consumers.
#[derive(Clone, Debug, PartialEq)]
enum ParamsInner {
    F61(ValidSketchParams<Mersenne61>),
    F127(ValidSketchParams<Mersenne127>),
    Big(ValidSketchParams<BigPrime>),
    Wide(ValidWideKeyParams<Mersenne61>),
    Integer(ValidIntegerParams),
}

/// [`AnyParams`] validated, with the field (or ring) chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidAnyParams {
    params: AnyParams,
    inner: ParamsInner,
}

impl ValidAnyParams {
    /// The parameters these were validated from.
    pub fn params(&self) -> &AnyParams {
        &self.params
    }
    /// The scheme.
    pub fn scheme(&self) -> &Scheme {
        &self.params.scheme
    }
    /// The capacity `t`.
    pub fn capacity(&self) -> usize {
        self.params.capacity
    }
    /// The key domain `N`.
    pub fn key_domain(&self) -> &BigUint {
        &self.params.key_domain
    }
    /// `r`.
    pub fn extra(&self) -> usize {
        self.params.extra
    }
    /// The count policy.
    pub fn counts(&self) -> &CountPolicy {
        &self.params.counts
    }
    /// The modulus `M` of the elements (the field's `p`, or `2^k`).
    pub fn modulus(&self) -> BigUint {
        self.mask_domain().mask_modulus()
    }
    /// Bits of the modulus `p` (or `k` for the integer ring `Z / 2^k`).
    pub fn modulus_bits(&self) -> u64 {
        match &self.inner {
            ParamsInner::F61(p) => p.field().modulus_bits(),
            ParamsInner::F127(p) => p.field().modulus_bits(),
            ParamsInner::Big(p) => p.field().modulus_bits(),
            ParamsInner::Wide(p) => p.field().modulus_bits(),
            ParamsInner::Integer(p) => p.ring().bits(),
        }
    }

    /// The fixed-width little-endian encoding of an element, as it travels
    /// in a frame.
    pub fn element_bytes(&self, e: &BigUint) -> Vec<u8> {
        let mut b = e.to_bytes_le();
        b.resize(self.element_width(), 0);
        b
    }

    fn element_width(&self) -> usize {
        match &self.inner {
            ParamsInner::F61(p) => p.field().byte_len(),
            ParamsInner::F127(p) => p.field().byte_len(),
            ParamsInner::Big(p) => p.field().byte_len(),
            ParamsInner::Wide(p) => p.field().byte_len(),
            ParamsInner::Integer(p) => usize::try_from(p.ring().bits().div_ceil(8)).unwrap_or(0),
        }
    }
}

/// Canonical representatives of field elements.
fn canon<F: FiniteField>(f: &F, e: &[F::Elem]) -> Vec<BigUint> {
    e.iter().map(|x| f.to_biguint(x)).collect()
}

/// Field elements of canonical representatives.
fn uncanon<F: FiniteField>(f: &F, e: &[BigUint]) -> SketchResult<Vec<F::Elem>> {
    let p = f.characteristic();
    e.iter()
        .map(|x| {
            if *x < p {
                Ok(f.from_biguint(x))
            } else {
                Err(SketchError::Decode(DecodeError::NonCanonical))
            }
        })
        .collect()
}

/// The mask domain of an [`AnySketch`]: the chosen field or ring, with
/// elements as canonical [`BigUint`]s. Random elements are drawn by the
/// concrete field, so a dealer consumes its RNG exactly as it would for
/// the concrete sketch.
#[derive(Clone, Debug, PartialEq)]
pub struct AnyDomain(DomainInner);

#[derive(Clone, Debug, PartialEq)]
enum DomainInner {
    F61(Mersenne61),
    F127(Mersenne127),
    Big(BigPrime),
    Ring(IntegerRing),
}

impl MaskDomain for AnyDomain {
    type Elem = BigUint;
    fn mask_modulus(&self) -> BigUint {
        match &self.0 {
            DomainInner::F61(f) => f.characteristic(),
            DomainInner::F127(f) => f.characteristic(),
            DomainInner::Big(f) => f.characteristic(),
            DomainInner::Ring(r) => r.mask_modulus(),
        }
    }
    fn mask_zero(&self) -> BigUint {
        BigUint::zero()
    }
    fn mask_add(&self, a: &BigUint, b: &BigUint) -> BigUint {
        if let DomainInner::Ring(r) = &self.0 {
            return r.mask_add(a, b);
        }
        let m = self.mask_modulus();
        let s = a + b;
        if s >= m { s - m } else { s }
    }
    fn mask_sub(&self, a: &BigUint, b: &BigUint) -> BigUint {
        if a >= b {
            a - b
        } else {
            self.mask_modulus() - (b - a)
        }
    }
    fn mask_from_canonical(&self, v: &BigUint) -> BigUint {
        v.clone()
    }
    fn mask_random<R: Rng + ?Sized>(&self, rng: &mut R) -> BigUint {
        match &self.0 {
            DomainInner::F61(f) => f.to_biguint(&f.random(rng)),
            DomainInner::F127(f) => f.to_biguint(&f.random(rng)),
            DomainInner::Big(f) => f.to_biguint(&f.random(rng)),
            DomainInner::Ring(r) => r.mask_random(rng),
        }
    }
}

/// The concrete sketch behind an [`AnySketch`].
#[derive(Clone, Debug, PartialEq)]
enum SketchInner {
    F61(Sketch<Mersenne61>),
    F127(Sketch<Mersenne127>),
    Big(Sketch<BigPrime>),
    Wide(WideSketch<Mersenne61>),
    Integer(IntegerSketch),
}

/// A sketch whose scheme and field were chosen at run time from
/// [`AnyParams`]: keys [`BigUint`] in `[1, N]`, counts [`BigInt`],
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
/// };
///
/// let ctx = RoundContext { session: SessionId([2; 32]), round: 0 };
/// for scheme in [Scheme::FieldKeys, Scheme::WideKeys { hash_key: [9; 32] }, Scheme::Integer] {
///     let params = AnyParams::new(scheme, 3, 1000u32)
///         .with_counts(CountPolicy::unsigned(100u32))
///         .validate()?;
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
            SketchInner::F61(s) => canon(s.field(), s.elements()),
            SketchInner::F127(s) => canon(s.field(), s.elements()),
            SketchInner::Big(s) => canon(s.field(), s.elements()),
            SketchInner::Wide(s) => canon(s.params().field(), s.elements()),
            SketchInner::Integer(s) => s.elements().to_vec(),
        }
    }

    fn mismatch() -> SketchError {
        SketchError::Params(ParamsError::ParamsMismatch {
            what: "sketch scheme or field",
        })
    }

    /// `self op= other` on the concrete sketches.
    fn combine(&mut self, other: &Self, subtract: bool) -> SketchResult<()> {
        fn op<S: LinearSketch>(a: &mut S, b: &S, subtract: bool) -> SketchResult<()> {
            if subtract { a.subtract(b) } else { a.add(b) }
        }
        match (&mut self.inner, &other.inner) {
            (SketchInner::F61(a), SketchInner::F61(b)) => op(a, b, subtract)?,
            (SketchInner::F127(a), SketchInner::F127(b)) => op(a, b, subtract)?,
            (SketchInner::Big(a), SketchInner::Big(b)) => op(a, b, subtract)?,
            (SketchInner::Wide(a), SketchInner::Wide(b)) => op(a, b, subtract)?,
            (SketchInner::Integer(a), SketchInner::Integer(b)) => op(a, b, subtract)?,
            _ => return Err(Self::mismatch()),
        }
        self.changed();
        Ok(())
    }
}

/// A decoded field count as an integer, by the count policy.
fn field_count<F: FiniteField>(f: &F, policy: &CountPolicy, c: &F::Elem) -> BigInt {
    match policy {
        CountPolicy::Signed { .. } => f.to_centered(c),
        _ => BigInt::from(f.to_biguint(c)),
    }
}

fn decode_field<F: FiniteField>(s: &Sketch<F>) -> SketchResult<SparseVector<BigUint, BigInt>> {
    let f = s.field();
    let policy = s.params().counts();
    let v = s.decode()?;
    Ok(SparseVector::from_sorted(
        v.into_iter()
            .map(|(k, c)| (k, field_count(f, policy, &c)))
            .collect(),
    ))
}

impl LinearSketch for AnySketch {
    type Params = ValidAnyParams;
    type Key = BigUint;
    type Count = BigInt;
    type Elem = BigUint;

    fn new(params: &ValidAnyParams) -> Self {
        let inner = match &params.inner {
            ParamsInner::F61(p) => SketchInner::F61(Sketch::new(p)),
            ParamsInner::F127(p) => SketchInner::F127(Sketch::new(p)),
            ParamsInner::Big(p) => SketchInner::Big(Sketch::new(p)),
            ParamsInner::Wide(p) => SketchInner::Wide(WideSketch::new(p)),
            ParamsInner::Integer(p) => SketchInner::Integer(IntegerSketch::new(p)),
        };
        Self::wrap(params, inner)
    }

    fn params(&self) -> &ValidAnyParams {
        &self.params
    }

    /// Adds `count` at `key`: the count goes through the policy (as
    /// [`ValidSketchParams::signed_count`]); wide keys travel as their
    /// little-endian bytes; integer counts must be positive.
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`] outside `[1, N]`;
    /// [`ParamsError::InvalidCount`] for a count the policy refuses.
    fn insert(&mut self, key: &BigUint, count: &BigInt) -> SketchResult<()> {
        if key.is_zero() || key > self.params.key_domain() {
            return Err(SketchError::Params(ParamsError::KeyOutOfDomain {
                key: key.to_string(),
                domain: self.params.key_domain().to_string(),
            }));
        }
        match &mut self.inner {
            SketchInner::F61(s) => s.insert(key, &s.params().signed_count(count.clone())?)?,
            SketchInner::F127(s) => s.insert(key, &s.params().signed_count(count.clone())?)?,
            SketchInner::Big(s) => s.insert(key, &s.params().signed_count(count.clone())?)?,
            SketchInner::Wide(s) => {
                let c = s.params().sketch_params().signed_count(count.clone())?;
                s.insert_bytes(&key.to_bytes_le(), &c)?;
            }
            SketchInner::Integer(s) => {
                let c = count
                    .to_biguint()
                    .filter(|_| count.is_positive())
                    .ok_or_else(|| {
                        SketchError::Params(ParamsError::InvalidCount {
                            count: count.to_string(),
                            reason: "integer sketch counts are in [1, max_total]",
                        })
                    })?;
                s.insert(key, &c)?;
            }
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
            ParamsInner::F61(p) => {
                SketchInner::F61(Sketch::from_elements(p, uncanon(p.field(), &elements)?)?)
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
            SketchInner::F61(s) => decode_field(s),
            SketchInner::F127(s) => decode_field(s),
            SketchInner::Big(s) => decode_field(s),
            SketchInner::Wide(s) => {
                let p = s.params();
                let policy = p.sketch_params().counts();
                let mut out: Vec<(BigUint, BigInt)> = s
                    .decode()?
                    .into_iter()
                    .map(|(k, c)| {
                        (
                            BigUint::from_bytes_le(&k),
                            field_count(p.field(), policy, &c),
                        )
                    })
                    .collect();
                out.sort_by(|a, b| a.0.cmp(&b.0));
                Ok(SparseVector::from_sorted(out))
            }
            SketchInner::Integer(s) => Ok(SparseVector::from_sorted(
                s.decode()?
                    .into_iter()
                    .map(|(k, c)| (k, BigInt::from(c)))
                    .collect(),
            )),
        }
    }

    fn is_zero(&self) -> bool {
        self.elements().iter().all(Zero::is_zero)
    }
}

impl LinearParams for ValidAnyParams {
    type Elem = BigUint;
    type Domain = AnyDomain;

    fn mask_domain(&self) -> AnyDomain {
        AnyDomain(match &self.inner {
            ParamsInner::F61(p) => DomainInner::F61(*p.field()),
            ParamsInner::F127(p) => DomainInner::F127(*p.field()),
            ParamsInner::Big(p) => DomainInner::Big(p.field().clone()),
            ParamsInner::Wide(p) => DomainInner::F61(*p.field()),
            ParamsInner::Integer(p) => DomainInner::Ring(p.ring().clone()),
        })
    }

    fn num_elements(&self) -> usize {
        match &self.inner {
            ParamsInner::F61(p) => p.num_elements(),
            ParamsInner::F127(p) => p.num_elements(),
            ParamsInner::Big(p) => p.num_elements(),
            ParamsInner::Wide(p) => p.num_elements(),
            ParamsInner::Integer(p) => p.num_elements(),
        }
    }

    fn check_same(&self, other: &Self) -> SketchResult<()> {
        match (&self.inner, &other.inner) {
            (ParamsInner::F61(a), ParamsInner::F61(b)) => a.check_same(b),
            (ParamsInner::F127(a), ParamsInner::F127(b)) => a.check_same(b),
            (ParamsInner::Big(a), ParamsInner::Big(b)) => a.check_same(b),
            (ParamsInner::Wide(a), ParamsInner::Wide(b)) => a.check_same(b),
            (ParamsInner::Integer(a), ParamsInner::Integer(b)) => a.check_same(b),
            _ => Err(AnySketch::mismatch()),
        }
    }

    /// The concrete sketch's frame: the same bytes.
    fn frame(
        &self,
        masked: bool,
        elements: &[BigUint],
        client_id: u64,
        ctx: &RoundContext,
    ) -> Frame {
        match &self.inner {
            ParamsInner::F61(p) => p.frame(masked, &reduced(p.field(), elements), client_id, ctx),
            ParamsInner::F127(p) => p.frame(masked, &reduced(p.field(), elements), client_id, ctx),
            ParamsInner::Big(p) => p.frame(masked, &reduced(p.field(), elements), client_id, ctx),
            ParamsInner::Wide(p) => p.frame(masked, &reduced(p.field(), elements), client_id, ctx),
            ParamsInner::Integer(p) => p.frame(masked, elements, client_id, ctx),
        }
    }

    fn parse_frame(&self, masked: bool, frame: &Frame) -> SketchResult<Vec<BigUint>> {
        Ok(match &self.inner {
            ParamsInner::F61(p) => canon(p.field(), &p.parse_frame(masked, frame)?),
            ParamsInner::F127(p) => canon(p.field(), &p.parse_frame(masked, frame)?),
            ParamsInner::Big(p) => canon(p.field(), &p.parse_frame(masked, frame)?),
            ParamsInner::Wide(p) => canon(p.field(), &p.parse_frame(masked, frame)?),
            ParamsInner::Integer(p) => p.parse_frame(masked, frame)?,
        })
    }
}

/// Field elements of representatives, reduced modulo `p` (elements of an
/// [`AnySketch`] or a checked message are canonical already; reducing
/// instead of refusing keeps [`LinearParams::frame`] infallible).
fn reduced<F: FiniteField>(f: &F, e: &[BigUint]) -> Vec<F::Elem> {
    e.iter().map(|x| f.from_biguint(x)).collect()
}
