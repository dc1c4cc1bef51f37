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
    let monomial = |v: &[F::Elem]| monomial(f, v);
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

/// `c x^k` as `(c, k)` when `v` is a monomial (every coefficient but the
/// last zero), else `None`.
fn monomial<F: Field>(f: &F, v: &[F::Elem]) -> Option<(F::Elem, usize)> {
    v.split_last()
        .filter(|(_, low)| low.iter().all(|c| f.is_zero(c)))
        .map(|(lead, low)| (lead.clone(), low.len()))
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
    let left = [&m.a[..], &m.b, &m.c, &m.d];
    let mut out = sums_of_products(f, &left, &[x, y], &[[(0, 0), (1, 1)], [(2, 0), (3, 1)]]);
    let second = out.pop().unwrap_or_default();
    (out.pop().unwrap_or_default(), second)
}

/// `X Y`; with `full` false only its second row (the first left empty).
fn mat_mul<F: Field>(
    f: &F,
    x: &Matrix<F::Elem>,
    y: &Matrix<F::Elem>,
    full: bool,
) -> Matrix<F::Elem> {
    let left = [&x.a[..], &x.b, &x.c, &x.d];
    let right = [&y.a[..], &y.b, &y.c, &y.d];
    // Entry (r, c) of X Y is X_r0 Y_0c + X_r1 Y_1c.
    let second_row = [[(2, 0), (3, 2)], [(2, 1), (3, 3)]];
    let first_row = [[(0, 0), (1, 2)], [(0, 1), (1, 3)]];
    if full {
        let [a, b, c, d]: [Vec<F::Elem>; 4] = sums_of_products(
            f,
            &left,
            &right,
            &[first_row[0], first_row[1], second_row[0], second_row[1]],
        )
        .try_into()
        .unwrap_or_else(|_| unreachable!("four sums asked, four returned"));
        Matrix { a, b, c, d }
    } else {
        let [c, d]: [Vec<F::Elem>; 2] = sums_of_products(f, &left, &right, &second_row)
            .try_into()
            .unwrap_or_else(|_| unreachable!("two sums asked, two returned"));
        Matrix {
            a: Vec::new(),
            b: Vec::new(),
            c,
            d,
        }
    }
}

/// The sums `sum_(i, j) left_i right_j`, one per entry of `sums`
/// (normalized), as [`apply`] and [`mat_mul`] need them.
///
/// Over a field with transforms ([`Field::poly_transform`]) each factor
/// is transformed once, at one length that holds every product, the
/// products and sums are taken pointwise, and each sum is transformed
/// back once: a 2x2 matrix product costs 12 transforms where eight
/// separate products cost 24. Otherwise (no transforms, factors too
/// short for them, or a monomial factor, which is a shift) product by
/// product.
fn sums_of_products<F: Field, const K: usize>(
    f: &F,
    left: &[&[F::Elem]],
    right: &[&[F::Elem]],
    sums: &[[(usize, usize); K]],
) -> Vec<Vec<F::Elem>> {
    transformed_sums(f, left, right, sums).unwrap_or_else(|| {
        sums.iter()
            .map(|terms| {
                terms.iter().fold(Vec::new(), |acc, &(i, j)| {
                    add(f, acc, &mul(f, left[i], right[j]))
                })
            })
            .collect()
    })
}

/// [`sums_of_products`] by transforms, or `None` to leave it to products
/// one by one.
fn transformed_sums<F: Field, const K: usize>(
    f: &F,
    left: &[&[F::Elem]],
    right: &[&[F::Elem]],
    sums: &[[(usize, usize); K]],
) -> Option<Vec<Vec<F::Elem>>> {
    let live = |&&(i, j): &&(usize, usize)| !left[i].is_empty() && !right[j].is_empty();
    let terms = || sums.iter().flatten().filter(live);
    let shift = |v: &[F::Elem]| monomial(f, v).is_some();
    if terms().any(|&(i, j)| shift(left[i]) || shift(right[j])) {
        return None;
    }
    let n = terms()
        .map(|&(i, j)| left[i].len() + right[j].len() - 1)
        .max()?
        .next_power_of_two();
    // Each factor some live term uses, transformed once (in parallel
    // with the `parallel` feature); `None` for the others.
    let hats = |side: &[&[F::Elem]], used: Vec<bool>| {
        let jobs: Vec<(bool, &[F::Elem])> = used.into_iter().zip(side.iter().copied()).collect();
        crate::par::map(&jobs, n, |&(used, v)| match used {
            true => f.poly_transform(v, n).map(Some),
            false => Some(None),
        })
        .into_iter()
        .collect::<Option<Vec<Option<Vec<F::Elem>>>>>()
    };
    let used_left = (0..left.len()).map(|k| terms().any(|&(i, _)| i == k));
    let used_right = (0..right.len()).map(|k| terms().any(|&(_, j)| j == k));
    let left_hats = hats(left, used_left.collect())?;
    let right_hats = hats(right, used_right.collect())?;
    let mut out = Vec::with_capacity(sums.len());
    for entry in sums {
        let mut acc: Option<Vec<F::Elem>> = None;
        for &(i, j) in entry.iter().filter(live) {
            let (Some(l), Some(r)) = (&left_hats[i], &right_hats[j]) else {
                return None;
            };
            let mut p = l.clone();
            f.mul_each(&mut p, r);
            match &mut acc {
                Some(a) => a.iter_mut().zip(&p).for_each(|(x, y)| f.add_assign(x, y)),
                None => acc = Some(p),
            }
        }
        out.push(match acc {
            Some(a) => {
                let mut v = f.poly_untransform(a)?;
                trim(f, &mut v);
                v
            }
            None => Vec::new(),
        });
    }
    Some(out)
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
