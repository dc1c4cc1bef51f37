//! `mufc forget` as a user runs it: a whole process (start, open the store,
//! check it, serve the request, commit, print) on a store of the built-in
//! data (30 000 points, 100 clients), timed around the process (issue
//! 25's target: one record in at most 100 ms, median).
//!
//! Three requests, each a new one at every iteration, on records that are
//! not seeds (a seed makes its client reseed, Algorithm 3: slower, and
//! rare):
//!
//! - `forget/one-record-deferred`: one record of client 0 under the
//!   default policy (two updating clients): erased at once, the model
//!   update deferred;
//! - `forget/one-record-applied`: one record, on a store fitted with
//!   `--min-updating-clients 1`: erased and applied;
//! - `forget/two-clients-applied`: a record of each of two clients under
//!   the default policy: applied.
//!
//! Each bench prints the median of its processes too. Run with
//! `cargo bench -p mufc-cli --bench forget` (release build).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mufc_store::{RecordId, Store};

const MUFC: &str = env!("CARGO_BIN_EXE_mufc");

fn run(args: &[&str]) {
    let out = Command::new(MUFC)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    // 0: applied; 3: erased, the model update deferred.
    assert!(
        matches!(out.status.code(), Some(0 | 3)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A store of the built-in data at `path`.
fn fit(path: &Path, extra: &[&str]) {
    let p = path.to_str().unwrap_or_else(|| panic!("a UTF-8 path"));
    run(&[&["fit", "--model", p, "--force", "-q"], extra].concat());
}

/// The records of each client that are not seeds, by client number.
fn non_seeds(path: &Path) -> Vec<Vec<RecordId>> {
    let store = Store::open(path).unwrap_or_else(|e| panic!("{e}"));
    let fed = store.federation();
    let mut per: Vec<Vec<RecordId>> = vec![Vec::new(); fed.clients().len()];
    for row in 0..store.num_points() as i64 {
        let id = RecordId::from(row);
        let Some((c, p)) = store.placement(&id) else {
            continue;
        };
        let Some(client) = fed.client(c) else {
            continue;
        };
        if !client.seed_ids().contains(&p) {
            let at = fed
                .clients()
                .binary_search_by_key(&c, |x| x.id())
                .unwrap_or_else(|_| panic!("client {c}"));
            per[at].push(id);
        }
    }
    per
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or_default()
}

fn forget(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let default = dir.path().join("default.mufc");
    let lone = dir.path().join("policy-1.mufc");
    fit(&default, &[]);
    fit(&lone, &["--min-updating-clients", "1"]);
    let mut group = c.benchmark_group("forget");
    // About a hundred processes a case: client 0 holds 300 records, and
    // the deferred case takes them all from it.
    group.sample_size(20);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(5));
    let cases: [(&str, &Path, usize); 3] = [
        ("one-record-deferred", &default, 1),
        ("one-record-applied", &lone, 1),
        ("two-clients-applied", &default, 2),
    ];
    for (name, path, clients) in cases {
        let mut pool = non_seeds(path);
        let model = path.to_str().unwrap_or_else(|| panic!("a UTF-8 path"));
        let mut times = Vec::new();
        let mut next = 0usize;
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // Client 0 alone (deferred), or clients next, next + 1.
                    let ids: Vec<String> = (0..clients)
                        .map(|j| {
                            let at = if clients == 1 && name.ends_with("deferred") {
                                0
                            } else {
                                (next + j) % pool.len()
                            };
                            pool[at]
                                .pop()
                                .unwrap_or_else(|| panic!("client {at} ran out of records"))
                                .to_string()
                        })
                        .collect();
                    next += clients;
                    let start = Instant::now();
                    run(&["forget", "--model", model, "--ids", &ids.join(","), "-q"]);
                    let t = start.elapsed();
                    times.push(t);
                    total += t;
                }
                total
            });
        });
        println!(
            "forget/{name}: median {:.1} ms over {} processes",
            median(times).as_secs_f64() * 1e3,
            next / clients
        );
    }
    group.finish();
}

criterion_group! {
    name = benches;
    // Criterion's plots need a font this machine may lack; the numbers
    // are what docs/benchmarks.md records.
    config = Criterion::default().without_plots();
    targets = forget
}
criterion_main!(benches);
