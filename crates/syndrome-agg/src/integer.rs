//! The ring and the parameters of the deterministic scheme of Appendix K
//! of the paper (the sketch is [`IntegerSketch`](crate::IntegerSketch)):
//! syndromes as exact integers under a power-of-two modulus `p'`, decoded
//! over the rationals with the integer root finder, no randomness
//! anywhere.

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use num_bigint::BigUint;
use num_traits::{CheckedSub, One, Zero};
use serde::{Deserialize, Serialize};

use crate::error::{SketchResult, invalid};
use masked_sum::masking::MaskDomain;

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
    /// `max_total`, with [`DEFAULT_EXTRA`](crate::params::DEFAULT_EXTRA) check
    /// syndromes.
    pub fn new(
        capacity: usize,
        key_domain: impl Into<BigUint>,
        max_total: impl Into<BigUint>,
    ) -> Self {
        Self {
            capacity,
            key_domain: key_domain.into(),
            extra: crate::params::DEFAULT_EXTRA,
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
    /// [`ParamsError::InvalidParams`](crate::ParamsError::InvalidParams) for `t = 0`, `N = 0`, `T = 0`, or a
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
