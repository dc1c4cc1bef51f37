//! `mufc inspect`: what a store holds, and its audit history
//! ([`Store::history`]).

use mufc_store::{
    AuditEntry, ClientName, RecordId, RecordStatus, Store, StoreError, duration_words, utc,
};
use serde_json::{Value, json};

use super::show::{centroid_table, centroids_json, list};
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
    let (store, history) = read(&a.model)?;
    if let Some(id) = &a.id {
        return locate(&store, id);
    }
    let s = Summary::of(&store)?;
    let json = summary_json(a, &store, &s, &history);
    let withdrawn = store
        .federation()
        .withdrawal()
        .map_or_else(String::new, |w| format!("withdrawn: {w}\n\n"));
    let text = format!(
        "mufc inspect: {}\n\n{}\n{withdrawn}{}\naudit history (one row per request and client; times UTC):\n{}",
        a.model.display(),
        summary_table(&store, &s).render(),
        centroid_table(&s.centroids),
        history_table(&history)
    );
    let warnings = if s.overdue {
        vec![
            "a pending model update is past its deadline: `mufc forget --model STORE --overdue` \
             applies it"
                .to_string(),
        ]
    } else {
        Vec::new()
    };
    Ok(Report {
        json,
        text,
        warnings,
        exit: 0,
    })
}

/// The store's state and its audit log, of one snapshot: another
/// process's request between the two reads means reading again.
fn read(model: &std::path::Path) -> Result<(Store, Vec<AuditEntry>), CliError> {
    let mut tries = 0;
    loop {
        let store = Store::open(model)?;
        match store.history() {
            Ok(h) => return Ok((store, h)),
            Err(StoreError::Stale) if tries < 10 => tries += 1,
            Err(e) => return Err(e.into()),
        }
    }
}

/// What both the JSON and the table of `mufc inspect` show beyond the
/// store's plain getters.
struct Summary {
    masking: &'static str,
    clients: Vec<ClientName>,
    deadline: Option<u64>,
    overdue: bool,
    /// A server's store (`mufc server`) holds no client point: its
    /// roster and the aggregate's total stand for them.
    roster: Option<Vec<String>>,
    aggregate: u64,
    /// Whose data the model holds (issue 28, item 4): across processes a
    /// client the last round of its group left out (offline, or dropped
    /// inside the protocol) is missing until a catch-up round brings it
    /// back.
    included: Vec<mufc::ClientId>,
    missing: Vec<String>,
    centroids: Vec<mufc_store::Centroid>,
}

impl Summary {
    fn of(store: &Store) -> Result<Self, CliError> {
        let deadline = store.deadline()?;
        let roster = store.roster()?;
        let included = store.federation().last_included().to_vec();
        let missing = roster.as_ref().map_or_else(Vec::new, |names| {
            (0..names.len() as u64)
                .map(mufc::ClientId)
                .filter(|c| !included.contains(c))
                .map(|c| store.client_name(c).to_string())
                .collect()
        });
        Ok(Self {
            masking: (store.config().channel().as_scma())
                .map_or("none", |s| s.masks().masking().name()),
            clients: store.client_names(),
            deadline,
            overdue: deadline.is_some_and(|d| d <= now()),
            roster,
            aggregate: store.federation().server().total_count(),
            included,
            missing,
            centroids: store.centroids(),
        })
    }
}

/// The names of `group`'s clients.
fn names_of(store: &Store, group: &[mufc::ClientId]) -> Vec<String> {
    group
        .iter()
        .map(|c| store.client_name(*c).to_string())
        .collect()
}

/// `mufc inspect --json`.
fn summary_json(a: &InspectArgs, store: &Store, s: &Summary, history: &[AuditEntry]) -> Value {
    let c = store.config();
    let pending: Vec<Value> = store
        .pending_requests()
        .iter()
        .map(|(number, names)| {
            json!({
                "request": number,
                "clients": names.iter().map(ToString::to_string).collect::<Vec<_>>(),
            })
        })
        .collect();
    let config = json!({
        "k": store.k(),
        "client_k": c.client_k(),
        "gamma": c.gamma(),
        "privacy": crate::cli::Privacy::of(c.channel()).name(),
        "masking": s.masking,
        "server_points": c.server().points().name(),
        "client_training": c.client_training().name(),
        "server_restarts": c.server().kmeans().restarts(),
        "min_clients": c.min_clients(),
        "min_updating_clients": c.min_updating_clients(),
        "max_defer_seconds": store.max_defer().as_secs(),
        "seed": c.seed(),
        "topology": c.topology().name(),
    });
    json!({
        "command": "inspect",
        "roster": s.roster,
        "model_includes": names_of(store, &s.included),
        "model_lacks": s.missing,
        "aggregate_points": s.aggregate,
        "model": a.model.display().to_string(),
        "clients": s.clients.len(),
        "client_names": s.clients.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "points": store.num_points(),
        "k": store.k(),
        "dim": store.dim(),
        "model_version": store.model_version(),
        "rounds": store.rounds(),
        "groups": store.federation().layout().map(|l| {
            l.groups().iter().map(|g| names_of(store, g)).collect::<Vec<_>>()
        }),
        "training_included_clients": store.federation().fit_report().included.len(),
        "withdrawn": store.federation().withdrawal().map(ToString::to_string),
        "config": config,
        "pending": pending,
        "deadline": s.deadline,
        "overdue": s.overdue,
        "centroids": centroids_json(&s.centroids),
        "history": history.iter().map(entry_json).collect::<Vec<_>>(),
    })
}

/// The rows of `mufc inspect`'s table: who the model holds, then the
/// configuration, then the model's version and what waits.
fn summary_table(store: &Store, s: &Summary) -> TextTable {
    let mut t = TextTable::new(&["", "value"]);
    who_rows(&mut t, store, s);
    config_rows(&mut t, store, s);
    t.row(["aggregation rounds".to_string(), store.rounds().to_string()]);
    t.row([
        "model version".to_string(),
        store.model_version().to_string(),
    ]);
    if store.federation().withdrawal().is_some() {
        t.row(["model", "withdrawn (see below)"]);
    }
    t.row([
        "pending model updates (records erased)".to_string(),
        list(&store.pending().iter().map(|p| p.number).collect::<Vec<_>>()),
    ]);
    t.row([
        "a model update waits at most".to_string(),
        duration_words(store.max_defer().as_secs()),
    ]);
    if let Some(d) = s.deadline {
        t.row([
            "next deadline (UTC)".to_string(),
            format!(
                "{}{}",
                utc(d),
                if s.overdue {
                    " (passed: `mufc forget --model STORE --overdue` applies it)"
                } else {
                    ""
                }
            ),
        ]);
    }
    t
}

/// The table's first rows: a server's roster and whom its model lacks,
/// or a store's clients and points.
fn who_rows(t: &mut TextTable, store: &Store, s: &Summary) {
    match &s.roster {
        Some(names) => {
            t.row([
                "roster (a server's store: no client point)".to_string(),
                names.join(","),
            ]);
            t.row([
                "points in the aggregate".to_string(),
                s.aggregate.to_string(),
            ]);
            t.row([
                "clients the model includes".to_string(),
                names_of(store, &s.included).join(","),
            ]);
            t.row([
                "clients the model lacks (until a catch-up round)".to_string(),
                if s.missing.is_empty() {
                    "none".to_string()
                } else {
                    s.missing.join(",")
                },
            ]);
        }
        None => {
            t.row([
                "clients".to_string(),
                format!("{}: {}", s.clients.len(), names_line(&s.clients)),
            ]);
            t.row(["points".to_string(), store.num_points().to_string()]);
        }
    }
}

/// The configuration's rows.
fn config_rows(t: &mut TextTable, store: &Store, s: &Summary) {
    let c = store.config();
    t.row(["K (server clusters)".to_string(), store.k().to_string()]);
    t.row(["k (client clusters)".to_string(), c.client_k().to_string()]);
    t.row(["dimension".to_string(), store.dim().to_string()]);
    t.row([
        "gamma".to_string(),
        c.gamma().map_or("-".to_string(), |g| format!("{g:.5}")),
    ]);
    t.row([
        "privacy, masking".to_string(),
        format!(
            "{}, {}",
            crate::cli::Privacy::of(c.channel()).name(),
            s.masking
        ),
    ]);
    t.row([
        "server points, client training, server K-means runs".to_string(),
        format!(
            "{}, {}, {}",
            c.server().points().name(),
            c.client_training().name(),
            c.server().kmeans().restarts()
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
    t.row(["topology".to_string(), topology(store)]);
}

/// The first ten names, and how many more.
fn names_line(names: &[ClientName]) -> String {
    let shown: Vec<String> = names.iter().take(10).map(ToString::to_string).collect();
    match names.len().saturating_sub(10) {
        0 => shown.join(", "),
        more => format!("{}, and {more} more", shown.join(", ")),
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `mufc inspect --id X`: where record X is.
fn locate(store: &Store, id: &str) -> Result<Report, CliError> {
    // As `forget --ids`: an id never begins or ends with whitespace.
    let id = id.trim();
    let record = RecordId::parse(id).map_err(|e| CliError::InvalidParameter {
        name: "id",
        value: id.to_string(),
        reason: e.reason,
    })?;
    let mut exit = crate::exit::SUCCESS;
    let (text, json) = match store.locate(&record)? {
        RecordStatus::Held { client } => (
            format!(
                "record {record}: held by client {client}; the model (version {}) counts it",
                store.model_version()
            ),
            json!({ "status": "held", "client": client.to_string() }),
        ),
        RecordStatus::Forgotten(f) => {
            let model = match (f.applied, f.inherited) {
                (_, true) => "never in this store's model".to_string(),
                (Some((v, t)), false) => {
                    format!("removed from the model in version {v} at {} UTC", utc(t))
                }
                (None, false) => "its removal from the model is pending (the privacy policy waits for other clients' requests)".to_string(),
            };
            (
                format!(
                    "record {record}: forgotten in request {}{}, erased from the store at {} UTC{}; {model}",
                    f.request,
                    if f.inherited {
                        " of the store this one replaced"
                    } else {
                        ""
                    },
                    utc(f.erased_at),
                    f.client
                        .as_ref()
                        .map_or(String::new(), |c| format!(" (client {c})")),
                ),
                json!({
                    "status": "forgotten",
                    "request": f.request,
                    "erased_at": f.erased_at,
                    "client": f.client.as_ref().map(ToString::to_string),
                    "applied_version": f.applied.map(|a| a.0),
                    "applied_at": f.applied.map(|a| a.1),
                    "inherited": f.inherited,
                }),
            )
        }
        _ => {
            // An error, as `forget` refuses such an id: a script asking
            // whether a record is erased must not read a mistyped id as
            // an answer.
            exit = crate::exit::FAILURE;
            (
                format!("record {record}: unknown to this store (never held, or another id)"),
                json!({ "status": "unknown" }),
            )
        }
    };
    Ok(Report {
        json: json!({ "command": "inspect", "model": store.path().display().to_string(), "id": id, "record": json }),
        text: format!("{text}\n"),
        warnings: Vec::new(),
        exit,
    })
}

fn history_table(history: &[AuditEntry]) -> String {
    if history.is_empty() {
        return "(no request served yet)\n".to_string();
    }
    let mut t = TextTable::new(&[
        "request",
        "time",
        "client",
        "points",
        "added",
        "whole",
        "reseeded",
        "outcome",
        "applied",
        "erased",
        "removed from model",
        "version",
    ]);
    let mut warned = Vec::new();
    for e in history {
        if let Some(w) = &e.warning {
            warned.push(format!("request {}, client {}: {w}", e.request, e.client));
        }
        t.row([
            e.request.to_string(),
            utc(e.time),
            e.client.to_string(),
            e.points.to_string(),
            e.added.to_string(),
            yes(e.whole_client),
            yes(e.reseeded),
            e.outcome.name().to_string(),
            if e.applied.is_empty() {
                "-".to_string()
            } else {
                list(&e.applied)
            },
            // An addition's row erased nothing.
            match e.points == 0 && !e.whole_client && e.added > 0 {
                true => "-".to_string(),
                false => utc(e.erased_at),
            },
            e.removed_at.map_or_else(|| "pending".to_string(), utc),
            format!("{} -> {}", e.version_before, e.version_after),
        ]);
    }
    let mut out = t.render();
    for w in warned {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

fn yes(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

fn entry_json(e: &AuditEntry) -> Value {
    json!({
        "request": e.request,
        "time": e.time,
        "client": e.client.to_string(),
        "points": e.points,
        "added": e.added,
        "whole_client": e.whole_client,
        "reseeded": e.reseeded,
        "outcome": e.outcome.name(),
        "applied": e.applied,
        "erased_at": e.erased_at,
        "removed_at": e.removed_at,
        "version_before": e.version_before,
        "version_after": e.version_after,
        "warning": e.warning,
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
