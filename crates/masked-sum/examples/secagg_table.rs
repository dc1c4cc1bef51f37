//! Prints the per-step cost table of `docs/benchmarks.md` ("Secure
//! aggregation with dropouts"): for each configuration, the mean time one
//! client spends on each step, the server's time to close each step, and
//! the bytes per client up and down, measured by the in-process transport
//! over serialized messages (medians over runs of those per-run figures).
//!
//! `cargo run --release -p masked-sum --example secagg_table [filter]`
//! (the complete graph at n = 1000, t = 6200 runs only when the filter is
//! exactly `complete/n=1000/t=6200`)
//!
//! Vectors of length `2t + 1` over GF(2^61 - 1). Threat model
//! `gamma = delta = 0.1`, semi-malicious server: the complete graph uses
//! `t = floor((n + c) / 2) + 1`, SecAgg+ the finder's Harary graph. In
//! every run `max(1, n / 20)` clients go silent before their masked input
//! (the server's costliest dropout: it recomputes their pairwise masks).

// Client counts and byte totals are small: the casts for printing are exact.
#![allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]

use std::time::Duration;

use field::{FiniteField, Mersenne61};
use masked_sum::masking::pairwise::{RoundContext, SessionId};
use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel, ThreatModel};
use masked_sum::secagg::transport::{Faults, InProcess, StepStats};
use masked_sum::secagg::{SessionConfig, Step};
use rand::RngExt;

fn ms(d: Duration) -> String {
    let v = d.as_secs_f64() * 1e3;
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn kib(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / 1024.0 / 1024.0)
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

fn median<T: Clone + PartialOrd>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(core::cmp::Ordering::Equal));
    v[v.len() / 2].clone()
}

fn main() -> Result<(), masked_sum::SumError> {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let f = Mersenne61;
    println!(
        "| n | graph (k, t) | sketch t | client ms: keys / shares / masked / attest / unmask | server ms: keys / shares / masked / attest / unmask | up per client: keys / shares / masked / attest / unmask | down per client: directory / request / alive set / unmask |"
    );
    println!("|---|---|---|---|---|---|---|");
    for n in [10usize, 100, 1000] {
        let threat = ThreatModel::new(n, 0.1, 0.1, ServerModel::SemiMalicious);
        for graph in ["complete", "harary"] {
            let params: SecAggParams = if graph == "complete" {
                threat.complete()?
            } else {
                threat.find()?
            };
            let shape = match params.graph {
                GraphChoice::Complete => format!("complete ({}, {})", n - 1, params.threshold),
                GraphChoice::Harary { degree } => {
                    format!("Harary ({degree}, {})", params.threshold)
                }
            };
            for t in [400usize, 6200] {
                let name = format!("{graph}/n={n}/t={t}");
                if !name.contains(&filter) {
                    continue;
                }
                // About 12 minutes on its own: run only when asked for by
                // name (`secagg_table complete/n=1000/t=6200`).
                if graph == "complete" && n == 1000 && t == 6200 && filter != name {
                    println!(
                        "| {n} | {shape} | {t} | skipped (about 12 min; name it to run it) | | | |"
                    );
                    continue;
                }
                let runs = if n >= 1000 { 1 } else { 3 };
                let len = 2 * t + 1;
                let mut per_run: Vec<Vec<StepStats>> = Vec::new();
                for r in 0..runs {
                    let mut rng = testdata::rng(&format!("{name}/{r}"));
                    let graph = params.graph_for(1..=n as u64, &mut rng)?;
                    let mut s = [0u8; 32];
                    rng.fill(&mut s);
                    let ctx = RoundContext {
                        session: SessionId(s),
                        round: 0,
                    };
                    let cfg = std::sync::Arc::new(SessionConfig::new(f, ctx, graph, params, len)?);
                    let inputs = (1..=n as u64)
                        .map(|id| (id, (0..len).map(|_| f.random(&mut rng)).collect()))
                        .collect();
                    let mut faults = Faults::new();
                    for c in 1..=(n / 20).max(1) as u64 {
                        faults = faults.drop_from(c * 7 % n as u64 + 1, Step::MaskedInput);
                    }
                    let report = InProcess::new(cfg)
                        .with_faults(faults)
                        .run(inputs, &mut rng)?;
                    report.output?;
                    per_run.push(report.stats.into_values().collect());
                }
                let client: Vec<String> = (0..5)
                    .map(|i| {
                        ms(median(
                            per_run
                                .iter()
                                .map(|r| r[i].client_time / r[i].clients.max(1) as u32)
                                .collect(),
                        ))
                    })
                    .collect();
                let server: Vec<String> = (0..5)
                    .map(|i| ms(median(per_run.iter().map(|r| r[i].server_time).collect())))
                    .collect();
                let up: Vec<String> = (0..5)
                    .map(|i| {
                        kib(median(
                            per_run
                                .iter()
                                .map(|r| r[i].bytes_up as f64 / r[i].clients.max(1) as f64)
                                .collect(),
                        ))
                    })
                    .collect();
                let down: Vec<String> = (1..5)
                    .map(|i| {
                        kib(median(
                            per_run
                                .iter()
                                .map(|r| r[i].bytes_down as f64 / r[i].clients.max(1) as f64)
                                .collect(),
                        ))
                    })
                    .collect();
                println!(
                    "| {n} | {shape} | {t} | {} | {} | {} | {} |",
                    client.join(" / "),
                    server.join(" / "),
                    up.join(" / "),
                    down.join(" / ")
                );
            }
        }
    }
    Ok(())
}
