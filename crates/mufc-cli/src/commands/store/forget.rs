//! `mufc forget`: one removal request served from the store
//! ([`Store::forget`], [`Store::forget_client`], [`Store::flush`]).

use std::path::Path;
use std::time::Instant;

use mufc::store::{ForgetReport, RecordId, Store};
use mufc::{ClientId, RemovalOutcome};
use serde_json::{Value, json};

use super::show::{ids, list};
use crate::CliError;
use crate::cli::ForgetArgs;
use crate::federated::secs;
use crate::output::{Report, TextTable};

/// The record ids of an `--ids-file`: integers separated by commas,
/// whitespace or newlines; `#` starts a comment.
fn read_ids_file(path: &Path) -> Result<Vec<u64>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::io(path, &e))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for tok in line.split(|c: char| c == ',' || c.is_whitespace()) {
            if tok.is_empty() {
                continue;
            }
            out.push(tok.parse().map_err(|_| CliError::BadRecordId {
                path: path.to_path_buf(),
                message: format!(
                    "line {}: {tok:?} is not a record id (a non-negative integer)",
                    i + 1
                ),
            })?);
        }
    }
    Ok(out)
}

/// `mufc forget`: opens the store, serves the request (and, with
/// `--flush`, the pending ones), each committed before it is reported.
///
/// # Errors
///
/// Bad options, an unreadable ids file, and the store's errors (unknown
/// record ids, an unknown client, ...): nothing is changed then.
pub fn forget(a: &ForgetArgs) -> Result<Report, CliError> {
    let start = Instant::now();
    let mut records: Vec<u64> = a.ids.clone().unwrap_or_default();
    if let Some(f) = &a.ids_file {
        records.extend(read_ids_file(f)?);
    }
    let named = a.ids.is_some() || a.ids_file.is_some();
    if !named && a.client.is_none() && !a.flush {
        return Err(CliError::InvalidParameter {
            name: "request",
            value: "none".into(),
            reason: "name records with --ids or --ids-file, a client with --client, or pass \
                     --flush alone to apply the pending requests",
        });
    }
    if named && records.is_empty() {
        return Err(CliError::InvalidParameter {
            name: "request",
            value: "no record ids".into(),
            reason: "--ids / --ids-file name no record",
        });
    }
    let mut store = Store::open(&a.model)?;
    let needed = store.config().min_updating_clients();
    let mut reports = Vec::new();
    if named {
        let ids: Vec<RecordId> = records.iter().map(|&r| RecordId(r)).collect();
        reports.push(store.forget(&ids)?);
    } else if let Some(c) = a.client {
        reports.push(store.forget_client(ClientId(c))?);
    }
    let mut warnings = Vec::new();
    if a.flush {
        match store.flush()? {
            Some(r) => {
                if let Some(w) = &r.removal.privacy_warning {
                    warnings.push(format!("--flush: {w}"));
                }
                reports.push(r);
            }
            None => warnings.push("--flush: no request was pending".to_string()),
        }
    }
    let total = start.elapsed().as_secs_f64();
    let mut text = format!("mufc forget: {}\n", a.model.display());
    for r in &reports {
        text.push('\n');
        text.push_str(&describe(r));
    }
    text.push_str(&format!(
        "\nstore now: model version {}, {} points, {} clients, {} pending request(s); total time {:.1} ms\n",
        store.model_version(),
        store.num_points(),
        store.client_ids().len(),
        store.pending().len(),
        total * 1e3
    ));
    let json = json!({
        "command": "forget",
        "model": a.model.display().to_string(),
        "requests": reports.iter().map(|r| report_json(r, needed)).collect::<Vec<_>>(),
        "model_version": store.model_version(),
        "points": store.num_points(),
        "clients": store.client_ids().len(),
        "pending": store.pending().iter().map(|p| p.number).collect::<Vec<_>>(),
        "seconds_total": total,
    });
    Ok(Report {
        json,
        text,
        warnings,
    })
}

/// Why a request waits, for people.
fn deferred_reason(outcome: &RemovalOutcome) -> Option<String> {
    match outcome {
        RemovalOutcome::Deferred {
            pending_clients,
            needed,
        } => Some(format!(
            "the privacy policy runs a removal round only when at least {needed} clients \
             update (a round changing fewer tells the server their change; \
             docs/threat-model.md U3), and the pending requests name {} (client {}). The \
             points stay in the model and the store until another client's request joins \
             them, or `mufc forget --model STORE --flush` applies them with a warning",
            pending_clients.len(),
            list(&ids(pending_clients))
        )),
        _ => None,
    }
}

fn describe(r: &ForgetReport) -> String {
    let mut t = TextTable::new(&["", "value"]);
    let outcome = if r.outcome.is_deferred() {
        "deferred (pending)"
    } else {
        "applied"
    };
    t.row(["outcome", outcome]);
    t.row(["records named".to_string(), r.records.to_string()]);
    t.row(["clients named".to_string(), list(&ids(&r.clients))]);
    t.row(["requests applied".to_string(), list(&r.applied_requests)]);
    t.row(["points removed".to_string(), r.removed_points.to_string()]);
    t.row([
        "clients removed".to_string(),
        list(&ids(&r.removed_clients)),
    ]);
    t.row(["clients reseeded".to_string(), list(&ids(&r.reseeded))]);
    t.row([
        "centroid shift (Hausdorff distance, data units)".to_string(),
        r.centroid_shift
            .map_or("- (number of centroids changed)".to_string(), |s| {
                format!("{s:.6}")
            }),
    ]);
    t.row([
        "model version".to_string(),
        format!("{} -> {}", r.version_before, r.version_after),
    ]);
    t.row([
        "apply / commit time".to_string(),
        format!(
            "{:.2} ms / {:.2} ms",
            secs(r.apply_time) * 1e3,
            secs(r.commit_time) * 1e3
        ),
    ]);
    let mut s = format!("request {}\n{}", r.request, t.render());
    if let Some(why) = deferred_reason(&r.outcome) {
        s.push_str(&format!("deferred: {why}\n"));
    }
    s
}

fn report_json(r: &ForgetReport, needed: usize) -> Value {
    json!({
        "request": r.request,
        "outcome": if r.outcome.is_deferred() { "deferred" } else { "applied" },
        "deferred_reason": deferred_reason(&r.outcome),
        "min_updating_clients": needed,
        "records": r.records,
        "clients": ids(&r.clients),
        "applied_requests": r.applied_requests,
        "removed_points": r.removed_points,
        "removed_clients": ids(&r.removed_clients),
        "reseeded_clients": ids(&r.reseeded),
        "centroid_shift": r.centroid_shift,
        "version_before": r.version_before,
        "version_after": r.version_after,
        "time": r.time,
        "apply_seconds": secs(r.apply_time),
        "commit_seconds": secs(r.commit_time),
        "privacy_warning": r.removal.privacy_warning,
    })
}
