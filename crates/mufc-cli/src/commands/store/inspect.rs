//! `mufc inspect`: what a store holds, and its audit history
//! ([`Store::history`]).

use mufc::store::{AuditEntry, Store};
use serde_json::{Value, json};

use super::show::{centroid_table, centroids_json, ids, list, utc};
use crate::CliError;
use crate::cli::InspectArgs;
use crate::output::{Report, TextTable};

/// `mufc inspect`: clients, points, K, dimension, configuration, rounds,
/// model version, pending requests and the audit history.
///
/// # Errors
///
/// The store's errors (a missing, foreign, damaged or other-version file).
pub fn inspect(a: &InspectArgs) -> Result<Report, CliError> {
    let store = Store::open(&a.model)?;
    let history = store.history()?;
    let c = store.config();
    let masking = c
        .channel()
        .as_scma()
        .map_or("none", |s| s.masks().masking().name());
    let clients = store.client_ids();
    let fit = store.federation().fit_report();
    let pending: Vec<Value> = store
        .pending()
        .iter()
        .map(|p| {
            json!({
                "request": p.number,
                "clients": ids(&p.request.clients_removed().iter().copied()
                    .chain(p.request.point_entries().iter().map(|(c, _)| *c))
                    .collect::<Vec<_>>()),
                "points": p.request.point_entries().iter().map(|(_, v)| v.len()).sum::<usize>(),
            })
        })
        .collect();
    let config = json!({
        "k": store.k(),
        "client_k": c.client_k(),
        "gamma": c.gamma(),
        "privacy": c.privacy().name(),
        "masking": masking,
        "server_points": c.server().points().name(),
        "client_training": c.client_training().name(),
        "server_restarts": c.server().restarts(),
        "min_clients": c.min_clients(),
        "min_updating_clients": c.min_updating_clients(),
        "seed": c.seed(),
        "topology": c.topology().name(),
    });
    let centroids = store.centroids();
    // A server's store (`mufc server`) holds no client point: its roster
    // and the aggregate's total stand for them.
    let roster = store.roster()?;
    let aggregate = store.federation().server().total_count();
    let json = json!({
        "command": "inspect",
        "roster": roster,
        "aggregate_points": aggregate,
        "model": a.model.display().to_string(),
        "clients": clients.len(),
        "client_ids": ids(&clients),
        "points": store.num_points(),
        "k": store.k(),
        "dim": store.dim(),
        "model_version": store.model_version(),
        "rounds": store.rounds(),
        "groups": store.federation().layout().map(|l| {
            l.groups().iter().map(|g| ids(g)).collect::<Vec<_>>()
        }),
        "training_included_clients": fit.included.len(),
        "config": config,
        "pending": pending,
        "centroids": centroids_json(&centroids),
        "history": history.iter().map(entry_json).collect::<Vec<_>>(),
    });
    let mut t = TextTable::new(&["", "value"]);
    match &roster {
        Some(names) => {
            t.row([
                "roster (a server's store: no client point)".to_string(),
                names.join(","),
            ]);
            t.row(["points in the aggregate".to_string(), aggregate.to_string()]);
        }
        None => {
            t.row(["clients".to_string(), clients.len().to_string()]);
            t.row(["points".to_string(), store.num_points().to_string()]);
        }
    }
    t.row(["K (server clusters)".to_string(), store.k().to_string()]);
    t.row(["k (client clusters)".to_string(), c.client_k().to_string()]);
    t.row(["dimension".to_string(), store.dim().to_string()]);
    t.row([
        "gamma".to_string(),
        c.gamma().map_or("-".to_string(), |g| format!("{g:.5}")),
    ]);
    t.row([
        "privacy, masking".to_string(),
        format!("{}, {}", c.privacy().name(), masking),
    ]);
    t.row([
        "server points, client training, server K-means runs".to_string(),
        format!(
            "{}, {}, {}",
            c.server().points().name(),
            c.client_training().name(),
            c.server().restarts()
        ),
    ]);
    t.row([
        "min clients per aggregate / per removal round".to_string(),
        format!("{} / {}", c.min_clients(), c.min_updating_clients()),
    ]);
    t.row([
        "federation seed (derived from fit's --seed)".to_string(),
        c.seed().to_string(),
    ]);
    t.row(["topology".to_string(), topology(&store)]);
    t.row(["aggregation rounds".to_string(), store.rounds().to_string()]);
    t.row([
        "model version".to_string(),
        store.model_version().to_string(),
    ]);
    t.row([
        "pending requests".to_string(),
        list(&store.pending().iter().map(|p| p.number).collect::<Vec<_>>()),
    ]);
    let text = format!(
        "mufc inspect: {}\n\n{}\n{}\naudit history (one row per request and client; times UTC):\n{}",
        a.model.display(),
        t.render(),
        centroid_table(&centroids),
        history_table(&history)
    );
    Ok(Report {
        json,
        text,
        warnings: Vec::new(),
    })
}

fn history_table(history: &[AuditEntry]) -> String {
    if history.is_empty() {
        return "(no request served yet)\n".to_string();
    }
    let mut t = TextTable::new(&[
        "request", "time", "client", "points", "whole", "reseeded", "outcome", "applied", "version",
    ]);
    for e in history {
        t.row([
            e.request.to_string(),
            utc(e.time),
            e.client.0.to_string(),
            e.points.to_string(),
            yes(e.whole_client),
            yes(e.reseeded),
            e.outcome.name().to_string(),
            if e.applied.is_empty() {
                "-".to_string()
            } else {
                list(&e.applied)
            },
            format!("{} -> {}", e.version_before, e.version_after),
        ]);
    }
    t.render()
}

fn yes(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

fn entry_json(e: &AuditEntry) -> Value {
    json!({
        "request": e.request,
        "time": e.time,
        "client": e.client.0,
        "points": e.points,
        "whole_client": e.whole_client,
        "reseeded": e.reseeded,
        "outcome": e.outcome.name(),
        "applied": e.applied,
        "version_before": e.version_before,
        "version_after": e.version_after,
    })
}

/// The topology in a line: `flat`, or the groups' sizes and the tree's
/// shape (a group emptied by removals counts 0).
fn topology(store: &Store) -> String {
    let Some(layout) = store.federation().layout() else {
        return "flat".to_string();
    };
    let sizes: Vec<usize> = layout.groups().iter().map(Vec::len).collect();
    let shape = match layout.fan_out() {
        Some(f) => format!(", fan-out {f}, height {}", layout.height()),
        None => String::new(),
    };
    format!(
        "{}: {} groups of {}{shape}",
        store.config().topology().name(),
        sizes.len(),
        list(&sizes)
    )
}
