//! What each subcommand does, as functions from parsed options to a
//! [`Report`]. The binary only parses, calls [`execute`] and prints.
//!
//! `run` and `compare` are here; `unlearn` and `bench` in their own
//! modules ([`unlearn()`], [`bench()`]).

use baselines::{DcKMeans, DcParams, KFedParams, kfed};
use std::time::Instant;

use mufc::{Federation, StageTimes, ValidConfig};
use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use crate::central::{best_kmeans, kmeans_labels};
use crate::cli::{Command, CompareArgs, DataArgs, FedArgs, Labels, RunArgs, Split as SplitKind};
use crate::data::{Header, LoadOptions, load};
use crate::federated;
use crate::output::{Report, TextTable, fmt_mean_std, mean_std};
use crate::progress::Progress;
use crate::random::{derive_seed, tag};
use crate::split::Split;
use crate::synth::{GaussianMixture, scale_into_box};
use crate::{CliError, checks};

mod bench;
mod unlearn;

pub use bench::bench;
pub use unlearn::unlearn;

/// The data of an experiment, split over clients.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// Where the data came from, for people.
    pub source: String,
    /// The points (scaled into the box when asked, or built in), one per
    /// column.
    pub points: DMatrix<f64>,
    /// The clients' points.
    pub split: Split,
    /// How the split was made, for people.
    pub split_desc: String,
    /// The number of clusters K.
    pub k: usize,
    /// The number of clusters each client computes (`--client-k`, else
    /// K), for every method.
    pub local_k: usize,
    /// K' of a non-i.i.d. split (K-FED's clients compute K' clusters, the
    /// number its one-shot server step is built for).
    pub k_prime: Option<usize>,
    /// The quantization step gamma (given, or 1/sqrt(n)).
    pub gamma: f64,
    /// phi_c*, when the K-means labelling already computed it.
    phi_c_star: Option<f64>,
}

impl Prepared {
    /// The number of points n.
    pub fn n(&self) -> usize {
        self.points.ncols()
    }

    /// The dimension d.
    pub fn d(&self) -> usize {
        self.points.nrows()
    }

    /// phi_c*, the best objective of `restarts` centralized K-means runs
    /// (computed once; the same seed gives the same value).
    ///
    /// # Errors
    ///
    /// As [`best_kmeans`].
    pub fn phi_c_star(&mut self, restarts: usize, seed: u64) -> Result<f64, CliError> {
        if let Some(p) = self.phi_c_star {
            return Ok(p);
        }
        let all = seeding::Dataset::new(self.points.clone())?;
        let p = best_kmeans(&all, self.k, restarts, seed)?.phi();
        self.phi_c_star = Some(p);
        Ok(p)
    }

    /// The number of clusters K-FED's clients compute: K' for a non-i.i.d.
    /// split, else the clients' k.
    pub fn kfed_k(&self) -> usize {
        self.k_prime.unwrap_or(self.local_k)
    }

    /// One line describing the data and the split.
    pub fn summary(&self) -> String {
        format!(
            "{}: n = {}, d = {}, K = {}; {} clients, {}; clients compute {} clusters",
            self.source,
            self.n(),
            self.d(),
            self.k,
            self.split.num_clients(),
            self.split_desc,
            self.local_k
        )
    }
}

/// K' when not given: the paper's K' = 3 (K' ~ sqrt(K) for K = 10), or K
/// when K is smaller.
const DEFAULT_K_PRIME: usize = 3;

fn invalid(name: &'static str, value: impl ToString, reason: &'static str) -> CliError {
    CliError::InvalidParameter {
        name,
        value: value.to_string(),
        reason,
    }
}

/// Loads or generates the data, scales it, and splits it over clients.
///
/// # Errors
///
/// [`CliError::InvalidParameter`] for out-of-range options, and the errors
/// of loading ([`load`]), generating ([`GaussianMixture::sample`]) and
/// splitting ([`Split`]).
pub fn prepare(data: &DataArgs, fed: &FedArgs, seed: u64) -> Result<Prepared, CliError> {
    if data.k == 0 {
        return Err(invalid("K", 0, "must be at least 1"));
    }
    if data.restarts == 0 {
        return Err(invalid("restarts", 0, "must be at least 1"));
    }
    if data.k_prime == Some(0) {
        return Err(invalid("K'", 0, "must be at least 1"));
    }
    if fed.client_k == Some(0) {
        return Err(invalid("client k", 0, "must be at least 1"));
    }
    if fed.server_restarts == 0 {
        return Err(invalid("server restarts", 0, "must be at least 1"));
    }
    if let Some(g) = fed.gamma {
        if !(g > 0.0 && g.is_finite()) {
            return Err(invalid("gamma", g, "must be finite and positive"));
        }
        // The quantizer's grid has at most 2^53 bins per axis.
        if (1.0 / g).ceil() > 9_007_199_254_740_992.0 {
            return Err(invalid(
                "gamma",
                format!("{g:?}"),
                "is too small: the grid has at most 2^53 bins per axis (gamma >= 2^-53 ~ 1.1e-16)",
            ));
        }
    }
    if !(0.0..1.0).contains(&fed.dropout) {
        return Err(invalid(
            "dropout",
            fed.dropout,
            "must be a probability in [0, 1)",
        ));
    }
    if let Some(kp) = data.k_prime
        && data.split == SplitKind::NonIid
        && data.client_column.is_none()
        && kp > data.k
    {
        return Err(CliError::KPrimeExceedsK {
            k_prime: kp,
            defaulted: false,
            clusters: data.k,
            labelled: false,
        });
    }
    let (source, table, true_labels) = match &data.data {
        None => {
            let mix = GaussianMixture {
                variance: data.variance,
                ..GaussianMixture::paper()
            };
            let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, tag::DATA, 0));
            let s = mix.sample(&mut rng)?;
            let table = crate::data::Table::new(scale_into_box(&s.points)?)?;
            (
                format!(
                    "built-in Gaussian data (App. M.1, variance {}), scaled into the box",
                    data.variance
                ),
                table,
                Some(s.labels),
            )
        }
        Some(path) => {
            let opts = LoadOptions {
                header: if data.header {
                    Header::Present
                } else {
                    Header::Auto
                },
                client_column: data.client_column,
            };
            let table = load(path, &opts)?;
            let table = if data.scale {
                let scaled = scale_into_box(table.points())?;
                table.with_points(scaled)?
            } else {
                table
            };
            let scaled = if data.scale {
                ", scaled into the box"
            } else {
                ""
            };
            (format!("{}{scaled}", path.display()), table, None)
        }
    };
    let points = table.points().clone();
    let n = points.ncols();
    checks::counts(data.k, table.clients().is_none().then_some(data.clients), n)?;
    let gamma = fed.gamma.unwrap_or(1.0 / (n as f64).sqrt());
    if fed.privacy != mufc::Privacy::Plain {
        checks::gamma(&points, gamma, fed.gamma.is_none())?;
    }
    let mut phi_c_star = None;
    let mut k_prime = None;
    let (split, split_desc) = if let Some(clients) = table.clients() {
        let col = data.client_column.unwrap_or(0);
        (
            Split::by_client(clients)?,
            format!("clients from column {col}"),
        )
    } else {
        let (labels, which) = match (true_labels, data.labels) {
            (Some(l), Labels::True) => (l, "true labels"),
            _ => {
                let all = seeding::Dataset::new(points.clone())?;
                let (l, phi) = kmeans_labels(&all, data.k, data.restarts, seed)?;
                phi_c_star = Some(phi);
                (l, "centralized K-means labels")
            }
        };
        let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, tag::SPLIT, 0));
        match data.split {
            SplitKind::Iid => (
                Split::iid(&labels, data.clients, &mut rng)?,
                format!("iid split of the {which}"),
            ),
            SplitKind::NonIid => {
                // The paper's K' = 3 for K = 10; never above K.
                let kp = data.k_prime.unwrap_or(DEFAULT_K_PRIME.min(data.k));
                k_prime = Some(kp);
                (
                    Split::non_iid(&labels, data.clients, kp, &mut rng)?,
                    format!("non-iid split of the {which}, K' = {kp}"),
                )
            }
        }
    };
    if fed.masking == mufc::Masking::SecAgg {
        checks::dropout(
            fed.dropout,
            split.num_clients(),
            fed.secagg_graph == mufc::SecAggGraph::Harary,
        )?;
    }
    let local_k = fed.client_k.unwrap_or(data.k);
    Ok(Prepared {
        source,
        points,
        split,
        split_desc,
        k: data.k,
        local_k,
        k_prime,
        gamma,
        phi_c_star,
    })
}

/// Runs a subcommand. `progress` says whether progress bars may be drawn
/// (see [`Progress::wanted`]).
///
/// # Errors
///
/// The errors of the steps run: bad options, bad data, and the errors of
/// the `mufc` library (for instance a client with fewer distinct points
/// than its k).
pub fn execute(command: &Command, progress: bool) -> Result<Report, CliError> {
    let result = match command {
        Command::Run(a) => run(a, progress),
        Command::Unlearn(a) => unlearn(a, progress),
        Command::Bench(a) => bench(a, progress),
        Command::Compare(a) => compare(a, progress),
    };
    let mut report = result.map_err(|e| match e {
        CliError::Mufc(m @ mufc::MufcError::OutsideBox { .. }) => CliError::OutsideBox(m),
        other => other,
    })?;
    // The options' warnings first, then the run's own.
    let fed = command.fed();
    let mut warnings = federated::privacy_warnings(fed);
    warnings.append(&mut report.warnings);
    report.json = merged(
        report.json,
        json!({
            "min_clients": fed.min_clients,
            "min_updating_clients": fed.min_updating_clients,
            "privacy_warnings": warnings,
        }),
    );
    report.warnings = warnings;
    Ok(report)
}

/// The federation seed of trial `t` of a run seeded by `seed` (the same in
/// `run`, `compare` and, for trial 0, `unlearn` and `bench`).
pub(crate) fn trial_seed(seed: u64, t: usize) -> u64 {
    derive_seed(seed, tag::TRIAL, t as u64)
}

/// The federation's configuration for the prepared data and a trial seed.
pub(crate) fn fed_config(p: &Prepared, fed: &FedArgs, seed: u64) -> Result<ValidConfig, CliError> {
    federated::config(p.k, p.local_k, p.gamma, fed, seed)
}

/// One line naming the federated options, for people.
/// "92 of 100; 9 dropped (1 during unmasking, still included)".
pub(crate) fn included_summary(
    included: &[mufc::ClientId],
    dropped: &[(mufc::ClientId, mufc::SecAggStep)],
) -> String {
    // A client that dropped during unmasking is in both lists (docs/threat-model.md D3).
    let late = dropped.iter().filter(|(c, _)| included.contains(c)).count();
    let total = included.len() + dropped.len() - late;
    match (dropped.len(), late) {
        (0, _) => format!("{} of {total}", included.len()),
        (d, 0) => format!("{} of {total}; {d} dropped", included.len()),
        (d, l) => format!(
            "{} of {total}; {d} dropped ({l} during unmasking, still included)",
            included.len()
        ),
    }
}

pub(crate) fn fed_summary(fed: &FedArgs, p: &Prepared) -> String {
    let masking = match fed.masking {
        mufc::Masking::SecAgg => format!(
            "secagg ({} graph, dropout {})",
            fed.secagg_graph, fed.dropout
        ),
        m => m.to_string(),
    };
    format!(
        "privacy {}, masking {masking}, at least {} clients per aggregate and {} per removal round, server points {}, clients run {}, server K-means best of {}, gamma = {:.5}",
        fed.privacy,
        fed.min_clients,
        fed.min_updating_clients,
        fed.server_points,
        match fed.client_training {
            mufc::ClientTraining::Seeding => "K-means++ seeding",
            mufc::ClientTraining::Full => "full K-means",
            other => other.name(),
        },
        fed.server_restarts,
        p.gamma,
    )
}

/// The JSON fields every command reports about its data.
fn data_json(p: &Prepared, seed: u64) -> Value {
    json!({
        "source": p.source,
        "n": p.n(),
        "d": p.d(),
        "k": p.k,
        "local_k": p.local_k,
        "clients": p.split.num_clients(),
        "split": p.split_desc,
        "seed": seed,
        "gamma": p.gamma,
    })
}

/// Merges the fields of `extra` into the object `base`.
fn merged(mut base: Value, extra: Value) -> Value {
    if let (Some(b), Value::Object(e)) = (base.as_object_mut(), extra) {
        b.extend(e);
    }
    base
}

/// The data, split and checked, of a command that runs `trials` trials:
/// the configuration is validated before any work, so a bad flag fails
/// fast.
fn prepare_trials(
    data: &DataArgs,
    fed: &FedArgs,
    seed: u64,
    trials: usize,
) -> Result<(Prepared, Vec<seeding::Dataset>), CliError> {
    if trials == 0 {
        return Err(invalid("trials", 0, "must be at least 1"));
    }
    let p = prepare(data, fed, seed)?;
    fed_config(&p, fed, 0)?;
    let clients = p.split.client_datasets(&p.points)?;
    Ok((p, clients))
}

/// `mufc run`: Algorithm 1 on the data, over the trials (federation seed
/// per trial; same data and split).
///
/// # Errors
///
/// As [`prepare`] and [`Federation::new`].
pub fn run(a: &RunArgs, progress: bool) -> Result<Report, CliError> {
    let seed = a.common.seed;
    let start = Instant::now();
    let (mut p, clients) = prepare_trials(&a.data, &a.fed, seed, a.trials)?;
    let mut bar = Progress::new(a.trials as u64 + 1, "run", progress);
    let phi_star = p.phi_c_star(a.data.restarts, seed)?;
    bar.inc(1);
    let (mut ratios, mut phis, mut times) = (Vec::new(), Vec::new(), Vec::new());
    let mut first: Option<(mufc::FitReport, Federation)> = None;
    for t in 0..a.trials {
        let fed = Federation::new(
            clients.clone(),
            &fed_config(&p, &a.fed, trial_seed(seed, t))?,
        )?;
        let o = fed.objectives(Some(phi_star))?;
        ratios.push(o.loss_ratio.unwrap_or(f64::NAN));
        phis.push(o.phi_f);
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
            data_json(&p, seed),
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
                "server_points": a.fed.server_points.name(),
                "client_training": a.fed.client_training.name(),
                "server_restarts": a.fed.server_restarts,
                "loss_ratio": lr,
                "loss_ratio_std": lr_std,
                "loss_ratios": ratios,
                "phi_f": pf,
                "phi_f_std": pf_std,
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
                "rounds": fed.rounds(),
                "seconds_total": total,
            }),
        ),
    );
    let mut table = TextTable::new(&["", "value"]);
    let ms = |x: f64| format!("{:.2} ms", x * 1e3);
    table.row([
        format!("loss ratio phi_f / phi_c* ({} trials)", a.trials),
        fmt_mean_std(lr, lr_std, 4),
    ]);
    table.row(["phi_f".to_string(), format!("{pf:.4}")]);
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
            "sketch: capacity t, elements, modulus bits".to_string(),
            format!("{}, {}, {}", s.capacity, s.elements, s.modulus_bits),
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
        warnings: Vec::new(),
    })
}

/// The results of one method over the trials.
#[derive(Clone, Debug, Default, PartialEq)]
struct MethodStats {
    ratios: Vec<f64>,
    seconds: Vec<f64>,
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
/// As [`prepare`], [`Federation::new`], [`kfed`] and [`DcKMeans::fit`].
pub fn compare(a: &CompareArgs, progress: bool) -> Result<Report, CliError> {
    let seed = a.common.seed;
    let start = Instant::now();
    let (mut p, clients) = prepare_trials(&a.data, &a.fed, seed, a.trials)?;
    let phi_star = p.phi_c_star(a.data.restarts, seed)?;
    let mut bar = Progress::new(3 * a.trials as u64, "trials", progress);
    let (mut mu, mut kf, mut dc) = (
        MethodStats::default(),
        MethodStats::default(),
        MethodStats::default(),
    );
    for t in 0..a.trials {
        let s = trial_seed(seed, t);
        let fed = Federation::new(clients.clone(), &fed_config(&p, &a.fed, s)?)?;
        mu.ratios.push(
            fed.objectives(Some(phi_star))?
                .loss_ratio
                .unwrap_or(f64::NAN),
        );
        mu.seconds
            .push(federated::secs(fed.fit_report().times.paper()));
        bar.inc(1);
        let run = kfed(&clients, &KFedParams::new(p.k, p.kfed_k()).validate()?, s)?;
        kf.ratios.push(seeding::loss_ratio(run.phi_f, phi_star)?);
        kf.seconds.push(run.seconds());
        bar.inc(1);
        let tree = DcKMeans::fit(
            clients.clone(),
            DcParams::new(p.k, p.local_k).validate()?,
            s,
        )?;
        dc.ratios
            .push(seeding::loss_ratio(tree.phi_f()?, phi_star)?);
        dc.seconds.push(tree.fit_seconds());
        bar.inc(1);
    }
    bar.finish();
    let total = start.elapsed().as_secs_f64();
    let json = merged(
        json!({ "command": "compare" }),
        merged(
            data_json(&p, seed),
            json!({
                "trials": a.trials,
                "phi_c_star": phi_star,
                "phi_c_star_restarts": a.data.restarts,
                "mufc": merged(mu.json(), json!({
                    "privacy": a.fed.privacy.name(),
                    "server_points": a.fed.server_points.name(),
                    "client_training": a.fed.client_training.name(),
                    "server_restarts": a.fed.server_restarts,
                })),
                "k_fed": merged(kf.json(), json!({ "client_k": p.kfed_k() })),
                "dc_kmeans": dc.json(),
                "seconds_total": total,
            }),
        ),
    );
    let mut table = TextTable::new(&["method", "loss ratio", "seconds", "note"]);
    let mufc_note = format!(
        "{} clients, weighted server points",
        match a.fed.client_training {
            mufc::ClientTraining::Seeding => "seeding-only",
            mufc::ClientTraining::Full => "full K-means",
            other => other.name(),
        }
    );
    table.row(mu.row("MUFC", &mufc_note));
    table.row(kf.row(
        "K-FED",
        &format!("one-shot, unit weights, {} clusters per client", p.kfed_k()),
    ));
    table.row(dc.row("DC-KMeans", "tree of height 2, unit weights"));
    let text = format!(
        "mufc compare: {}\nMUFC: {}\nphi_c* = {:.6} (best of {} centralized K-means runs); {} trials; seed {}\n\
         loss ratio = phi_f / phi_c* (mean ± std over trials); seconds = slowest client + server\n\n{}\n\
         total time {:.1} s\n",
        p.summary(),
        fed_summary(&a.fed, &p),
        phi_star,
        a.data.restarts,
        a.trials,
        seed,
        table.render(),
        total
    );
    Ok(Report {
        json,
        text,
        warnings: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::Cli;

    fn parse(args: &[&str]) -> Command {
        Cli::try_parse_from(args).unwrap().command
    }

    #[test]
    fn options_are_checked_before_work() {
        for args in [
            &["mufc", "run", "--k", "0"][..],
            &["mufc", "run", "--gamma=-1"],
            &["mufc", "run", "--trials", "0"],
            &["mufc", "unlearn", "--removals", "0"],
            &["mufc", "unlearn", "--plot", "fig.pdf"],
            &["mufc", "unlearn", "--batch", "0"],
            &["mufc", "bench", "--requests", "0"],
            &["mufc", "run", "--server-restarts", "0"],
            &["mufc", "run", "--client-k", "0"],
            &["mufc", "compare", "--k-prime", "11"],
            &["mufc", "run", "--data", "no/such/file.csv"],
        ] {
            assert!(execute(&parse(args), false).is_err(), "{args:?}");
        }
    }

    #[test]
    fn compare_runs_every_method_on_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blobs.csv");
        let (points, _) = testkit::mufc::blobs(3, 40, 2, 0.01, "cmp");
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
