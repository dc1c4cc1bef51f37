//! `mufc run`: Algorithm 1 over the trials, with the loss ratio, the
//! stage times and the sizes of the first trial.

use std::time::Instant;

use mufc::{Federation, StageTimes};
use serde_json::{Value, json};

use super::prepare::Prepared;
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
    let (trials, first) = Trials::run(a, &p, &clients, phi_star, &mut bar)?;
    bar.finish();
    // `trials >= 1`, so the loop ran.
    let (fit, fed) = first.ok_or(CliError::NoData("no trial ran"))?;
    let m = Means::of(&trials);
    let mut warnings = p.warnings.clone();
    if let Some(w) = straddle_warning(m.pf, m.pc) {
        warnings.push(w);
    }
    let total = start.elapsed().as_secs_f64();
    let json = merged(
        json!({ "command": "run" }),
        merged(
            merged(data_json(&p, seed), settings_json(&a.fed, &p)?),
            run_json(a, phi_star, &trials, &m, &fit, &fed, total),
        ),
    );
    let text = format!(
        "mufc run: {}\n{}; seed {}\n\n{}\ntimes are means over trials; total time {:.1} s\n",
        p.summary(),
        fed_summary(&a.fed, &p),
        seed,
        run_table(a, phi_star, &m, &fit).render(),
        total
    );
    Ok(Report {
        json,
        text,
        warnings,
        exit: 0,
    })
}

/// What each trial gave, in trial order.
struct Trials {
    /// The loss ratios phi_f / phi_c*.
    ratios: Vec<f64>,
    /// phi_f.
    phis: Vec<f64>,
    /// phi_c: the same centroids, each point at its nearest.
    nearest: Vec<f64>,
    times: Vec<StageTimes>,
}

impl Trials {
    /// Runs the trials; with them, the first trial's report and
    /// federation, whose sizes the report shows.
    fn run(
        a: &RunArgs,
        p: &Prepared,
        clients: &[seeding::Dataset],
        phi_star: f64,
        bar: &mut Progress,
    ) -> Result<(Self, Option<(mufc::FitReport, Federation)>), CliError> {
        let mut trials = Self {
            ratios: Vec::new(),
            phis: Vec::new(),
            nearest: Vec::new(),
            times: Vec::new(),
        };
        let mut first: Option<(mufc::FitReport, Federation)> = None;
        for t in 0..a.trials {
            let fed = Federation::new(
                clients.to_vec(),
                &fed_config(p, &a.fed, trial_seed(a.common.seed, t))?,
            )?;
            let o = fed.objectives(Some(phi_star))?;
            trials.ratios.push(o.loss_ratio.unwrap_or(f64::NAN));
            trials.phis.push(o.phi_f);
            trials.nearest.push(o.phi_c);
            trials.times.push(fed.fit_report().times);
            if first.is_none() {
                first = Some((fed.fit_report().clone(), fed));
            }
            bar.inc(1);
        }
        Ok((trials, first))
    }
}

/// The means over the trials: the objectives, and the stage times in
/// seconds.
struct Means {
    lr: f64,
    lr_std: f64,
    pf: f64,
    pf_std: f64,
    pc: f64,
    client: f64,
    aggregation: f64,
    decode: f64,
    server: f64,
    paper: f64,
    cpu: f64,
    wall: f64,
}

impl Means {
    fn of(trials: &Trials) -> Self {
        let mean_of = |f: &dyn Fn(&StageTimes) -> f64| {
            mean_std(&trials.times.iter().map(f).collect::<Vec<_>>()).0
        };
        let (lr, lr_std) = mean_std(&trials.ratios);
        let (pf, pf_std) = mean_std(&trials.phis);
        let (pc, _) = mean_std(&trials.nearest);
        Self {
            lr,
            lr_std,
            pf,
            pf_std,
            pc,
            client: mean_of(&|t| federated::secs(t.client_max)),
            aggregation: mean_of(&|t| federated::secs(t.aggregation())),
            decode: mean_of(&|t| federated::secs(t.decode)),
            server: mean_of(&|t| federated::secs(t.server_total())),
            paper: mean_of(&|t| federated::secs(t.paper())),
            cpu: mean_of(&|t| federated::secs(t.cpu())),
            wall: mean_of(&|t| federated::secs(t.wall)),
        }
    }
}

/// `mufc run --json`'s fields beyond the data and the settings.
fn run_json(
    a: &RunArgs,
    phi_star: f64,
    trials: &Trials,
    m: &Means,
    fit: &mufc::FitReport,
    fed: &Federation,
    total: f64,
) -> Value {
    let sketch = fit.sketch.as_ref();
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
        "loss_ratio": m.lr,
        "loss_ratio_std": m.lr_std,
        "loss_ratios": trials.ratios,
        "phi_f": m.pf,
        "phi_f_std": m.pf_std,
        "phi_c": m.pc,
        "phi_c_star": phi_star,
        "phi_c_star_restarts": a.data.restarts,
        "client_seconds": m.client,
        "aggregation_seconds": m.aggregation,
        "decode_seconds": m.decode,
        "server_seconds": m.server,
        "paper_seconds": m.paper,
        "cpu_seconds": m.cpu,
        "wall_seconds": m.wall,
        "bytes_per_client": fit.bytes_per_client,
        "nonzero_bins": fit.nonzero_bins,
        "server_points_count": fit.server_points,
        "sketch_capacity": sketch.map(|s| s.capacity),
        "sketch_elements": sketch.map(|s| s.elements),
        "modulus_bits": sketch.map(|s| s.modulus_bits),
        "sketch_scheme": sketch.map(|s| s.scheme.clone()),
        "rounds": fed.rounds(),
        "seconds_total": total,
    })
}

/// `mufc run`'s table: the objectives, the stage times, then the first
/// trial's sizes.
fn run_table(a: &RunArgs, phi_star: f64, m: &Means, fit: &mufc::FitReport) -> TextTable {
    let mut table = TextTable::new(&["", "value"]);
    let ms = |x: f64| format!("{:.2} ms", x * 1e3);
    table.row([
        format!(
            "loss ratio phi_f / phi_c* ({})",
            crate::output::count(a.trials as u64, "trial")
        ),
        fmt_mean_std(m.lr, m.lr_std, 4),
    ]);
    table.row(["phi_f".to_string(), format!("{:.4}", m.pf)]);
    table.row([
        "phi_c (the same centroids, each point at its nearest)".to_string(),
        format!("{:.4}", m.pc),
    ]);
    table.row([
        format!("phi_c* (best of {} centralized K-means)", a.data.restarts),
        format!("{phi_star:.4}"),
    ]);
    table.row(["slowest client (training)".to_string(), ms(m.client)]);
    table.row([
        "aggregation (slowest encode + mask, sum)".to_string(),
        ms(m.aggregation),
    ]);
    table.row(["server decode".to_string(), ms(m.decode)]);
    table.row(["server decode + K-means".to_string(), ms(m.server)]);
    table.row([
        "time as the paper counts (slowest client + server)".to_string(),
        ms(m.paper),
    ]);
    table.row(["total CPU time".to_string(), ms(m.cpu)]);
    table.row(["wall clock".to_string(), ms(m.wall)]);
    table.row([
        "bytes per client".to_string(),
        fit.bytes_per_client.to_string(),
    ]);
    table.row(["nonzero bins".to_string(), fit.nonzero_bins.to_string()]);
    table.row([
        "clients included (of the first trial's training round)".to_string(),
        included_summary(&fit.included, &fit.dropped),
    ]);
    if let Some(s) = fit.sketch.as_ref() {
        table.row([
            "sketch: scheme, capacity t, elements, modulus bits".to_string(),
            format!(
                "{}, {}, {}, {}",
                s.scheme, s.capacity, s.elements, s.modulus_bits
            ),
        ]);
    }
    table
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
