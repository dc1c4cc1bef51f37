//! The insertion counterpart of Algorithm 3: points join a seeding, and
//! seeding resumes from the first round a newcomer wins.
//!
//! Why it is exact (the dual of Lemma 5.1). Seeding `X ∪ B` picks, in
//! round `r` and given the seeds `c_0..c_{r-1}`, a point with probability
//! `w_r(x) / (W_r(X) + W_r(B))`, where `w_r(x)` is the point's weight times
//! its cost to those seeds. The same law comes out of two steps: draw `c`
//! from `X` with probability `w_r(x) / W_r(X)` (what seeding `X` did), then
//! let the newcomers challenge it, one of them, `b`, taking the round with
//! probability `w_r(b) / (W_r(X) + W_r(B))` independently of `c`: an old
//! point then wins with probability
//! `(w_r(x) / W_r(X)) * (W_r(X) / (W_r(X) + W_r(B)))`, a newcomer with
//! `w_r(b) / (W_r(X) + W_r(B))`. So, round after round, as long as no
//! newcomer wins, the kept seeds have the law of seeding the union; at the
//! first round a newcomer wins, the seeds before it have that law, the
//! newcomer is the round's choice, and the rounds after it are drawn on the
//! union as retraining would draw them. With [`crate::ExpRace`] the
//! challenge is a comparison of race keys, and the result is the seeding of
//! the union bit for bit: a point's key in round `r` depends only on the
//! seed, `r`, its id and its weight, which the seeds before `r` fix.

use super::nearest::{Nearest, race_weight};
use super::state::State;
use crate::{Dataset, Metric, Sampler, SeedingError};

/// What an insertion did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum InsertOutcome {
    /// No newcomer won a round: the seeds stay, the newcomers join their
    /// nearest seeds' clusters. Cost O(|B| k d), no pass over the data.
    SeedsKept,
    /// Seeding resumed at round `from`: a newcomer won it, or the old
    /// seeding had stopped there (fewer distinct points than `k`) and a
    /// newcomer can go on. Seeds `0..from` stay. Cost O(n k d).
    Reseeded {
        /// The first round whose seed changed.
        from: usize,
    },
}

/// What an insertion did: its case, the number of points added and the
/// clusters whose seed or size changed.
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct InsertReport {
    /// Which case happened.
    pub outcome: InsertOutcome,
    /// How many points were added.
    pub inserted: usize,
    /// The indices of the clusters whose seed or size changed, ascending.
    pub affected_clusters: Vec<usize>,
}

impl InsertReport {
    /// Whether seeding was resumed (the seeds changed).
    pub fn reseeded(&self) -> bool {
        matches!(self.outcome, InsertOutcome::Reseeded { .. })
    }
}

/// The old points' state at a round, built only when a sampler asks for
/// the round's total weight (the race never does).
struct Replay {
    near: Option<Nearest>,
    at: usize,
}

impl Replay {
    fn total<M: Metric>(
        &mut self,
        metric: &M,
        data: &Dataset,
        centers: &[f64],
        round: usize,
    ) -> f64 {
        let near = self.near.get_or_insert_with(|| Nearest::new(data));
        let d = data.dim();
        while self.at < round {
            let j = u32::try_from(self.at).unwrap_or(u32::MAX);
            near.add_seed(metric, data, &centers[self.at * d..(self.at + 1) * d], j);
            self.at += 1;
        }
        near.w.iter().sum()
    }
}

impl<M: Metric> State<M> {
    /// The insertion counterpart of Algorithm 3 (see the module docs).
    pub(super) fn insert<S: Sampler + ?Sized>(
        &mut self,
        added: &Dataset,
        sampler: &mut S,
    ) -> Result<InsertReport, SeedingError> {
        // Validate first: on error nothing changes.
        self.data.check_append(added)?;
        let d = self.data.dim();
        let mut fresh = Nearest::new(added);
        let mut replay = Replay { near: None, at: 0 };
        let mut won = None;
        for (round, &winner) in self.seed_ids.iter().enumerate() {
            let pos = self
                .data
                .position(winner)
                .ok_or(SeedingError::InvalidState("a seed is not in the data set"))?;
            let (metric, data, centers) = (&self.metric, &self.data, &self.centers);
            let held = race_weight(
                metric,
                data.point(pos),
                data.weight(pos),
                &centers[..round * d],
            );
            let mut total = || replay.total(metric, data, centers, round);
            let challenger =
                sampler.challenge(round, winner, held, &mut total, added.ids(), &fresh.w);
            if let Some(i) = challenger.filter(|&i| fresh.w.get(i).is_some_and(|&w| w > 0.0)) {
                won = Some((round, i));
                break;
            }
            let j = u32::try_from(round).unwrap_or(u32::MAX);
            fresh.add_seed(
                &self.metric,
                added,
                &self.centers[round * d..(round + 1) * d],
                j,
            );
        }
        let old_seeds = self.seed_ids.clone();
        let old_sizes = self.sizes.clone();
        self.data.append_checked(added);
        let from = match won {
            Some((round, i)) => {
                self.seed_ids.truncate(round);
                self.centers.truncate(round * d);
                self.seed_ids.push(added.id(i));
                self.centers.extend_from_slice(added.point(i));
                self.replay_and_resume(sampler);
                Some(round)
            }
            None => {
                for (p, &j) in fresh.seed.iter().enumerate() {
                    if let Some(size) = self.sizes.get_mut(j as usize) {
                        *size += added.weight(p);
                    }
                }
                self.near.append(fresh);
                let stopped = self.seed_ids.len();
                if stopped < self.k {
                    self.resume(sampler);
                }
                (self.seed_ids.len() > stopped).then_some(stopped)
            }
        };
        let affected_clusters = self.affected(&old_seeds, &old_sizes);
        Ok(InsertReport {
            outcome: match from {
                Some(from) => InsertOutcome::Reseeded { from },
                None => InsertOutcome::SeedsKept,
            },
            inserted: added.len(),
            affected_clusters,
        })
    }
}
