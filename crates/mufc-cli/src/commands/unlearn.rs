//! `mufc unlearn`: train, serve removal requests (Algorithm 4), and
//! retrain from scratch after every request in the same run.
//!
//! The requests themselves (the rows given, or chosen at random or
//! adversarially) are made in the `requests` submodule.

use baselines::{DcKMeans, DcParams};
use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use mufc::{ClientId, Federation, RemovalRequest, StageTimes};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use seeding::Dataset;
use serde_json::{Value, json};

use super::prepare::{invalid, prepare};
use super::summary::{data_json, fed_summary, merged, settings_json};
use super::trials::{fed_config, trial_seed};
use crate::CliError;
use crate::central::best_kmeans;
use crate::cli::{Mode, UnlearnArgs};
use crate::federated::{self, secs};
use crate::output::count;
use crate::output::{Report, TextTable};
use crate::plot::{UnlearnSeries, draw_unlearn_figure};
use crate::progress::Progress;
use crate::random::{derive_seed, tag};

mod requests;
mod topology;

use requests::{Entries, choose, explicit};
use topology::NextToFlat;

/// What one removal round did and cost (a round applies the deferred
/// requests and the one that completed them).
#[derive(Clone, Debug)]
struct Served {
    removed: usize,
    unlearn: StageTimes,
    retrain: StageTimes,
    reseeded: bool,
    server: &'static str,
    equal: Option<String>,
    loss_ratio: f64,
    dc_seconds: Option<f64>,
    /// The clients the round's aggregation included.
    included: usize,
    /// The requests the round applied (deferred ones and the last).
    requests: usize,
}

/// Moves out of `waiting` the entries a round applied: those that no
/// pending request of `fed` names any more.
fn split_applied(waiting: &mut Entries, fed: &Federation) -> Entries {
    let whole: HashSet<ClientId> = fed
        .pending()
        .iter()
        .flat_map(|p| p.request.clients_removed().iter().copied())
        .collect();
    let points: HashSet<(ClientId, seeding::PointId)> = fed
        .pending()
        .iter()
        .flat_map(|p| p.request.point_entries())
        .flat_map(|(c, ids)| ids.iter().map(|id| (*c, *id)))
        .collect();
    let mut applied = Vec::new();
    let mut kept = Vec::new();
    for (c, ids) in waiting.drain(..) {
        if whole.contains(&c) {
            kept.push((c, ids));
            continue;
        }
        let (wait, done): (Vec<_>, Vec<_>) =
            ids.into_iter().partition(|id| points.contains(&(c, *id)));
        if !done.is_empty() {
            applied.push((c, done));
        }
        if !wait.is_empty() {
            kept.push((c, wait));
        }
    }
    *waiting = kept;
    applied
}

/// `mufc unlearn`: trains (trial 0's federation seed), then serves
/// `--removals` requests. A request that would change one client's message
/// alone is deferred (`--min-updating-clients`, docs/threat-model.md U3)
/// until other clients' requests join it; one removal round then applies
/// them all. After every round it retrains from scratch on the remaining
/// data (Algorithm 1: every client, a full aggregation and decode, the
/// server's fit), checks that the unlearned federation equals the
/// retrained one bit for bit, and records both times and the loss ratio:
/// the figures are per round. Requests still deferred at the end are
/// reported, or applied with `--flush` (with a warning). With `--compare`,
/// DC-KMeans removes the same points when MUFC does.
///
/// The loss ratio after each request divides by phi_c* of the whole data
/// (as a fixed scale, for the figure); `loss_ratio_after` divides by phi_c*
/// re-estimated on the data left (the same estimator).
///
/// # Errors
///
/// [`CliError::InvalidParameter`] for zero removals or batch, more removals
/// than the data allows; [`CliError::UnknownFormat`] for a plot that is not
/// `.svg` or `.png`; and the errors of the steps.
pub fn unlearn(a: &UnlearnArgs, progress: bool) -> Result<Report, CliError> {
    if a.removals == 0 {
        return Err(invalid("removals", 0, "must be at least 1"));
    }
    if a.batch == 0 {
        return Err(invalid("batch", 0, "must be at least 1"));
    }
    if let Some(path) = &a.plot {
        let ext = path.extension().and_then(|e| e.to_str());
        if !matches!(
            ext.map(str::to_ascii_lowercase).as_deref(),
            Some("svg" | "png")
        ) {
            return Err(CliError::UnknownFormat {
                path: path.clone(),
                expected: ".svg or .png",
            });
        }
    }
    let seed = a.common.seed;
    let start = Instant::now();
    let mut p = prepare(&a.data, &a.fed, seed)?;
    let fed_seed = trial_seed(seed, 0);
    let config = fed_config(&p, &a.fed, fed_seed)?;
    let planned = match &a.remove {
        Some(rows) => Some(explicit(rows, a.batch, &p.split.client_of(p.n())?)?),
        None => None,
    };
    let removals = planned.as_ref().map_or(a.removals, Vec::len);
    if removals == 0 {
        return Err(invalid("remove", 0, "name at least one row"));
    }
    if a.whole_clients && a.removals.saturating_add(a.fed.min_clients) > p.split.num_clients() {
        return Err(invalid(
            "removals",
            a.removals,
            "removing whole clients must leave at least --min-clients clients",
        ));
    }
    if planned.is_none() && !a.whole_clients && a.removals.saturating_mul(a.batch) >= p.n() {
        return Err(invalid(
            "removals",
            a.removals,
            "removals times the batch must be fewer than the points",
        ));
    }
    let clients = p.split.client_datasets(&p.points)?;
    // One tick per request (a deferred one too), and one for the --flush.
    let mut bar = Progress::new(removals as u64 + u64::from(a.flush), "requests", progress);
    let phi_star = p.phi_c_star(a.data.restarts, seed)?;
    let mut fed = Federation::new(clients.clone(), &config)?;
    let mut next_to_flat = NextToFlat::new(&clients, &config)?;
    let fit = fed.fit_report().times;
    let before = fed.objectives(Some(phi_star))?;
    let loss_before = before.loss_ratio.unwrap_or(f64::NAN);
    let mut dc = if a.compare {
        Some(DcKMeans::fit(
            clients.clone(),
            DcParams::new(p.k, p.local_k).validate()?,
            fed_seed,
        )?)
    } else {
        None
    };
    let dc_before = dc
        .as_ref()
        .map(|t| {
            t.phi_f()
                .and_then(|f| Ok(seeding::loss_ratio(f, phi_star)?))
        })
        .transpose()?;
    let mut remaining: BTreeMap<ClientId, Dataset> = clients
        .into_iter()
        .enumerate()
        .map(|(i, d)| (ClientId(i as u64), d))
        .collect();
    let retrain_config = federated::retrain_config(&fed)?;
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, tag::REMOVALS, 0));
    let mut served: Vec<Served> = Vec::with_capacity(removals);
    let mut warnings: Vec<String> = Vec::new();
    let mut deferred = 0usize;
    let mut flushed = false;
    // The entries of the requests not applied yet.
    let mut waiting: Entries = Vec::new();
    // One pass per request, and a last one for `--flush`.
    for i in 0..=removals {
        let report = if i < removals {
            let (request, entries) = match &planned {
                Some(plan) => {
                    let entries = plan[i].clone();
                    let mut request = RemovalRequest::new();
                    for (c, ids) in &entries {
                        request = request.with_points(*c, ids.clone());
                    }
                    (request, entries)
                }
                None => {
                    let (client, ids) = choose(&fed, a, &mut rng)?;
                    let request = if a.whole_clients {
                        RemovalRequest::clients(vec![client])
                    } else {
                        RemovalRequest::points(client, ids.clone())
                    };
                    (request, vec![(client, ids)])
                }
            };
            let report = fed.remove(&request)?;
            if let Some(n) = &mut next_to_flat {
                n.serve(Some(&request), &report, &fed)?;
            }
            waiting.extend(entries);
            if report.outcome.is_deferred() {
                // Erased at once; no round yet, nothing to retrain or compare.
                deferred += 1;
                bar.inc(1);
                continue;
            }
            report
        } else if a.flush {
            let Some(report) = fed.flush()? else {
                break;
            };
            if let Some(n) = &mut next_to_flat {
                n.serve(None, &report, &fed)?;
            }
            if let Some(w) = &report.privacy_warning {
                warnings.push(format!("--flush: {w}"));
            }
            flushed = true;
            report
        } else {
            break;
        };
        // The round applied what is no longer pending (with groups, the
        // parts of requests in groups without enough clients wait on).
        let applied = split_applied(&mut waiting, &fed);
        for (client, ids) in &applied {
            federated::remove_from(&mut remaining, *client, ids)?;
        }
        // Requests may still wait (with groups, in groups without enough
        // clients named): checked as such.
        let (fresh, equal) =
            federated::check_retrained(&fed, &remaining, &waiting, &retrain_config)?;
        let dc_seconds = match &mut dc {
            Some(t) => {
                let mut total = 0.0;
                for (_, ids) in &applied {
                    total += t.delete_many(ids)?.seconds;
                }
                Some(total)
            }
            None => None,
        };
        served.push(Served {
            removed: report.removed_points,
            unlearn: report.times,
            retrain: fresh.fit_report().times,
            reseeded: !report.reseeded.is_empty(),
            server: report.server.name(),
            included: report.included.len(),
            requests: report.requests.len(),
            equal,
            loss_ratio: fed
                .objectives(Some(phi_star))?
                .loss_ratio
                .unwrap_or(f64::NAN),
            dc_seconds,
        });
        bar.inc(1);
    }
    let pending_at_end = fed.pending().len();
    let after = fed.objectives(None)?;
    let star_after = best_kmeans(&fed.union()?, p.k, a.data.restarts, seed)?.phi();
    let loss_after = seeding::loss_ratio(after.phi_f, star_after)?;
    let loss_after_fixed = served.last().map_or(loss_before, |s| s.loss_ratio);
    let dc_after = dc
        .as_ref()
        .map(|t| {
            t.phi_f()
                .and_then(|f| Ok(seeding::loss_ratio(f, star_after)?))
        })
        .transpose()?;
    bar.finish();

    let sum = |f: &dyn Fn(&Served) -> f64| served.iter().map(f).sum::<f64>();
    let (u_paper, u_cpu, u_wall) = (
        sum(&|s| secs(s.unlearn.paper())),
        sum(&|s| secs(s.unlearn.cpu())),
        sum(&|s| secs(s.unlearn.wall)),
    );
    let (r_paper, r_cpu, r_wall) = (
        sum(&|s| secs(s.retrain.paper())),
        sum(&|s| secs(s.retrain.cpu())),
        sum(&|s| secs(s.retrain.wall)),
    );
    let stages = |f: &dyn Fn(&Served) -> &StageTimes| {
        let n = served.len().max(1) as f64;
        let mean = |g: &dyn Fn(&StageTimes) -> f64| served.iter().map(|s| g(f(s))).sum::<f64>() / n;
        json!({
            "slowest_client_seconds": mean(&|t| secs(t.client_round_max)),
            "sum_seconds": mean(&|t| secs(t.sum)),
            "decode_seconds": mean(&|t| secs(t.decode)),
            "server_kmeans_seconds": mean(&|t| secs(t.server)),
            "offline_seconds": mean(&|t| secs(t.offline)),
        })
    };
    let unlearn_stages = stages(&|s| &s.unlearn);
    let retrain_stages = stages(&|s| &s.retrain);
    let clean: Vec<&Served> = served.iter().filter(|s| !s.reseeded).collect();
    let clean_speedup = if clean.is_empty() {
        None
    } else {
        let u: f64 = clean.iter().map(|s| secs(s.unlearn.paper())).sum();
        let r: f64 = clean.iter().map(|s| secs(s.retrain.paper())).sum();
        Some(r / u)
    };
    let reseeded = served.iter().filter(|s| s.reseeded).count();
    let refits = served.iter().filter(|s| s.server == "full").count();
    let retrained = served
        .iter()
        .filter(|s| s.reseeded || s.server == "full")
        .count();
    let equal = served.iter().filter(|s| s.equal.is_none()).count();
    let first_diff = served.iter().find_map(|s| s.equal.clone());
    let dc_total = dc.as_ref().map(|_| sum(&|s| s.dc_seconds.unwrap_or(0.0)));
    let change = loss_after / loss_before - 1.0;

    let plot = match &a.plot {
        Some(path) => {
            let series = UnlearnSeries {
                mufc_seconds: served.iter().map(|s| secs(s.unlearn.paper())).collect(),
                retrain_seconds: served.iter().map(|s| secs(s.retrain.paper())).collect(),
                dc_kmeans_seconds: dc
                    .as_ref()
                    .map(|_| served.iter().map(|s| s.dc_seconds.unwrap_or(0.0)).collect()),
                loss_ratio: std::iter::once(loss_before)
                    .chain(served.iter().map(|s| s.loss_ratio))
                    .collect(),
                per_round: served.iter().any(|s| s.requests > 1),
            };
            let outcome = draw_unlearn_figure(path, &series)?;
            Some((path.clone(), outcome.text))
        }
        None => None,
    };
    let total = start.elapsed().as_secs_f64();

    let mode = match (&planned, a.mode) {
        (Some(_), _) => "given",
        (None, Mode::Random) => "random",
        (None, Mode::Adversarial) => "adversarial",
    };
    let dc_json = match (&dc, dc_total) {
        (Some(_), Some(t)) => json!({
            "seconds_total": t,
            "speedup_of_mufc": t / u_paper,
            "loss_ratio_before": dc_before,
            "loss_ratio_after": dc_after,
            "fit_seconds": dc.as_ref().map(DcKMeans::fit_seconds),
        }),
        _ => Value::Null,
    };
    let json = merged(
        json!({ "command": "unlearn" }),
        merged(
            merged(
                merged(data_json(&p, seed), settings_json(&a.fed, &p)?),
                json!({
                    "masking": a.fed.masking.name(),
                    "dropout": a.fed.dropout,
                    "included_clients_per_round": served.iter().map(|s| s.included).collect::<Vec<_>>(),
                    "rounds": served.len(),
                    "deferred_requests": deferred,
                    "pending_at_end": pending_at_end,
                    "flush": a.flush,
                    "flushed": flushed,
                    "requests_per_round": served.iter().map(|s| s.requests).collect::<Vec<_>>(),
                }),
            ),
            json!({
                "privacy": a.fed.privacy.name(),
                "mode": mode,
                "batch": if a.whole_clients { Value::Null } else { json!(a.batch) },
                "whole_clients": a.whole_clients,
                "removals": removals,
                "removed_points": served.iter().map(|s| s.removed).sum::<usize>(),
                "retrained_rounds": retrained,
                "reseeded_rounds": reseeded,
                "server_refits": refits,
                "retrain_measured": served.len(),
                "retrain_equal": equal,
                "retrain_first_difference": first_diff,
                "time_count": "paper: slowest client + server (sum, decode, K-means); masks dealt offline",
                "unlearn_seconds_total": u_paper,
                "retrain_seconds_total": r_paper,
                "speedup": r_paper / u_paper,
                "speedup_no_retraining": clean_speedup,
                "unlearn_cpu_seconds_total": u_cpu,
                "retrain_cpu_seconds_total": r_cpu,
                "speedup_cpu": r_cpu / u_cpu,
                "unlearn_wall_seconds_total": u_wall,
                "retrain_wall_seconds_total": r_wall,
                "speedup_wall": r_wall / u_wall,
                "fit": federated::times_json(&fit),
                "loss_ratio_before": loss_before,
                "loss_ratio_after": loss_after,
                "loss_ratio_after_fixed_star": loss_after_fixed,
                "loss_ratio_change": change,
                "phi_c_star_before": phi_star,
                "phi_c_star_after": star_after,
                "phi_c_star_restarts": a.data.restarts,
                "loss_ratios": served.iter().map(|s| s.loss_ratio).collect::<Vec<_>>(),
                "unlearn_seconds": served.iter().map(|s| secs(s.unlearn.paper())).collect::<Vec<_>>(),
                "retrain_seconds": served.iter().map(|s| secs(s.retrain.paper())).collect::<Vec<_>>(),
                "dc_kmeans": dc_json,
                "plot": plot.as_ref().map(|(p, _)| p.display().to_string()),
                "plot_has_text": plot.as_ref().map(|(_, t)| *t),
                "seconds_total": total,
            }),
        ),
    );
    // A second object: one `json!` of this size overflows the macro
    // recursion limit.
    let json = merged(
        json,
        json!({
            "figures": "per applied removal round (a round applies the deferred requests and the one that completed them)",
            "unlearn_stage_means": unlearn_stages,
            "retrain_stage_means": retrain_stages,
            "topology": config.topology().name(),
            "next_to_flat": next_to_flat.as_ref().map(NextToFlat::json),
        }),
    );

    let ms = |x: f64| format!("{:.3} ms", x * 1e3);
    let per = |x: f64| ms(x / served.len().max(1) as f64);
    let mut table = TextTable::new(&["per round (mean)", "MUFC unlearn", "retrain", "speed-up"]);
    table.row([
        "paper: slowest client + server".to_string(),
        per(u_paper),
        per(r_paper),
        format!("{:.1}x", r_paper / u_paper),
    ]);
    table.row([
        "total CPU".to_string(),
        per(u_cpu),
        per(r_cpu),
        format!("{:.1}x", r_cpu / u_cpu),
    ]);
    table.row([
        "wall clock".to_string(),
        per(u_wall),
        per(r_wall),
        format!("{:.1}x", r_wall / u_wall),
    ]);
    if let (Some(t), Some(_)) = (dc_total, &dc) {
        table.row([
            "DC-KMeans (leaf + root)".to_string(),
            per(t),
            String::new(),
            format!("MUFC {:.1}x faster", t / u_paper),
        ]);
    }
    let what = if a.whole_clients {
        "whole clients".to_string()
    } else {
        format!("{} of one client", count(a.batch as u64, "point"))
    };
    let rounds = count(served.len() as u64, "removal round");
    let were = |d: usize| {
        if d == 1 {
            "1 request was"
        } else {
            "requests were"
        }
    };
    let rounds_line = match (deferred, pending_at_end) {
        (0, _) => format!("{rounds}, one per request"),
        (d, 0) => format!(
            "{rounds}: {} deferred until another client's request joined {} (docs/threat-model.md U3)",
            if d == 1 {
                were(d).to_string()
            } else {
                format!("{d} {}", were(d))
            },
            if d == 1 { "it" } else { "them" }
        ),
        (d, p) => format!(
            "{rounds}: {} deferred until another client's request joined {} (docs/threat-model.md U3), {} at the end (--flush applies {})",
            if d == 1 {
                were(d).to_string()
            } else {
                format!("{d} {}", were(d))
            },
            if d == 1 { "it" } else { "them" },
            if p == 1 {
                "1 still waits".to_string()
            } else {
                format!("{p} still wait")
            },
            if p == 1 { "it" } else { "them" }
        ),
    };
    let rounds_line = if flushed {
        format!("{rounds_line}; the last round is the --flush of the requests still deferred")
    } else {
        rounds_line
    };
    let mut text = format!(
        "mufc unlearn: {}\n{}; seed {}\n{} {mode} request{} of {what}; {rounds_line}\ncomplete retraining and the check after every round; figures are per round\n\n{}\n",
        p.summary(),
        fed_summary(&a.fed, &p),
        seed,
        removals,
        if removals == 1 { "" } else { "s" },
        table.render(),
    );
    let stage_line = |name: &str, v: &Value| {
        format!(
            "{name} per round: slowest client {}, sum {}, decode {}, server K-means {} (mask dealing, offline: {})\n",
            ms(v["slowest_client_seconds"].as_f64().unwrap_or(f64::NAN)),
            ms(v["sum_seconds"].as_f64().unwrap_or(f64::NAN)),
            ms(v["decode_seconds"].as_f64().unwrap_or(f64::NAN)),
            ms(v["server_kmeans_seconds"].as_f64().unwrap_or(f64::NAN)),
            ms(v["offline_seconds"].as_f64().unwrap_or(f64::NAN)),
        )
    };
    if let Some(n) = &next_to_flat {
        text.push_str(&n.text());
    }
    text.push_str(&stage_line("unlearn", &unlearn_stages));
    text.push_str(&stage_line("retrain", &retrain_stages));
    text.push_str(&format!(
        "rounds where a client reseeded (Alg. 3 retrained): {reseeded}; server refits from scratch: {refits}\n"
    ));
    if let Some(c) = clean_speedup {
        text.push_str(&format!(
            "speed-up on rounds without reseeding (Table 1's row): {c:.1}x (paper count)\n"
        ));
    }
    text.push_str(&format!(
        "unlearned == retrained (clients' seeds and counts, server counts and centroids, bit for bit): {equal} of {}\n",
        count(served.len() as u64, "round")
    ));
    if let Some(d) = &first_diff {
        text.push_str(&format!("first difference: {d}\n"));
    }
    if a.fed.dropout > 0.0 {
        // Dropouts are drawn per round, and retraining runs other rounds.
        text.push_str(
            "with dropouts each server holds the data of the clients its rounds included, \
             which differ between the unlearned and the retrained runs: equality is not expected\n",
        );
    }
    text.push_str(&format!(
        "loss ratio before {loss_before:.4}, after {loss_after:.4} ({:+.2}%; phi_c* re-estimated on the remaining data); \
         with phi_c* of the whole data {loss_after_fixed:.4}\n",
        change * 100.0
    ));
    if let (Some(b), Some(af)) = (dc_before, dc_after) {
        text.push_str(&format!(
            "DC-KMeans loss ratio before {b:.4}, after {af:.4}\n"
        ));
    }
    if let Some((path, has_text)) = &plot {
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
    text.push_str(&format!("total time {total:.1} s\n"));
    Ok(Report {
        json,
        text,
        warnings: p.warnings.iter().cloned().chain(warnings).collect(),
        exit: 0,
    })
}
