//! The transposed Vandermonde solve: the values of a sparse vector from its
//! power sums, once the positions are known.

use crate::multipoint::ProductTree;
use crate::poly::{self, Poly, horner_many, mul_slices};

/// Above this many nodes, [`solve_transposed_vandermonde`] evaluates by a
/// remainder tree instead of Horner's rule. Measured with the tree forced
/// on and off (medians of five, 2026-11-24, docs/benchmarks.md): Horner's
/// rule is faster up to 1024 nodes over `Fp64::proth()` (3.9 ms against
/// 4.6 ms) and ties at 1024 over GF(2^61 - 1); the tree wins from 2048
/// (11.3 ms against 15.0 ms, and 4.3x at 8192).
pub const FAST_SOLVE_THRESHOLD: usize = 1536;
use crate::{Field, FieldError};

/// The `v` with `s_i = sum_j v_j x_j^(i-1)` for `i = 1..m`, given distinct
/// nodes `x_1..x_m` and `s_1..s_m`: the last step of line 3 of Algorithm 2
/// of the paper (the counts `q_j` from the syndromes, once the positions
/// are known).
///
/// # Method
///
/// With `P(x) = prod_j (x - x_j)` and `S(y) = sum_i s_(i+1) y^i`,
/// `S(y) = sum_j v_j / (1 - x_j y)` as power series, so
/// `N(y) = rev(P)(y) S(y) mod y^m = sum_j v_j prod_(l != j) (1 - x_l y)`
/// and, reversing, `y^(m-1) N(1/y)` at `y = x_j` is `v_j P'(x_j)`. So
/// `v_j = rev_(m-1)(N)(x_j) / P'(x_j)` (Forney's formula): one product tree
/// for `P`, one polynomial product for `N`, the two polynomials at every
/// node, and one batched inversion. Up to [`FAST_SOLVE_THRESHOLD`] nodes
/// the evaluations are Horner's rule (`O(m^2)` field operations); above,
/// one remainder tree over the product tree's nodes serves both
/// (`O(M(m) log m)`, shared among all cores with the `parallel` feature).
/// A node may be zero (`0^0 = 1`).
///
/// # Errors
///
/// [`FieldError::LengthMismatch`] unless `x` and `s` have the same length,
/// [`FieldError::RepeatedNodes`] if two nodes are equal (then `P'(x_j) = 0`
/// and the system is singular).
///
/// # Example
///
/// ```
/// use field::{Field, FieldError, Mersenne61, solve_transposed_vandermonde};
///
/// let f = Mersenne61;
/// let x = [2u64, 5, 11];
/// let v = [7u64, 1, 3];
/// let s: Vec<u64> = (0..3)
///     .map(|i| {
///         let terms: Vec<u64> = x.iter().zip(&v).map(|(xj, vj)| f.mul(vj, &f.pow_u64(xj, i))).collect();
///         f.sum(&terms)
///     })
///     .collect();
/// assert_eq!(solve_transposed_vandermonde(&f, &x, &s)?, v.to_vec());
/// assert_eq!(
///     solve_transposed_vandermonde(&f, &[2, 2], &[1, 1]),
///     Err(FieldError::RepeatedNodes)
/// );
/// # Ok::<(), FieldError>(())
/// ```
pub fn solve_transposed_vandermonde<F: Field>(
    f: &F,
    x: &[F::Elem],
    s: &[F::Elem],
) -> Result<Vec<F::Elem>, FieldError> {
    let m = x.len();
    if s.len() != m {
        return Err(FieldError::LengthMismatch {
            left: m,
            right: s.len(),
        });
    }
    if m == 0 {
        return Ok(Vec::new());
    }
    let tree = (m > FAST_SOLVE_THRESHOLD).then(|| ProductTree::new(f, x));
    let p = match &tree {
        Some(t) => Poly::from_coeffs(f, t.root().to_vec()),
        None => poly::from_roots(f, x),
    };
    // rev(P) has m + 1 coefficients, P is monic of degree m.
    let rev_p: Vec<F::Elem> = p.coeffs().iter().rev().cloned().collect();
    let mut n = mul_slices(f, &rev_p[..m], s);
    n.resize(m, f.zero());
    n.reverse();
    let dp = poly::derivative(f, &p);
    let (numer, mut denom) = match &tree {
        Some(t) => {
            let mut both = t.evaluate(f, &[&n, dp.coeffs()], x);
            let denom = both.pop().unwrap_or_default();
            (both.pop().unwrap_or_default(), denom)
        }
        None => (horner_many(f, &n, x), horner_many(f, dp.coeffs(), x)),
    };
    if !f.batch_inv(&mut denom) {
        return Err(FieldError::RepeatedNodes);
    }
    Ok(numer.iter().zip(&denom).map(|(a, b)| f.mul(a, b)).collect())
}
