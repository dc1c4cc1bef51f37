//! Bit-identity checks for [`seeding::ExactModel`]: after every update the
//! model must equal a fresh fit of the new data with the same seed, bit for
//! bit. [`check_sequence`] drives random sequences of changes through any
//! update function, so that the same comparison also serves as the
//! negative control (a deliberately unsound update must be caught).

use std::collections::BTreeMap;

use nalgebra::DMatrix;
use proptest::prelude::*;
use seeding::{Changes, Dataset, ExactKMeans, ExactModel, PointId, SeedingError, UpdateReport};

/// Everything observable about two models, compared bit for bit; points
/// matched by id (the models' orders differ).
///
/// # Errors
///
/// The first difference, described.
pub fn compare(a: &ExactModel, b: &ExactModel) -> Result<(), String> {
    fn bits(v: nalgebra::DMatrixView<'_, f64>) -> Vec<u64> {
        v.iter().map(|x| x.to_bits()).collect()
    }
    macro_rules! same {
        ($what:expr, $x:expr, $y:expr) => {
            if $x != $y {
                return Err(format!("{}: {:?} != {:?}", $what, $x, $y));
            }
        };
    }
    same!("points", a.len(), b.len());
    same!("seeds", a.seeds(), b.seeds());
    same!("iterations", a.iterations(), b.iterations());
    same!("converged", a.converged(), b.converged());
    same!("best run", a.best_run(), b.best_run());
    same!("centroids", bits(a.centroids()), bits(b.centroids()));
    for t in 0..=a.iterations() {
        let (ca, cb) = (a.centroids_at(t), b.centroids_at(t));
        same!(
            format!("centroids of iteration {t}"),
            ca.map(bits),
            cb.map(bits)
        );
    }
    same!("sizes", a.sizes(), b.sizes());
    same!("phi", a.phi().to_bits(), b.phi().to_bits());
    let ra: Vec<u64> = a.run_objectives().iter().map(|x| x.to_bits()).collect();
    let rb: Vec<u64> = b.run_objectives().iter().map(|x| x.to_bits()).collect();
    same!("objectives of the runs", ra, rb);
    same!(
        "re-seeded iterations",
        a.reseed_iterations(),
        b.reseed_iterations()
    );
    for &id in b.ids() {
        same!(
            format!("assignment of {id}"),
            a.assignment(id),
            b.assignment(id)
        );
        same!(format!("point {id}"), a.point(id), b.point(id));
    }
    // The clusters a client sends, small ones dissolved: a function of
    // the model, so equal too.
    for min in [1u64, 2, 3, 5] {
        let (ma, mb) = (a.min_size(min), b.min_size(min));
        same!(
            format!("centroids at minimum size {min}"),
            bits(ma.centroids()),
            bits(mb.centroids())
        );
        same!(
            format!("sizes at minimum size {min}"),
            ma.sizes(),
            mb.sizes()
        );
        for &id in b.ids() {
            same!(
                format!("cluster of {id} at minimum size {min}"),
                ma.assignment(id),
                mb.assignment(id)
            );
        }
    }
    Ok(())
}

/// One change of a data set, with the randomness it needs.
#[derive(Clone, Debug)]
pub enum Step {
    /// Remove one point.
    RemoveOne(usize),
    /// Remove a seed of the model.
    RemoveSeed(usize),
    /// Lower one point's weight by one (removing it at weight 1, as a
    /// count that drops to zero).
    Decrement(usize),
    /// Raise one point's weight.
    Increment(usize, u64),
    /// Add points (count, entropy for their coordinates and weights).
    Add(usize, u64),
    /// Remove several points.
    RemoveMany(Vec<usize>),
    /// Move one point (same id, new coordinates).
    Move(usize, u64),
    /// A client reseeds: remove several points and add several.
    Reseed(Vec<usize>, usize, u64),
}

/// How the coordinates of random points are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coords {
    /// Integers in `[-3, 3]`: duplicates, exact ties and empty clusters.
    Grid,
    /// Multiples of 1/8 in `[-2, 2]`: near-ties.
    Fine,
    /// Arbitrary doubles in `[-10, 10]`, off the fixed-point grid.
    Continuous,
}

fn splitmix(z: &mut u64) -> u64 {
    *z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    seeding::mix64(*z)
}

fn coord(kind: Coords, z: &mut u64) -> f64 {
    let r = splitmix(z);
    match kind {
        Coords::Grid => (r % 7) as f64 - 3.0,
        Coords::Fine => (r % 33) as f64 / 8.0 - 2.0,
        Coords::Continuous => (r >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 10.0,
    }
}

/// A data set as a map from id to coordinates and weight, turned into a
/// [`Dataset`] in an order that changes with `shuffle`.
#[derive(Clone, Debug)]
pub struct Points {
    dim: usize,
    points: BTreeMap<PointId, (Vec<f64>, u64)>,
    next_id: u64,
    kind: Coords,
}

impl Points {
    /// `n` random points of dimension `dim` (weights 1..=5 when
    /// `weighted`, else 1).
    pub fn random(dim: usize, n: usize, kind: Coords, weighted: bool, entropy: u64) -> Self {
        let mut z = entropy;
        let points = (0..n as u64)
            .map(|i| {
                let x = (0..dim).map(|_| coord(kind, &mut z)).collect();
                let w = if weighted {
                    1 + splitmix(&mut z) % 5
                } else {
                    1
                };
                (PointId(10 * i + 3), (x, w))
            })
            .collect();
        Self {
            dim,
            points,
            next_id: 10 * n as u64 + 7,
            kind,
        }
    }

    /// From a data set.
    pub fn from_dataset(data: &Dataset, kind: Coords) -> Self {
        let points = (0..data.len())
            .map(|p| (data.id(p), (data.point(p).to_vec(), data.weight(p))))
            .collect();
        let next_id = data.ids().iter().map(|id| id.0 + 1).max().unwrap_or(0);
        Self {
            dim: data.dim(),
            points,
            next_id,
            kind,
        }
    }

    /// The number of points.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    /// The dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// The data set, points in an order that depends on `shuffle`.
    pub fn dataset(&self, shuffle: u64) -> Dataset {
        let mut order: Vec<(&PointId, &(Vec<f64>, u64))> = self.points.iter().collect();
        order.sort_by_key(|(id, _)| seeding::mix64(id.0 ^ shuffle));
        let coords: Vec<f64> = order.iter().flat_map(|(_, (x, _))| x.clone()).collect();
        let ids = order.iter().map(|(id, _)| **id).collect();
        let weights = order.iter().map(|(_, (_, w))| *w).collect();
        let m = DMatrix::from_vec(self.dim, order.len(), coords);
        Dataset::with_weights(m, ids, weights).unwrap()
    }

    fn pick(&self, i: usize) -> PointId {
        *self.points.keys().nth(i % self.points.len()).unwrap()
    }

    fn remove(&mut self, id: PointId, ch: &mut Changes) {
        if self.points.remove(&id).is_some() {
            ch.removed.push(id);
        }
    }

    fn remove_pick(&mut self, i: usize, ch: &mut Changes) {
        if !self.points.is_empty() {
            let id = self.pick(i);
            self.remove(id, ch);
        }
    }

    fn add(&mut self, count: usize, entropy: u64, ch: &mut Changes) {
        let mut z = entropy;
        for _ in 0..count {
            let x = (0..self.dim).map(|_| coord(self.kind, &mut z)).collect();
            let id = PointId(self.next_id);
            self.next_id += 1;
            self.points.insert(id, (x, 1 + splitmix(&mut z) % 4));
            ch.added.push(id);
        }
    }

    /// Applies a step (to a model whose seeds are `seeds`), returning the
    /// changes, or `None` when the step would leave no point.
    pub fn apply(&mut self, step: &Step, seeds: &[PointId]) -> Option<Changes> {
        if self.points.is_empty() {
            return None;
        }
        let mut ch = Changes::default();
        match step {
            Step::RemoveOne(i) => {
                let id = self.pick(*i);
                self.remove(id, &mut ch);
            }
            Step::RemoveSeed(i) => {
                let id = if seeds.is_empty() {
                    self.pick(*i)
                } else {
                    seeds[i % seeds.len()]
                };
                self.remove(id, &mut ch);
            }
            Step::Decrement(i) => {
                let id = self.pick(*i);
                let entry = self.points.get_mut(&id).unwrap();
                if entry.1 > 1 {
                    entry.1 -= 1;
                    ch.reweighted.push(id);
                } else {
                    self.remove(id, &mut ch);
                }
            }
            Step::Increment(i, by) => {
                let id = self.pick(*i);
                self.points.get_mut(&id).unwrap().1 += by;
                ch.reweighted.push(id);
            }
            Step::Add(count, z) => self.add(*count, *z, &mut ch),
            Step::RemoveMany(picks) => {
                for &i in picks {
                    self.remove_pick(i, &mut ch);
                }
            }
            Step::Move(i, z) => {
                let id = self.pick(*i);
                let mut z = *z;
                // New coordinates (a few tries: on a coarse grid the draw
                // may repeat the old ones; then nothing changes).
                for _ in 0..16 {
                    let x: Vec<f64> = (0..self.dim).map(|_| coord(self.kind, &mut z)).collect();
                    let old = &mut self.points.get_mut(&id).unwrap().0;
                    if *old != x {
                        *old = x;
                        ch.removed.push(id);
                        ch.added.push(id);
                        break;
                    }
                }
            }
            Step::Reseed(picks, count, z) => {
                for &i in picks {
                    self.remove_pick(i, &mut ch);
                }
                self.add(*count, *z, &mut ch);
            }
        }
        (!self.points.is_empty()).then_some(ch)
    }
}

/// A random step (picks and entropy unconstrained).
pub fn arb_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        3 => any::<usize>().prop_map(Step::RemoveOne),
        2 => any::<usize>().prop_map(Step::RemoveSeed),
        3 => any::<usize>().prop_map(Step::Decrement),
        1 => (any::<usize>(), 1u64..=3).prop_map(|(i, b)| Step::Increment(i, b)),
        2 => (1usize..=4, any::<u64>()).prop_map(|(c, z)| Step::Add(c, z)),
        1 => prop::collection::vec(any::<usize>(), 2..=6).prop_map(Step::RemoveMany),
        1 => (any::<usize>(), any::<u64>()).prop_map(|(i, z)| Step::Move(i, z)),
        1 => (prop::collection::vec(any::<usize>(), 1..=4), 1usize..=4, any::<u64>())
            .prop_map(|(p, c, z)| Step::Reseed(p, c, z)),
    ]
}

/// Counts of what the updates of a sequence did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Updates run.
    pub updates: usize,
    /// Updates whose seeding changed.
    pub seeding_changed: usize,
    /// Updates that refit a run from scratch.
    pub refits: usize,
    /// Iterations with an empty cluster, in the updates.
    pub reseed_passes: usize,
    /// Assignments computed by the updates.
    pub recomputed: usize,
    /// Assignments a refit would have computed.
    pub refit_assignments: usize,
    /// Fresh fits that re-seeded an empty cluster.
    pub fits_with_empty_clusters: usize,
}

/// [`check_sequence_with`] for [`ExactKMeans::fit`] with `km` and `seed`,
/// against plain Lloyd (`km` without acceleration) as the reference.
///
/// # Errors
///
/// As [`check_sequence_with`].
pub fn check_sequence<U>(
    km: &ExactKMeans,
    points: Points,
    seed: u64,
    steps: &[Step],
    update: U,
) -> Result<Stats, String>
where
    U: Fn(&mut ExactModel, &Dataset, &Changes) -> Result<UpdateReport, SeedingError>,
{
    let plain = km.clone().accelerate(false);
    check_sequence_with(
        |d: &Dataset| km.fit(d, seed),
        |d: &Dataset| plain.fit(d, seed),
        points,
        steps,
        update,
    )
}

/// Fits `points` with `fit`, applies `steps` one after another through
/// `update` (alternately with the step's changes and with the changes
/// [`ExactModel::changes_to`] finds), and after each compares the model
/// with `reference` (a fit that must give the same bits: `fit` itself, or
/// the same parameters without acceleration) of the new data, in another
/// order, by [`compare`].
///
/// # Errors
///
/// The first difference (or failed fit or update), described.
pub fn check_sequence_with<F, R, U>(
    fit: F,
    reference: R,
    mut points: Points,
    steps: &[Step],
    update: U,
) -> Result<Stats, String>
where
    F: Fn(&Dataset) -> Result<ExactModel, SeedingError>,
    R: Fn(&Dataset) -> Result<ExactModel, SeedingError>,
    U: Fn(&mut ExactModel, &Dataset, &Changes) -> Result<UpdateReport, SeedingError>,
{
    let mut model = fit(&points.dataset(1)).map_err(|e| e.to_string())?;
    let mut stats = Stats::default();
    compare(&model, &reference(&points.dataset(2)).unwrap())
        .map_err(|e| format!("fit differs from the reference: {e}"))?;
    stats.fits_with_empty_clusters += usize::from(model.reseed_iterations() > 0);
    for (i, step) in steps.iter().enumerate() {
        let seeds = model.seeds().to_vec();
        let Some(changes) = points.apply(step, &seeds) else {
            break;
        };
        let data = points.dataset(3 + i as u64);
        let found = model.changes_to(&data).map_err(|e| e.to_string())?;
        let sorted = |c: &Changes| {
            let mut c = c.clone();
            c.removed.sort();
            c.added.sort();
            c.reweighted.sort();
            c
        };
        if sorted(&found) != sorted(&changes) {
            return Err(format!("changes_to found {found:?}, expected {changes:?}"));
        }
        let used = if i % 2 == 0 { &changes } else { &found };
        let report = update(&mut model, &data, used).map_err(|e| format!("step {step:?}: {e}"))?;
        let fresh = reference(&points.dataset(1000 + i as u64)).unwrap();
        compare(&model, &fresh).map_err(|e| format!("after step {i} ({step:?}): {e}"))?;
        stats.updates += 1;
        stats.seeding_changed += usize::from(report.seeding_changed());
        stats.refits += usize::from(report.fell_back());
        stats.reseed_passes += report.runs.iter().map(|r| r.reseed_passes).sum::<usize>();
        stats.recomputed += report.points_recomputed();
        stats.refit_assignments += fresh.len() * fresh.iterations();
        stats.fits_with_empty_clusters += usize::from(fresh.reseed_iterations() > 0);
    }
    Ok(stats)
}

/// A random small data set: dimension 1..=4, 1..=60 points.
pub fn arb_points() -> impl Strategy<Value = Points> {
    (
        1usize..=4,
        1usize..=60,
        prop_oneof![
            Just(Coords::Grid),
            Just(Coords::Fine),
            Just(Coords::Continuous)
        ],
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|(dim, n, kind, weighted, z)| Points::random(dim, n, kind, weighted, z))
}
