//! Lloyd's iterations with exact sums and a per-iteration trace, run from
//! scratch or replayed against the trace of a previous run.

use super::bounds::{Bounds, f32_up};
use super::fixed::Moments;
use super::points::Points;
use crate::{ExpRace, Metric, Sampler, SqEuclidean};

#[cfg(feature = "parallel")]
use super::seeds::PAR_MIN_POINTS;

/// The label of a point not counted in an iteration's moments (a point
/// added since the iteration was computed).
pub(crate) const NONE: u32 = u32::MAX;

/// Points per task of a parallel pass.
#[cfg(feature = "parallel")]
const CHUNK: usize = 2048;

/// One assignment step: the centroids `C_t` it assigned to, the exact
/// moments of the clusters it formed, and per point its label and a lower
/// bound on its margin (stored plus the cluster's debt, see
/// [`Bounds::margin_plus`]).
#[derive(Clone, Debug)]
pub(crate) struct Iter {
    pub(crate) centroids: Vec<f64>,
    pub(crate) moments: Moments,
    pub(crate) labels: Vec<u32>,
    pub(crate) margins: Vec<f32>,
    /// Per cluster: the sum of the thresholds of the updates since the
    /// margins of its points were computed (only grows). The margin of a
    /// point with label `a` is at least `margins[p] - debt[a]`.
    pub(crate) debt: Vec<f64>,
    /// Whether an empty cluster was re-seeded after this assignment.
    pub(crate) reseeded: bool,
}

impl Iter {
    /// Becomes a copy of `o`, reusing the allocations.
    fn copy_from(&mut self, o: &Self) {
        self.centroids.clone_from(&o.centroids);
        self.moments.clone_from(&o.moments);
        self.labels.clone_from(&o.labels);
        self.margins.clone_from(&o.margins);
        self.debt.clone_from(&o.debt);
        self.reseeded = o.reseeded;
    }

    /// Follows a swap-removal of the point at `pos`.
    pub(crate) fn swap_remove(&mut self, pos: usize) {
        self.labels.swap_remove(pos);
        self.margins.swap_remove(pos);
    }

    /// Appends a point that this iteration did not count.
    pub(crate) fn push_uncounted(&mut self) {
        self.labels.push(NONE);
        self.margins.push(f32::NEG_INFINITY);
    }
}

/// The nearest centroid (lowest index on ties, as a fresh assignment),
/// its cost and the least cost to any other centroid.
#[inline]
fn nearest2(x: &[f64], centroids: &[f64], dim: usize) -> (u32, f64, f64) {
    let (mut a, mut fa, mut f2) = (0u32, f64::INFINITY, f64::INFINITY);
    for (j, c) in centroids.chunks_exact(dim).enumerate() {
        let f = SqEuclidean.cost(x, c);
        if f < fa {
            f2 = fa;
            fa = f;
            // `j` is below the number of centroids, which fits a u32.
            a = u32::try_from(j).unwrap_or(NONE);
        } else if f < f2 {
            f2 = f;
        }
    }
    (a, fa, f2)
}

/// What a pass needs besides the per-point arrays.
struct PassCtx<'a> {
    dim: usize,
    m: usize,
    centroids: &'a [f64],
    /// `None`: recompute every point. `Some(bar)`: skip a point with label
    /// `a` when its stored margin exceeds `bar[a]` (the thresholds rounded
    /// up to `f32`).
    bar: Option<&'a [f32]>,
    /// The debts recomputed margins are stored against.
    debt: &'a [f64],
    bounds: Bounds,
}

/// The outcome of a pass over some points: the change of the moments and
/// the number of points whose distances were computed.
struct PassOut {
    delta: Option<Moments>,
    recomputed: usize,
}

impl PassOut {
    #[cfg(feature = "parallel")]
    fn join(mut self, o: Self) -> Self {
        self.recomputed += o.recomputed;
        match (&mut self.delta, o.delta) {
            (Some(a), Some(b)) => a.merge(&b),
            (None, Some(b)) => self.delta = Some(b),
            _ => {}
        }
        self
    }
}

/// Assigns the point at `i` afresh: its label, its margin and the change
/// of the moments.
#[inline]
fn recompute(
    ctx: &PassCtx<'_>,
    x: &[f64],
    w: u64,
    label: &mut u32,
    margin: &mut f32,
    out: &mut PassOut,
) {
    out.recomputed += 1;
    let old = *label;
    let (a, fa, f2) = nearest2(x, ctx.centroids, ctx.dim);
    let au = a as usize;
    *margin = ctx.bounds.margin_plus(fa, f2, ctx.debt[au]);
    if a != old {
        *label = a;
        let delta = out
            .delta
            .get_or_insert_with(|| Moments::zeros(ctx.m, ctx.dim));
        if old != NONE {
            delta.add_point(old as usize, w, x, false);
        }
        delta.add_point(au, w, x, true);
    }
}

fn pass_chunk(
    ctx: &PassCtx<'_>,
    coords: &[f64],
    weights: &[u64],
    labels: &mut [u32],
    margins: &mut [f32],
) -> PassOut {
    let mut out = PassOut {
        delta: None,
        recomputed: 0,
    };
    let d = ctx.dim;
    let n = labels.len().min(margins.len()).min(weights.len());
    for i in 0..n {
        // The skip test: one load of the label, one of the margin, one
        // comparison (in f32, against thresholds rounded up).
        if let Some(bar) = ctx.bar
            && let Some(&b) = bar.get(labels[i] as usize)
            && margins[i] > b
        {
            continue;
        }
        let x = &coords[i * d..(i + 1) * d];
        recompute(
            ctx,
            x,
            weights[i],
            &mut labels[i],
            &mut margins[i],
            &mut out,
        );
    }
    out
}

/// One assignment pass: every point keeps its label when the skip test
/// certifies it, else is assigned afresh (its margin recomputed); the
/// change of the moments comes back. Parallel under the `parallel`
/// feature; the result is the same either way (per-point work, integer
/// sums).
fn pass(ctx: &PassCtx<'_>, points: &Points, labels: &mut [u32], margins: &mut [f32]) -> PassOut {
    #[cfg(feature = "parallel")]
    if points.len() >= PAR_MIN_POINTS {
        use rayon::prelude::*;
        let d = ctx.dim;
        return points
            .coords()
            .par_chunks(CHUNK * d)
            .zip(points.weights().par_chunks(CHUNK))
            .zip(
                labels
                    .par_chunks_mut(CHUNK)
                    .zip(margins.par_chunks_mut(CHUNK)),
            )
            .map(|((x, w), (l, m))| pass_chunk(ctx, x, w, l, m))
            .reduce(
                || PassOut {
                    delta: None,
                    recomputed: 0,
                },
                PassOut::join,
            );
    }
    pass_chunk(ctx, points.coords(), points.weights(), labels, margins)
}

/// The float cost of every point to its assigned centroid (the least
/// cost, as the assignment is the float argmin), for re-seeding.
fn assigned_costs(points: &Points, centroids: &[f64], labels: &[u32]) -> Vec<f64> {
    let dim = points.dim();
    let cost = |(x, &a): (&[f64], &u32)| {
        let a = a as usize;
        SqEuclidean.cost(x, &centroids[a * dim..(a + 1) * dim])
    };
    #[cfg(feature = "parallel")]
    if points.len() >= PAR_MIN_POINTS {
        use rayon::prelude::*;
        return points
            .coords()
            .par_chunks_exact(dim)
            .zip(labels.par_iter())
            .with_min_len(1024)
            .map(cost)
            .collect();
    }
    points
        .coords()
        .chunks_exact(dim)
        .zip(labels)
        .map(cost)
        .collect()
}

/// The parameters of one Lloyd run.
pub(crate) struct Lloyd {
    /// The number of clusters asked for (it numbers re-seeding rounds).
    pub(crate) k: usize,
    pub(crate) max_iterations: usize,
    /// The absolute tolerance on the summed squared centroid shift.
    pub(crate) tol: f64,
    pub(crate) race: ExpRace,
    pub(crate) bounds: Bounds,
    /// Test hook: subtracted from every skip threshold, so that points
    /// are skipped that should not be (0 in every real run).
    pub(crate) slack: f64,
    /// Whether iterations beyond the old trace (all but the first, in a
    /// fresh run) use the skip test against the previous iteration (else
    /// they are computed in full, as plain Lloyd does).
    pub(crate) accelerate: bool,
}

/// How many old iterations at or after `t` are candidate baselines for
/// iteration `t` (besides this run's previous one).
const LOOKAHEAD: usize = 2;

impl Lloyd {
    /// Fills `bar` with the skip thresholds of the centroids `c` against
    /// the baseline `base` (`debt + max_{j != a} delta_j + kappa delta_a`
    /// for each cluster `a`, upper bounds), and returns an estimate of the
    /// points that will fail the test: the cluster weights times the
    /// thresholds (without the debts, which the stored margins contain).
    fn thresholds(&self, c: &[f64], base: &Iter, bar: &mut [f64]) -> f64 {
        let dim = base.moments.dim();
        let delta: Vec<f64> = c
            .chunks_exact(dim)
            .zip(base.centroids.chunks_exact(dim))
            .map(|(new, old)| self.bounds.dist_up(SqEuclidean.cost(new, old)))
            .collect();
        // The two largest shifts.
        let (mut i1, mut d1, mut d2) = (usize::MAX, 0.0f64, 0.0f64);
        for (j, &dj) in delta.iter().enumerate() {
            if dj > d1 || i1 == usize::MAX {
                d2 = d1;
                d1 = dj;
                i1 = j;
            } else if dj > d2 {
                d2 = dj;
            }
        }
        let mut score = 0.0;
        for (j, b) in bar.iter_mut().enumerate() {
            let other = if j == i1 { d2 } else { d1 };
            *b = self.bounds.bar(base.debt[j], other, delta[j]);
            score += base.moments.weight(j) as f64 * self.bounds.bar(0.0, other, delta[j]);
        }
        score
    }
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct RunStats {
    /// Iterations computed with the skip test.
    pub(crate) replayed: usize,
    /// Of these, those whose baseline was this run's previous iteration.
    pub(crate) from_previous: usize,
    /// Iterations computed in full.
    pub(crate) full: usize,
    /// Points whose distances to all centroids were computed.
    pub(crate) recomputed: usize,
    /// Iterations with an empty cluster (a pass over all points for the
    /// re-seeding costs).
    pub(crate) reseed_passes: usize,
}

/// The end of a run.
pub(crate) struct RunEnd {
    /// `C_T`: the means of the last assignment, re-seeded clusters aside.
    pub(crate) centroids: Vec<f64>,
    pub(crate) converged: bool,
    pub(crate) stats: RunStats,
}

impl Lloyd {
    /// Runs Lloyd's iterations from the centroids `c0` (the seeds), over
    /// `trace` (empty for a fresh run; else the trace of a previous run,
    /// adjusted to the current points: counted in its moments with their
    /// current weights, or labelled [`NONE`]). Leaves in `trace` the trace
    /// of this run, equal to that of a fresh run in everything but the
    /// margins and debts (which are valid bounds either way).
    ///
    /// Iteration `t`: assign every point to its nearest centroid in `C_t`;
    /// form the exact moments; `C_{t+1}` is the mean of each cluster, or,
    /// for an empty cluster, a point drawn by the race in round
    /// `k (t + 1) + j` with probability proportional to `weight * cost` to
    /// its centroid in `C_t` (and to 0 for points already drawn in this
    /// iteration); if none has positive weight the centroid stays. Stop
    /// when no cluster was re-seeded and `sum_j |C_{t+1}(j) - C_t(j)|^2`
    /// (added in cluster order) is at most the tolerance, or after
    /// `max_iterations` assignments.
    pub(crate) fn run(&self, points: &Points, trace: &mut Vec<Iter>, c0: Vec<f64>) -> RunEnd {
        let dim = points.dim();
        let n = points.len();
        let m = c0.len() / dim;
        let old_len = trace.len();
        let mut stats = RunStats::default();
        let mut c = c0;
        let mut t: usize = 0;
        let mut bar = vec![0.0; m];
        let mut best_bar = vec![0.0; m];
        let mut bar32: Vec<f32> = Vec::with_capacity(m);
        loop {
            let forced = if trace.is_empty() {
                trace.push(Iter {
                    centroids: c.clone(),
                    moments: Moments::zeros(m, dim),
                    labels: vec![NONE; n],
                    margins: vec![0.0; n],
                    debt: vec![0.0; m],
                    reseeded: false,
                });
                true
            } else {
                // The baseline: this run's previous iteration, or an old
                // iteration not yet replaced (at or just after `t`); any
                // is a valid starting point, and the one the centroids
                // moved least from leaves the fewest points to recompute.
                // Slot `t` first, so that it wins ties (no copy).
                let last = (t + LOOKAHEAD).min(trace.len());
                let candidates = (t..last).chain(t.checked_sub(1));
                let mut best: Option<(usize, f64)> = None;
                for b in candidates {
                    let score = self.thresholds(&c, &trace[b], &mut bar);
                    if best.is_none_or(|(_, s)| score < s) {
                        best = Some((b, score));
                        best_bar.clone_from(&bar);
                    }
                }
                // There is a candidate: slot `t` exists or `t >= 1`.
                let b = best.map_or(t, |(b, _)| b);
                if t == trace.len() {
                    let copy = trace[b].clone();
                    trace.push(copy);
                } else if b < t {
                    let (lo, hi) = trace.split_at_mut(t);
                    hi[0].copy_from(&lo[b]);
                } else if b > t {
                    let (lo, hi) = trace.split_at_mut(b);
                    lo[t].copy_from(&hi[0]);
                }
                if b + 1 == t {
                    stats.from_previous += 1;
                }
                !self.accelerate && t >= old_len
            };
            let it = &mut trace[t];
            // The test hook loosens the thresholds by `slack`.
            bar32.clear();
            bar32.extend(best_bar.iter().map(|&b| f32_up(b - self.slack)));
            let ctx = PassCtx {
                dim,
                m,
                centroids: &c,
                bar: (!forced).then_some(&bar32[..]),
                debt: if forced { &it.debt } else { &best_bar },
                bounds: self.bounds,
            };
            let out = pass(&ctx, points, &mut it.labels, &mut it.margins);
            if let Some(d) = out.delta {
                it.moments.merge(&d);
            }
            it.centroids.clone_from(&c);
            if !forced {
                it.debt.clone_from(&best_bar);
            }
            if forced {
                stats.full += 1;
            } else {
                stats.replayed += 1;
            }
            stats.recomputed += out.recomputed;
            let it = &trace[t];
            let mut next = c.clone();
            // Moments of the points' current labels: one centroid per
            // non-empty cluster.
            let mut empty = Vec::new();
            for (j, cj) in next.chunks_exact_mut(dim).enumerate() {
                if it.moments.weight(j) == 0 {
                    empty.push(j);
                } else {
                    it.moments.centroid_into(j, cj);
                }
            }
            let mut reseeded = false;
            if !empty.is_empty() {
                stats.reseed_passes += 1;
                let costs = assigned_costs(points, &c, &it.labels);
                let mut w: Vec<f64> = costs
                    .iter()
                    .zip(points.weights())
                    .map(|(&f, &wt)| wt as f64 * f)
                    .collect();
                let mut race = self.race;
                for j in empty {
                    let round = self.k * (t + 1) + j;
                    if let Some(pos) = race.choose(round, points.ids(), &w)
                        && w.get(pos).is_some_and(|&x| x > 0.0)
                    {
                        next[j * dim..(j + 1) * dim].copy_from_slice(points.point(pos));
                        w[pos] = 0.0;
                        reseeded = true;
                    }
                }
            }
            trace[t].reseeded = reseeded;
            let shift: f64 = next
                .chunks_exact(dim)
                .zip(c.chunks_exact(dim))
                .map(|(a, b)| SqEuclidean.cost(a, b))
                .sum();
            t += 1;
            let converged = !reseeded && shift <= self.tol;
            if converged || t >= self.max_iterations {
                trace.truncate(t);
                return RunEnd {
                    centroids: next,
                    converged,
                    stats,
                };
            }
            c = next;
        }
    }
}
