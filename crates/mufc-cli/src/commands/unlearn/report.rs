//! What `mufc unlearn` reports: the figures summed over its rounds, the
//! JSON and the text.

use std::path::PathBuf;

use mufc::StageTimes;
use serde_json::{Value, json};

use super::served::{Rounds, Served};
use super::topology::NextToFlat;
use crate::CliError;
use crate::cli::UnlearnArgs;
use crate::commands::experiment::Experiment;
use crate::commands::summary::{data_json, fed_summary, merged, settings_json};
use crate::federated::{self, secs};
use crate::output::{Report, TextTable, count};
use crate::plot::{UnlearnSeries, draw_unlearn_figure};

/// The loss ratios before the requests and after them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Losses {
    /// Before any request, against phi_c* of the whole data.
    pub before: f64,
    /// After the requests, against phi_c* re-estimated on the data left.
    pub after: f64,
    /// After the requests, against phi_c* of the whole data.
    pub after_fixed: f64,
    /// phi_c* of the whole data.
    pub phi_star: f64,
    /// phi_c* of the data left.
    pub star_after: f64,
    /// DC-KMeans' before and after, when compared.
    pub dc_before: Option<f64>,
    pub dc_after: Option<f64>,
}

/// The three time counts of the unlearning rounds and of retraining,
/// summed over the rounds, with the counts of the rounds.
#[derive(Clone, Debug)]
pub(super) struct Figures {
    /// Unlearning: paper count, CPU, wall.
    pub unlearn: (f64, f64, f64),
    /// Retraining: paper count, CPU, wall.
    pub retrain: (f64, f64, f64),
    /// Retrain over unlearn, paper count, on the rounds in which no
    /// client reseeded (`None`: every round reseeded).
    pub clean_speedup: Option<f64>,
    pub reseeded: usize,
    pub refits: usize,
    pub retrained: usize,
    pub equal: usize,
    pub first_diff: Option<String>,
    /// DC-KMeans' total, when compared.
    pub dc_total: Option<f64>,
    /// The mean stage times of an unlearning round and of retraining
    /// (for the JSON and the text alike).
    pub unlearn_stages: Value,
    pub retrain_stages: Value,
}

impl Figures {
    pub(super) fn new(served: &[Served], dc: bool) -> Self {
        let sum = |f: &dyn Fn(&Served) -> f64| served.iter().map(f).sum::<f64>();
        let counts = |f: &dyn Fn(&Served) -> &StageTimes| {
            (
                sum(&|s| secs(f(s).paper())),
                sum(&|s| secs(f(s).cpu())),
                sum(&|s| secs(f(s).wall)),
            )
        };
        let clean: Vec<&Served> = served.iter().filter(|s| !s.reseeded).collect();
        let clean_speedup = (!clean.is_empty()).then(|| {
            let u: f64 = clean.iter().map(|s| secs(s.unlearn.paper())).sum();
            let r: f64 = clean.iter().map(|s| secs(s.retrain.paper())).sum();
            r / u
        });
        Self {
            unlearn: counts(&|s| &s.unlearn),
            retrain: counts(&|s| &s.retrain),
            clean_speedup,
            reseeded: served.iter().filter(|s| s.reseeded).count(),
            refits: served.iter().filter(|s| s.server == "full").count(),
            retrained: served
                .iter()
                .filter(|s| s.reseeded || s.server == "full")
                .count(),
            equal: served.iter().filter(|s| s.equal.is_none()).count(),
            first_diff: served.iter().find_map(|s| s.equal.clone()),
            dc_total: dc.then(|| sum(&|s| s.dc_seconds.unwrap_or(0.0))),
            unlearn_stages: stage_means(served, &|s| &s.unlearn),
            retrain_stages: stage_means(served, &|s| &s.retrain),
        }
    }
}

/// The mean stage times of a round, unlearning's or retraining's.
fn stage_means(served: &[Served], f: &dyn Fn(&Served) -> &StageTimes) -> Value {
    let n = served.len().max(1) as f64;
    let mean = |g: &dyn Fn(&StageTimes) -> f64| served.iter().map(|s| g(f(s))).sum::<f64>() / n;
    json!({
        "slowest_client_seconds": mean(&|t| secs(t.client_round_max)),
        "sum_seconds": mean(&|t| secs(t.sum)),
        "decode_seconds": mean(&|t| secs(t.decode)),
        "server_kmeans_seconds": mean(&|t| secs(t.server)),
        "offline_seconds": mean(&|t| secs(t.offline)),
    })
}

/// The figure of `--plot`, if asked: its path, and whether it has text.
pub(super) fn plot(
    a: &UnlearnArgs,
    served: &[Served],
    figures: &Figures,
    loss_before: f64,
) -> Result<Option<(PathBuf, bool)>, CliError> {
    let Some(path) = &a.plot else {
        return Ok(None);
    };
    let series = UnlearnSeries {
        mufc_seconds: served.iter().map(|s| secs(s.unlearn.paper())).collect(),
        retrain_seconds: served.iter().map(|s| secs(s.retrain.paper())).collect(),
        dc_kmeans_seconds: figures
            .dc_total
            .map(|_| served.iter().map(|s| s.dc_seconds.unwrap_or(0.0)).collect()),
        loss_ratio: std::iter::once(loss_before)
            .chain(served.iter().map(|s| s.loss_ratio))
            .collect(),
        per_round: served.iter().any(|s| s.requests > 1),
    };
    let outcome = draw_unlearn_figure(path, &series)?;
    Ok(Some((path.clone(), outcome.text)))
}

/// Everything one run of `mufc unlearn` reports.
pub(super) struct Run<'a> {
    pub a: &'a UnlearnArgs,
    pub exp: &'a Experiment,
    pub rounds: &'a Rounds,
    pub figures: &'a Figures,
    pub losses: &'a Losses,
    pub removals: usize,
    /// `given`, `random` or `adversarial`.
    pub mode: &'static str,
    /// Training's times.
    pub fit: StageTimes,
    pub dc_fit_seconds: Option<f64>,
    pub next_to_flat: Option<&'a NextToFlat>,
    pub plot: Option<(PathBuf, bool)>,
    /// The run's seconds.
    pub total: f64,
}

/// The report of `run`: its JSON and its text.
pub(super) fn report(run: Run<'_>) -> Result<Report, CliError> {
    let json = merged(run_json(&run)?, figures_json(&run));
    let text = text(&run);
    let warnings = run.exp.p.warnings.iter().cloned();
    Ok(Report {
        json,
        text,
        warnings: warnings
            .chain(run.rounds.warnings.iter().cloned())
            .collect(),
        exit: 0,
    })
}

/// The run's settings and counts.
fn run_json(run: &Run<'_>) -> Result<Value, CliError> {
    let (a, p, served) = (run.a, &run.exp.p, &run.rounds.served);
    Ok(merged(
        json!({ "command": "unlearn" }),
        merged(
            merged(data_json(p, a.common.seed), settings_json(&a.fed, p)?),
            json!({
                "masking": a.fed.masking.name(),
                "dropout": a.fed.dropout,
                "included_clients_per_round": served.iter().map(|s| s.included).collect::<Vec<_>>(),
                "rounds": served.len(),
                "deferred_requests": run.exp.deferred,
                "pending_at_end": run.exp.pending(),
                "flush": a.flush,
                "flushed": run.rounds.flushed,
                "requests_per_round": served.iter().map(|s| s.requests).collect::<Vec<_>>(),
                "privacy": a.fed.privacy.name(),
                "mode": run.mode,
                "batch": if a.whole_clients { Value::Null } else { json!(a.batch) },
                "whole_clients": a.whole_clients,
                "removals": run.removals,
                "removed_points": served.iter().map(|s| s.removed).sum::<usize>(),
                "figures": "per applied removal round (a round applies the deferred requests and the one that completed them)",
                "topology": run.exp.config.topology().name(),
                "next_to_flat": run.next_to_flat.map(NextToFlat::json),
            }),
        ),
    ))
}

/// The run's times, ratios and losses.
fn figures_json(run: &Run<'_>) -> Value {
    let (f, l, served) = (run.figures, run.losses, &run.rounds.served);
    let ((u_paper, u_cpu, u_wall), (r_paper, r_cpu, r_wall)) = (f.unlearn, f.retrain);
    let dc_json = match f.dc_total {
        Some(t) => json!({
            "seconds_total": t,
            "speedup_of_mufc": t / u_paper,
            "loss_ratio_before": l.dc_before,
            "loss_ratio_after": l.dc_after,
            "fit_seconds": run.dc_fit_seconds,
        }),
        None => Value::Null,
    };
    let times = json!({
        "retrained_rounds": f.retrained,
        "reseeded_rounds": f.reseeded,
        "server_refits": f.refits,
        "retrain_measured": served.len(),
        "retrain_equal": f.equal,
        "retrain_first_difference": f.first_diff,
        "time_count": "paper: slowest client + server (sum, decode, K-means); masks dealt offline",
        "unlearn_seconds_total": u_paper,
        "retrain_seconds_total": r_paper,
        "speedup": r_paper / u_paper,
        "speedup_no_retraining": f.clean_speedup,
        "unlearn_cpu_seconds_total": u_cpu,
        "retrain_cpu_seconds_total": r_cpu,
        "speedup_cpu": r_cpu / u_cpu,
        "unlearn_wall_seconds_total": u_wall,
        "retrain_wall_seconds_total": r_wall,
        "speedup_wall": r_wall / u_wall,
        "fit": federated::times_json(&run.fit),
        "unlearn_seconds": served.iter().map(|s| secs(s.unlearn.paper())).collect::<Vec<_>>(),
        "retrain_seconds": served.iter().map(|s| secs(s.retrain.paper())).collect::<Vec<_>>(),
        "unlearn_stage_means": f.unlearn_stages,
        "retrain_stage_means": f.retrain_stages,
        "seconds_total": run.total,
    });
    merged(
        times,
        json!({
            "loss_ratio_before": l.before,
            "loss_ratio_after": l.after,
            "loss_ratio_after_fixed_star": l.after_fixed,
            "loss_ratio_change": l.after / l.before - 1.0,
            "phi_c_star_before": l.phi_star,
            "phi_c_star_after": l.star_after,
            "phi_c_star_restarts": run.a.data.restarts,
            "loss_ratios": served.iter().map(|s| s.loss_ratio).collect::<Vec<_>>(),
            "dc_kmeans": dc_json,
            "plot": run.plot.as_ref().map(|(p, _)| p.display().to_string()),
            "plot_has_text": run.plot.as_ref().map(|(_, t)| *t),
        }),
    )
}

/// Milliseconds, for people.
fn ms(x: f64) -> String {
    format!("{:.3} ms", x * 1e3)
}

/// The table of the mean round, MUFC against retraining (and DC-KMeans).
fn table(f: &Figures, rounds: usize) -> TextTable {
    let per = |x: f64| ms(x / rounds.max(1) as f64);
    let ((u_paper, u_cpu, u_wall), (r_paper, r_cpu, r_wall)) = (f.unlearn, f.retrain);
    let mut table = TextTable::new(&["per round (mean)", "MUFC unlearn", "retrain", "speed-up"]);
    for (name, u, r) in [
        ("paper: slowest client + server", u_paper, r_paper),
        ("total CPU", u_cpu, r_cpu),
        ("wall clock", u_wall, r_wall),
    ] {
        table.row([name.to_string(), per(u), per(r), format!("{:.1}x", r / u)]);
    }
    if let Some(t) = f.dc_total {
        table.row([
            "DC-KMeans (leaf + root)".to_string(),
            per(t),
            String::new(),
            format!("MUFC {:.1}x faster", t / u_paper),
        ]);
    }
    table
}

/// How the requests became rounds, in words.
fn rounds_line(run: &Run<'_>) -> String {
    let rounds = count(run.rounds.served.len() as u64, "removal round");
    let (deferred, pending) = (run.exp.deferred, run.exp.pending());
    let were = match deferred {
        1 => "1 request was".to_string(),
        d => format!("{d} requests were"),
    };
    let them = if deferred == 1 { "it" } else { "them" };
    let line = match (deferred, pending) {
        (0, _) => format!("{rounds}, one per request"),
        (_, 0) => format!(
            "{rounds}: {were} deferred until another client's request joined {them} (docs/threat-model.md U3)"
        ),
        (_, p) => format!(
            "{rounds}: {were} deferred until another client's request joined {them} (docs/threat-model.md U3), {} at the end (--flush applies {})",
            if p == 1 {
                "1 still waits".to_string()
            } else {
                format!("{p} still wait")
            },
            if p == 1 { "it" } else { "them" }
        ),
    };
    match run.rounds.flushed {
        true => {
            format!("{line}; the last round is the --flush of the requests still deferred")
        }
        false => line,
    }
}

/// One line of a round's mean stage times.
fn stage_line(name: &str, v: &Value) -> String {
    let at = |k: &str| ms(v[k].as_f64().unwrap_or(f64::NAN));
    format!(
        "{name} per round: slowest client {}, sum {}, decode {}, server K-means {} (mask dealing, offline: {})\n",
        at("slowest_client_seconds"),
        at("sum_seconds"),
        at("decode_seconds"),
        at("server_kmeans_seconds"),
        at("offline_seconds"),
    )
}

/// The report's text.
fn text(run: &Run<'_>) -> String {
    let (a, f, l, served) = (run.a, run.figures, run.losses, &run.rounds.served);
    let what = match a.whole_clients {
        true => "whole clients".to_string(),
        false => format!("{} of one client", count(a.batch as u64, "point")),
    };
    let mut text = format!(
        "mufc unlearn: {}\n{}; seed {}\n{} {} request{} of {what}; {}\ncomplete retraining and the check after every round; figures are per round\n\n{}\n",
        run.exp.p.summary(),
        fed_summary(&a.fed, &run.exp.p),
        a.common.seed,
        run.removals,
        run.mode,
        if run.removals == 1 { "" } else { "s" },
        rounds_line(run),
        table(f, served.len()).render(),
    );
    if let Some(n) = run.next_to_flat {
        text.push_str(&n.text());
    }
    text.push_str(&stage_line("unlearn", &f.unlearn_stages));
    text.push_str(&stage_line("retrain", &f.retrain_stages));
    text.push_str(&format!(
        "rounds where a client reseeded (Alg. 3 retrained): {}; server refits from scratch: {}\n",
        f.reseeded, f.refits
    ));
    if let Some(c) = f.clean_speedup {
        text.push_str(&format!(
            "speed-up on rounds without reseeding (Table 1's row): {c:.1}x (paper count)\n"
        ));
    }
    text.push_str(&format!(
        "unlearned == retrained (clients' seeds and counts, server counts and centroids, bit for bit): {} of {}\n",
        f.equal,
        count(served.len() as u64, "round")
    ));
    if let Some(d) = &f.first_diff {
        text.push_str(&format!("first difference: {d}\n"));
    }
    text.push_str(&closing(run, l));
    text
}

/// The text's last lines: dropouts, the losses, the figure, the time.
fn closing(run: &Run<'_>, l: &Losses) -> String {
    let mut text = String::new();
    if run.a.fed.dropout > 0.0 {
        // Dropouts are drawn per round, and retraining runs other rounds.
        text.push_str(
            "with dropouts each server holds the data of the clients its rounds included, \
             which differ between the unlearned and the retrained runs: equality is not expected\n",
        );
    }
    text.push_str(&format!(
        "loss ratio before {:.4}, after {:.4} ({:+.2}%; phi_c* re-estimated on the remaining data); \
         with phi_c* of the whole data {:.4}\n",
        l.before,
        l.after,
        (l.after / l.before - 1.0) * 100.0,
        l.after_fixed
    ));
    if let (Some(b), Some(af)) = (l.dc_before, l.dc_after) {
        text.push_str(&format!(
            "DC-KMeans loss ratio before {b:.4}, after {af:.4}\n"
        ));
    }
    if let Some((path, has_text)) = &run.plot {
        text.push_str(&format!(
            "figure: {}{}\n",
            path.display(),
            if *has_text {
                ""
            } else {
                " (no font found: drawn without text; set MUFC_FONT)"
            }
        ));
    }
    text.push_str(&format!("total time {:.1} s\n", run.total));
    text
}
