//! The half-GCD: the Euclidean remainder sequence of `(a, b)` advanced to
//! the middle of the degree of `a` with `O(M(n) log n)` field operations,
//! and the fast monic gcd built on it.
//!
//! Polynomials here are normalized coefficient vectors (little-endian, no
//! trailing zeros), as in [`poly`](crate::poly); every product goes through
//! [`Field::poly_mul`], so the fields' transforms set the speed.

use super::euclid::{gcd_euclid_slices, monic_slice};
use super::{div_rem_slices, mul_slices, trim};
use crate::Field;

/// Below this degree [`hgcd`] runs Euclid's steps one by one: the
/// recursion only pays when its products are long transforms (on
/// Goldilocks, 128 and 256 measure alike within noise; 32 is slower).
pub(crate) const HGCD_BASE: usize = 128;

/// A 2x2 matrix `[[a, b], [c, d]]` of polynomials: a product of Euclid
/// steps, so that `(r_j, r_(j+1)) = M (r_0, r_1)` and `c`, `d` are the
/// cofactors of the later remainder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Matrix<E> {
    pub(crate) a: Vec<E>,
    pub(crate) b: Vec<E>,
    pub(crate) c: Vec<E>,
    pub(crate) d: Vec<E>,
}

impl<E: Clone> Matrix<E> {
    fn identity<F: Field<Elem = E>>(f: &F) -> Self {
        Self {
            a: vec![f.one()],
            b: Vec::new(),
            c: Vec::new(),
            d: vec![f.one()],
        }
    }
}

/// The normalized product of normalized `x` and `y`. A monomial factor
/// (the `x^N` of [`minimal_recurrence`](crate::minimal_recurrence), and its
/// top parts down the first recursive calls) is a shift, not a transform.
fn mul<F: Field>(f: &F, x: &[F::Elem], y: &[F::Elem]) -> Vec<F::Elem> {
    let monomial = |v: &[F::Elem]| {
        v.split_last()
            .filter(|(_, low)| low.iter().all(|c| f.is_zero(c)))
            .map(|(lead, low)| (lead.clone(), low.len()))
    };
    let shifted = |(c, k): (F::Elem, usize), v: &[F::Elem]| {
        let mut out = vec![f.zero(); k];
        out.extend(v.iter().map(|vi| f.mul(vi, &c)));
        out
    };
    if x.is_empty() || y.is_empty() {
        return Vec::new();
    }
    if let Some(m) = monomial(x) {
        return shifted(m, y);
    }
    if let Some(m) = monomial(y) {
        return shifted(m, x);
    }
    let mut p = mul_slices(f, x, y);
    trim(f, &mut p);
    p
}

/// `x + y`, normalized (consumes `x` to reuse its buffer).
fn add<F: Field>(f: &F, mut x: Vec<F::Elem>, y: &[F::Elem]) -> Vec<F::Elem> {
    if x.len() < y.len() {
        x.resize(y.len(), f.zero());
    }
    for (xi, yi) in x.iter_mut().zip(y) {
        f.add_assign(xi, yi);
    }
    trim(f, &mut x);
    x
}

/// `x - y`, normalized.
fn sub<F: Field>(f: &F, x: &[F::Elem], y: Vec<F::Elem>) -> Vec<F::Elem> {
    let mut out = y;
    if out.len() < x.len() {
        out.resize(x.len(), f.zero());
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = match x.get(i) {
            Some(xi) => f.sub(xi, o),
            None => f.neg(o),
        };
    }
    trim(f, &mut out);
    out
}

/// `M (x, y)`.
fn apply<F: Field>(
    f: &F,
    m: &Matrix<F::Elem>,
    x: &[F::Elem],
    y: &[F::Elem],
) -> (Vec<F::Elem>, Vec<F::Elem>) {
    let first = add(f, mul(f, &m.a, x), &mul(f, &m.b, y));
    let second = add(f, mul(f, &m.c, x), &mul(f, &m.d, y));
    (first, second)
}

/// `X Y`; with `full` false only its second row (the first left empty).
fn mat_mul<F: Field>(
    f: &F,
    x: &Matrix<F::Elem>,
    y: &Matrix<F::Elem>,
    full: bool,
) -> Matrix<F::Elem> {
    let (a, b) = if full {
        (
            add(f, mul(f, &x.a, &y.a), &mul(f, &x.b, &y.c)),
            add(f, mul(f, &x.a, &y.b), &mul(f, &x.b, &y.d)),
        )
    } else {
        (Vec::new(), Vec::new())
    };
    Matrix {
        a,
        b,
        c: add(f, mul(f, &x.c, &y.a), &mul(f, &x.d, &y.c)),
        d: add(f, mul(f, &x.c, &y.b), &mul(f, &x.d, &y.d)),
    }
}

/// `[[0, 1], [1, -q]] M`: one more Euclid step with quotient `q`.
fn step<F: Field>(f: &F, m: Matrix<F::Elem>, q: &[F::Elem]) -> Matrix<F::Elem> {
    let c = sub_mul(f, &m.a, q, &m.c);
    let d = sub_mul(f, &m.b, q, &m.d);
    Matrix {
        a: m.c,
        b: m.d,
        c,
        d,
    }
}

/// `x - q y`, normalized: schoolbook when `q` is short (Euclid's
/// quotients almost always have degree one), a fast product otherwise.
fn sub_mul<F: Field>(f: &F, x: &[F::Elem], q: &[F::Elem], y: &[F::Elem]) -> Vec<F::Elem> {
    if q.len() > SHORT_QUOTIENT {
        return sub(f, x, mul(f, q, y));
    }
    let mut out = x.to_vec();
    if y.is_empty() || q.is_empty() {
        return out;
    }
    let len = q.len() + y.len() - 1;
    if out.len() < len {
        out.resize(len, f.zero());
    }
    for (i, qi) in q.iter().enumerate() {
        for (o, yj) in out[i..].iter_mut().zip(y) {
            f.sub_assign(o, &f.mul(qi, yj));
        }
    }
    trim(f, &mut out);
    out
}

/// Quotients with at most this many coefficients are applied by
/// schoolbook in [`sub_mul`].
const SHORT_QUOTIENT: usize = 8;

/// One division with remainder of normalized `x` by normalized nonzero
/// `y` with `deg x >= deg y`, in place on a copy of `x`: the base case
/// makes many of these, with short quotients, so it avoids the general
/// division's reversed copies.
fn euclid_step<F: Field>(f: &F, x: &[F::Elem], y: &[F::Elem]) -> (Vec<F::Elem>, Vec<F::Elem>) {
    let ly = y.len();
    if x.len() < ly || ly == 0 {
        return (Vec::new(), x.to_vec());
    }
    // y is normalized, so its leading coefficient is invertible.
    let lead_inv = f.inv(&y[ly - 1]).unwrap_or_else(|| f.zero());
    let mut r = x.to_vec();
    let dq = x.len() - ly;
    let mut q = vec![f.zero(); dq + 1];
    for i in (0..=dq).rev() {
        let coef = f.mul(&r[i + ly - 1], &lead_inv);
        if !f.is_zero(&coef) {
            for (ri, yj) in r[i..].iter_mut().zip(y) {
                f.sub_assign(ri, &f.mul(&coef, yj));
            }
        }
        q[i] = coef;
    }
    r.truncate(ly - 1);
    trim(f, &mut r);
    trim(f, &mut q);
    (q, r)
}

/// Euclid's steps on `(x, y)` until the second remainder has at most
/// `stop_len` coefficients, as a matrix.
fn euclid_steps<F: Field>(
    f: &F,
    mut x: Vec<F::Elem>,
    mut y: Vec<F::Elem>,
    stop_len: usize,
) -> Matrix<F::Elem> {
    let mut m = Matrix::identity(f);
    while y.len() > stop_len {
        let (q, r) = euclid_step(f, &x, &y);
        m = step(f, m, &q);
        x = core::mem::replace(&mut y, r);
    }
    m
}

/// The half-GCD of normalized `a` and `b` with `deg a = n > deg b`: the
/// matrix `M` of the Euclid steps that take `(a, b)` to the consecutive
/// remainders `(r_j, r_(j+1))` with `deg r_j >= ceil(n/2) > deg r_(j+1)`
/// (the identity when `deg b < ceil(n/2)` already).
///
/// This is the recursion of Thull and Yap (1990), as in von zur Gathen and
/// Gerhard, *Modern Computer Algebra*, section 11.1: the quotients of the
/// top halves of `a` and `b` are the first quotients of `a` and `b`, so
/// one recursive call on the top halves reaches degree about `3n/4`, one
/// division makes a further step, and a second call on the top halves of
/// that pair reaches `ceil(n/2)`. Below `base` the steps are made one by
/// one. Cost `O(M(n) log n)`.
pub(crate) fn hgcd<F: Field>(f: &F, a: &[F::Elem], b: &[F::Elem], base: usize) -> Matrix<F::Elem> {
    hgcd_rows(f, a, b, base, true)
}

/// The second row `(u, t)` of [`hgcd`]'s matrix, the cofactors of the
/// first remainder below `ceil(n/2)`: all that the locator needs, and the
/// last matrix product of the recursion costs half as much.
pub(crate) fn hgcd_second_row<F: Field>(
    f: &F,
    a: &[F::Elem],
    b: &[F::Elem],
    base: usize,
) -> (Vec<F::Elem>, Vec<F::Elem>) {
    let m = hgcd_rows(f, a, b, base, false);
    (m.c, m.d)
}

/// [`hgcd`], with the first row of the result left empty unless `full`
/// (on the last product only; the early returns carry both rows).
fn hgcd_rows<F: Field>(
    f: &F,
    a: &[F::Elem],
    b: &[F::Elem],
    base: usize,
    full: bool,
) -> Matrix<F::Elem> {
    // Callers pass deg a > deg b; anything else (impossible when the
    // lemma holds) ends the recursion instead of panicking.
    if a.len() <= b.len() {
        debug_assert!(false, "hgcd needs deg a > deg b");
        return Matrix::identity(f);
    }
    let n = a.len() - 1;
    let m = n.div_ceil(2);
    if b.len() <= m {
        return Matrix::identity(f);
    }
    if n < base {
        return euclid_steps(f, a.to_vec(), b.to_vec(), m);
    }
    // The top n - m + 1 coefficients determine the quotients down to
    // degree m + ceil((n - m) / 2).
    let r = hgcd(f, &a[m..], &b[m..], base);
    let (a1, b1) = apply(f, &r, a, b);
    if b1.len() <= m {
        return r;
    }
    let (mut q, mut d) = div_rem_slices(f, &a1, &b1);
    trim(f, &mut q);
    trim(f, &mut d);
    let r = step(f, r, &q);
    // deg b1 = l with m <= l < n, so the pair (b1, d) cut at k = 2m - l
    // has degree 2(l - m), and its half-GCD stops at l - m, which is
    // degree k + l - m = m in the full pair.
    let l = b1.len() - 1;
    let k = (2 * m).saturating_sub(l).min(l);
    let d0: &[F::Elem] = d.get(k..).unwrap_or(&[]);
    let s = hgcd(f, &b1[k..], d0, base);
    mat_mul(f, &s, &r, full)
}

/// The monic gcd of normalized `a` and `b` (zero when both are zero) by
/// repeated half-GCDs: each round halves the degree, so the whole costs
/// `O(M(n) log n)`. Identical to Euclid's result, because the monic gcd is
/// unique.
pub(crate) fn fast_gcd<F: Field>(
    f: &F,
    a: Vec<F::Elem>,
    b: Vec<F::Elem>,
    base: usize,
) -> Vec<F::Elem> {
    let (mut x, mut y) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    trim(f, &mut x);
    trim(f, &mut y);
    if x.len() < y.len() {
        core::mem::swap(&mut x, &mut y);
    }
    if !y.is_empty() && x.len() == y.len() {
        // One plain step gives deg x > deg y.
        let (_, mut r) = div_rem_slices(f, &x, &y);
        trim(f, &mut r);
        x = core::mem::replace(&mut y, r);
    }
    while !y.is_empty() {
        if y.len() <= base {
            return gcd_euclid_slices(f, x, y);
        }
        let m = hgcd(f, &x, &y, base);
        (x, y) = apply(f, &m, &x, &y);
        if y.is_empty() {
            break;
        }
        let (_, mut r) = div_rem_slices(f, &x, &y);
        trim(f, &mut r);
        x = core::mem::replace(&mut y, r);
    }
    monic_slice(f, x)
}
