//! [`KMeansPlusPlus`], the seeding's parameters and cost, and its `fit`.

use super::fitted::Seeding;
use super::state::State;
use crate::{Dataset, Metric, Sampler, SqEuclidean, ValidSeedingParams};

/// K-means++ seeding (Appendix B of the paper; weighted as in Appendix I):
/// the first seed is drawn with probability proportional to the weights,
/// each next one with probability proportional to `weight * cost` to the
/// nearest seed so far, where the cost is the [`Metric`]'s (squared
/// Euclidean distance for K-means++).
///
/// This is the client side of Algorithm 1 of the paper (line 2: seeding
/// only, recording cluster sizes).
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, ExpRace, KMeansPlusPlus, PointId, SeedingParams};
///
/// let m = DMatrix::from_column_slice(1, 6, &[0.0, 0.1, 0.2, 10.0, 10.1, 10.2]);
/// let seeding = KMeansPlusPlus::new(SeedingParams::new(2).validate()?).fit(Dataset::new(m)?, ExpRace::new(7));
/// assert_eq!(seeding.num_seeds(), 2);
/// assert_eq!(seeding.sizes().iter().sum::<u64>(), 6);
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct KMeansPlusPlus<M = SqEuclidean> {
    params: ValidSeedingParams,
    metric: M,
}

impl KMeansPlusPlus<SqEuclidean> {
    /// K-means++ with the squared Euclidean cost.
    pub fn new(params: ValidSeedingParams) -> Self {
        Self::with_metric(params, SqEuclidean)
    }
}

impl<M: Metric> KMeansPlusPlus<M> {
    /// D^ell seeding with the given cost.
    ///
    /// # Example
    ///
    /// ```
    /// use seeding::{KMeansPlusPlus, L1, SeedingParams};
    ///
    /// let kmedians = KMeansPlusPlus::with_metric(SeedingParams::new(4).validate()?, L1);
    /// assert_eq!(kmedians.k(), 4);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn with_metric(params: ValidSeedingParams, metric: M) -> Self {
        Self { params, metric }
    }

    /// The number of seeds asked for.
    pub fn k(&self) -> usize {
        self.params.k()
    }

    /// The parameters.
    pub fn params(&self) -> &ValidSeedingParams {
        &self.params
    }

    /// The cost.
    pub fn metric(&self) -> &M {
        &self.metric
    }

    /// Seeds `data`, drawing every random choice from `sampler` (which the
    /// returned state keeps, for unlearning). Returns fewer than `k` seeds
    /// only when fewer than `k` points are at positive cost from the seeds
    /// (the data has fewer than `k` distinct points). O(n k d).
    pub fn fit<S: Sampler>(&self, data: Dataset, mut sampler: S) -> Seeding<M, S> {
        let state = State::fit(self.metric.clone(), self.k(), data, &mut sampler);
        Seeding { state, sampler }
    }
}
