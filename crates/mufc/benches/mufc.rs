//! Federated training (Algorithm 1) and single-point removal (Algorithm 4)
//! on the paper's Gaussian setup (Appendix M.1: n = 30000, d = 10, K = 10,
//! L = 100 clients, non-iid with K' = 3 clusters per client, gamma =
//! 1/sqrt(n d), the default), with bin centres and with uniform samples at the server.
//!
//! `remove-non-seed` removes a random point that is not its client's seed
//! (counts change, no reseeding); `remove-seed` a random seed (the client
//! reseeds from it). The federation is cloned outside the timed routine.
//! Wall-clock times on the 2-core machine; the paper's time (slowest client
//! plus server) and the CPU time come from the reports, printed by the
//! `unlearn_ratio` example (see docs/benchmarks.md, "## mufc").

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use mufc::remote::{InProcess, RemoteServer};
use mufc::{
    AdditionRequest, ClientId, Federation, FederationConfig, RemovalRequest, ServerPoints,
    ServerSnapshot, ValidConfig,
};
use rand::RngExt;
use seeding::{Dataset, PointId};

fn request(fed: &Federation, seed: bool, rng: &mut impl rand::Rng) -> RemovalRequest {
    let ids = fed.client_ids();
    let c: ClientId = ids[rng.random_range(0..ids.len())];
    let client = fed.client(c).expect("a listed client");
    let id: PointId = if seed {
        let s = client.seed_ids();
        s[rng.random_range(0..s.len())]
    } else {
        let non_seeds: Vec<PointId> = client
            .data()
            .ids()
            .iter()
            .copied()
            .filter(|id| !client.seed_ids().contains(id))
            .collect();
        non_seeds[rng.random_range(0..non_seeds.len())]
    };
    RemovalRequest::points(c, vec![id])
}

/// A criterion group of this file.
type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// `fit`: training on `data` from scratch.
fn bench_fit(g: &mut Group<'_>, data: &[Dataset], config: &ValidConfig) {
    g.bench_function("fit", |b| {
        b.iter_batched(
            || data.to_vec(),
            |d| {
                black_box(
                    Federation::new(d, config)
                        .expect("fit")
                        .server()
                        .total_count(),
                )
            },
            BatchSize::LargeInput,
        );
    });
}

/// `name`: one random point removed from `fed` (a seed with `seed`).
fn bench_removal(g: &mut Group<'_>, name: &str, fed: &Federation, seed: bool) {
    let mut rng = testdata::rng(name);
    g.bench_function(name, |b| {
        b.iter_batched(
            || (fed.clone(), request(fed, seed, &mut rng)),
            // The federation is returned, so that dropping it is not
            // timed.
            |(mut f, r)| {
                let report = f.remove(&r).expect("removal");
                black_box((f, report))
            },
            BatchSize::LargeInput,
        );
    });
}

fn federation(c: &mut Criterion) {
    let data: Vec<Dataset> =
        seeding_testkit::mixtures::paper_gaussian_clients("mufc-bench", 100, 10, 10, 3000, 3);
    for points in [ServerPoints::Centers, ServerPoints::Uniform] {
        let config = FederationConfig::new(10)
            .client_k(3)
            .server_points(points)
            // The cost of one single-point removal round, as
            // docs/benchmarks.md records it: served at once instead of
            // waiting for a second client (docs/threat-model.md U3).
            .min_updating_clients(1)
            .seed(1)
            .validate()
            .expect("a valid configuration");
        let mut g = c.benchmark_group(format!(
            "mufc/gaussian-n=30000,L=100,d=10,K=10,K'=3/{points}"
        ));
        g.sample_size(10);
        g.measurement_time(Duration::from_secs(8));
        bench_fit(&mut g, &data, &config);
        let fed = Federation::new(data.clone(), &config).expect("fit");
        for (name, seed) in [("remove-non-seed", false), ("remove-seed", true)] {
            bench_removal(&mut g, name, &fed, seed);
        }
        g.finish();
    }
}

/// The paper's Gaussian set (n = 30000, L = 100, d = 10, K = 10, K' = 3),
/// client `i` named `ClientId(i)`.
fn numbered_gaussian() -> Vec<(ClientId, Dataset)> {
    seeding_testkit::mixtures::paper_gaussian_clients("mufc-bench", 100, 10, 10, 3000, 3)
        .into_iter()
        .enumerate()
        .map(|(i, d)| (ClientId(i as u64), d))
        .collect()
}

/// A server's snapshot taken back (`RemoteServer::from_snapshot`): as a
/// running server took it (it carries the server's state, what a store's
/// commit checks) against read back from its bytes (rebuilt and checked,
/// the server's K-means run again).
fn snapshot(c: &mut Criterion) {
    let data = numbered_gaussian();
    let config = FederationConfig::new(10)
        .client_k(3)
        .seed(1)
        .validate()
        .expect("a valid configuration");
    let parties = InProcess::train(data, &config).expect("fit");
    let server = parties.server();
    let roster = server.setup().roster().to_vec();
    let bytes = postcard::to_allocvec(&server.snapshot().expect("a snapshot")).expect("bytes");
    let mut g = c.benchmark_group("mufc/snapshot/gaussian-n=30000,L=100,d=10,K=10,K'=3");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(6));
    g.bench_function("taken", |b| {
        b.iter_batched(
            || server.snapshot().expect("a snapshot"),
            |s| black_box(RemoteServer::from_snapshot(s, roster.clone()).expect("resumed")),
            BatchSize::LargeInput,
        );
    });
    g.bench_function("read-back", |b| {
        b.iter_batched(
            || postcard::from_bytes::<ServerSnapshot>(&bytes).expect("a snapshot"),
            |s| black_box(RemoteServer::from_snapshot(s, roster.clone()).expect("resumed")),
            BatchSize::LargeInput,
        );
    });
    g.finish();
}

/// Additions that keep every client's seeds, or change one client's, on
/// the paper's Gaussian set: a record is a copy of a random point of a
/// random client (so it lies where the client's data does) under a new
/// id; whether it wins a round of the seeding race is found on a clone,
/// before timing. Capped at `n` candidates drawn.
fn additions(fed: &Federation, n: usize) -> (Vec<AdditionRequest>, Vec<AdditionRequest>) {
    let mut rng = testdata::rng("mufc-bench-additions");
    let (mut keep, mut reseed) = (Vec::new(), Vec::new());
    for i in 0..n {
        let ids = fed.client_ids();
        let c = ids[rng.random_range(0..ids.len())];
        let data = fed.client(c).expect("a listed client").data();
        let p = rng.random_range(0..data.len());
        let m = nalgebra::DMatrix::from_column_slice(data.dim(), 1, data.point(p));
        let id = PointId(1_000_000 + i as u64);
        let one = Dataset::with_ids(m, vec![id]).expect("one record");
        let request = AdditionRequest::records(c, one);
        let report = fed.clone().add(&request).expect("an addition");
        match report.reseeded.is_empty() {
            true => keep.push(request),
            false => reseed.push(request),
        }
    }
    (keep, reseed)
}

/// The cost of an addition round against a removal round and a refit
/// (issue 29), on the paper's Gaussian set with bin centres, every
/// request served at once, room left for records (`max_points`).
fn arrivals(c: &mut Criterion) {
    let data: Vec<Dataset> =
        seeding_testkit::mixtures::paper_gaussian_clients("mufc-bench", 100, 10, 10, 3000, 3);
    let config = FederationConfig::new(10)
        .client_k(3)
        .min_updating_clients(1)
        .max_points(31_000)
        .seed(1)
        .validate()
        .expect("a valid configuration");
    let fed = Federation::new(data.clone(), &config).expect("fit");
    let (keep, reseed) = additions(&fed, 400);
    let mut g = c.benchmark_group("mufc/arrivals/gaussian-n=30000,L=100,d=10,K=10,K'=3");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(8));
    bench_fit(&mut g, &data, &config);
    bench_removal(&mut g, "remove-non-seed", &fed, false);
    for (name, pool) in [("add-keeps-seeds", &keep), ("add-reseeds", &reseed)] {
        if pool.is_empty() {
            eprintln!("{name}: no candidate of 400 drawn");
            continue;
        }
        eprintln!("{name}: {} of 400 candidates", pool.len());
        let mut next = pool.iter().cycle();
        g.bench_function(name, |b| {
            b.iter_batched(
                || (fed.clone(), next.next().expect("a cycle").clone()),
                |(mut f, r)| {
                    let report = f.add(&r).expect("addition");
                    black_box((f, report))
                },
                BatchSize::LargeInput,
            );
        });
    }
    g.finish();
}

criterion_group!(benches, federation, snapshot, arrivals);
criterion_main!(benches);
