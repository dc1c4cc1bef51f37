//! Weighted K-means++ followed by Lloyd's iterations: the server side of
//! Algorithm 1 (lines 6-7) and of Algorithm 5 of the paper.

use nalgebra::DMatrixView;

use crate::kmeanspp::{Nearest, run_rounds};
use crate::params::best_of;
use crate::{
    Dataset, ExpRace, Metric, PointId, Sampler, SeedingError, SqEuclidean, ValidKMeansParams,
    restart_seed,
};

#[cfg(feature = "parallel")]
const PAR_MIN_COORDS: usize = 1 << 15;

/// The nearest of the centres (columns of `centers`, flat column-major) to
/// `x` under `metric`, lowest index on ties, with its cost.
fn nearest_in<M: Metric>(metric: &M, x: &[f64], centers: &[f64], dim: usize) -> (u32, f64) {
    let mut best = (u32::MAX, f64::INFINITY);
    for (j, c) in centers.chunks_exact(dim).enumerate() {
        let cost = metric.cost(x, c);
        if cost < best.1 {
            best = (u32::try_from(j).unwrap_or(u32::MAX), cost);
        }
    }
    best
}

/// Assigns every point to its nearest centre: a per-point map, parallel
/// under the `parallel` feature with the same bits either way.
fn assign_all<M: Metric>(
    metric: &M,
    data: &Dataset,
    centers: &[f64],
    seed: &mut [u32],
    cost: &mut [f64],
) {
    let dim = data.dim();
    let body = |(x, (s, c)): (&[f64], (&mut u32, &mut f64))| {
        (*s, *c) = nearest_in(metric, x, centers, dim);
    };
    #[cfg(feature = "parallel")]
    if data.coords().len() >= PAR_MIN_COORDS {
        use rayon::prelude::*;
        data.coords()
            .par_chunks_exact(dim)
            .zip(seed.par_iter_mut().zip(cost.par_iter_mut()))
            .with_min_len(1024)
            .for_each(body);
        return;
    }
    data.coords()
        .chunks_exact(dim)
        .zip(seed.iter_mut().zip(cost.iter_mut()))
        .for_each(body);
}

/// The objective phi: the weighted sum of costs from each point to its
/// nearest centre (the columns of `centers`); 0 for an empty data set and
/// `+inf` with no centres. Costs are computed per point (in parallel under
/// the `parallel` feature) and summed in position order.
///
/// # Errors
///
/// [`SeedingError::LengthMismatch`] if the centres' dimension differs from
/// the data's.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{phi, Dataset, SqEuclidean};
///
/// let data = Dataset::new(DMatrix::from_column_slice(1, 3, &[0.0, 1.0, 4.0]))?;
/// let centers = DMatrix::from_column_slice(1, 2, &[0.0, 3.0]);
/// assert_eq!(phi(&SqEuclidean, &data, centers.as_view())?, 0.0 + 1.0 + 1.0);
/// # Ok::<(), seeding::SeedingError>(())
/// ```
pub fn phi<M: Metric>(
    metric: &M,
    data: &Dataset,
    centers: DMatrixView<'_, f64>,
) -> Result<f64, SeedingError> {
    if centers.nrows() != data.dim() {
        return Err(SeedingError::LengthMismatch {
            what: "centre dimension",
            expected: data.dim(),
            found: centers.nrows(),
        });
    }
    let flat: Vec<f64> = centers.iter().copied().collect();
    let n = data.len();
    let (mut seed, mut cost) = (vec![0u32; n], vec![0.0; n]);
    assign_all(metric, data, &flat, &mut seed, &mut cost);
    Ok(cost
        .iter()
        .zip(data.weights())
        .map(|(&c, &w)| c * w as f64)
        .sum())
}

/// Weighted K-means: weighted K-means++ seeding, then Lloyd's iterations
/// with weighted means. A clusters that loses all its points is re-seeded
/// by D^2 sampling (with probability proportional to `weight * cost` to the
/// current centres). This is what the server runs in Algorithm 1 (line 7)
/// and Algorithm 5 (line 5) of the paper.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, ExpRace, KMeans, KMeansParams, PointId};
///
/// // Two weighted points per blob.
/// let m = DMatrix::from_column_slice(1, 4, &[0.0, 1.0, 10.0, 11.0]);
/// let ids = (0..4).map(PointId).collect();
/// let data = Dataset::with_weights(m, ids, vec![3, 1, 1, 1])?;
/// let model = KMeans::new(KMeansParams::new(2).validate()?).fit(&data, &mut ExpRace::new(3))?;
/// let mut c: Vec<f64> = model.centroids().iter().copied().collect();
/// c.sort_by(f64::total_cmp);
/// assert_eq!(c, vec![0.25, 10.5]);
/// assert!(model.converged());
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KMeans(ValidKMeansParams);

impl KMeans {
    /// K-means with these parameters.
    pub fn new(params: ValidKMeansParams) -> Self {
        Self(params)
    }

    /// The number of clusters asked for.
    pub fn k(&self) -> usize {
        self.0.k()
    }

    /// The parameters.
    pub fn params(&self) -> &ValidKMeansParams {
        &self.0
    }

    /// The best of the parameters' `restarts` runs: run `r` samples from
    /// `ExpRace::new(seed_of(r))`, and the model of least objective is
    /// kept (the first on ties). The one best-of-R loop of the workspace:
    /// pass [`crate::restart_seed`] (as [`Self::fit_seeded`] does) or a
    /// derivation of your own that recorded results depend on.
    ///
    /// # Errors
    ///
    /// [`SeedingError::EmptyDataset`].
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, KMeans, KMeansParams, derive_seed};
    ///
    /// let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 1.0, 10.0, 11.0]))?;
    /// let km = KMeans::new(KMeansParams::new(2).restarts(5).validate()?);
    /// let model = km.fit_best(&data, |r| derive_seed(7, 0xC0FFEE, r as u64))?;
    /// assert_eq!(model.phi(), 1.0);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn fit_best(
        &self,
        data: &Dataset,
        mut seed_of: impl FnMut(usize) -> u64,
    ) -> Result<KMeansModel, SeedingError> {
        best_of(
            self.0.restarts(),
            |r| self.fit(data, &mut ExpRace::new(seed_of(r))),
            KMeansModel::phi,
        )?
        // `restarts >= 1` (validated), so a run took place.
        .ok_or(SeedingError::InvalidState("no K-means run"))
    }

    /// [`Self::fit_best`] with the default schedule: run `r` seeded by
    /// [`crate::restart_seed`]`(seed, r)` (run 0 by `seed` itself), the
    /// schedule [`crate::ExactKMeans`] uses too.
    ///
    /// # Errors
    ///
    /// [`SeedingError::EmptyDataset`].
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, ExpRace, KMeans, KMeansParams};
    ///
    /// let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 1.0, 10.0, 11.0]))?;
    /// let one = KMeans::new(KMeansParams::new(2).validate()?);
    /// // One restart is one run with the seed itself.
    /// assert_eq!(one.fit_seeded(&data, 3)?, one.fit(&data, &mut ExpRace::new(3))?);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn fit_seeded(&self, data: &Dataset, seed: u64) -> Result<KMeansModel, SeedingError> {
        self.fit_best(data, |r| restart_seed(seed, r))
    }

    /// Clusters `data` in one run (whatever the parameters' `restarts`:
    /// one sampler makes one run; [`Self::fit_best`] and
    /// [`Self::fit_seeded`] honour `restarts`). Seeding uses rounds `0..k`
    /// of `sampler`; re-seeding an empty cluster uses rounds `k, k + 1,
    /// ...`. Fewer than `k` centroids come back only when the data has
    /// fewer than `k` distinct points.
    ///
    /// # Errors
    ///
    /// [`SeedingError::EmptyDataset`].
    pub fn fit<S: Sampler + ?Sized>(
        &self,
        data: &Dataset,
        sampler: &mut S,
    ) -> Result<KMeansModel, SeedingError> {
        if data.is_empty() {
            return Err(SeedingError::EmptyDataset);
        }
        let dim = data.dim();
        let mut near = Nearest::new(data);
        let mut seed_ids: Vec<PointId> = Vec::with_capacity(self.0.k());
        let mut centers = Vec::with_capacity(self.0.k() * dim);
        run_rounds(
            &SqEuclidean,
            data,
            sampler,
            &mut near,
            &mut seed_ids,
            &mut centers,
            self.0.k(),
        );
        Ok(self.lloyd(data, seed_ids, centers, sampler))
    }

    /// Runs Lloyd's iterations from the given centres (the columns of
    /// `initial`) instead of K-means++ seeds, for instance to warm-start a
    /// refit from the previous centroids. Empty clusters are re-seeded with
    /// rounds `k, k + 1, ...` of `sampler`.
    ///
    /// # Errors
    ///
    /// [`SeedingError::EmptyDataset`], [`SeedingError::ZeroClusters`]
    /// without centres, [`SeedingError::LengthMismatch`] for centres of the
    /// wrong dimension, [`SeedingError::InvalidCoordinate`] for a centre
    /// that is not finite.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, ExpRace, KMeans, KMeansParams};
    ///
    /// let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 1.0, 10.0, 11.0]))?;
    /// // The second centre starts far from everything: its cluster is
    /// // empty and gets re-seeded.
    /// let init = DMatrix::from_column_slice(1, 2, &[5.0, 100.0]);
    /// let model = KMeans::new(KMeansParams::new(2).validate()?)
    ///     .fit_from(&data, init.as_view(), &mut ExpRace::new(0))?;
    /// assert_eq!(model.sizes(), &[2, 2]);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn fit_from<S: Sampler + ?Sized>(
        &self,
        data: &Dataset,
        initial: DMatrixView<'_, f64>,
        sampler: &mut S,
    ) -> Result<KMeansModel, SeedingError> {
        if data.is_empty() {
            return Err(SeedingError::EmptyDataset);
        }
        if initial.ncols() == 0 {
            return Err(SeedingError::ZeroClusters);
        }
        if initial.nrows() != data.dim() {
            return Err(SeedingError::LengthMismatch {
                what: "centre dimension",
                expected: data.dim(),
                found: initial.nrows(),
            });
        }
        let centers: Vec<f64> = initial.iter().copied().collect();
        if let Some(i) = centers.iter().position(|x| !x.is_finite()) {
            return Err(SeedingError::InvalidCoordinate {
                point: i / data.dim(),
                axis: i % data.dim(),
                value: centers[i],
            });
        }
        Ok(self.lloyd(data, Vec::new(), centers, sampler))
    }

    fn lloyd<S: Sampler + ?Sized>(
        &self,
        data: &Dataset,
        seed_ids: Vec<PointId>,
        mut centers: Vec<f64>,
        sampler: &mut S,
    ) -> KMeansModel {
        let (dim, n) = (data.dim(), data.len());
        let m = centers.len() / dim;
        let tol = self.0.tolerance() * mean_variance(data);
        let mut costs = vec![0.0; n];
        let mut assign = vec![0u32; n];
        let mut history = Vec::new();
        let mut iterations = 0;
        let mut converged = false;
        let mut round = self.0.k();
        let mut sums = vec![0.0; m * dim];
        let mut mass = vec![0u64; m];
        let mut w = vec![0.0; n];
        while iterations < self.0.max_iterations() {
            assign_all(&SqEuclidean, data, &centers, &mut assign, &mut costs);
            history.push(weighted_sum(&costs, data.weights()));
            iterations += 1;
            // Sums in position order, so that the bits never depend on
            // threads.
            sums.fill(0.0);
            mass.fill(0);
            for (p, x) in data.coords().chunks_exact(dim).enumerate() {
                let j = assign[p] as usize;
                let wt = data.weight(p);
                mass[j] += wt;
                for (s, &xi) in sums[j * dim..(j + 1) * dim].iter_mut().zip(x) {
                    *s += wt as f64 * xi;
                }
            }
            let mut shift = 0.0;
            let mut reseeded = false;
            for j in 0..m {
                let c = &mut centers[j * dim..(j + 1) * dim];
                if mass[j] == 0 {
                    // Empty cluster: D^2 re-seeding against the current
                    // centres (an empty centre serves no point, so moving
                    // it cannot raise the objective).
                    for ((wp, &cp), &wt) in w.iter_mut().zip(&costs).zip(data.weights()) {
                        *wp = wt as f64 * cp;
                    }
                    if let Some(pos) = sampler.choose(round, data.ids(), &w)
                        && w.get(pos).is_some_and(|&x| x > 0.0)
                    {
                        let x = data.point(pos);
                        shift += SqEuclidean.cost(c, x);
                        c.copy_from_slice(x);
                        // The chosen point now sits on a centre.
                        costs[pos] = 0.0;
                        reseeded = true;
                    }
                    round += 1;
                    continue;
                }
                let inv = 1.0 / mass[j] as f64;
                let mut moved = 0.0;
                for (ci, &s) in c.iter_mut().zip(&sums[j * dim..(j + 1) * dim]) {
                    let new = s * inv;
                    let t = new - *ci;
                    moved += t * t;
                    *ci = new;
                }
                shift += moved;
            }
            if shift <= tol && !reseeded {
                converged = true;
                break;
            }
        }
        // Final assignment, so that the labels match the centroids.
        assign_all(&SqEuclidean, data, &centers, &mut assign, &mut costs);
        let phi = weighted_sum(&costs, data.weights());
        let mut sizes = vec![0u64; m];
        for (&j, &wt) in assign.iter().zip(data.weights()) {
            sizes[j as usize] += wt;
        }
        KMeansModel {
            dim,
            centroids: centers,
            seeds: seed_ids,
            assignment: assign,
            sizes,
            phi,
            phi_history: history,
            iterations,
            converged,
        }
    }
}

fn weighted_sum(costs: &[f64], weights: &[u64]) -> f64 {
    costs.iter().zip(weights).map(|(&c, &w)| c * w as f64).sum()
}

/// The mean over axes of the weighted variance of the data (two passes, in
/// position order).
fn mean_variance(data: &Dataset) -> f64 {
    let dim = data.dim();
    let total = data.total_weight() as f64;
    let mut mean = vec![0.0; dim];
    for (x, &w) in data.coords().chunks_exact(dim).zip(data.weights()) {
        for (m, &xi) in mean.iter_mut().zip(x) {
            *m += w as f64 * xi;
        }
    }
    mean.iter_mut().for_each(|m| *m /= total);
    let mut var = 0.0;
    for (x, &w) in data.coords().chunks_exact(dim).zip(data.weights()) {
        var += w as f64 * SqEuclidean.cost(x, &mean);
    }
    var / total / dim as f64
}

/// The result of [`KMeans::fit`].
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "serde_impl::ModelRepr")
)]
pub struct KMeansModel {
    dim: usize,
    centroids: Vec<f64>,
    seeds: Vec<PointId>,
    assignment: Vec<u32>,
    sizes: Vec<u64>,
    phi: f64,
    phi_history: Vec<f64>,
    iterations: usize,
    converged: bool,
}

impl KMeansModel {
    /// The centroids as the columns of a d x m matrix.
    pub fn centroids(&self) -> DMatrixView<'_, f64> {
        DMatrixView::from_slice(&self.centroids, self.dim, self.sizes.len())
    }

    /// Centroid `j`.
    ///
    /// # Panics
    ///
    /// If `j` is not below the number of centroids.
    pub fn centroid(&self, j: usize) -> &[f64] {
        &self.centroids[j * self.dim..(j + 1) * self.dim]
    }

    /// The ids of the K-means++ seeds Lloyd's iterations started from
    /// (empty after [`KMeans::fit_from`]).
    pub fn seeds(&self) -> &[PointId] {
        &self.seeds
    }

    /// The centroid of every point, by position in the data set fitted.
    pub fn assignment(&self) -> &[u32] {
        &self.assignment
    }

    /// The cluster sizes (sums of weights).
    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// The objective phi at the returned centroids.
    pub fn phi(&self) -> f64 {
        self.phi
    }

    /// The objective after each assignment step, first to last.
    pub fn phi_history(&self) -> &[f64] {
        &self.phi_history
    }

    /// The number of Lloyd iterations run.
    pub fn iterations(&self) -> usize {
        self.iterations
    }

    /// Whether the tolerance was met before the iteration cap.
    pub fn converged(&self) -> bool {
        self.converged
    }

    /// The index of the centroid nearest to `x` (lowest index on ties), or
    /// `None` without centroids or when `x` has the wrong length.
    pub fn predict(&self, x: &[f64]) -> Option<usize> {
        if x.len() != self.dim || self.sizes.is_empty() {
            return None;
        }
        Some(nearest_in(&SqEuclidean, x, &self.centroids, self.dim).0 as usize)
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    use super::*;

    /// The same fields, checked for consistency before they become a model.
    #[derive(serde::Deserialize)]
    pub(super) struct ModelRepr {
        dim: usize,
        centroids: Vec<f64>,
        seeds: Vec<PointId>,
        assignment: Vec<u32>,
        sizes: Vec<u64>,
        phi: f64,
        phi_history: Vec<f64>,
        iterations: usize,
        converged: bool,
    }

    impl TryFrom<ModelRepr> for KMeansModel {
        type Error = SeedingError;

        fn try_from(r: ModelRepr) -> Result<Self, SeedingError> {
            let m = r.sizes.len();
            if r.dim == 0 {
                return Err(SeedingError::ZeroDimension);
            }
            if r.dim.checked_mul(m) != Some(r.centroids.len()) {
                return Err(SeedingError::InvalidState("centroids do not match sizes"));
            }
            if !(r.seeds.is_empty() || r.seeds.len() == m)
                || r.assignment.iter().any(|&j| j as usize >= m)
            {
                return Err(SeedingError::InvalidState("assignment out of range"));
            }
            Ok(Self {
                dim: r.dim,
                centroids: r.centroids,
                seeds: r.seeds,
                assignment: r.assignment,
                sizes: r.sizes,
                phi: r.phi,
                phi_history: r.phi_history,
                iterations: r.iterations,
                converged: r.converged,
            })
        }
    }
}
