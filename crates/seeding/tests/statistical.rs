//! Exact unlearning with an ordinary RNG, tested statistically at a size
//! too large to enumerate (n = 40, k = 3): the seed lists of
//! unlearn-then-observe and retrain-then-observe, with independent seeds
//! per trial, must pass a two-sample chi-square test, and the same test
//! must reject the wrong unlearner (so it has the power to fail).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use nalgebra::DMatrix;
use seeding::{Dataset, KMeansPlusPlus, PointId, RngSampler, Seeding, SeedingParams};
use seeding_testkit::seeding::keep_later_seeds_unlearner;

const TRIALS: usize = 12_000;

/// Three tight clusters of 12 points and 4 outliers; the removal set is two
/// of the outliers, which K-means++ picks as seeds most of the time.
fn data() -> (Dataset, Vec<PointId>) {
    let mut coords = Vec::new();
    for (cx, cy) in [(0.0, 0.0), (10.0, 0.0), (0.0, 10.0)] {
        for i in 0..12 {
            coords.push(cx + f64::from(i % 4) * 0.5);
            coords.push(cy + f64::from(i / 4) * 0.5);
        }
    }
    coords.extend([30.0, 30.0, 31.0, 30.0, -20.0, 5.0, 5.0, -20.0]);
    let data = Dataset::new(DMatrix::from_vec(2, 40, coords)).unwrap();
    (data, vec![PointId(36), PointId(37)])
}

/// Which of the four groups (three clusters, outliers) a point is in.
fn group(id: PointId) -> usize {
    usize::try_from(id.0 / 12).unwrap().min(3)
}

fn cell(seeds: &[PointId]) -> Vec<usize> {
    seeds.iter().map(|&id| group(id)).collect()
}

/// Wilson-Hilferty normal score of the two-sample chi-square statistic
/// over the cells of two equal-size samples (cells with fewer than 10
/// observations in all pooled into one).
fn chi_square_z(a: &BTreeMap<Vec<usize>, usize>, b: &BTreeMap<Vec<usize>, usize>) -> f64 {
    let mut keys: Vec<&Vec<usize>> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let (mut chi, mut cells, mut pooled) = (0.0, 0usize, (0usize, 0usize));
    for k in keys {
        let (x, y) = (
            a.get(k).copied().unwrap_or(0),
            b.get(k).copied().unwrap_or(0),
        );
        if x + y < 10 {
            pooled = (pooled.0 + x, pooled.1 + y);
            continue;
        }
        chi += (x as f64 - y as f64).powi(2) / (x + y) as f64;
        cells += 1;
    }
    if pooled.0 + pooled.1 > 0 {
        chi += (pooled.0 as f64 - pooled.1 as f64).powi(2) / (pooled.0 + pooled.1) as f64;
        cells += 1;
    }
    let df = (cells - 1) as f64;
    let h = 2.0 / (9.0 * df);
    ((chi / df).cbrt() - (1.0 - h)) / h.sqrt()
}

fn observe(
    unlearn: impl Fn(
        Seeding<seeding::SqEuclidean, RngSampler<rand_chacha::ChaCha8Rng>>,
        &[PointId],
    ) -> Vec<PointId>,
) -> (BTreeMap<Vec<usize>, usize>, BTreeMap<Vec<usize>, usize>) {
    let (data, removal) = data();
    let kpp = KMeansPlusPlus::new(SeedingParams::new(3).validate().unwrap());
    let rest = data.without(&removal).unwrap();
    let (mut unlearned, mut retrained) = (BTreeMap::new(), BTreeMap::new());
    for t in 0..TRIALS {
        let s = kpp.fit(
            data.clone(),
            RngSampler::new(testdata::rng(&format!("unlearn-{t}"))),
        );
        *unlearned.entry(cell(&unlearn(s, &removal))).or_insert(0) += 1;
        let r = kpp.fit(
            rest.clone(),
            RngSampler::new(testdata::rng(&format!("retrain-{t}"))),
        );
        *retrained.entry(cell(r.seed_ids())).or_insert(0) += 1;
    }
    (unlearned, retrained)
}

#[test]
fn unlearning_with_a_real_rng_matches_retraining() {
    let (unlearned, retrained) = observe(|mut s, r| {
        s.unlearn(r).unwrap();
        s.seed_ids().to_vec()
    });
    let z = chi_square_z(&unlearned, &retrained);
    // One-sided p of about 2e-4 at z = 3.5.
    assert!(z < 3.5, "z = {z}: {unlearned:?} vs {retrained:?}");
}

#[test]
fn the_same_test_rejects_the_wrong_unlearner() {
    let (wrong, retrained) = observe(|s, r| {
        let (fitted, mut sampler) = s.replace_sampler(());
        keep_later_seeds_unlearner(&fitted, r, &mut sampler)
    });
    let z = chi_square_z(&wrong, &retrained);
    assert!(
        z > 3.5,
        "z = {z}: the test cannot tell the wrong unlearner apart"
    );
}
