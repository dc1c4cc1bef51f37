//! Weighted K-means++ and Lloyd: the objective never increases, separated
//! blobs are recovered, weights act as multiplicities, empty clusters are
//! re-seeded, and `phi` agrees with the model.
#![allow(clippy::unwrap_used)]

use nalgebra::DMatrix;
use proptest::prelude::*;
use rand::Rng;
use seeding::{
    Dataset, ExpRace, KMeans, KMeansParams, Metric, PointId, RngSampler, SqEuclidean, phi,
};

fn unit(rng: &mut impl Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// `per` points around each centre, uniform in a cube of side `spread`.
fn blobs(rng: &mut impl Rng, centres: &[Vec<f64>], per: usize, spread: f64) -> Dataset {
    let dim = centres[0].len();
    let mut coords = Vec::new();
    for c in centres {
        for _ in 0..per {
            coords.extend(c.iter().map(|&x| x + spread * (unit(rng) - 0.5)));
        }
    }
    Dataset::new(DMatrix::from_vec(dim, centres.len() * per, coords)).unwrap()
}

#[test]
fn separated_blobs_are_recovered() {
    let mut rng = testdata::rng("lloyd-blobs");
    let centres = vec![
        vec![0.0, 0.0, 0.0],
        vec![20.0, 0.0, 5.0],
        vec![0.0, 20.0, -5.0],
    ];
    let data = blobs(&mut rng, &centres, 200, 1.0);
    let km = KMeans::new(KMeansParams::new(3).validate().unwrap());
    let model = km.fit(&data, &mut ExpRace::new(8)).unwrap();
    assert!(model.converged());
    assert!(
        model.iterations() <= 10,
        "{} iterations",
        model.iterations()
    );
    assert_eq!(model.sizes(), &[200, 200, 200]);
    for c in &centres {
        let j = model.predict(c).unwrap();
        let got = model.centroid(j);
        assert!(SqEuclidean.cost(got, c) < 0.05, "{got:?} vs {c:?}");
    }
    // Points of one blob share a label.
    for b in 0..3 {
        let labels = &model.assignment()[b * 200..(b + 1) * 200];
        assert!(labels.iter().all(|&l| l == labels[0]));
    }
    let p = phi(&SqEuclidean, &data, model.centroids()).unwrap();
    assert!((p - model.phi()).abs() <= 1e-9 * p);
}

#[test]
fn weights_act_as_multiplicities() {
    // The same points, once with weights and once repeated.
    let mut rng = testdata::rng("lloyd-weights");
    let pts: Vec<f64> = (0..2 * 30)
        .map(|_| (unit(&mut rng) * 20.0).round())
        .collect();
    let weights: Vec<u64> = (0..30).map(|_| 1 + rng.next_u64() % 4).collect();
    let weighted = Dataset::with_weights(
        DMatrix::from_vec(2, 30, pts.clone()),
        (0..30).map(PointId).collect(),
        weights.clone(),
    )
    .unwrap();
    let mut rep = Vec::new();
    for (i, &w) in weights.iter().enumerate() {
        for _ in 0..w {
            rep.extend_from_slice(&pts[2 * i..2 * i + 2]);
        }
    }
    let n = rep.len() / 2;
    let repeated = Dataset::new(DMatrix::from_vec(2, n, rep)).unwrap();
    // Same initial centres, so the iterations must agree.
    let init = DMatrix::from_column_slice(2, 3, &[0.0, 0.0, 10.0, 10.0, 20.0, 0.0]);
    let km = KMeans::new(KMeansParams::new(3).tolerance(0.0).validate().unwrap());
    let a = km
        .fit_from(&weighted, init.as_view(), &mut ExpRace::new(1))
        .unwrap();
    let b = km
        .fit_from(&repeated, init.as_view(), &mut ExpRace::new(1))
        .unwrap();
    assert_eq!(a.sizes(), b.sizes());
    assert_eq!(a.sizes().iter().sum::<u64>(), weights.iter().sum::<u64>());
    for (x, y) in a.centroids().iter().zip(b.centroids().iter()) {
        assert!((x - y).abs() < 1e-9, "{x} vs {y}");
    }
    assert!((a.phi() - b.phi()).abs() < 1e-9 * a.phi().max(1.0));
}

#[test]
fn an_empty_cluster_is_reseeded() {
    let data = Dataset::new(DMatrix::from_column_slice(
        1,
        6,
        &[0.0, 1.0, 2.0, 10.0, 11.0, 12.0],
    ))
    .unwrap();
    // Two centres start far away; every point goes to the first.
    let init = DMatrix::from_column_slice(1, 3, &[6.0, 500.0, -500.0]);
    let km = KMeans::new(KMeansParams::new(3).validate().unwrap());
    let model = km
        .fit_from(&data, init.as_view(), &mut ExpRace::new(4))
        .unwrap();
    assert!(model.sizes().iter().all(|&s| s > 0), "{:?}", model.sizes());
    assert!(
        model
            .centroids()
            .iter()
            .all(|&c| (-1.0..=13.0).contains(&c))
    );
    assert!(model.phi() < 6.0);
}

#[test]
fn fewer_distinct_points_than_k_gives_fewer_centroids() {
    let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[1.0, 1.0, 2.0, 2.0])).unwrap();
    let model = KMeans::new(KMeansParams::new(3).validate().unwrap())
        .fit(&data, &mut ExpRace::new(0))
        .unwrap();
    assert_eq!(model.sizes().len(), 2);
    assert!(model.phi().abs() < 1e-300);
    let empty = Dataset::empty(2).unwrap();
    assert!(
        KMeans::new(KMeansParams::new(3).validate().unwrap())
            .fit(&empty, &mut ExpRace::new(0))
            .is_err()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: testdata::cases(48), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn lloyd_never_increases_phi(
        dim in 1usize..=4, n in 1usize..=120, k in 1usize..=8, seed in any::<u64>(),
        coords in prop::collection::vec(-10.0f64..10.0, 4 * 120),
        weights in prop::collection::vec(1u64..=9, 120),
    ) {
        let m = DMatrix::from_column_slice(dim, n, &coords[..dim * n]);
        let data = Dataset::with_weights(m, (0..n as u64).map(PointId).collect(), weights[..n].to_vec()).unwrap();
        let km = KMeans::new(KMeansParams::new(k).tolerance(0.0).max_iterations(50).validate().unwrap());
        let model = km.fit(&data, &mut RngSampler::new(testdata::rng(&seed.to_string()))).unwrap();
        let h = model.phi_history();
        prop_assert!(!h.is_empty());
        for w in h.windows(2) {
            prop_assert!(w[1] <= w[0] * (1.0 + 1e-12) + 1e-12, "phi rose: {h:?}");
        }
        prop_assert!(model.phi() <= h[h.len() - 1] * (1.0 + 1e-12) + 1e-12);
        let total: u64 = model.sizes().iter().sum();
        prop_assert_eq!(total, data.total_weight());
        let p = phi(&SqEuclidean, &data, model.centroids()).unwrap();
        prop_assert!((p - model.phi()).abs() <= 1e-9 * p.max(1.0));
    }
}

#[test]
fn parameters_are_checked() {
    assert!(KMeansParams::new(0).validate().is_err());
    assert!(KMeansParams::new(1).tolerance(f64::NAN).validate().is_err());
    let km = KMeans::new(KMeansParams::new(2).validate().unwrap());
    let data = Dataset::new(DMatrix::from_column_slice(2, 2, &[0.0, 0.0, 1.0, 1.0])).unwrap();
    let bad = DMatrix::from_column_slice(3, 1, &[0.0, 0.0, 0.0]);
    assert!(
        km.fit_from(&data, bad.as_view(), &mut ExpRace::new(0))
            .is_err()
    );
    let nan = DMatrix::from_column_slice(2, 1, &[0.0, f64::NAN]);
    assert!(
        km.fit_from(&data, nan.as_view(), &mut ExpRace::new(0))
            .is_err()
    );
}
