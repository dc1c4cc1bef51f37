//! Removes random points one request at a time from a seeding of the
//! paper's Gaussian data set (n = 30000, d = 10, k = 10) and compares the
//! time spent with retraining from scratch after each removal, reporting
//! the observed retrain rate (the fraction of removals that hit a seed).
//!
//! `cargo run --release -p seeding --example seeding_unlearn_ratio [removals]`

use std::time::{Duration, Instant};

use rand::Rng;
use seeding::{ExpRace, KMeansPlusPlus, PointId, SeedingError, SeedingParams};

fn main() -> Result<(), SeedingError> {
    let removals: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(3000);
    let mut rng = testdata::rng("bench-gaussian");
    let data = seeding_testkit::seeding::paper_gaussian(&mut rng, 10, 10, 3000);
    let kpp = KMeansPlusPlus::new(SeedingParams::new(10).validate()?);
    let mut s = kpp.fit(data, ExpRace::new(1));
    let mut pick = testdata::rng("unlearn-ratio");
    let (mut unlearn_time, mut reseeds) = (Duration::ZERO, 0usize);
    let mut retrain_time = Duration::ZERO;
    let retrain_every = (removals / 30).max(1);
    let mut retrains = 0u32;
    for i in 0..removals {
        let ids = s.data().ids();
        let id: PointId = ids[usize::try_from(pick.next_u64() % ids.len() as u64).unwrap_or(0)];
        let t = Instant::now();
        let report = s.unlearn(&[id])?;
        unlearn_time += t.elapsed();
        reseeds += usize::from(report.reseeded());
        // Retraining from scratch on the same remaining data, sampled.
        if i % retrain_every == 0 {
            let d = s.data().clone();
            let t = Instant::now();
            let r = kpp.fit(d, ExpRace::new(1));
            retrain_time += t.elapsed();
            retrains += 1;
            assert_eq!(
                r.seed_ids(),
                s.seed_ids(),
                "unlearning must equal retraining"
            );
        }
    }
    let per_unlearn = unlearn_time / u32::try_from(removals).unwrap_or(u32::MAX);
    let per_retrain = retrain_time / retrains;
    println!(
        "removals: {removals}, one point per request, n = 30000 -> {}",
        s.data().len()
    );
    println!(
        "retrain rate: {reseeds}/{removals} = {:.2e} (k/n = {:.2e})",
        reseeds as f64 / removals as f64,
        10.0 / 30000.0
    );
    println!("mean unlearn time: {per_unlearn:?}");
    println!("mean retrain time: {per_retrain:?} (over {retrains} retrains)");
    println!(
        "speed-up (retrain / unlearn): {:.0}x",
        per_retrain.as_secs_f64() / per_unlearn.as_secs_f64()
    );
    Ok(())
}
