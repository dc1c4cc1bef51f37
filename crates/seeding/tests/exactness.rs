//! Exact unlearning, checked by exact enumeration: for small point sets the
//! distribution of the seed list after Algorithm 3 equals, as rationals,
//! that of seeding the remaining points from scratch (Lemma 5.1); and the
//! same checker catches a wrong unlearner.
#![allow(clippy::unwrap_used)]

use nalgebra::DMatrix;
use seeding::{Dataset, KMeansPlusPlus, L1, PointId, SeedingParams, SqEuclidean};
use seeding_testkit::seeding::{
    Fitted, algorithm3, algorithm3_is_exact_on_small_sets, check_small_removals, fit_distribution,
    keep_later_seeds_unlearner,
};

/// Seven points with duplicates, an outlier, weights and ids unrelated to
/// positions.
pub(crate) fn fixed_set(weighted: bool) -> Dataset {
    let coords = [
        0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 3.0, 1.0, 3.0, 1.0, -2.0, 2.0, 6.0, -3.0,
    ];
    let m = DMatrix::from_column_slice(2, 7, &coords);
    let ids = [40, 11, 25, 3, 99, 7, 60].map(PointId).to_vec();
    if weighted {
        Dataset::with_weights(m, ids, vec![2, 1, 3, 1, 2, 1, 1]).unwrap()
    } else {
        Dataset::with_ids(m, ids).unwrap()
    }
}

#[test]
fn algorithm3_is_exact_on_a_fixed_set_for_every_small_removal() {
    for weighted in [false, true] {
        for k in 1..=3 {
            let kpp = KMeansPlusPlus::new(SeedingParams::new(k).validate().unwrap());
            let checked = check_small_removals(&kpp, &fixed_set(weighted), &algorithm3).unwrap();
            assert_eq!(checked, 7 + 21);
        }
    }
}

#[test]
fn fit_distribution_is_a_distribution_over_distinct_seeds() {
    let kpp = KMeansPlusPlus::new(SeedingParams::new(3).validate().unwrap());
    let dist = fit_distribution(&kpp, &fixed_set(true));
    let total = dist.values().fold(field::Rational::zero(), |a, p| &a + p);
    assert_eq!(total, field::Rational::one());
    // Duplicates of a seed are never seeds themselves: ids 40 and 11 share
    // a location, as do 3 and 99.
    for seeds in dist.keys() {
        assert!(!(seeds.contains(&PointId(40)) && seeds.contains(&PointId(11))));
        assert!(!(seeds.contains(&PointId(3)) && seeds.contains(&PointId(99))));
    }
}

#[test]
fn algorithm3_is_exact_on_random_small_sets_sq_euclidean() {
    algorithm3_is_exact_on_small_sets(SqEuclidean, testdata::cases(64));
}

#[test]
fn algorithm3_is_exact_on_random_small_sets_l1() {
    algorithm3_is_exact_on_small_sets(L1, testdata::cases(24));
}

#[test]
fn the_checker_catches_an_unlearner_that_keeps_later_seeds() {
    let wrong = |f: &Fitted<SqEuclidean>, r: &[PointId], en: &mut seeding::Enumerator| {
        keep_later_seeds_unlearner(f, r, en)
    };
    for weighted in [false, true] {
        let kpp = KMeansPlusPlus::new(SeedingParams::new(3).validate().unwrap());
        let res = check_small_removals(&kpp, &fixed_set(weighted), &wrong);
        assert!(res.is_err(), "the wrong unlearner went unnoticed");
    }
    // With one seed there are no later seeds to keep: the wrong unlearner
    // is then right, and the checker must say so (it is not biased towards
    // failing).
    let kpp = KMeansPlusPlus::new(SeedingParams::new(1).validate().unwrap());
    assert!(check_small_removals(&kpp, &fixed_set(true), &wrong).is_ok());
}
