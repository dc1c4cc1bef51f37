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

/// `v mod (x^n - 1)`: `n` coefficients, `v_i` added at `i mod n`.
pub(crate) fn folded<F: Field>(f: &F, v: &[F::Elem], n: usize) -> Vec<F::Elem> {
    let mut out: Vec<F::Elem> = v[..v.len().min(n)].to_vec();
    out.resize(n, f.zero());
    for chunk in v.chunks(n.max(1)).skip(1) {
        for (o, c) in out.iter_mut().zip(chunk) {
            f.add_assign(o, c);
        }
    }
    out
}

/// The coefficients `lo..hi` of `a b` (zeros past its end): a middle
/// product when `lo > 0`, a truncated one when `lo = 0`.
///
/// Modulo `x^N - 1` with `N >= hi` and `N >= len - lo` (`len` the
/// product's length) a coefficient `k` in `lo..hi` gains only terms of
/// degree `k + N >= len`, which are zero: so a field with
/// [`Field::poly_mul_wrapped`] computes the window from transforms of
/// length `N`, about half those of the full product when the window is
/// in the middle (the Newton steps of division). Factors are first cut
/// to `hi` terms, which the window cannot see past.
pub(crate) fn mul_window<F: Field>(
    f: &F,
    a: &[F::Elem],
    b: &[F::Elem],
    lo: usize,
    hi: usize,
) -> Vec<F::Elem> {
    let (a, b) = (&a[..a.len().min(hi)], &b[..b.len().min(hi)]);
    let mut out = Vec::with_capacity(hi.saturating_sub(lo));
    if !a.is_empty() && !b.is_empty() && lo < hi {
        let len = a.len() + b.len() - 1;
        let n = hi.max(len.saturating_sub(lo)).next_power_of_two();
        let wrapped = if n < len.next_power_of_two() {
            f.poly_mul_wrapped(a, b, n)
        } else {
            None
        };
        let full = wrapped.unwrap_or_else(|| f.poly_mul(a, b));
        out.extend_from_slice(&full[lo.min(full.len())..hi.min(full.len())]);
    }
    out.resize(hi.saturating_sub(lo), f.zero());
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fp64, Goldilocks, Mersenne61};
    use rand::{RngExt, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// Every window of every product shape, against the full product:
    /// windows reaching past the end, windows whose wrapped length is
    /// set by `len - lo` rather than `hi`, truncated and middle ones.
    fn windows<F: Field>(f: &F, wrapped_somewhere: bool) {
        let rng = &mut ChaCha8Rng::seed_from_u64(31);
        let mut wrapped = 0;
        for case in 0..200 {
            let la = rng.random_range(1..600usize);
            let lb = rng.random_range(1..600usize);
            let a: Vec<F::Elem> = (0..la).map(|_| f.from_u64(rng.random())).collect();
            let b: Vec<F::Elem> = (0..lb).map(|_| f.from_u64(rng.random())).collect();
            let full = f.poly_mul(&a, &b);
            let len = full.len();
            let lo = rng.random_range(0..len + 10);
            let hi = lo + rng.random_range(0..len + 10 - lo);
            let want: Vec<F::Elem> = (lo..hi)
                .map(|k| full.get(k).cloned().unwrap_or_else(|| f.zero()))
                .collect();
            assert_eq!(mul_window(f, &a, &b, lo, hi), want, "case {case}");
            let n = hi.max(len.saturating_sub(lo)).next_power_of_two();
            if n < len.next_power_of_two() && f.poly_mul_wrapped(&a, &b, n).is_some() {
                wrapped += 1;
            }
        }
        assert_eq!(wrapped > 0, wrapped_somewhere, "{wrapped} windows wrapped");
    }

    #[test]
    fn windows_match_the_full_product() {
        windows(&Fp64::proth(), true);
        windows(&Goldilocks, true);
        windows(&Mersenne61, false);
        windows(&Fp64::new(65_537).unwrap(), true);
    }
}
