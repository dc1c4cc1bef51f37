//! The shortest linear recurrence by the half-GCD (fast extended Euclid),
//! in `O(M(N) log N)` field operations instead of Berlekamp-Massey's
//! `O(N L)`; and the fast gcd that root finding uses for long operands.

#[cfg(test)]
mod tests;

use crate::poly::half_gcd::{self, HGCD_BASE};

use crate::poly::{Poly, mul_slices, normalized, trim};
use crate::recurrence::bm::{Recurrence, berlekamp_massey};
use crate::{Field, FieldError};

/// The shortest linear recurrence of `s`, by the half-GCD: the same
/// [`Recurrence`] as [`berlekamp_massey`] whenever the linear complexity
/// `L` of `s` satisfies `2L <= s.len()`, in `O(M(N) log N)` field
/// operations for `N = s.len()` and `M` the cost of [`Field::poly_mul`]
/// (quasi-linear for the fields with number-theoretic transforms).
///
/// This is the locator step, Algorithm 2, line 3 of the paper, for long
/// syndrome sequences: with `2t` power sums of at most `t` nonzero terms,
/// `2L <= 2t = N` always holds, so the result is Berlekamp-Massey's, the
/// locator `prod_j (1 - x_j x)`. Below [`Field::half_gcd_threshold`]
/// terms (2048 by default) it simply calls
/// [`berlekamp_massey`], which is faster there (the half-GCD's products
/// only win when they are long transforms).
///
/// # Why the half-GCD finds Berlekamp-Massey's recurrence
///
/// Write `a = x^N` and `b = s_0 x^(N-1) + s_1 x^(N-2) + ... + s_(N-1)`.
/// A connection polynomial `C` of length `L` (`C(0) = 1`, `deg C <= L`)
/// corresponds to the monic `t(x) = x^L C(1/x)` of degree exactly `L`,
/// and the coefficient of `x^(N-1+L-n)` in `t b` is
/// `sum_i c_i s_(n-i)`; so `C` generates `s` exactly when the coefficients
/// of `t b` in degrees `L..N` vanish, i.e. `deg(t b - u a) < deg t` for
/// `u = t b div x^N`.
///
/// Let `r_j = u_j a + t_j b` be the Euclidean remainder sequence of
/// `(a, b)` (with `r_0 = a`, `r_1 = b`, `deg t_j = N - deg r_(j-1)`), and
/// `j*` the first index with `deg r_j* < ceil(N/2)`: the half-GCD computes
/// `t_j*` directly. When `2L <= N`, `deg(t b - u a) + deg t < 2L <= N`, so
/// by the uniqueness of such approximations (von zur Gathen and Gerhard,
/// *Modern Computer Algebra*, Lemma 5.15) `t = alpha t_k` for a polynomial
/// `alpha` and an index `k`, and the minimality of `L` makes `alpha` a
/// constant. Then `deg r_k < deg t_k <= N/2` gives `k >= j*`, and `k > j*`
/// is impossible: it would give `deg t_k = N - deg r_(k-1) > N/2`. So `t`
/// is `t_j*` made monic, unique (Berlekamp-Massey's too), and `C` is its
/// reversal.
///
/// On every input, the result is the reversal `C` of the monic `t_j*`
/// (so `C(0) = 1`) with the length `L' = max(deg C, deg R + 1)` for
/// `R = C S mod x^N`, `S = sum_i s_i x^i`: the smallest length with which
/// this `C` generates all of `s`, since the coefficient of `x^n` in `C S`
/// is `sum_i c_i s_(n-i)`. The recurrence therefore always holds for the
/// whole sequence. When `2L > N`, `L'` (and `C`) may differ from
/// Berlekamp-Massey's: the shortest recurrence is not unique there.
///
/// # Errors
///
/// [`FieldError::DegreeExceeded`] with `max = max_length` when the linear
/// complexity exceeds `max_length`. `needed` is a lower bound on the
/// linear complexity: `min(L', floor(N/2) + 1)`. It is one because
/// `L' = L` whenever `2L <= N` (above), so `L' != L` implies
/// `L > N/2`. When that bound does not exceed `max_length` but `L'` does
/// (possible only for `max_length > N/2`, where a shorter recurrence than
/// `L'` may exist), the answer is [`berlekamp_massey`]'s, at its cost of
/// `O(N max_length)`. A decoder of `N = 2t` syndromes passes
/// `max_length <= t` and never takes that path.
///
/// # Example
///
/// ```
/// use field::{Field, FieldError, Goldilocks, berlekamp_massey, minimal_recurrence, poly};
///
/// let f = Goldilocks;
/// // s_i = 5 * 2^i + 7 * 3^i + 11 * 9^i: three terms, so length 3, and the
/// // connection polynomial is the locator (1 - 2x)(1 - 3x)(1 - 9x).
/// let term = |q: u64, x: u64, i: u64| f.mul(&f.from_u64(q), &f.pow_u64(&f.from_u64(x), i));
/// let s: Vec<u64> = (0..600)
///     .map(|i| f.add(&f.add(&term(5, 2, i), &term(7, 3, i)), &term(11, 9, i)))
///     .collect();
/// let rec = minimal_recurrence(&f, &s, 300)?;
/// assert_eq!(rec.length, 3);
/// let roots = [2, 3, 9].map(|x| f.from_u64(x));
/// assert_eq!(rec.connection, poly::reverse(&f, &poly::from_roots(&f, &roots), 4));
/// assert_eq!(rec, berlekamp_massey(&f, &s, 300)?);
/// assert_eq!(
///     minimal_recurrence(&f, &s, 2),
///     Err(FieldError::DegreeExceeded { max: 2, needed: 3 })
/// );
/// # Ok::<(), FieldError>(())
/// ```
pub fn minimal_recurrence<F: Field>(
    f: &F,
    s: &[F::Elem],
    max_length: usize,
) -> Result<Recurrence<F::Elem>, FieldError> {
    minimal_recurrence_with(f, s, max_length, f.half_gcd_threshold(), HGCD_BASE)
}

/// [`minimal_recurrence`] with the thresholds as parameters (for tests
/// and benchmarks): Berlekamp-Massey below `threshold` terms, and Euclid's
/// steps below degree `base` inside the half-GCD.
pub(crate) fn minimal_recurrence_with<F: Field>(
    f: &F,
    s: &[F::Elem],
    max_length: usize,
    threshold: usize,
    base: usize,
) -> Result<Recurrence<F::Elem>, FieldError> {
    let n = s.len();
    if n < threshold {
        return berlekamp_massey(f, s, max_length);
    }
    // b = sum_i s_i x^(N-1-i): the sequence reversed.
    let mut b: Vec<F::Elem> = s.iter().rev().cloned().collect();
    trim(f, &mut b);
    if b.is_empty() {
        // The zero sequence (or none at all): length 0, C = 1.
        return Ok(Recurrence {
            connection: Poly::one(f),
            length: 0,
        });
    }
    let mut a = vec![f.zero(); n];
    a.push(f.one());
    let (_, t) = half_gcd::hgcd_second_row(f, &a, &b, base);
    // t is a cofactor of a Euclid step matrix, never zero; its leading
    // coefficient is invertible because it is normalized.
    let Some(lead_inv) = t.last().and_then(|l| f.inv(l)) else {
        return berlekamp_massey(f, s, max_length);
    };
    let c: Vec<F::Elem> = t.iter().rev().map(|ti| f.mul(ti, &lead_inv)).collect();
    let connection = normalized(f, c);
    let mut r = mul_slices(f, connection.coeffs(), s);
    r.truncate(n);
    trim(f, &mut r);
    let length = connection.degree().unwrap_or(0).max(r.len());
    if length > max_length {
        let needed = length.min(n / 2 + 1);
        if needed > max_length {
            return Err(FieldError::DegreeExceeded {
                max: max_length,
                needed,
            });
        }
        // max_length > N/2: a recurrence shorter than ours may fit.
        return berlekamp_massey(f, s, max_length);
    }
    Ok(Recurrence { connection, length })
}
