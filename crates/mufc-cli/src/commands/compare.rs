//! `mufc compare`: MUFC, K-FED and DC-KMeans on the same data and split
//! over the trials (the paper's Table 1).

use baselines::{DcKMeans, DcParams, KFedParams, kfed};
use std::time::Instant;

use mufc::Federation;
use seeding::Dataset;
use serde_json::{Value, json};

use super::prepare::Prepared;
use super::summary::{data_json, fed_summary, merged, settings_json};
use super::trials::{fed_config, prepare_trials, trial_seed};
use crate::CliError;
use crate::cli::CompareArgs;
use crate::federated;
use crate::output::{Report, TextTable, fmt_mean_std, mean_std};
use crate::progress::Progress;

/// The results of one method over the trials.
#[derive(Clone, Debug, Default, PartialEq)]
struct MethodStats {
    ratios: Vec<f64>,
    seconds: Vec<f64>,
}

/// What MUFC's trials cost beyond training: the bytes a client sent, and
/// the removal rounds' times (the paper's count).
#[derive(Clone, Debug, Default, PartialEq)]
struct MufcCosts {
    bytes: Vec<f64>,
    rounds: Vec<f64>,
}

/// Serves `removals` requests on `fed`, each one random point of each of
/// two random clients (applied at once under the default policy); the
/// paper's count of each round, in seconds.
fn removal_rounds(fed: &mut Federation, removals: usize, seed: u64) -> Result<Vec<f64>, CliError> {
    use rand::SeedableRng;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(removals);
    for _ in 0..removals {
        let held: Vec<(mufc::ClientId, usize)> = fed
            .clients()
            .iter()
            .filter(|c| c.data().len() > 1)
            .map(|c| (c.id(), c.data().len()))
            .collect();
        if held.len() < 2 {
            break;
        }
        let a = crate::random::below(&mut rng, held.len());
        let b = (a + 1 + crate::random::below(&mut rng, held.len() - 1)) % held.len();
        let mut request = mufc::RemovalRequest::new();
        for &i in &[a, b] {
            let (id, len) = held[i];
            let Some(c) = fed.client(id) else { continue };
            let p = c.data().id(crate::random::below(&mut rng, len));
            request = request.with_points(id, vec![p]);
        }
        let report = fed.remove(&request)?;
        if !report.outcome.is_deferred() {
            out.push(federated::secs(report.times.paper()));
        }
    }
    Ok(out)
}

impl MethodStats {
    fn json(&self) -> Value {
        let (m, s) = mean_std(&self.ratios);
        let (ts, tss) = mean_std(&self.seconds);
        json!({
            "available": true,
            "loss_ratio": m,
            "loss_ratio_std": s,
            "loss_ratios": self.ratios,
            "seconds": ts,
            "seconds_std": tss,
        })
    }

    fn row(&self, name: &str, note: &str) -> Vec<String> {
        let (m, s) = mean_std(&self.ratios);
        let (t, _) = mean_std(&self.seconds);
        vec![
            name.to_string(),
            fmt_mean_std(m, s, 3),
            format!("{t:.4}"),
            note.to_string(),
        ]
    }
}

/// `mufc compare`: MUFC, K-FED and DC-KMeans over the trials, the same
/// data and split for all, trial `t` seeding every method alike (the
/// paper's Table 1).
///
/// # Errors
///
/// As [`prepare`](super::prepare), [`Federation::new`], [`kfed`] and [`DcKMeans::fit`].
pub fn compare(a: &CompareArgs, progress: bool) -> Result<Report, CliError> {
    let seed = a.common.seed;
    let start = Instant::now();
    let (mut p, clients) = prepare_trials(&a.data, &a.fed, seed, a.trials)?;
    let phi_star = p.phi_c_star(a.data.restarts, seed)?;
    let mut bar = Progress::new(3 * a.trials as u64, "trials", progress);
    let mut t = Trials::default();
    for trial in 0..a.trials {
        t.run(a, &p, &clients, phi_star, trial_seed(seed, trial), &mut bar)?;
    }
    bar.finish();
    let total = start.elapsed().as_secs_f64();
    let json = merged(
        json!({ "command": "compare" }),
        merged(
            merged(data_json(&p, seed), settings_json(&a.fed, &p)?),
            t.json(a, &p, phi_star, total),
        ),
    );
    let table = t.table(a, &p)?;
    let text = format!(
        "mufc compare: {}\nMUFC: {}\nphi_c* = {:.6} (best of {} centralized K-means runs); {}; seed {}\n\
         loss ratio = phi_f / phi_c* (mean ± std over trials); seconds = slowest client + server\n\n{}\n\
         MUFC: {:.0} bytes per client{}\ntotal time {:.1} s\n",
        p.summary(),
        fed_summary(&a.fed, &p),
        phi_star,
        a.data.restarts,
        crate::output::count(a.trials as u64, "trial"),
        seed,
        table.render(),
        mean_std(&t.costs.bytes).0,
        t.rounds_line(),
        total
    );
    Ok(Report {
        json,
        text,
        warnings: p.warnings.clone(),
        exit: 0,
    })
}

/// The three methods' results over the trials, and MUFC's costs.
#[derive(Default)]
struct Trials {
    mu: MethodStats,
    kf: MethodStats,
    dc: MethodStats,
    costs: MufcCosts,
}

impl Trials {
    /// One trial, seeded by `s`: MUFC (with its removal rounds), then
    /// K-FED, then DC-KMeans.
    fn run(
        &mut self,
        a: &CompareArgs,
        p: &Prepared,
        clients: &[Dataset],
        phi_star: f64,
        s: u64,
        bar: &mut Progress,
    ) -> Result<(), CliError> {
        let mut fed = Federation::new(clients.to_vec(), &fed_config(p, &a.fed, s)?)?;
        self.mu.ratios.push(
            fed.objectives(Some(phi_star))?
                .loss_ratio
                .unwrap_or(f64::NAN),
        );
        self.mu
            .seconds
            .push(federated::secs(fed.fit_report().times.paper()));
        self.costs
            .bytes
            .push(fed.fit_report().bytes_per_client as f64);
        self.costs
            .rounds
            .extend(removal_rounds(&mut fed, a.removals, s)?);
        bar.inc(1);
        let run = kfed(clients, &KFedParams::new(p.k, p.kfed_k()).validate()?, s)?;
        self.kf
            .ratios
            .push(seeding::loss_ratio(run.phi_f, phi_star)?);
        self.kf.seconds.push(run.seconds());
        bar.inc(1);
        let tree = DcKMeans::fit(
            clients.to_vec(),
            DcParams::new(p.k, p.local_k).validate()?,
            s,
        )?;
        self.dc
            .ratios
            .push(seeding::loss_ratio(tree.phi_f()?, phi_star)?);
        self.dc.seconds.push(tree.fit_seconds());
        bar.inc(1);
        Ok(())
    }

    /// `mufc compare --json`'s fields beyond the data and the settings.
    fn json(&self, a: &CompareArgs, p: &Prepared, phi_star: f64, total: f64) -> Value {
        json!({
            "trials": a.trials,
            "phi_c_star": phi_star,
            "phi_c_star_restarts": a.data.restarts,
            "mufc": merged(self.mu.json(), json!({
                "bytes_per_client": mean_std(&self.costs.bytes).0,
                "removal_round_seconds": mean_std(&self.costs.rounds).0,
                "removal_rounds": self.costs.rounds.len(),
                "privacy": a.fed.privacy.name(),
            })),
            "k_fed": merged(self.kf.json(), json!({ "client_k": p.kfed_k() })),
            "dc_kmeans": self.dc.json(),
            "seconds_total": total,
        })
    }

    /// A row per method.
    fn table(&self, a: &CompareArgs, p: &Prepared) -> Result<TextTable, CliError> {
        let mut table = TextTable::new(&["method", "loss ratio", "seconds", "note"]);
        let mufc_note = format!(
            "{} clients, weighted server points",
            match a.fed.settings()?.client_training() {
                mufc::ClientTraining::Seeding => "seeding-only",
                mufc::ClientTraining::Full => "full K-means",
                other => other.name(),
            }
        );
        table.row(self.mu.row("MUFC", &mufc_note));
        table.row(self.kf.row(
            "K-FED",
            &format!("one-shot, unit weights, {} clusters per client", p.kfed_k()),
        ));
        table.row(self.dc.row("DC-KMeans", "tree of height 2, unit weights"));
        Ok(table)
    }

    /// MUFC's removal rounds, if any ran.
    fn rounds_line(&self) -> String {
        let rounds = &self.costs.rounds;
        if rounds.is_empty() {
            String::new()
        } else {
            format!(
                "; a removal round {:.2} ms (mean of {}, paper count)",
                mean_std(rounds).0 * 1e3,
                rounds.len()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::{Cli, Command};
    use crate::commands::execute;

    fn parse(args: &[&str]) -> Command {
        Cli::try_parse_from(args).unwrap().command
    }

    #[test]
    fn compare_runs_every_method_on_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blobs.csv");
        let (points, _) = seeding_testkit::mixtures::blobs(3, 40, 2, 0.01, "cmp");
        let mut csv = String::from("x,y\n");
        for c in 0..points.ncols() {
            csv.push_str(&format!("{},{}\n", points[(0, c)], points[(1, c)]));
        }
        std::fs::write(&path, csv).unwrap();
        let p = path.to_str().unwrap();
        let cmd = parse(&[
            "mufc",
            "compare",
            "--data",
            p,
            "--k",
            "3",
            "--clients",
            "4",
            "--k-prime",
            "2",
            "--trials",
            "2",
            "--json",
            "--scale",
            // Blobs far narrower than the default step 1/sqrt(120).
            "--gamma",
            "0.005",
        ]);
        let report = execute(&cmd, false).unwrap();
        let j = &report.json;
        assert_eq!(j["n"], 120);
        assert_eq!(j["clients"], 4);
        for m in ["mufc", "k_fed", "dc_kmeans"] {
            let r = j[m]["loss_ratio"].as_f64().unwrap();
            // MUFC pays for quantization and seeding-only clients.
            assert!((0.99..1.2).contains(&r), "{m}: {r}");
            assert_eq!(j[m]["loss_ratios"].as_array().unwrap().len(), 2);
        }
        assert!(report.text.contains("DC-KMeans"));
        assert!(report.text.contains("MUFC"));
        // The same seed gives the same numbers.
        let again = execute(&cmd, false).unwrap();
        for m in ["mufc", "k_fed", "dc_kmeans"] {
            assert_eq!(again.json[m]["loss_ratios"], j[m]["loss_ratios"]);
        }
    }
}
