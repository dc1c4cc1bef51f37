//! K-means++ seeding (Appendix B of the paper) that records the order of
//! its seeds, and its exact unlearning (Algorithm 3).

use std::collections::HashSet;

use nalgebra::DMatrixView;

use crate::{
    Dataset, ExpRace, Metric, PointId, Sampler, SeedingError, SqEuclidean, ValidSeedingParams,
};

/// Below this many coordinates a per-point pass is not worth a thread hop.
#[cfg(feature = "parallel")]
const PAR_MIN_COORDS: usize = 1 << 15;

/// One point as a per-point pass sees it: coordinates and weight, then its
/// cost, nearest seed and sampling weight.
type PointSlot<'a> = (
    (&'a [f64], &'a u64),
    ((&'a mut f64, &'a mut u32), &'a mut f64),
);

/// Per-point state of a seeding: the cost to the nearest seed so far, that
/// seed's index, and the sampling weight `weight * cost` (before the first
/// seed: `weight`, and cost `+inf`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Nearest {
    pub(crate) cost: Vec<f64>,
    pub(crate) seed: Vec<u32>,
    pub(crate) w: Vec<f64>,
}

impl Nearest {
    pub(crate) fn new(data: &Dataset) -> Self {
        let mut s = Self::default();
        s.reset(data);
        s
    }

    pub(crate) fn reset(&mut self, data: &Dataset) {
        let n = data.len();
        self.cost.clear();
        self.cost.resize(n, f64::INFINITY);
        self.seed.clear();
        self.seed.resize(n, u32::MAX);
        self.w.clear();
        self.w.extend(data.weights().iter().map(|&x| x as f64));
    }

    /// Takes seed number `j` at `center` into account: one pass over the
    /// points, each independent of the others (so the parallel and the
    /// serial pass give the same bits). A strict `<` keeps the lowest seed
    /// index on ties.
    pub(crate) fn add_seed<M: Metric>(
        &mut self,
        metric: &M,
        data: &Dataset,
        center: &[f64],
        j: u32,
    ) {
        let dim = data.dim();
        let body = |((x, &wt), ((c, s), w)): PointSlot<'_>| {
            let cost = metric.cost(x, center);
            if cost < *c {
                *c = cost;
                *s = j;
                *w = wt as f64 * cost;
            }
        };
        #[cfg(feature = "parallel")]
        if data.coords().len() >= PAR_MIN_COORDS {
            use rayon::prelude::*;
            data.coords()
                .par_chunks_exact(dim)
                .zip(data.weights().par_iter())
                .zip(
                    self.cost
                        .par_iter_mut()
                        .zip(self.seed.par_iter_mut())
                        .zip(self.w.par_iter_mut()),
                )
                .with_min_len(2048)
                .for_each(body);
            return;
        }
        data.coords()
            .chunks_exact(dim)
            .zip(data.weights())
            .zip(
                self.cost
                    .iter_mut()
                    .zip(self.seed.iter_mut())
                    .zip(self.w.iter_mut()),
            )
            .for_each(body);
    }

    /// Follows a point moved from `from` to `to` by a swap-removal.
    fn moved(&mut self, from: usize, to: usize) {
        self.cost[to] = self.cost[from];
        self.seed[to] = self.seed[from];
        self.w[to] = self.w[from];
    }

    fn truncate(&mut self, n: usize) {
        self.cost.truncate(n);
        self.seed.truncate(n);
        self.w.truncate(n);
    }
}

/// Runs rounds `seed_ids.len()..k` of K-means++ over `data`: each round
/// samples a point with probability proportional to `weight * cost` to the
/// seeds so far (the first round: to `weight`). Stops early when no point
/// has positive weight left (fewer than `k` distinct points), or when the
/// sampler breaks its contract (returns a position of zero weight).
pub(crate) fn run_rounds<M: Metric, S: Sampler + ?Sized>(
    metric: &M,
    data: &Dataset,
    sampler: &mut S,
    near: &mut Nearest,
    seed_ids: &mut Vec<PointId>,
    centers: &mut Vec<f64>,
    k: usize,
) {
    for round in seed_ids.len()..k {
        let Some(pos) = sampler.choose(round, data.ids(), &near.w) else {
            break;
        };
        if !near.w.get(pos).is_some_and(|&w| w > 0.0) {
            break;
        }
        seed_ids.push(data.id(pos));
        centers.extend_from_slice(data.point(pos));
        let j = u32::try_from(round).unwrap_or(u32::MAX);
        near.add_seed(metric, data, data.point(pos), j);
    }
}

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

/// Which case of Algorithm 3 an unlearning request took.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum UnlearnOutcome {
    /// No seed was removed: the seeds stay, only sizes and assignments
    /// changed (lines 2-3). Cost O(|R| + k).
    SeedsKept,
    /// Seed number `from` (0-based, in the order chosen) was the first
    /// removed: seeds `0..from` stay and seeding resumed from there on the
    /// remaining points (lines 4-14).
    Reseeded {
        /// The index of the first removed seed.
        from: usize,
    },
}

/// What an unlearning request did.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct UnlearnReport {
    /// Which case of Algorithm 3 happened.
    pub outcome: UnlearnOutcome,
    /// How many points were removed.
    pub removed: usize,
    /// The indices of the clusters whose seed or size changed, ascending.
    pub affected_clusters: Vec<usize>,
}

impl UnlearnReport {
    /// Whether seeding was resumed (the client's seeds changed).
    pub fn reseeded(&self) -> bool {
        matches!(self.outcome, UnlearnOutcome::Reseeded { .. })
    }
}

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
    state: State<M>,
    sampler: S,
}

#[derive(Clone, Debug)]
struct State<M> {
    metric: M,
    k: usize,
    data: Dataset,
    seed_ids: Vec<PointId>,
    centers: Vec<f64>,
    near: Nearest,
    sizes: Vec<u64>,
}

impl<M: Metric> State<M> {
    fn fit<S: Sampler + ?Sized>(metric: M, k: usize, data: Dataset, sampler: &mut S) -> Self {
        let mut st = Self {
            near: Nearest::new(&data),
            metric,
            k,
            data,
            seed_ids: Vec::with_capacity(k),
            centers: Vec::new(),
            sizes: Vec::new(),
        };
        st.resume(sampler);
        st
    }

    /// Runs the remaining rounds and recomputes the sizes: O(n k d).
    fn resume<S: Sampler + ?Sized>(&mut self, sampler: &mut S) {
        run_rounds(
            &self.metric,
            &self.data,
            sampler,
            &mut self.near,
            &mut self.seed_ids,
            &mut self.centers,
            self.k,
        );
        self.recompute_sizes();
    }

    fn recompute_sizes(&mut self) {
        self.sizes.clear();
        self.sizes.resize(self.seed_ids.len(), 0);
        for (&s, &wt) in self.near.seed.iter().zip(self.data.weights()) {
            if let Some(size) = self.sizes.get_mut(s as usize) {
                *size += wt;
            }
        }
    }

    fn remove_positions(&mut self, positions: Vec<usize>) {
        let near = &mut self.near;
        self.data
            .swap_remove_positions(positions, |from, to| near.moved(from, to));
        near.truncate(self.data.len());
    }

    /// Algorithm 3 of the paper.
    fn unlearn<S: Sampler + ?Sized>(
        &mut self,
        ids: &[PointId],
        sampler: &mut S,
    ) -> Result<UnlearnReport, SeedingError> {
        // Validate first: on error nothing changes.
        let positions = self.data.positions_of(ids)?;
        let removed: HashSet<PointId> = ids.iter().copied().collect();
        let first = self.seed_ids.iter().position(|id| removed.contains(id));
        let Some(from) = first else {
            // Lines 2-3: the seeds stay. Only the removed points' clusters
            // shrink: O(|R| + k), no pass over the data.
            let mut affected = Vec::with_capacity(positions.len());
            for &p in &positions {
                let j = self.near.seed[p] as usize;
                self.sizes[j] -= self.data.weight(p);
                affected.push(j);
            }
            affected.sort_unstable();
            affected.dedup();
            self.remove_positions(positions);
            return Ok(UnlearnReport {
                outcome: UnlearnOutcome::SeedsKept,
                removed: ids.len(),
                affected_clusters: affected,
            });
        };
        // Lines 4-14: keep seeds 0..from, resume on X \ R.
        let old_seeds = core::mem::take(&mut self.seed_ids);
        let old_sizes = core::mem::take(&mut self.sizes);
        self.remove_positions(positions);
        self.seed_ids = old_seeds[..from].to_vec();
        self.centers.truncate(from * self.data.dim());
        self.near.reset(&self.data);
        for j in 0..from {
            let d = self.data.dim();
            // `j < from <= k`, and seed indices fit in u32 by construction.
            let jj = u32::try_from(j).unwrap_or(u32::MAX);
            self.near.add_seed(
                &self.metric,
                &self.data,
                &self.centers[j * d..(j + 1) * d],
                jj,
            );
        }
        self.resume(sampler);
        let len = old_seeds.len().max(self.seed_ids.len());
        let affected = (0..len)
            .filter(|&j| {
                old_seeds.get(j) != self.seed_ids.get(j) || old_sizes.get(j) != self.sizes.get(j)
            })
            .collect();
        Ok(UnlearnReport {
            outcome: UnlearnOutcome::Reseeded { from },
            removed: ids.len(),
            affected_clusters: affected,
        })
    }

    /// Rebuilds a state from its data and its seeds, replaying the rounds
    /// and checking that each seed was a possible choice.
    fn restore(
        metric: M,
        k: usize,
        data: Dataset,
        seeds: Vec<PointId>,
    ) -> Result<Self, SeedingError> {
        if k == 0 {
            return Err(SeedingError::ZeroClusters);
        }
        if seeds.len() > k {
            return Err(SeedingError::InvalidState("more seeds than k"));
        }
        let mut st = Self {
            near: Nearest::new(&data),
            metric,
            k,
            data,
            seed_ids: Vec::with_capacity(k),
            centers: Vec::new(),
            sizes: Vec::new(),
        };
        for (j, &id) in seeds.iter().enumerate() {
            let pos = st
                .data
                .position(id)
                .ok_or(SeedingError::InvalidState("a seed is not in the data set"))?;
            if st.near.w[pos].is_nan() || st.near.w[pos] <= 0.0 {
                return Err(SeedingError::InvalidState(
                    "a seed could not have been chosen",
                ));
            }
            st.seed_ids.push(id);
            st.centers.extend_from_slice(st.data.point(pos));
            let jj = u32::try_from(j).unwrap_or(u32::MAX);
            st.near
                .add_seed(&st.metric, &st.data, st.data.point(pos), jj);
        }
        if st.seed_ids.len() < k && st.near.w.iter().any(|&w| w > 0.0) {
            return Err(SeedingError::InvalidState("seeding stopped before k seeds"));
        }
        st.recompute_sizes();
        Ok(st)
    }
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

#[cfg(feature = "serde")]
mod serde_impl {
    use super::*;
    use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};

    /// Only the data, the seeds and the sampler are stored; everything else
    /// is recomputed (and checked) on loading.
    #[derive(Serialize)]
    struct ReprRef<'a, M, S> {
        metric: &'a M,
        k: usize,
        data: &'a Dataset,
        seeds: &'a [PointId],
        sampler: &'a S,
    }

    #[derive(Deserialize)]
    struct Repr<M, S> {
        metric: M,
        k: usize,
        data: Dataset,
        seeds: Vec<PointId>,
        sampler: S,
    }

    impl<M: Metric + Serialize, S: Serialize> Serialize for Seeding<M, S> {
        fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
            ReprRef {
                metric: &self.state.metric,
                k: self.state.k,
                data: &self.state.data,
                seeds: &self.state.seed_ids,
                sampler: &self.sampler,
            }
            .serialize(s)
        }
    }

    impl<'de, M: Metric + Deserialize<'de>, S: Deserialize<'de>> Deserialize<'de> for Seeding<M, S> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let r = Repr::<M, S>::deserialize(d)?;
            let state = State::restore(r.metric, r.k, r.data, r.seeds).map_err(D::Error::custom)?;
            Ok(Self {
                state,
                sampler: r.sampler,
            })
        }
    }
}
