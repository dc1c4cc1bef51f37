//! The Mersenne prime fields GF(2^61 - 1) and GF(2^127 - 1), specialised.
//!
//! `ff`'s `#[derive(PrimeField)]` can express both primes (see
//! [`Fp61`](crate::Fp61) and [`Fp127`](crate::Fp127)), but it generates
//! generic Montgomery code: every product pays a Montgomery reduction with
//! two extra wide multiplications, elements must be converted in and out of
//! Montgomery form, and there is no lazy accumulation. For a Mersenne prime
//! `p = 2^k - 1`, `2^k = 1 (mod p)`, so a product reduces with one shift, one
//! mask and one add; and for `k = 61` up to 64 products fit in a `u128`
//! before a single reduction, which is what polynomial multiplication and
//! Berlekamp-Massey spend their time on. These two types are therefore the
//! ones the rest of the workspace uses; the `criterion` bench `field`
//! measures both against the `ff`-derived types.
//!
//! Polynomial products ([`Field::poly_mul`]) use Karatsuba over a lazy base
//! case up to a few hundred terms, then multi-modular number-theoretic
//! transforms (three word-sized primes for `2^61 - 1`, five for
//! `2^127 - 1`) with the coefficients reconstructed modulo `p`.

use num_bigint::BigUint;
use rand::Rng;

use std::sync::OnceLock;

use crate::error::word_from_le_bytes;
use crate::fields::word;
use crate::poly::ntt;
use crate::{Field, FieldError, FiniteField};

/// The Mersenne prime `2^61 - 1`.
pub const P61: u64 = (1 << 61) - 1;
/// The Mersenne prime `2^127 - 1`.
pub const P127: u128 = (1 << 127) - 1;

/// GF(2^61 - 1): a zero-sized context over `u64` elements in `0..p`.
///
/// # Example
///
/// ```
/// use field::{Field, FiniteField, Mersenne61, P61};
///
/// let f = Mersenne61;
/// let a = f.from_u64(P61 - 1); // -1
/// assert_eq!(f.mul(&a, &a), f.one());
/// assert_eq!(f.inv(&f.zero()), None);
/// assert_eq!(f.to_u64(&f.add(&a, &f.from_u64(2))), Some(1));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Mersenne61;

impl Mersenne61 {
    /// Reduces any `u128` modulo `2^61 - 1`.
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // masked to 61 bits or proven small
    pub fn reduce128(x: u128) -> u64 {
        // x = hi * 2^61 + lo and 2^61 = 1, so x = hi + lo (mod p).
        let r = u128::from(x as u64 & P61) + (x >> 61);
        // r < 2^61 + 2^67; fold once more.
        let r = (r as u64 & P61) + (r >> 61) as u64;
        // r < 2^61 + 2^6 + 1 < 2p: one conditional subtraction.
        if r >= P61 { r - P61 } else { r }
    }
}

impl Field for Mersenne61 {
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
        word::add(*a, *b, P61)
    }
    #[inline(always)]
    fn sub(&self, a: &u64, b: &u64) -> u64 {
        word::sub(*a, *b, P61)
    }
    #[inline(always)]
    fn neg(&self, a: &u64) -> u64 {
        word::neg(*a, P61)
    }
    #[inline(always)]
    fn mul(&self, a: &u64, b: &u64) -> u64 {
        Self::reduce128(u128::from(*a) * u128::from(*b))
    }
    fn inv(&self, a: &u64) -> Option<u64> {
        // Fermat: a^(p-2). 61 squarings of one-word products are cheaper
        // than a division-based extended Euclid.
        (*a != 0).then(|| self.pow_u64(a, P61 - 2))
    }
    #[inline(always)]
    fn from_u64(&self, v: u64) -> u64 {
        Self::reduce128(u128::from(v))
    }
    #[allow(clippy::unwrap_used)] // a residue mod p < 2^61 fits in u64
    fn from_biguint(&self, v: &BigUint) -> u64 {
        u64::try_from(v % P61).unwrap()
    }
    fn dot(&self, a: &[u64], b: &[u64]) -> u64 {
        // Products are below 2^122, so 64 of them fit in a u128.
        let n = a.len().min(b.len());
        let mut total = 0u64;
        for (ca, cb) in a[..n].chunks(64).zip(b[..n].chunks(64)) {
            let mut acc: u128 = 0;
            for (x, y) in ca.iter().zip(cb) {
                acc += u128::from(*x) * u128::from(*y);
            }
            total = self.add(&total, &Self::reduce128(acc));
        }
        total
    }
    fn poly_mul(&self, a: &[u64], b: &[u64]) -> Vec<u64> {
        if a.len().min(b.len()) < NTT_THRESHOLD_61 {
            return crate::poly::karatsuba_with(self, a, b, &Self::schoolbook);
        }
        static PLAN: OnceLock<Option<ntt::Plan<u64>>> = OnceLock::new();
        match PLAN.get_or_init(|| ntt::Plan::new(self, &BigUint::from(P61))) {
            Some(plan) => plan.mul_words(a, b, |v| *v, Self::reduce128),
            None => crate::poly::karatsuba_with(self, a, b, &Self::schoolbook),
        }
    }
}

/// From this many coefficients in the shorter factor, [`Mersenne61`]
/// multiplies polynomials by multi-modular NTT (three transform primes);
/// below it, Karatsuba over a base case that accumulates whole products in
/// `u128`s. The crossover (between 512 and 1000 terms) was measured with
/// the `algorithms` bench, group `polymul`.
const NTT_THRESHOLD_61: usize = 768;

/// From this many coefficients in the shorter factor, [`Mersenne127`]
/// multiplies polynomials by multi-modular NTT (five transform primes);
/// below it, Karatsuba (crossover between 256 and 512 terms, measured as
/// above).
const NTT_THRESHOLD_127: usize = 384;

impl Mersenne61 {
    /// `out += a * b` with every output coefficient accumulated in a `u128`
    /// and reduced once: the Karatsuba base case (the shorter factor has
    /// fewer than 64 terms, so at most 63 products below `2^122` meet in
    /// one accumulator).
    fn schoolbook(a: &[u64], b: &[u64], out: &mut [u64]) {
        let (a, b) = if a.len() >= b.len() { (a, b) } else { (b, a) };
        debug_assert!(b.len() < 64);
        let len = a.len() + b.len() - 1;
        let mut stack = [0u128; 128];
        let mut heap = Vec::new();
        let acc: &mut [u128] = if len <= stack.len() {
            &mut stack[..len]
        } else {
            heap.resize(len, 0);
            &mut heap
        };
        for (i, &x) in a.iter().enumerate() {
            let x = u128::from(x);
            for (s, &y) in acc[i..].iter_mut().zip(b) {
                *s += x * u128::from(y);
            }
        }
        for (o, &s) in out.iter_mut().zip(acc.iter()) {
            *o = Self.add(o, &Self::reduce128(s));
        }
    }
}

impl FiniteField for Mersenne61 {
    fn characteristic(&self) -> BigUint {
        BigUint::from(P61)
    }
    fn modulus_bits(&self) -> u64 {
        61
    }
    fn to_biguint(&self, a: &u64) -> BigUint {
        BigUint::from(*a)
    }
    fn to_u64(&self, a: &u64) -> Option<u64> {
        Some(*a)
    }
    fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        loop {
            // 61 uniform bits; only the value p itself is rejected.
            let v = rng.next_u64() >> 3;
            if v < P61 {
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
        word_from_le_bytes(bytes, P61)
    }
}

/// GF(2^127 - 1): a zero-sized context over `u128` elements in `0..p`.
///
/// # Example
///
/// ```
/// use field::{Field, FiniteField, Mersenne127, P127};
///
/// let f = Mersenne127;
/// let a = f.from_biguint(&(num_bigint::BigUint::from(P127) * 3u32 + 5u32));
/// assert_eq!(a, 5);
/// let x = f.from_u64(123_456_789);
/// assert_eq!(f.mul(&x, &f.inv(&x).unwrap()), f.one());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Mersenne127;

impl Mersenne127 {
    /// `a * b mod (2^127 - 1)` for `a, b < 2^127`.
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // limb splits
    fn mul_reduce(a: u128, b: u128) -> u128 {
        const LO: u128 = u64::MAX as u128;
        let (a0, a1) = (a & LO, a >> 64); // a1 < 2^63
        let (b0, b1) = (b & LO, b >> 64);
        let lo = a0 * b0; // < 2^128
        let mid = a0 * b1 + a1 * b0; // each < 2^127, sum < 2^128
        let hi = a1 * b1; // < 2^126
        // 256-bit product = H * 2^128 + L.
        let (l, carry) = lo.overflowing_add(mid << 64);
        let h = hi + (mid >> 64) + u128::from(carry); // < 2^127
        // 2^127 = 1 and 2^128 = 2 (mod p): x = (L mod 2^127) + L/2^127 + 2H.
        let s = (l & P127) + (l >> 127) + (h << 1); // < 2^128
        let r = (s & P127) + (s >> 127);
        if r >= P127 { r - P127 } else { r }
    }
}

impl Field for Mersenne127 {
    type Elem = u128;

    #[inline(always)]
    fn zero(&self) -> u128 {
        0
    }
    #[inline(always)]
    fn one(&self) -> u128 {
        1
    }
    #[inline(always)]
    fn is_zero(&self, a: &u128) -> bool {
        *a == 0
    }
    #[inline(always)]
    fn add(&self, a: &u128, b: &u128) -> u128 {
        let s = a + b; // < 2^128
        if s >= P127 { s - P127 } else { s }
    }
    #[inline(always)]
    fn sub(&self, a: &u128, b: &u128) -> u128 {
        if a >= b { a - b } else { a + P127 - b }
    }
    #[inline(always)]
    fn neg(&self, a: &u128) -> u128 {
        if *a == 0 { 0 } else { P127 - a }
    }
    #[inline(always)]
    fn mul(&self, a: &u128, b: &u128) -> u128 {
        Self::mul_reduce(*a, *b)
    }
    fn inv(&self, a: &u128) -> Option<u128> {
        if *a == 0 {
            return None;
        }
        // Fermat: a^(p-2), with p - 2 = 2^127 - 3 = 0b111...1101.
        let e = P127 - 2;
        let mut acc = 1u128;
        for i in (0..127).rev() {
            acc = Self::mul_reduce(acc, acc);
            if (e >> i) & 1 == 1 {
                acc = Self::mul_reduce(acc, *a);
            }
        }
        Some(acc)
    }
    #[inline(always)]
    fn from_u64(&self, v: u64) -> u128 {
        u128::from(v)
    }
    #[allow(clippy::unwrap_used)] // a residue mod p < 2^127 fits in u128
    fn from_biguint(&self, v: &BigUint) -> u128 {
        u128::try_from(v % P127).unwrap()
    }
    #[allow(clippy::cast_possible_truncation)] // limb splits
    fn poly_mul(&self, a: &[u128], b: &[u128]) -> Vec<u128> {
        if a.len().min(b.len()) < NTT_THRESHOLD_127 {
            return crate::poly::karatsuba(self, a, b);
        }
        static PLAN: OnceLock<Option<ntt::Plan<u128>>> = OnceLock::new();
        match PLAN.get_or_init(|| ntt::Plan::new(self, &BigUint::from(P127))) {
            Some(plan) => plan.mul_dot(self, a, b, |v, out| {
                out.extend([*v as u64, (*v >> 64) as u64]);
            }),
            None => crate::poly::karatsuba(self, a, b),
        }
    }
}

impl FiniteField for Mersenne127 {
    fn characteristic(&self) -> BigUint {
        BigUint::from(P127)
    }
    fn modulus_bits(&self) -> u64 {
        127
    }
    fn to_biguint(&self, a: &u128) -> BigUint {
        BigUint::from(*a)
    }
    fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> u128 {
        loop {
            let v = ((u128::from(rng.next_u64()) << 64) | u128::from(rng.next_u64())) >> 1;
            if v < P127 {
                return v;
            }
        }
    }
    fn byte_len(&self) -> usize {
        16
    }
    fn write_bytes(&self, a: &u128, out: &mut Vec<u8>) {
        out.extend_from_slice(&a.to_le_bytes());
    }
    fn from_bytes(&self, bytes: &[u8]) -> Result<u128, FieldError> {
        let arr: [u8; 16] = bytes.try_into().map_err(|_| FieldError::WrongLength {
            expected: 16,
            found: bytes.len(),
        })?;
        let v = u128::from_le_bytes(arr);
        if v < P127 {
            Ok(v)
        } else {
            Err(FieldError::NonCanonical)
        }
    }
}
