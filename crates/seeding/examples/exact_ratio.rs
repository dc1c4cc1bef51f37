//! Updates an exact K-means model of the paper's Gaussian data set
//! (n = 30000, d = 10, k = 10) through a sequence of changes and compares
//! the time of each update with a fresh fit of the same data, checking
//! (on a sample) that the update equals the fit bit for bit.
//!
//! `cargo run --release -p seeding --example exact_ratio [updates] [tolerance]`
//!
//! Besides the times it prints how many iterations of each update were
//! replayed against the old trace and how many had to start from the new
//! run's own previous iteration (the new run had moved away from the old
//! one: Lloyd's iterations amplify small perturbations on this data).

use std::time::{Duration, Instant};

use nalgebra::DMatrix;
use rand::Rng;
use seeding::{Changes, Dataset, ExactKMeans, KMeansParams, PointId, SeedingError};

#[derive(Default)]
struct Tally {
    n: u32,
    time: Duration,
    recomputed: usize,
    seeding_changed: usize,
    iterations: usize,
    from_previous: usize,
}

fn main() -> Result<(), SeedingError> {
    let updates: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(60);
    let updates = updates.max(1);
    let data = seeding_testkit::seeding::paper_gaussian(
        &mut testdata::rng("bench-gaussian"),
        10,
        10,
        3000,
    );
    let tol: f64 = std::env::args()
        .nth(2)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1e-4);
    let km = ExactKMeans::new(KMeansParams::new(10).tolerance(tol).validate()?);
    let t = Instant::now();
    let mut model = km.fit(&data, 1)?;
    let first_fit = t.elapsed();
    println!(
        "fit: {:.1} ms, {} iterations, trace {:.1} MB",
        first_fit.as_secs_f64() * 1e3,
        model.iterations(),
        model.trace_bytes() as f64 / 1e6
    );
    let mut current = data;
    let mut pick = testdata::rng("exact-ratio");
    let mut next_id = 1_000_000u64;
    let (mut remove, mut reseed) = (Tally::default(), Tally::default());
    let (mut fit_time, mut fits) = (Duration::ZERO, 0u32);
    for i in 0..updates {
        let ids = current.ids();
        let (new, changes, tally) = if i % 10 == 9 {
            // A client reseeds: 150 points out, 150 in.
            let gone: Vec<PointId> = (0..150)
                .map(|_| ids[usize::try_from(pick.next_u64() % ids.len() as u64).unwrap_or(0)])
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let kept = current.without(&gone)?;
            let fresh: Vec<f64> = (0..150 * 10)
                .map(|_| seeding_testkit::seeding::unit(&mut pick) * 2.0 - 0.5)
                .collect();
            let new_ids: Vec<PointId> = (0..150).map(|j| PointId(next_id + j)).collect();
            next_id += 150;
            let mut coords = kept.coords().to_vec();
            coords.extend(fresh);
            let mut all_ids = kept.ids().to_vec();
            all_ids.extend(&new_ids);
            let n = all_ids.len();
            let new = Dataset::with_ids(DMatrix::from_vec(10, n, coords), all_ids)?;
            (
                new,
                Changes::removing(gone).with_added(new_ids),
                &mut reseed,
            )
        } else {
            let id = ids[usize::try_from(pick.next_u64() % ids.len() as u64).unwrap_or(0)];
            (
                current.without(&[id])?,
                Changes::removing(vec![id]),
                &mut remove,
            )
        };
        let t = Instant::now();
        let report = model.update(&new, &changes)?;
        tally.time += t.elapsed();
        tally.n += 1;
        tally.recomputed += report.points_recomputed();
        tally.seeding_changed += usize::from(report.seeding_changed());
        tally.iterations += report.iterations();
        tally.from_previous += report
            .runs
            .iter()
            .map(|r| r.iterations_from_previous)
            .sum::<usize>();
        if i % 5 == 0 {
            let t = Instant::now();
            let fresh = km.fit(&new, 1)?;
            fit_time += t.elapsed();
            fits += 1;
            assert_eq!(
                fresh.phi().to_bits(),
                model.phi().to_bits(),
                "update != fit"
            );
            assert_eq!(fresh.iterations(), model.iterations(), "update != fit");
        }
        current = new;
    }
    let per_fit = fit_time / fits.max(1);
    println!(
        "fresh fit (mean of {fits}): {:.2} ms",
        per_fit.as_secs_f64() * 1e3
    );
    for (what, t) in [
        ("remove one point", &remove),
        ("reseed a client (300 changed)", &reseed),
    ] {
        let per = t.time / t.n.max(1);
        let n = f64::from(t.n.max(1));
        println!(
            "{what}: {} updates, mean {:.3} ms, fit/update = {:.1}x, {:.0} assignments per update \
             ({:.2}% of plain Lloyd's), {:.1} of {:.1} iterations from the run's previous one, \
             seeding changed {} times",
            t.n,
            per.as_secs_f64() * 1e3,
            per_fit.as_secs_f64() / per.as_secs_f64(),
            t.recomputed as f64 / n,
            100.0 * t.recomputed as f64 / n / (model.len() * model.iterations()) as f64,
            t.from_previous as f64 / n,
            t.iterations as f64 / n,
            t.seeding_changed
        );
    }
    Ok(())
}
