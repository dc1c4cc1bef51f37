//! The fitted state of [`ExactKMeans`]: the data, the runs and their
//! traces, and what they answer (centroids, labels, objective).

use nalgebra::DMatrixView;

use super::config::ExactKMeans;
use super::fixed::Moments;
use super::points::Points;
use super::seeds::SeedList;
use super::trace::{Iter, RunEnd};
use crate::params::least;
use crate::{Dataset, ExpRace, Metric, PointId, SeedingError, SqEuclidean};

/// One run: its race, seeds, trace and results.
#[derive(Clone, Debug)]
pub(super) struct Run {
    pub(super) race: ExpRace,
    pub(super) seeds: SeedList,
    pub(super) trace: Vec<Iter>,
    /// `C_T`.
    pub(super) centroids: Vec<f64>,
    pub(super) converged: bool,
    pub(super) sizes: Vec<u64>,
    pub(super) phi: f64,
    /// The moments the objective was computed from, and its terms: an
    /// update recomputes only the terms of clusters that changed (each
    /// costs big-integer arithmetic).
    phi_cache: Option<(Moments, Vec<f64>)>,
}

impl Run {
    /// A run seeded with `seeds`, before its first iteration.
    pub(super) fn new(race: ExpRace, seeds: SeedList) -> Self {
        Self {
            race,
            seeds,
            trace: Vec::new(),
            centroids: Vec::new(),
            converged: false,
            sizes: Vec::new(),
            phi: 0.0,
            phi_cache: None,
        }
    }

    /// Takes the end of a Lloyd run: centroids, sizes and objective (only
    /// the terms of changed clusters recomputed).
    pub(super) fn finish(&mut self, end: RunEnd) {
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
/// use seeding::{Dataset, ExactKMeans, KMeansParams, PointId};
///
/// // Weighted points, as a server holds them.
/// let m = DMatrix::from_fn(2, 40, |r, c| ((c * 5 + r * 11) % 17) as f64 / 17.0);
/// let ids: Vec<PointId> = (0..40).map(PointId).collect();
/// let data = Dataset::with_weights(m.clone(), ids.clone(), (0..40).map(|i| 1 + i % 4).collect())?;
/// let km = ExactKMeans::new(KMeansParams::new(3).validate()?);
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
    pub(super) params: ExactKMeans,
    pub(super) seed: u64,
    /// The given initial centroids ([`ExactKMeans::fit_from`]), if any.
    pub(super) initial: Option<Vec<f64>>,
    pub(super) points: Points,
    /// The moments of all points (one cluster), for the tolerance.
    pub(super) totals: Moments,
    pub(super) runs: Vec<Run>,
    /// The run kept: the least objective, the first on ties.
    pub(super) best: usize,
}

impl ExactModel {
    /// Keeps the run of least objective (every run is kept: an update
    /// replays each, and the best may change).
    pub(super) fn pick_best(&mut self) {
        self.best = least(self.runs.iter().map(|r| r.phi)).unwrap_or(0);
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
}
