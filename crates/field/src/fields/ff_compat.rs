//! An adapter that makes any [`ff::PrimeField`] a [`Field`], and the two
//! Mersenne primes derived with `ff`'s macro.

use core::fmt;
use core::marker::PhantomData;

use ff::PrimeField;
use num_bigint::BigUint;
use num_traits::One;
use rand::Rng;

use crate::{Field, FieldError, FiniteField};

/// Any `ff::PrimeField` type as a zero-sized [`Field`] context.
///
/// `ff` fixes the modulus in the type, so the context carries nothing; the
/// adapter is how curve scalar fields and other compile-time primes from the
/// `ff` ecosystem enter generic code. The characteristic is recovered as
/// `to_repr(-1) + 1`, and the byte order of `ff`'s opaque `Repr` is detected
/// from the representation of one, so any correct `PrimeField` works.
///
/// # Example
///
/// ```
/// use field::{FfField, Field, FiniteField, Fp61};
///
/// let f = FfField::<Fp61>::new();
/// let x = f.from_u64(10);
/// assert_eq!(f.to_u64(&f.mul(&x, &x)), Some(100));
/// assert_eq!(f.characteristic(), num_bigint::BigUint::from((1u64 << 61) - 1));
/// ```
pub struct FfField<F>(PhantomData<fn() -> F>);

impl<F> FfField<F> {
    /// The context (zero-sized).
    pub const fn new() -> Self {
        Self(PhantomData)
    }
}

impl<F> Default for FfField<F> {
    fn default() -> Self {
        Self::new()
    }
}

impl<F> Clone for FfField<F> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<F> Copy for FfField<F> {}

impl<F> PartialEq for FfField<F> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl<F> Eq for FfField<F> {}

impl<F> fmt::Debug for FfField<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "FfField<{}>", core::any::type_name::<F>())
    }
}

impl<F: PrimeField> FfField<F> {
    /// Whether `F::Repr` is little-endian (the representation of one then
    /// starts with the byte 1).
    fn repr_is_le() -> bool {
        F::ONE.to_repr().as_ref().first() == Some(&1)
    }

    fn repr_to_biguint(repr: &F::Repr) -> BigUint {
        if Self::repr_is_le() {
            BigUint::from_bytes_le(repr.as_ref())
        } else {
            BigUint::from_bytes_be(repr.as_ref())
        }
    }

    /// The element for a canonical value `v < p`.
    fn from_reduced(v: &BigUint) -> Option<F> {
        let mut repr = F::Repr::default();
        let width = repr.as_ref().len();
        let mut bytes = v.to_bytes_le();
        if bytes.len() > width {
            return None;
        }
        bytes.resize(width, 0);
        if !Self::repr_is_le() {
            bytes.reverse();
        }
        repr.as_mut().copy_from_slice(&bytes);
        F::from_repr_vartime(repr)
    }
}

impl<F: PrimeField> Field for FfField<F> {
    type Elem = F;

    fn zero(&self) -> F {
        F::ZERO
    }
    fn one(&self) -> F {
        F::ONE
    }
    fn is_zero(&self, a: &F) -> bool {
        a.is_zero_vartime()
    }
    fn add(&self, a: &F, b: &F) -> F {
        *a + b
    }
    fn sub(&self, a: &F, b: &F) -> F {
        *a - b
    }
    fn neg(&self, a: &F) -> F {
        -*a
    }
    fn mul(&self, a: &F, b: &F) -> F {
        *a * b
    }
    fn square(&self, a: &F) -> F {
        a.square()
    }
    fn double(&self, a: &F) -> F {
        a.double()
    }
    fn inv(&self, a: &F) -> Option<F> {
        a.invert().into()
    }
    fn from_u64(&self, v: u64) -> F {
        F::from(v)
    }
    #[allow(clippy::unwrap_used)] // v mod p is canonical by construction
    fn from_biguint(&self, v: &BigUint) -> F {
        Self::from_reduced(&(v % self.characteristic())).unwrap()
    }
}

impl<F: PrimeField> FiniteField for FfField<F> {
    fn characteristic(&self) -> BigUint {
        Self::repr_to_biguint(&(-F::ONE).to_repr()) + BigUint::one()
    }
    fn modulus_bits(&self) -> u64 {
        u64::from(F::NUM_BITS)
    }
    fn to_biguint(&self, a: &F) -> BigUint {
        Self::repr_to_biguint(&a.to_repr())
    }
    fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> F {
        // ff's derived fields sample by rejection, without modulo bias.
        F::random(rng)
    }
    fn from_canonical(&self, v: &BigUint) -> Result<F, FieldError> {
        Self::from_reduced(v).ok_or(FieldError::NonCanonical)
    }
}

// `ff`'s derive emits module-level constants, so each field gets a module.
mod derived61 {
    #![allow(missing_docs, clippy::all, unreachable_pub, unused_qualifications)]

    use ff::PrimeField;

    /// GF(2^61 - 1) as derived by `ff`'s macro (one 64-bit limb,
    /// Montgomery form). See [`Mersenne61`](crate::Mersenne61) for the
    /// specialised type the workspace uses, and why.
    #[derive(PrimeField)]
    #[PrimeFieldModulus = "2305843009213693951"]
    #[PrimeFieldGenerator = "37"]
    #[PrimeFieldReprEndianness = "little"]
    pub struct Fp61([u64; 1]);
}

mod derived127 {
    #![allow(missing_docs, clippy::all, unreachable_pub, unused_qualifications)]

    use ff::PrimeField;

    /// GF(2^127 - 1) as derived by `ff`'s macro (two 64-bit limbs,
    /// Montgomery form). See [`Mersenne127`](crate::Mersenne127) for the
    /// specialised type the workspace uses, and why.
    #[derive(PrimeField)]
    #[PrimeFieldModulus = "170141183460469231731687303715884105727"]
    #[PrimeFieldGenerator = "43"]
    #[PrimeFieldReprEndianness = "little"]
    pub struct Fp127([u64; 2]);
}

pub use derived61::Fp61;
pub use derived127::Fp127;

/// GF(2^61 - 1) through the `ff` adapter.
pub type FfMersenne61 = FfField<Fp61>;
/// GF(2^127 - 1) through the `ff` adapter.
pub type FfMersenne127 = FfField<Fp127>;
