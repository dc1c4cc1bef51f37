//! The model store's request on the built-in data's scale (issue 14's
//! target: the library-level apply and commit of a one-point removal that
//! reseeds nobody within 5 ms): the paper's Gaussian data, 10 clusters of
//! 3000 points in 10-D over 100 clients, in a store on disk.
//!
//! - `store/forget-one-point`: one non-seed point of one client, served at
//!   once (`min_updating_clients(1)`);
//! - `store/forget-two-clients`: one non-seed point of each of two clients,
//!   the smallest request the default policy serves at once.
//!
//! Each iteration serves a new request (a point is forgotten once), so the
//! store shrinks by a few hundred points over a run of 30 000: the cost of
//! a request does not depend on that. Apply and commit are what
//! `Store::forget` does between being called and returning; the report's
//! `apply_time` and `commit_time` split it, printed once per benchmark.
//!
//! `cargo bench -p mufc --bench store`

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mufc::{ClientId, FederationConfig};
use mufc_store::{ClientRecords, FitOptions, RecordId, Store};
use seeding_testkit::mixtures::paper_gaussian_clients;

/// A store of the built-in data in `dir` with `policy` updating clients.
fn store(dir: &std::path::Path, policy: usize) -> Store {
    let data = paper_gaussian_clients("store-bench", 100, 10, 10, 3000, 3);
    let config = FederationConfig::new(10)
        .seed(2023)
        .min_updating_clients(policy)
        .validate()
        .unwrap_or_else(|e| panic!("{e}"));
    let path = dir.join(format!("model-{policy}.mufc"));
    Store::fit(
        &path,
        ClientRecords::numbered(data),
        &config,
        &FitOptions::new().replace(true),
    )
    .unwrap_or_else(|e| panic!("{e}"))
    .0
}

/// The `skip`-th point of client `c` that is not one of its seeds, as a
/// record (records are numbered by row: client `c` holds `300 c ..`).
fn non_seed(store: &Store, c: u64, skip: usize) -> Option<RecordId> {
    let client = store.federation().client(ClientId(c))?;
    let p = client
        .data()
        .ids()
        .iter()
        .copied()
        .filter(|p| !client.seed_ids().contains(p))
        .nth(skip)?;
    RecordId::try_from(300 * c + p.0).ok()
}

fn forget(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("store");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    for (name, policy) in [("forget-one-point", 1usize), ("forget-two-clients", 2)] {
        let mut s = store(dir.path(), policy);
        // Requests go round the clients; `round` counts the passes.
        let mut next = 0u64;
        let mut split = (Duration::ZERO, Duration::ZERO, 0u32);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let ids: Vec<RecordId> = (0..policy as u64)
                        .filter_map(|j| {
                            let k = next * policy as u64 + j;
                            non_seed(&s, k % 100, usize::try_from(k / 100).unwrap_or(0))
                        })
                        .collect();
                    next += 1;
                    let start = Instant::now();
                    let r = s.forget(&ids).unwrap_or_else(|e| panic!("{e}"));
                    total += start.elapsed();
                    assert!(!r.outcome.is_deferred() && r.reseeded.is_empty());
                    split.0 += r.apply_time;
                    split.1 += r.commit_time;
                    split.2 += 1;
                }
                total
            });
        });
        println!(
            "store/{name}: mean apply {:.3} ms, mean commit {:.3} ms over {} requests",
            split.0.as_secs_f64() * 1e3 / f64::from(split.2.max(1)),
            split.1.as_secs_f64() * 1e3 / f64::from(split.2.max(1)),
            split.2
        );
    }
    group.finish();
}

criterion_group!(benches, forget);
criterion_main!(benches);
