//! The per-point state of a seeding (cost to the nearest seed, that seed,
//! sampling weight) and the K-means++ rounds that grow it, shared with the
//! seeding of [`crate::KMeans`].

use crate::{Dataset, Metric, PointId, Sampler};

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
    pub(super) fn moved(&mut self, from: usize, to: usize) {
        self.cost[to] = self.cost[from];
        self.seed[to] = self.seed[from];
        self.w[to] = self.w[from];
    }

    /// Appends another set's state after this one's (the points of a
    /// data set appended to this one's).
    pub(super) fn append(&mut self, other: Self) {
        self.cost.extend(other.cost);
        self.seed.extend(other.seed);
        self.w.extend(other.w);
    }

    pub(super) fn truncate(&mut self, n: usize) {
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

/// A point's weight in the round after the seeds `centers`: its weight
/// before the first seed, then its weight times its least cost, computed as
/// [`Nearest::add_seed`] (and `exact::seeds`' `add_seed`) does (strict `<` from `+inf`), so the value is the
/// one seeding used.
pub(crate) fn race_weight<M: Metric>(metric: &M, x: &[f64], weight: u64, centers: &[f64]) -> f64 {
    if centers.is_empty() {
        return weight as f64;
    }
    let mut cost = f64::INFINITY;
    for c in centers.chunks_exact(x.len()) {
        let v = metric.cost(x, c);
        if v < cost {
            cost = v;
        }
    }
    weight as f64 * cost
}
