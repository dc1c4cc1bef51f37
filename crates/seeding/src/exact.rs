//! Exactly unlearnable K-means (K-means++ seeding, then Lloyd's
//! iterations) with incremental updates: after points are added, removed
//! or reweighted, [`ExactModel::update`] gives, bit for bit, the model a
//! fresh [`ExactKMeans::fit`] of the new data with the same seed would
//! give, usually at a small fraction of its cost.
//!
//! This is the server side of Algorithm 1 of the paper (lines 6-7: full
//! K-means++ on the server's weighted points) made exactly and cheaply
//! unlearnable, for the server step of Algorithm 4 (lines 8-12): the
//! server's state after a removal is the state of retraining on the
//! remaining data, not merely distributed like it.
//!
//! The design, costs and memory are documented on [`ExactKMeans`].

mod bounds;
mod fixed;
mod points;
mod seeds;
mod trace;

use std::collections::{HashMap, HashSet};

use nalgebra::DMatrixView;

use self::bounds::Bounds;
use self::fixed::{FRAC_BITS, MAX_ABS_COORD, Moments, from_fixed, to_fixed};
use self::points::{Points, rounded_point};
use self::seeds::{SeedChanges, SeedList, first_changed_round};
use self::trace::{Iter, Lloyd, NONE, RunEnd};
use crate::{Dataset, ExpRace, Metric, PointId, SeedingError, SqEuclidean, mix64};

/// Exactly unlearnable K-means: K-means++ seeding then Lloyd's iterations,
/// whose [`ExactModel`] updates to the fit of changed data bit for bit
/// (the server side of Algorithms 1 and 4 of the paper).
///
/// The parameters, checked by [`Self::fit`]: `k` clusters, a relative
/// tolerance (default `1e-4`, as [`crate::KMeans`]), at most
/// `max_iterations` assignment steps (default 300), `restarts` independent
/// runs of which the one of least objective is kept (default 1), and
/// whether the fit skips certified points ([`Self::accelerate`], default
/// on; the bits are the same either way).
///
/// # How
///
/// - Every random choice is a keyed exponential race ([`ExpRace`]) keyed
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
/// data and O(k d) per iteration; [`ExactModel::trace_bytes`] reports it.
/// Serialization stores only the parameters, the seed and the data, and
/// refits on loading (same bits).
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Changes, Dataset, ExactKMeans, PointId};
///
/// let m = DMatrix::from_fn(2, 60, |r, c| ((c * 7 + r * 3) % 13) as f64 / 13.0 + (c % 3) as f64);
/// let data = Dataset::new(m)?;
/// let km = ExactKMeans::new(3).tolerance(0.0);
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
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ExactKMeans {
    k: usize,
    tolerance: f64,
    max_iterations: usize,
    restarts: usize,
    accelerate: bool,
}

/// The points that changed between two data sets, by id.
///
/// - `removed`: present before, absent after;
/// - `added`: absent before, present after;
/// - `reweighted`: present in both with the same coordinates and another
///   weight.
///
/// A point whose coordinates changed is removed and added (same id). All
/// other points must be the same in both (id, rounded coordinates and
/// weight): [`ExactModel::update`] checks the named points and the count
/// in O(|changes| d), not the others; [`ExactModel::changes_to`] computes
/// the changes by comparing everything (O(n d)).
///
/// # Example
///
/// ```
/// use seeding::{Changes, PointId};
///
/// let c = Changes::removing(vec![PointId(3)]).with_added(vec![PointId(9)]);
/// assert_eq!(c.len(), 2);
/// assert!(!c.is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Changes {
    /// Ids no longer present.
    pub removed: Vec<PointId>,
    /// Ids newly present.
    pub added: Vec<PointId>,
    /// Ids present in both, with a new weight.
    pub reweighted: Vec<PointId>,
}

impl Changes {
    /// Only removals.
    pub fn removing(ids: Vec<PointId>) -> Self {
        Self {
            removed: ids,
            ..Self::default()
        }
    }

    /// These changes plus `ids` added.
    pub fn with_added(mut self, ids: Vec<PointId>) -> Self {
        self.added.extend(ids);
        self
    }

    /// These changes plus `ids` reweighted.
    pub fn with_reweighted(mut self, ids: Vec<PointId>) -> Self {
        self.reweighted.extend(ids);
        self
    }

    /// The number of ids named.
    pub fn len(&self) -> usize {
        self.removed.len() + self.added.len() + self.reweighted.len()
    }

    /// Whether no id is named.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What an update did to one run (one restart).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RunReport {
    /// The first seeding round whose winner changed, if any (seeding was
    /// then redone, O(n k d)).
    pub seeding_changed_from: Option<usize>,
    /// Whether the run was refit from scratch because the number of seeds
    /// changed (fewer than `k` distinct points before or after).
    pub refit: bool,
    /// The number of iterations before the update.
    pub iterations_before: usize,
    /// The number of iterations after the update.
    pub iterations: usize,
    /// Iterations computed incrementally: every point checked by the skip
    /// test against a baseline iteration, only those it cannot certify
    /// assigned afresh.
    pub iterations_incremental: usize,
    /// Of these, the iterations whose baseline was the run's own previous
    /// iteration rather than an iteration of the old trace (the new run
    /// had moved away from the old one: such an iteration costs what an
    /// iteration of an accelerated fit costs).
    pub iterations_from_previous: usize,
    /// Iterations computed in full (the first iteration of a refit).
    pub iterations_full: usize,
    /// Assignments computed (distances to every centroid), summed over the
    /// iterations; a fit computes `n` per iteration.
    pub points_recomputed: usize,
    /// Iterations with an empty cluster, each needing one O(n d) pass for
    /// the re-seeding weights.
    pub reseed_passes: usize,
}

/// What [`ExactModel::update`] did: a report per run and the best run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UpdateReport {
    /// One report per run (restart), in order.
    pub runs: Vec<RunReport>,
    /// The index of the run of least objective after the update.
    pub best: usize,
    /// The number of points after the update.
    pub points: usize,
}

impl UpdateReport {
    /// Whether any run's seeds changed.
    pub fn seeding_changed(&self) -> bool {
        self.runs.iter().any(|r| r.seeding_changed_from.is_some())
    }

    /// Whether any run was refit from scratch.
    pub fn fell_back(&self) -> bool {
        self.runs.iter().any(|r| r.refit)
    }

    /// Assignments computed, over all runs and iterations.
    pub fn points_recomputed(&self) -> usize {
        self.runs.iter().map(|r| r.points_recomputed).sum()
    }

    /// The final iteration count of the best run.
    pub fn iterations(&self) -> usize {
        self.runs.get(self.best).map_or(0, |r| r.iterations)
    }
}

/// One run: its race, seeds, trace and results.
#[derive(Clone, Debug)]
struct Run {
    race: ExpRace,
    seeds: SeedList,
    trace: Vec<Iter>,
    /// `C_T`.
    centroids: Vec<f64>,
    converged: bool,
    sizes: Vec<u64>,
    phi: f64,
    /// The moments the objective was computed from, and its terms: an
    /// update recomputes only the terms of clusters that changed (each
    /// costs big-integer arithmetic).
    phi_cache: Option<(Moments, Vec<f64>)>,
}

impl Run {
    fn finish(&mut self, end: RunEnd) {
        self.centroids = end.centroids;
        self.converged = end.converged;
        // A run has at least one iteration (max_iterations >= 1).
        if let Some(last) = self.trace.last() {
            let m = &last.moments;
            self.sizes = (0..m.len()).map(|j| m.weight(j)).collect();
            let terms: Vec<f64> = (0..m.len())
                .map(|j| match &self.phi_cache {
                    Some((old, terms)) if old.same_cluster(m, j) => terms[j],
                    _ => m.phi_term(j),
                })
                .collect();
            self.phi = Moments::phi_from_terms(&terms);
            self.phi_cache = Some((m.clone(), terms));
        }
    }
}

/// The race seed of run `i`: `seed` itself for the first run.
fn run_seed(seed: u64, i: usize) -> u64 {
    if i == 0 {
        seed
    } else {
        mix64(seed ^ mix64((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)))
    }
}

impl ExactKMeans {
    /// The largest coordinate magnitude accepted, `2^16`.
    pub const MAX_ABS_COORD: f64 = MAX_ABS_COORD;

    /// The number of fractional bits of the fixed-point coordinates: the
    /// model clusters the data rounded to multiples of `2^-32`.
    pub const FRACTION_BITS: u32 = FRAC_BITS;

    /// `k` clusters, tolerance `1e-4`, at most 300 iterations, one run.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            tolerance: 1e-4,
            max_iterations: 300,
            restarts: 1,
            accelerate: true,
        }
    }

    /// The relative tolerance: iterations stop once no cluster was
    /// re-seeded and the summed squared shift of the centroids is at most
    /// `tolerance` times the mean per-axis weighted variance of the data
    /// (computed from exact moments). 0 runs to a fixed point.
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// The most assignment steps run (at least 1).
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// The number of independent runs (at least 1); the model keeps the
    /// one of least objective (the first on ties). Run 0 uses the seed
    /// given to [`Self::fit`], run `i` a seed derived from it.
    pub fn restarts(mut self, restarts: usize) -> Self {
        self.restarts = restarts;
        self
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
        self.k
    }

    fn check(&self) -> Result<(), SeedingError> {
        if self.k == 0 {
            return Err(SeedingError::ZeroClusters);
        }
        if self.k >= NONE as usize {
            return Err(SeedingError::InvalidParameter {
                name: "k",
                value: self.k as f64,
            });
        }
        if !(self.tolerance >= 0.0 && self.tolerance.is_finite()) {
            return Err(SeedingError::InvalidParameter {
                name: "tolerance",
                value: self.tolerance,
            });
        }
        if self.max_iterations == 0 {
            return Err(SeedingError::InvalidParameter {
                name: "max_iterations",
                value: 0.0,
            });
        }
        if self.restarts == 0 {
            return Err(SeedingError::InvalidParameter {
                name: "restarts",
                value: 0.0,
            });
        }
        Ok(())
    }

    fn lloyd(&self, race: ExpRace, tol: f64, dim: usize) -> Lloyd {
        Lloyd {
            k: self.k,
            max_iterations: self.max_iterations,
            tol,
            race,
            bounds: Bounds::new(dim),
            slack: 0.0,
            accelerate: self.accelerate,
        }
    }

    /// Clusters `data`: for each run, K-means++ seeding with the race keyed
    /// by the run's seed (rounds `0..k`), then Lloyd's iterations with
    /// exact sums (re-seeding an empty cluster `j` after iteration `t` with
    /// round `k (t + 1) + j`). The result depends on the points' ids,
    /// rounded coordinates and weights and on `seed`, not on the order of
    /// the points, nor on the `parallel` feature. O(n k d T) per run.
    ///
    /// # Errors
    ///
    /// [`SeedingError::ZeroClusters`], [`SeedingError::InvalidParameter`]
    /// for a tolerance that is negative or not finite or a zero iteration
    /// cap or restart count, [`SeedingError::EmptyDataset`], and
    /// [`SeedingError::OutOfFixedRange`] for a coordinate beyond
    /// [`Self::MAX_ABS_COORD`].
    pub fn fit(&self, data: &Dataset, seed: u64) -> Result<ExactModel, SeedingError> {
        self.fit_impl(data, seed, None)
    }

    /// Clusters `data` by Lloyd's iterations from the given centroids (the
    /// columns of `initial`, rounded to the fixed-point grid) instead of
    /// K-means++ seeds, for instance to warm-start from a previous model.
    /// Updates keep these initial centroids. Empty clusters are re-seeded
    /// as in [`Self::fit`], with the race keyed by `seed`.
    ///
    /// # Errors
    ///
    /// As [`Self::fit`], plus [`SeedingError::ZeroClusters`] without
    /// centroids, [`SeedingError::LengthMismatch`] for more than `k`
    /// centroids or centroids of another dimension, and
    /// [`SeedingError::OutOfFixedRange`] (with id 0) for a centroid
    /// coordinate out of range.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, ExactKMeans};
    ///
    /// let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 1.0, 10.0, 11.0]))?;
    /// // The second centroid starts far from everything: its cluster is
    /// // empty and gets re-seeded.
    /// let init = DMatrix::from_column_slice(1, 2, &[5.0, 100.0]);
    /// let model = ExactKMeans::new(2).fit_from(&data, init.as_view(), 3)?;
    /// assert_eq!(model.sizes(), &[2, 2]);
    /// assert_eq!(model.reseed_iterations(), 1);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn fit_from(
        &self,
        data: &Dataset,
        initial: DMatrixView<'_, f64>,
        seed: u64,
    ) -> Result<ExactModel, SeedingError> {
        if initial.ncols() == 0 {
            return Err(SeedingError::ZeroClusters);
        }
        if initial.nrows() != data.dim() {
            return Err(SeedingError::LengthMismatch {
                what: "centroid dimension",
                expected: data.dim(),
                found: initial.nrows(),
            });
        }
        if initial.ncols() > self.k {
            return Err(SeedingError::LengthMismatch {
                what: "initial centroids (at most k)",
                expected: self.k,
                found: initial.ncols(),
            });
        }
        let centers = initial
            .iter()
            .enumerate()
            .map(|(i, &value)| {
                to_fixed(value)
                    .map(from_fixed)
                    .ok_or(SeedingError::OutOfFixedRange {
                        id: PointId(0),
                        axis: i % data.dim(),
                        value,
                    })
            })
            .collect::<Result<Vec<f64>, _>>()?;
        self.fit_impl(data, seed, Some(centers))
    }

    fn fit_impl(
        &self,
        data: &Dataset,
        seed: u64,
        initial: Option<Vec<f64>>,
    ) -> Result<ExactModel, SeedingError> {
        self.check()?;
        if data.is_empty() {
            return Err(SeedingError::EmptyDataset);
        }
        let points = Points::from_dataset(data)?;
        let mut totals = Moments::zeros(1, points.dim());
        for (x, &w) in points
            .coords()
            .chunks_exact(points.dim())
            .zip(points.weights())
        {
            totals.add_point(0, w, x, true);
        }
        let tol = self.tolerance * totals.pooled_mean_variance();
        let runs = (0..self.restarts)
            .map(|i| {
                let race = ExpRace::new(run_seed(seed, i));
                let seeds = match &initial {
                    Some(c) => SeedList {
                        ids: Vec::new(),
                        centers: c.clone(),
                    },
                    None => seeds::seed(&points, self.k, race),
                };
                let mut run = Run {
                    race,
                    seeds,
                    trace: Vec::new(),
                    centroids: Vec::new(),
                    converged: false,
                    sizes: Vec::new(),
                    phi: 0.0,
                    phi_cache: None,
                };
                let end = self.lloyd(race, tol, points.dim()).run(
                    &points,
                    &mut run.trace,
                    run.seeds.centers.clone(),
                );
                run.finish(end);
                run
            })
            .collect();
        let mut model = ExactModel {
            params: self.clone(),
            seed,
            initial,
            points,
            totals,
            runs,
            best: 0,
        };
        model.pick_best();
        Ok(model)
    }
}

/// The resolved, validated changes of an update.
struct Plan {
    /// Positions (before the update) of the removed points.
    removed: Vec<usize>,
    removed_ids: HashSet<PointId>,
    /// Added points: id, rounded coordinates, weight.
    added: Vec<(PointId, Vec<f64>, u64)>,
    /// Positions (before the update) of reweighted points, new weights.
    reweighted: Vec<(usize, u64)>,
    reweighted_ids: HashMap<PointId, (u64, u64)>,
}

/// The state [`ExactKMeans::fit`] returns: the data (rounded), and per run
/// its seeds and the trace of its iterations; the results are those of the
/// best run.
///
/// [`Self::update`] brings it to the state a fresh fit of the new data with
/// the same seed has, bit for bit (centroids, seeds, assignments, sizes,
/// objective, iteration count), at a fraction of the cost of a fit.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, ExactKMeans, PointId};
///
/// // Weighted points, as a server holds them.
/// let m = DMatrix::from_fn(2, 40, |r, c| ((c * 5 + r * 11) % 17) as f64 / 17.0);
/// let ids: Vec<PointId> = (0..40).map(PointId).collect();
/// let data = Dataset::with_weights(m.clone(), ids.clone(), (0..40).map(|i| 1 + i % 4).collect())?;
/// let km = ExactKMeans::new(3);
/// let mut model = km.fit(&data, 7)?;
///
/// // A count goes down by one.
/// let lighter = Dataset::with_weights(m, ids, (0..40).map(|i| 1 + i % 4 - u64::from(i == 5)).collect())?;
/// let changes = model.changes_to(&lighter)?;
/// assert_eq!(changes.reweighted, vec![PointId(5)]);
/// model.update(&lighter, &changes)?;
/// let fresh = km.fit(&lighter, 7)?;
/// assert_eq!(model.sizes(), fresh.sizes());
/// assert_eq!(model.seeds(), fresh.seeds());
/// for id in (0..40).map(PointId) {
///     assert_eq!(model.assignment(id), fresh.assignment(id));
/// }
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug)]
pub struct ExactModel {
    params: ExactKMeans,
    seed: u64,
    /// The given initial centroids ([`ExactKMeans::fit_from`]), if any.
    initial: Option<Vec<f64>>,
    points: Points,
    /// The moments of all points (one cluster), for the tolerance.
    totals: Moments,
    runs: Vec<Run>,
    best: usize,
}

impl ExactModel {
    fn pick_best(&mut self) {
        let mut best = 0;
        for (i, r) in self.runs.iter().enumerate() {
            if r.phi.total_cmp(&self.runs[best].phi).is_lt() {
                best = i;
            }
        }
        self.best = best;
    }

    fn run(&self) -> &Run {
        &self.runs[self.best]
    }

    /// The parameters.
    pub fn params(&self) -> &ExactKMeans {
        &self.params
    }

    /// The seed given to [`ExactKMeans::fit`].
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.points.dim()
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// Whether the model holds no points (never: fitting and updating
    /// need at least one).
    pub fn is_empty(&self) -> bool {
        self.points.len() == 0
    }

    /// The ids of the points, in the model's own order (see
    /// [`Self::assignments`]).
    pub fn ids(&self) -> &[PointId] {
        self.points.ids()
    }

    /// The weights, in the model's order.
    pub fn weights(&self) -> &[u64] {
        self.points.weights()
    }

    /// The rounded coordinates of the point `id`, or `None` if it is not
    /// in the model.
    pub fn point(&self, id: PointId) -> Option<&[f64]> {
        self.points.position(id).map(|p| self.points.point(p))
    }

    /// The data as the model holds it (rounded coordinates), in its order.
    ///
    /// # Errors
    ///
    /// None in practice (the data was valid when it came in); the
    /// constructor's errors are passed on.
    pub fn to_dataset(&self) -> Result<Dataset, SeedingError> {
        self.points.to_dataset()
    }

    /// The number of centroids: `k`, or fewer when the data has fewer
    /// distinct points.
    pub fn num_centroids(&self) -> usize {
        self.run().sizes.len()
    }

    /// The centroids as the columns of a d x m matrix.
    pub fn centroids(&self) -> DMatrixView<'_, f64> {
        DMatrixView::from_slice(&self.run().centroids, self.dim(), self.num_centroids())
    }

    /// Centroid `j`.
    ///
    /// # Panics
    ///
    /// If `j >= self.num_centroids()`.
    pub fn centroid(&self, j: usize) -> &[f64] {
        let d = self.dim();
        &self.run().centroids[j * d..(j + 1) * d]
    }

    /// The centroids `C_t` that iteration `t` assigned to (`C_0`: the
    /// seeds; `t = iterations()`: the final centroids), or `None` for a
    /// larger `t`.
    pub fn centroids_at(&self, t: usize) -> Option<DMatrixView<'_, f64>> {
        let r = self.run();
        let c = match r.trace.get(t) {
            Some(it) => &it.centroids,
            None if t == r.trace.len() => &r.centroids,
            None => return None,
        };
        Some(DMatrixView::from_slice(c, self.dim(), self.num_centroids()))
    }

    /// The ids of the K-means++ seeds, in the order chosen (empty after
    /// [`ExactKMeans::fit_from`]).
    pub fn seeds(&self) -> &[PointId] {
        &self.run().seeds.ids
    }

    /// The cluster sizes (sums of weights) of the last assignment.
    pub fn sizes(&self) -> &[u64] {
        &self.run().sizes
    }

    /// The objective: the weighted sum of squared distances from each
    /// point to the exact mean of its cluster in the last assignment (the
    /// centroids up to their final rounding), computed from the exact
    /// moments `(Q W - |S|^2) / W` per cluster, rounded through `f64` and
    /// added in cluster order.
    pub fn phi(&self) -> f64 {
        self.run().phi
    }

    /// The objective of every run, in order.
    pub fn run_objectives(&self) -> Vec<f64> {
        self.runs.iter().map(|r| r.phi).collect()
    }

    /// The index of the run kept.
    pub fn best_run(&self) -> usize {
        self.best
    }

    /// The number of assignment steps run.
    pub fn iterations(&self) -> usize {
        self.run().trace.len()
    }

    /// The number of iterations after which an empty cluster was
    /// re-seeded.
    pub fn reseed_iterations(&self) -> usize {
        self.run().trace.iter().filter(|it| it.reseeded).count()
    }

    /// Whether the tolerance was met before the iteration cap.
    pub fn converged(&self) -> bool {
        self.run().converged
    }

    /// The cluster of every point in the last assignment, in the order of
    /// [`Self::ids`].
    pub fn assignments(&self) -> &[u32] {
        self.run().trace.last().map_or(&[], |it| &it.labels)
    }

    /// The cluster of point `id` in the last assignment, or `None` if it
    /// is not in the model.
    pub fn assignment(&self, id: PointId) -> Option<usize> {
        let p = self.points.position(id)?;
        self.assignments().get(p).map(|&a| a as usize)
    }

    /// The index of the centroid nearest to `x` (lowest index on ties), or
    /// `None` when `x` has the wrong length.
    pub fn predict(&self, x: &[f64]) -> Option<usize> {
        if x.len() != self.dim() {
            return None;
        }
        let mut best = (None, f64::INFINITY);
        for (j, c) in self.run().centroids.chunks_exact(self.dim()).enumerate() {
            let f = SqEuclidean.cost(x, c);
            if f < best.1 {
                best = (Some(j), f);
            }
        }
        best.0
    }

    /// The bytes the traces take: per run and iteration, 8 per point (a
    /// `u32` label and an `f32` margin) plus the centroids, moments and
    /// debts (O(k d) each).
    pub fn trace_bytes(&self) -> usize {
        let d = self.dim();
        self.runs
            .iter()
            .flat_map(|r| &r.trace)
            .map(|it| {
                let m = it.moments.len();
                it.labels.len() * 4 + it.margins.len() * 4 + m * (8 * d + 16 * d + 16 + 32 + 8)
            })
            .sum()
    }

    /// The changes that turn the model's data into `new_data`, found by
    /// comparing every point by id (O(n d)).
    ///
    /// # Errors
    ///
    /// [`SeedingError::LengthMismatch`] for another dimension and
    /// [`SeedingError::OutOfFixedRange`] for a coordinate out of range.
    pub fn changes_to(&self, new_data: &Dataset) -> Result<Changes, SeedingError> {
        self.check_dim(new_data)?;
        let mut ch = Changes::default();
        for (pos, &id) in self.points.ids().iter().enumerate() {
            let Some(np) = new_data.position(id) else {
                ch.removed.push(id);
                continue;
            };
            if rounded_point(new_data, np)? != self.points.point(pos) {
                ch.removed.push(id);
                ch.added.push(id);
            } else if new_data.weight(np) != self.points.weights()[pos] {
                ch.reweighted.push(id);
            }
        }
        for &id in new_data.ids() {
            if self.points.position(id).is_none() {
                ch.added.push(id);
            }
        }
        Ok(ch)
    }

    /// [`Self::changes_to`] then [`Self::update`]: O(n d) more than an
    /// update, still far below a fit.
    ///
    /// # Errors
    ///
    /// As [`Self::changes_to`] and [`Self::update`].
    pub fn update_to(&mut self, new_data: &Dataset) -> Result<UpdateReport, SeedingError> {
        let changes = self.changes_to(new_data)?;
        self.update(new_data, &changes)
    }

    fn check_dim(&self, new_data: &Dataset) -> Result<(), SeedingError> {
        if new_data.dim() != self.dim() {
            return Err(SeedingError::LengthMismatch {
                what: "dimension of the new data",
                expected: self.dim(),
                found: new_data.dim(),
            });
        }
        Ok(())
    }

    /// Brings the model to the state [`ExactKMeans::fit`] of `new_data`
    /// with the same seed would give, bit for bit: same seeds, centroids,
    /// assignments, sizes, objective and iteration count (and the same
    /// centroids at every iteration).
    ///
    /// `changes` names the points that differ between the model's data
    /// and `new_data` (see [`Changes`]); the others are taken to be
    /// unchanged (not checked, so that an update costs no pass over the
    /// data; use [`Self::update_to`] to have them compared). Cost: see the
    /// module documentation; on error nothing changes.
    ///
    /// # Errors
    ///
    /// [`SeedingError::EmptyDataset`] for empty new data,
    /// [`SeedingError::LengthMismatch`] for another dimension or when the
    /// number of points is not the old one minus the removed plus the
    /// added, [`SeedingError::UnknownId`], [`SeedingError::DuplicateId`],
    /// [`SeedingError::RepeatedId`] and [`SeedingError::InconsistentChange`]
    /// when `changes` do not match the data, and
    /// [`SeedingError::OutOfFixedRange`] for an added point out of range.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Changes, Dataset, ExactKMeans, PointId};
    ///
    /// let m = DMatrix::from_fn(3, 200, |r, c| ((c * 37 + r * 11) % 101) as f64 / 101.0 + (c % 4) as f64);
    /// let data = Dataset::new(m)?;
    /// let km = ExactKMeans::new(4);
    /// let mut model = km.fit(&data, 9)?;
    /// // Remove a point that is not a seed, and add one.
    /// let gone = (0..200).map(PointId).find(|id| !model.seeds().contains(id)).unwrap();
    /// let extra = Dataset::with_ids(DMatrix::from_column_slice(3, 1, &[0.5, 1.5, 2.5]), vec![PointId(500)])?;
    /// let mut coords = data.without(&[gone])?.coords().to_vec();
    /// coords.extend_from_slice(extra.coords());
    /// let mut ids = data.without(&[gone])?.ids().to_vec();
    /// ids.push(PointId(500));
    /// let new = Dataset::with_ids(DMatrix::from_vec(3, 200, coords), ids)?;
    ///
    /// let report = model.update(&new, &Changes::removing(vec![gone]).with_added(vec![PointId(500)]))?;
    /// assert_eq!(report.points, 200);
    /// assert_eq!(report.iterations(), model.iterations());
    /// // Far fewer assignments than a fit's 200 per iteration.
    /// assert!(report.points_recomputed() < 200 * model.iterations() / 2);
    /// let fresh = km.fit(&new, 9)?;
    /// assert_eq!(model.assignment(PointId(500)), fresh.assignment(PointId(500)));
    /// assert_eq!(model.phi().to_bits(), fresh.phi().to_bits());
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn update(
        &mut self,
        new_data: &Dataset,
        changes: &Changes,
    ) -> Result<UpdateReport, SeedingError> {
        self.update_impl(new_data, changes, 0.0)
    }

    /// [`Self::update`] with a skip test loosened by `slack` (added to every
    /// stored margin): UNSOUND for any `slack > 0`. It exists only so that
    /// tests can check that the bit-identity comparison catches a wrong
    /// update (the negative control); never use it otherwise.
    ///
    /// # Errors
    ///
    /// As [`Self::update`].
    #[doc(hidden)]
    pub fn update_with_unsound_slack(
        &mut self,
        new_data: &Dataset,
        changes: &Changes,
        slack: f64,
    ) -> Result<UpdateReport, SeedingError> {
        self.update_impl(new_data, changes, slack)
    }

    fn plan(&self, new_data: &Dataset, changes: &Changes) -> Result<Plan, SeedingError> {
        self.check_dim(new_data)?;
        if new_data.is_empty() {
            return Err(SeedingError::EmptyDataset);
        }
        let pts = &self.points;
        let mut named = HashSet::with_capacity(changes.len());
        let mut removed = Vec::with_capacity(changes.removed.len());
        let mut removed_ids = HashSet::with_capacity(changes.removed.len());
        for &id in &changes.removed {
            let pos = pts.position(id).ok_or(SeedingError::UnknownId(id))?;
            if !removed_ids.insert(id) {
                return Err(SeedingError::RepeatedId(id));
            }
            removed.push(pos);
        }
        let mut added = Vec::with_capacity(changes.added.len());
        for &id in &changes.added {
            if !named.insert(id) {
                return Err(SeedingError::RepeatedId(id));
            }
            if pts.position(id).is_some() && !removed_ids.contains(&id) {
                return Err(SeedingError::DuplicateId(id));
            }
            let np = new_data.position(id).ok_or(SeedingError::UnknownId(id))?;
            added.push((id, rounded_point(new_data, np)?, new_data.weight(np)));
        }
        for &id in &removed_ids {
            if new_data.contains(id) && !named.contains(&id) {
                return Err(SeedingError::InconsistentChange {
                    id,
                    reason: "removed but present in the new data",
                });
            }
        }
        let mut reweighted = Vec::with_capacity(changes.reweighted.len());
        let mut reweighted_ids = HashMap::with_capacity(changes.reweighted.len());
        for &id in &changes.reweighted {
            if !named.insert(id) {
                return Err(SeedingError::RepeatedId(id));
            }
            if removed_ids.contains(&id) {
                return Err(SeedingError::InconsistentChange {
                    id,
                    reason: "both removed and reweighted",
                });
            }
            let pos = pts.position(id).ok_or(SeedingError::UnknownId(id))?;
            let np = new_data.position(id).ok_or(SeedingError::UnknownId(id))?;
            if rounded_point(new_data, np)? != pts.point(pos) {
                return Err(SeedingError::InconsistentChange {
                    id,
                    reason: "reweighted but its coordinates changed",
                });
            }
            let (before, after) = (pts.weights()[pos], new_data.weight(np));
            reweighted.push((pos, after));
            reweighted_ids.insert(id, (before, after));
        }
        let expected = pts.len() - removed.len() + added.len();
        if new_data.len() != expected {
            return Err(SeedingError::LengthMismatch {
                what: "points after the changes",
                expected,
                found: new_data.len(),
            });
        }
        Ok(Plan {
            removed,
            removed_ids,
            added,
            reweighted,
            reweighted_ids,
        })
    }

    /// Applies the changes to the data, the totals and every trace:
    /// moments are adjusted by exact integer deltas, so that each old
    /// iteration counts the points still present with their new weights,
    /// under their old labels; added points are uncounted. O(T |changes| d).
    fn apply(&mut self, plan: &mut Plan) {
        let pts = &mut self.points;
        for &(pos, after) in &plan.reweighted {
            let before = pts.weights()[pos];
            let x = pts.point(pos);
            for it in self.runs.iter_mut().flat_map(|r| r.trace.iter_mut()) {
                let a = it.labels[pos];
                if a != NONE {
                    it.moments.add_point(a as usize, before, x, false);
                    it.moments.add_point(a as usize, after, x, true);
                }
            }
            self.totals.add_point(0, before, x, false);
            self.totals.add_point(0, after, x, true);
            pts.set_weight(pos, after);
        }
        // Highest position first: the last point is then never one still
        // to be removed.
        plan.removed.sort_unstable_by(|a, b| b.cmp(a));
        for &pos in &plan.removed {
            let w = pts.weights()[pos];
            let x = pts.point(pos);
            for it in self.runs.iter_mut().flat_map(|r| r.trace.iter_mut()) {
                let a = it.labels[pos];
                if a != NONE {
                    it.moments.add_point(a as usize, w, x, false);
                }
                it.swap_remove(pos);
            }
            self.totals.add_point(0, w, x, false);
            pts.swap_remove(pos);
        }
        for (id, x, w) in &plan.added {
            pts.push(*id, x, *w);
            for it in self.runs.iter_mut().flat_map(|r| r.trace.iter_mut()) {
                it.push_uncounted();
            }
            self.totals.add_point(0, *w, x, true);
        }
    }

    fn update_impl(
        &mut self,
        new_data: &Dataset,
        changes: &Changes,
        slack: f64,
    ) -> Result<UpdateReport, SeedingError> {
        let mut plan = self.plan(new_data, changes)?;
        // Nothing below fails.
        self.apply(&mut plan);
        let changed: Vec<usize> = plan
            .added
            .iter()
            .map(|(id, _, _)| *id)
            .chain(plan.reweighted_ids.keys().copied())
            .filter_map(|id| self.points.position(id))
            .collect();
        let seed_changes = SeedChanges {
            removed: &plan.removed_ids,
            reweighted: &plan.reweighted_ids,
            changed: &changed,
        };
        let tol = self.params.tolerance * self.totals.pooled_mean_variance();
        let mut reports = Vec::with_capacity(self.runs.len());
        for run in &mut self.runs {
            let mut report = RunReport {
                iterations_before: run.trace.len(),
                ..RunReport::default()
            };
            let k = self.params.k;
            let from = match self.initial {
                Some(_) => None,
                None => first_changed_round(&self.points, k, run.race, &run.seeds, &seed_changes),
            };
            if from.is_some() {
                let fresh = seeds::seed(&self.points, k, run.race);
                if fresh.len() != run.seeds.len() {
                    run.trace.clear();
                    report.refit = true;
                }
                run.seeds = fresh;
            }
            report.seeding_changed_from = from;
            let mut lloyd = self.params.lloyd(run.race, tol, self.points.dim());
            lloyd.slack = slack;
            lloyd.accelerate = true;
            let end = lloyd.run(&self.points, &mut run.trace, run.seeds.centers.clone());
            report.iterations_incremental = end.stats.replayed;
            report.iterations_from_previous = end.stats.from_previous;
            report.iterations_full = end.stats.full;
            report.points_recomputed = end.stats.recomputed;
            report.reseed_passes = end.stats.reseed_passes;
            run.finish(end);
            report.iterations = run.trace.len();
            reports.push(report);
        }
        self.pick_best();
        Ok(UpdateReport {
            runs: reports,
            best: self.best,
            points: self.points.len(),
        })
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::*;
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

    /// Only the parameters, the seed and the (rounded) data are stored:
    /// the traces would take 8 bytes per point and iteration. Loading
    /// refits, which gives the same model bit for bit.
    #[derive(Serialize)]
    struct ReprRef<'a> {
        params: &'a ExactKMeans,
        seed: u64,
        initial: Option<&'a [f64]>,
        data: &'a Dataset,
    }

    #[derive(Deserialize)]
    struct Repr {
        params: ExactKMeans,
        seed: u64,
        initial: Option<Vec<f64>>,
        data: Dataset,
    }

    impl Serialize for ExactModel {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let data = self.to_dataset().map_err(serde::ser::Error::custom)?;
            ReprRef {
                params: &self.params,
                seed: self.seed,
                initial: self.initial.as_deref(),
                data: &data,
            }
            .serialize(s)
        }
    }

    impl<'de> Deserialize<'de> for ExactModel {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let r = Repr::deserialize(d)?;
            let res = match r.initial {
                None => r.params.fit(&r.data, r.seed),
                Some(c) => {
                    let dim = r.data.dim();
                    if c.len() % dim != 0 {
                        return Err(D::Error::custom(SeedingError::InvalidState(
                            "initial centroids do not match the dimension",
                        )));
                    }
                    let m = nalgebra::DMatrix::from_vec(dim, c.len() / dim, c);
                    r.params.fit_from(&r.data, m.as_view(), r.seed)
                }
            };
            res.map_err(D::Error::custom)
        }
    }
}
