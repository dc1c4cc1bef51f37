//! Euclid's algorithm and monic normalization: the quadratic gcd, and the
//! base case of the half-GCD.

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
