//! Seeded runs reproduce bit for bit, with and without the `parallel`
//! feature: CI runs this test both ways (`cargo test -p seeding` and
//! `cargo test -p seeding --no-default-features`) against one committed
//! digest. The data is large enough for the parallel passes to kick in.
//!
//! The digest covers values computed with `f64::ln` (the race keys), so it
//! is pinned for platforms whose libm rounds `ln` like glibc's.
#![allow(clippy::unwrap_used)]

use nalgebra::DMatrix;
use rand::Rng;
use seeding::{Dataset, ExpRace, KMeans, KMeansParams, KMeansPlusPlus, PointId, SeedingParams};
use testdata::Fnv;

fn run() -> u64 {
    let mut rng = testdata::rng("seeding-digest");
    let (dim, n) = (8, 6000);
    let coords: Vec<f64> = (0..dim * n)
        .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 - 0.5)
        .collect();
    let weights: Vec<u64> = (0..n).map(|_| 1 + rng.next_u64() % 4).collect();
    let ids = (0..n as u64).map(|i| PointId(i ^ 0x5555)).collect();
    let data = Dataset::with_weights(DMatrix::from_vec(dim, n, coords), ids, weights).unwrap();

    let mut s = KMeansPlusPlus::new(SeedingParams::new(10).validate().unwrap())
        .fit(data.clone(), ExpRace::new(2024));
    let mut h = Fnv::new();
    let third = s.seed_ids()[3];
    for r in [vec![data.id(17), data.id(4000)], vec![third, data.id(99)]] {
        s.unlearn(&r).unwrap();
        s.seed_ids().iter().for_each(|id| h.add(id.0));
        h.add_f64s(s.centers().iter());
        s.sizes().iter().for_each(|&x| h.add(x));
        h.add_f64s(s.costs());
        s.assignments().iter().for_each(|&a| h.add(u64::from(a)));
    }
    let model = KMeans::new(KMeansParams::new(10).validate().unwrap())
        .fit(&data, &mut ExpRace::new(7))
        .unwrap();
    h.add_f64s(model.centroids().iter());
    model.assignment().iter().for_each(|&a| h.add(u64::from(a)));
    h.add(model.phi().to_bits());
    h.add_f64s(model.phi_history());
    h.finish()
}

#[test]
fn seeded_runs_have_a_fixed_digest() {
    let got = run();
    assert_eq!(got, run(), "two runs in one process differ");
    assert_eq!(
        got, DIGEST,
        "digest {got:#018x} differs from the committed one"
    );
}

const DIGEST: u64 = 0x66f4_4d25_5519_c1f5;
