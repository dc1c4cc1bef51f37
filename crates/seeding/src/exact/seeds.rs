//! K-means++ seeding with the keyed exponential race, and the test that
//! decides, after a change of the data, the first round whose winner moves.

use std::collections::{HashMap, HashSet};

use super::points::Points;
use crate::kmeanspp::race_weight;
use crate::{ExpRace, Metric, PointId, Sampler, SqEuclidean};

/// Below this many points a per-point pass is not worth a thread hop.
#[cfg(feature = "parallel")]
pub(crate) const PAR_MIN_POINTS: usize = 2048;

/// The seeds of a run, in the order chosen, with their coordinates.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SeedList {
    pub(crate) ids: Vec<PointId>,
    pub(crate) centers: Vec<f64>,
}

impl SeedList {
    pub(crate) fn len(&self) -> usize {
        self.ids.len()
    }
}

/// Takes a new seed at `center` into account: costs only go down, and the
/// race weight of a point is `weight * cost` (as `Nearest::add_seed`).
fn add_seed(points: &Points, center: &[f64], cost: &mut [f64], w: &mut [f64]) {
    let dim = points.dim();
    let body = |((x, &wt), (c, wr)): ((&[f64], &u64), (&mut f64, &mut f64))| {
        let d = SqEuclidean.cost(x, center);
        if d < *c {
            *c = d;
            *wr = wt as f64 * d;
        }
    };
    #[cfg(feature = "parallel")]
    if points.len() >= PAR_MIN_POINTS {
        use rayon::prelude::*;
        points
            .coords()
            .par_chunks_exact(dim)
            .zip(points.weights().par_iter())
            .zip(cost.par_iter_mut().zip(w.par_iter_mut()))
            .with_min_len(1024)
            .for_each(body);
        return;
    }
    points
        .coords()
        .chunks_exact(dim)
        .zip(points.weights())
        .zip(cost.iter_mut().zip(w.iter_mut()))
        .for_each(body);
}

/// K-means++ seeding of `points` (weighted, squared Euclidean cost) with
/// rounds `0..k` of `race`: each round draws a point with probability
/// proportional to `weight * cost` to the seeds so far (round 0: to its
/// weight); it stops early when no point has positive weight left. The
/// result depends on the points' ids, coordinates and weights, never on
/// their positions. O(n k d).
pub(crate) fn seed(points: &Points, k: usize, race: ExpRace) -> SeedList {
    let n = points.len();
    let mut cost = vec![f64::INFINITY; n];
    let mut w: Vec<f64> = points.weights().iter().map(|&x| x as f64).collect();
    let mut out = SeedList {
        ids: Vec::with_capacity(k),
        centers: Vec::with_capacity(k * points.dim()),
    };
    let mut race = race;
    for round in 0..k {
        let Some(pos) = race.choose(round, points.ids(), &w) else {
            break;
        };
        out.ids.push(points.ids()[pos]);
        out.centers.extend_from_slice(points.point(pos));
        add_seed(points, points.point(pos), &mut cost, &mut w);
    }
    out
}

/// What changed about the points, for the seeding test.
pub(crate) struct SeedChanges<'a> {
    /// Ids no longer present (or present with new coordinates).
    pub(crate) removed: &'a HashSet<PointId>,
    /// Ids whose weight changed: old and new weight.
    pub(crate) reweighted: &'a HashMap<PointId, (u64, u64)>,
    /// Positions (in the new points) of the added and reweighted points.
    pub(crate) changed: &'a [usize],
}

/// The first round whose winner differs when seeding `points` (the data
/// after the changes) instead of the data `old` was drawn from, or `None`
/// when the seeds stay. O((|changed| + k) k d), no pass over the data.
///
/// Given the same seeds before round `r`, a point that did not change has
/// the same race weight `w * cost` and so the same key in round `r`. The
/// race winner is the least `(key, id)`; so the winner of round `r` stays
/// unless it was removed, its weight went down (its key went up), or a
/// changed point now has a smaller `(key, id)`. When the old seeding
/// stopped early (no positive weight left), it goes on iff a changed point
/// now has positive weight.
pub(crate) fn first_changed_round(
    points: &Points,
    k: usize,
    race: ExpRace,
    old: &SeedList,
    ch: &SeedChanges<'_>,
) -> Option<usize> {
    let mut cost = vec![f64::INFINITY; ch.changed.len()];
    let ids: Vec<PointId> = ch.changed.iter().map(|&p| points.ids()[p]).collect();
    let mut race = race;
    for round in 0..k {
        let race_weight_of = |pos: usize, cost: f64| {
            let w = points.weights()[pos] as f64;
            if round == 0 { w } else { w * cost }
        };
        let Some(&win) = old.ids.get(round) else {
            // The old seeding stopped here: unchanged points all have race
            // weight 0 (their costs are the same).
            let goes_on = ch
                .changed
                .iter()
                .zip(&cost)
                .any(|(&p, &c)| race_weight_of(p, c) > 0.0);
            return goes_on.then_some(round);
        };
        if ch.removed.contains(&win) {
            return Some(round);
        }
        if let Some(&(before, after)) = ch.reweighted.get(&win)
            && after < before
        {
            return Some(round);
        }
        // The winner is present with the same coordinates (it was not
        // removed); if not, the caller's changes were inconsistent, and
        // saying "changed" is the safe answer.
        let Some(wpos) = points.position(win) else {
            return Some(round);
        };
        let d = points.dim();
        let held = race_weight(
            &SqEuclidean,
            points.point(wpos),
            points.weights()[wpos],
            &old.centers[..round * d],
        );
        // The changed points challenge the winner as newcomers do
        // (`Sampler::challenge`); a reweighted winner, whose weight went
        // up, keeps its round and is left out.
        let weights: Vec<f64> = (ch.changed.iter().zip(&cost))
            .map(|(&p, &c)| {
                if points.ids()[p] == win {
                    0.0
                } else {
                    race_weight_of(p, c)
                }
            })
            .collect();
        let mut no_total = || f64::NAN;
        if race
            .challenge(round, win, held, &mut no_total, &ids, &weights)
            .is_some()
        {
            return Some(round);
        }
        let s = &old.centers[round * points.dim()..(round + 1) * points.dim()];
        for (&p, c) in ch.changed.iter().zip(cost.iter_mut()) {
            let d = SqEuclidean.cost(points.point(p), s);
            if d < *c {
                *c = d;
            }
        }
    }
    None
}
