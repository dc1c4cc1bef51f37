//! Number-theoretic transforms in the field itself, for the prime fields
//! whose multiplicative group has a large power-of-two order subgroup
//! ([`Goldilocks`](crate::Goldilocks), and [`Fp64`](crate::Fp64) with a
//! prime such as `27 * 2^59 + 1`), through
//! [`FiniteField::two_adic_root`].
//!
//! One implementation serves polynomial products and the tangent Graeffe
//! root finder (`graeffe.rs`): a decimation-in-frequency forward transform
//! that takes coefficients in natural order and leaves the values in
//! bit-reversed order, and a decimation-in-time inverse that takes them
//! back. A product never needs the natural order of the values, so neither
//! direction spends a pass on the bit-reversal permutation.

use crate::{Field, FiniteField};

/// The twiddle factors of transforms of length `n = 2^log`.
///
/// Stage `h` (a butterfly span of `2h`, for `h = 1, 2, 4, ..., n/2`) uses
/// the `h` powers `w_(2h)^j`, `j < h`, of a primitive `2h`-th root: they
/// are stored contiguously at `[h, 2h)`, so every stage reads its factors
/// in order (a single table read with a stride would miss the cache at
/// the small stages of a large transform).
pub(crate) struct Ntt<E> {
    log: u32,
    forward: Vec<E>,
    inverse: Vec<E>,
    /// `1/n`, applied by the inverse transform.
    n_inv: E,
}

impl<E: Clone> Ntt<E> {
    /// The tables for length `2^log`, or `None` if the field has no root
    /// of unity of that order.
    pub(crate) fn new<F: FiniteField<Elem = E>>(f: &F, log: u32) -> Option<Self> {
        let n = 1usize.checked_shl(log)?;
        let w = f.two_adic_root(log)?;
        let w_inv = f.inv(&w)?;
        let n_inv = f.inv(&f.from_u64(u64::try_from(n).ok()?))?;
        Some(Self {
            log,
            forward: stage_tables(f, &w, n),
            inverse: stage_tables(f, &w_inv, n),
            n_inv,
        })
    }

    /// The transform length.
    pub(crate) fn len(&self) -> usize {
        1 << self.log
    }

    /// The values of the polynomial with coefficients `v` (length exactly
    /// [`len`](Self::len)) at the powers `w^0 .. w^(n-1)` of the primitive
    /// root, in bit-reversed order: position `i` holds the value at
    /// `w^bitrev(i)`.
    pub(crate) fn forward<F: Field<Elem = E>>(&self, f: &F, v: &mut [E]) {
        debug_assert_eq!(v.len(), self.len());
        let mut h = v.len() / 2;
        while h >= 1 {
            let tw = &self.forward[h..2 * h];
            for chunk in v.chunks_exact_mut(2 * h) {
                let (lo, hi) = chunk.split_at_mut(h);
                for ((a, b), t) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let s = f.add(a, b);
                    *b = f.mul(&f.sub(a, b), t);
                    *a = s;
                }
            }
            h /= 2;
        }
    }

    /// The inverse of [`forward`](Self::forward): values in bit-reversed
    /// order in, coefficients in natural order out.
    pub(crate) fn inverse<F: Field<Elem = E>>(&self, f: &F, v: &mut [E]) {
        debug_assert_eq!(v.len(), self.len());
        let n = v.len();
        let mut h = 1;
        while h < n {
            let tw = &self.inverse[h..2 * h];
            for chunk in v.chunks_exact_mut(2 * h) {
                let (lo, hi) = chunk.split_at_mut(h);
                for ((a, b), t) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let u = f.mul(b, t);
                    *b = f.sub(a, &u);
                    *a = f.add(a, &u);
                }
            }
            h *= 2;
        }
        for x in v.iter_mut() {
            *x = f.mul(x, &self.n_inv);
        }
    }

    /// `v` zero-padded to the transform length and transformed.
    pub(crate) fn forward_padded<F: Field<Elem = E>>(&self, f: &F, v: &[E]) -> Vec<E> {
        let mut out = Vec::with_capacity(self.len());
        out.extend_from_slice(&v[..v.len().min(self.len())]);
        out.resize(self.len(), f.zero());
        self.forward(f, &mut out);
        out
    }
}

/// The stage tables of [`Ntt`] for a primitive `n`-th root `w`.
fn stage_tables<F: Field>(f: &F, w: &F::Elem, n: usize) -> Vec<F::Elem> {
    let mut table = vec![f.zero(); n.max(2)];
    let mut h = n / 2;
    // The primitive 2h-th root for the current stage: w^(n / 2h).
    let mut root = w.clone();
    while h >= 1 {
        let mut t = f.one();
        for slot in &mut table[h..2 * h] {
            *slot = t.clone();
            t = f.mul(&t, &root);
        }
        root = f.square(&root);
        h /= 2;
    }
    table
}

/// The index whose `log` low bits are those of `i` reversed.
pub(crate) fn bit_reverse(i: usize, log: u32) -> usize {
    if log == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - log)
    }
}

/// The product of `a` and `b` (both nonempty) by one transform of each, a
/// pointwise product and one inverse transform, or `None` if the field
/// has no root of unity of the needed order.
pub(crate) fn ntt_mul<F: FiniteField>(f: &F, a: &[F::Elem], b: &[F::Elem]) -> Option<Vec<F::Elem>> {
    let len = a.len() + b.len() - 1;
    let log = len.next_power_of_two().trailing_zeros();
    let ntt = Ntt::new(f, log)?;
    let (mut fa, fb) = crate::par::join(
        ntt.len(),
        || ntt.forward_padded(f, a),
        || ntt.forward_padded(f, b),
    );
    for (x, y) in fa.iter_mut().zip(&fb) {
        *x = f.mul(x, y);
    }
    ntt.inverse(f, &mut fa);
    fa.truncate(len);
    Some(fa)
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
    crate::karatsuba::karatsuba(f, a, b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fp64, Goldilocks};

    fn naive<F: Field>(f: &F, c: &[F::Elem], x: &F::Elem) -> F::Elem {
        c.iter()
            .rev()
            .fold(f.zero(), |acc, a| f.add(&f.mul(&acc, x), a))
    }

    fn check_values<F: FiniteField>(f: &F, log: u32) {
        let ntt = Ntt::new(f, log).unwrap();
        let n = ntt.len();
        let coeffs: Vec<F::Elem> = (0..n as u64).map(|i| f.from_u64(i * i + 3)).collect();
        let mut v = coeffs.clone();
        ntt.forward(f, &mut v);
        let w = f.two_adic_root(log).unwrap();
        for (i, value) in v.iter().enumerate() {
            let point = f.pow_u64(&w, bit_reverse(i, log) as u64);
            assert_eq!(*value, naive(f, &coeffs, &point), "log {log}, position {i}");
        }
        ntt.inverse(f, &mut v);
        assert_eq!(v, coeffs);
    }

    #[test]
    fn forward_gives_values_at_bit_reversed_powers_and_inverse_undoes_it() {
        for log in 0..=6 {
            check_values(&Goldilocks, log);
            check_values(&Fp64::new(65_537).unwrap(), log);
            check_values(&Fp64::new(27 * (1 << 59) + 1).unwrap(), log);
        }
    }

    #[test]
    fn products_match_karatsuba() {
        let f = Fp64::new(7681).unwrap(); // 15 * 2^9 + 1
        let a: Vec<_> = (0..37u64).map(|i| f.from_u64(i * 7 + 1)).collect();
        let b: Vec<_> = (0..100u64).map(|i| f.from_u64(i * i)).collect();
        assert_eq!(
            ntt_mul(&f, &a, &b).unwrap(),
            crate::karatsuba::karatsuba(&f, &a, &b)
        );
        // 2^10 > 2^9 points: no root of unity of that order.
        let long: Vec<_> = (0..600u64).map(|i| f.from_u64(i)).collect();
        assert!(ntt_mul(&f, &long, &long).is_none());
    }
}
