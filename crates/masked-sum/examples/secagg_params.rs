//! Prints the SecAgg+ parameters the finder picks (Harary degree `k`,
//! threshold `t`, colluders tolerated per neighbourhood `c`) for security
//! `2^-40` and failure probability `2^-20`, as in `docs/benchmarks.md`
//! ("Secure aggregation with dropouts").
//!
//! `cargo run --release -p masked-sum --example secagg_params`

use masked_sum::secagg::params::{GraphChoice, ServerModel, ThreatModel};

fn main() {
    println!("| n | delta | gamma | semi-honest k / t / c | semi-malicious k / t / c |");
    println!("|---|---|---|---|---|");
    for n in [10usize, 100, 1000, 10_000, 100_000] {
        for (d, g) in [(0.05, 0.05), (0.1, 0.1), (0.05, 0.2)] {
            let cell = |m| match ThreatModel::new(n, d, g, m).find() {
                Ok(p) => {
                    let k = match p.graph {
                        GraphChoice::Harary { degree } => degree.to_string(),
                        GraphChoice::Complete => format!("complete ({})", n - 1),
                    };
                    format!("{k} / {} / {}", p.threshold, p.max_colluders)
                }
                Err(e) => format!("infeasible: {e}"),
            };
            println!(
                "| {n} | {d} | {g} | {} | {} |",
                cell(ServerModel::SemiHonest),
                cell(ServerModel::SemiMalicious)
            );
        }
    }
}
