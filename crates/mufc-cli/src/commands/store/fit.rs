//! `mufc fit`: trains (Algorithm 1) and writes the model store.

use std::time::Instant;

use mufc::FitReport;
use mufc_store::{Centroid, ClientName, ClientRecords, FitOptions, OnForgotten, RecordId, Store};
use seeding::Dataset;
use serde_json::{Value, json};

use super::super::prepare::{Prepared, prepare_with_ids};
use super::super::summary::{data_json, fed_summary, included_summary, merged, settings_json};
use super::super::trials::{fed_config, trial_seed};
use super::show::{centroid_table, centroids_json};
use crate::CliError;
use crate::cli::FitArgs;
use crate::data::Table;
use crate::federated::secs;
use crate::output::{Report, TextTable};
use crate::progress::Progress;

/// `mufc fit`: the data prepared and split as `mufc run` does (trial 0's
/// federation seed), each client named as the client column writes it
/// (or `0..L` for a split made here), each point given its record id (the
/// id column's, verbatim, or its data row), then [`Store::fit`] (with the
/// map into the box, if the data was scaled).
///
/// # Errors
///
/// As [`prepare`](super::super::prepare), and the store's errors (an
/// existing file without `--force`, records the replaced store forgot
/// without `--skip-forgotten`, ...).
pub fn fit(a: &FitArgs, progress: bool) -> Result<Report, CliError> {
    fit_from(a, progress, None).map(|(report, _)| report)
}

/// `mufc fit` on records held in memory: `table` takes the place of
/// `--data` (its clients name the clients, its ids the records, as a
/// file's client and id columns would), and every other option means what
/// it means to `mufc fit`. So the model is the one `mufc fit` writes for
/// the same records in a file, bit for bit. The Python estimator
/// (`MufcKMeans`) trains through this. Returns the report and the open
/// store.
///
/// # Errors
///
/// As [`fit`].
///
/// # Example
///
/// ```
/// use clap::Parser;
/// use mufc_cli::cli::{Cli, Command};
/// use mufc_cli::commands::fit_table;
/// use mufc_cli::data::Table;
/// use nalgebra::DMatrix;
///
/// let dir = tempfile::tempdir()?;
/// let model = dir.path().join("model.db");
/// let args = ["mufc", "fit", "--k", "2", "--scale", "--model", model.to_str().unwrap()];
/// let Command::Fit(a) = Cli::try_parse_from(args)?.command else { unreachable!() };
/// // Three clients of 20 points on a line, in two groups.
/// let points = DMatrix::from_fn(1, 60, |_, c| (c % 2) as f64 * 10.0 + c as f64 / 100.0);
/// let table = Table::with_clients(points, (0..60).map(|c| c / 20).collect())?;
/// let (_, store) = fit_table(&a, table)?;
/// assert_eq!(store.num_points(), 60);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit_table(a: &FitArgs, table: Table) -> Result<(Report, Store), CliError> {
    if a.id_column.is_some() || a.data.data.is_some() {
        return Err(CliError::InvalidParameter {
            name: "data",
            value: "a table in memory".to_string(),
            reason: "takes the place of --data and --id-column: give neither",
        });
    }
    fit_from(a, false, Some(table))
}

/// The configuration `mufc fit` with the options `a` trains with, for a
/// federation of `clients` clients holding `n` points of dimension `d`
/// that it does not read: clients that register with the parties instead
/// (the Python binding's Flower app sets its server party up with it).
/// The seed is trial 0's and gamma the preset's rule, as `mufc fit`'s; the
/// clients' adaptive k is left to the setup, which resolves it from the
/// clients' registrations by the rule `mufc fit` applies to its survey.
/// So a driver of the parties whose clients number their points by their
/// data rows reaches `mufc fit`'s model on the same records, bit for bit.
///
/// # Errors
///
/// The options' errors, as `mufc fit` reports them.
///
/// # Example
///
/// ```
/// use clap::Parser;
/// use mufc_cli::cli::{Cli, Command};
/// use mufc_cli::commands::fit_config_for_parties;
///
/// let args = ["mufc", "fit", "--k", "3", "--seed", "7", "--model", "unused"];
/// let Command::Fit(a) = Cli::try_parse_from(args)?.command else { unreachable!() };
/// let config = fit_config_for_parties(&a, 240, 2, 4)?;
/// // Gamma by the preset's rule for 240 points in d = 2; trial 0's seed.
/// assert_eq!(config.gamma(), Some(1.0 / 1024.0));
/// assert_ne!(config.seed(), 7);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn fit_config_for_parties(
    a: &FitArgs,
    n: usize,
    d: usize,
    clients: usize,
) -> Result<mufc::ValidConfig, CliError> {
    let settings = a.fed.settings()?;
    let gamma = (a.fed.gamma).unwrap_or_else(|| settings.gamma_rule().gamma(n as u64, d));
    let seed = trial_seed(a.common.seed, 0);
    let config = crate::federated::config(a.data.k, gamma, clients, &a.fed, seed)?;
    Ok(match a.max_points {
        Some(m) => config.into_builder().max_points(m).validate()?,
        None => config,
    })
}

/// [`fit`] from the options' data, or from a table given in memory.
fn fit_from(
    a: &FitArgs,
    progress: bool,
    given: Option<Table>,
) -> Result<(Report, Store), CliError> {
    let seed = a.common.seed;
    let start = Instant::now();
    check_args(a)?;
    let mut bar = Progress::new(3, "fit", progress);
    let (p, column) = prepare_with_ids(&a.data, &a.fed, seed, a.id_column, given)?;
    let mut config = fed_config(&p, &a.fed, trial_seed(seed, 0))?;
    if let Some(n) = a.max_points {
        config = config.into_builder().max_points(n).validate()?;
    }
    bar.inc(1);
    let clients = client_records(&p, column.as_deref())?;
    bar.inc(1);
    let (store, report) = Store::fit(&a.model, clients, &config, &fit_options(a, &p))?;
    let skipped = store.skipped().len();
    bar.inc(1);
    bar.finish();
    let fitted = Fitted {
        a,
        p: &p,
        store: &store,
        report: &report,
        centroids: store.centroids(),
        skipped,
        total: start.elapsed().as_secs_f64(),
    };
    let json = fitted.json()?;
    let text = fitted.text();
    let report = Report {
        json,
        text,
        warnings: p.warnings,
        exit: 0,
    };
    Ok((report, store))
}

/// The checks made before the data is read.
fn check_args(a: &FitArgs) -> Result<(), CliError> {
    // Fail before training (which may take long) when the store exists;
    // `Store::fit` checks again.
    if !a.force && a.model.symlink_metadata().is_ok() {
        return Err(CliError::Store(format!(
            "{} already exists: not overwritten (pass --force to replace it)",
            a.model.display()
        )));
    }
    // Checked again by the store; here before the data is read.
    if a.max_defer.0 > mufc_store::MAX_DEFER {
        return Err(mufc_store::StoreError::MaxDefer {
            secs: a.max_defer.0.as_secs(),
        }
        .into());
    }
    Ok(())
}

/// The clients' data sets, each with its name and its points' record ids.
fn client_records(p: &Prepared, column: Option<&[String]>) -> Result<Vec<ClientRecords>, CliError> {
    p.split
        .client_datasets(&p.points)?
        .into_iter()
        .enumerate()
        .map(|(l, d)| {
            let records = record_ids(&d, column)?;
            let name = client_name(p, l);
            Ok::<_, CliError>(ClientRecords::new(ClientName::new(&name)?, d, records)?)
        })
        .collect()
}

/// The record ids of a client's points: the id column's, verbatim, or
/// the data row.
fn record_ids(d: &Dataset, column: Option<&[String]>) -> Result<Vec<RecordId>, CliError> {
    // A point's id in the split is its data row.
    Ok(d.ids()
        .iter()
        .map(|row| {
            let written = usize::try_from(row.0).ok().and_then(|r| column?.get(r));
            match written {
                Some(id) => RecordId::parse(id),
                None => RecordId::try_from(row.0),
            }
        })
        .collect::<Result<Vec<_>, _>>()?)
}

/// Client `l`'s name: as the client column writes it, or `l`.
fn client_name(p: &Prepared, l: usize) -> String {
    match &p.client_names {
        Some(names) => names.get(l).cloned().unwrap_or_else(|| l.to_string()),
        None => l.to_string(),
    }
}

/// How the store is written, from the flags.
fn fit_options(a: &FitArgs, p: &Prepared) -> FitOptions {
    // The map into the box (the built-in data, --scale) is stored, so that
    // `predict` and the centroids are in the data's own coordinates.
    FitOptions::new()
        .replace(a.force)
        .with_transform(p.transform.clone())
        .with_max_defer(a.max_defer.0)
        .on_forgotten(if a.skip_forgotten {
            OnForgotten::Skip
        } else {
            OnForgotten::Refuse
        })
}

/// What `mufc fit` reports: the written store and its training round.
struct Fitted<'a> {
    a: &'a FitArgs,
    p: &'a Prepared,
    store: &'a Store,
    report: &'a FitReport,
    centroids: Vec<Centroid>,
    /// The records left out because the replaced store had forgotten them.
    skipped: usize,
    total: f64,
}

impl Fitted<'_> {
    /// `mufc fit --json`.
    fn json(&self) -> Result<Value, CliError> {
        let (a, store, report) = (self.a, self.store, self.report);
        Ok(merged(
            json!({ "command": "fit" }),
            merged(
                merged(
                    data_json(self.p, a.common.seed),
                    settings_json(&a.fed, self.p)?,
                ),
                json!({
                    "model": a.model.display().to_string(),
                    "replaced": a.force,
                    "id_column": a.id_column,
                    "record_ids": if a.id_column.is_some() { "id column" } else { "row numbers" },
                    "points": store.num_points(),
                    "dim": store.dim(),
                    "model_version": store.model_version(),
                    "rounds": store.rounds(),
                    "clients": store.client_names().iter().map(ToString::to_string).collect::<Vec<_>>(),
                    "max_defer_seconds": store.max_defer().as_secs(),
                    "skipped_forgotten": self.skipped,
                    "centroids": centroids_json(&self.centroids),
                    "included_clients": report.included.iter().map(|c| store.client_name(*c).to_string()).collect::<Vec<_>>(),
                    "dropped_clients": report.dropped.len(),
                    "bytes_per_client": report.bytes_per_client,
                    "nonzero_bins": report.nonzero_bins,
                    "server_points_count": report.server_points,
                    "paper_seconds": secs(report.times.paper()),
                    "wall_seconds": secs(report.times.wall),
                    "seconds_total": self.total,
                }),
            ),
        ))
    }

    /// `mufc fit`'s text: what was written, from which data and ids, the
    /// centroids and the training round.
    fn text(&self) -> String {
        let (a, store) = (self.a, self.store);
        let id_source = match a.id_column {
            Some(c) => format!("record ids from column {c}"),
            None => "no --id-column: record ids are the 0-based data row numbers (header excluded)"
                .to_string(),
        };
        let skipped = self.skipped;
        let skipped_line = if skipped > 0 {
            format!(
                "left out {skipped} record{} that the replaced store had forgotten (--skip-forgotten)\n",
                if skipped == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        format!(
            "mufc fit: wrote {} (model version {})\n{}\n{}; seed {}\n{}\n{}a model update may wait {} for other clients' requests (--max-defer)\n\n{}\n{}\ntotal time {:.1} s\n",
            a.model.display(),
            store.model_version(),
            self.p.summary(),
            fed_summary(&a.fed, self.p),
            a.common.seed,
            id_source,
            skipped_line,
            mufc_store::duration_words(store.max_defer().as_secs()),
            centroid_table(&self.centroids),
            training_table(self.report).render(),
            self.total
        )
    }
}

/// The training round's table.
fn training_table(report: &FitReport) -> TextTable {
    let mut t = TextTable::new(&["training", "value"]);
    t.row([
        "clients included".to_string(),
        included_summary(&report.included, &report.dropped),
    ]);
    t.row([
        "bytes per client".to_string(),
        report.bytes_per_client.to_string(),
    ]);
    t.row(["nonzero bins".to_string(), report.nonzero_bins.to_string()]);
    t.row([
        "server points".to_string(),
        report.server_points.to_string(),
    ]);
    t.row([
        "time as the paper counts".to_string(),
        format!("{:.2} ms", secs(report.times.paper()) * 1e3),
    ]);
    t.row([
        "training wall clock".to_string(),
        format!("{:.2} ms", secs(report.times.wall) * 1e3),
    ]);
    t
}
