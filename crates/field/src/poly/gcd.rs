//! Greatest common divisors (Euclid's algorithm, or the half-GCD for long
//! operands) and monic normalization.

use super::{Poly, div_rem_slices, trim};
use crate::Field;

/// `a` divided by its leading coefficient (the zero polynomial stays zero).
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let a = Poly::from_coeffs(&f, vec![4, 2]); // 2x + 4
/// assert_eq!(poly::make_monic(&f, &a).coeffs(), &[2, 1]);
/// assert!(poly::make_monic(&f, &Poly::<u64>::zero()).is_zero());
/// ```
pub fn make_monic<F: Field>(f: &F, a: &Poly<F::Elem>) -> Poly<F::Elem> {
    Poly::from_normalized(monic_slice(f, a.coeffs().to_vec()))
}

/// Makes normalized coefficients monic in place.
pub(crate) fn monic_slice<F: Field>(f: &F, mut v: Vec<F::Elem>) -> Vec<F::Elem> {
    let Some(lead) = v.last() else {
        return v;
    };
    if f.is_one(lead) {
        return v;
    }
    // A normalized polynomial has a nonzero, hence invertible, leading
    // coefficient.
    let Some(li) = f.inv(lead) else {
        return v;
    };
    for c in &mut v {
        f.mul_assign(c, &li);
    }
    v
}

/// The monic greatest common divisor of `a` and `b` (zero only when both
/// are zero), by Euclid's algorithm, or by the half-GCD when both have at
/// least 1280 coefficients (the same result, in `O(M(n) log n)` instead of
/// `O(n^2)` field operations).
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let r = |v: &[u64]| poly::from_roots(&f, v);
/// let a = r(&[1, 2, 3]);
/// let b = poly::scale(&f, &r(&[2, 3, 4]), &7);
/// assert_eq!(poly::gcd(&f, &a, &b), r(&[2, 3]));
/// assert_eq!(poly::gcd(&f, &a, &Poly::zero()), a);
/// ```
pub fn gcd<F: Field>(f: &F, a: &Poly<F::Elem>, b: &Poly<F::Elem>) -> Poly<F::Elem> {
    Poly::from_normalized(gcd_slices(f, a.coeffs().to_vec(), b.coeffs().to_vec()))
}

/// From this many coefficients in the shorter operand, [`gcd_slices`]
/// uses the half-GCD instead of Euclid's quadratic loop. Measured on
/// Goldilocks (`gcd/goldilocks` in the algorithms bench): Euclid is faster
/// at 1024 coefficients, the half-GCD at 2048; the crossover interpolates
/// to about 1250.
pub(crate) const FAST_GCD_THRESHOLD: usize = 1280;

/// The monic gcd of normalized coefficient vectors: Euclid's algorithm for
/// short operands, the half-GCD ([`crate::hgcd`]) from
/// [`FAST_GCD_THRESHOLD`] coefficients on; both give the same (unique)
/// monic gcd.
pub(crate) fn gcd_slices<F: Field>(f: &F, a: Vec<F::Elem>, b: Vec<F::Elem>) -> Vec<F::Elem> {
    if a.len().min(b.len()) >= FAST_GCD_THRESHOLD {
        crate::hgcd::fast_gcd(f, a, b, crate::hgcd::HGCD_BASE)
    } else {
        gcd_euclid_slices(f, a, b)
    }
}

/// Euclid's algorithm on normalized coefficient vectors; the result is
/// monic and normalized.
pub(crate) fn gcd_euclid_slices<F: Field>(f: &F, a: Vec<F::Elem>, b: Vec<F::Elem>) -> Vec<F::Elem> {
    let (mut r0, mut r1) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    trim(f, &mut r0);
    trim(f, &mut r1);
    while !r1.is_empty() {
        let (_, mut r) = div_rem_slices(f, &r0, &r1);
        trim(f, &mut r);
        r0 = core::mem::replace(&mut r1, r);
    }
    monic_slice(f, r0)
}
