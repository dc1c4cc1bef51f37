//! The parameters of an [`AnySketch`](crate::AnySketch): the scheme, the
//! field chosen from them, and the mask domain.

use field::primes::{FieldChoice, cheapest_field};
use field::{BigPrime, FiniteField, Fp64, Mersenne127};
use num_bigint::BigUint;
use num_traits::Zero;
use rand::Rng;

use crate::error::{DecodeError, ParamsError, SketchError, SketchResult, invalid};
use crate::integer::{IntegerParams, IntegerRing, ValidIntegerParams};
use crate::params::{CountPolicy, SketchParams, ValidSketchParams};
use crate::sketch::partitioned::{PartitionParams, ValidPartitionParams};
use crate::sketch::wide::params::{ValidWideKeyParams, WideKeyParams};
use crate::sketch::{LinearParams, RawParams};
use crate::wire::Frame;
use masked_sum::RoundContext;
use masked_sum::masking::MaskDomain;

/// Whether [`Scheme::FieldKeys`] with this field bound (the largest key
/// or count bound the field must hold) decodes in the one-word field
/// GF(27 * 2^59 + 1), the decoder's fastest: above it the field has more
/// than one word and no Graeffe root finding, and [`Scheme::WideKeys`]
/// (in the one-word field whatever the key size) decodes faster.
///
/// # Example
///
/// ```
/// use num_bigint::BigUint;
/// use syndrome_agg::fits_word_field;
///
/// assert!(fits_word_field(&BigUint::from(1u64 << 62)));
/// assert!(!fits_word_field(&(BigUint::from(1u8) << 64u32)));
/// ```
pub fn fits_word_field(bound: &BigUint) -> bool {
    *bound < BigUint::from(field::P_PROTH)
}

/// The largest field bound, in bits, that [`Scheme::FieldKeys`] accepts:
/// beyond it the search for the smallest prime above the bound takes
/// seconds to minutes (56 s for a 2000-column grid), and the field's
/// decoder is the slowest there is; [`Scheme::WideKeys`] decodes any key
/// size in the one-word field.
pub const MAX_FIELD_KEY_BITS: u64 = 2048;

/// Which kind of sketch [`AnyParams`] builds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Scheme {
    /// Keys are elements of the cheapest prime field that holds the key
    /// domain and the count bound (Algorithm 2 of the paper):
    /// `GF(27 * 2^59 + 1)`, `GF(2^127 - 1)` or the smallest prime above the
    /// bound, via [`cheapest_field`].
    FieldKeys,
    /// Keys travel as their little-endian bytes (at most
    /// `ceil(bits(N) / 8)`) in a wide-key sketch over `GF(27 * 2^59 + 1)` (see
    /// [`WideSketch`](crate::wide::WideSketch)), hashed under the session's public `hash_key`.
    WideKeys {
        /// The public 32-byte hash key of the session.
        hash_key: [u8; 32],
    },
    /// The deterministic integer sketch of Appendix K
    /// ([`IntegerSketch`](crate::IntegerSketch)); the count policy must be
    /// [`CountPolicy::Unsigned`].
    Integer,
    /// Keys in `GF(27 * 2^59 + 1)` hashed into buckets, each an independent
    /// field sketch (see [`partitioned`](crate::partitioned)): the default
    /// bucket count [`default_buckets`](crate::partitioned::default_buckets)
    /// and overflow bound `2^-30`. The key domain and the field bound must
    /// fit that field ([`fits_word_field`](crate::fits_word_field)).
    Partitioned {
        /// The public 32-byte bucket hash key of the session.
        hash_key: [u8; 32],
    },
}

impl Scheme {
    /// A short name for reports: `"field keys"`, `"wide keys"`,
    /// `"integer"` or `"partitioned"`.
    ///
    /// # Example
    ///
    /// ```
    /// use syndrome_agg::Scheme;
    ///
    /// assert_eq!(Scheme::WideKeys { hash_key: [0; 32] }.name(), "wide keys");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Self::FieldKeys => "field keys",
            Self::WideKeys { .. } => "wide keys",
            Self::Integer => "integer",
            Self::Partitioned { .. } => "partitioned",
        }
    }
}

/// The public parameters of an [`AnySketch`](crate::AnySketch): a [`Scheme`] and the
/// [`SketchParams`](crate::SketchParams) (capacity `t`, key domain `[1, N]`, `r` extra check
/// syndromes, count policy). [`validate`](Self::validate) picks the field.
///
/// # Example
///
/// ```
/// use syndrome_agg::{
///     AnyParams, AnySketch, CountPolicy, LinearParams, LinearSketch, Scheme, SketchParams,
/// };
///
/// let sketch = SketchParams::new(4, 1u32 << 20).with_counts(CountPolicy::unsigned(1000u32));
/// let params = AnyParams::new(Scheme::FieldKeys, sketch).validate()?;
/// assert_eq!(params.modulus_bits(), 64); // GF(27 * 2^59 + 1) holds 2^20 keys
/// let mut s = AnySketch::new(&params);
/// s.insert(&7u32.into(), &3.into())?;
/// assert_eq!(s.decode()?.into_entries(), vec![(7u32.into(), 3.into())]);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnyParams {
    scheme: Scheme,
    sketch: SketchParams,
    field_bound: BigUint,
}

impl AnyParams {
    /// `sketch` under `scheme`.
    pub fn new(scheme: Scheme, sketch: SketchParams) -> Self {
        Self {
            scheme,
            sketch,
            field_bound: BigUint::zero(),
        }
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
    /// As [`SketchParams::validate`](crate::SketchParams::validate), [`WideKeyParams::validate`] and
    /// [`IntegerParams::validate`]; [`ParamsError::InvalidParams`] for an
    /// integer scheme without an unsigned count policy, or wide keys longer
    /// than a `usize`.
    pub fn validate(self) -> SketchResult<ValidAnyParams> {
        let inner = match &self.scheme {
            Scheme::FieldKeys => {
                let base = self.sketch.clone();
                let bound = base.field_bound().max(self.field_bound.clone());
                if bound.bits() > MAX_FIELD_KEY_BITS {
                    return Err(invalid(
                        "field keys beyond 2^2048 would need a prime search of minutes and a \
                         decoder without fast root finding: use wide keys",
                    ));
                }
                match cheapest_field(&bound) {
                    FieldChoice::Proth(f) => ParamsInner::Word(base.validate(f)?),
                    FieldChoice::Mersenne127(f) => ParamsInner::F127(base.validate(f)?),
                    FieldChoice::Big(f) => ParamsInner::Big(base.validate(f)?),
                }
            }
            Scheme::WideKeys { hash_key } => {
                let key_len = usize::try_from(self.sketch.key_domain().bits().div_ceil(8))
                    .map_err(|_| invalid("wide keys longer than a usize"))?;
                ParamsInner::Wide(
                    WideKeyParams::new(self.sketch.capacity(), key_len, *hash_key)
                        .with_extra(self.sketch.extra())
                        .with_counts(self.sketch.counts().clone())
                        .validate(Fp64::proth())?,
                )
            }
            Scheme::Partitioned { hash_key } => {
                let base = &self.sketch;
                let bound = base.field_bound().max(self.field_bound.clone());
                if !fits_word_field(&bound) {
                    return Err(invalid(
                        "partitioned sketches need keys and counts in GF(27 * 2^59 + 1): \
                         use wide keys",
                    ));
                }
                ParamsInner::Partitioned(
                    PartitionParams::new(base.capacity(), base.key_domain().clone(), *hash_key)
                        .with_extra(base.extra())
                        .with_counts(base.counts().clone())
                        .validate(Fp64::proth())?,
                )
            }
            Scheme::Integer => {
                let CountPolicy::Unsigned { max_total } = self.sketch.counts() else {
                    return Err(invalid("the integer scheme needs unsigned counts"));
                };
                ParamsInner::Integer(
                    IntegerParams::new(
                        self.sketch.capacity(),
                        self.sketch.key_domain().clone(),
                        max_total.clone(),
                    )
                    .with_extra(self.sketch.extra())
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
// The partitioned parameters carry the bucket hasher's keyed state; one
// value per session, so its size does not matter and boxing it would only
// add an indirection to every access.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub(super) enum ParamsInner {
    Word(ValidSketchParams<Fp64>),
    F127(ValidSketchParams<Mersenne127>),
    Big(ValidSketchParams<BigPrime>),
    Wide(ValidWideKeyParams<Fp64>),
    Integer(ValidIntegerParams),
    Partitioned(ValidPartitionParams<Fp64>),
}

/// [`AnyParams`] validated, with the field (or ring) chosen.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidAnyParams {
    params: AnyParams,
    pub(super) inner: ParamsInner,
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
    /// The sketch parameters (capacity, key domain, `r`, count policy).
    pub fn sketch_params(&self) -> &SketchParams {
        &self.params.sketch
    }
    /// The modulus `M` of the elements (the field's `p`, or `2^k`).
    pub fn modulus(&self) -> BigUint {
        self.mask_domain().mask_modulus()
    }
    /// Bits of the modulus `p` (or `k` for the integer ring `Z / 2^k`).
    pub fn modulus_bits(&self) -> u64 {
        match &self.inner {
            ParamsInner::Word(p) => p.field().modulus_bits(),
            ParamsInner::F127(p) => p.field().modulus_bits(),
            ParamsInner::Big(p) => p.field().modulus_bits(),
            ParamsInner::Wide(p) => p.field().modulus_bits(),
            ParamsInner::Integer(p) => p.ring().bits(),
            ParamsInner::Partitioned(p) => p.field().modulus_bits(),
        }
    }

    /// A bound on the size of an honest frame of these parameters: the
    /// elements at the modulus' width, the modulus and the key domain, and
    /// room for the fixed header fields (varints). A receiver passes it to
    /// [`Frame::parse`] so that a sender cannot make it allocate more than
    /// an honest message needs.
    ///
    /// # Example
    ///
    /// ```
    /// use syndrome_agg::{AnyParams, AnySketch, LinearSketch, Scheme, SketchParams};
    /// use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
    ///
    /// let params = AnyParams::new(Scheme::FieldKeys, SketchParams::new(50, 1000u32)).validate()?;
    /// let ctx = RoundContext { session: SessionId([0; 32]), round: 0 };
    /// let bytes = AnySketch::new(&params).to_frame(1, &ctx).to_bytes()?;
    /// assert!(bytes.len() <= params.max_frame_len());
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    pub fn max_frame_len(&self) -> usize {
        let bytes = |bits: u64| usize::try_from(bits.div_ceil(8)).unwrap_or(usize::MAX);
        let width = bytes(self.modulus_bits());
        let domain = bytes(self.sketch_params().key_domain().bits());
        self.num_elements()
            .saturating_add(1)
            .saturating_mul(width)
            .saturating_add(domain)
            .saturating_add(256)
    }
}

/// Canonical representatives of field elements.
pub(super) fn canon<F: FiniteField>(f: &F, e: &[F::Elem]) -> Vec<BigUint> {
    e.iter().map(|x| f.to_biguint(x)).collect()
}

/// Field elements of canonical representatives.
pub(super) fn uncanon<F: FiniteField>(f: &F, e: &[BigUint]) -> SketchResult<Vec<F::Elem>> {
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

/// The mask domain of an [`AnySketch`](crate::AnySketch): the chosen field or ring, with
/// elements as canonical [`BigUint`]s. Random elements are drawn by the
/// concrete field, so a dealer consumes its RNG exactly as it would for
/// the concrete sketch.
#[derive(Clone, Debug, PartialEq)]
pub struct AnyDomain(DomainInner);

#[derive(Clone, Debug, PartialEq)]
enum DomainInner {
    Word(Fp64),
    F127(Mersenne127),
    Big(BigPrime),
    Ring(IntegerRing),
}

impl MaskDomain for AnyDomain {
    type Elem = BigUint;
    fn mask_modulus(&self) -> BigUint {
        match &self.0 {
            DomainInner::Word(f) => f.characteristic(),
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
            DomainInner::Word(f) => f.to_biguint(&f.random(rng)),
            DomainInner::F127(f) => f.to_biguint(&f.random(rng)),
            DomainInner::Big(f) => f.to_biguint(&f.random(rng)),
            DomainInner::Ring(r) => r.mask_random(rng),
        }
    }
}

impl LinearParams for ValidAnyParams {
    type Elem = BigUint;
    type Domain = AnyDomain;

    fn mask_domain(&self) -> AnyDomain {
        AnyDomain(match &self.inner {
            ParamsInner::Word(p) => DomainInner::Word(*p.field()),
            ParamsInner::F127(p) => DomainInner::F127(*p.field()),
            ParamsInner::Big(p) => DomainInner::Big(p.field().clone()),
            ParamsInner::Wide(p) => DomainInner::Word(*p.field()),
            ParamsInner::Partitioned(p) => DomainInner::Word(*p.field()),
            ParamsInner::Integer(p) => DomainInner::Ring(p.ring().clone()),
        })
    }

    fn num_elements(&self) -> usize {
        match &self.inner {
            ParamsInner::Word(p) => p.num_elements(),
            ParamsInner::F127(p) => p.num_elements(),
            ParamsInner::Big(p) => p.num_elements(),
            ParamsInner::Wide(p) => p.num_elements(),
            ParamsInner::Integer(p) => p.num_elements(),
            ParamsInner::Partitioned(p) => p.num_elements(),
        }
    }

    fn check_same(&self, other: &Self) -> SketchResult<()> {
        match (&self.inner, &other.inner) {
            (ParamsInner::Word(a), ParamsInner::Word(b)) => a.check_same(b),
            (ParamsInner::F127(a), ParamsInner::F127(b)) => a.check_same(b),
            (ParamsInner::Big(a), ParamsInner::Big(b)) => a.check_same(b),
            (ParamsInner::Wide(a), ParamsInner::Wide(b)) => a.check_same(b),
            (ParamsInner::Integer(a), ParamsInner::Integer(b)) => a.check_same(b),
            (ParamsInner::Partitioned(a), ParamsInner::Partitioned(b)) => a.check_same(b),
            _ => Err(mismatch()),
        }
    }
}

impl RawParams for ValidAnyParams {
    /// The concrete sketch's frame: the same bytes.
    fn frame(
        &self,
        masked: bool,
        elements: &[BigUint],
        client_id: u64,
        ctx: &RoundContext,
    ) -> Frame {
        match &self.inner {
            ParamsInner::Word(p) => p.frame(masked, &reduced(p.field(), elements), client_id, ctx),
            ParamsInner::F127(p) => p.frame(masked, &reduced(p.field(), elements), client_id, ctx),
            ParamsInner::Big(p) => p.frame(masked, &reduced(p.field(), elements), client_id, ctx),
            ParamsInner::Wide(p) => p.frame(masked, &reduced(p.field(), elements), client_id, ctx),
            ParamsInner::Integer(p) => p.frame(masked, elements, client_id, ctx),
            ParamsInner::Partitioned(p) => {
                p.frame(masked, &reduced(p.field(), elements), client_id, ctx)
            }
        }
    }

    fn parse_frame(&self, masked: bool, frame: &Frame) -> SketchResult<Vec<BigUint>> {
        Ok(match &self.inner {
            ParamsInner::Word(p) => canon(p.field(), &p.parse_frame(masked, frame)?),
            ParamsInner::F127(p) => canon(p.field(), &p.parse_frame(masked, frame)?),
            ParamsInner::Big(p) => canon(p.field(), &p.parse_frame(masked, frame)?),
            ParamsInner::Wide(p) => canon(p.field(), &p.parse_frame(masked, frame)?),
            ParamsInner::Integer(p) => p.parse_frame(masked, frame)?,
            ParamsInner::Partitioned(p) => canon(p.field(), &p.parse_frame(masked, frame)?),
        })
    }
}

/// Field elements of representatives, reduced modulo `p` (elements of an
/// [`AnySketch`](crate::AnySketch) or a checked message are canonical already; reducing
/// instead of refusing keeps [`RawParams::frame`] infallible).
fn reduced<F: FiniteField>(f: &F, e: &[BigUint]) -> Vec<F::Elem> {
    e.iter().map(|x| f.from_biguint(x)).collect()
}

/// Sketches or parameters of different schemes or fields.
pub(super) fn mismatch() -> SketchError {
    SketchError::Params(ParamsError::ParamsMismatch {
        what: "sketch scheme or field",
    })
}

/// Parameters of every scheme and field an [`AnyParams`] may choose
/// (the word, 127-bit and big fields for field keys, wide keys,
/// partitions, the integer ring), capacity 6 with 2 check syndromes and
/// unsigned counts up to 50: the cases the tests of every scheme run.
#[cfg(test)]
pub(super) fn every_scheme() -> Vec<ValidAnyParams> {
    let counts = CountPolicy::unsigned(50u32);
    let small = SketchParams::new(6, 100u32)
        .with_extra(2)
        .with_counts(counts.clone());
    let wide = SketchParams::new(6, BigUint::from(1u8) << 100u32)
        .with_extra(2)
        .with_counts(counts.clone());
    let big = SketchParams::new(6, BigUint::from(1u8) << 130u32).with_counts(counts);
    [
        (Scheme::FieldKeys, small.clone()),
        (Scheme::FieldKeys, wide.clone()),
        (Scheme::FieldKeys, big),
        (Scheme::WideKeys { hash_key: [4; 32] }, wide),
        (Scheme::Partitioned { hash_key: [4; 32] }, small.clone()),
        (Scheme::Integer, small),
    ]
    .into_iter()
    .map(|(scheme, sketch)| {
        AnyParams::new(scheme, sketch)
            .validate()
            .expect("valid test parameters")
    })
    .collect()
}
