//! Division with remainder: classical (through [`Field::dot`]) for short
//! quotients, and by Newton iteration on the reversed divisor for long
//! ones; and [`Modulus`], a divisor prepared once for many reductions.

use super::arith::{folded, mul_window};
use super::{Poly, mul_slices, normalized, trim};
use crate::{Field, FieldError};

/// At or above this many coefficients in both the quotient and the divisor,
/// [`div_rem`] computes the quotient with a power-series inverse of the
/// reversed divisor (Newton iteration: a few multiplications, so
/// Karatsuba's speed) instead of classically (quadratic).
pub const NEWTON_THRESHOLD: usize = 48;

/// `(q, r)` with `a = q b + r` and `deg r < deg b`.
///
/// # Errors
///
/// [`FieldError::DivisionByZero`] when `b` is the zero polynomial.
///
/// # Example
///
/// ```
/// use field::{Field, FieldError, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let a = Poly::from_coeffs(&f, vec![1, 0, 0, 1]); // x^3 + 1
/// let b = Poly::from_coeffs(&f, vec![1, 1]); // x + 1
/// let (q, r) = poly::div_rem(&f, &a, &b)?;
/// assert_eq!(q.coeffs(), &[1, f.neg(&1), 1]);
/// assert!(r.is_zero());
/// assert_eq!(poly::div_rem(&f, &a, &Poly::zero()), Err(FieldError::DivisionByZero));
/// # Ok::<(), FieldError>(())
/// ```
#[allow(clippy::type_complexity)] // the pair is the natural result of division
pub fn div_rem<F: Field>(
    f: &F,
    a: &Poly<F::Elem>,
    b: &Poly<F::Elem>,
) -> Result<(Poly<F::Elem>, Poly<F::Elem>), FieldError> {
    if b.is_zero() {
        return Err(FieldError::DivisionByZero);
    }
    let (q, r) = div_rem_slices(f, a.coeffs(), b.coeffs());
    Ok((normalized(f, q), normalized(f, r)))
}

/// `a mod b`: the remainder of [`div_rem`].
///
/// # Errors
///
/// [`FieldError::DivisionByZero`] when `b` is the zero polynomial.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let a = Poly::from_coeffs(&f, vec![3, 0, 1]); // x^2 + 3
/// let b = Poly::from_coeffs(&f, vec![f.neg(&1), 1]); // x - 1
/// assert_eq!(poly::rem(&f, &a, &b)?.coeffs(), &[4]); // a(1)
/// # Ok::<(), field::FieldError>(())
/// ```
pub fn rem<F: Field>(
    f: &F,
    a: &Poly<F::Elem>,
    b: &Poly<F::Elem>,
) -> Result<Poly<F::Elem>, FieldError> {
    div_rem(f, a, b).map(|(_, r)| r)
}

/// Quotient and remainder of coefficient slices; `b` must be normalized and
/// nonzero (its last coefficient is invertible). The remainder has exactly
/// `b.len() - 1` coefficients (possibly with trailing zeros) unless `a` is
/// shorter than `b`.
pub(crate) fn div_rem_slices<F: Field>(
    f: &F,
    a: &[F::Elem],
    b: &[F::Elem],
) -> (Vec<F::Elem>, Vec<F::Elem>) {
    debug_assert!(b.last().is_some_and(|c| !f.is_zero(c)));
    if a.len() < b.len() {
        return (Vec::new(), a.to_vec());
    }
    let quot_len = a.len() - b.len() + 1;
    let n = b.len() - 1;
    if quot_len.min(n) >= NEWTON_THRESHOLD {
        div_rem_newton(f, a, b)
    } else {
        div_rem_classical(f, a, b)
    }
}

/// Classical division, with every inner loop a [`Field::dot`] so that
/// lazy fields reduce once per coefficient.
fn div_rem_classical<F: Field>(
    f: &F,
    a: &[F::Elem],
    b: &[F::Elem],
) -> (Vec<F::Elem>, Vec<F::Elem>) {
    let lb = b.len();
    let quot_len = a.len() + 1 - lb;
    let lead = &b[lb - 1];
    // The caller guarantees a nonzero leading coefficient.
    let lead_inv = if f.is_one(lead) {
        None
    } else {
        Some(f.inv(lead).unwrap_or_else(|| f.zero()))
    };
    let brev: Vec<F::Elem> = b.iter().rev().cloned().collect();
    let mut q = vec![f.zero(); quot_len];
    for t in (0..quot_len).rev() {
        // q[t] = (a[t + lb - 1] - sum_{j >= 1} q[t + j] b[lb - 1 - j]) / lead
        let reach = (quot_len - 1 - t).min(lb - 1);
        let s = f.dot(&q[t + 1..=t + reach], &brev[1..=reach]);
        let v = f.sub(&a[t + lb - 1], &s);
        q[t] = match &lead_inv {
            Some(li) => f.mul(&v, li),
            None => v,
        };
    }
    let r = (0..lb - 1)
        .map(|k| {
            // r[k] = a[k] - sum_{t <= k} q[t] b[k - t]
            let t1 = k.min(quot_len - 1);
            f.sub(&a[k], &f.dot(&q[..=t1], &brev[lb - 1 - k..]))
        })
        .collect();
    (q, r)
}

/// The power series inverse of `h` modulo `x^k`, by Newton iteration
/// (`g <- g (2 - h g)`, doubling the precision each step). `h[0]` must be
/// invertible.
///
/// A step from precision `p` to `2p` needs only the terms `p..2p` of `h
/// g` (the lower ones are `1, 0, ..., 0`): a middle product
/// ([`mul_window`]), then `p` terms of `g` times them (a truncated one).
pub(crate) fn inv_series<F: Field>(f: &F, h: &[F::Elem], k: usize) -> Vec<F::Elem> {
    if k == 0 {
        return Vec::new();
    }
    let h0_inv = f.inv(&h[0]).unwrap_or_else(|| f.zero());
    let mut g = vec![h0_inv];
    let mut prec = 1;
    while prec < k {
        let next = (2 * prec).min(k);
        // e = h g = 1 (mod x^prec), so g (2 - e) = g - x^prec g (e / x^prec).
        let mut hi = mul_window(f, &h[..next.min(h.len())], &g, prec, next);
        for c in &mut hi {
            *c = f.neg(c);
        }
        g.extend(mul_window(f, &g, &hi, 0, next - prec));
        prec = next;
    }
    g
}

/// Division through the inverse of the reversed divisor: with `rev_k`
/// reversing `k + 1` coefficients, `rev(q) = rev(a) / rev(b) mod x^len(q)`.
fn div_rem_newton<F: Field>(f: &F, a: &[F::Elem], b: &[F::Elem]) -> (Vec<F::Elem>, Vec<F::Elem>) {
    let lb = b.len();
    let quot_len = a.len() + 1 - lb;
    let brev: Vec<F::Elem> = b.iter().rev().cloned().collect();
    let inv = inv_series(f, &brev, quot_len);
    let q = quotient_from_inverse(f, a, lb - 1, &inv);
    let r = remainder_from_quotient(f, a, b, &q);
    (q, r)
}

/// The quotient of `a` by a degree-`n` divisor whose reversal has the
/// power-series inverse `inv` (with at least `a.len() - n` terms).
fn quotient_from_inverse<F: Field>(
    f: &F,
    a: &[F::Elem],
    n: usize,
    inv: &[F::Elem],
) -> Vec<F::Elem> {
    let quot_len = a.len() - n;
    let top: Vec<F::Elem> = a[n..].iter().rev().cloned().collect();
    let mut qrev = mul_window(f, &top, inv, 0, quot_len);
    qrev.reverse();
    qrev
}

/// `a - q b` modulo `x^n` for the divisor `b` of degree `n`: exactly the
/// remainder when `q` is the quotient.
///
/// The remainder has degree below `n`, so it is also `a - q b` modulo
/// `x^N - 1` for any `N >= n`: a field with
/// [`Field::poly_mul_wrapped`] takes `q b` from transforms of the power
/// of two `N >= n`, where the low `n` terms of the full product need
/// about twice that length.
fn remainder_from_quotient<F: Field>(
    f: &F,
    a: &[F::Elem],
    b: &[F::Elem],
    q: &[F::Elem],
) -> Vec<F::Elem> {
    let n = b.len() - 1;
    let wrap = n.next_power_of_two();
    if wrap < (q.len() + n).next_power_of_two()
        && let Some(qb) = f.poly_mul_wrapped(q, b, wrap)
    {
        let a = folded(f, a, wrap);
        return (0..n).map(|k| f.sub(&a[k], &qb[k])).collect();
    }
    let qb = mul_window(f, q, &b[..n], 0, n);
    (0..n).map(|k| f.sub(&a[k], &qb[k])).collect()
}

/// A monic modulus of degree `n >= 1`, prepared for many reductions of
/// polynomials with at most `2n` coefficients (products of two reduced
/// polynomials; remainders modulo a product tree's parent node): above
/// [`NEWTON_THRESHOLD`] it keeps the inverse of its reversal, so every
/// reduction costs two multiplications; over a field
/// with transforms it also keeps the transforms of the modulus and of
/// that inverse ([`Transforms`]), so each of the two multiplications
/// transforms only the operand that changes.
#[derive(Clone, Debug)]
pub(crate) struct Modulus<E> {
    /// The monic modulus, `n + 1` coefficients.
    m: Vec<E>,
    /// `rev(m)^-1 mod x^k` for quotients of up to `k` terms (`k = n`
    /// unless prepared [`for_quotients`](Self::for_quotients)), for
    /// Newton reductions.
    inv_rev: Option<Vec<E>>,
    /// The transforms of `m` and `inv_rev`, where the field has them.
    transforms: Option<Transforms<E>>,
}

/// The factors of a Newton reduction modulo a degree-`n` modulus `m`,
/// transformed once ([`Field::poly_transform`]).
#[derive(Clone, Debug)]
struct Transforms<E> {
    /// `m mod (x^W - 1)` transformed, `W` the power of two `>= n`: the
    /// remainder `a - q m` has degree below `n`, so it is that product
    /// modulo `x^W - 1`.
    m: Vec<E>,
    /// `rev(m)^-1` (its `k` terms, `k` the longest quotient prepared for)
    /// transformed at the power of two `L >= 2k - 1`: a quotient's
    /// product with it has at most `2k - 1` terms, so nothing wraps.
    inv: Vec<E>,
}

impl<E: Clone> Modulus<E> {
    /// Prepares the monic, normalized `m` of degree `n` at least one, for
    /// dividends of up to `2n` coefficients.
    pub(crate) fn new<F: Field<Elem = E>>(f: &F, m: Vec<E>) -> Self {
        let n = m.len() - 1;
        Self::for_quotients(f, m, n)
    }

    /// As [`new`](Self::new), prepared for quotients of up to `max_quot`
    /// coefficients (dividends of up to `n + max_quot`): a product tree's
    /// node divides remainders modulo its parent, whose quotients are as
    /// long as its sibling's degree. Longer quotients are still right,
    /// by the general division.
    pub(crate) fn for_quotients<F: Field<Elem = E>>(f: &F, m: Vec<E>, max_quot: usize) -> Self {
        debug_assert!(m.len() >= 2 && m.last().is_some_and(|c| f.is_one(c)));
        let n = m.len() - 1;
        let inv_rev = (n.min(max_quot) >= NEWTON_THRESHOLD).then(|| {
            let rev: Vec<E> = m.iter().rev().cloned().collect();
            inv_series(f, &rev, max_quot)
        });
        let transforms = inv_rev.as_ref().and_then(|inv| {
            Some(Transforms {
                m: f.poly_transform(&m, n.next_power_of_two())?,
                inv: f.poly_transform(inv, (2 * max_quot - 1).next_power_of_two())?,
            })
        });
        Self {
            m,
            inv_rev,
            transforms,
        }
    }

    /// The degree `n`.
    pub(crate) fn degree(&self) -> usize {
        self.m.len() - 1
    }

    /// The monic modulus.
    pub(crate) fn coeffs(&self) -> &[E] {
        &self.m
    }

    /// `a mod m`, for any `a` (fast when `a` has at most `2n`
    /// coefficients); the result has trailing zeros trimmed.
    pub(crate) fn reduce<F: Field<Elem = E>>(&self, f: &F, a: Vec<E>) -> Vec<E> {
        let n = self.degree();
        let mut r = if a.len() <= n {
            a
        } else {
            let quot_len = a.len() - n;
            match &self.inv_rev {
                Some(inv) if quot_len >= NEWTON_THRESHOLD && quot_len <= inv.len() => self
                    .transforms
                    .as_ref()
                    .and_then(|t| t.reduce(f, &a, n))
                    .unwrap_or_else(|| {
                        let q = quotient_from_inverse(f, &a, n, inv);
                        remainder_from_quotient(f, &a, &self.m, &q)
                    }),
                // Longer dividends (not products of two reduced
                // polynomials) by the general division.
                _ => div_rem_slices(f, &a, &self.m).1,
            }
        };
        trim(f, &mut r);
        r
    }

    /// `a * b mod m` for reduced `a` and `b`.
    pub(crate) fn mul<F: Field<Elem = E>>(&self, f: &F, a: &[E], b: &[E]) -> Vec<E> {
        self.reduce(f, mul_slices(f, a, b))
    }
}

impl<E: Clone> Transforms<E> {
    /// `a mod m` for `n < a.len() <= n + k`, from the kept transforms:
    /// [`quotient_from_inverse`] and [`remainder_from_quotient`] with one
    /// forward and one inverse transform each. `None` if the field
    /// declines the lengths (it did not when the transforms were made).
    fn reduce<F: Field<Elem = E>>(&self, f: &F, a: &[E], n: usize) -> Option<Vec<E>> {
        let quot_len = a.len() - n;
        let top: Vec<E> = a[n..].iter().rev().cloned().collect();
        let mut q = f.poly_mul_transformed(&top, &self.inv)?;
        q.truncate(quot_len);
        q.reverse();
        let qm = f.poly_mul_transformed(&q, &self.m)?;
        let a = folded(f, a, self.m.len());
        Some((0..n).map(|k| f.sub(&a[k], &qm[k])).collect())
    }
}
