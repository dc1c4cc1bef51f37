//! Updates of an [`ExactModel`] to changed data: the changes named by id,
//! their check against the data ([`Plan`]), their exact application to the
//! traces, and the replay of every run.

use std::collections::{HashMap, HashSet};

use super::model::ExactModel;
use super::points::rounded_point;
use super::seeds::{self, SeedChanges, first_changed_round};
use super::trace::NONE;
use crate::{Dataset, PointId, SeedingError};

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

impl ExactModel {
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

    /// Brings the model to the state [`ExactKMeans::fit`](crate::ExactKMeans::fit) of `new_data`
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
    /// use seeding::{Changes, Dataset, ExactKMeans, KMeansParams, PointId};
    ///
    /// let m = DMatrix::from_fn(3, 200, |r, c| ((c * 37 + r * 11) % 101) as f64 / 101.0 + (c % 4) as f64);
    /// let data = Dataset::new(m)?;
    /// let km = ExactKMeans::new(KMeansParams::new(4).validate()?);
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
    /// update (the negative control); never use it otherwise. Only with
    /// the `hazmat` feature.
    ///
    /// # Errors
    ///
    /// As [`Self::update`].
    #[cfg(feature = "hazmat")]
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
        let tol = self.params.params().tolerance() * self.totals.pooled_mean_variance();
        let mut reports = Vec::with_capacity(self.runs.len());
        for run in &mut self.runs {
            let mut report = RunReport {
                iterations_before: run.trace.len(),
                ..RunReport::default()
            };
            let k = self.params.k();
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
