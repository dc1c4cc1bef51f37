//! Unlearning against retraining on the paper's Gaussian setup (App. M.1:
//! n = 30000, d = 10, K = 10, L = 100 clients, non-iid with K' = 3,
//! gamma = 1/sqrt(n d), the default), measured in one run: a sequence of single-point
//! removals (a random point of a random client, as the paper's random
//! removals), each timed as the paper counts time (slowest client plus
//! server) and as total CPU time, against retraining from scratch on the
//! remaining data every few requests, whose result is checked bit for bit.
//! Every `seed-every`-th request removes a random seed of its client
//! instead (0: never), so that both cases of Algorithm 3 are measured.
//!
//! The masking (`dealer`, `pairwise`, `secagg`), the dropout rate and the
//! SecAgg graph (`complete`, `harary`) are the last arguments. With
//! dropouts the server holds the included clients' data only, so the
//! retrains are not compared (the counts are checked against the plain
//! sum of the included clients instead).
//!
//! ```text
//! cargo run --release -p mufc-tests --example unlearn_ratio -- [removals] [centers|uniform] [retrain-every] [seed-every] [seeding|full] [dealer|pairwise|secagg] [dropout] [complete|harary]
//! ```

use std::collections::BTreeMap;
use std::time::Duration;

use mufc::{
    Channel, ClientId, ClientTraining, DecodeKind, Federation, FederationConfig, Masking, Masks,
    RemovalRequest, SecAggGraph, SecAggOptions, ServerPoints, StageTimes,
};
use rand::RngExt;
use seeding::{Dataset, PointId};

#[derive(Default)]
struct Acc {
    n: u32,
    paper: Duration,
    cpu: Duration,
    wall: Duration,
    stages: [Duration; 6],
}

impl Acc {
    fn add(&mut self, t: &StageTimes) {
        self.n += 1;
        self.paper += t.paper();
        self.cpu += t.cpu();
        self.wall += t.wall;
        for (s, x) in self.stages.iter_mut().zip([
            t.client_round_max,
            t.protocol_client_max,
            t.sum,
            t.decode,
            t.server,
            t.offline,
        ]) {
            *s += x;
        }
    }
    fn stages(&self) -> String {
        let n = self.n.max(1);
        let [c, p, s, d, v, o] = self.stages.map(|x| ms(x.as_secs_f64() / f64::from(n)));
        format!(
            "slowest client {c}, protocol steps (slowest client each) {p}, sum {s}, decode {d}, server {v}, offline {o}"
        )
    }
    fn mean(&self) -> (f64, f64, f64) {
        let n = f64::from(self.n.max(1));
        (
            self.paper.as_secs_f64() / n,
            self.cpu.as_secs_f64() / n,
            self.wall.as_secs_f64() / n,
        )
    }
}

fn ms(x: f64) -> String {
    format!("{:.3} ms", x * 1e3)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let removals: usize = args.get(1).map_or(Ok(40), |a| a.parse())?;
    let points: ServerPoints = args
        .get(2)
        .map_or(Ok(ServerPoints::Centers), |a| a.parse())?;
    let every: usize = args.get(3).map_or(Ok(5), |a| a.parse())?;
    let seed_every: usize = args.get(4).map_or(Ok(0), |a| a.parse())?;
    let training: ClientTraining = args
        .get(5)
        .map_or(Ok(ClientTraining::Seeding), |a| a.parse())?;
    let masking: Masking = args.get(6).map_or(Ok(Masking::Dealer), |a| a.parse())?;
    let dropout: f64 = args.get(7).map_or(Ok(0.0), |a| a.parse())?;
    let graph: SecAggGraph = args
        .get(8)
        .map_or(Ok(SecAggGraph::Complete), |a| a.parse())?;

    let data =
        seeding_testkit::mixtures::paper_gaussian_clients("mufc-bench", 100, 10, 10, 3000, 3);
    let config = FederationConfig::new(10)
        .client_k(3)
        .server_points(points)
        .client_training(training)
        .channel(Channel::scma(match masking {
            Masking::Pairwise => Masks::Pairwise,
            Masking::SecAgg => Masks::SecAgg(SecAggOptions::new().dropout(dropout).graph(graph)),
            _ => Masks::Dealer,
        }))
        // Every single-point request is its own round (the figures are
        // per round), instead of waiting for a second client
        // (docs/threat-model.md U3).
        .min_updating_clients(1)
        .seed(1)
        .validate()?;
    let mut truth: BTreeMap<ClientId, Dataset> = data
        .iter()
        .enumerate()
        .map(|(i, d)| (ClientId(i as u64), d.clone()))
        .collect();
    let mut fed = Federation::new(data, &config)?;
    let fit = fed.fit_report().clone();
    let star = fed.estimate_phi_c_star(3)?;
    let before = fed.objectives(Some(star))?.loss_ratio.unwrap_or(f64::NAN);
    println!(
        "server points {points}, clients {training}, masking {masking} (dropout {dropout}, graph {graph}); fit: paper {}, cpu {}, wall {} (protocol steps {}, sum {}, decode {}, server {}); {} bytes per client; {} nonzero bins; t = {}; {} clients included; loss ratio {before:.4}",
        ms(fit.times.paper().as_secs_f64()),
        ms(fit.times.cpu().as_secs_f64()),
        ms(fit.times.wall.as_secs_f64()),
        ms(fit.times.protocol_client_max.as_secs_f64()),
        ms(fit.times.sum.as_secs_f64()),
        ms(fit.times.decode.as_secs_f64()),
        ms(fit.times.server.as_secs_f64()),
        fit.bytes_per_client,
        fit.nonzero_bins,
        fit.sketch.as_ref().map_or(0, |s| s.capacity),
        fit.included.len(),
    );

    let mut rng = testdata::rng("mufc-unlearn-ratio");
    let (mut all, mut non_seed, mut seed, mut retrain) = (
        Acc::default(),
        Acc::default(),
        Acc::default(),
        Acc::default(),
    );
    let (mut deltas, mut checked, mut dropped) = (0usize, 0usize, 0usize);
    for i in 1..=removals {
        let ids = fed.client_ids();
        let c = ids[rng.random_range(0..ids.len())];
        let client = fed.client(c).ok_or("client")?;
        let id = if seed_every > 0 && i % seed_every == 0 {
            let s = client.seed_ids();
            s[rng.random_range(0..s.len())]
        } else {
            let d = client.data();
            d.id(rng.random_range(0..d.len()))
        };
        let report = fed.remove(&RemovalRequest::points(c, vec![id]))?;
        all.add(&report.times);
        if report.reseeded.is_empty() {
            non_seed.add(&report.times);
        } else {
            seed.add(&report.times);
        }
        if matches!(report.decode, DecodeKind::Delta { .. }) {
            deltas += 1;
        }
        dropped += report.dropped.len();
        let rest = truth.get(&c).ok_or("client")?.without(&[PointId(id.0)])?;
        truth.insert(c, rest);
        if dropout > 0.0 {
            let sum = mufc_testkit::plain_sum_over(&fed, &report.included);
            if fed.server().counts() != &sum {
                return Err(format!("request {i}: not the included clients' sum").into());
            }
        } else if i % every == 0 {
            let fresh = Federation::with_ids(
                truth.iter().map(|(k, v)| (*k, v.clone())).collect(),
                fed.config(),
            )?;
            retrain.add(&fresh.fit_report().times);
            mufc_testkit::compare(&fed, &fresh).map_err(|e| format!("request {i}: {e}"))?;
            checked += 1;
        }
    }
    let after = fed.objectives(Some(star))?.loss_ratio.unwrap_or(f64::NAN);
    let (u, r) = (all.mean(), retrain.mean());
    println!(
        "{removals} removals ({} hit a seed), {deltas} decoded as differences, {dropped} dropouts; {checked} retrains, all equal bit for bit",
        seed.n
    );
    for (name, a) in [
        ("unlearn, all", &all),
        ("unlearn, non-seed", &non_seed),
        ("unlearn, seed", &seed),
        ("retrain", &retrain),
    ] {
        let (p, c, w) = a.mean();
        println!(
            "{name:>18}: paper {:>12}  cpu {:>12}  wall {:>12}  (n = {})",
            ms(p),
            ms(c),
            ms(w),
            a.n
        );
        println!("{:>18}  {}", "", a.stages());
    }
    println!(
        "retrain / unlearn: paper {:.0}x, cpu {:.0}x, wall {:.0}x; loss ratio {before:.4} -> {after:.4}",
        r.0 / u.0,
        r.1 / u.1,
        r.2 / u.2
    );
    Ok(())
}
