//! With the keyed exponential race, unlearning is retraining bit for bit:
//! `unlearn(fit(X, s), R) == fit(X \ R, s)` for the same seed `s`, through
//! any sequence of removals (docs/threat-model.md U1/U2).
#![allow(clippy::unwrap_used)]

use std::collections::HashSet;

use nalgebra::DMatrix;
use proptest::prelude::*;
use rand::Rng;
use seeding::{
    Cosine, Dataset, ExpRace, KMeansPlusPlus, L1, Metric, PointId, Seeding, SeedingError,
    SeedingParams, SqEuclidean, UnlearnOutcome,
};

/// Everything observable about a seeding, compared bit for bit, points
/// matched by id (positions differ: removal swaps points around).
pub(crate) fn assert_same<M: Metric, S, T>(a: &Seeding<M, S>, b: &Seeding<M, T>) {
    assert_eq!(a.seed_ids(), b.seed_ids());
    let bits_a: Vec<u64> = a.centers().iter().map(|x| x.to_bits()).collect();
    let bits_b: Vec<u64> = b.centers().iter().map(|x| x.to_bits()).collect();
    assert_eq!(bits_a, bits_b);
    assert_eq!(a.sizes(), b.sizes());
    assert_eq!(a.data().len(), b.data().len());
    for &id in b.data().ids() {
        assert_eq!(a.assignment(id), b.assignment(id), "assignment of {id}");
        let (pa, pb) = (
            a.data().position(id).unwrap(),
            b.data().position(id).unwrap(),
        );
        assert_eq!(
            a.costs()[pa].to_bits(),
            b.costs()[pb].to_bits(),
            "cost of {id}"
        );
        assert_eq!(a.data().point(pa), b.data().point(pb));
    }
}

#[derive(Clone, Debug)]
struct Step {
    hit_seed: bool,
    picks: Vec<usize>,
}

pub(crate) fn arb_dataset() -> impl Strategy<Value = Dataset> {
    (1usize..=4, 1usize..=60, any::<bool>(), any::<bool>())
        .prop_flat_map(|(dim, n, integer, weighted)| {
            let coord = if integer {
                (-4i32..=4).prop_map(f64::from).boxed()
            } else {
                (-1.0e3f64..1.0e3).boxed()
            };
            (
                Just((dim, n)),
                prop::collection::vec(coord, dim * n),
                prop::collection::vec(1u64..=5, n),
                Just(weighted),
                Just(
                    (0..n as u64)
                        .map(|i| PointId(1000 + 3 * i))
                        .collect::<Vec<_>>(),
                )
                .prop_shuffle(),
            )
        })
        .prop_map(|((dim, n), coords, weights, weighted, ids)| {
            let m = DMatrix::from_vec(dim, n, coords);
            if weighted {
                Dataset::with_weights(m, ids, weights).unwrap()
            } else {
                Dataset::with_ids(m, ids).unwrap()
            }
        })
}

fn arb_steps() -> impl Strategy<Value = Vec<Step>> {
    prop::collection::vec(
        (any::<bool>(), prop::collection::vec(any::<usize>(), 1..=4))
            .prop_map(|(hit_seed, picks)| Step { hit_seed, picks }),
        1..=6,
    )
}

fn run<M: Metric + 'static>(metric: M, data: Dataset, k: usize, seed: u64, steps: Vec<Step>) {
    let kpp = KMeansPlusPlus::with_metric(SeedingParams::new(k).validate().unwrap(), metric);
    let original = data.clone();
    let mut s = kpp.fit(data, ExpRace::new(seed));
    assert_same(&s, &kpp.fit(original.clone(), ExpRace::new(seed)));
    let mut removed: Vec<PointId> = Vec::new();
    for step in steps {
        let left = s.data().ids().to_vec();
        if left.is_empty() {
            break;
        }
        let mut r: Vec<PointId> = Vec::new();
        if step.hit_seed && s.num_seeds() > 0 {
            r.push(s.seed_ids()[step.picks[0] % s.num_seeds()]);
        }
        for &p in &step.picks {
            let id = left[p % left.len()];
            if !r.contains(&id) {
                r.push(id);
            }
        }
        let seeds_before = s.seed_ids().to_vec();
        let report = s.unlearn(&r).unwrap();
        let gone: HashSet<PointId> = r.iter().copied().collect();
        let expected = match seeds_before.iter().position(|id| gone.contains(id)) {
            None => UnlearnOutcome::SeedsKept,
            Some(from) => UnlearnOutcome::Reseeded { from },
        };
        assert_eq!(report.outcome, expected);
        assert_eq!(report.removed, r.len());
        removed.extend(&r);
        let retrained = kpp.fit(original.without(&removed).unwrap(), ExpRace::new(seed));
        assert_same(&s, &retrained);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: testdata::cases(96), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn unlearning_is_retraining_bit_for_bit(
        data in arb_dataset(), k in 1usize..=6, seed in any::<u64>(), steps in arb_steps()
    ) {
        run(SqEuclidean, data, k, seed, steps);
    }

    #[test]
    fn unlearning_is_retraining_bit_for_bit_other_metrics(
        data in arb_dataset(), k in 1usize..=4, seed in any::<u64>(), steps in arb_steps(), l1 in any::<bool>()
    ) {
        if l1 {
            run(L1, data, k, seed, steps);
        } else {
            run(Cosine, data, k, seed, steps);
        }
    }
}

#[test]
fn a_large_seeding_takes_the_parallel_path_and_stays_exact() {
    // 3 x 12000 coordinates: above the threshold for parallel passes.
    let mut rng = testdata::rng("bit-identity-large");
    let data = testkit_gaussian(&mut rng, 3, 12_000);
    let steps = (0..4)
        .map(|i| Step {
            hit_seed: i % 2 == 0,
            picks: vec![i * 7919, i * 104_729 + 1],
        })
        .collect();
    run(SqEuclidean, data, 8, 77, steps);
}

fn testkit_gaussian(rng: &mut impl Rng, dim: usize, n: usize) -> Dataset {
    let coords = (0..dim * n)
        .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
        .collect();
    Dataset::new(DMatrix::from_vec(dim, n, coords)).unwrap()
}

#[test]
fn bad_requests_change_nothing() {
    let data = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 5 + r) % 7) as f64)).unwrap();
    let mut s =
        KMeansPlusPlus::new(SeedingParams::new(4).validate().unwrap()).fit(data, ExpRace::new(3));
    let before = s.clone();
    let seed = s.seed_ids()[0];
    assert_eq!(
        s.unlearn(&[PointId(1), PointId(500)]),
        Err(SeedingError::UnknownId(PointId(500)))
    );
    assert_eq!(
        s.unlearn(&[seed, PointId(2), seed]),
        Err(SeedingError::RepeatedId(seed))
    );
    assert_same(&s, &before);
    s.unlearn(&[PointId(1)]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        s.unlearn(&[PointId(1)]),
        Err(SeedingError::UnknownId(PointId(1)))
    );
}

#[test]
fn removing_everything_leaves_no_seeds() {
    let data = Dataset::new(DMatrix::from_column_slice(1, 3, &[0.0, 1.0, 2.0])).unwrap();
    let mut s =
        KMeansPlusPlus::new(SeedingParams::new(2).validate().unwrap()).fit(data, ExpRace::new(0));
    let all = s.data().ids().to_vec();
    let report = s.unlearn(&all).unwrap();
    assert!(report.reseeded());
    assert_eq!(s.num_seeds(), 0);
    assert!(s.sizes().is_empty());
    assert_eq!(report.affected_clusters, vec![0, 1]);
}
