//! `mufc bench`: the performance figures as ratios measured in one run.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use mufc::{ClientId, Federation, RemovalRequest, StageTimes};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use seeding::{Dataset, PointId};
use serde_json::json;

use super::prepare::{invalid, prepare};
use super::summary::{data_json, fed_summary, median, merged, settings_json};
use super::trials::{fed_config, trial_seed};
use crate::CliError;
use crate::cli::BenchArgs;
use crate::federated::{self, secs};
use crate::output::{Report, TextTable};
use crate::progress::Progress;
use crate::random::{below, derive_seed, tag};
use mufc::Privacy;

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
    let named: HashSet<(ClientId, PointId)> = fed
        .pending()
        .iter()
        .flat_map(|p| p.request.point_entries())
        .flat_map(|(c, ids)| ids.iter().map(|id| (*c, *id)))
        .collect();
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
    let fed_seed = trial_seed(seed, 0);
    let config = fed_config(&p, &a.fed, fed_seed)?;
    let clients = p.split.client_datasets(&p.points)?;
    let modes = [
        Privacy::Scma,
        Privacy::ScmaWide,
        Privacy::ScmaInteger,
        Privacy::Plain,
    ];
    let mut bar = Progress::new((1 + a.requests + modes.len()) as u64, "bench", progress);

    // Training: client against server time.
    let mut fed = Federation::new(clients.clone(), &config)?;
    let fit = fed.fit_report().times;
    bar.inc(1);

    // Unlearning against retraining.
    let mut remaining: BTreeMap<ClientId, Dataset> = clients
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, d)| (ClientId(i as u64), d))
        .collect();
    let retrain_config = federated::retrain_config(&fed)?;
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, tag::REMOVALS, 0));
    let (mut all, mut plain_req, mut seed_req, mut retrain) = (
        Acc::default(),
        Acc::default(),
        Acc::default(),
        Acc::default(),
    );
    let mut equal = 0;
    let mut unlearn_decode = 0.0;
    let mut client_times = ClientTimes::default();
    // Requests that change one client alone wait for another client's
    // (docs/threat-model.md U3): the figures are per applied round.
    let (mut deferred, mut waiting) = (0usize, Vec::new());
    for _ in 0..a.requests {
        let (client, id) = free_point(&fed, &mut rng)?;
        let report = fed.remove(&RemovalRequest::points(client, vec![id]))?;
        waiting.push((client, id));
        if report.outcome.is_deferred() {
            deferred += 1;
            bar.inc(1);
            continue;
        }
        // With groups, the parts of requests in groups without enough
        // clients wait on: only what is no longer pending was applied.
        let still: HashSet<(ClientId, PointId)> = fed
            .pending()
            .iter()
            .flat_map(|p| p.request.point_entries())
            .flat_map(|(c, ids)| ids.iter().map(|id| (*c, *id)))
            .collect();
        let (wait, done): (Vec<_>, Vec<_>) = waiting.drain(..).partition(|e| still.contains(e));
        waiting = wait;
        for (c, id) in done {
            federated::remove_from(&mut remaining, c, &[id])?;
        }
        let entries: Vec<(ClientId, Vec<PointId>)> =
            waiting.iter().map(|(c, id)| (*c, vec![*id])).collect();
        let (fresh, diff) =
            federated::check_retrained(&fed, &remaining, &entries, &retrain_config)?;
        if diff.is_none() {
            equal += 1;
        }
        all.add(&report.times);
        client_times.add(&report.times, fed.clients().len());
        unlearn_decode += secs(report.times.decode);
        if report.reseeded.is_empty() {
            plain_req.add(&report.times);
        } else {
            seed_req.add(&report.times);
        }
        retrain.add(&fresh.fit_report().times);
        bar.inc(1);
    }

    // Decoding in every privacy mode, on the same data.
    let mut decode_rows = Vec::new();
    for mode in modes {
        let fed_args = crate::cli::FedArgs {
            privacy: mode,
            ..a.fed.clone()
        };
        let cfg = fed_config(&p, &fed_args, fed_seed)?;
        let row = match Federation::new(clients.clone(), &cfg) {
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
            // A mode the library refuses here (the integer decoder for a
            // large capacity) is reported, not fatal.
            Err(e) => json!({
                "privacy": mode.name(),
                "available": false,
                "error": e.to_string(),
            }),
        };
        decode_rows.push(row);
        bar.inc(1);
    }
    bar.finish();
    let scma_decode = decode_rows
        .iter()
        .find(|r| r["privacy"] == "scma")
        .and_then(|r| r["fit_decode_seconds"].as_f64());
    for r in &mut decode_rows {
        if let (Some(d), Some(base), Some(o)) = (
            r["fit_decode_seconds"].as_f64(),
            scma_decode,
            r.as_object_mut(),
        ) {
            o.insert("fit_decode_vs_scma".into(), json!(d / base));
        }
    }

    let client_part = secs(fit.client_round_max);
    let server_part = secs(fit.sum + fit.decode + fit.server);
    let (ratio_all, ratio_plain, ratio_seed) = (
        retrain.ratio_over(&all),
        (plain_req.n > 0).then(|| retrain.ratio_over(&plain_req)),
        (seed_req.n > 0).then(|| retrain.ratio_over(&seed_req)),
    );
    let cm = client_times.medians();
    let total = start.elapsed().as_secs_f64();
    let triple = |r: (f64, f64, f64)| json!({ "paper": r.0, "cpu": r.1, "wall": r.2 });
    let json = merged(
        json!({ "command": "bench" }),
        merged(
            merged(data_json(&p, seed), settings_json(&a.fed, &p)?),
            json!({
                "privacy": a.fed.privacy.name(),
                "fit": federated::times_json(&fit),
                "client_seconds": client_part,
                "server_seconds": server_part,
                "server_over_client": server_part / client_part,
                "requests": a.requests,
                "rounds": all.n,
                "deferred_requests": deferred,
                "pending_at_end": fed.pending().len(),
                "figures": "per applied removal round",
                "rounds_reseeded": seed_req.n,
                "retrain_equal": equal,
                "unlearn_seconds_mean": triple(all.mean()),
                "retrain_seconds_mean": triple(retrain.mean()),
                "retrain_over_unlearn": triple(ratio_all),
                "retrain_over_unlearn_no_reseed": ratio_plain.map(triple),
                "retrain_over_unlearn_reseed": ratio_seed.map(triple),
                "unlearn_decode_seconds_mean": unlearn_decode / all.n.max(1) as f64,
                "unlearn_client_seconds_median": {
                    "slowest_client_round": cm[0],
                    "slowest_unlearn": cm[1],
                    "slowest_encode_mask": cm[2],
                    "cpu_per_client": cm[3],
                },
                "decode": decode_rows,
                "seconds_total": total,
            }),
        ),
    );

    let ms = |x: f64| format!("{:.3} ms", x * 1e3);
    let x = |r: f64| format!("{r:.1}x");
    let mut t1 = TextTable::new(&["ratio", "paper count", "CPU", "wall"]);
    let row3 = |t: &mut TextTable, name: &str, r: (f64, f64, f64)| {
        t.row([name.to_string(), x(r.0), x(r.1), x(r.2)]);
    };
    row3(&mut t1, "retrain / unlearn, all rounds", ratio_all);
    if let Some(r) = ratio_plain {
        row3(&mut t1, "retrain / unlearn, no reseed", r);
    }
    if let Some(r) = ratio_seed {
        row3(&mut t1, "retrain / unlearn, a client reseeded", r);
    }
    let mut t2 = TextTable::new(&[
        "privacy",
        "fit decode",
        "vs scma",
        "removal decode",
        "bytes/client",
        "note",
    ]);
    for r in &decode_rows {
        let name = r["privacy"].as_str().unwrap_or("?").to_string();
        if name == "plain" {
            t2.row([
                name,
                "none".to_string(),
                "-".to_string(),
                "none".to_string(),
                r["bytes_per_client"].to_string(),
                "centroids and sizes in the clear".to_string(),
            ]);
        } else if r["available"] == true {
            t2.row([
                name,
                ms(r["fit_decode_seconds"].as_f64().unwrap_or(f64::NAN)),
                x(r["fit_decode_vs_scma"].as_f64().unwrap_or(f64::NAN)),
                ms(r["removal_decode_seconds"].as_f64().unwrap_or(f64::NAN)),
                r["bytes_per_client"].to_string(),
                String::new(),
            ]);
        } else {
            t2.row([
                name,
                "-".to_string(),
                "-".to_string(),
                "-".to_string(),
                "-".to_string(),
                // The reason's first clause; the JSON has all of it.
                r["error"]
                    .as_str()
                    .unwrap_or("")
                    .split(':')
                    .next()
                    .unwrap_or("")
                    .to_string(),
            ]);
        }
    }
    let (um, rm) = (all.mean(), retrain.mean());
    let text = format!(
        "mufc bench: {}\n{}; seed {}\n\n\
         training: slowest client {} (its part of the round), server {} (sum, decode, K-means): server / client = {:.1}\n\
         {} random single-point removal requests in {} rounds ({} deferred until another client's request joined them, {} still waiting; {} rounds reseeded a client); retraining after each round, equal bit for bit: {} of {}\n\
         per round: mean unlearn: paper {}, CPU {}, wall {}; mean retrain: paper {}, CPU {}, wall {}\n\
         per round, clients (medians): slowest client {} (unlearning, encoding, masking), slowest unlearning {}, slowest encode + mask {}; client CPU per client {}\n\n{}\n{}\n\
         total time {:.1} s\n",
        p.summary(),
        fed_summary(&a.fed, &p),
        seed,
        ms(client_part),
        ms(server_part),
        server_part / client_part,
        a.requests,
        all.n,
        deferred,
        fed.pending().len(),
        seed_req.n,
        equal,
        all.n,
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
        t1.render(),
        t2.render(),
        total
    );
    Ok(Report {
        json,
        text,
        warnings: p.warnings,
        exit: 0,
    })
}
