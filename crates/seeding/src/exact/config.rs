//! The parameters of [`ExactKMeans`], in a file of their own: the fit
//! (`exact.rs`) and the fitted model (`model.rs`) both use them.

use super::fixed::{FRAC_BITS, MAX_ABS_COORD};
use crate::ValidKMeansParams;

/// Exactly unlearnable K-means: K-means++ seeding then Lloyd's iterations,
/// whose [`ExactModel`](crate::ExactModel) updates to the fit of changed data bit for bit
/// (the server side of Algorithms 1 and 4 of the paper).
///
/// The parameters are [`crate::KMeansParams`], the same as the float
/// [`crate::KMeans`]'s: `k` clusters, a relative tolerance, at most
/// `max_iterations` assignment steps, `restarts` independent runs of which
/// the one of least objective is kept (run `r` keyed by
/// [`crate::restart_seed`]`(seed, r)`); plus whether the fit skips
/// certified points ([`Self::accelerate`], default
/// on; the bits are the same either way).
///
/// # How
///
/// - Every random choice is a keyed exponential race ([`ExpRace`](crate::ExpRace)) keyed
///   by `(seed, round, id)`: choices depend on ids, coordinates and
///   weights, never on positions. Seeding round `r` keeps its winner
///   unless the winner was removed, lost weight, or a changed point now
///   beats its key; the first such round is found without a pass over the
///   data (O((|changes| + k) k d)), and seeding is redone only then.
/// - Coordinates are rounded to multiples of 2^-32 (the model clusters
///   the rounded data; `|x| <= 2^16`). Cluster sums `S = sum w x`, weights
///   `W` and `Q = sum w |x|^2` are exact integers (`i128`, `u128`, 256
///   bits), so they do not depend on the order of the points, and an
///   update by integer deltas equals a fresh sum. Centroids are
///   `fl(fl(fl(S) / fl(W)) * 2^-32)`, a function of the integers.
/// - Every iteration keeps a trace: its centroids, its moments, and per
///   point a `u32` label and an `f32` lower bound on its margin
///   `min_{j != a} D_j - kappa D_a` (distances to the centroids, `a` the
///   label). An update replays the iterations: a point keeps its label
///   without any distance computation when its margin exceeds
///   `max_{j != a} delta_j + kappa delta_a`, where `delta_j` bounds the
///   shift of centroid `j` (triangle inequality); `kappa = 1 + O(d 2^-53)`
///   covers the rounding of the float distances, so that the float argmin
///   a fresh fit computes is provably the same (derivation in the source,
///   `exact/bounds.rs`). Every other point is assigned afresh, exactly as
///   a fit does. Skipped points keep their stored bound; a per-cluster
///   *debt* (the sum of the thresholds since) is subtracted from it, so
///   that the test costs one comparison and no write.
/// - Each iteration of the new run starts from the baseline it moved least
///   from: the old run's iteration (at the same index or just after) or the
///   new run's own previous iteration. The replay runs until the new run
///   converges, earlier or later than the old one. A fit starts each
///   iteration from its previous one ([`ExactKMeans::accelerate`]).
/// - Convergence (`sum_j |C_{t+1}(j) - C_t(j)|^2 <= tolerance * v`, with
///   `v` the mean per-axis variance of the data from exact moments), the
///   objective (from exact moments) and the sizes depend on the integers
///   and centroids alone, never on a float sum in position order. An empty
///   cluster is re-seeded by the race from one O(n d) pass, in a fit and in
///   an update alike.
///
/// # Cost
///
/// An update costs O(T n) comparisons (8 bytes read per point and
/// iteration), O(k d) per point whose label is not certified, O(T d) per
/// changed point, and, when the seeding changes (a seed removed or
/// outweighed: probability about `k |changes| / n` for comparable
/// weights), one seeding pass O(n k d) after which most points of the
/// first iterations are recomputed.
///
/// How many labels are not certified depends on how far the new run's
/// centroids move from the old run's. When a removal barely moves them
/// (the server's few hundred weighted points, where a removal lowers one
/// weight by one), an update recomputes a few dozen assignments and costs
/// a few percent of a fit. On large data with heavily overlapping clusters
/// Lloyd's iterations amplify a small perturbation (each point that
/// changes cluster moves two centroids, which moves more points): the new
/// run drifts away from the old one within tens of iterations, and from
/// there on an update costs what the fit's own iterations cost. Such an
/// update still equals the fit bit for bit; it is merely not cheaper.
/// `docs/benchmarks.md` has figures for both cases.
///
/// Memory: 8 bytes per point and iteration (label and margin), plus the
/// data and O(k d) per iteration; [`ExactModel::trace_bytes`](crate::ExactModel::trace_bytes) reports it.
/// Serialization stores only the parameters, the seed and the data, and
/// refits on loading (same bits).
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Changes, Dataset, ExactKMeans, KMeansParams, PointId};
///
/// let m = DMatrix::from_fn(2, 60, |r, c| ((c * 7 + r * 3) % 13) as f64 / 13.0 + (c % 3) as f64);
/// let data = Dataset::new(m)?;
/// let km = ExactKMeans::new(KMeansParams::new(3).tolerance(0.0).validate()?);
/// let mut model = km.fit(&data, 42)?;
///
/// // Remove a point: the model becomes what a fit without it gives.
/// let smaller = data.without(&[PointId(7)])?;
/// let report = model.update(&smaller, &Changes::removing(vec![PointId(7)]))?;
/// let fresh = km.fit(&smaller, 42)?;
/// assert_eq!(model.centroids(), fresh.centroids());
/// assert_eq!(model.phi().to_bits(), fresh.phi().to_bits());
/// assert_eq!(model.iterations(), fresh.iterations());
/// assert!(report.points_recomputed() < smaller.len() * model.iterations());
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ExactKMeans {
    pub(super) params: ValidKMeansParams,
    pub(super) accelerate: bool,
}

impl ExactKMeans {
    /// The largest coordinate magnitude accepted, `2^16`.
    pub const MAX_ABS_COORD: f64 = MAX_ABS_COORD;

    /// The number of fractional bits of the fixed-point coordinates: the
    /// model clusters the data rounded to multiples of `2^-32`.
    pub const FRACTION_BITS: u32 = FRAC_BITS;

    /// Exact K-means with these parameters, accelerated.
    pub fn new(params: ValidKMeansParams) -> Self {
        Self {
            params,
            accelerate: true,
        }
    }

    /// Whether a fit skips, from its second iteration on, the points whose
    /// label the bounds of the previous iteration certify (Hamerly-style
    /// acceleration with one bound per point; default `true`). The result
    /// is the same bits either way; `false` runs plain Lloyd, every point
    /// assigned afresh in every iteration (the reference the tests compare
    /// with). Updates always skip what they can.
    pub fn accelerate(mut self, accelerate: bool) -> Self {
        self.accelerate = accelerate;
        self
    }

    /// The number of clusters asked for.
    pub fn k(&self) -> usize {
        self.params.k()
    }

    /// The parameters.
    pub fn params(&self) -> &ValidKMeansParams {
        &self.params
    }

    /// Whether fits skip certified points.
    pub fn accelerates(&self) -> bool {
        self.accelerate
    }
}
