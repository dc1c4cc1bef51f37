//! Exact K-means fits and updates reproduce bit for bit, with and without
//! the `parallel` feature: CI runs this test both ways against one
//! committed digest (as `digest.rs` does for seeding). The data is large
//! enough for the parallel passes to kick in.
//!
//! The digest covers values computed with `f64::ln` (the race keys), so it
//! is pinned for platforms whose libm rounds `ln` like glibc's.
#![allow(clippy::unwrap_used)]

use seeding::{Changes, ExactKMeans, ExactModel, KMeansParams, PointId};
use seeding_testkit::exact::{Coords, Points, Step};
use testdata::Fnv;

/// Hashes everything a model exposes.
fn hash_model(h: &mut Fnv, m: &ExactModel) {
    m.seeds().iter().for_each(|id| h.add(id.0));
    for t in 0..=m.iterations() {
        m.centroids_at(t)
            .unwrap()
            .iter()
            .for_each(|x| h.add(x.to_bits()));
    }
    m.sizes().iter().for_each(|&s| h.add(s));
    h.add(m.phi().to_bits());
    h.add(m.iterations() as u64);
    // By id, so that the model's own order does not matter.
    let mut ids = m.ids().to_vec();
    ids.sort();
    for id in ids {
        h.add(id.0);
        h.add(m.assignment(id).unwrap() as u64);
    }
}

fn run() -> u64 {
    let mut points = Points::random(6, 5000, Coords::Continuous, true, 2024);
    let km = ExactKMeans::new(KMeansParams::new(10).restarts(2).validate().unwrap());
    let mut model = km.fit(&points.dataset(0), 7).unwrap();
    let mut h = Fnv::new();
    hash_model(&mut h, &model);
    let steps = [
        Step::RemoveOne(99),
        Step::Decrement(1234),
        Step::RemoveSeed(3),
        Step::Reseed((0..40).map(|i| i * 101).collect(), 40, 5),
    ];
    for (i, step) in steps.iter().enumerate() {
        let seeds: Vec<PointId> = model.seeds().to_vec();
        let changes: Changes = points.apply(step, &seeds).unwrap();
        model
            .update(&points.dataset(i as u64 + 1), &changes)
            .unwrap();
        hash_model(&mut h, &model);
    }
    h.finish()
}

#[test]
fn exact_fits_and_updates_have_a_fixed_digest() {
    let got = run();
    assert_eq!(got, run(), "two runs in one process differ");
    assert_eq!(
        got, DIGEST,
        "digest {got:#018x} differs from the committed one"
    );
}

const DIGEST: u64 = 0x11a5_d680_f575_633a;
