//! `ExactModel::update` is a fresh `ExactKMeans::fit` of the new data with
//! the same seed, bit for bit, through random sequences of changes
//! (removals, removed seeds, weight changes, additions, moves, client
//! reseeds), on data made to provoke ties and empty clusters; and the same
//! comparison catches an update whose skip test is loosened.
#![allow(clippy::unwrap_used)]

use nalgebra::DMatrix;
use proptest::prelude::*;
use rand::Rng;
use seeding::{Changes, Dataset, ExactKMeans, ExactModel, KMeans, KMeansParams, PointId};
use seeding_testkit::exact::{
    Coords, Points, Step, arb_points, arb_step, check_sequence, check_sequence_with,
};

fn sound(
    m: &mut ExactModel,
    d: &Dataset,
    c: &Changes,
) -> Result<seeding::UpdateReport, seeding::SeedingError> {
    m.update(d, c)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: testdata::cases(128), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn updates_equal_fresh_fits_bit_for_bit(
        points in arb_points(),
        k in 1usize..=6,
        seed in any::<u64>(),
        tol in prop_oneof![Just(0.0), Just(1e-4), Just(1e-2)],
        max_iter in prop_oneof![Just(300usize), 1usize..=4],
        accelerate in any::<bool>(),
        steps in prop::collection::vec(arb_step(), 1..=6),
    ) {
        let km = ExactKMeans::new(KMeansParams::new(k).tolerance(tol).max_iterations(max_iter).validate().unwrap()).accelerate(accelerate);
        let res = check_sequence(&km, points, seed, &steps, sound);
        prop_assert!(res.is_ok(), "{}", res.unwrap_err());
    }

    #[test]
    fn updates_of_medium_data_sets_equal_fresh_fits(
        dim in 2usize..=6,
        n in 150usize..=500,
        kind in prop_oneof![Just(Coords::Fine), Just(Coords::Continuous)],
        z in any::<u64>(),
        k in 2usize..=8,
        steps in prop::collection::vec(arb_step(), 1..=5),
    ) {
        let points = Points::random(dim, n, kind, z % 2 == 0, z);
        let res = check_sequence(&ExactKMeans::new(KMeansParams::new(k).tolerance(0.0).validate().unwrap()), points, z, &steps, sound);
        prop_assert!(res.is_ok(), "{}", res.unwrap_err());
    }

    #[test]
    fn updates_from_given_centroids_equal_fresh_fits(
        points in arb_points(),
        k in 1usize..=6,
        seed in any::<u64>(),
        z in any::<u64>(),
        steps in prop::collection::vec(arb_step(), 1..=6),
    ) {
        let init = provoking_init(points.dim(), k, z);
        let km = ExactKMeans::new(KMeansParams::new(k).validate().unwrap());
        let plain = km.clone().accelerate(false);
        let fit = |d: &Dataset| km.fit_from(d, init.as_view(), seed);
        let reference = |d: &Dataset| plain.fit_from(d, init.as_view(), seed);
        let res = check_sequence_with(fit, reference, points, &steps, sound);
        prop_assert!(res.is_ok(), "{}", res.unwrap_err());
    }

    #[test]
    fn updates_with_restarts_equal_fresh_fits(
        points in arb_points(),
        k in 1usize..=4,
        seed in any::<u64>(),
        steps in prop::collection::vec(arb_step(), 1..=4),
    ) {
        let km = ExactKMeans::new(KMeansParams::new(k).restarts(3).validate().unwrap());
        let res = check_sequence(&km, points, seed, &steps, sound);
        prop_assert!(res.is_ok(), "{}", res.unwrap_err());
    }
}

fn steps_for(n: usize) -> Vec<Step> {
    vec![
        Step::RemoveOne(17),
        Step::Decrement(5),
        Step::Decrement(n / 2),
        Step::Increment(3, 2),
        Step::Add(3, 99),
        Step::RemoveSeed(1),
        Step::RemoveMany(vec![1, 50, 99, 400]),
        Step::Reseed((0..20).map(|i| i * 37).collect(), 25, 7),
        Step::RemoveOne(n / 3),
    ]
}

/// Initial centroids that provoke empty clusters: `k` columns, some
/// repeated (ties: all points go to the first copy), some far away.
fn provoking_init(dim: usize, k: usize, z: u64) -> DMatrix<f64> {
    DMatrix::from_fn(dim, k, |r, c| match (z.wrapping_add(c as u64)) % 4 {
        0 => 40.0 + r as f64,
        1 => 0.5,
        _ => ((seeding::mix64(z ^ (c * 31 + r) as u64) % 7) as f64) - 3.0,
    })
}

#[test]
fn empty_clusters_and_ties_on_a_grid_stay_exact() {
    // Integer data with many duplicates and initial centroids that leave
    // clusters empty: re-seeding in the fits and in the updates, old and
    // new runs disagreeing on it. The sweep must meet them, or it tests
    // nothing about them.
    let mut stats = Vec::new();
    for case in 0..40u64 {
        let points = Points::random(2, 40, Coords::Grid, case % 2 == 0, case);
        let init = provoking_init(2, 6, case);
        let km = ExactKMeans::new(
            KMeansParams::new(6)
                .tolerance(if case % 3 == 0 { 0.0 } else { 1e-3 })
                .validate()
                .unwrap(),
        );
        let plain = km.clone().accelerate(false);
        let fit = |d: &Dataset| km.fit_from(d, init.as_view(), case);
        let reference = |d: &Dataset| plain.fit_from(d, init.as_view(), case);
        stats.push(check_sequence_with(fit, reference, points, &steps_for(40), sound).unwrap());
    }
    let with_empty: usize = stats.iter().map(|s| s.fits_with_empty_clusters).sum();
    let passes: usize = stats.iter().map(|s| s.reseed_passes).sum();
    assert!(
        with_empty > 40,
        "few fits met an empty cluster: {with_empty}"
    );
    assert!(passes > 40, "few updates met an empty cluster: {passes}");
    // Seeded fits on the same kind of data: ties and seeding changes.
    let mut seeding_changed = 0;
    for case in 0..40u64 {
        let points = Points::random(2, 40, Coords::Grid, case % 2 == 0, case);
        let km = ExactKMeans::new(KMeansParams::new(6).tolerance(0.0).validate().unwrap());
        seeding_changed += check_sequence(&km, points, case, &steps_for(40), sound)
            .unwrap()
            .seeding_changed;
    }
    assert!(seeding_changed > 0, "no update changed the seeding");
}

#[test]
fn a_large_data_set_takes_the_parallel_path_and_stays_exact() {
    // 3000 points: above the threshold of the parallel passes.
    let points = Points::random(3, 3000, Coords::Continuous, true, 5);
    let km = ExactKMeans::new(KMeansParams::new(8).validate().unwrap());
    let stats = check_sequence(&km, points, 11, &steps_for(3000), sound).unwrap();
    // The updates did far less work than refits would have.
    assert!(stats.recomputed * 4 < stats.refit_assignments, "{stats:?}");
}

#[test]
fn the_comparison_catches_a_loosened_skip_test() {
    let loosened = |m: &mut ExactModel, d: &Dataset, c: &Changes| {
        m.update_with_unsound_slack(d, c, f64::INFINITY)
    };
    let mut caught = 0;
    for case in 0..10u64 {
        let points = Points::random(2, 300, Coords::Fine, true, case);
        let km = ExactKMeans::new(KMeansParams::new(5).validate().unwrap());
        if check_sequence(&km, points.clone(), case, &steps_for(300), loosened).is_err() {
            caught += 1;
        }
        // The same sequence through the sound update passes: the
        // comparison is not biased towards failing.
        check_sequence(&km, points, case, &steps_for(300), sound).unwrap();
    }
    assert!(
        caught >= 8,
        "a loosened skip test went unnoticed in {} of 10 cases",
        10 - caught
    );
    // A small slack (a margin taken as 1% of the data's extent larger than
    // it is) is caught too.
    let slightly =
        |m: &mut ExactModel, d: &Dataset, c: &Changes| m.update_with_unsound_slack(d, c, 0.04);
    let caught = (0..10u64)
        .filter(|&case| {
            let points = Points::random(2, 300, Coords::Fine, true, 100 + case);
            check_sequence(
                &ExactKMeans::new(KMeansParams::new(5).validate().unwrap()),
                points,
                case,
                &steps_for(300),
                slightly,
            )
            .is_err()
        })
        .count();
    assert!(caught > 0, "a slack of 0.04 went unnoticed");
}

#[test]
fn bad_changes_are_errors_and_change_nothing() {
    let points = Points::random(2, 50, Coords::Fine, true, 1);
    let data = points.dataset(0);
    let km = ExactKMeans::new(KMeansParams::new(3).validate().unwrap());
    let mut model = km.fit(&data, 4).unwrap();
    let before = model.clone();
    let smaller = data.without(&[data.id(0)]).unwrap();
    let bad = [
        Changes::removing(vec![PointId(999_999)]),
        Changes::removing(vec![data.id(0), data.id(0)]),
        Changes::default(),
        Changes::removing(vec![data.id(0), data.id(1)]),
        Changes::removing(vec![data.id(0)]).with_reweighted(vec![data.id(0)]),
        Changes::removing(vec![data.id(0)]).with_added(vec![data.id(2)]),
    ];
    for c in &bad {
        assert!(model.update(&smaller, c).is_err(), "{c:?} accepted");
        seeding_testkit::exact::compare(&model, &before).unwrap();
    }
    let other_dim = Dataset::new(DMatrix::zeros(3, 4)).unwrap();
    assert!(model.update(&other_dim, &Changes::default()).is_err());
    let empty = Dataset::empty(2).unwrap();
    assert!(
        model
            .update(&empty, &Changes::removing(data.ids().to_vec()))
            .is_err()
    );
    seeding_testkit::exact::compare(&model, &before).unwrap();
    // A reweighted point whose coordinates changed.
    let mut moved = data.clone();
    moved.remove(&[data.id(4)]).unwrap();
    let far = Dataset::with_weights(
        DMatrix::from_column_slice(2, 1, &[9.0, 9.0]),
        vec![data.id(4)],
        vec![1],
    )
    .unwrap();
    let mut coords = moved.coords().to_vec();
    coords.extend_from_slice(far.coords());
    let mut ids = moved.ids().to_vec();
    ids.push(data.id(4));
    let mut w = moved.weights().to_vec();
    w.push(1);
    let moved = Dataset::with_weights(DMatrix::from_vec(2, ids.len(), coords), ids, w).unwrap();
    let c = Changes::default().with_reweighted(vec![data.id(4)]);
    assert!(model.update(&moved, &c).is_err());
    seeding_testkit::exact::compare(&model, &before).unwrap();
    // Out of range.
    assert!(
        km.fit(&Dataset::new(DMatrix::from_element(1, 2, 1e6)).unwrap(), 0)
            .is_err()
    );
    // Invalid parameters never reach a fit: `validate` refuses them.
    assert!(KMeansParams::new(0).validate().is_err());
    assert!(KMeansParams::new(2).max_iterations(0).validate().is_err());
    assert!(KMeansParams::new(2).restarts(0).validate().is_err());
    assert!(KMeansParams::new(2).tolerance(f64::NAN).validate().is_err());
    assert!(km.fit(&Dataset::empty(2).unwrap(), 0).is_err());
}

#[test]
fn quality_matches_the_float_kmeans_on_blobs() {
    // Blobs on the fixed-point grid (multiples of 2^-20), so that both
    // cluster the same points; the float Lloyd and the exact one differ
    // only in the rounding of their centroids.
    let mut rng = testdata::rng("exact-blobs");
    let (dim, k, per) = (5, 6, 400);
    let mut coords = Vec::new();
    let centres: Vec<f64> = (0..k * dim).map(|_| unit(&mut rng) * 10.0).collect();
    for c in centres.chunks_exact(dim) {
        for _ in 0..per {
            for &m in c {
                let (u, v) = (unit(&mut rng), unit(&mut rng));
                let g = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
                coords.push(((m + 0.7 * g) * 1_048_576.0).round() / 1_048_576.0);
            }
        }
    }
    let data = Dataset::new(DMatrix::from_vec(dim, k * per, coords)).unwrap();
    let mut worse = 0;
    for seed in 0..8u64 {
        // Both to a fixed point, so that neither stops early by a
        // tolerance test that the other's rounding might tip.
        let exact = ExactKMeans::new(KMeansParams::new(k).tolerance(0.0).validate().unwrap())
            .fit(&data, seed)
            .unwrap();
        let float = KMeans::new(KMeansParams::new(k).tolerance(0.0).validate().unwrap())
            .fit(&data, &mut seeding::ExpRace::new(seed))
            .unwrap();
        assert_eq!(
            exact.seeds(),
            float.seeds(),
            "same data, same race: same seeds"
        );
        let rel = (exact.phi() - float.phi()).abs() / float.phi();
        assert!(
            rel < 1e-9,
            "seed {seed}: exact {} vs float {}",
            exact.phi(),
            float.phi()
        );
        worse += usize::from(exact.phi() > float.phi() * (1.0 + 1e-12));
    }
    assert!(worse < 8);
}

fn unit(rng: &mut impl Rng) -> f64 {
    ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
}

#[test]
fn fewer_distinct_points_than_k_then_more() {
    // Three distinct locations and k = 5: three seeds. Added points let the
    // seeding go on (the number of centroids changes: a refit); removing
    // them again brings it back.
    let m = DMatrix::from_column_slice(1, 6, &[0.0, 0.0, 1.0, 1.0, 5.0, 5.0]);
    let data =
        Dataset::with_weights(m, (0..6).map(PointId).collect(), vec![1, 2, 3, 1, 2, 3]).unwrap();
    let km = ExactKMeans::new(KMeansParams::new(5).validate().unwrap());
    let mut model = km.fit(&data, 3).unwrap();
    assert_eq!(model.num_centroids(), 3);
    let mut points = Points::from_dataset(&data, Coords::Grid);
    let added = points.apply(&Step::Add(4, 17), model.seeds()).unwrap();
    let bigger = points.dataset(1);
    let report = model.update(&bigger, &added).unwrap();
    seeding_testkit::exact::compare(&model, &km.fit(&bigger, 3).unwrap()).unwrap();
    assert!(report.seeding_changed());
    let back = Changes::removing(added.added.clone());
    let report = model.update(&data, &back).unwrap();
    seeding_testkit::exact::compare(&model, &km.fit(&data, 3).unwrap()).unwrap();
    assert_eq!(model.num_centroids(), 3);
    assert!(report.fell_back());
}
