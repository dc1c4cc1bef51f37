//! Ring operations: addition, subtraction, negation, scaling and
//! multiplication (schoolbook through [`Field::dot`], Karatsuba above a
//! threshold).

use super::{Poly, normalized};
use crate::Field;

/// Below this many coefficients in the shorter factor, [`mul`] uses the
/// schoolbook method; at or above it, Karatsuba's.
///
/// The schoolbook base case computes each output coefficient as one
/// [`Field::dot`] of contiguous slices (one factor is kept reversed), so a
/// field with lazy reduction (such as [`Mersenne61`](crate::Mersenne61),
/// which sums 64 products in a `u128` before reducing) pays one reduction
/// per output coefficient instead of one per product. That makes the base
/// case cheap, hence the fairly high threshold (tuned on `Mersenne61` with
/// the `algorithms` bench).
pub const KARATSUBA_THRESHOLD: usize = 32;

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

/// `a * b`: schoolbook below [`KARATSUBA_THRESHOLD`], Karatsuba above it,
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
/// [`KARATSUBA_THRESHOLD`]) whatever the field's own
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

/// Karatsuba multiplication of coefficient slices with a schoolbook base
/// case; the default of [`Field::poly_mul`].
pub(crate) fn karatsuba<F: Field>(f: &F, a: &[F::Elem], b: &[F::Elem]) -> Vec<F::Elem> {
    karatsuba_with(f, a, b, &|a, b, out| schoolbook_add_into(f, a, b, out))
}

/// `out += a * b` for a base case: both factors nonempty, the shorter one
/// below [`KARATSUBA_THRESHOLD`].
pub(crate) type BaseCase<'a, E> = dyn Fn(&[E], &[E], &mut [E]) + 'a;

/// Karatsuba multiplication with a field-specific base case (fields with
/// lazy reduction accumulate whole base products in wide integers).
pub(crate) fn karatsuba_with<F: Field>(
    f: &F,
    a: &[F::Elem],
    b: &[F::Elem],
    base: &BaseCase<'_, F::Elem>,
) -> Vec<F::Elem> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![f.zero(); a.len() + b.len() - 1];
    kara_add_into(f, a, b, &mut out, base);
    out
}

/// `out += a * b`, with `out.len() >= a.len() + b.len() - 1` and both
/// factors nonempty.
fn kara_add_into<F: Field>(
    f: &F,
    a: &[F::Elem],
    b: &[F::Elem],
    out: &mut [F::Elem],
    base: &BaseCase<'_, F::Elem>,
) {
    let (a, b) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let (la, lb) = (a.len(), b.len());
    if lb < KARATSUBA_THRESHOLD {
        base(a, b, out);
        return;
    }
    let h = la.div_ceil(2);
    if lb <= h {
        // Unbalanced: cut the long factor into pieces of the short one's
        // length, so that every recursive product is balanced.
        for (k, chunk) in a.chunks(lb).enumerate() {
            kara_add_into(f, chunk, b, &mut out[k * lb..], base);
        }
        return;
    }
    let (a0, a1) = a.split_at(h);
    let (b0, b1) = b.split_at(h);
    let z0 = karatsuba_with(f, a0, b0, base);
    let z2 = karatsuba_with(f, a1, b1, base);
    let mut sa = a0.to_vec();
    for (s, x) in sa.iter_mut().zip(a1) {
        f.add_assign(s, x);
    }
    let mut sb = b0.to_vec();
    for (s, x) in sb.iter_mut().zip(b1) {
        f.add_assign(s, x);
    }
    // z1 = (a0 + a1)(b0 + b1) - z0 - z2
    let mut z1 = karatsuba_with(f, &sa, &sb, base);
    for (z, x) in z1.iter_mut().zip(&z0) {
        f.sub_assign(z, x);
    }
    for (z, x) in z1.iter_mut().zip(&z2) {
        f.sub_assign(z, x);
    }
    for (o, x) in out.iter_mut().zip(&z0) {
        f.add_assign(o, x);
    }
    for (o, x) in out[h..].iter_mut().zip(&z1) {
        f.add_assign(o, x);
    }
    for (o, x) in out[2 * h..].iter_mut().zip(&z2) {
        f.add_assign(o, x);
    }
}

/// `out += a * b` by the schoolbook method: output coefficient `k` is one
/// dot product of a slice of `a` with a slice of `b` reversed.
pub(crate) fn schoolbook_add_into<F: Field>(
    f: &F,
    a: &[F::Elem],
    b: &[F::Elem],
    out: &mut [F::Elem],
) {
    let (la, lb) = (a.len(), b.len());
    if la == 0 || lb == 0 {
        return;
    }
    let brev: Vec<F::Elem> = b.iter().rev().cloned().collect();
    for (k, o) in out.iter_mut().enumerate().take(la + lb - 1) {
        // sum over i of a[i] * b[k - i] = a[i] * brev[lb - 1 - k + i]
        let i0 = k.saturating_sub(lb - 1);
        let i1 = k.min(la - 1);
        let d = f.dot(&a[i0..=i1], &brev[lb - 1 + i0 - k..]);
        f.add_assign(o, &d);
    }
}
