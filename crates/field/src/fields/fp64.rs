//! A word-sized prime field whose modulus is chosen at run time.

use num_bigint::BigUint;
use rand::Rng;

use crate::fields::word;
use crate::poly::ntt;
use crate::{Field, FieldError, FiniteField, primes};

mod transform;

/// From this many coefficients in the shorter factor, an [`Fp64`] whose
/// `p - 1` has enough factors of two multiplies polynomials by transforms
/// in the field; below it, Karatsuba. Measured over [`Fp64::proth`] with
/// two factors of `n` terms (the ignored test
/// `transform::tests::timing_ntt_threshold`, medians of 31 alternating
/// rounds, transform tables cached): Karatsuba takes 0.67 times the
/// transform product's time at 12 terms, 1.15 times at 16, 2.1 times at
/// 32 and 3.6 to 4.1 times at 64 (docs/benchmarks.md). Far below
/// [`Goldilocks`](crate::Goldilocks)'s crossover: Karatsuba's Montgomery
/// products cost more there than the special reduction of `2^64 - 2^32 + 1`.
const NTT_THRESHOLD: usize = 16;

/// From this many coefficients in the shorter factor, an [`Fp64`] whose
/// `p - 1` lacks the factors of two for transforms in the field multiplies
/// polynomials by the multi-modular product (transforms modulo three primes
/// below `2^50`, vectorised where the CPU allows, and an explicit CRT);
/// below it, Karatsuba. Where the field has the roots, its own transforms
/// (vectorised too) take half the multi-modular product's time at every
/// length from 64 to 10^6 terms (measured over [`Fp64::proth`], the ignored
/// test `ntt::tests::timing::timing_multimodular_threshold`, docs/benchmarks.md),
/// so they are used whenever they exist. The multi-modular product
/// overtakes Karatsuba between 32 and 48 terms.
const MULTIMODULAR_THRESHOLD: usize = 48;

/// `27 * 2^59 + 1`, a Proth prime just below `2^64`: its multiplicative
/// group has order `3^3 * 2^59`, so an [`Fp64`] over it multiplies
/// polynomials by transforms in the field and finds roots by tangent
/// Graeffe transforms (three of order three, the rest of order two),
/// the fastest decoder this crate has.
///
/// # Example
///
/// ```
/// use field::{Field, Fp64, P_PROTH};
///
/// let f = Fp64::new(P_PROTH)?;
/// assert_eq!(f, Fp64::proth());
/// assert_eq!(P_PROTH - 1, 27 << 59);
/// # Ok::<(), field::FieldError>(())
/// ```
pub const P_PROTH: u64 = 0xd800_0000_0000_0001;

/// An element of an [`Fp64`] field, stored in Montgomery form.
///
/// The wrapped value is `a * 2^64 mod p`, not `a`: read it with
/// [`FiniteField::to_u64`] on its context. The newtype exists so that the
/// Montgomery representative is never mistaken for the value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Mont64(pub(crate) u64);

/// GF(p) for any odd prime `p < 2^64` chosen at run time, with Montgomery
/// multiplication (`R = 2^64`).
///
/// # Example
///
/// ```
/// use field::{Field, FiniteField, Fp64};
///
/// let f = Fp64::new(1_000_000_007)?;
/// let x = f.from_u64(123_456);
/// let y = f.inv(&x).unwrap();
/// assert_eq!(f.mul(&x, &y), f.one());
/// assert_eq!(f.to_u64(&f.neg(&f.one())), Some(1_000_000_006));
/// assert!(Fp64::new(1_000_000_008).is_err()); // not prime
/// # Ok::<(), field::FieldError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "u64", into = "u64")
)]
pub struct Fp64 {
    p: u64,
    /// `p^-1 mod 2^64`.
    p_inv: u64,
    /// `2^128 mod p`, to enter Montgomery form.
    r2: u64,
    /// `2^64 mod p`, the Montgomery form of one.
    one: u64,
    /// How many products fit in a `u128` accumulator before a reduction:
    /// the largest `c` with `c * p < 2^64`, so that `c * p^2 < p * 2^64`.
    lazy_chunk: usize,
    /// The largest `k` with `2^k | p - 1`.
    two_adicity: u32,
    /// A primitive `2^two_adicity`-th root of unity, in Montgomery form:
    /// products of long polynomials run by transforms in the field when
    /// `p - 1` has enough factors of two (as `27 * 2^59 + 1` does).
    two_adic_root: Mont64,
}

impl Fp64 {
    /// The field of integers modulo the odd prime `p`.
    ///
    /// # Errors
    ///
    /// [`FieldError::ModulusOutOfRange`] for `p < 3` and
    /// [`FieldError::NotPrime`] if `p` is composite (checked with a
    /// deterministic Baillie-PSW test, which is proven exact below `2^64`).
    pub fn new(p: u64) -> Result<Self, FieldError> {
        if p < 3 {
            return Err(FieldError::ModulusOutOfRange {
                reason: "Fp64 needs an odd prime p >= 3",
            });
        }
        if !primes::is_prime(&BigUint::from(p)) {
            return Err(FieldError::NotPrime);
        }
        Ok(Self::new_prime_unchecked(p))
    }

    /// GF([`P_PROTH`]), the word-size field with the fastest decoding.
    pub fn proth() -> Self {
        // Built once: the search for its root of unity costs microseconds,
        // and sketch parameters ask for this field in every round.
        static PROTH: std::sync::OnceLock<Fp64> = std::sync::OnceLock::new();
        *PROTH.get_or_init(|| Self::new_prime_unchecked(P_PROTH))
    }

    /// Builds the context for a modulus already known to be an odd prime.
    #[allow(clippy::cast_possible_truncation)] // residues mod p < 2^64
    pub(crate) fn new_prime_unchecked(p: u64) -> Self {
        // Newton iteration for p^-1 mod 2^64; p * p = 1 (mod 8) seeds 3 bits
        // and each step doubles them.
        let mut p_inv = p;
        for _ in 0..5 {
            p_inv = p_inv.wrapping_mul(2u64.wrapping_sub(p.wrapping_mul(p_inv)));
        }
        let p128 = u128::from(p);
        let one = ((1u128 << 64) % p128) as u64;
        let r2 = ((u128::from(one) * u128::from(one)) % p128) as u64;
        let lazy_chunk = usize::try_from(u64::MAX / p)
            .unwrap_or(usize::MAX)
            .clamp(1, 64);
        let mut f = Self {
            p,
            p_inv,
            r2,
            one,
            lazy_chunk,
            two_adicity: (p - 1).trailing_zeros(),
            two_adic_root: Mont64(one),
        };
        f.two_adic_root = f.find_two_adic_root();
        f
    }

    /// `z^((p-1) / 2^k)` for the first quadratic non-residue `z`: its order
    /// is exactly `2^k` (its `2^(k-1)`-th power is `z^((p-1)/2) = -1`).
    fn find_two_adic_root(&self) -> Mont64 {
        let odd = (self.p - 1) >> self.two_adicity;
        let minus_one = self.neg(&self.one());
        // Half of the nonzero residues are non-residues, and the least one
        // is small (below 2^11 for every p < 2^64 checked in the
        // literature); the bound only keeps the loop finite.
        (2..1 << 20)
            .map(|z| self.to_mont(z))
            .find(|z| self.pow_u64(z, (self.p - 1) / 2) == minus_one)
            .map_or(self.one(), |z| self.pow_u64(&z, odd))
    }

    /// The modulus.
    pub fn modulus(&self) -> u64 {
        self.p
    }

    /// Montgomery reduction: `t * 2^-64 mod p`, for `t < p * 2^64`.
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // low and high halves
    fn redc(&self, t: u128) -> u64 {
        let m = (t as u64).wrapping_mul(self.p_inv);
        let mp = u128::from(m) * u128::from(self.p);
        // t and m*p agree in their low 64 bits, so t - m*p = (th - mh) * 2^64,
        // with th < p (as t < p 2^64) and mh < p (as m < 2^64).
        let (th, mh) = ((t >> 64) as u64, (mp >> 64) as u64);
        word::sub(th, mh, self.p)
    }

    /// `x * 2^-64 mod p` for any `x < 2^128` (Montgomery reduction after
    /// the high word is brought below `p`, which it already is whenever
    /// `x < p 2^64`).
    #[inline(always)]
    pub(crate) fn reduce_wide(&self, x: u128) -> Mont64 {
        #[allow(clippy::cast_possible_truncation)] // high word
        let hi = (x >> 64) as u64;
        let x = if hi < self.p {
            x
        } else {
            (u128::from(hi % self.p) << 64) | (x & u128::from(u64::MAX))
        };
        Mont64(self.redc(x))
    }

    #[inline(always)]
    fn to_mont(&self, v: u64) -> Mont64 {
        // v * r2 < 2^64 * p for any u64 v.
        Mont64(self.redc(u128::from(v) * u128::from(self.r2)))
    }

    #[inline(always)]
    fn from_mont(&self, a: Mont64) -> u64 {
        self.redc(u128::from(a.0))
    }

    fn bits(&self) -> u32 {
        64 - self.p.leading_zeros()
    }

    /// `(p, p^-1 mod 2^64)`, for the transform kernels on Montgomery words.
    fn montgomery(&self) -> (u64, u64) {
        (self.p, self.p_inv)
    }

    /// The multi-modular product's CRT constants for this modulus, built
    /// once per modulus and kept for the last few moduli used (an `Fp64`
    /// is a `Copy` word and has no room for them).
    pub(crate) fn crt_plan(&self) -> Option<std::sync::Arc<ntt::Plan<Mont64>>> {
        use std::sync::{Arc, Mutex, PoisonError};
        type Kept = Vec<(u64, Option<Arc<ntt::Plan<Mont64>>>)>;
        static KEPT: Mutex<Kept> = Mutex::new(Vec::new());
        let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(i) = kept.iter().position(|e| e.0 == self.p) {
            kept[..=i].rotate_right(1);
            return kept[0].1.clone();
        }
        // Microseconds of work (k modular inverses): under the lock.
        let plan = ntt::Plan::new(self, &BigUint::from(self.p)).map(Arc::new);
        kept.insert(0, (self.p, plan.clone()));
        kept.truncate(4);
        plan
    }
}

impl TryFrom<u64> for Fp64 {
    type Error = FieldError;
    fn try_from(p: u64) -> Result<Self, FieldError> {
        Self::new(p)
    }
}

impl From<Fp64> for u64 {
    fn from(f: Fp64) -> Self {
        f.p
    }
}

impl Field for Fp64 {
    type Elem = Mont64;

    #[inline(always)]
    fn zero(&self) -> Mont64 {
        Mont64(0)
    }
    #[inline(always)]
    fn one(&self) -> Mont64 {
        Mont64(self.one)
    }
    #[inline(always)]
    fn is_zero(&self, a: &Mont64) -> bool {
        a.0 == 0
    }
    #[inline(always)]
    fn add(&self, a: &Mont64, b: &Mont64) -> Mont64 {
        Mont64(word::add(a.0, b.0, self.p))
    }
    #[inline(always)]
    fn sub(&self, a: &Mont64, b: &Mont64) -> Mont64 {
        Mont64(word::sub(a.0, b.0, self.p))
    }
    #[inline(always)]
    fn neg(&self, a: &Mont64) -> Mont64 {
        Mont64(word::neg(a.0, self.p))
    }
    #[inline(always)]
    fn mul(&self, a: &Mont64, b: &Mont64) -> Mont64 {
        Mont64(self.redc(u128::from(a.0) * u128::from(b.0)))
    }
    fn inv(&self, a: &Mont64) -> Option<Mont64> {
        (a.0 != 0).then(|| self.pow_u64(a, self.p - 2))
    }
    #[inline(always)]
    fn from_u64(&self, v: u64) -> Mont64 {
        self.to_mont(v)
    }
    #[allow(clippy::unwrap_used)] // a residue mod p < 2^64 fits in u64
    fn from_biguint(&self, v: &BigUint) -> Mont64 {
        self.to_mont(u64::try_from(v % self.p).unwrap())
    }
    /// 768 when the field has transforms of 2^12 points, the default
    /// otherwise: over [`Fp64::proth`] the half-GCD takes 0.97 times
    /// Berlekamp-Massey's time at 768 syndromes, 0.57 at 2048 (the ignored
    /// test `hgcd::tests::timing_locator_threshold`, docs/benchmarks.md).
    fn half_gcd_threshold(&self) -> usize {
        if self.two_adicity >= 12 {
            768
        } else {
            crate::traits::DEFAULT_HALF_GCD_THRESHOLD
        }
    }
    /// 384 when the field has transforms of 2^12 points, the default
    /// otherwise: over [`Fp64::proth`] the remainder tree takes 0.96 times
    /// Horner's time at 384 nodes, 0.44 at 1024 (the ignored test
    /// `vandermonde::timing::timing_remainder_tree_threshold`,
    /// docs/benchmarks.md).
    fn remainder_tree_threshold(&self) -> usize {
        if self.two_adicity >= 12 {
            384
        } else {
            crate::traits::DEFAULT_REMAINDER_TREE_THRESHOLD
        }
    }
    /// The butterflies on the Montgomery words, vectorised with AVX-512 or
    /// AVX2 where the CPU has them (`fields/fp64/transform.rs`).
    fn transform_stages(&self, v: &mut [Mont64], table: &[Mont64], forward: bool) -> bool {
        let job = if forward {
            transform::Job::Forward(table)
        } else {
            transform::Job::Inverse(table)
        };
        transform::run(transform::Path::best(), transform::Word::of(self), v, job);
        true
    }
    fn mul_each(&self, a: &mut [Mont64], b: &[Mont64]) {
        assert_eq!(a.len(), b.len(), "mul_each of slices of different lengths");
        let job = transform::Job::MulEach(b);
        transform::run(transform::Path::best(), transform::Word::of(self), a, job);
    }
    fn scale_each(&self, a: &mut [Mont64], c: &Mont64) {
        let job = transform::Job::Scale(*c);
        transform::run(transform::Path::best(), transform::Word::of(self), a, job);
    }
    fn poly_mul(&self, a: &[Mont64], b: &[Mont64]) -> Vec<Mont64> {
        let shorter = a.len().min(b.len());
        // Transforms in the field when it has the roots for this length
        // (`ntt_mul` says so by `None`), else the multi-modular product.
        if shorter >= NTT_THRESHOLD
            && let Some(v) = crate::poly::transform::products::ntt_mul(self, a, b)
        {
            return v;
        }
        if shorter >= MULTIMODULAR_THRESHOLD
            && let Some(plan) = self.crt_plan()
        {
            // The Montgomery words themselves: their integer product is
            // c R^2 (mod p), and one reduction leaves c R, c's word.
            return plan.mul_words(a, b, |v| v.0, |x| self.reduce_wide(x));
        }
        crate::poly::karatsuba(self, a, b)
    }
    fn poly_transform(&self, b: &[Mont64], n: usize) -> Option<Vec<Mont64>> {
        crate::poly::transform::products::ntt_transform(self, b, n, NTT_THRESHOLD)
    }
    fn poly_mul_transformed(&self, a: &[Mont64], b_hat: &[Mont64]) -> Option<Vec<Mont64>> {
        crate::poly::transform::products::ntt_mul_transformed(self, a, b_hat)
    }
    fn poly_untransform(&self, v_hat: Vec<Mont64>) -> Option<Vec<Mont64>> {
        crate::poly::transform::products::ntt_untransform(self, v_hat)
    }
    fn dot(&self, a: &[Mont64], b: &[Mont64]) -> Mont64 {
        let n = a.len().min(b.len());
        let mut total = self.zero();
        for (ca, cb) in a[..n]
            .chunks(self.lazy_chunk)
            .zip(b[..n].chunks(self.lazy_chunk))
        {
            let mut acc: u128 = 0;
            for (x, y) in ca.iter().zip(cb) {
                acc += u128::from(x.0) * u128::from(y.0);
            }
            // acc < lazy_chunk * p^2 < p * 2^64, the domain of redc; the
            // reduction of a sum of (aR)(bR) is the Montgomery form of sum ab.
            total = self.add(&total, &Mont64(self.redc(acc)));
        }
        total
    }
}

impl FiniteField for Fp64 {
    fn two_adicity(&self) -> u32 {
        self.two_adicity
    }
    fn two_adic_root(&self, log: u32) -> Option<Mont64> {
        let shift = self.two_adicity.checked_sub(log)?;
        let mut w = self.two_adic_root;
        for _ in 0..shift {
            w = self.square(&w);
        }
        Some(w)
    }

    fn characteristic(&self) -> BigUint {
        BigUint::from(self.p)
    }
    fn modulus_bits(&self) -> u64 {
        u64::from(self.bits())
    }
    fn to_biguint(&self, a: &Mont64) -> BigUint {
        BigUint::from(self.from_mont(*a))
    }
    fn to_u64(&self, a: &Mont64) -> Option<u64> {
        Some(self.from_mont(*a))
    }
    fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> Mont64 {
        let shift = 64 - self.bits();
        loop {
            let v = rng.next_u64() >> shift;
            if v < self.p {
                return self.to_mont(v);
            }
        }
    }
    fn write_bytes(&self, a: &Mont64, out: &mut Vec<u8>) {
        let len = self.byte_len();
        out.extend_from_slice(&self.from_mont(*a).to_le_bytes()[..len]);
    }
    fn from_bytes(&self, bytes: &[u8]) -> Result<Mont64, FieldError> {
        let expected = self.byte_len();
        if bytes.len() != expected {
            return Err(FieldError::WrongLength {
                expected,
                found: bytes.len(),
            });
        }
        let mut arr = [0u8; 8];
        arr[..expected].copy_from_slice(bytes);
        let v = u64::from_le_bytes(arr);
        if v < self.p {
            Ok(self.to_mont(v))
        } else {
            Err(FieldError::NonCanonical)
        }
    }
}
