//! `mufc fit`: trains (Algorithm 1) and writes the model store.

use std::time::Instant;

use mufc_store::{ClientName, ClientRecords, FitOptions, OnForgotten, RecordId, Store};
use serde_json::json;

use super::super::prepare::prepare_with_ids;
use super::super::summary::{data_json, fed_summary, included_summary, merged, settings_json};
use super::super::trials::{fed_config, trial_seed};
use super::show::{centroid_table, centroids_json};
use crate::CliError;
use crate::cli::FitArgs;
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
    let seed = a.common.seed;
    let start = Instant::now();
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
    let mut bar = Progress::new(3, "fit", progress);
    let (p, column) = prepare_with_ids(&a.data, &a.fed, seed, a.id_column)?;
    let config = fed_config(&p, &a.fed, trial_seed(seed, 0))?;
    bar.inc(1);
    let clients = p
        .split
        .client_datasets(&p.points)?
        .into_iter()
        .enumerate()
        .map(|(l, d)| {
            // A point's id in the split is its data row.
            let records = d
                .ids()
                .iter()
                .map(|row| {
                    let written = usize::try_from(row.0)
                        .ok()
                        .and_then(|r| column.as_ref()?.get(r));
                    match written {
                        Some(id) => RecordId::parse(id),
                        None => RecordId::try_from(row.0),
                    }
                })
                .collect::<Result<Vec<_>, _>>()?;
            let name = match &p.client_names {
                Some(names) => names.get(l).cloned().unwrap_or_else(|| l.to_string()),
                None => l.to_string(),
            };
            Ok::<_, CliError>(ClientRecords::new(ClientName::new(&name)?, d, records)?)
        })
        .collect::<Result<Vec<_>, _>>()?;
    bar.inc(1);
    // The map into the box (the built-in data, --scale) is stored, so that
    // `predict` and the centroids are in the data's own coordinates.
    let options = FitOptions::new()
        .replace(a.force)
        .with_transform(p.transform.clone())
        .with_max_defer(a.max_defer.0)
        .on_forgotten(if a.skip_forgotten {
            OnForgotten::Skip
        } else {
            OnForgotten::Refuse
        });
    let (store, report) = Store::fit(&a.model, clients, &config, &options)?;
    let skipped = store.skipped().len();
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
            merged(data_json(&p, seed), settings_json(&a.fed, &p)?),
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
                "skipped_forgotten": skipped,
                "centroids": centroids_json(&centroids),
                "included_clients": report.included.iter().map(|c| store.client_name(*c).to_string()).collect::<Vec<_>>(),
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
    let skipped_line = if skipped > 0 {
        format!(
            "left out {skipped} record{} that the replaced store had forgotten (--skip-forgotten)\n",
            if skipped == 1 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    let text = format!(
        "mufc fit: wrote {} (model version {})\n{}\n{}; seed {}\n{}\n{}a model update may wait {} for other clients' requests (--max-defer)\n\n{}\n{}\ntotal time {:.1} s\n",
        a.model.display(),
        store.model_version(),
        p.summary(),
        fed_summary(&a.fed, &p),
        seed,
        id_source,
        skipped_line,
        mufc_store::duration_words(store.max_defer().as_secs()),
        centroid_table(&centroids),
        t.render(),
        total
    );
    Ok(Report {
        json,
        text,
        warnings: p.warnings,
        exit: 0,
    })
}
