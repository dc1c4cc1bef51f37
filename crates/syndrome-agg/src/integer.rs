//! The deterministic scheme of Appendix K of the paper: syndromes as exact
//! integers under a power-of-two modulus `p'`, decoded over the rationals
//! with the integer root finder, no randomness anywhere.

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use core::fmt;

use num_bigint::BigUint;
use num_traits::{CheckedSub, One, Zero};
use serde::{Deserialize, Serialize};

use crate::error::{check_len, invalid};
use crate::masking::{MaskDomain, MaskVector};
use crate::{SketchError, SketchResult};

/// The default cap on the size of an integer sketch, `(2t + r) * k` bits
/// (2^30 bits = 128 MiB), a bound on what parameters read from outside can
/// make the encoder and decoder allocate.
pub const DEFAULT_MAX_INTEGER_BITS: u64 = 1 << 30;

/// The ring `Z / 2^k`: where the masked integer syndromes of Appendix K
/// live. Reduction is a mask of the low `k` bits, and masks sampled from a
/// keystream are never rejected.
///
/// # Example
///
/// ```
/// use syndrome_agg::IntegerRing;
/// use syndrome_agg::masking::MaskDomain;
///
/// let r = IntegerRing::new(8);
/// let a = r.mask_from_canonical(&200u32.into());
/// let b = r.mask_from_canonical(&100u32.into());
/// assert_eq!(r.mask_add(&a, &b), 44u32.into()); // 300 mod 256
/// assert_eq!(r.mask_sub(&b, &a), 156u32.into());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct IntegerRing {
    bits: u64,
}

impl IntegerRing {
    /// `Z / 2^bits`.
    pub fn new(bits: u64) -> Self {
        Self { bits }
    }

    /// `k`, the number of bits.
    pub fn bits(&self) -> u64 {
        self.bits
    }

    /// `v mod 2^k`.
    pub fn reduce(&self, v: &BigUint) -> BigUint {
        if v.bits() <= self.bits {
            return v.clone();
        }
        v & &self.low_mask()
    }

    /// `2^bits - 1`.
    fn low_mask(&self) -> BigUint {
        let mut m = BigUint::zero();
        m.set_bit(self.bits, true);
        m.checked_sub(&BigUint::one()).unwrap_or_default()
    }
}

/// `a + b` for big integers: a sum cannot overflow (it grows), the one
/// reason this module allows an arithmetic operator.
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn big_add(a: &BigUint, b: &BigUint) -> BigUint {
    a + b
}

/// `a * b` for big integers: a product cannot overflow (it grows).
#[allow(clippy::arithmetic_side_effects)]
pub(crate) fn big_mul(a: &BigUint, b: &BigUint) -> BigUint {
    a * b
}

impl MaskDomain for IntegerRing {
    type Elem = BigUint;
    fn mask_modulus(&self) -> BigUint {
        let mut m = BigUint::zero();
        m.set_bit(self.bits, true);
        m
    }
    fn mask_zero(&self) -> BigUint {
        BigUint::zero()
    }
    fn mask_add(&self, a: &BigUint, b: &BigUint) -> BigUint {
        self.reduce(&big_add(a, b))
    }
    fn mask_sub(&self, a: &BigUint, b: &BigUint) -> BigUint {
        // a - b mod 2^k, for a, b below 2^k: a - b, or 2^k - (b - a).
        match a.checked_sub(b) {
            Some(d) => d,
            None => b
                .checked_sub(a)
                .and_then(|d| self.mask_modulus().checked_sub(&d))
                .unwrap_or_default(),
        }
    }
    fn mask_from_canonical(&self, v: &BigUint) -> BigUint {
        self.reduce(v)
    }
}

/// Parameters of the Appendix K scheme: capacity `t`, key domain `[1, N]`,
/// `r` extra check syndromes and the largest total count `T` of an
/// aggregate (counts are positive integers).
///
/// # The modulus
///
/// The paper asks for `p' >= max(K L B^(2dKL), n) + 1`, "larger than the
/// largest possible `S_i`". Exactly: an aggregate with nonzero counts `q_j`
/// at keys `j <= N`, `sum_j q_j <= T`, has for `i = 1..2t+r`
///
/// `0 <= S_i = sum_j q_j j^(i-1) <= (sum_j q_j) N^(i-1) <= T N^(2t+r-1)`,
///
/// and `T N^(2t+r-1) >= T`. So any `p' > T N^(2t+r-1)` keeps every `S_i`
/// exact: the sum of the masked messages modulo `p'` is the integer `S_i`
/// itself. We take `p' = 2^k` with `k` the bit length of `T N^(2t+r-1)`
/// (the smallest power of two above it), so reduction is a mask and masks
/// need no rejection. `p'` need not be prime: after the sum the server
/// works over the rationals, not modulo `p'`.
///
/// # Example
///
/// ```
/// use syndrome_agg::IntegerParams;
///
/// // t = 2, N = 100, r = 1, T = 50: k = bits(50 * 100^4) = 33.
/// let p = IntegerParams::new(2, 100u32, 50u32).with_extra(1).validate()?;
/// assert_eq!(p.ring().bits(), 33);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct IntegerParams {
    capacity: usize,
    key_domain: BigUint,
    extra: usize,
    max_total: BigUint,
    max_bits: u64,
}

impl IntegerParams {
    /// Capacity `t`, keys `1..=key_domain`, total count at most
    /// `max_total`, with [`DEFAULT_EXTRA`](crate::DEFAULT_EXTRA) check
    /// syndromes.
    pub fn new(
        capacity: usize,
        key_domain: impl Into<BigUint>,
        max_total: impl Into<BigUint>,
    ) -> Self {
        Self {
            capacity,
            key_domain: key_domain.into(),
            extra: crate::DEFAULT_EXTRA,
            max_total: max_total.into(),
            max_bits: DEFAULT_MAX_INTEGER_BITS,
        }
    }

    /// Sets `r`.
    #[must_use]
    pub fn with_extra(mut self, extra: usize) -> Self {
        self.extra = extra;
        self
    }

    /// Sets the cap on `(2t + r) * k` bits.
    #[must_use]
    pub fn with_max_bits(mut self, max_bits: u64) -> Self {
        self.max_bits = max_bits;
        self
    }

    /// Checks the parameters and derives `k`.
    ///
    /// # Errors
    ///
    /// [`SketchError::InvalidParams`] for `t = 0`, `N = 0`, `T = 0`, or a
    /// sketch above the size cap.
    pub fn validate(self) -> SketchResult<ValidIntegerParams> {
        let m = crate::params::syndrome_count(self.capacity, &self.key_domain, self.extra)?;
        if self.max_total.is_zero() {
            return Err(invalid("max_total must be at least 1"));
        }
        // Bound the size before computing N^(m-1): k <= bits(T) + (m-1) bits(N).
        let m64 = u64::try_from(m).map_err(|_| invalid("2t + r too large"))?;
        let k_upper = m64
            .saturating_sub(1)
            .checked_mul(self.key_domain.bits())
            .and_then(|v| v.checked_add(self.max_total.bits()))
            .ok_or_else(|| invalid("modulus size overflows"))?;
        if k_upper.checked_mul(m64).is_none_or(|b| b > self.max_bits) {
            return Err(invalid(format!(
                "integer sketch of (2t + r) * k > {} bits",
                self.max_bits
            )));
        }
        let bound = big_mul(
            &self.max_total,
            &num_traits::pow::pow(self.key_domain.clone(), m.saturating_sub(1)),
        );
        let k = bound.bits();
        Ok(ValidIntegerParams {
            ring: IntegerRing::new(k),
            num_syndromes: m,
            params: self,
        })
    }
}

/// [`IntegerParams`] with the derived modulus `p' = 2^k`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValidIntegerParams {
    params: IntegerParams,
    ring: IntegerRing,
    num_syndromes: usize,
}

impl ValidIntegerParams {
    /// The ring `Z / p'`, `p' = 2^k`.
    pub fn ring(&self) -> &IntegerRing {
        &self.ring
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
    /// The largest total count `T`.
    pub fn max_total(&self) -> &BigUint {
        &self.params.max_total
    }
    /// `2t + r`.
    pub fn num_syndromes(&self) -> usize {
        self.num_syndromes
    }
}

/// The integer sketch of Appendix K: `S_i = sum_j q_j j^(i-1) mod 2^k`,
/// `i = 1..2t+r`, exact for honest aggregates (see [`IntegerParams`]).
/// Linear like [`Sketch`](crate::Sketch), and masked with
/// [`IntegerRing`] masks.
///
/// # Example
///
/// ```
/// use syndrome_agg::{IntegerParams, IntegerSketch};
/// use syndrome_agg::masking::deal_zero_sum_masks;
///
/// let params = IntegerParams::new(2, 1000u32, 100u32).validate()?;
/// let masks = deal_zero_sum_masks(params.ring(), 2, params.num_syndromes(), &mut testkit::rng("k"));
/// let mut sum = IntegerSketch::encode(&params, [(10u32, 3u64)])?.masked(&masks[0])?;
/// sum.add(&IntegerSketch::encode(&params, [(900u32, 4u64)])?.masked(&masks[1])?)?;
/// let decoded = sum.decode()?;
/// assert_eq!(decoded, vec![(10u32.into(), 3u32.into()), (900u32.into(), 4u32.into())]);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct IntegerSketch {
    params: ValidIntegerParams,
    syndromes: Vec<BigUint>,
}

impl fmt::Debug for IntegerSketch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntegerSketch")
            .field("params", &self.params)
            .field("syndromes", &self.syndromes.len())
            .finish()
    }
}

impl IntegerSketch {
    /// The sketch of the zero vector.
    pub fn new(params: &ValidIntegerParams) -> Self {
        Self {
            params: params.clone(),
            syndromes: vec![BigUint::zero(); params.num_syndromes],
        }
    }

    /// A sketch from received syndromes.
    ///
    /// # Errors
    ///
    /// [`SketchError::WrongLength`] unless there are `2t + r`;
    /// [`SketchError::NonCanonical`] for a value `>= 2^k`.
    pub fn from_syndromes(
        params: &ValidIntegerParams,
        syndromes: Vec<BigUint>,
    ) -> SketchResult<Self> {
        check_len(params.num_syndromes, syndromes.len())?;
        if syndromes.iter().any(|s| s.bits() > params.ring.bits) {
            return Err(SketchError::NonCanonical);
        }
        Ok(Self {
            params: params.clone(),
            syndromes,
        })
    }

    /// The sketch of `(key, count)` entries with positive counts.
    ///
    /// # Errors
    ///
    /// [`SketchError::KeyOutOfDomain`] for a key outside `[1, N]`,
    /// [`SketchError::InvalidCount`] for a zero count or one above `T`.
    pub fn encode<K, I>(params: &ValidIntegerParams, entries: I) -> SketchResult<Self>
    where
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, u64)>,
    {
        let mut s = Self::new(params);
        for (k, c) in entries {
            s.insert(&k.into(), &BigUint::from(c))?;
        }
        Ok(s)
    }

    /// Adds `count` at `key`.
    ///
    /// # Errors
    ///
    /// As [`encode`](Self::encode).
    pub fn insert(&mut self, key: &BigUint, count: &BigUint) -> SketchResult<()> {
        if key.is_zero() || *key > self.params.params.key_domain {
            return Err(SketchError::KeyOutOfDomain {
                key: key.to_string(),
                domain: self.params.params.key_domain.to_string(),
            });
        }
        if count.is_zero() || *count > self.params.params.max_total {
            return Err(SketchError::InvalidCount {
                count: count.to_string(),
                reason: "integer sketch counts are in [1, max_total]",
            });
        }
        let ring = &self.params.ring;
        let mut pw = count.clone();
        let n = self.syndromes.len();
        for (i, s) in self.syndromes.iter_mut().enumerate() {
            *s = ring.mask_add(s, &pw);
            if i.saturating_add(1) < n {
                pw = ring.reduce(&big_mul(&pw, key));
            }
        }
        Ok(())
    }

    /// `self += other (mod 2^k)`.
    ///
    /// # Errors
    ///
    /// [`SketchError::ParamsMismatch`] if the parameters differ.
    pub fn add(&mut self, other: &Self) -> SketchResult<()> {
        if self.params != other.params {
            return Err(SketchError::ParamsMismatch {
                what: "integer parameters",
            });
        }
        let ring = &self.params.ring;
        for (a, b) in self.syndromes.iter_mut().zip(&other.syndromes) {
            *a = ring.mask_add(a, b);
        }
        Ok(())
    }

    /// The sketch plus a mask vector: a client's message.
    ///
    /// # Errors
    ///
    /// [`SketchError::WrongLength`] unless the mask has `2t + r` elements.
    pub fn masked(&self, mask: &MaskVector<BigUint>) -> SketchResult<Self> {
        check_len(self.syndromes.len(), mask.0.len())?;
        let ring = &self.params.ring;
        let syndromes = self
            .syndromes
            .iter()
            .zip(&mask.0)
            .map(|(s, z)| ring.mask_add(s, z))
            .collect();
        Ok(Self {
            params: self.params.clone(),
            syndromes,
        })
    }

    /// The syndromes.
    pub fn syndromes(&self) -> &[BigUint] {
        &self.syndromes
    }

    /// The parameters.
    pub fn params(&self) -> &ValidIntegerParams {
        &self.params
    }
}
