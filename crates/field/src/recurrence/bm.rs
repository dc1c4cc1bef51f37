//! The Berlekamp-Massey algorithm: the shortest linear recurrence of a
//! sequence.

use crate::poly::{Poly, normalized};
use crate::{Field, FieldError};

/// A linear recurrence `s_n + c_1 s_(n-1) + ... + c_L s_(n-L) = 0` (for
/// every `n >= L` in the sequence it was computed from), given by its
/// connection polynomial `C(x) = 1 + c_1 x + ... + c_L x^L` and its length
/// `L`.
///
/// The length can exceed the degree of `connection` (when `c_L = 0`): it is
/// the number of earlier terms the recurrence needs, the linear complexity
/// of the sequence.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, berlekamp_massey};
///
/// let f = Mersenne61;
/// // Fibonacci: s_n - s_(n-1) - s_(n-2) = 0.
/// let s: Vec<u64> = [1, 1, 2, 3, 5, 8, 13].iter().map(|&v| f.from_u64(v)).collect();
/// let rec = berlekamp_massey(&f, &s, 10)?;
/// assert_eq!(rec.length, 2);
/// assert_eq!(rec.connection.coeffs(), &[1, f.neg(&1), f.neg(&1)]);
/// # Ok::<(), field::FieldError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recurrence<E> {
    /// `C(x) = 1 + c_1 x + ... + c_L x^L` (constant term one).
    pub connection: Poly<E>,
    /// The length `L` (linear complexity).
    pub length: usize,
}

/// The shortest linear recurrence of `s` (Berlekamp 1968, Massey 1969), over
/// any [`Field`], the rationals included.
///
/// This is the first step of line 3 of Algorithm 2 of the paper: for power
/// sums `s_i = sum_j q_j x_j^(i-1)`, `i = 1..2t`, of at most `t` nonzero
/// terms, the connection polynomial is the locator `prod_j (1 - x_j x)`.
/// Appendix K runs the same algorithm over the rationals.
///
/// Work is `O(N * L)` field operations for `N = s.len()` and the final
/// length `L`, and at most `O(N * max_length)`: as in minisketch, the
/// algorithm stops as soon as the length would exceed `max_length`, so a
/// caller bounds the cost of decoding hostile input.
///
/// # Errors
///
/// [`FieldError::DegreeExceeded`] with `max = max_length` and `needed` the
/// length the next step requires (a lower bound on the linear complexity
/// of `s`), as soon as it exceeds `max_length`.
///
/// # Example
///
/// ```
/// use field::{Field, FieldError, Mersenne61, berlekamp_massey, poly};
///
/// let f = Mersenne61;
/// // s_i = 4 * 3^(i-1) + 9 * 7^(i-1): two terms, so length 2, and the
/// // connection polynomial is (1 - 3x)(1 - 7x).
/// let s: Vec<u64> = (0..4)
///     .map(|i| f.add(&f.mul(&4, &f.pow_u64(&3, i)), &f.mul(&9, &f.pow_u64(&7, i))))
///     .collect();
/// let rec = berlekamp_massey(&f, &s, 2)?;
/// assert_eq!(rec.length, 2);
/// let locator = poly::reverse(&f, &poly::from_roots(&f, &[3, 7]), 3);
/// assert_eq!(rec.connection, locator);
/// assert_eq!(
///     berlekamp_massey(&f, &s, 1),
///     Err(FieldError::DegreeExceeded { max: 1, needed: 2 })
/// );
/// # Ok::<(), FieldError>(())
/// ```
pub fn berlekamp_massey<F: Field>(
    f: &F,
    s: &[F::Elem],
    max_length: usize,
) -> Result<Recurrence<F::Elem>, FieldError> {
    let n_terms = s.len();
    // The discrepancy sum_{i=0..L} c_i s_(n-i) is a dot product of the
    // connection coefficients with the reversed sequence, contiguous there.
    let s_rev: Vec<F::Elem> = s.iter().rev().cloned().collect();
    let mut c: Vec<F::Elem> = vec![f.one()];
    let mut b: Vec<F::Elem> = vec![f.one()];
    let mut length = 0usize;
    // x^shift B(x) is the correction term; b_inv is 1 / (its discrepancy).
    let mut shift = 1usize;
    let mut b_inv = f.one();
    for n in 0..n_terms {
        let used = c.len().min(length + 1);
        let d = f.dot(&c[..used], &s_rev[n_terms - 1 - n..]);
        if f.is_zero(&d) {
            shift += 1;
            continue;
        }
        let coef = f.mul(&d, &b_inv);
        if 2 * length <= n {
            let new_length = n + 1 - length;
            if new_length > max_length {
                return Err(FieldError::DegreeExceeded {
                    max: max_length,
                    needed: new_length,
                });
            }
            let old_c = c.clone();
            subtract_shifted(f, &mut c, &b, &coef, shift);
            length = new_length;
            b = old_c;
            // d is nonzero here, so it has an inverse.
            b_inv = f.inv(&d).unwrap_or_else(|| f.zero());
            shift = 1;
        } else {
            subtract_shifted(f, &mut c, &b, &coef, shift);
            shift += 1;
        }
    }
    c.truncate(length + 1);
    Ok(Recurrence {
        connection: normalized(f, c),
        length,
    })
}

/// `c <- c - coef * x^shift * b`.
fn subtract_shifted<F: Field>(
    f: &F,
    c: &mut Vec<F::Elem>,
    b: &[F::Elem],
    coef: &F::Elem,
    shift: usize,
) {
    if c.len() < b.len() + shift {
        c.resize(b.len() + shift, f.zero());
    }
    for (ci, bi) in c[shift..].iter_mut().zip(b) {
        f.sub_assign(ci, &f.mul(coef, bi));
    }
}
