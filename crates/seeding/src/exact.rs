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
mod config;
mod fixed;
mod min_size;
mod model;
mod points;
mod seeds;
#[cfg(feature = "serde")]
mod serialization;
mod trace;
mod update;

use nalgebra::DMatrixView;

pub use self::config::ExactKMeans;
pub use self::model::ExactModel;
pub use self::update::{Changes, RunReport, UpdateReport};

use self::bounds::Bounds;
use self::fixed::{Moments, from_fixed, to_fixed};
use self::model::Run;
use self::points::Points;
use self::seeds::SeedList;
use self::trace::Lloyd;
use crate::params::least;
use crate::{Dataset, ExpRace, PointId, SeedingError, restart_seed};

impl ExactKMeans {
    fn lloyd(&self, race: ExpRace, tol: f64, dim: usize) -> Lloyd {
        Lloyd {
            k: self.k(),
            max_iterations: self.params.max_iterations(),
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
    /// [`SeedingError::EmptyDataset`], and
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
    /// use seeding::{Dataset, ExactKMeans, KMeansParams};
    ///
    /// let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 1.0, 10.0, 11.0]))?;
    /// // The second centroid starts far from everything: its cluster is
    /// // empty and gets re-seeded.
    /// let init = DMatrix::from_column_slice(1, 2, &[5.0, 100.0]);
    /// let model = ExactKMeans::new(KMeansParams::new(2).validate()?).fit_from(&data, init.as_view(), 3)?;
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
        if initial.ncols() > self.k() {
            return Err(SeedingError::LengthMismatch {
                what: "initial centroids (at most k)",
                expected: self.k(),
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
        let tol = self.params.tolerance() * totals.pooled_mean_variance();
        // Every run is kept (an update replays each), so this is a map,
        // not `params::best_of`; the choice among them is `least`'s.
        let runs: Vec<Run> = (0..self.params.restarts())
            .map(|i| {
                let race = ExpRace::new(restart_seed(seed, i));
                let seeds = match &initial {
                    Some(c) => SeedList {
                        ids: Vec::new(),
                        centers: c.clone(),
                    },
                    None => seeds::seed(&points, self.k(), race),
                };
                let mut run = Run::new(race, seeds);
                let end = self.lloyd(race, tol, points.dim()).run(
                    &points,
                    &mut run.trace,
                    run.seeds.centers.clone(),
                );
                run.finish(end);
                run
            })
            .collect();
        let best = least(runs.iter().map(|r| r.phi)).unwrap_or(0);
        Ok(ExactModel {
            params: self.clone(),
            seed,
            initial,
            points,
            totals,
            runs,
            best,
        })
    }
}
