//! Dense univariate polynomials over any [`Field`], and the free functions
//! that operate on them (field first, as everywhere in this crate).
//!
//! A [`Poly`] stores little-endian coefficients without trailing zeros, so
//! the zero polynomial has no coefficients and every polynomial has exactly
//! one representation. The functions live in submodules by concern and are
//! re-exported here:
//!
//! | module | functions |
//! |---|---|
//! | arithmetic | [`add`], [`sub`], [`neg`], [`scale`], [`mul`] (schoolbook through [`Field::dot`] below a threshold, Karatsuba above, or the field's own [`Field::poly_mul`]) |
//! | division | [`div_rem`], [`rem`] (classical below a threshold, Newton iteration above) |
//! | gcd | [`gcd`], [`make_monic`] |
//! | powers | [`pow_mod`] (square and multiply with a precomputed reducer) |
//! | evaluation | [`evaluate`], [`derivative`], [`from_roots`] (product tree), [`reverse`] |
//! | trees | [`evaluate_many`] (remainder tree), [`power_sums`] (a sum of fractions up a tree) |
//!
//! # Example
//!
//! ```
//! use field::{Field, Mersenne61, Poly, poly};
//!
//! let f = Mersenne61;
//! let roots = [f.from_u64(2), f.from_u64(3)];
//! let p = poly::from_roots(&f, &roots); // x^2 - 5x + 6
//! assert_eq!(p.degree(), Some(2));
//! assert_eq!(poly::evaluate(&f, &p, &f.from_u64(3)), f.zero());
//! let (q, r) = poly::div_rem(&f, &p, &Poly::from_coeffs(&f, vec![f.neg(&roots[0]), f.one()]))?;
//! assert!(r.is_zero());
//! assert_eq!(q, Poly::from_coeffs(&f, vec![f.neg(&roots[1]), f.one()]));
//! # Ok::<(), field::FieldError>(())
//! ```

use crate::Field;

mod arith;
mod div;
pub(crate) mod euclid;
mod eval;
pub(crate) mod gcd;
pub(crate) mod half_gcd;
pub(crate) mod karatsuba;
pub(crate) mod kronecker;
pub(crate) mod multipoint;
pub(crate) mod ntt;
mod powmod;
pub(crate) mod transform;

pub use crate::poly::karatsuba::KARATSUBA_THRESHOLD;
pub(crate) use crate::poly::karatsuba::{karatsuba, karatsuba_with};
pub use crate::poly::multipoint::{evaluate_many, power_sums};
pub(crate) use arith::mul_slices;
pub use arith::{add, mul, mul_karatsuba, neg, scale, sub};
pub(crate) use div::inv_series;
pub(crate) use div::{Modulus, div_rem_slices};
pub use div::{NEWTON_THRESHOLD, div_rem, rem};
pub use euclid::make_monic;
pub(crate) use euclid::monic_slice;
pub use eval::{add_power_sums, derivative, evaluate, from_roots, reverse};
pub(crate) use eval::{horner_many, linear_product};
pub use gcd::gcd;
pub(crate) use gcd::gcd_slices;
pub use powmod::pow_mod;
pub use transform::Transform;

/// A polynomial with coefficients of type `E` (elements of some [`Field`]),
/// stored little-endian without trailing zeros.
///
/// The coefficients are private so that the representation stays
/// normalized: build polynomials with [`from_coeffs`](Self::from_coeffs),
/// which needs the field to recognise zero.
///
/// # Example
///
/// ```
/// use field::{Field, Fp64, Poly};
///
/// let f = Fp64::new(7)?;
/// // 3 + 0x + 7x^2 is 3 in GF(7): the zero top coefficient is dropped.
/// let p = Poly::from_coeffs(&f, vec![f.from_u64(3), f.zero(), f.from_u64(7)]);
/// assert_eq!(p.degree(), Some(0));
/// assert_eq!(p.leading(), Some(&f.from_u64(3)));
/// assert!(Poly::<u64>::zero().is_zero());
/// assert_eq!(Poly::<u64>::zero().degree(), None);
/// # Ok::<(), field::FieldError>(())
/// ```
#[derive(Clone, PartialEq, Eq, Debug, Hash)]
pub struct Poly<E> {
    coeffs: Vec<E>,
}

impl<E> Default for Poly<E> {
    fn default() -> Self {
        Self::zero()
    }
}

impl<E> Poly<E> {
    /// The zero polynomial (no coefficients).
    pub const fn zero() -> Self {
        Self { coeffs: Vec::new() }
    }

    /// The polynomial with the given little-endian coefficients; trailing
    /// zeros are removed.
    pub fn from_coeffs<F: Field<Elem = E>>(f: &F, mut coeffs: Vec<E>) -> Self {
        trim(f, &mut coeffs);
        Self { coeffs }
    }

    /// The constant polynomial `c` (the zero polynomial when `c` is zero).
    pub fn constant<F: Field<Elem = E>>(f: &F, c: E) -> Self {
        Self::from_coeffs(f, vec![c])
    }

    /// The monomial `c x^degree` (the zero polynomial when `c` is zero).
    pub fn monomial<F: Field<Elem = E>>(f: &F, c: E, degree: usize) -> Self {
        if f.is_zero(&c) {
            return Self::zero();
        }
        let mut coeffs: Vec<E> = (0..degree).map(|_| f.zero()).collect();
        coeffs.push(c);
        Self { coeffs }
    }

    /// The polynomial `x`.
    pub fn x<F: Field<Elem = E>>(f: &F) -> Self {
        Self::monomial(f, f.one(), 1)
    }

    /// The constant polynomial one.
    pub fn one<F: Field<Elem = E>>(f: &F) -> Self {
        Self::constant(f, f.one())
    }

    /// The coefficients, little-endian (the constant term first), without
    /// trailing zeros.
    pub fn coeffs(&self) -> &[E] {
        &self.coeffs
    }

    /// The coefficients, little-endian, without trailing zeros.
    pub fn into_coeffs(self) -> Vec<E> {
        self.coeffs
    }

    /// The coefficient of `x^i` (`None` above the degree, where it is zero).
    pub fn coeff(&self, i: usize) -> Option<&E> {
        self.coeffs.get(i)
    }

    /// The degree, or `None` for the zero polynomial.
    pub fn degree(&self) -> Option<usize> {
        self.coeffs.len().checked_sub(1)
    }

    /// Whether this is the zero polynomial.
    pub fn is_zero(&self) -> bool {
        self.coeffs.is_empty()
    }

    /// The leading (highest-degree) coefficient, or `None` for zero.
    pub fn leading(&self) -> Option<&E> {
        self.coeffs.last()
    }

    /// Wraps coefficients that are already normalized.
    pub(crate) fn from_normalized(coeffs: Vec<E>) -> Self {
        Self { coeffs }
    }
}

/// Removes trailing zero coefficients.
pub(crate) fn trim<F: Field>(f: &F, v: &mut Vec<F::Elem>) {
    while v.last().is_some_and(|c| f.is_zero(c)) {
        v.pop();
    }
}

/// `v` without trailing zeros, as a polynomial.
pub(crate) fn normalized<F: Field>(f: &F, mut v: Vec<F::Elem>) -> Poly<F::Elem> {
    trim(f, &mut v);
    Poly::from_normalized(v)
}
