//! Polynomial products by the transforms of [`Ntt`]: whole, modulo
//! `x^n - 1`, with a factor transformed once; what [`Goldilocks`](crate::Goldilocks)
//! and [`Fp64`](crate::Fp64) give as [`Field::poly_mul`] and its
//! transformed variants.

use super::Ntt;
use crate::poly::arith::folded;
use crate::{Field, FiniteField};

/// The product of `a` and `b` (both nonempty) by one transform of each, a
/// pointwise product and one inverse transform, or `None` if the field
/// has no root of unity of the needed order.
pub(crate) fn ntt_mul<F: FiniteField>(f: &F, a: &[F::Elem], b: &[F::Elem]) -> Option<Vec<F::Elem>> {
    let len = a.len() + b.len() - 1;
    let log = len.next_power_of_two().trailing_zeros();
    let ntt = Ntt::new(f, log)?;
    Some(product(f, &ntt, a, b))
}

/// The product of `a` and `b` by the transforms `ntt`, long enough for
/// it (`a.len() + b.len() - 1 <= ntt.len()`).
pub(super) fn product<F: Field>(
    f: &F,
    ntt: &Ntt<F::Elem>,
    a: &[F::Elem],
    b: &[F::Elem],
) -> Vec<F::Elem> {
    let len = a.len() + b.len() - 1;
    debug_assert!(len <= ntt.len());
    let (mut fa, fb) = crate::par::join(
        ntt.len(),
        || ntt.forward_padded(f, a),
        || ntt.forward_padded(f, b),
    );
    f.mul_each(&mut fa, &fb);
    ntt.inverse(f, &mut fa);
    fa.truncate(len);
    fa
}

/// `v mod (x^n - 1)` transformed, `n = ntt.len()`.
fn forward_folded<F: Field>(f: &F, ntt: &Ntt<F::Elem>, v: &[F::Elem]) -> Vec<F::Elem> {
    let mut out = folded(f, v, ntt.len());
    ntt.forward(f, &mut out);
    out
}

/// `b mod (x^n - 1)` transformed (what [`Field::poly_transform`] is for
/// the fields with transforms): `None` unless `n` is a power of two, `b`
/// has at least `threshold` coefficients and the field has the roots.
pub(crate) fn ntt_transform<F: FiniteField>(
    f: &F,
    b: &[F::Elem],
    n: usize,
    threshold: usize,
) -> Option<Vec<F::Elem>> {
    if !n.is_power_of_two() || b.len() < threshold.max(1) {
        return None;
    }
    let ntt = Ntt::new(f, n.trailing_zeros())?;
    Some(forward_folded(f, &ntt, b))
}

/// `a b mod (x^n - 1)` from `b_hat`, `b`'s transform of length `n` (what
/// [`Field::poly_mul_transformed`] is for the fields with transforms).
pub(crate) fn ntt_mul_transformed<F: FiniteField>(
    f: &F,
    a: &[F::Elem],
    b_hat: &[F::Elem],
) -> Option<Vec<F::Elem>> {
    let n = b_hat.len();
    if !n.is_power_of_two() {
        return None;
    }
    let ntt = Ntt::new(f, n.trailing_zeros())?;
    let mut v = forward_folded(f, &ntt, a);
    f.mul_each(&mut v, b_hat);
    ntt.inverse(f, &mut v);
    Some(v)
}

/// The inverse transform of `v_hat` (what [`Field::poly_untransform`] is
/// for the fields with transforms).
pub(crate) fn ntt_untransform<F: FiniteField>(
    f: &F,
    mut v_hat: Vec<F::Elem>,
) -> Option<Vec<F::Elem>> {
    let n = v_hat.len();
    if !n.is_power_of_two() {
        return None;
    }
    let ntt = Ntt::new(f, n.trailing_zeros())?;
    ntt.inverse(f, &mut v_hat);
    Some(v_hat)
}

/// The product for a field with transforms: by [`ntt_mul`] when the
/// shorter factor has at least `threshold` coefficients and the field has
/// a root of unity of the needed order, else Karatsuba's. What
/// [`Goldilocks`](crate::Goldilocks) and [`Fp64`](crate::Fp64) use as
/// [`Field::poly_mul`].
pub(crate) fn poly_mul_with_ntt<F: FiniteField>(
    f: &F,
    a: &[F::Elem],
    b: &[F::Elem],
    threshold: usize,
) -> Vec<F::Elem> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    if a.len().min(b.len()) >= threshold
        && let Some(v) = ntt_mul(f, a, b)
    {
        return v;
    }
    crate::poly::karatsuba::karatsuba(f, a, b)
}
