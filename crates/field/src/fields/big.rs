//! A prime field with a big run-time modulus, on `num-bigint`.

use core::fmt;
use std::sync::{Arc, OnceLock};

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, Zero};

use crate::poly::{kronecker, ntt};
use crate::{Field, FieldError, FiniteField, primes};

struct BigParams {
    p: BigUint,
    bits: u64,
    byte_len: usize,
    /// The NTT multiplication plan, built on the first large product.
    ntt: OnceLock<Option<ntt::Plan<BigUint>>>,
}

/// GF(p) for an odd prime `p` of any size chosen at run time (tested up to
/// 8192 bits), with elements as reduced [`BigUint`]s.
///
/// The context holds its parameters behind an [`Arc`], so cloning it is
/// cheap and elements stay bare integers. This is the field for bin indices
/// of hundreds or thousands of bits (`B^d` with large `d`).
///
/// Polynomial products of eight or more terms ([`Field::poly_mul`]) run
/// modulo about `2 bits(p) / 61` word-sized primes with number-theoretic
/// transforms, each coefficient reconstructed modulo `p` by an explicit
/// Chinese remainder theorem (one reduction per coefficient instead of a
/// multi-word product and division per pair of coefficients); moduli above
/// about 9000 bits fall back to Kronecker substitution.
///
/// # Example
///
/// ```
/// use field::{BigPrime, Field, FiniteField};
/// use num_bigint::BigUint;
///
/// // 2^255 - 19
/// let p = (BigUint::from(1u8) << 255u32) - 19u32;
/// let f = BigPrime::new(p.clone())?;
/// let x = f.from_u64(2);
/// assert_eq!(f.to_biguint(&f.neg(&x)), p - 2u32);
/// assert_eq!(f.byte_len(), 32);
/// # Ok::<(), field::FieldError>(())
/// ```
#[derive(Clone)]
pub struct BigPrime {
    params: Arc<BigParams>,
}

impl BigPrime {
    /// The field of integers modulo the odd prime `p`.
    ///
    /// # Errors
    ///
    /// [`FieldError::ModulusOutOfRange`] for `p < 3`, [`FieldError::NotPrime`]
    /// if the deterministic Baillie-PSW test rejects `p`.
    pub fn new(p: BigUint) -> Result<Self, FieldError> {
        if p < BigUint::from(3u8) {
            return Err(FieldError::ModulusOutOfRange {
                reason: "BigPrime needs an odd prime p >= 3",
            });
        }
        if !primes::is_prime(&p) {
            return Err(FieldError::NotPrime);
        }
        Ok(Self::new_prime_unchecked(p))
    }

    /// Builds the context for a modulus already known to be an odd prime.
    pub(crate) fn new_prime_unchecked(p: BigUint) -> Self {
        let bits = p.bits();
        let byte_len = usize::try_from(bits.div_ceil(8)).unwrap_or(usize::MAX);
        Self {
            params: Arc::new(BigParams {
                p,
                bits,
                byte_len,
                ntt: OnceLock::new(),
            }),
        }
    }

    /// The modulus.
    pub fn modulus(&self) -> &BigUint {
        &self.params.p
    }

    pub(crate) fn p(&self) -> &BigUint {
        &self.params.p
    }
}

impl PartialEq for BigPrime {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.params, &other.params) || self.params.p == other.params.p
    }
}

impl Eq for BigPrime {}

impl fmt::Debug for BigPrime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hex = self.params.p.to_str_radix(16);
        let shown = if hex.len() > 24 {
            format!("0x{}..{}", &hex[..8], &hex[hex.len() - 8..])
        } else {
            format!("0x{hex}")
        };
        f.debug_struct("BigPrime")
            .field("bits", &self.params.bits)
            .field("p", &shown)
            .finish()
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for BigPrime {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.params.p.serialize(s)
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for BigPrime {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let p = BigUint::deserialize(d)?;
        Self::new(p).map_err(serde::de::Error::custom)
    }
}

impl Field for BigPrime {
    type Elem = BigUint;

    fn zero(&self) -> BigUint {
        BigUint::zero()
    }
    fn one(&self) -> BigUint {
        BigUint::one()
    }
    fn is_zero(&self, a: &BigUint) -> bool {
        a.is_zero()
    }
    fn add(&self, a: &BigUint, b: &BigUint) -> BigUint {
        let s = a + b;
        if &s >= self.p() { s - self.p() } else { s }
    }
    fn sub(&self, a: &BigUint, b: &BigUint) -> BigUint {
        if a >= b { a - b } else { (a + self.p()) - b }
    }
    fn neg(&self, a: &BigUint) -> BigUint {
        if a.is_zero() {
            BigUint::zero()
        } else {
            self.p() - a
        }
    }
    fn mul(&self, a: &BigUint, b: &BigUint) -> BigUint {
        (a * b) % self.p()
    }
    fn square(&self, a: &BigUint) -> BigUint {
        a.pow(2) % self.p()
    }
    fn inv(&self, a: &BigUint) -> Option<BigUint> {
        if a.is_zero() {
            return None;
        }
        a.modinv(self.p())
    }
    fn from_u64(&self, v: u64) -> BigUint {
        BigUint::from(v) % self.p()
    }
    fn from_biguint(&self, v: &BigUint) -> BigUint {
        v % self.p()
    }
    fn pow(&self, a: &BigUint, e: &BigUint) -> BigUint {
        a.modpow(e, self.p())
    }
    fn pow_u64(&self, a: &BigUint, e: u64) -> BigUint {
        a.modpow(&BigUint::from(e), self.p())
    }
    fn dot(&self, a: &[BigUint], b: &[BigUint]) -> BigUint {
        // One division for the whole sum instead of one per product.
        let mut acc = BigUint::zero();
        for (x, y) in a.iter().zip(b) {
            acc += x * y;
        }
        acc % self.p()
    }
    fn add_assign(&self, a: &mut BigUint, b: &BigUint) {
        *a += b;
        if &*a >= self.p() {
            *a -= self.p();
        }
    }
    fn mul_assign(&self, a: &mut BigUint, b: &BigUint) {
        *a *= b;
        *a = a.mod_floor(self.p());
    }
    fn poly_mul(&self, a: &[BigUint], b: &[BigUint]) -> Vec<BigUint> {
        if a.len().min(b.len()) < NTT_THRESHOLD {
            return crate::poly::karatsuba(self, a, b);
        }
        let plan = self
            .params
            .ntt
            .get_or_init(|| ntt::Plan::new(self, self.p()));
        match plan {
            Some(plan) => plan.mul_limbs(
                a,
                b,
                |v, out| out.extend(v.iter_u64_digits()),
                |limbs| kronecker::from_limbs(limbs) % self.p(),
            ),
            None => kronecker::mul(
                a,
                b,
                self.params.bits,
                |v, out| out.extend(v.iter_u64_digits()),
                |limbs| kronecker::from_limbs(limbs) % self.p(),
            ),
        }
    }
}

/// From this many coefficients in the shorter factor, [`BigPrime`]
/// multiplies polynomials by multi-modular NTT with an explicit CRT modulo
/// `p` (Kronecker substitution for moduli too large for the kept transform
/// primes), instead of Karatsuba over multi-word products.
const NTT_THRESHOLD: usize = 8;

impl FiniteField for BigPrime {
    fn characteristic(&self) -> BigUint {
        self.params.p.clone()
    }
    fn modulus_bits(&self) -> u64 {
        self.params.bits
    }
    fn to_biguint(&self, a: &BigUint) -> BigUint {
        a.clone()
    }
    fn byte_len(&self) -> usize {
        self.params.byte_len
    }
    fn from_canonical(&self, v: &BigUint) -> Result<BigUint, FieldError> {
        if v >= self.p() {
            return Err(FieldError::NonCanonical);
        }
        Ok(v.clone())
    }
}
