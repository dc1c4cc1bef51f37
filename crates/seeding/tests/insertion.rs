//! Insertion, the counterpart of Algorithm 3: with the keyed exponential
//! race, any interleaving of insertions and removals leaves, bit for bit,
//! the seeding of the points present; by exact enumeration (rationals) the
//! inserted seeding has the law of seeding all the points with any sampler;
//! a wrong inserter is caught; bad requests change nothing.
#![allow(clippy::unwrap_used)]

use nalgebra::DMatrix;
use proptest::prelude::*;
use seeding::{
    Cosine, Dataset, ExpRace, InsertOutcome, KMeansPlusPlus, L1, Metric, PointId, SeedingError,
    SeedingParams, SqEuclidean,
};
use seeding_testkit::insertion::{
    check_small_insertions, insertion, insertion_is_exact_on_small_sets, keep_seeds_inserter,
};

use crate::bit_identity::{arb_dataset, assert_same};
use crate::exactness::fixed_set;

/// One request: add (`true`) or remove some of the points picked.
#[derive(Clone, Debug)]
struct Request {
    add: bool,
    hit_seed: bool,
    picks: Vec<usize>,
}

fn arb_requests() -> impl Strategy<Value = Vec<Request>> {
    prop::collection::vec(
        (
            any::<bool>(),
            any::<bool>(),
            prop::collection::vec(any::<usize>(), 1..=4),
        )
            .prop_map(|(add, hit_seed, picks)| Request {
                add,
                hit_seed,
                picks,
            }),
        1..=8,
    )
}

fn pick(from: &[PointId], picks: &[usize]) -> Vec<PointId> {
    let mut out: Vec<PointId> = Vec::new();
    for &p in picks {
        let id = from[p % from.len()];
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

/// Starts from the points of `all` that `present` keeps, then serves the
/// requests; after each one, the seeding is that of the points present.
fn interleave<M: Metric + 'static>(
    metric: M,
    all: &Dataset,
    present: &[bool],
    k: usize,
    seed: u64,
    requests: Vec<Request>,
) {
    let kpp = KMeansPlusPlus::with_metric(SeedingParams::new(k).validate().unwrap(), metric);
    let mut absent: Vec<PointId> = all
        .ids()
        .iter()
        .zip(present.iter().cycle())
        .filter(|(_, keep)| !**keep)
        .map(|(id, _)| *id)
        .collect();
    let mut s = kpp.fit(all.without(&absent).unwrap(), ExpRace::new(seed));
    for req in requests {
        let seeds_before = s.seed_ids().to_vec();
        let outcome = if req.add && !absent.is_empty() {
            let ids = pick(&absent, &req.picks);
            let report = s.insert(&all.only(&ids).unwrap()).unwrap();
            assert_eq!(report.inserted, ids.len());
            absent.retain(|id| !ids.contains(id));
            Some(report.outcome)
        } else if !s.data().is_empty() {
            let mut ids = pick(s.data().ids(), &req.picks);
            if req.hit_seed && s.num_seeds() > 0 {
                let seed_id = s.seed_ids()[req.picks[0] % s.num_seeds()];
                if !ids.contains(&seed_id) {
                    ids.push(seed_id);
                }
            }
            s.unlearn(&ids).unwrap();
            absent.extend(&ids);
            None
        } else {
            continue;
        };
        let retrained = kpp.fit(all.without(&absent).unwrap(), ExpRace::new(seed));
        assert_same(&s, &retrained);
        if let Some(outcome) = outcome {
            // The outcome names the first round whose seed changed.
            let first = seeds_before
                .iter()
                .zip(s.seed_ids())
                .position(|(a, b)| a != b)
                .or((seeds_before.len() != s.num_seeds()).then_some(seeds_before.len()));
            let expected = match first {
                None => InsertOutcome::SeedsKept,
                Some(from) => InsertOutcome::Reseeded { from },
            };
            assert_eq!(outcome, expected);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: testdata::cases(96), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_interleaving_of_insertions_and_removals_is_retraining_bit_for_bit(
        all in arb_dataset(), present in prop::collection::vec(any::<bool>(), 1..=8),
        k in 1usize..=6, seed in any::<u64>(), requests in arb_requests()
    ) {
        interleave(SqEuclidean, &all, &present, k, seed, requests);
    }

    #[test]
    fn interleavings_are_exact_under_other_metrics(
        all in arb_dataset(), present in prop::collection::vec(any::<bool>(), 1..=8),
        k in 1usize..=4, seed in any::<u64>(), requests in arb_requests(), l1 in any::<bool>()
    ) {
        if l1 {
            interleave(L1, &all, &present, k, seed, requests);
        } else {
            interleave(Cosine, &all, &present, k, seed, requests);
        }
    }
}

#[test]
fn insertion_has_the_law_of_seeding_the_union_on_a_fixed_set() {
    for weighted in [false, true] {
        for k in 1..=3 {
            let kpp = KMeansPlusPlus::new(SeedingParams::new(k).validate().unwrap());
            let checked = check_small_insertions(&kpp, &fixed_set(weighted), &insertion).unwrap();
            assert_eq!(checked, 7 + 21);
        }
    }
}

#[test]
fn insertion_has_the_law_of_seeding_the_union_on_random_small_sets_sq_euclidean() {
    insertion_is_exact_on_small_sets(SqEuclidean, testdata::cases(48));
}

#[test]
fn insertion_has_the_law_of_seeding_the_union_on_random_small_sets_l1() {
    insertion_is_exact_on_small_sets(L1, testdata::cases(16));
}

#[test]
fn the_checker_catches_an_inserter_that_keeps_the_seeds() {
    for weighted in [false, true] {
        let kpp = KMeansPlusPlus::new(SeedingParams::new(2).validate().unwrap());
        let res = check_small_insertions(&kpp, &fixed_set(weighted), &keep_seeds_inserter);
        assert!(res.is_err(), "the wrong inserter went unnoticed");
    }
    // Added to nothing, a point is the first seed whatever the inserter
    // keeps: the wrong inserter is then right, and the checker must say so
    // (it is not biased towards failing).
    let one =
        Dataset::with_ids(DMatrix::from_column_slice(1, 1, &[2.0]), vec![PointId(5)]).unwrap();
    for k in 1..=3 {
        let kpp = KMeansPlusPlus::new(SeedingParams::new(k).validate().unwrap());
        assert_eq!(
            check_small_insertions(&kpp, &one, &keep_seeds_inserter),
            Ok(1)
        );
    }
}

#[test]
fn bad_insertions_change_nothing() {
    let data = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 5 + r) % 7) as f64)).unwrap();
    let mut s =
        KMeansPlusPlus::new(SeedingParams::new(4).validate().unwrap()).fit(data, ExpRace::new(3));
    let before = s.clone();
    let taken = Dataset::with_ids(
        DMatrix::from_column_slice(2, 2, &[9.0, 9.0, 1.0, 1.0]),
        vec![PointId(100), PointId(4)],
    )
    .unwrap();
    assert_eq!(s.insert(&taken), Err(SeedingError::DuplicateId(PointId(4))));
    let flat =
        Dataset::with_ids(DMatrix::from_column_slice(1, 1, &[9.0]), vec![PointId(100)]).unwrap();
    assert!(matches!(
        s.insert(&flat),
        Err(SeedingError::LengthMismatch { .. })
    ));
    let heavy = Dataset::with_weights(
        DMatrix::from_column_slice(2, 1, &[9.0, 9.0]),
        vec![PointId(100)],
        vec![u64::MAX],
    )
    .unwrap();
    assert_eq!(s.insert(&heavy), Err(SeedingError::WeightOverflow));
    assert_same(&s, &before);
}

#[test]
fn a_seeding_that_ran_out_of_points_goes_on_when_points_arrive() {
    let kpp = KMeansPlusPlus::new(SeedingParams::new(3).validate().unwrap());
    let one = Dataset::new(DMatrix::from_column_slice(1, 2, &[0.0, 0.0])).unwrap();
    let mut s = kpp.fit(one, ExpRace::new(5));
    assert_eq!(s.num_seeds(), 1);
    let far =
        Dataset::with_ids(DMatrix::from_column_slice(1, 1, &[4.0]), vec![PointId(9)]).unwrap();
    let report = s.insert(&far).unwrap();
    assert_eq!(s.num_seeds(), 2);
    assert!(report.reseeded());
    let empty = Dataset::empty(1).unwrap();
    assert_eq!(s.insert(&empty).unwrap().outcome, InsertOutcome::SeedsKept);
}

/// A seeding that keeps its race by reference or boxed inserts as one
/// that owns it: the forwarding impls pass `challenge` on (the provided
/// method would draw instead of comparing race keys).
#[test]
fn a_race_kept_by_reference_or_boxed_inserts_bit_for_bit() {
    let all = Dataset::new(DMatrix::from_fn(2, 60, |r, c| {
        ((c * 7 + r * 3) % 13) as f64
    }))
    .unwrap();
    let kpp = KMeansPlusPlus::new(SeedingParams::new(5).validate().unwrap());
    for seed in 0..20 {
        let arriving: Vec<PointId> = (0..60)
            .filter(|i| (i + seed) % 3 == 0)
            .map(PointId)
            .collect();
        let base = all.without(&arriving).unwrap();
        let later = all.only(&arriving).unwrap();
        let retrained = kpp.fit(all.clone(), ExpRace::new(seed));
        let mut race = ExpRace::new(seed);
        let mut by_ref = kpp.fit(base.clone(), &mut race);
        by_ref.insert(&later).unwrap();
        assert_same(&by_ref, &retrained);
        let boxed: Box<dyn seeding::Sampler> = Box::new(ExpRace::new(seed));
        let mut boxed = kpp.fit(base, boxed);
        boxed.insert(&later).unwrap();
        assert_same(&boxed, &retrained);
    }
}
