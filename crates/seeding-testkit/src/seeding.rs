//! Exactness checkers for the `seeding` crate.
//!
//! [`fit_distribution`] and [`unlearn_distribution`] walk every branch of
//! K-means++ seeding (and of an unlearner) with an
//! [`Enumerator`] and add up the exact probabilities
//! of the resulting ordered seed lists as [`Rational`]s. Exact unlearning
//! (Lemma 5.1 of the paper) is the equality of the two distributions; a
//! wrong unlearner such as [`keep_later_seeds_unlearner`] must be caught.
//!
//! Weights must be integers below 2^53 for the probabilities to be exact:
//! use integer coordinates and integer weights with
//! [`SqEuclidean`](seeding::SqEuclidean) or
//! [`L1`](seeding::L1).

use std::collections::{BTreeMap, HashSet};

use field::Rational;
use nalgebra::DMatrix;
use num_bigint::BigInt;
use num_traits::FromPrimitive;
use proptest::prelude::*;
use seeding::{
    Branch, Dataset, Enumerator, KMeansPlusPlus, Metric, PointId, Sampler, Seeding, SeedingParams,
};

/// An exact distribution over ordered seed lists.
pub type SeedListDist = BTreeMap<Vec<PointId>, Rational>;

/// A fitted seeding with no sampler of its own (unlearners get one).
pub type Fitted<M> = Seeding<M, ()>;

/// An unlearner under test: from a fitted state, a removal set and a
/// sampler for its own random choices, the new ordered seed list.
pub trait Unlearner<M: Metric> {
    /// Unlearns `removal` from `fitted`.
    fn unlearn(
        &self,
        fitted: &Fitted<M>,
        removal: &[PointId],
        sampler: &mut Enumerator,
    ) -> Vec<PointId>;
}

impl<M: Metric, F> Unlearner<M> for F
where
    F: Fn(&Fitted<M>, &[PointId], &mut Enumerator) -> Vec<PointId>,
{
    fn unlearn(
        &self,
        fitted: &Fitted<M>,
        removal: &[PointId],
        sampler: &mut Enumerator,
    ) -> Vec<PointId> {
        self(fitted, removal, sampler)
    }
}

fn exact(w: f64) -> BigInt {
    assert!(
        w >= 0.0 && w.fract() == 0.0 && w < 9_007_199_254_740_992.0,
        "weight {w} is not an exact integer: use integer coordinates"
    );
    BigInt::from_f64(w).unwrap()
}

/// The exact probability of the path recorded in `trail`: the product over
/// choices of `w[chosen] / sum(w)`.
pub fn path_probability(trail: &[Branch]) -> Rational {
    let mut p = Rational::one();
    for b in trail {
        let total: BigInt = b.weights.iter().map(|&w| exact(w)).sum();
        let num = exact(b.weights[b.chosen]);
        p = &p * &Rational::new(num, total).unwrap();
    }
    p
}

/// Every outcome of seeding `data`, with its exact probability (one entry
/// per path, not merged).
pub fn fit_paths<M: Metric>(kpp: &KMeansPlusPlus<M>, data: &Dataset) -> Vec<(Fitted<M>, Rational)> {
    let mut en = Enumerator::new();
    let mut out = Vec::new();
    loop {
        let s = kpp.fit(data.clone(), &mut en);
        let (s, _) = s.replace_sampler(());
        assert!(
            !en.diverged(),
            "seeding is not deterministic given its choices"
        );
        out.push((s, path_probability(en.trail())));
        if !en.advance() {
            return out;
        }
    }
}

/// The exact distribution of the ordered seed list of `kpp` on `data`.
pub fn fit_distribution<M: Metric>(kpp: &KMeansPlusPlus<M>, data: &Dataset) -> SeedListDist {
    let mut dist = SeedListDist::new();
    for (s, p) in fit_paths(kpp, data) {
        add(&mut dist, s.seed_ids().to_vec(), &p);
    }
    dist
}

fn add(dist: &mut SeedListDist, key: Vec<PointId>, p: &Rational) {
    let e = dist.entry(key).or_insert_with(Rational::zero);
    *e = &*e + p;
}

/// The exact distribution of the seed list after `unlearner` removes
/// `removal` from the outcome of seeding: every path of the seeding
/// (`paths`, from [`fit_paths`]) times every path of the unlearner's own
/// random choices.
pub fn unlearn_distribution<M: Metric, U: Unlearner<M> + ?Sized>(
    paths: &[(Fitted<M>, Rational)],
    removal: &[PointId],
    unlearner: &U,
) -> SeedListDist {
    distribution_after(paths, |fitted, en| unlearner.unlearn(fitted, removal, en))
}

/// The exact distribution of the seed list that `update` (a deterministic
/// function of a fitted state and its own choices) leaves: every path of
/// the seeding (`paths`, from [`fit_paths`]) times every path of the
/// update's choices.
pub fn distribution_after<M: Metric>(
    paths: &[(Fitted<M>, Rational)],
    mut update: impl FnMut(&Fitted<M>, &mut Enumerator) -> Vec<PointId>,
) -> SeedListDist {
    let mut dist = SeedListDist::new();
    for (fitted, p) in paths {
        let mut en = Enumerator::new();
        loop {
            let seeds = update(fitted, &mut en);
            assert!(
                !en.diverged(),
                "the update is not deterministic given its choices"
            );
            let q = path_probability(en.trail());
            add(&mut dist, seeds, &(p * &q));
            if !en.advance() {
                break;
            }
        }
    }
    dist
}

/// Algorithm 3 as implemented by [`Seeding::unlearn_with`].
pub fn algorithm3<M: Metric>(
    fitted: &Fitted<M>,
    removal: &[PointId],
    sampler: &mut Enumerator,
) -> Vec<PointId> {
    let mut s = fitted.clone();
    s.unlearn_with(removal, sampler).unwrap();
    s.seed_ids().to_vec()
}

/// A deliberately wrong unlearner (the negative control): every removed
/// seed is replaced in place by a D^ell sample against all the other
/// remaining seeds, and the seeds chosen after it are kept. Generic over
/// the sampler so that statistical tests can run it with a real RNG.
pub fn keep_later_seeds_unlearner<M: Metric, X, S: Sampler + ?Sized>(
    fitted: &Seeding<M, X>,
    removal: &[PointId],
    sampler: &mut S,
) -> Vec<PointId> {
    let gone: HashSet<PointId> = removal.iter().copied().collect();
    let data = fitted.data().without(removal).unwrap();
    let metric = fitted.metric();
    let mut seeds: Vec<Option<PointId>> = fitted
        .seed_ids()
        .iter()
        .map(|id| (!gone.contains(id)).then_some(*id))
        .collect();
    for j in 0..seeds.len() {
        if seeds[j].is_some() {
            continue;
        }
        let others: Vec<&[f64]> = seeds
            .iter()
            .flatten()
            .map(|id| data.point(data.position(*id).unwrap()))
            .collect();
        let weights: Vec<f64> = (0..data.len())
            .map(|p| {
                let x = data.point(p);
                let d = others
                    .iter()
                    .map(|c| metric.cost(x, c))
                    .fold(f64::INFINITY, f64::min);
                data.weight(p) as f64 * if others.is_empty() { 1.0 } else { d }
            })
            .collect();
        seeds[j] = sampler.choose(j, data.ids(), &weights).map(|p| data.id(p));
    }
    seeds.into_iter().flatten().collect()
}

/// Compares the distribution of `unlearner` on every removal set of size 1
/// and 2 with that of seeding the remaining points from scratch; returns
/// the number of removal sets checked.
///
/// # Errors
///
/// A description of the first removal set where the distributions differ.
pub fn check_small_removals<M: Metric, U: Unlearner<M> + ?Sized>(
    kpp: &KMeansPlusPlus<M>,
    data: &Dataset,
    unlearner: &U,
) -> Result<usize, String> {
    let paths = fit_paths(kpp, data);
    let total: Rational = paths.iter().fold(Rational::zero(), |acc, (_, p)| &acc + p);
    assert_eq!(total, Rational::one(), "fit probabilities must add up to 1");
    let sets = small_sets(data.ids());
    for r in &sets {
        let retrained = fit_distribution(kpp, &data.without(r).unwrap());
        let unlearned = unlearn_distribution(&paths, r, unlearner);
        if retrained != unlearned {
            return Err(format!(
                "removing {r:?}: retrain gives {retrained:?}, unlearning gives {unlearned:?}"
            ));
        }
    }
    Ok(sets.len())
}

/// A small point set for exact enumeration: `n` points in `dim`
/// dimensions with integer coordinates in `[-3, 3]` (so duplicates are
/// common), ids shuffled away from positions, and optional weights 1..=3.
pub fn arb_small_dataset() -> impl Strategy<Value = Dataset> {
    (1usize..=2, 2usize..=7)
        .prop_flat_map(|(dim, n)| {
            (
                Just(dim),
                prop::collection::vec(-3i32..=3, dim * n),
                prop::collection::vec(1u64..=3, n),
                any::<bool>(),
                Just(
                    (0..n as u64)
                        .map(|i| PointId(i * 7 + 3))
                        .collect::<Vec<_>>(),
                )
                .prop_shuffle(),
            )
        })
        .prop_map(|(dim, coords, weights, weighted, ids)| {
            let n = ids.len();
            let m = DMatrix::from_iterator(dim, n, coords.into_iter().map(f64::from));
            if weighted {
                Dataset::with_weights(m, ids, weights).unwrap()
            } else {
                Dataset::with_ids(m, ids).unwrap()
            }
        })
}

/// Every set of one and of two of `ids`: the removals and additions the
/// exact checks enumerate.
pub fn small_sets(ids: &[PointId]) -> Vec<Vec<PointId>> {
    let mut sets: Vec<Vec<PointId>> = ids.iter().map(|&a| vec![a]).collect();
    for i in 0..ids.len() {
        for j in i + 1..ids.len() {
            sets.push(vec![ids[i], ids[j]]);
        }
    }
    sets
}

/// Runs `check` (an exact check such as [`check_small_removals`]) on
/// `cases` random small point sets with k in 1..=3, failing with its
/// description of the first difference.
pub fn on_small_sets<M: Metric + 'static>(
    metric: M,
    cases: u32,
    check: impl Fn(&KMeansPlusPlus<M>, &Dataset) -> Result<usize, String>,
) {
    let config = proptest::test_runner::Config {
        cases,
        failure_persistence: None,
        ..Default::default()
    };
    proptest::proptest!(config, |(data in arb_small_dataset(), k in 1usize..=3)| {
        let kpp = KMeansPlusPlus::with_metric(SeedingParams::new(k).validate().unwrap(), metric.clone());
        let res = check(&kpp, &data);
        prop_assert!(res.is_ok(), "{}", res.unwrap_err());
    });
}

/// The property: for random small point sets and k in 1..=3, Algorithm 3
/// is exact for every removal set of size 1 and 2.
pub fn algorithm3_is_exact_on_small_sets<M: Metric + 'static>(metric: M, cases: u32) {
    on_small_sets(metric, cases, |kpp, data| {
        check_small_removals(kpp, data, &algorithm3::<M>)
    });
}

/// A uniform draw in `(0, 1]` from 53 random bits (never 0, so that
/// `ln` is finite).
pub fn unit(rng: &mut (impl Rng + ?Sized)) -> f64 {
    ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
}

/// The Gaussian set of the paper's Appendix M.1, unscaled: `k` centres
/// uniform in the unit hypercube of dimension `dim`, `per` points around
/// each, spherical with variance 0.5 per axis (Box-Muller). The seeding
/// bench and examples share it, so their figures are on the same data.
///
/// # Panics
///
/// Never for `dim, k, per >= 1`: every coordinate is finite.
pub fn paper_gaussian(rng: &mut (impl Rng + ?Sized), dim: usize, k: usize, per: usize) -> Dataset {
    let centres: Vec<f64> = (0..k * dim).map(|_| unit(rng)).collect();
    let sd = 0.5f64.sqrt();
    let mut coords = Vec::with_capacity(k * per * dim);
    for c in centres.chunks_exact(dim) {
        for _ in 0..per {
            for &m in c {
                let (u, v) = (unit(rng), unit(rng));
                coords.push(m + sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos());
            }
        }
    }
    // Finite coordinates: `u > 0`, so `ln u` is finite.
    #[allow(clippy::expect_used)]
    Dataset::new(DMatrix::from_vec(dim, k * per, coords)).expect("finite data")
}
