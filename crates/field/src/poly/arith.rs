//! Ring operations: addition, subtraction, negation, scaling and
//! multiplication (schoolbook through [`Field::dot`], Karatsuba above a
//! threshold).

use super::{Poly, normalized};
use crate::Field;
use crate::poly::karatsuba::karatsuba;

/// `a + b`.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let a = Poly::from_coeffs(&f, vec![1, 2, 3]);
/// let b = Poly::from_coeffs(&f, vec![0, 0, f.neg(&3)]);
/// assert_eq!(poly::add(&f, &a, &b), Poly::from_coeffs(&f, vec![1, 2]));
/// ```
pub fn add<F: Field>(f: &F, a: &Poly<F::Elem>, b: &Poly<F::Elem>) -> Poly<F::Elem> {
    let (long, short) = if a.coeffs().len() >= b.coeffs().len() {
        (a.coeffs(), b.coeffs())
    } else {
        (b.coeffs(), a.coeffs())
    };
    let mut out = long.to_vec();
    for (o, s) in out.iter_mut().zip(short) {
        f.add_assign(o, s);
    }
    normalized(f, out)
}

/// `a - b`.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let a = Poly::from_coeffs(&f, vec![5, 1]);
/// assert!(poly::sub(&f, &a, &a).is_zero());
/// assert_eq!(poly::sub(&f, &Poly::zero(), &a), poly::neg(&f, &a));
/// ```
pub fn sub<F: Field>(f: &F, a: &Poly<F::Elem>, b: &Poly<F::Elem>) -> Poly<F::Elem> {
    let (ac, bc) = (a.coeffs(), b.coeffs());
    let n = ac.len().max(bc.len());
    let zero = f.zero();
    let out = (0..n)
        .map(|i| f.sub(ac.get(i).unwrap_or(&zero), bc.get(i).unwrap_or(&zero)))
        .collect();
    normalized(f, out)
}

/// `-a`.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let a = Poly::from_coeffs(&f, vec![0, 1]);
/// assert_eq!(poly::neg(&f, &a).coeffs(), &[0, f.neg(&1)]);
/// ```
pub fn neg<F: Field>(f: &F, a: &Poly<F::Elem>) -> Poly<F::Elem> {
    // Negation keeps the leading coefficient nonzero.
    Poly::from_normalized(a.coeffs().iter().map(|c| f.neg(c)).collect())
}

/// `c * a` for a scalar `c`.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let a = Poly::from_coeffs(&f, vec![1, 2]);
/// assert_eq!(poly::scale(&f, &a, &3).coeffs(), &[3, 6]);
/// assert!(poly::scale(&f, &a, &0).is_zero());
/// ```
pub fn scale<F: Field>(f: &F, a: &Poly<F::Elem>, c: &F::Elem) -> Poly<F::Elem> {
    if f.is_zero(c) {
        return Poly::zero();
    }
    Poly::from_normalized(a.coeffs().iter().map(|x| f.mul(x, c)).collect())
}

/// `a * b`: schoolbook below [`KARATSUBA_THRESHOLD`](crate::poly::KARATSUBA_THRESHOLD), Karatsuba above it,
/// or the field's own [`Field::poly_mul`] when it overrides it (the
/// Mersenne fields and [`BigPrime`](crate::BigPrime) switch to
/// number-theoretic transforms for large products).
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let a = Poly::from_coeffs(&f, vec![1, 1]); // 1 + x
/// let sq = poly::mul(&f, &a, &a);
/// assert_eq!(sq.coeffs(), &[1, 2, 1]);
/// ```
pub fn mul<F: Field>(f: &F, a: &Poly<F::Elem>, b: &Poly<F::Elem>) -> Poly<F::Elem> {
    normalized(f, mul_slices(f, a.coeffs(), b.coeffs()))
}

/// `a * b` by Karatsuba's method (schoolbook below
/// [`KARATSUBA_THRESHOLD`](crate::poly::KARATSUBA_THRESHOLD)) whatever the field's own
/// [`Field::poly_mul`] does: the reference for tests and benchmarks of the
/// fields' faster products. [`mul`] is never slower.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let a = Poly::from_coeffs(&f, (1..=300).collect());
/// assert_eq!(poly::mul_karatsuba(&f, &a, &a), poly::mul(&f, &a, &a));
/// ```
pub fn mul_karatsuba<F: Field>(f: &F, a: &Poly<F::Elem>, b: &Poly<F::Elem>) -> Poly<F::Elem> {
    normalized(f, karatsuba(f, a.coeffs(), b.coeffs()))
}

/// The product of two coefficient slices (not necessarily normalized).
pub(crate) fn mul_slices<F: Field>(f: &F, a: &[F::Elem], b: &[F::Elem]) -> Vec<F::Elem> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    f.poly_mul(a, b)
}
