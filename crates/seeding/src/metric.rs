//! Sampling costs between points.
//!
//! The generic seeding code sees only costs: K-means++ samples a point with
//! probability proportional to `weight * cost(point, nearest seed)`, so
//! [`SqEuclidean`] gives the D^2 sampling of K-means++ and [`L1`] the D^1
//! sampling used to seed K-medians.

use core::fmt::Debug;

/// The cost between two points used for D^ell sampling and for assigning
/// points to their nearest seed.
///
/// `cost(a, a)` must be 0, costs must be non-negative, and `cost` must be a
/// pure function of its arguments (the same bits in give the same bits out):
/// the exactness of unlearning relies on recomputing identical costs.
///
/// # Example
///
/// ```
/// use seeding::{Metric, SqEuclidean, L1, Cosine};
///
/// let (a, b) = ([0.0, 3.0], [4.0, 0.0]);
/// assert_eq!(SqEuclidean.cost(&a, &b), 25.0);
/// assert_eq!(L1.cost(&a, &b), 7.0);
/// assert_eq!(Cosine.cost(&a, &b), 1.0);
/// ```
pub trait Metric: Clone + Debug + Send + Sync {
    /// The cost between `a` and `b` (slices of equal length).
    fn cost(&self, a: &[f64], b: &[f64]) -> f64;
}

/// Squared Euclidean distance: the D^2 cost of K-means++.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SqEuclidean;

/// Manhattan (L1) distance: the D^1 cost used to seed K-medians.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct L1;

/// Cosine distance `1 - a.b / (|a| |b|)`, clamped to `[0, 2]`.
///
/// The zero vector has no direction: its cost is 0 to another zero vector
/// and 1 to anything else.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Cosine;

/// Four independent accumulators let the compiler vectorize the loop; the
/// order of additions is fixed, so the result is the same on every run.
#[inline]
fn sum4(a: &[f64], b: &[f64], f: impl Fn(f64, f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 4];
    let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for l in 0..4 {
            acc[l] += f(x[l], y[l]);
        }
    }
    for (l, (&x, &y)) in ra.iter().zip(rb).enumerate() {
        acc[l] += f(x, y);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

impl Metric for SqEuclidean {
    #[inline]
    fn cost(&self, a: &[f64], b: &[f64]) -> f64 {
        sum4(a, b, |x, y| {
            let t = x - y;
            t * t
        })
    }
}

impl Metric for L1 {
    #[inline]
    fn cost(&self, a: &[f64], b: &[f64]) -> f64 {
        sum4(a, b, |x, y| (x - y).abs())
    }
}

impl Metric for Cosine {
    fn cost(&self, a: &[f64], b: &[f64]) -> f64 {
        let dot = sum4(a, b, |x, y| x * y);
        let na = sum4(a, a, |x, y| x * y).sqrt();
        let nb = sum4(b, b, |x, y| x * y).sqrt();
        match (na > 0.0, nb > 0.0) {
            (false, false) => 0.0,
            (true, true) => (1.0 - dot / (na * nb)).clamp(0.0, 2.0),
            _ => 1.0,
        }
    }
}

#[cfg(test)]
// Small integers and their sums are exact in f64.
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn costs_of_known_pairs() {
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [0.0, 0.0, 0.0, 0.0, 1.0];
        assert_eq!(SqEuclidean.cost(&a, &b), 1.0 + 4.0 + 9.0 + 16.0 + 16.0);
        assert_eq!(L1.cost(&a, &b), 14.0);
        assert_eq!(SqEuclidean.cost(&a, &a), 0.0);
        assert!(Cosine.cost(&a, &a).abs() < 1e-15);
        assert!((Cosine.cost(&[1.0, 0.0], &[-1.0, 0.0]) - 2.0).abs() < 1e-15);
        assert_eq!(Cosine.cost(&[0.0, 0.0], &[0.0, 0.0]), 0.0);
        assert_eq!(Cosine.cost(&[0.0, 0.0], &[1.0, 0.0]), 1.0);
    }
}
