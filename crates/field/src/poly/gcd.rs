//! Greatest common divisors: Euclid's algorithm for short operands, the
//! half-GCD for long ones.

use super::Poly;
use super::euclid::gcd_euclid_slices;
use super::half_gcd::{HGCD_BASE, fast_gcd};
use crate::Field;

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
/// short operands, the half-GCD (`poly::half_gcd`) from
/// [`FAST_GCD_THRESHOLD`] coefficients on; both give the same (unique)
/// monic gcd.
pub(crate) fn gcd_slices<F: Field>(f: &F, a: Vec<F::Elem>, b: Vec<F::Elem>) -> Vec<F::Elem> {
    if a.len().min(b.len()) >= FAST_GCD_THRESHOLD {
        fast_gcd(f, a, b, HGCD_BASE)
    } else {
        gcd_euclid_slices(f, a, b)
    }
}
