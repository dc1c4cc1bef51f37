//! The deterministic integer root finder of Appendix K of the paper.

use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_traits::{One, Zero};

use crate::poly::Poly;
use crate::{FieldError, Rational};

/// All roots of `p`, in increasing order, when they are distinct integers
/// in `[low, high]`: the deterministic decoder of Appendix K of the paper
/// (the factorization step of Algorithm 2 done over the rationals).
///
/// # Method
///
/// `p` is first made monic. If its roots are integers, the monic
/// polynomial `h` has integer coefficients (they are elementary symmetric
/// functions of the roots), so rational coefficients are accepted (for
/// example `(x - 1)(x - 2) / 3`) and anything else is rejected as
/// [`FieldError::NotIntegral`] without further work. Then one root is
/// found at a time and divided out exactly, by the bisection scheme of
/// Appendix K on the integers:
///
/// - *Odd degree*: `h(low - 1) < 0 < h(high + 1)`, so bisection on the sign
///   of `h` over the integers meets a root exactly (a sign change between
///   two consecutive integers would be a non-integer root).
/// - *Even degree*: `h'` has odd degree, so bisection on its sign finds
///   consecutive integers `a, a + 1` with `h'(a) < 0 <= h'(a + 1)`. A
///   critical point there is a local minimum of `h`, and between two
///   consecutive integer roots `h` has exactly one critical point, so `h`
///   is negative there: either `a` or `a + 1` is a root, or `h(a) < 0` and
///   bisection on `[low - 1, a]`, where `h(low - 1) > 0`, meets a root.
///   This is Appendix K's idea (bisect `h'`, then `h` on a sign change)
///   with the orientation of the bisection chosen so that the critical
///   point found is always a minimum, which removes the paper's search for
///   further roots of `h'`.
///
/// Each root costs `O(log(high - low))` evaluations of a polynomial of
/// degree at most `n`, so the work is `O(n^2 log(high - low))` integer
/// operations, deterministic and independent of any random source. Every
/// step checks the promise it relies on; nothing loops beyond the
/// bisections' bounds.
///
/// # Errors
///
/// - [`FieldError::ZeroPolynomial`] for the zero polynomial (a nonzero
///   constant gives `Ok` with no roots).
/// - [`FieldError::NotIntegral`] if the monic `p` has a non-integer
///   coefficient, so some root is not an integer.
/// - [`FieldError::RepeatedRoot`] when a root found has multiplicity two
///   or more. If all roots are integers in the range, a repeated one is
///   always reported this way.
/// - [`FieldError::RootsOutOfRange`] for every other broken promise: a
///   root outside `[low, high]`, a non-integer or non-real root (or a
///   repeated root met only after one of these).
///
/// # Example
///
/// ```
/// use field::{FieldError, Poly, Rational, Rationals, integer_roots, poly};
/// use num_bigint::BigInt;
///
/// let q = Rationals;
/// let r = |v: i64| Rational::from_integer(v);
/// let p = poly::from_roots(&q, &[r(-3), r(10), r(4)]);
/// let (low, high) = (BigInt::from(-5), BigInt::from(10));
/// let roots = integer_roots(&p, &low, &high)?;
/// assert_eq!(roots, [-3, 4, 10].map(BigInt::from).to_vec());
///
/// // 2x - 1 has the root 1/2.
/// let half = Poly::from_coeffs(&q, vec![r(-1), r(2)]);
/// assert_eq!(integer_roots(&half, &low, &high), Err(FieldError::NotIntegral));
/// // x^2 + 1 has no real roots.
/// let none = Poly::from_coeffs(&q, vec![r(1), r(0), r(1)]);
/// assert!(matches!(integer_roots(&none, &low, &high), Err(FieldError::RootsOutOfRange { .. })));
/// # Ok::<(), FieldError>(())
/// ```
pub fn integer_roots(
    p: &Poly<Rational>,
    low: &BigInt,
    high: &BigInt,
) -> Result<Vec<BigInt>, FieldError> {
    let Some(lead) = p.leading() else {
        return Err(FieldError::ZeroPolynomial);
    };
    let mut h = Vec::with_capacity(p.coeffs().len());
    for c in p.coeffs() {
        // The leading coefficient of a normalized polynomial is nonzero.
        let monic = (c / lead).ok_or(FieldError::ZeroPolynomial)?;
        h.push(monic.to_integer().ok_or(FieldError::NotIntegral)?);
    }
    let out_of_range = || FieldError::RootsOutOfRange {
        low: low.to_string(),
        high: high.to_string(),
    };
    if h.len() > 1 && low > high {
        return Err(out_of_range());
    }
    let below = low - 1u32;
    let above = high + 1u32;
    let mut roots = Vec::with_capacity(h.len().saturating_sub(1));
    while h.len() > 1 {
        let degree = h.len() - 1;
        let root = if degree % 2 == 1 {
            bisect(&h, &below, &above)
        } else {
            even_degree_root(&h, &below, &above)
        }
        .ok_or_else(out_of_range)?;
        if root < *low || root > *high {
            return Err(out_of_range());
        }
        let (q, remainder) = deflate(&h, &root);
        if !remainder.is_zero() {
            // Unreachable: every candidate is an exact zero of h.
            return Err(out_of_range());
        }
        if eval(&q, &root).is_zero() {
            return Err(FieldError::RepeatedRoot);
        }
        roots.push(root);
        h = q;
    }
    roots.sort();
    Ok(roots)
}

/// A root of `h` in `(a, b)` by bisection, when `h(a)` and `h(b)` are
/// nonzero with opposite signs; `None` when that promise fails or the sign
/// change is not at an integer.
fn bisect(h: &[BigInt], a: &BigInt, b: &BigInt) -> Option<BigInt> {
    let sa = eval(h, a).sign();
    let sb = eval(h, b).sign();
    if sa == Sign::NoSign || sb == Sign::NoSign || sa == sb {
        return None;
    }
    let (mut a, mut b) = (a.clone(), b.clone());
    while &b - &a > BigInt::one() {
        let mid = (&a + &b).div_floor(&BigInt::from(2));
        let s = eval(h, &mid).sign();
        if s == Sign::NoSign {
            return Some(mid);
        }
        if s == sa {
            a = mid;
        } else {
            b = mid;
        }
    }
    None
}

/// A root of the monic `h` of even degree, through a local minimum found
/// by bisection on `h'`; `None` if a promise fails.
fn even_degree_root(h: &[BigInt], below: &BigInt, above: &BigInt) -> Option<BigInt> {
    let d = derivative(h);
    let negative = |t: &BigInt| eval(&d, t).sign() == Sign::Minus;
    // h' has odd degree and positive leading coefficient, and its roots lie
    // between the smallest and the largest root of h (Gauss-Lucas).
    if !negative(below) || eval(&d, above).sign() != Sign::Plus {
        return None;
    }
    // Invariant: h'(a) < 0 <= h'(b).
    let (mut a, mut b) = (below.clone(), above.clone());
    while &b - &a > BigInt::one() {
        let mid = (&a + &b).div_floor(&BigInt::from(2));
        if negative(&mid) {
            a = mid;
        } else {
            b = mid;
        }
    }
    let ha = eval(h, &a);
    if ha.is_zero() {
        return Some(a);
    }
    let hb = eval(h, &b);
    if hb.is_zero() {
        return Some(b);
    }
    // h(below) > 0 for even degree; h is negative at the minimum's gap.
    match (ha.sign(), hb.sign()) {
        (Sign::Minus, _) => bisect(h, below, &a),
        (_, Sign::Minus) => bisect(h, below, &b),
        _ => None,
    }
}

/// `h(t)` by Horner's rule.
fn eval(h: &[BigInt], t: &BigInt) -> BigInt {
    let mut acc = BigInt::zero();
    for c in h.iter().rev() {
        acc *= t;
        acc += c;
    }
    acc
}

/// `h'`.
fn derivative(h: &[BigInt]) -> Vec<BigInt> {
    h.iter()
        .enumerate()
        .skip(1)
        .map(|(i, c)| c * BigInt::from(i))
        .collect()
}

/// `h = q (x - r) + remainder`, by synthetic division.
fn deflate(h: &[BigInt], r: &BigInt) -> (Vec<BigInt>, BigInt) {
    let n = h.len() - 1;
    let mut q = vec![BigInt::zero(); n];
    let mut carry = BigInt::zero();
    for k in (1..=n).rev() {
        carry = &h[k] + &carry * r;
        q[k - 1] = carry.clone();
    }
    let remainder = &h[0] + carry * r;
    (q, remainder)
}
