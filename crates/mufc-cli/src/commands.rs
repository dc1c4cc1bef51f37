//! What each subcommand does, as functions from parsed options to a
//! [`Report`]. The binary only parses, calls [`execute`] and prints.
//!
//! Today `run`, `unlearn` and `bench` prepare their data and then stop with
//! [`CliError::NotImplemented`]: their engine is the `mufc` library
//! (issue 5). `compare` runs K-FED and DC-KMeans and marks the MUFC row as
//! missing.

use std::time::Instant;

use nalgebra::DMatrix;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use crate::CliError;
use crate::central::{best_kmeans, kmeans_labels};
use crate::cli::{Command, CompareArgs, DataArgs, FedArgs, Labels, Split as SplitKind};
use crate::data::{Header, LoadOptions, load};
use crate::dc_kmeans::{DcKMeans, DcParams};
use crate::kfed::{KFedParams, kfed};
use crate::output::{Report, TextTable, fmt_mean_std, mean_std};
use crate::progress::Progress;
use crate::random::{derive_seed, tag};
use crate::split::Split;
use crate::synth::{GaussianMixture, scale_into_box};

/// The reason the MUFC row of `mufc compare` is empty.
pub const MISSING_ENGINE: &str = "not implemented yet: needs the mufc library (issue 5)";

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
    /// The number of clusters each client computes (K' for a non-i.i.d.
    /// split, else K unless `--k-prime` says otherwise).
    pub local_k: usize,
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
    if let Some(g) = fed.gamma
        && !(g > 0.0 && g.is_finite())
    {
        return Err(invalid("gamma", g, "must be finite and positive"));
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
    let mut phi_c_star = None;
    let (split, split_desc, local_k) = if let Some(clients) = table.clients() {
        let col = data.client_column.unwrap_or(0);
        (
            Split::by_client(clients)?,
            format!("clients from column {col}"),
            data.k_prime.unwrap_or(data.k),
        )
    } else {
        let (labels, which) = match (true_labels, data.labels) {
            (Some(l), Labels::Auto) => (l, "true labels"),
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
                data.k_prime.unwrap_or(data.k),
            ),
            SplitKind::NonIid => {
                let kp = data.k_prime.unwrap_or(3);
                (
                    Split::non_iid(&labels, data.clients, kp, &mut rng)?,
                    format!("non-iid split of the {which}, K' = {kp}"),
                    kp,
                )
            }
        }
    };
    let n = points.ncols();
    Ok(Prepared {
        source,
        points,
        split,
        split_desc,
        k: data.k,
        local_k,
        gamma: fed.gamma.unwrap_or(1.0 / (n as f64).sqrt()),
        phi_c_star,
    })
}

/// Runs a subcommand. `progress` says whether progress bars may be drawn
/// (see [`Progress::wanted`]).
///
/// # Errors
///
/// [`CliError::NotImplemented`] for the parts that need the `mufc`
/// library, and the errors of the steps run.
pub fn execute(command: &Command, progress: bool) -> Result<Report, CliError> {
    let seed = command.common().seed;
    match command {
        Command::Run(a) => {
            if a.trials == 0 {
                return Err(invalid("trials", 0, "must be at least 1"));
            }
            let p = prepare(&a.data, &a.fed, seed)?;
            Err(not_implemented("run", &p))
        }
        Command::Unlearn(a) => {
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
            let p = prepare(&a.data, &a.fed, seed)?;
            Err(not_implemented("unlearn", &p))
        }
        Command::Bench(a) => {
            let p = prepare(&a.data, &a.fed, seed)?;
            Err(not_implemented("bench", &p))
        }
        Command::Compare(a) => compare(a, progress),
    }
}

fn not_implemented(command: &'static str, p: &Prepared) -> CliError {
    CliError::NotImplemented {
        command,
        detail: format!("; data ready: {}", p.summary()),
    }
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

    fn row(&self, name: &str) -> Vec<String> {
        let (m, s) = mean_std(&self.ratios);
        let (t, _) = mean_std(&self.seconds);
        vec![
            name.to_string(),
            fmt_mean_std(m, s, 3),
            format!("{t:.4}"),
            String::new(),
        ]
    }
}

/// `mufc compare`: K-FED and DC-KMeans over the trials (the MUFC row is
/// missing until the `mufc` library exists).
///
/// # Errors
///
/// As [`prepare`], [`kfed`] and [`DcKMeans::fit`].
pub fn compare(a: &CompareArgs, progress: bool) -> Result<Report, CliError> {
    if a.trials == 0 {
        return Err(invalid("trials", 0, "must be at least 1"));
    }
    let seed = a.common.seed;
    let start = Instant::now();
    let mut p = prepare(&a.data, &a.fed, seed)?;
    let phi_star = p.phi_c_star(a.data.restarts, seed)?;
    let clients = p.split.client_datasets(&p.points)?;
    let mut bar = Progress::new(2 * a.trials as u64, "trials", progress);
    let (mut kf, mut dc) = (MethodStats::default(), MethodStats::default());
    for t in 0..a.trials {
        let s = derive_seed(seed, tag::TRIAL, t as u64);
        let run = kfed(&clients, &KFedParams::new(p.k, p.local_k), s)?;
        kf.ratios.push(seeding::loss_ratio(run.phi_f, phi_star)?);
        kf.seconds.push(run.seconds());
        bar.inc(1);
        let tree = DcKMeans::fit(clients.clone(), DcParams::new(p.k, p.local_k), s)?;
        dc.ratios
            .push(seeding::loss_ratio(tree.phi_f()?, phi_star)?);
        dc.seconds.push(tree.fit_seconds());
        bar.inc(1);
    }
    bar.finish();
    let total = start.elapsed().as_secs_f64();
    let json = json!({
        "command": "compare",
        "source": p.source,
        "n": p.n(),
        "d": p.d(),
        "k": p.k,
        "local_k": p.local_k,
        "clients": p.split.num_clients(),
        "split": p.split_desc,
        "trials": a.trials,
        "seed": seed,
        "gamma": p.gamma,
        "phi_c_star": phi_star,
        "phi_c_star_restarts": a.data.restarts,
        "mufc": { "available": false, "error": MISSING_ENGINE, "loss_ratio": null, "loss_ratio_std": null },
        "k_fed": kf.json(),
        "dc_kmeans": dc.json(),
        "seconds_total": total,
    });
    let mut table = TextTable::new(&["method", "loss ratio", "seconds", "note"]);
    table.row(["MUFC", "-", "-", MISSING_ENGINE]);
    table.row(kf.row("K-FED"));
    table.row(dc.row("DC-KMeans"));
    let text = format!(
        "mufc compare: {}\nphi_c* = {:.6} (best of {} centralized K-means runs); {} trials; seed {}\n\
         loss ratio = phi_f / phi_c* (mean ± std over trials); seconds = slowest client + server\n\n{}\n\
         total time {:.1} s\n",
        p.summary(),
        phi_star,
        a.data.restarts,
        a.trials,
        seed,
        table.render(),
        total
    );
    Ok(Report { json, text })
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
    fn run_prepares_the_default_data_then_reports_the_missing_engine() {
        // A smaller variance and fewer restarts would not change the
        // path; the default data is generated for real.
        let err = execute(&parse(&["mufc", "run", "--quiet"]), false).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains(MISSING_ENGINE), "{msg}");
        assert!(
            msg.contains("n = 30000, d = 10, K = 10; 100 clients"),
            "{msg}"
        );
        assert!(msg.contains("K' = 3"), "{msg}");
        for cmd in ["bench", "unlearn"] {
            let err = execute(&parse(&["mufc", cmd, "--clients", "10"]), false).unwrap_err();
            assert!(matches!(err, CliError::NotImplemented { .. }), "{err}");
        }
    }

    #[test]
    fn options_are_checked_before_work() {
        for args in [
            &["mufc", "run", "--k", "0"][..],
            &["mufc", "run", "--gamma=-1"],
            &["mufc", "run", "--trials", "0"],
            &["mufc", "unlearn", "--removals", "0"],
            &["mufc", "unlearn", "--plot", "fig.pdf"],
            &["mufc", "compare", "--k-prime", "11"],
            &["mufc", "run", "--data", "no/such/file.csv"],
        ] {
            let err = execute(&parse(args), false).unwrap_err();
            assert!(
                !matches!(err, CliError::NotImplemented { .. }),
                "{args:?}: {err}"
            );
        }
    }

    #[test]
    fn compare_runs_the_baselines_on_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blobs.csv");
        let (points, _) = crate::testdata::blobs(3, 40, 2, 0.01, "cmp");
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
        ]);
        let report = execute(&cmd, false).unwrap();
        let j = &report.json;
        assert_eq!(j["n"], 120);
        assert_eq!(j["clients"], 4);
        assert_eq!(j["mufc"]["available"], false);
        for m in ["k_fed", "dc_kmeans"] {
            let r = j[m]["loss_ratio"].as_f64().unwrap();
            assert!((0.99..1.1).contains(&r), "{m}: {r}");
            assert_eq!(j[m]["loss_ratios"].as_array().unwrap().len(), 2);
        }
        assert!(report.text.contains("DC-KMeans"));
        assert!(report.text.contains(MISSING_ENGINE));
        // The same seed gives the same numbers.
        let again = execute(&cmd, false).unwrap();
        assert_eq!(
            again.json["k_fed"]["loss_ratios"],
            j["k_fed"]["loss_ratios"]
        );
    }
}
