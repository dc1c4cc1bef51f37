//! Product and remainder trees: a polynomial at many points, and the power
//! sums of a sparse vector, in `O(M(n) log n)` field operations where
//! Horner's rule and running powers take `O(n^2)`.

use std::sync::OnceLock;

use crate::par;
use crate::poly::{
    Modulus, Poly, add_power_sums, div_rem_slices, horner_many, inv_series, linear_product,
    mul_slices,
};
use crate::{Field, FieldError};

/// Points per leaf: below this, Horner's rule on a short remainder and
/// products of linear factors one by one beat another tree level.
const LEAF: usize = 32;

/// The products `prod (x - x_j)` over a binary tree of the points: level
/// zero holds one product per chunk of [`LEAF`] points, each level above
/// the products of pairs of the one below (an odd last node moves up
/// unchanged), the last level the product of all of them.
///
/// An evaluation divides by the nodes below the root as prepared
/// divisors ([`Modulus`]: the inverse of each reversed node and, over a
/// field with transforms, the transforms of the node and of that
/// inverse). A tree made [`keeping_divisors`](Self::keeping_divisors)
/// keeps them from its first evaluation on: a second one (the decoders'
/// solve evaluates twice on one tree) divides by every node with one
/// forward and one inverse transform per product, and no inverse to
/// compute. Kept, they take about five times the tree's memory; a tree
/// evaluated once prepares one level at a time and drops it.
pub(crate) struct ProductTree<E> {
    levels: Vec<Vec<Vec<E>>>,
    /// Whether evaluations keep the prepared divisors.
    keep: bool,
    /// `moduli[l][i]` is `levels[l][i]` prepared, for every level but
    /// the root's, once kept.
    moduli: OnceLock<Vec<Vec<Modulus<E>>>>,
}

impl<E: Clone + Send + Sync> ProductTree<E> {
    /// The tree over `points` (which may repeat).
    pub(crate) fn new<F: Field<Elem = E>>(f: &F, points: &[E]) -> Self {
        let chunks: Vec<&[E]> = points.chunks(LEAF).collect();
        let mut levels = vec![par::map(&chunks, points.len(), |c| linear_product(f, c))];
        while let Some(last) = levels.last().filter(|l| l.len() > 1) {
            let pairs: Vec<&[Vec<E>]> = last.chunks(2).collect();
            let next = par::map(&pairs, points.len(), |pair| match pair {
                [a, b] => mul_slices(f, a, b),
                _ => pair[0].clone(),
            });
            levels.push(next);
        }
        Self {
            levels,
            keep: false,
            moduli: OnceLock::new(),
        }
    }

    /// The same tree, keeping its prepared divisors across evaluations.
    pub(crate) fn keeping_divisors(mut self) -> Self {
        self.keep = true;
        self
    }

    /// Level `l`'s nodes prepared as divisors: a remainder modulo the
    /// parent has a quotient as long as the sibling's degree; a node
    /// without a sibling is its parent, and divides nothing.
    fn prepare<F: Field<Elem = E>>(&self, f: &F, l: usize, work: usize) -> Vec<Modulus<E>> {
        let level = &self.levels[l];
        let nodes: Vec<(usize, &Vec<E>)> = level.iter().enumerate().collect();
        par::map(&nodes, work, |&(i, node)| {
            let sibling = level.get(i ^ 1).map_or(0, |s| s.len() - 1);
            Modulus::for_quotients(f, node.clone(), sibling)
        })
    }

    /// `prod_j (x - x_j)`, monic of degree the number of points.
    pub(crate) fn root(&self) -> &[E] {
        &self.levels[self.levels.len() - 1][0]
    }

    /// Each of `polys` at every point, in the order of the points: the
    /// remainders modulo each node's product, from the root down, then
    /// Horner's rule on every leaf's remainder.
    pub(crate) fn evaluate<F: Field<Elem = E>>(
        &self,
        f: &F,
        polys: &[&[E]],
        points: &[E],
    ) -> Vec<Vec<E>> {
        let work = points.len();
        let mut rems: Vec<Vec<Vec<E>>> =
            vec![polys.iter().map(|a| remainder(f, a, self.root())).collect()];
        let below_root = self.levels.len() - 1;
        let kept = self.keep.then(|| {
            self.moduli
                .get_or_init(|| (0..below_root).map(|l| self.prepare(f, l, work)).collect())
        });
        for l in (0..below_root).rev() {
            let fresh;
            let level = match kept {
                Some(moduli) => &moduli[l],
                None => {
                    fresh = self.prepare(f, l, work);
                    &fresh
                }
            };
            let nodes: Vec<(usize, &Modulus<E>)> = level.iter().enumerate().collect();
            rems = par::map(&nodes, work, |&(i, node)| {
                rems[i / 2]
                    .iter()
                    .map(|r| node.reduce(f, r.clone()))
                    .collect()
            });
        }
        let chunks: Vec<(usize, &[E])> = points.chunks(LEAF).enumerate().collect();
        let per_leaf = par::map(&chunks, work, |&(i, c)| {
            rems[i]
                .iter()
                .map(|r| horner_many(f, r, c))
                .collect::<Vec<_>>()
        });
        (0..polys.len())
            .map(|k| per_leaf.iter().flat_map(|leaf| leaf[k].clone()).collect())
            .collect()
    }
}

/// `a mod m` for a monic `m` of degree at least one.
fn remainder<F: Field>(f: &F, a: &[F::Elem], m: &[F::Elem]) -> Vec<F::Elem> {
    if a.len() < m.len() {
        return a.to_vec();
    }
    div_rem_slices(f, a, m).1
}

/// `p` at every point, by a remainder tree: `O(M(n) log n)` field
/// operations for `n` points and degree below `n`, where evaluating by
/// Horner's rule at each point costs `O(n deg p)`. With the `parallel`
/// feature the tree's nodes are shared among all cores; the values are
/// the same either way.
///
/// # Example
///
/// ```
/// use field::{Field, Fp64, Poly, poly};
///
/// let f = Fp64::proth();
/// let p = Poly::from_coeffs(&f, vec![f.from_u64(1), f.from_u64(2), f.from_u64(3)]);
/// let points: Vec<_> = (0..100).map(|i| f.from_u64(i)).collect();
/// let values = poly::evaluate_many(&f, &p, &points);
/// assert_eq!(values[10], f.from_u64(321)); // 3 * 100 + 2 * 10 + 1
/// assert!(values.iter().zip(&points).all(|(v, x)| *v == poly::evaluate(&f, &p, x)));
/// ```
pub fn evaluate_many<F: Field>(f: &F, p: &Poly<F::Elem>, points: &[F::Elem]) -> Vec<F::Elem> {
    if points.is_empty() {
        return Vec::new();
    }
    let tree = ProductTree::new(f, points);
    tree.evaluate(f, &[p.coeffs()], points)
        .pop()
        .unwrap_or_default()
}

/// The power sums `s_i = sum_j v_j x_j^(i-1)`, `i = 1..=m`: the syndromes
/// of the sparse vector with values `v_j` at the points `x_j` (line 2 of
/// Algorithm 2 of the paper encodes a client's vector this way, one key
/// at a time).
///
/// # Method
///
/// As power series, `sum_i s_i y^(i-1) = sum_j v_j / (1 - x_j y)`. The
/// fractions are added up a binary tree (`N/D + N'/D' = (N D' + N' D) /
/// (D D')`, products of about equal sizes at every level), and the one
/// fraction at the root is expanded to `m` terms with a Newton inverse of
/// its denominator: `O(M(n) log n + M(m))` field operations, where adding
/// each term's running powers costs `O(n m)`. Parallel as
/// [`evaluate_many`].
///
/// # Errors
///
/// [`FieldError::LengthMismatch`] unless `points` and `values` have the
/// same length.
///
/// # Example
///
/// ```
/// use field::{Field, FieldError, Mersenne61, poly};
///
/// let f = Mersenne61;
/// // 7 at x = 2 and 1 at x = 5: s_i = 7 * 2^(i-1) + 5^(i-1).
/// let s = poly::power_sums(&f, &[2, 5], &[7, 1], 4)?;
/// assert_eq!(s, vec![8, 19, 53, 181]);
/// assert_eq!(
///     poly::power_sums(&f, &[2], &[], 4),
///     Err(FieldError::LengthMismatch { left: 1, right: 0 })
/// );
/// # Ok::<(), FieldError>(())
/// ```
pub fn power_sums<F: Field>(
    f: &F,
    points: &[F::Elem],
    values: &[F::Elem],
    m: usize,
) -> Result<Vec<F::Elem>, FieldError> {
    if points.len() != values.len() {
        return Err(FieldError::LengthMismatch {
            left: points.len(),
            right: values.len(),
        });
    }
    if points.len() <= 2 * LEAF {
        // Running powers cost n m products; the tree's Newton inverse
        // alone costs a few products of length m.
        let mut out = vec![f.zero(); m];
        for (x, v) in points.iter().zip(values) {
            add_power_sums(f, &mut out, x, v);
        }
        return Ok(out);
    }
    let leaves: Vec<Chunks<'_, F::Elem>> = points.chunks(LEAF).zip(values.chunks(LEAF)).collect();
    let mut level = par::map(&leaves, points.len(), |(x, v)| leaf_fraction(f, x, v));
    while level.len() > 1 {
        let pairs: Vec<&[Fraction<F::Elem>]> = level.chunks(2).collect();
        level = par::map(&pairs, points.len(), |pair| match pair {
            [(n1, d1), (n2, d2)] => {
                let (n, d) = par::join(
                    n1.len(),
                    || add_slices(f, &mul_slices(f, n1, d2), &mul_slices(f, n2, d1)),
                    || mul_slices(f, d1, d2),
                );
                (n, d)
            }
            _ => pair[0].clone(),
        });
    }
    let (n, d) = level.pop().unwrap_or_default();
    // d has constant term one, so it is invertible as a power series.
    let inv = inv_series(f, &d, m);
    let mut s = mul_slices(f, &n[..n.len().min(m)], &inv);
    s.resize(m, f.zero());
    Ok(s)
}

/// A chunk of points and the values at them.
type Chunks<'a, E> = (&'a [E], &'a [E]);

/// A fraction `N/D` of polynomials in `y`, little-endian.
type Fraction<E> = (Vec<E>, Vec<E>);

/// `sum_j v_j / (1 - x_j y)` over a few terms, one at a time:
/// `N/D + v/(1 - x y) = (N (1 - x y) + v D) / (D (1 - x y))`.
fn leaf_fraction<F: Field>(f: &F, points: &[F::Elem], values: &[F::Elem]) -> Fraction<F::Elem> {
    let mut n: Vec<F::Elem> = Vec::with_capacity(points.len());
    let mut d: Vec<F::Elem> = Vec::with_capacity(points.len() + 1);
    d.push(f.one());
    for (x, v) in points.iter().zip(values) {
        // n <- n (1 - x y) + v d, then d <- d (1 - x y); both from the top.
        n.push(f.zero());
        for i in (0..n.len()).rev() {
            let shifted = if i == 0 {
                f.zero()
            } else {
                f.mul(x, &n[i - 1])
            };
            n[i] = f.add(&f.sub(&n[i], &shifted), &f.mul(v, &d[i]));
        }
        d.push(f.zero());
        for i in (1..d.len()).rev() {
            let shifted = f.mul(x, &d[i - 1]);
            d[i] = f.sub(&d[i], &shifted);
        }
    }
    (n, d)
}

/// `a + b` coefficient-wise (the longer one's tail copied).
fn add_slices<F: Field>(f: &F, a: &[F::Elem], b: &[F::Elem]) -> Vec<F::Elem> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = long.to_vec();
    for (o, x) in out.iter_mut().zip(short) {
        f.add_assign(o, x);
    }
    out
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::{FiniteField, Fp64, Goldilocks, Mersenne61};

    fn naive_power_sums<F: Field>(f: &F, x: &[F::Elem], v: &[F::Elem], m: usize) -> Vec<F::Elem> {
        let mut out = vec![f.zero(); m];
        for (xj, vj) in x.iter().zip(v) {
            let mut pw = vj.clone();
            for o in &mut out {
                f.add_assign(o, &pw);
                pw = f.mul(&pw, xj);
            }
        }
        out
    }

    fn check<F: FiniteField>(f: &F, seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for n in [
            0,
            1,
            5,
            LEAF - 1,
            LEAF,
            LEAF + 1,
            2 * LEAF + 1,
            3 * LEAF + 7,
            300,
        ] {
            let x: Vec<F::Elem> = (0..n).map(|_| f.random(&mut rng)).collect();
            let v: Vec<F::Elem> = (0..n).map(|_| f.random(&mut rng)).collect();
            for m in [0, 1, n, 2 * n + 3] {
                assert_eq!(
                    power_sums(f, &x, &v, m).unwrap(),
                    naive_power_sums(f, &x, &v, m),
                    "n = {n}, m = {m}"
                );
            }
            for deg in [0, n / 2, n, 2 * n + 1] {
                let p: Vec<F::Elem> = (0..deg).map(|_| f.random(&mut rng)).collect();
                let poly = Poly::from_coeffs(f, p.clone());
                let expect: Vec<F::Elem> = x
                    .iter()
                    .map(|xi| crate::poly::evaluate(f, &poly, xi))
                    .collect();
                assert_eq!(evaluate_many(f, &poly, &x), expect, "n = {n}, deg = {deg}");
            }
        }
    }

    #[test]
    fn trees_agree_with_horner_and_running_powers() {
        check(&Mersenne61, 1);
        check(&Goldilocks, 2);
        check(&Fp64::proth(), 3);
        check(&Fp64::new(7).unwrap(), 4); // points repeat
    }
}
