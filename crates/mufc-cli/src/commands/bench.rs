//! `mufc bench`: the performance figures as ratios measured in one run.

use std::time::Instant;

use mufc::{ClientId, Federation, RemovalRequest, StageTimes};
use rand_chacha::ChaCha8Rng;
use seeding::PointId;
use serde_json::{Value, json};

use super::experiment::{Checked, Experiment, pending_points};
use super::prepare::{invalid, prepare};
use super::summary::{data_json, fed_summary, median, merged, settings_json};
use super::trials::fed_config;
use crate::CliError;
use crate::cli::BenchArgs;
use crate::cli::Privacy;
use crate::federated::{self, secs};
use crate::output::{Report, TextTable};
use crate::progress::Progress;
use crate::random::below;

/// Sums of the three time counts over several rounds.
#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    n: usize,
    paper: f64,
    cpu: f64,
    wall: f64,
}

impl Acc {
    fn add(&mut self, t: &StageTimes) {
        self.n += 1;
        self.paper += secs(t.paper());
        self.cpu += secs(t.cpu());
        self.wall += secs(t.wall);
    }

    fn mean(&self) -> (f64, f64, f64) {
        let n = self.n.max(1) as f64;
        (self.paper / n, self.cpu / n, self.wall / n)
    }

    fn ratio_over(&self, fast: &Self) -> (f64, f64, f64) {
        let (a, b) = (self.mean(), fast.mean());
        (a.0 / b.0, a.1 / b.1, a.2 / b.2)
    }
}

/// The clients' part of every removal round, for medians over the
/// rounds: the slowest client's part of the round (its unlearning,
/// encoding and masking), the slowest unlearning, the slowest encoding and
/// masking, and the clients' CPU (unlearning, encoding, masking) per
/// client.
#[derive(Clone, Debug, Default)]
struct ClientTimes {
    round_max: Vec<f64>,
    unlearn_max: Vec<f64>,
    encode_mask_max: Vec<f64>,
    cpu_per_client: Vec<f64>,
}

impl ClientTimes {
    fn add(&mut self, t: &StageTimes, clients: usize) {
        self.round_max.push(secs(t.client_round_max));
        self.unlearn_max.push(secs(t.client_max));
        self.encode_mask_max.push(secs(t.encode_mask_max));
        self.cpu_per_client
            .push(secs(t.client_sum + t.encode_mask_sum) / clients.max(1) as f64);
    }

    /// The medians: slowest client's round, slowest unlearning, slowest
    /// encode + mask, CPU per client.
    fn medians(&self) -> [f64; 4] {
        [
            &self.round_max,
            &self.unlearn_max,
            &self.encode_mask_max,
            &self.cpu_per_client,
        ]
        .map(|v| median(v))
    }
}

/// A random point of a random client that no deferred request names.
fn free_point(fed: &Federation, rng: &mut ChaCha8Rng) -> Result<(ClientId, PointId), CliError> {
    let named = pending_points(fed);
    let free: Vec<(ClientId, Vec<PointId>)> = fed
        .clients()
        .iter()
        .map(|c| {
            let ids = c.data().ids().iter().copied();
            let ids = ids.filter(|id| !named.contains(&(c.id(), *id)));
            (c.id(), ids.collect::<Vec<_>>())
        })
        .filter(|(_, ids)| !ids.is_empty())
        .collect();
    if free.is_empty() {
        return Err(CliError::NoData("no point left to remove"));
    }
    let (client, ids) = &free[below(rng, free.len())];
    Ok((*client, ids[below(rng, ids.len())]))
}

/// The removal rounds against retraining: the three time counts of all
/// rounds, of those without reseeding and of those with, and of
/// retraining; the rounds equal to retraining; the decode and the
/// clients' times.
#[derive(Clone, Debug, Default)]
struct Removals {
    all: Acc,
    plain: Acc,
    reseeded: Acc,
    retrain: Acc,
    equal: usize,
    decode: f64,
    clients: ClientTimes,
}

impl Removals {
    /// Adds a round checked against retraining, of a federation of
    /// `clients` clients.
    fn add(&mut self, c: &Checked, clients: usize) {
        let t = &c.report.times;
        if c.diff.is_none() {
            self.equal += 1;
        }
        self.all.add(t);
        self.clients.add(t, clients);
        self.decode += secs(t.decode);
        match c.report.reseeded.is_empty() {
            true => self.plain.add(t),
            false => self.reseeded.add(t),
        }
        self.retrain.add(&c.fresh.fit_report().times);
    }

    /// Retrain over unlearn: all rounds, without reseeding, with.
    fn ratios(&self) -> [Option<(f64, f64, f64)>; 3] {
        [
            Some(self.retrain.ratio_over(&self.all)),
            (self.plain.n > 0).then(|| self.retrain.ratio_over(&self.plain)),
            (self.reseeded.n > 0).then(|| self.retrain.ratio_over(&self.reseeded)),
        ]
    }
}

/// `--requests` random single-point removal requests, each applied round
/// checked against retraining.
fn serve(exp: &mut Experiment, requests: usize, bar: &mut Progress) -> Result<Removals, CliError> {
    let mut removals = Removals::default();
    for _ in 0..requests {
        let (client, id) = free_point(&exp.fed, &mut exp.rng)?;
        let request = RemovalRequest::points(client, vec![id]);
        let report = exp.remove(&request, vec![(client, vec![id])])?;
        bar.inc(1);
        // Requests that change one client alone wait for another client's
        // (docs/threat-model.md U3): the figures are per applied round.
        if report.outcome.is_deferred() {
            continue;
        }
        let checked = exp.check(report)?;
        removals.add(&checked, exp.fed.clients().len());
    }
    Ok(removals)
}

/// The privacy modes whose decode the bench times.
const MODES: [Privacy; 4] = [
    Privacy::Scma,
    Privacy::ScmaWide,
    Privacy::ScmaInteger,
    Privacy::Plain,
];

/// Decoding in every privacy mode, on the experiment's data: at training
/// and for one removal round of two clients. A mode the library refuses
/// here (the integer decoder for a large capacity) is reported, not fatal.
fn decode_rows(
    a: &BenchArgs,
    exp: &Experiment,
    bar: &mut Progress,
) -> Result<Vec<Value>, CliError> {
    let mut rows = Vec::new();
    for mode in MODES {
        let fed_args = crate::cli::FedArgs {
            privacy: mode,
            ..a.fed.clone()
        };
        let cfg = fed_config(&exp.p, &fed_args, exp.fed_seed)?;
        let row = match Federation::new(exp.clients.clone(), &cfg) {
            Ok(mut f) => {
                let r = f.fit_report().clone();
                // A point of each of two clients: one round (a lone
                // client's request would wait, docs/threat-model.md U3).
                let mut request = RemovalRequest::new();
                for c in f.clients().iter().take(2) {
                    request = request.with_points(c.id(), vec![c.data().id(0)]);
                }
                let removal = f.remove(&request)?;
                json!({
                    "privacy": mode.name(),
                    "available": true,
                    "fit_decode_seconds": secs(r.times.decode),
                    "fit_paper_seconds": secs(r.times.paper()),
                    "removal_decode_seconds": secs(removal.times.decode),
                    "bytes_per_client": r.bytes_per_client,
                    "modulus_bits": r.sketch.as_ref().map(|s| s.modulus_bits),
                })
            }
            Err(e) => json!({
                "privacy": mode.name(),
                "available": false,
                "error": e.to_string(),
            }),
        };
        rows.push(row);
        bar.inc(1);
    }
    let scma = rows
        .iter()
        .find(|r| r["privacy"] == "scma")
        .and_then(|r| r["fit_decode_seconds"].as_f64());
    for r in &mut rows {
        if let (Some(d), Some(base), Some(o)) =
            (r["fit_decode_seconds"].as_f64(), scma, r.as_object_mut())
        {
            o.insert("fit_decode_vs_scma".into(), json!(d / base));
        }
    }
    Ok(rows)
}

/// `mufc bench`: on the data (default: the built-in set), measured in one
/// run: training as the paper counts it split into client and server
/// time; `--requests` random single-point removal requests against
/// complete retraining after each removal round (paper, CPU and wall
/// ratios; rounds in which a client reseeded apart): with
/// `--min-updating-clients 2` (the default) a request of one client waits
/// for another client's, so the figures are per applied round; and the
/// server's decode time in every privacy mode, at training and for one
/// removal round of two clients.
///
/// # Errors
///
/// As [`prepare`] and the `mufc` library.
pub fn bench(a: &BenchArgs, progress: bool) -> Result<Report, CliError> {
    if a.requests == 0 {
        return Err(invalid("requests", 0, "must be at least 1"));
    }
    let seed = a.common.seed;
    let start = Instant::now();
    let p = prepare(&a.data, &a.fed, seed)?;
    let mut bar = Progress::new((1 + a.requests + MODES.len()) as u64, "bench", progress);
    let mut exp = Experiment::new(p, &a.fed, seed)?;
    bar.inc(1);
    let removals = serve(&mut exp, a.requests, &mut bar)?;
    let decode = decode_rows(a, &exp, &mut bar)?;
    bar.finish();
    let run = Run {
        a,
        exp: &exp,
        removals: &removals,
        decode: &decode,
        total: start.elapsed().as_secs_f64(),
    };
    Ok(Report {
        json: run.json()?,
        text: run.text(),
        warnings: exp.p.warnings.clone(),
        exit: 0,
    })
}

/// What one run of `mufc bench` measured.
struct Run<'a> {
    a: &'a BenchArgs,
    exp: &'a Experiment,
    removals: &'a Removals,
    decode: &'a [Value],
    total: f64,
}

/// A triple of time counts or ratios as JSON.
fn triple(r: (f64, f64, f64)) -> Value {
    json!({ "paper": r.0, "cpu": r.1, "wall": r.2 })
}

/// Milliseconds, for people.
fn ms(x: f64) -> String {
    format!("{:.3} ms", x * 1e3)
}

/// A ratio, for people.
fn x(r: f64) -> String {
    format!("{r:.1}x")
}

impl Run<'_> {
    /// Training's client and server parts, paper count.
    fn fit_parts(&self) -> (StageTimes, f64, f64) {
        let fit = self.exp.fed.fit_report().times;
        let client = secs(fit.client_round_max);
        let server = secs(fit.sum + fit.decode + fit.server);
        (fit, client, server)
    }

    fn json(&self) -> Result<Value, CliError> {
        let (a, p, r) = (self.a, &self.exp.p, self.removals);
        let (fit, client_part, server_part) = self.fit_parts();
        let [all, plain, reseeded] = r.ratios();
        let cm = r.clients.medians();
        Ok(merged(
            json!({ "command": "bench" }),
            merged(
                merged(data_json(p, a.common.seed), settings_json(&a.fed, p)?),
                json!({
                    "privacy": a.fed.privacy.name(),
                    "fit": federated::times_json(&fit),
                    "client_seconds": client_part,
                    "server_seconds": server_part,
                    "server_over_client": server_part / client_part,
                    "requests": a.requests,
                    "rounds": r.all.n,
                    "deferred_requests": self.exp.deferred,
                    "pending_at_end": self.exp.pending(),
                    "figures": "per applied removal round",
                    "rounds_reseeded": r.reseeded.n,
                    "retrain_equal": r.equal,
                    "unlearn_seconds_mean": triple(r.all.mean()),
                    "retrain_seconds_mean": triple(r.retrain.mean()),
                    "retrain_over_unlearn": all.map(triple),
                    "retrain_over_unlearn_no_reseed": plain.map(triple),
                    "retrain_over_unlearn_reseed": reseeded.map(triple),
                    "unlearn_decode_seconds_mean": r.decode / r.all.n.max(1) as f64,
                    "unlearn_client_seconds_median": {
                        "slowest_client_round": cm[0],
                        "slowest_unlearn": cm[1],
                        "slowest_encode_mask": cm[2],
                        "cpu_per_client": cm[3],
                    },
                    "decode": self.decode,
                    "seconds_total": self.total,
                }),
            ),
        ))
    }

    /// The ratios' table.
    fn ratio_table(&self) -> TextTable {
        let mut t = TextTable::new(&["ratio", "paper count", "CPU", "wall"]);
        let names = [
            "retrain / unlearn, all rounds",
            "retrain / unlearn, no reseed",
            "retrain / unlearn, a client reseeded",
        ];
        for (name, r) in names.into_iter().zip(self.removals.ratios()) {
            if let Some(r) = r {
                t.row([name.to_string(), x(r.0), x(r.1), x(r.2)]);
            }
        }
        t
    }

    fn text(&self) -> String {
        let (a, r) = (self.a, self.removals);
        let (_, client_part, server_part) = self.fit_parts();
        let (um, rm) = (r.all.mean(), r.retrain.mean());
        let cm = r.clients.medians();
        format!(
            "mufc bench: {}\n{}; seed {}\n\n\
             training: slowest client {} (its part of the round), server {} (sum, decode, K-means): server / client = {:.1}\n\
             {} random single-point removal requests in {} rounds ({} deferred until another client's request joined them, {} still waiting; {} rounds reseeded a client); retraining after each round, equal bit for bit: {} of {}\n\
             per round: mean unlearn: paper {}, CPU {}, wall {}; mean retrain: paper {}, CPU {}, wall {}\n\
             per round, clients (medians): slowest client {} (unlearning, encoding, masking), slowest unlearning {}, slowest encode + mask {}; client CPU per client {}\n\n{}\n{}\n\
             total time {:.1} s\n",
            self.exp.p.summary(),
            fed_summary(&a.fed, &self.exp.p),
            a.common.seed,
            ms(client_part),
            ms(server_part),
            server_part / client_part,
            a.requests,
            r.all.n,
            self.exp.deferred,
            self.exp.pending(),
            r.reseeded.n,
            r.equal,
            r.all.n,
            ms(um.0),
            ms(um.1),
            ms(um.2),
            ms(rm.0),
            ms(rm.1),
            ms(rm.2),
            ms(cm[0]),
            ms(cm[1]),
            ms(cm[2]),
            ms(cm[3]),
            self.ratio_table().render(),
            decode_table(self.decode).render(),
            self.total
        )
    }
}

/// The decode table, one row per privacy mode.
fn decode_table(rows: &[Value]) -> TextTable {
    let mut t = TextTable::new(&[
        "privacy",
        "fit decode",
        "vs scma",
        "removal decode",
        "bytes/client",
        "note",
    ]);
    for r in rows {
        let name = r["privacy"].as_str().unwrap_or("?").to_string();
        let f = |k: &str| r[k].as_f64().unwrap_or(f64::NAN);
        let dash = || "-".to_string();
        if name == "plain" {
            t.row([
                name,
                "none".to_string(),
                dash(),
                "none".to_string(),
                r["bytes_per_client"].to_string(),
                "centroids and sizes in the clear".to_string(),
            ]);
        } else if r["available"] == true {
            t.row([
                name,
                ms(f("fit_decode_seconds")),
                x(f("fit_decode_vs_scma")),
                ms(f("removal_decode_seconds")),
                r["bytes_per_client"].to_string(),
                String::new(),
            ]);
        } else {
            // The reason's first clause; the JSON has all of it.
            let why = r["error"].as_str().unwrap_or("").split(':').next();
            t.row([
                name,
                dash(),
                dash(),
                dash(),
                dash(),
                why.unwrap_or("").to_string(),
            ]);
        }
    }
    t
}
