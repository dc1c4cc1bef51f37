//! The grid quantizer of Appendix H: index round trips (BigUint and u64),
//! samples stay in their bin, the distortion bound of Appendix D eq. (10),
//! points outside the box are errors, and the box transform.
#![allow(clippy::unwrap_used)]

use nalgebra::DMatrix;
use num_bigint::BigUint;
use proptest::prelude::*;
use rand::Rng;
use seeding::{BoxTransform, Dataset, Quantizer, SeedingError};

fn arb_quantizer() -> impl Strategy<Value = Quantizer> {
    (1usize..=12, 0.01f64..1.2, any::<bool>(), any::<u64>()).prop_map(
        |(dim, gamma, shifted, seed)| {
            if shifted {
                Quantizer::with_random_shift(dim, gamma, &mut testdata::rng(&seed.to_string()))
                    .unwrap()
            } else {
                Quantizer::new(dim, gamma).unwrap()
            }
        },
    )
}

fn arb_point(dim: usize) -> impl Strategy<Value = Vec<f64>> {
    // Interior points and the faces of the box.
    let coord = prop_oneof![8 => -0.5f64..=0.5, 1 => Just(-0.5), 1 => Just(0.5)];
    prop::collection::vec(coord, dim)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: testdata::cases(256), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn index_and_coordinates_round_trip(q in arb_quantizer(), picks in prop::collection::vec(any::<u64>(), 12)) {
        let b = q.bins_per_axis();
        let coords: Vec<u64> = picks[..q.dim()].iter().map(|p| p % b).collect();
        let idx = q.index_of(&coords).unwrap();
        prop_assert!(idx >= BigUint::from(1u32) && &idx <= q.num_bins());
        prop_assert_eq!(&q.bin_coords(&idx).unwrap(), &coords);
        if let Some(n) = q.num_bins_u64() {
            let i = q.index_of_u64(&coords).unwrap();
            prop_assert!(i >= 1 && i <= n);
            prop_assert_eq!(&BigUint::from(i), &idx);
            prop_assert_eq!(q.bin_coords_u64(i).unwrap(), coords);
        } else {
            let too_large = matches!(q.index_of_u64(&coords), Err(SeedingError::IndexTooLarge { .. }));
            prop_assert!(too_large);
        }
    }

    #[test]
    fn points_quantize_within_the_distortion_bound(
        (q, x) in arb_quantizer().prop_flat_map(|q| { let d = q.dim(); (Just(q), arb_point(d)) })
    ) {
        let idx = q.bin_of(&x).unwrap();
        let centre = q.bin_center(&idx).unwrap();
        // Appendix D, eq. (10): a point is within sqrt(d) gamma / 2 of the
        // centre of its bin, so the squared error is at most d gamma^2 / 4.
        let err: f64 = x.iter().zip(&centre).map(|(a, b)| (a - b) * (a - b)).sum();
        let bound = q.dim() as f64 * q.gamma() * q.gamma() / 4.0;
        prop_assert!(err <= bound * (1.0 + 1e-12), "error {} above bound {}", err, bound);
        // The centre lies in the bin it is the centre of.
        prop_assert_eq!(&q.bin_of(&centre).unwrap(), &idx);
        if q.num_bins_u64().is_some() {
            prop_assert_eq!(BigUint::from(q.bin_of_u64(&x).unwrap()), idx);
        }
    }

    #[test]
    fn samples_stay_in_their_bin(q in arb_quantizer(), picks in prop::collection::vec(any::<u64>(), 12), seed in any::<u64>()) {
        let b = q.bins_per_axis();
        let coords: Vec<u64> = picks[..q.dim()].iter().map(|p| p % b).collect();
        let idx = q.index_of(&coords).unwrap();
        let mut rng = testdata::rng(&seed.to_string());
        if let Err(e) = q.bin_center(&idx) {
            // A cell of a shifted grid wholly outside the box.
            prop_assert!(q.shift().is_some());
            let is_empty_bin = matches!(e, SeedingError::EmptyBin { .. });
            prop_assert!(is_empty_bin);
            prop_assert!(q.sample_in_bin(&idx, &mut rng).is_err());
            return Ok(());
        }
        for _ in 0..8 {
            let x = q.sample_in_bin(&idx, &mut rng).unwrap();
            prop_assert!(x.iter().all(|v| (-0.5..=0.5).contains(v)));
            prop_assert_eq!(q.bin_of(&x).unwrap(), idx.clone());
        }
    }
}

#[test]
fn samples_are_uniform_in_a_clipped_bin() {
    // gamma = 0.3: four bins per axis, the last one clipped to [0.4, 0.5].
    let q = Quantizer::new(1, 0.3).unwrap();
    assert_eq!(q.bins_per_axis(), 4);
    let last = q.index_of(&[3]).unwrap();
    assert!((q.bin_center(&last).unwrap()[0] - 0.45).abs() < 1e-15);
    let mut rng = testdata::rng("quantizer-uniform");
    let xs: Vec<f64> = (0..4000)
        .map(|_| q.sample_in_bin(&last, &mut rng).unwrap()[0])
        .collect();
    let mean = xs.iter().sum::<f64>() / xs.len() as f64;
    // Uniform on [0.4, 0.5]: mean 0.45, standard error 0.1 / sqrt(12 * 4000).
    assert!(
        (mean - 0.45).abs() < 5.0 * 0.1 / (12.0f64 * 4000.0).sqrt(),
        "{mean}"
    );
    assert!(xs.iter().all(|&x| (0.4..=0.5).contains(&x)));
}

#[test]
fn large_grids_use_big_indices() {
    // B = 100 bins on each of 20 axes: 100^20 = 10^40 > u64::MAX.
    let q = Quantizer::new(20, 0.01).unwrap();
    assert_eq!(q.bins_per_axis(), 100);
    assert_eq!(q.num_bins_u64(), None);
    assert_eq!(q.num_bins(), &BigUint::from(100u32).pow(20));
    let x = vec![0.5; 20];
    let idx = q.bin_of(&x).unwrap();
    assert_eq!(&idx, q.num_bins()); // the last bin has the largest index
    assert!(matches!(
        q.bin_of_u64(&x),
        Err(SeedingError::IndexTooLarge { .. })
    ));
    let first = q.bin_of(&[-0.5; 20]).unwrap();
    assert_eq!(first, BigUint::from(1u32));
    assert!(q.bin_coords(&(q.num_bins() + 1u32)).is_err());
    assert!(q.bin_coords(&BigUint::from(0u32)).is_err());
}

#[test]
fn points_outside_the_box_are_errors() {
    let q = Quantizer::new(3, 0.1).unwrap();
    assert_eq!(
        q.bin_of(&[0.0, 0.5000001, 0.0]),
        Err(SeedingError::OutsideBox {
            point: None,
            axis: 1,
            value: 0.5000001
        })
    );
    assert!(matches!(
        q.bin_of(&[f64::NAN, 0.0, 0.0]),
        Err(SeedingError::OutsideBox { axis: 0, .. })
    ));
    assert!(q.bin_of(&[0.0, 0.0]).is_err());
    let seeds = DMatrix::from_column_slice(3, 2, &[0.0, 0.0, 0.0, 0.0, 0.0, -0.7]);
    assert!(matches!(
        q.histogram(seeds.as_view(), &[1, 1]),
        Err(SeedingError::OutsideBox {
            point: Some(1),
            axis: 2,
            ..
        })
    ));
    assert!(Quantizer::new(2, 0.0).is_err());
    assert!(Quantizer::new(2, f64::INFINITY).is_err());
    assert!(Quantizer::new(0, 0.1).is_err());
    assert!(Quantizer::with_shift(2, 0.1, vec![0.0, 0.1]).is_err());
    assert!(Quantizer::with_shift(2, 0.1, vec![0.0]).is_err());
}

#[test]
fn histograms_round_trip_through_server_data() {
    let q = Quantizer::new(2, 0.25).unwrap();
    let seeds = DMatrix::from_column_slice(2, 3, &[0.1, 0.1, 0.2, 0.15, -0.4, 0.4]);
    let hist = q.histogram(seeds.as_view(), &[3, 4, 5]).unwrap();
    assert_eq!(hist.len(), 2); // the first two seeds share a bin
    assert_eq!(hist.iter().map(|(_, c)| c).sum::<u64>(), 12);
    let centres = q.centers_dataset(&hist).unwrap();
    assert_eq!(centres.len(), 2);
    assert_eq!(centres.total_weight(), 12);
    let samples = q
        .samples_dataset(&hist, 1000, &mut testdata::rng("hist"))
        .unwrap();
    assert_eq!(samples.len(), 12);
    let again = q.histogram(samples.view(), &[1; 12]).unwrap();
    assert_eq!(again, hist);
    assert!(
        q.samples_dataset(&hist, 11, &mut testdata::rng("hist"))
            .is_err()
    );
}

#[test]
fn the_box_transform_brings_data_into_the_box_and_back() {
    let mut rng = testdata::rng("box");
    let coords: Vec<f64> = (0..3 * 50)
        .map(|i| f64::from((i * 37) % 101) * 3.7 - 50.0 + (rng.next_u64() % 7) as f64)
        .collect();
    let data = Dataset::new(DMatrix::from_vec(3, 50, coords)).unwrap();
    let t = BoxTransform::fit(&data).unwrap();
    let inside = t.apply_dataset(&data).unwrap();
    let q = Quantizer::new(3, 0.05).unwrap();
    let mut widest: f64 = 0.0;
    for p in 0..inside.len() {
        q.bin_of(inside.point(p)).unwrap();
        widest = widest.max(inside.point(p).iter().fold(0.0f64, |m, x| m.max(x.abs())));
        let back = t.invert(inside.point(p));
        for (a, b) in back.iter().zip(data.point(p)) {
            assert!((a - b).abs() < 1e-9 * b.abs().max(1.0));
        }
    }
    // The longest side fills the box (up to the margin).
    assert!(widest > 0.4999);
    assert_eq!(inside.ids(), data.ids());
    assert!(BoxTransform::new(vec![0.0], 0.0).is_err());
    assert!(BoxTransform::from_bounds(&[1.0], &[0.0]).is_err());
}
