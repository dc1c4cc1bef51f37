//! `mufc fit`: trains (Algorithm 1) and writes the model store.

use std::time::Instant;

use mufc::ClientId;
use mufc::store::{ClientRecords, IfExists, RecordId, Store};
use serde_json::json;

use super::super::prepare::prepare_with_ids;
use super::super::summary::{data_json, fed_summary, included_summary, merged};
use super::super::trials::{fed_config, trial_seed};
use super::show::{centroid_table, centroids_json, ids};
use crate::CliError;
use crate::cli::FitArgs;
use crate::federated::secs;
use crate::output::{Report, TextTable};
use crate::progress::Progress;

/// `mufc fit`: the data prepared and split as `mufc run` does (trial 0's
/// federation seed), each point given its record id (the id column, or
/// its data row), then [`Store::fit_transformed`] (with the map into the box,
/// if the data was scaled).
///
/// # Errors
///
/// As [`prepare`](super::super::prepare), [`CliError::BadRecordId`], and
/// the store's errors (an existing file without `--force`, ...).
pub fn fit(a: &FitArgs, progress: bool) -> Result<Report, CliError> {
    let seed = a.common.seed;
    let start = Instant::now();
    let if_exists = if a.force {
        IfExists::Replace
    } else {
        IfExists::Refuse
    };
    // Fail before training (which may take long) when the store exists;
    // `Store::fit` checks again.
    if !a.force && a.model.symlink_metadata().is_ok() {
        return Err(CliError::Store(format!(
            "{} already exists: not overwritten (pass --force to replace it)",
            a.model.display()
        )));
    }
    let mut bar = Progress::new(3, "fit", progress);
    let (p, column) = prepare_with_ids(&a.data, &a.fed, seed, a.id_column)?;
    let config = fed_config(&p, &a.fed, trial_seed(seed, 0))?;
    bar.inc(1);
    let clients = p
        .split
        .client_datasets(&p.points)?
        .into_iter()
        .zip(0u64..)
        .map(|(d, l)| {
            // A point's id in the split is its data row.
            let records = d
                .ids()
                .iter()
                .map(|row| {
                    let r = usize::try_from(row.0).ok();
                    RecordId(match (&column, r) {
                        (Some(v), Some(r)) => v.get(r).copied().unwrap_or(row.0),
                        _ => row.0,
                    })
                })
                .collect();
            ClientRecords::new(ClientId(l), d, records)
        })
        .collect::<Result<Vec<_>, _>>()?;
    bar.inc(1);
    // The map into the box (the built-in data, --scale) is stored, so that
    // `predict` and the centroids are in the data's own coordinates.
    let transform = p.transform.clone();
    let (store, report) = Store::fit_transformed(&a.model, clients, &config, if_exists, transform)?;
    bar.inc(1);
    bar.finish();
    let centroids = store.centroids();
    let total = start.elapsed().as_secs_f64();
    let id_source = match a.id_column {
        Some(c) => format!("record ids from column {c}"),
        None => "no --id-column: record ids are the 0-based data row numbers (header excluded)"
            .to_string(),
    };
    let json = merged(
        json!({ "command": "fit" }),
        merged(
            data_json(&p, seed),
            json!({
                "model": a.model.display().to_string(),
                "replaced": a.force,
                "id_column": a.id_column,
                "record_ids": if a.id_column.is_some() { "id column" } else { "row numbers" },
                "points": store.num_points(),
                "dim": store.dim(),
                "model_version": store.model_version(),
                "rounds": store.rounds(),
                "centroids": centroids_json(&centroids),
                "included_clients": ids(&report.included),
                "dropped_clients": report.dropped.len(),
                "bytes_per_client": report.bytes_per_client,
                "nonzero_bins": report.nonzero_bins,
                "server_points_count": report.server_points,
                "paper_seconds": secs(report.times.paper()),
                "wall_seconds": secs(report.times.wall),
                "seconds_total": total,
            }),
        ),
    );
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
    let text = format!(
        "mufc fit: wrote {} (model version {})\n{}\n{}; seed {}\n{}\n\n{}\n{}\ntotal time {:.1} s\n",
        a.model.display(),
        store.model_version(),
        p.summary(),
        fed_summary(&a.fed, &p),
        seed,
        id_source,
        centroid_table(&centroids),
        t.render(),
        total
    );
    Ok(Report {
        json,
        text,
        warnings: Vec::new(),
    })
}
