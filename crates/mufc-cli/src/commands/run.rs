//! `mufc run`: Algorithm 1 over the trials, with the loss ratio, the
//! stage times and the sizes of the first trial.

use std::time::Instant;

use mufc::{Federation, StageTimes};
use serde_json::json;

use super::summary::{data_json, fed_summary, included_summary, merged, settings_json};
use super::trials::{fed_config, prepare_trials, trial_seed};
use crate::CliError;
use crate::cli::RunArgs;
use crate::federated;
use crate::output::{Report, TextTable, fmt_mean_std, mean_std};
use crate::progress::Progress;

/// `mufc run`: Algorithm 1 on the data, over the trials (federation seed
/// per trial; same data and split).
///
/// # Errors
///
/// As [`prepare`](super::prepare) and [`Federation::new`].
pub fn run(a: &RunArgs, progress: bool) -> Result<Report, CliError> {
    let seed = a.common.seed;
    let start = Instant::now();
    let (mut p, clients) = prepare_trials(&a.data, &a.fed, seed, a.trials)?;
    let mut bar = Progress::new(a.trials as u64 + 1, "run", progress);
    let phi_star = p.phi_c_star(a.data.restarts, seed)?;
    bar.inc(1);
    let (mut ratios, mut phis, mut times) = (Vec::new(), Vec::new(), Vec::new());
    let mut nearest = Vec::new();
    let mut first: Option<(mufc::FitReport, Federation)> = None;
    for t in 0..a.trials {
        let fed = Federation::new(
            clients.clone(),
            &fed_config(&p, &a.fed, trial_seed(seed, t))?,
        )?;
        let o = fed.objectives(Some(phi_star))?;
        ratios.push(o.loss_ratio.unwrap_or(f64::NAN));
        phis.push(o.phi_f);
        nearest.push(o.phi_c);
        times.push(fed.fit_report().times);
        if first.is_none() {
            first = Some((fed.fit_report().clone(), fed));
        }
        bar.inc(1);
    }
    bar.finish();
    // `trials >= 1`, so the loop ran.
    let (fit, fed) = first.ok_or(CliError::NoData("no trial ran"))?;
    let mean_of =
        |f: &dyn Fn(&StageTimes) -> f64| mean_std(&times.iter().map(f).collect::<Vec<_>>()).0;
    let (lr, lr_std) = mean_std(&ratios);
    let (pf, pf_std) = mean_std(&phis);
    let (pc, _) = mean_std(&nearest);
    let mut warnings = p.warnings.clone();
    if let Some(w) = straddle_warning(pf, pc) {
        warnings.push(w);
    }
    let client = mean_of(&|t| federated::secs(t.client_max));
    let aggregation = mean_of(&|t| federated::secs(t.aggregation()));
    let decode = mean_of(&|t| federated::secs(t.decode));
    let server = mean_of(&|t| federated::secs(t.server_total()));
    let paper = mean_of(&|t| federated::secs(t.paper()));
    let cpu = mean_of(&|t| federated::secs(t.cpu()));
    let wall = mean_of(&|t| federated::secs(t.wall));
    let sketch = fit.sketch.as_ref();
    let total = start.elapsed().as_secs_f64();
    let json = merged(
        json!({ "command": "run" }),
        merged(
            merged(data_json(&p, seed), settings_json(&a.fed, &p)?),
            json!({
                "trials": a.trials,
                "privacy": a.fed.privacy.name(),
                "masking": a.fed.masking.name(),
                "dropout": a.fed.dropout,
                "included_clients": fit.included.iter().map(|c| c.0).collect::<Vec<_>>(),
                "dropped_clients": fit
                    .dropped
                    .iter()
                    .map(|(c, step)| json!({ "client": c.0, "step": step.to_string() }))
                    .collect::<Vec<_>>(),
                "loss_ratio": lr,
                "loss_ratio_std": lr_std,
                "loss_ratios": ratios,
                "phi_f": pf,
                "phi_f_std": pf_std,
                "phi_c": pc,
                "phi_c_star": phi_star,
                "phi_c_star_restarts": a.data.restarts,
                "client_seconds": client,
                "aggregation_seconds": aggregation,
                "decode_seconds": decode,
                "server_seconds": server,
                "paper_seconds": paper,
                "cpu_seconds": cpu,
                "wall_seconds": wall,
                "bytes_per_client": fit.bytes_per_client,
                "nonzero_bins": fit.nonzero_bins,
                "server_points_count": fit.server_points,
                "sketch_capacity": sketch.map(|s| s.capacity),
                "sketch_elements": sketch.map(|s| s.elements),
                "modulus_bits": sketch.map(|s| s.modulus_bits),
                "sketch_scheme": sketch.map(|s| s.scheme.clone()),
                "rounds": fed.rounds(),
                "seconds_total": total,
            }),
        ),
    );
    let mut table = TextTable::new(&["", "value"]);
    let ms = |x: f64| format!("{:.2} ms", x * 1e3);
    table.row([
        format!(
            "loss ratio phi_f / phi_c* ({})",
            crate::output::count(a.trials as u64, "trial")
        ),
        fmt_mean_std(lr, lr_std, 4),
    ]);
    table.row(["phi_f".to_string(), format!("{pf:.4}")]);
    table.row([
        "phi_c (the same centroids, each point at its nearest)".to_string(),
        format!("{pc:.4}"),
    ]);
    table.row([
        format!("phi_c* (best of {} centralized K-means)", a.data.restarts),
        format!("{phi_star:.4}"),
    ]);
    table.row(["slowest client (training)".to_string(), ms(client)]);
    table.row([
        "aggregation (slowest encode + mask, sum)".to_string(),
        ms(aggregation),
    ]);
    table.row(["server decode".to_string(), ms(decode)]);
    table.row(["server decode + K-means".to_string(), ms(server)]);
    table.row([
        "time as the paper counts (slowest client + server)".to_string(),
        ms(paper),
    ]);
    table.row(["total CPU time".to_string(), ms(cpu)]);
    table.row(["wall clock".to_string(), ms(wall)]);
    table.row([
        "bytes per client".to_string(),
        fit.bytes_per_client.to_string(),
    ]);
    table.row(["nonzero bins".to_string(), fit.nonzero_bins.to_string()]);
    table.row([
        "clients included (of the first trial's training round)".to_string(),
        included_summary(&fit.included, &fit.dropped),
    ]);
    if let Some(s) = sketch {
        table.row([
            "sketch: scheme, capacity t, elements, modulus bits".to_string(),
            format!(
                "{}, {}, {}, {}",
                s.scheme, s.capacity, s.elements, s.modulus_bits
            ),
        ]);
    }
    let text = format!(
        "mufc run: {}\n{}; seed {}\n\n{}\ntimes are means over trials; total time {:.1} s\n",
        p.summary(),
        fed_summary(&a.fed, &p),
        seed,
        table.render(),
        total
    );
    Ok(Report {
        json,
        text,
        warnings,
        exit: 0,
    })
}

/// A warning when `phi_f` (each point charged to the server centroid its
/// local cluster went to, the paper's objective) is more than 5 % above
/// `phi_c` (the same centroids, each point at its nearest): the clients'
/// clusters straddle the server's, as on data whose clusters overlap.
///
fn straddle_warning(phi_f: f64, phi_c: f64) -> Option<String> {
    let excess = phi_f / phi_c - 1.0;
    (phi_c > 0.0 && excess > 0.05).then(|| {
        format!(
            "phi_f is {:.0} % above the same centroids' objective with every point at its \
             nearest (phi_c): points are charged through local clusters that lie across the \
             server's boundaries, as on data whose clusters overlap (more clusters a client, \
             --client-k, or full client K-means bring it down, at bytes and decode time; \
             docs/benchmarks.md, \"The defaults on the data suite, after an audit\"), or when \
             clients dropped out of training (their clusters never reached the server)",
            100.0 * excess
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_straddle_warning_says_by_how_much() {
        assert!(straddle_warning(124.0, 101.0).unwrap().contains("23 %"));
        assert_eq!(straddle_warning(102.0, 100.0), None);
        assert_eq!(straddle_warning(1.0, 0.0), None);
    }
}
