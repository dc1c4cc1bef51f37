//! Secure aggregation with dropouts: whole in-process protocol runs
//! (every client and the server, serialized messages), Shamir sharing of
//! 32-byte secrets, and the SecAgg+ parameter finder.
//!
//! `cargo bench -p masked-sum --bench secagg`
//!
//! Vectors of length `2t + 1` over GF(2^61 - 1) for sketch capacities
//! t = 400 and t = 6200. Threat model `gamma = delta = 0.1` with a
//! semi-malicious server: the complete graph uses `t = floor((n + c) / 2) +
//! 1`, SecAgg+ the finder's Harary graph; `max(1, n / 20)` clients go
//! silent before their masked input. The complete graph at n = 1000 is
//! left out (minutes per run: each of the 1000 clients agrees keys and
//! masks with 999 peers); the per-step table of `docs/benchmarks.md` comes
//! from the `secagg_table` example.
#![allow(missing_docs, clippy::unwrap_used)]
// Client counts are small: the casts are exact.
#![allow(clippy::cast_possible_truncation)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use field::{FiniteField, Mersenne61};
use masked_sum::masking::pairwise::{RoundContext, SessionId};
use masked_sum::secagg::params::{SecAggParams, ServerModel, ThreatModel};
use masked_sum::secagg::shamir::{decode_secret_with_errors, reconstruct_secret, split_secret};
use masked_sum::secagg::transport::{Faults, InProcess};
use masked_sum::secagg::{SessionConfig, Step};

fn session(n: usize, params: SecAggParams, len: usize) -> Arc<SessionConfig<Mersenne61>> {
    let mut rng = testdata::rng(&format!("bench-session-{n}"));
    let graph = params.graph_for(1..=n as u64, &mut rng).unwrap();
    let ctx = RoundContext {
        session: SessionId([9; 32]),
        round: 0,
    };
    Arc::new(SessionConfig::new(Mersenne61, ctx, graph, params, len).unwrap())
}

fn protocol(c: &mut Criterion) {
    let f = Mersenne61;
    let mut g = c.benchmark_group("secagg/protocol");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for (n, graphs) in [
        (10usize, &["complete", "harary"][..]),
        (100, &["complete", "harary"]),
        (1000, &["harary"]),
    ] {
        let threat = ThreatModel::new(n, 0.1, 0.1, ServerModel::SemiMalicious);
        for graph in graphs {
            let params = if *graph == "complete" {
                threat.complete().unwrap()
            } else {
                threat.find().unwrap()
            };
            let ts: &[usize] = if n == 1000 { &[400] } else { &[400, 6200] };
            for t in ts {
                let len = 2 * t + 1;
                let cfg = session(n, params, len);
                let mut rng = testdata::rng("bench-inputs");
                let inputs: Vec<(u64, Vec<u64>)> = (1..=n as u64)
                    .map(|id| (id, (0..len).map(|_| f.random(&mut rng)).collect()))
                    .collect();
                let mut faults = Faults::new();
                for c in 1..=(n / 20).max(1) as u64 {
                    faults = faults.drop_from(c * 7 % n as u64 + 1, Step::MaskedInput);
                }
                let id = BenchmarkId::new(format!("{graph}/n={n}"), format!("t={t}"));
                g.bench_function(id, |b| {
                    b.iter_batched(
                        || inputs.clone(),
                        |ins| {
                            let report = InProcess::new(cfg.clone())
                                .with_faults(faults.clone())
                                .run(ins, &mut testdata::rng("bench-run"))
                                .unwrap();
                            black_box(report.output.unwrap())
                        },
                        BatchSize::PerIteration,
                    );
                });
            }
        }
    }
    g.finish();
}

fn shamir(c: &mut Criterion) {
    let mut g = c.benchmark_group("secagg/shamir");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    let secret = [7u8; 32];
    for holders in [10u64, 100, 1000] {
        let t = (holders / 2 + 1) as usize;
        let ids: Vec<u64> = (2..holders + 2).collect();
        let mut rng = testdata::rng("bench-shamir");
        g.bench_with_input(BenchmarkId::new("split-32B", holders), &holders, |b, _| {
            b.iter(|| split_secret(black_box(&secret), t, &ids, &mut rng).unwrap());
        });
        let shares = split_secret(&secret, t, &ids, &mut rng).unwrap();
        g.bench_with_input(
            BenchmarkId::new("reconstruct-32B", holders),
            &holders,
            |b, _| {
                b.iter(|| reconstruct_secret(black_box(&shares), t).unwrap());
            },
        );
        if holders <= 100 {
            let mut bad = shares.clone();
            bad[0].values[0] ^= 1;
            g.bench_with_input(
                BenchmarkId::new("decode-1-error-32B", holders),
                &holders,
                |b, _| {
                    b.iter(|| decode_secret_with_errors(black_box(&bad), t).unwrap());
                },
            );
        }
    }
    g.finish();
}

fn finder(c: &mut Criterion) {
    let mut g = c.benchmark_group("secagg/finder");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    for n in [1000usize, 100_000] {
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, n| {
            b.iter(|| {
                ThreatModel::new(*n, 0.1, 0.1, ServerModel::SemiMalicious)
                    .find()
                    .unwrap()
            });
        });
    }
    g.finish();
}

criterion_group!(benches, protocol, shamir, finder);
criterion_main!(benches);
