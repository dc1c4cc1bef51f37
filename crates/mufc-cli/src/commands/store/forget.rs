//! `mufc forget`: one removal request served from the store
//! ([`Store::forget`], [`Store::forget_client`], [`Store::flush`]), after
//! the pending model updates whose deadline passed
//! ([`Store::apply_overdue`]).

use std::path::Path;
use std::time::Instant;

use mufc::MufcError;
use mufc_store::{ForgetOutcome, ForgetReport, RecordId, Store, StoreError, utc};
use serde_json::{Value, json};

use super::show::list;
use crate::cli::ForgetArgs;
use crate::federated::secs;
use crate::output::{Report, TextTable};
use crate::{CliError, exit};

/// The record ids of an `--ids-file`: one per line, as the data writes
/// them (trimmed); blank lines and lines starting with `#` are skipped.
fn read_ids_file(path: &Path) -> Result<Vec<String>, CliError> {
    let text = std::fs::read_to_string(path).map_err(|e| CliError::io(path, &e))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect())
}

/// A store error of a request: a refusal (nothing changed, exit code
/// [`exit::REFUSED`]) or another error.
pub(super) fn refusal(e: StoreError) -> CliError {
    let refused = matches!(
        &e,
        StoreError::UnknownRecords { .. }
            | StoreError::AlreadyForgotten { .. }
            | StoreError::DuplicateRecord(_)
            | StoreError::DuplicateClient(_)
            | StoreError::RecordHeld { .. }
            | StoreError::Forgotten { .. }
            | StoreError::InvalidName { .. }
            | StoreError::UnknownClient { .. }
            | StoreError::ClientForgotten { .. }
            | StoreError::Mufc(
                MufcError::TooFewClients { .. }
                    | MufcError::AlreadyPending { .. }
                    | MufcError::EmptyRequest
                    | MufcError::UnknownClient(_)
                    | MufcError::UnknownPoint { .. }
                    | MufcError::RepeatedPoint { .. }
                    | MufcError::RepeatedClient(_)
                    | MufcError::InvalidLayout(_)
                    | MufcError::HeldPoint { .. }
                    | MufcError::OutsideBox { .. }
                    | MufcError::DimensionMismatch { .. }
                    | MufcError::MemberId(_)
                    | MufcError::EmptyClient(_)
                    | MufcError::TopologyUnsupported(_)
                    | MufcError::Withdrawn { .. }
                    | MufcError::InvalidConfig {
                        param: mufc::ConfigParam::MaxPoints,
                        ..
                    }
            )
    );
    if refused {
        CliError::Refused(format!("request refused, nothing changed: {e}"))
    } else {
        e.into()
    }
}

/// `mufc forget`: opens the store, applies the overdue model updates,
/// serves the request (and, with `--flush`, the pending ones), each
/// committed before it is reported. Exit code ([`exit`]): 0 when the
/// request's model update ran, 3 when it is deferred, 4 when refused, 6
/// when the store serves no model (withdrawn: too few clients left).
///
/// # Errors
///
/// Bad options, an unreadable ids file, [`CliError::Refused`] for a
/// request the store refuses (unknown or already forgotten records, an
/// unknown client, ...: nothing is changed then), and the store's other
/// errors.
pub fn forget(a: &ForgetArgs) -> Result<Report, CliError> {
    let start = Instant::now();
    let ids = request_ids(a)?;
    let mut store = Store::open(&a.model)?;
    let served = Served::on(&mut store, a.flush, |store| {
        match (ids.as_deref(), &a.client) {
            (Some(ids), _) => store.forget(ids).map(Some).map_err(refusal),
            (None, Some(c)) => store.forget_client(c).map(Some).map_err(refusal),
            (None, None) => Ok(None),
        }
    })?;
    Ok(served.report("forget", &a.model, &store, start))
}

/// The record ids the request names (`--ids`, `--ids-file`), or `None`
/// when it names none that way; checked before the store is opened.
fn request_ids(a: &ForgetArgs) -> Result<Option<Vec<RecordId>>, CliError> {
    // Blank items (`--ids ""`, `--ids a,,b`) name nothing; an id never
    // begins or ends with whitespace, so trimming loses nothing.
    let mut named: Vec<String> = a
        .ids
        .iter()
        .flatten()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if let Some(f) = &a.ids_file {
        named.extend(read_ids_file(f)?);
    }
    let by_ids = a.ids.is_some() || a.ids_file.is_some();
    if !by_ids && a.client.is_none() && !a.flush && !a.overdue {
        return Err(CliError::InvalidParameter {
            name: "request",
            value: "none".into(),
            reason: "name records with --ids or --ids-file, a client with --client, or pass \
                     --flush or --overdue alone to apply the pending model updates",
        });
    }
    if by_ids && named.is_empty() {
        return Err(CliError::InvalidParameter {
            name: "request",
            value: "no record ids".into(),
            reason: "--ids / --ids-file name no record",
        });
    }
    // An id no store can hold is bad input, not a refusal.
    let ids = named
        .iter()
        .map(|s| {
            RecordId::parse(s).map_err(|e| CliError::InvalidParameter {
                name: "ids",
                value: s.clone(),
                reason: e.reason,
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(by_ids.then_some(ids))
}

/// What the store served: the overdue updates, the request, then with
/// `--flush` the pending ones, in that order.
pub(super) struct Served {
    reports: Vec<ForgetReport>,
    warnings: Vec<String>,
    /// Whether the request's model update waits.
    deferred: bool,
    withdrawn: Option<mufc::Withdrawal>,
}

impl Served {
    /// Serves the overdue updates, then `request` (`None` when there is
    /// none), then with `flush` the pending updates, on `store`, each step
    /// committed before the next.
    pub(super) fn on(
        store: &mut Store,
        flush: bool,
        request: impl FnOnce(&mut Store) -> Result<Option<ForgetReport>, CliError>,
    ) -> Result<Self, CliError> {
        let mut served = Self {
            reports: Vec::new(),
            warnings: Vec::new(),
            deferred: false,
            withdrawn: None,
        };
        // Deadlines first: an update that waited too long runs now.
        if let Some(r) = store.apply_overdue()? {
            if let Some(w) = &r.privacy_warning {
                served.warnings.push(format!("past its deadline: {w}"));
            }
            served.reports.push(r);
        }
        if let Some(r) = request(store)? {
            served.request(r);
        }
        served.withdrawn = served.reports.iter().find_map(|r| match &r.outcome {
            ForgetOutcome::Withdrawn(w) => Some(w.clone()),
            _ => None,
        });
        if let Some(w) = &served.withdrawn {
            served.warnings.push(format!(
                "the store serves no model: {w}. `mufc fit` on the remaining records (with a lower \
                 --min-clients) trains a new one"
            ));
        }
        if flush {
            served.flush(store)?;
        }
        Ok(served)
    }

    /// The report of `command` on the store at `model`, begun at `start`.
    pub(super) fn report(
        self,
        command: &str,
        model: &Path,
        store: &Store,
        start: Instant,
    ) -> Report {
        let needed = store.config().min_updating_clients();
        let total = start.elapsed().as_secs_f64();
        let text = request_text(command, model, store, &self.reports, total);
        let pending = store.pending_requests().into_iter().map(|(n, _)| n);
        let json = json!({
            "command": command,
            "model": model.display().to_string(),
            "requests": self.reports.iter().map(|r| report_json(r, needed)).collect::<Vec<_>>(),
            "model_version": store.model_version(),
            "points": store.num_points(),
            "clients": store.client_names().len(),
            "pending": pending.collect::<Vec<_>>(),
            "seconds_total": total,
        });
        Report {
            json,
            text,
            exit: self.exit(),
            warnings: self.warnings,
        }
    }

    /// The records the requests served left out (the store forgot them).
    pub(super) fn skipped(&self) -> usize {
        self.reports.iter().map(|r| r.skipped.len()).sum()
    }

    /// The request's own report.
    fn request(&mut self, r: ForgetReport) {
        self.deferred = r.outcome.is_deferred();
        self.reports.push(r);
    }

    /// `--flush`: the pending model updates, applied now.
    fn flush(&mut self, store: &mut Store) -> Result<(), CliError> {
        match store.flush()? {
            Some(r) => {
                if let Some(w) = &r.privacy_warning {
                    self.warnings.push(format!("--flush: {w}"));
                }
                self.deferred = false;
                self.reports.push(r);
            }
            None => self
                .warnings
                .push("--flush: no model update was pending".to_string()),
        }
        Ok(())
    }

    /// The exit code ([`exit`]).
    fn exit(&self) -> u8 {
        if self.withdrawn.is_some() {
            exit::WITHDRAWN
        } else if self.deferred {
            exit::DEFERRED
        } else {
            exit::SUCCESS
        }
    }
}

/// A request's text: a table per report, then the store's state.
fn request_text(
    command: &str,
    model: &Path,
    store: &Store,
    reports: &[ForgetReport],
    total: f64,
) -> String {
    let mut text = format!("mufc {command}: {}\n", model.display());
    if reports.is_empty() {
        text.push_str("\nno model update was due\n");
    }
    for r in reports {
        text.push('\n');
        text.push_str(&describe(r));
    }
    let pending = store.pending_requests().len();
    text.push_str(&format!(
        "\nstore now: model version {}, {} points, {} clients, {} pending model update{}; total time {:.1} ms\n",
        store.model_version(),
        store.num_points(),
        store.client_names().len(),
        pending,
        if pending == 1 { "" } else { "s" },
        total * 1e3
    ));
    text
}

/// Why a request's model update waits, for people.
fn deferred_reason(r: &ForgetReport) -> Option<String> {
    // An addition's records are in the store, a removal's are gone.
    let (done, counts) = match r.added_points > 0 {
        true => ("added to", "does not count the records"),
        false => ("erased from", "still counts the records"),
    };
    match &r.outcome {
        ForgetOutcome::Deferred {
            pending_clients,
            needed,
            deadline,
        } => Some(format!(
            "the records are {done} the store; the privacy policy runs a model update only \
             when at least {needed} clients update (a round changing fewer tells the server \
             their change; docs/threat-model.md U3), and the pending requests name {} ({}). The \
             model {counts} until another client's request joins them, their deadline ({} \
             UTC), or `mufc forget --model STORE --flush`",
            if pending_clients.len() == 1 {
                "1 client".to_string()
            } else {
                format!("{} clients", pending_clients.len())
            },
            list(pending_clients),
            utc(*deadline)
        )),
        _ => None,
    }
}

fn names(v: &[mufc_store::ClientName]) -> Vec<String> {
    v.iter().map(ToString::to_string).collect()
}

fn describe(r: &ForgetReport) -> String {
    let mut t = TextTable::new(&["", "value"]);
    let outcome = match (&r.outcome, r.overdue) {
        (ForgetOutcome::Deferred { .. }, _) if r.added_points > 0 => "added; model update deferred",
        (ForgetOutcome::Deferred { .. }, _) => "erased; model update deferred",
        (ForgetOutcome::Withdrawn(_), _) if r.added_points > 0 => {
            "added; the store serves no model (too few clients left)"
        }
        (ForgetOutcome::Withdrawn(_), _) => "erased; model withdrawn (too few clients left)",
        (_, true) => "model update applied (deadline passed)",
        _ => "applied",
    };
    t.row(["outcome", outcome]);
    if r.added_points > 0 || !r.skipped.is_empty() {
        t.row(["records added".to_string(), r.added_points.to_string()]);
        t.row([
            "records skipped (the store forgot them)".to_string(),
            r.skipped.len().to_string(),
        ]);
    } else {
        t.row(["records named".to_string(), r.records.to_string()]);
        t.row([
            "points erased from the store".to_string(),
            r.erased_points.to_string(),
        ]);
    }
    t.row(["clients (by name)".to_string(), list(&r.clients)]);
    t.row([
        "requests applied to the model".to_string(),
        list(&r.applied_requests),
    ]);
    t.row([
        "points removed from the model".to_string(),
        r.removed_points.to_string(),
    ]);
    t.row(["clients removed".to_string(), list(&r.removed_clients)]);
    t.row(["clients reseeded".to_string(), list(&r.reseeded)]);
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
    if let Some(why) = deferred_reason(r) {
        s.push_str(&format!("deferred: {why}\n"));
    }
    s
}

/// One request's report as `mufc forget --json` writes it (the Python
/// estimator returns the same object); `needed` is the store's
/// `--min-updating-clients`.
pub fn report_json(r: &ForgetReport, needed: usize) -> Value {
    let (outcome, deadline) = match &r.outcome {
        ForgetOutcome::Deferred { deadline, .. } => ("deferred", Some(*deadline)),
        ForgetOutcome::Withdrawn(_) => ("withdrawn", None),
        _ => ("applied", None),
    };
    json!({
        "request": r.request,
        "outcome": outcome,
        "deferred_reason": deferred_reason(r),
        "deadline": deadline,
        "overdue": r.overdue,
        "min_updating_clients": needed,
        "records": r.records,
        "erased_points": r.erased_points,
        "added_points": r.added_points,
        "skipped": r.skipped.len(),
        "clients": names(&r.clients),
        "applied_requests": r.applied_requests,
        "removed_points": r.removed_points,
        "removed_clients": names(&r.removed_clients),
        "reseeded_clients": names(&r.reseeded),
        "centroid_shift": r.centroid_shift,
        "version_before": r.version_before,
        "version_after": r.version_after,
        "time": r.time,
        "apply_seconds": secs(r.apply_time),
        "commit_seconds": secs(r.commit_time),
        "privacy_warning": r.privacy_warning,
        "withdrawn": match &r.outcome {
            ForgetOutcome::Withdrawn(w) => Some(w.to_string()),
            _ => None,
        },
    })
}
