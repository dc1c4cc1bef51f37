//! [`Seeding`], the result of a K-means++ seeding: its public face
//! (unlearning, restoring, the seeds, sizes and assignments).

use nalgebra::DMatrixView;

use super::insert::InsertReport;
use super::report::UnlearnReport;
use super::state::State;
use crate::min_size::{Centres, MinSizeClusters, collect, dissolve, nearest_alive};
use crate::{Dataset, ExpRace, Metric, PointId, Sampler, SeedingError, SqEuclidean};

/// The state a seeding leaves: its data, its seeds in the order chosen (ids
/// and coordinates), the nearest seed of every point and the cluster sizes
/// (sums of weights), plus the sampler, kept for unlearning.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, ExpRace, KMeansPlusPlus, PointId, SeedingParams, UnlearnOutcome};
///
/// let m = DMatrix::from_fn(2, 50, |r, c| ((c * 7 + r * 3) % 11) as f64);
/// let data = Dataset::new(m)?;
/// let kpp = KMeansPlusPlus::new(SeedingParams::new(3).validate()?);
/// let mut s = kpp.fit(data.clone(), ExpRace::new(1));
///
/// // Remove a point that is not a seed: the seeds stay.
/// let victim = (0..50).map(PointId).find(|id| !s.seed_ids().contains(id)).unwrap();
/// let report = s.unlearn(&[victim])?;
/// assert_eq!(report.outcome, UnlearnOutcome::SeedsKept);
///
/// // Remove the second seed: seeding resumes from it.
/// let second = s.seed_ids()[1];
/// let report = s.unlearn(&[second])?;
/// assert_eq!(report.outcome, UnlearnOutcome::Reseeded { from: 1 });
///
/// // Either way the result is what seeding the remaining points gives.
/// let retrained = kpp.fit(data.without(&[victim, second])?, ExpRace::new(1));
/// assert_eq!(s.seed_ids(), retrained.seed_ids());
/// assert_eq!(s.sizes(), retrained.sizes());
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Seeding<M = SqEuclidean, S = ExpRace> {
    pub(super) state: State<M>,
    pub(super) sampler: S,
}

impl<M: Metric, S: Sampler> Seeding<M, S> {
    /// Rebuilds a seeding from its data, its seeds in the order chosen and
    /// its sampler (for instance after loading them from storage). O(n k d).
    ///
    /// # Errors
    ///
    /// [`SeedingError::ZeroClusters`], or [`SeedingError::InvalidState`]
    /// when the seeds are not a possible outcome of seeding `data`.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, ExpRace, KMeansPlusPlus, Seeding, SeedingParams, SqEuclidean};
    ///
    /// let data = Dataset::new(DMatrix::from_fn(1, 9, |_, c| c as f64))?;
    /// let s = KMeansPlusPlus::new(SeedingParams::new(3).validate()?).fit(data.clone(), ExpRace::new(5));
    /// let r = Seeding::restore(SqEuclidean, 3, data, s.seed_ids().to_vec(), ExpRace::new(5))?;
    /// assert_eq!(r.sizes(), s.sizes());
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn restore(
        metric: M,
        k: usize,
        data: Dataset,
        seeds: Vec<PointId>,
        sampler: S,
    ) -> Result<Self, SeedingError> {
        Ok(Self {
            state: State::restore(metric, k, data, seeds)?,
            sampler,
        })
    }

    /// Removes the points `ids` and updates the seeding by Algorithm 3 of
    /// the paper, drawing any new seeds from the kept sampler.
    ///
    /// If no seed is among `ids`, the seeds stay and only the sizes change,
    /// in O(|R| + k) time (no pass over the data). Otherwise, with `i` the
    /// first removed seed in the order chosen, seeds `0..i` stay and seeding
    /// resumes from round `i` on the remaining points, O(n k d).
    ///
    /// The result has the distribution of seeding the remaining points from
    /// scratch (Lemma 5.1). With [`ExpRace`] it is, bit for bit, the seeding
    /// of the remaining points with the same seed.
    ///
    /// # Errors
    ///
    /// [`SeedingError::UnknownId`] or [`SeedingError::RepeatedId`]; nothing
    /// changes then.
    pub fn unlearn(&mut self, ids: &[PointId]) -> Result<UnlearnReport, SeedingError> {
        self.state.unlearn(ids, &mut self.sampler)
    }

    /// Adds the points of `added` by the insertion counterpart of
    /// Algorithm 3, drawing any new seeds from the kept sampler.
    ///
    /// Round by round, the newcomers challenge the round's seed
    /// ([`Sampler::challenge`]). If none wins a round, the seeds stay and
    /// the newcomers join their nearest seeds' clusters, in
    /// O(|added| k d) time (no pass over the data). Otherwise, with `i` the
    /// first round a newcomer wins, seeds `0..i` stay, the newcomer is seed
    /// `i`, and seeding resumes from round `i + 1` on all the points,
    /// O(n k d). An old seeding that stopped early (fewer distinct points
    /// than `k`) goes on when a newcomer can.
    ///
    /// The result has the distribution of seeding all the points from
    /// scratch (the argument is in the source of `kmeanspp/insert.rs`).
    /// With [`ExpRace`] it is, bit for bit, the seeding of all the points
    /// with the same seed: insertions and removals in any order give what
    /// seeding the points present gives.
    ///
    /// # Errors
    ///
    /// [`SeedingError::LengthMismatch`] when the dimensions differ,
    /// [`SeedingError::DuplicateId`] for an id already present, and
    /// [`SeedingError::WeightOverflow`]; nothing changes then.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, ExpRace, KMeansPlusPlus, PointId, SeedingParams};
    ///
    /// let all = Dataset::new(DMatrix::from_fn(2, 40, |r, c| ((c * 7 + r * 3) % 11) as f64))?;
    /// let arriving: Vec<PointId> = (30..40).map(PointId).collect();
    /// let kpp = KMeansPlusPlus::new(SeedingParams::new(4).validate()?);
    /// let mut s = kpp.fit(all.without(&arriving)?, ExpRace::new(3));
    ///
    /// // Points 30..40 arrive: the seeding is that of all 40 points.
    /// let later = all.only(&arriving)?;
    /// s.insert(&later)?;
    /// let retrained = kpp.fit(all, ExpRace::new(3));
    /// assert_eq!(s.seed_ids(), retrained.seed_ids());
    /// assert_eq!(s.sizes(), retrained.sizes());
    /// assert!(s.insert(&later).is_err()); // their ids are taken now
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn insert(&mut self, added: &Dataset) -> Result<InsertReport, SeedingError> {
        self.state.insert(added, &mut self.sampler)
    }
}

impl<M: Metric, S> Seeding<M, S> {
    /// As [`Self::unlearn`], drawing new seeds from `sampler` instead of the
    /// kept one.
    ///
    /// # Errors
    ///
    /// As [`Self::unlearn`].
    pub fn unlearn_with<T: Sampler + ?Sized>(
        &mut self,
        ids: &[PointId],
        sampler: &mut T,
    ) -> Result<UnlearnReport, SeedingError> {
        self.state.unlearn(ids, sampler)
    }

    /// As [`Self::insert`], drawing from `sampler` instead of the kept one.
    ///
    /// # Errors
    ///
    /// As [`Self::insert`].
    pub fn insert_with<T: Sampler + ?Sized>(
        &mut self,
        added: &Dataset,
        sampler: &mut T,
    ) -> Result<InsertReport, SeedingError> {
        self.state.insert(added, sampler)
    }

    /// Swaps the kept sampler for another, giving the old one back.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, Enumerator, ExpRace, KMeansPlusPlus, SeedingParams};
    ///
    /// let data = Dataset::new(DMatrix::from_fn(1, 5, |_, c| c as f64))?;
    /// let mut en = Enumerator::new();
    /// let s = KMeansPlusPlus::new(SeedingParams::new(2).validate()?).fit(data, &mut en);
    /// let (s, _) = s.replace_sampler(ExpRace::new(3)); // no longer borrows `en`
    /// assert_eq!(en.trail().len(), 2);
    /// assert_eq!(s.num_seeds(), 2);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn replace_sampler<T>(self, sampler: T) -> (Seeding<M, T>, S) {
        (
            Seeding {
                state: self.state,
                sampler,
            },
            self.sampler,
        )
    }
    /// The number of seeds asked for.
    pub fn k(&self) -> usize {
        self.state.k
    }

    /// The number of seeds held (`k`, or fewer when the data has fewer
    /// distinct points).
    pub fn num_seeds(&self) -> usize {
        self.state.seed_ids.len()
    }

    /// The seeds' ids, in the order chosen.
    pub fn seed_ids(&self) -> &[PointId] {
        &self.state.seed_ids
    }

    /// The seeds as the columns of a d x m matrix, in the order chosen.
    pub fn centers(&self) -> DMatrixView<'_, f64> {
        DMatrixView::from_slice(&self.state.centers, self.state.data.dim(), self.num_seeds())
    }

    /// The coordinates of seed `j`.
    ///
    /// # Panics
    ///
    /// If `j >= self.num_seeds()`.
    pub fn center(&self, j: usize) -> &[f64] {
        let d = self.state.data.dim();
        &self.state.centers[j * d..(j + 1) * d]
    }

    /// The cluster sizes (sums of weights), by seed.
    pub fn sizes(&self) -> &[u64] {
        &self.state.sizes
    }

    /// The seed nearest to point `id` (lowest index on ties), or `None` if
    /// the point is not in the data set.
    pub fn assignment(&self, id: PointId) -> Option<usize> {
        let p = self.state.data.position(id)?;
        Some(self.state.near.seed[p] as usize)
    }

    /// The nearest seed of every point, by position in [`Self::data`].
    pub fn assignments(&self) -> &[u32] {
        &self.state.near.seed
    }

    /// The cost from every point to its nearest seed, by position.
    pub fn costs(&self) -> &[f64] {
        &self.state.near.cost
    }

    /// The seeding objective: the weighted sum of costs to the nearest
    /// seed (summed in position order).
    pub fn phi(&self) -> f64 {
        self.state
            .near
            .cost
            .iter()
            .zip(self.state.data.weights())
            .map(|(&c, &w)| c * w as f64)
            .sum()
    }

    /// The (remaining) data.
    pub fn data(&self) -> &Dataset {
        &self.state.data
    }

    /// The cost.
    pub fn metric(&self) -> &M {
        &self.state.metric
    }

    /// The kept sampler.
    pub fn sampler(&self) -> &S {
        &self.sampler
    }

    /// The kept sampler, mutably.
    pub fn sampler_mut(&mut self) -> &mut S {
        &mut self.sampler
    }

    /// Gives back the data and the sampler.
    pub fn into_parts(self) -> (Dataset, S) {
        (self.state.data, self.sampler)
    }
}

/// The seeds' clusters while small ones dissolve: the seeds stay where
/// they are (they are data points), the points move.
struct Seeds<'a, M> {
    metric: &'a M,
    data: &'a Dataset,
    centres: &'a [f64],
}

impl<M: Metric> Centres for Seeds<'_, M> {
    fn nearest(&self, pos: usize, alive: &[bool]) -> usize {
        nearest_alive(self.data.point(pos), self.centres, alive, |a, b| {
            self.metric.cost(a, b)
        })
    }

    fn moved(&mut self, _: usize, _: usize, _: usize) {}

    fn settle(&mut self, _: &[usize]) {}
}

impl<M: Metric, S: Sampler> Seeding<M, S> {
    /// The seeds' clusters once every cluster weighing less than `min` is
    /// dissolved, smallest first (lowest index on ties): its points move to
    /// their nearest remaining seed under the metric. The remaining seeds
    /// stay the centres (a seed is a data point, whatever its cluster's
    /// weight). A function of the seeding alone, so unlearning and
    /// reseeding give the same clusters.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, ExpRace, KMeansPlusPlus, SeedingParams};
    ///
    /// let data = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 7 + r * 3) % 11) as f64))?;
    /// let s = KMeansPlusPlus::new(SeedingParams::new(12).validate()?).fit(data, ExpRace::new(2));
    /// let c = s.min_size(3);
    /// assert!(c.sizes().iter().all(|&w| w >= 3));
    /// assert_eq!(c.sizes().iter().sum::<u64>(), 30);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn min_size(&self, min: u64) -> MinSizeClusters {
        let d = self.state.data.dim();
        let mut labels = self.assignments().to_vec();
        let mut sizes = self.sizes().to_vec();
        let mut seeds = Seeds {
            metric: &self.state.metric,
            data: &self.state.data,
            centres: &self.state.centers,
        };
        let alive = dissolve(
            &mut seeds,
            &mut labels,
            self.state.data.weights(),
            &mut sizes,
            min,
        );
        collect(
            d,
            &alive,
            &sizes,
            &labels,
            self.state.data.ids(),
            min,
            |j| self.center(j),
        )
    }
}
