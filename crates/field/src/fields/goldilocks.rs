//! GF(2^64 - 2^32 + 1), the word-size field built for number-theoretic
//! transforms: its multiplicative group has order `2^32 (2^32 - 1)`, so it
//! holds `2^32`-th roots of unity, and `2^64 = 2^32 - 1 (mod p)`, so a
//! 128-bit product reduces with shifts, one subtraction and one
//! multiplication by `2^32 - 1`, no division.
//!
//! Polynomial products above a threshold are one transform of each factor,
//! a pointwise product and one inverse transform in the field itself,
//! where the Mersenne fields need several transform primes and a Chinese
//! remainder step (`poly::ntt`).

use num_bigint::BigUint;
use rand::Rng;

use crate::error::word_from_le_bytes;
use crate::fields::word;
use crate::{Field, FieldError, FiniteField};

/// The prime `2^64 - 2^32 + 1`.
pub const P64: u64 = 0xffff_ffff_0000_0001;

/// `2^64 mod p = 2^32 - 1`.
const EPSILON: u64 = 0xffff_ffff;

/// A generator of the multiplicative group.
const GENERATOR: u64 = 7;

/// The largest power of two dividing `p - 1`.
const TWO_ADICITY: u32 = 32;

/// From this many coefficients in the shorter factor, [`Goldilocks`]
/// multiplies polynomials by NTT; below it, Karatsuba. Measured with the
/// `algorithms` bench, group `polymul/goldilocks`, with the transform
/// forced at every size: 3.4 us against 2.4 us at 32 terms, 6.3 us
/// against 6.9 us at 64, 12.6 us against 19.8 us at 128. With the
/// transform tables cached (the ignored test
/// `transform::tests::timing_ntt_threshold`, two factors of `n` terms,
/// medians of 31 alternating rounds) Karatsuba takes 0.97 times the
/// transform product's time at 48 terms, 1.27 times at 56 and 1.5 times
/// at 64, so the crossover moved down to 56 (docs/benchmarks.md).
const NTT_THRESHOLD: usize = 56;

/// GF(2^64 - 2^32 + 1): a zero-sized context over `u64` elements in
/// `0..p`, with NTT polynomial multiplication.
///
/// # Example
///
/// ```
/// use field::{Field, FiniteField, Goldilocks, P64};
///
/// let f = Goldilocks;
/// let minus_one = f.from_u64(P64 - 1);
/// assert_eq!(f.mul(&minus_one, &minus_one), f.one());
/// let x = f.from_u64(123_456_789);
/// assert_eq!(f.mul(&x, &f.inv(&x).unwrap()), f.one());
/// // A 2^32-th root of unity exists.
/// let w = Goldilocks::root_of_unity(32).unwrap();
/// assert_eq!(f.pow_u64(&w, 1 << 31), minus_one);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Goldilocks;

impl Goldilocks {
    /// Reduces any `u128` modulo `p`.
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // word splits
    pub fn reduce128(x: u128) -> u64 {
        let lo = x as u64;
        let hi = (x >> 64) as u64;
        let (hi_hi, hi_lo) = (hi >> 32, hi & EPSILON);
        // x = lo + 2^64 hi_lo + 2^96 hi_hi, with 2^64 = EPSILON and
        // 2^96 = -1 (mod p).
        let (mut t0, borrow) = lo.overflowing_sub(hi_hi);
        if borrow {
            // lo - hi_hi + 2^64 = lo - hi_hi + EPSILON: take EPSILON back.
            t0 = t0.wrapping_sub(EPSILON);
        }
        let t1 = hi_lo * EPSILON; // < 2^64
        let (s, carry) = t0.overflowing_add(t1);
        // A carry is 2^64 = EPSILON; s + EPSILON cannot carry again
        // (s < t1 < 2^64 - 2^32 when t0 + t1 wrapped).
        let s = core::hint::select_unpredictable(carry, s.wrapping_add(EPSILON), s);
        if s >= P64 { s - P64 } else { s }
    }

    /// A primitive `2^log`-th root of unity, for `log <= 32`.
    pub fn root_of_unity(log: u32) -> Option<u64> {
        (log <= TWO_ADICITY).then(|| {
            let f = Self;
            f.pow_u64(&GENERATOR, (P64 - 1) >> log)
        })
    }
}

impl Field for Goldilocks {
    type Elem = u64;

    #[inline(always)]
    fn zero(&self) -> u64 {
        0
    }
    #[inline(always)]
    fn one(&self) -> u64 {
        1
    }
    #[inline(always)]
    fn is_zero(&self, a: &u64) -> bool {
        *a == 0
    }
    #[inline(always)]
    fn add(&self, a: &u64, b: &u64) -> u64 {
        word::add(*a, *b, P64)
    }
    #[inline(always)]
    fn sub(&self, a: &u64, b: &u64) -> u64 {
        word::sub(*a, *b, P64)
    }
    #[inline(always)]
    fn neg(&self, a: &u64) -> u64 {
        word::neg(*a, P64)
    }
    #[inline(always)]
    fn mul(&self, a: &u64, b: &u64) -> u64 {
        Self::reduce128(u128::from(*a) * u128::from(*b))
    }
    fn inv(&self, a: &u64) -> Option<u64> {
        // Fermat: a^(p-2), 64 squarings of one-word products.
        (*a != 0).then(|| self.pow_u64(a, P64 - 2))
    }
    #[inline(always)]
    fn from_u64(&self, v: u64) -> u64 {
        if v >= P64 { v - P64 } else { v }
    }
    #[allow(clippy::unwrap_used)] // a residue mod p < 2^64 fits in u64
    fn from_biguint(&self, v: &BigUint) -> u64 {
        u64::try_from(v % P64).unwrap()
    }
    fn poly_mul(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        crate::poly::transform::products::poly_mul_with_ntt(self, a, b, NTT_THRESHOLD)
    }
    fn poly_transform(&self, b: &[u64], n: usize) -> Option<Vec<u64>> {
        crate::poly::transform::products::ntt_transform(self, b, n, NTT_THRESHOLD)
    }
    fn poly_mul_transformed(&self, a: &[u64], b_hat: &[u64]) -> Option<Vec<u64>> {
        crate::poly::transform::products::ntt_mul_transformed(self, a, b_hat)
    }
    fn poly_untransform(&self, v_hat: Vec<u64>) -> Option<Vec<u64>> {
        crate::poly::transform::products::ntt_untransform(self, v_hat)
    }
}

impl FiniteField for Goldilocks {
    fn two_adicity(&self) -> u32 {
        TWO_ADICITY
    }
    fn two_adic_root(&self, log: u32) -> Option<u64> {
        Self::root_of_unity(log)
    }

    fn characteristic(&self) -> BigUint {
        BigUint::from(P64)
    }
    fn modulus_bits(&self) -> u64 {
        64
    }
    fn to_biguint(&self, a: &u64) -> BigUint {
        BigUint::from(*a)
    }
    fn to_u64(&self, a: &u64) -> Option<u64> {
        Some(*a)
    }
    fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        loop {
            // Rejects only the 2^32 - 1 values at or above p.
            let v = rng.next_u64();
            if v < P64 {
                return v;
            }
        }
    }
    fn byte_len(&self) -> usize {
        8
    }
    fn write_bytes(&self, a: &u64, out: &mut Vec<u8>) {
        out.extend_from_slice(&a.to_le_bytes());
    }
    fn from_bytes(&self, bytes: &[u8]) -> Result<u64, FieldError> {
        word_from_le_bytes(bytes, P64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x mod p` by big integers.
    fn reference(x: u128) -> u64 {
        u64::try_from(x % u128::from(P64)).unwrap_or(u64::MAX)
    }

    #[test]
    fn reduction_matches_big_integer_remainders_at_the_edges() {
        let p = u128::from(P64);
        let edges = [
            0,
            1,
            p - 1,
            p,
            p + 1,
            u128::from(u64::MAX),
            1 << 64,
            (1 << 96) - 1,
            1 << 96,
            (p - 1) * (p - 1),
            u128::MAX,
            u128::MAX - p,
        ];
        for x in edges {
            assert_eq!(Goldilocks::reduce128(x), reference(x), "{x:#x}");
        }
        let mut s = 0x9e37_79b9_7f4a_7c15_u128;
        for _ in 0..10_000 {
            s = s
                .wrapping_mul(0x2545_f491_4f6c_dd1d_0000_0000_0000_0001)
                .wrapping_add(1);
            assert_eq!(Goldilocks::reduce128(s), reference(s), "{s:#x}");
        }
    }

    #[test]
    fn the_transform_product_equals_karatsuba() {
        let f = Goldilocks;
        let mut s = 7u64;
        let mut next = || {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            f.from_u64(s)
        };
        for (la, lb) in [
            (1, 1),
            (3, 200),
            (63, 100),
            (64, 64),
            (300, 129),
            (1000, 700),
        ] {
            let a: Vec<u64> = (0..la).map(|_| next()).collect();
            let b: Vec<u64> = (0..lb).map(|_| next()).collect();
            let by_ntt = crate::poly::transform::products::ntt_mul(&f, &a, &b).unwrap();
            assert_eq!(
                by_ntt,
                crate::poly::karatsuba::karatsuba(&f, &a, &b),
                "{la} x {lb}"
            );
            assert_eq!(f.poly_mul(&a, &b), by_ntt);
        }
    }

    #[test]
    fn roots_of_unity_have_their_order() {
        let f = Goldilocks;
        for log in [1, 5, 20, 32] {
            let w = Goldilocks::root_of_unity(log).unwrap();
            assert_eq!(f.pow_u64(&w, 1 << log), 1);
            assert_ne!(f.pow_u64(&w, 1 << (log - 1)), 1);
        }
        assert_eq!(Goldilocks::root_of_unity(33), None);
    }
}
