//! The transposed Vandermonde solve: the values of a sparse vector from its
//! power sums, once the positions are known.

use crate::par;
use crate::poly::multipoint::ProductTree;
use crate::poly::{self, Poly, horner_many, mul_slices};

/// Above this many nodes, [`solve_transposed_vandermonde`] evaluates by a
/// remainder tree instead of Horner's rule, by default
/// ([`Field::remainder_tree_threshold`]). Measured with the tree forced
/// on and off (medians of five, 2026-11-24, docs/benchmarks.md): Horner's
/// rule is faster up to 1024 nodes over `Fp64::proth()` (3.9 ms against
/// 4.6 ms) and ties at 1024 over GF(2^61 - 1); the tree wins from 2048
/// (11.3 ms against 15.0 ms, and 4.3x at 8192).
pub const FAST_SOLVE_THRESHOLD: usize = crate::traits::DEFAULT_REMAINDER_TREE_THRESHOLD;
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
    if s.len() != x.len() {
        return Err(FieldError::LengthMismatch {
            left: x.len(),
            right: s.len(),
        });
    }
    TransposedVandermonde::new(f, x)?.solve(f, s)
}

/// A transposed Vandermonde system prepared once for many right-hand
/// sides: the solve of [`solve_transposed_vandermonde`] with the work that
/// depends only on the nodes (the product `P`, the inverses of `P'(x_j)`
/// and, above [`FAST_SOLVE_THRESHOLD`] nodes, the product tree) done in
/// [`new`](Self::new), and a check of every further term of a longer
/// sequence in [`solve`](Self::solve).
///
/// A decoder solves one system per payload channel over the same nodes
/// (the wide-key sketch), and must compare every received syndrome with
/// its answer; both come out of one polynomial product per right-hand
/// side here.
///
/// # Example
///
/// ```
/// use field::{Field, FieldError, Fp64, TransposedVandermonde, poly};
///
/// let f = Fp64::proth();
/// let x: Vec<_> = [2u64, 5, 11].iter().map(|&v| f.from_u64(v)).collect();
/// let v: Vec<_> = [7u64, 1, 3].iter().map(|&v| f.from_u64(v)).collect();
/// let system = TransposedVandermonde::new(&f, &x)?;
/// // Six power sums of a 3-sparse vector: the first three determine it,
/// // the other three are checked.
/// let mut s = poly::power_sums(&f, &x, &v, 6)?;
/// assert_eq!(system.solve(&f, &s)?, v);
/// // A wrong fifth term is named.
/// s[4] = f.add(&s[4], &f.one());
/// assert_eq!(system.solve(&f, &s), Err(FieldError::SequenceMismatch { index: 5 }));
/// # Ok::<(), FieldError>(())
/// ```
pub struct TransposedVandermonde<F: Field> {
    nodes: Vec<F::Elem>,
    /// `rev(P)(y) = prod_j (1 - x_j y)`: `m + 1` coefficients, the first one.
    rev_p: Vec<F::Elem>,
    /// `1 / P'(x_j)`, in the order of the nodes.
    inv_dp: Vec<F::Elem>,
    /// The product tree over the nodes, above [`FAST_SOLVE_THRESHOLD`].
    tree: Option<ProductTree<F::Elem>>,
}

impl<F: Field> TransposedVandermonde<F> {
    /// The system over `nodes` (distinct; one may be zero).
    ///
    /// # Errors
    ///
    /// [`FieldError::RepeatedNodes`] if two nodes are equal.
    pub fn new(f: &F, nodes: &[F::Elem]) -> Result<Self, FieldError> {
        Self::new_with(f, nodes, f.remainder_tree_threshold())
    }

    /// [`new`](Self::new) with the remainder tree above `threshold` nodes
    /// (for the timing that chooses the fields' thresholds).
    pub(crate) fn new_with(f: &F, nodes: &[F::Elem], threshold: usize) -> Result<Self, FieldError> {
        let m = nodes.len();
        let tree = (m > threshold).then(|| ProductTree::new(f, nodes).keeping_divisors());
        let p = match &tree {
            Some(t) => Poly::from_coeffs(f, t.root().to_vec()),
            None => poly::from_roots(f, nodes),
        };
        let dp = poly::derivative(f, &p);
        let mut inv_dp = match &tree {
            Some(t) => t
                .evaluate(f, &[dp.coeffs()], nodes)
                .pop()
                .unwrap_or_default(),
            None => horner_in_parallel(f, dp.coeffs(), nodes),
        };
        if !f.batch_inv(&mut inv_dp) {
            return Err(FieldError::RepeatedNodes);
        }
        // P is monic of degree m, so rev(P) has m + 1 coefficients and
        // starts with one.
        let rev_p = p.coeffs().iter().rev().cloned().collect();
        Ok(Self {
            nodes: nodes.to_vec(),
            rev_p,
            inv_dp,
            tree,
        })
    }

    /// The nodes, in the order given.
    pub fn nodes(&self) -> &[F::Elem] {
        &self.nodes
    }

    /// The nodes, in the order given.
    pub fn into_nodes(self) -> Vec<F::Elem> {
        self.nodes
    }

    /// The number of nodes `m`.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The `v` with `s_i = sum_j v_j x_j^(i-1)` for **every** `i =
    /// 1..s.len()`: `v` from the first `m` terms, and every further term
    /// checked.
    ///
    /// # Method
    ///
    /// One product `rev(P) S mod y^(len s)`. Its first `m` coefficients are
    /// the numerator `N` of [`solve_transposed_vandermonde`]. The others
    /// are zero exactly when the sequence is the power sums of `v` through
    /// its last term: the power sums `E` of `v` satisfy `rev(P) E = N`
    /// (degree below `m`) and agree with `s` on the first `m` terms, so
    /// coefficient `k >= m` of `rev(P) S = rev(P) (S - E) + N` is zero up
    /// to the first term where `s` and `E` differ and equals that
    /// difference there. The check costs one product, where re-encoding
    /// `v` and comparing costs a tree of fractions.
    ///
    /// # Errors
    ///
    /// [`FieldError::LengthMismatch`] if `s` has fewer than `m` terms;
    /// [`FieldError::SequenceMismatch`] with the 1-based index of the first
    /// term that the solution does not reproduce.
    pub fn solve(&self, f: &F, s: &[F::Elem]) -> Result<Vec<F::Elem>, FieldError> {
        let m = self.nodes.len();
        if s.len() < m {
            return Err(FieldError::LengthMismatch {
                left: m,
                right: s.len(),
            });
        }
        let mut n = if m == 0 {
            s.to_vec()
        } else {
            mul_slices(f, &self.rev_p, s)
        };
        n.resize(s.len(), f.zero());
        if let Some(i) = n
            .get(m..)
            .and_then(|tail| tail.iter().position(|c| !f.is_zero(c)))
        {
            return Err(FieldError::SequenceMismatch { index: m + i + 1 });
        }
        n.truncate(m);
        n.reverse();
        let numer = match &self.tree {
            Some(t) => t.evaluate(f, &[&n], &self.nodes).pop().unwrap_or_default(),
            None => horner_in_parallel(f, &n, &self.nodes),
        };
        Ok(numer
            .iter()
            .zip(&self.inv_dp)
            .map(|(a, b)| f.mul(a, b))
            .collect())
    }
}

impl<F: Field> std::fmt::Debug for TransposedVandermonde<F> {
    // The derived parts (the product, the inverses, the tree) follow from
    // the nodes.
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        out.debug_struct("TransposedVandermonde")
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

/// Points per task of [`horner_in_parallel`].
const HORNER_CHUNK: usize = 128;

/// Horner's rule at every point, chunks of points on all cores with the
/// `parallel` feature (the same values either way).
fn horner_in_parallel<F: Field>(f: &F, c: &[F::Elem], xs: &[F::Elem]) -> Vec<F::Elem> {
    let chunks: Vec<&[F::Elem]> = xs.chunks(HORNER_CHUNK).collect();
    par::map(&chunks, c.len().saturating_mul(xs.len()), |chunk| {
        horner_many(f, c, chunk)
    })
    .concat()
}

#[cfg(test)]
mod timing {
    use super::TransposedVandermonde;
    use crate::{FiniteField, Fp64};
    use rand::SeedableRng;

    /// Horner's rule against the remainder tree for a transposed
    /// Vandermonde solve of `m` nodes over [`Fp64::proth`], medians of 9
    /// alternated rounds: for the field's `remainder_tree_threshold`.
    /// Timing, not a test; the figures are in docs/benchmarks.md.
    #[test]
    #[ignore = "timing: cargo test -p field --release --lib -- --ignored --nocapture timing_"]
    fn timing_remainder_tree_threshold() {
        let f = Fp64::proth();
        let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for m in [128usize, 256, 384, 512, 768, 1024, 1536, 2048] {
            let x: Vec<_> = (0..m).map(|_| f.random(rng)).collect();
            let s: Vec<_> = (0..m).map(|_| f.random(rng)).collect();
            let mut times = [Vec::new(), Vec::new()];
            for round in 0..9 {
                for k in 0..2 {
                    let which = (k + round) % 2;
                    let start = std::time::Instant::now();
                    let threshold = if which == 0 { usize::MAX } else { 0 };
                    let v = TransposedVandermonde::new_with(&f, &x, threshold)
                        .and_then(|t| t.solve(&f, &s));
                    times[which].push(start.elapsed().as_secs_f64());
                    assert!(v.is_ok());
                }
            }
            let [horner, tree] = times.map(|mut v| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2] * 1e3
            });
            println!(
                "m={m}: horner {horner:.3} ms, remainder tree {tree:.3} ms, tree/horner {:.2}",
                tree / horner
            );
        }
    }
}
