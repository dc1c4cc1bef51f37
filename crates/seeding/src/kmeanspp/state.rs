//! The state behind a [`Seeding`](crate::Seeding): data, seeds, nearest
//! seeds and cluster sizes; seeding from scratch, exact unlearning
//! (Algorithm 3 of the paper) and rebuilding from stored seeds.

use std::collections::HashSet;

use super::nearest::{Nearest, run_rounds};
use super::report::{UnlearnOutcome, UnlearnReport};
use crate::{Dataset, Metric, PointId, Sampler, SeedingError};

#[derive(Clone, Debug)]
pub(super) struct State<M> {
    pub(super) metric: M,
    pub(super) k: usize,
    pub(super) data: Dataset,
    pub(super) seed_ids: Vec<PointId>,
    pub(super) centers: Vec<f64>,
    pub(super) near: Nearest,
    pub(super) sizes: Vec<u64>,
}

impl<M: Metric> State<M> {
    pub(super) fn fit<S: Sampler + ?Sized>(
        metric: M,
        k: usize,
        data: Dataset,
        sampler: &mut S,
    ) -> Self {
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
    pub(super) fn resume<S: Sampler + ?Sized>(&mut self, sampler: &mut S) {
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

    /// Every point's nearest seed among the seeds held, computed again
    /// (the points changed under them), then the remaining rounds: O(n k d).
    pub(super) fn replay_and_resume<S: Sampler + ?Sized>(&mut self, sampler: &mut S) {
        self.near.reset(&self.data);
        let d = self.data.dim();
        for j in 0..self.seed_ids.len() {
            // `j < k`, and seed indices fit in u32 by construction.
            let jj = u32::try_from(j).unwrap_or(u32::MAX);
            let center = &self.centers[j * d..(j + 1) * d];
            self.near.add_seed(&self.metric, &self.data, center, jj);
        }
        self.resume(sampler);
    }

    /// The clusters whose seed or size differs from `old_seeds` and
    /// `old_sizes`, ascending.
    pub(super) fn affected(&self, old_seeds: &[PointId], old_sizes: &[u64]) -> Vec<usize> {
        let len = old_seeds.len().max(self.seed_ids.len());
        (0..len)
            .filter(|&j| {
                old_seeds.get(j) != self.seed_ids.get(j) || old_sizes.get(j) != self.sizes.get(j)
            })
            .collect()
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
    pub(super) fn unlearn<S: Sampler + ?Sized>(
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
        self.replay_and_resume(sampler);
        let affected = self.affected(&old_seeds, &old_sizes);
        Ok(UnlearnReport {
            outcome: UnlearnOutcome::Reseeded { from },
            removed: ids.len(),
            affected_clusters: affected,
        })
    }

    /// Rebuilds a state from its data and its seeds, replaying the rounds
    /// and checking that each seed was a possible choice.
    pub(super) fn restore(
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
