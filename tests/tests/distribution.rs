//! Exact unlearning in distribution (the paper's criterion, Section 3) on
//! a tiny federation of two clients:
//!
//! 1. exact enumeration of every seeding branch of both clients (with
//!    `seeding::Enumerator`): the distribution of the server's input `q`
//!    after Algorithm 3 with exact counts equals, as rationals, the
//!    distribution of `q` when training on the remaining data; the paper's
//!    Algorithm 4 as written (counts kept unless the client reseeds) does
//!    not;
//! 2. the federation itself, over many federation seeds: the decoded `q`
//!    after unlearning passes a chi-square goodness-of-fit test against
//!    that exact distribution, and fails it against the distribution of
//!    another removal.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use field::Rational;
use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
use nalgebra::DMatrix;
use num_bigint::{BigInt, BigUint};
use num_traits::FromPrimitive;
use seeding::{
    Branch, Dataset, Enumerator, KMeansPlusPlus, PointId, Quantizer, Seeding, SeedingParams,
};

type Hist = Vec<(BigUint, u64)>;
type Dist = BTreeMap<Hist, Rational>;

/// Coordinates are multiples of 1/8, so every D^2 weight is a multiple of
/// 1/64: times 4096 it is an exact integer.
fn clients() -> [Dataset; 2] {
    let a = [-0.375, -0.25, 0.125, 0.25, 0.5];
    let b = [-0.5, -0.125, 0.25, 0.375];
    [
        Dataset::new(DMatrix::from_column_slice(1, a.len(), &a)).unwrap(),
        Dataset::new(DMatrix::from_column_slice(1, b.len(), &b)).unwrap(),
    ]
}

const K: usize = 2;
const GAMMA: f64 = 0.25;

fn exact(w: f64) -> BigInt {
    let v = w * 4096.0;
    assert!(
        v >= 0.0 && v.fract() == 0.0,
        "weight {w} is not a multiple of 1/4096"
    );
    BigInt::from_f64(v).unwrap()
}

fn path_probability(trail: &[Branch]) -> Rational {
    let mut p = Rational::one();
    for b in trail {
        let total: BigInt = b.weights.iter().map(|&w| exact(w)).sum();
        p = &p * &Rational::new(exact(b.weights[b.chosen]), total).unwrap();
    }
    p
}

fn add(dist: &mut Dist, h: Hist, p: &Rational) {
    let e = dist.entry(h).or_insert_with(Rational::zero);
    *e = &*e + p;
}

fn histogram<S>(s: &Seeding<seeding::SqEuclidean, S>, q: &Quantizer) -> Hist {
    q.histogram(s.centers(), s.sizes()).unwrap()
}

/// The distribution of one client's histogram when it seeds `data`.
fn fit_dist(data: &Dataset, q: &Quantizer) -> Dist {
    let kpp = KMeansPlusPlus::new(SeedingParams::new(K).validate().unwrap());
    let mut en = Enumerator::new();
    let mut dist = Dist::new();
    loop {
        let s = kpp.fit(data.clone(), &mut en);
        add(&mut dist, histogram(&s, q), &path_probability(en.trail()));
        if !en.advance() {
            return dist;
        }
    }
}

/// The distribution of one client's histogram after seeding `data` and
/// unlearning `removal` by Algorithm 3; with `stale`, the histogram is
/// kept unless the client reseeds (the paper's Algorithm 4, line 3).
fn unlearn_dist(data: &Dataset, removal: &[PointId], q: &Quantizer, stale: bool) -> Dist {
    let kpp = KMeansPlusPlus::new(SeedingParams::new(K).validate().unwrap());
    let mut en = Enumerator::new();
    let mut dist = Dist::new();
    loop {
        let (fitted, _) = kpp.fit(data.clone(), &mut en).replace_sampler(());
        let p = path_probability(en.trail());
        let mut inner = Enumerator::new();
        loop {
            let mut s = fitted.clone();
            let report = s.unlearn_with(removal, &mut inner).unwrap();
            let h = if stale && !report.reseeded() {
                histogram(&fitted, q)
            } else {
                histogram(&s, q)
            };
            add(&mut dist, h, &(&p * &path_probability(inner.trail())));
            if !inner.advance() {
                break;
            }
        }
        if !en.advance() {
            return dist;
        }
    }
}

/// The distribution of the sum of two independent histograms.
fn convolve(a: &Dist, b: &Dist) -> Dist {
    let mut out = Dist::new();
    for (ha, pa) in a {
        for (hb, pb) in b {
            let mut sum: BTreeMap<BigUint, u64> = ha.iter().cloned().collect();
            for (k, c) in hb {
                *sum.entry(k.clone()).or_insert(0) += c;
            }
            add(&mut out, sum.into_iter().collect(), &(pa * pb));
        }
    }
    out
}

fn retrain_dist(removal: &[PointId], q: &Quantizer) -> Dist {
    let [a, b] = clients();
    convolve(&fit_dist(&a.without(removal).unwrap(), q), &fit_dist(&b, q))
}

#[test]
fn exact_enumeration_unlearning_gives_the_distribution_of_retraining() {
    let q = Quantizer::new(1, GAMMA).unwrap();
    let [a, b] = clients();
    for id in 0..5 {
        let removal = [PointId(id)];
        let retrained = retrain_dist(&removal, &q);
        let total = retrained.values().fold(Rational::zero(), |s, p| &s + p);
        assert_eq!(total, Rational::one());
        let unlearned = convolve(&unlearn_dist(&a, &removal, &q, false), &fit_dist(&b, &q));
        assert_eq!(unlearned, retrained, "removing point {id}");
        // Negative control: stale counts are not exact.
        let stale = convolve(&unlearn_dist(&a, &removal, &q, true), &fit_dist(&b, &q));
        assert_ne!(stale, retrained, "removing point {id}");
    }
}

/// Wilson-Hilferty normal score of the chi-square goodness-of-fit
/// statistic of `observed` (counts) against `expected` (probabilities);
/// cells expecting fewer than 5 observations are pooled, and so is
/// everything observed outside the expected support.
fn gof_z(observed: &BTreeMap<Hist, usize>, expected: &Dist, n: usize) -> f64 {
    let n_f = n as f64;
    let (mut chi, mut cells) = (0.0, 0usize);
    let (mut pool_o, mut pool_e) = (0.0, 0.0);
    for (h, p) in expected {
        let e = p.to_f64() * n_f;
        let o = observed.get(h).copied().unwrap_or(0) as f64;
        if e < 5.0 {
            pool_o += o;
            pool_e += e;
        } else {
            chi += (o - e).powi(2) / e;
            cells += 1;
        }
    }
    pool_o += observed
        .iter()
        .filter(|(h, _)| !expected.contains_key(*h))
        .map(|(_, &c)| c as f64)
        .sum::<f64>();
    if pool_e > 0.0 {
        chi += (pool_o - pool_e).powi(2) / pool_e;
        cells += 1;
    } else if pool_o > 0.0 {
        return f64::INFINITY;
    }
    let df = (cells - 1) as f64;
    let h = 2.0 / (9.0 * df);
    ((chi / df).cbrt() - (1.0 - h)) / h.sqrt()
}

/// The configuration of federation seed `seed`: aggregates of two clients
/// and one lone removal round, both privacy policies
/// (docs/threat-model.md P4, U3) lowered, to enumerate exactly.
fn lowered(seed: u64) -> mufc::ValidConfig {
    FederationConfig::paper(K)
        .gamma(GAMMA)
        .seed(seed)
        .min_clients(2)
        .min_updating_clients(1)
        .validate()
        .unwrap()
}

#[test]
fn the_federation_unlearns_with_the_distribution_of_retraining() {
    const TRIALS: usize = 3000;
    let [a, b] = clients();
    let removal = [PointId(2)];
    let mut observed: BTreeMap<Hist, usize> = BTreeMap::new();
    for seed in 0..TRIALS as u64 {
        let config = lowered(seed);
        let mut fed = Federation::new(vec![a.clone(), b.clone()], &config).unwrap();
        fed.remove(&RemovalRequest::points(ClientId(0), removal.to_vec()))
            .unwrap();
        let q: Hist = fed
            .server()
            .counts()
            .iter()
            .map(|(k, &c)| (k.clone(), c))
            .collect();
        *observed.entry(q).or_insert(0) += 1;
    }
    let quantizer = Quantizer::new(1, GAMMA).unwrap();
    let right = retrain_dist(&removal, &quantizer);
    let z = gof_z(&observed, &right, TRIALS);
    assert!(
        right.len() >= 4,
        "too few outcomes to test: {}",
        right.len()
    );
    assert!(z < 3.5, "unlearned q does not follow retraining: z = {z}");
    // The test has power: the distribution of another removal (same total)
    // is rejected.
    let wrong = retrain_dist(&[PointId(3)], &quantizer);
    assert_ne!(wrong, right);
    let z_wrong = gof_z(&observed, &wrong, TRIALS);
    assert!(
        z_wrong > 6.0,
        "the test cannot tell another removal apart: z = {z_wrong}"
    );
}

/// A small tree (issue 16): two groups of two clients under a root. After
/// a removal in group 0, the pair (group 0's `q`, group 1's `q`) follows
/// the exact distribution of retraining, the product of the groups'
/// (independent) distributions, enumerated exactly; the root's `q` is
/// their sum; and the test tells another removal apart.
#[test]
fn a_small_tree_unlearns_with_the_distribution_of_retraining() {
    use mufc::{Layout, NodeId};
    const TRIALS: usize = 2000;
    let [a, b] = clients();
    let removal = [PointId(2)];
    let data = vec![
        (ClientId(0), a.clone()),
        (ClientId(1), b.clone()),
        (ClientId(2), a.clone()),
        (ClientId(3), b.clone()),
    ];
    let layout = Layout::from_groups(
        vec![
            vec![ClientId(0), ClientId(1)],
            vec![ClientId(2), ClientId(3)],
        ],
        Some(2),
    )
    .unwrap();
    let hist = |fed: &Federation, n: usize| -> Hist {
        fed.node(NodeId(n))
            .unwrap()
            .counts()
            .iter()
            .map(|(k, &c)| (k.clone(), c))
            .collect()
    };
    let mut observed: BTreeMap<Hist, usize> = BTreeMap::new();
    for seed in 0..TRIALS as u64 {
        let config = lowered(seed);
        let mut fed = Federation::with_layout(data.clone(), &config, layout.clone()).unwrap();
        fed.remove(&RemovalRequest::points(ClientId(0), removal.to_vec()))
            .unwrap();
        assert_eq!(fed.last_involvement().unwrap().groups, vec![0]);
        let (g0, g1) = (hist(&fed, 0), hist(&fed, 1));
        // The root's counts are the groups' sum (not enumerated again).
        let mut root: BTreeMap<BigUint, u64> = g0.iter().cloned().collect();
        for (k, c) in &g1 {
            *root.entry(k.clone()).or_insert(0) += c;
        }
        assert_eq!(fed.server().counts(), &root);
        // The pair as one key: group 0's bins, then group 1's shifted
        // past every bin of the grid.
        let shift = BigUint::from(1u32) << 32;
        let key: Hist = g0
            .into_iter()
            .chain(g1.into_iter().map(|(k, c)| (k + &shift, c)))
            .collect();
        *observed.entry(key).or_insert(0) += 1;
    }
    let q = Quantizer::new(1, GAMMA).unwrap();
    let pair = |g0: &Dist, g1: &Dist| -> Dist {
        let shift = BigUint::from(1u32) << 32;
        let shifted: Dist = g1
            .iter()
            .map(|(h, p)| (h.iter().map(|(k, c)| (k + &shift, *c)).collect(), p.clone()))
            .collect();
        convolve(g0, &shifted)
    };
    let group1 = convolve(&fit_dist(&a, &q), &fit_dist(&b, &q));
    let right = pair(&retrain_dist(&removal, &q), &group1);
    let total = right.values().fold(Rational::zero(), |s, p| &s + p);
    assert_eq!(total, Rational::one());
    let z = gof_z(&observed, &right, TRIALS);
    assert!(z < 3.5, "the tree's q does not follow retraining: z = {z}");
    let wrong = pair(&retrain_dist(&[PointId(3)], &q), &group1);
    let z_wrong = gof_z(&observed, &wrong, TRIALS);
    assert!(
        z_wrong > 6.0,
        "the test cannot tell another removal apart: z = {z_wrong}"
    );
}
