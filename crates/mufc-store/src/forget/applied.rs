//! A request applied in memory ([`Applied`]), then written and committed
//! in its transaction, and its outcome.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rusqlite::{Connection, Transaction};

use super::asked::Asked;
use super::job::empty;
use crate::commit::{Plan, write_plan};
use crate::error::StoreError;
use crate::reports::{ForgetOutcome, ForgetReport};
use crate::state::State;
use crate::types::Centroid;
use mufc::{
    ClientId, MufcError, PendingAddition, PendingRequest, RemovalOutcome, RemovalReport,
    RemovalRequest,
};

/// A request applied in memory, with what it changed.
pub(super) struct Applied {
    /// The centroids before.
    before: Vec<Centroid>,
    pending_before: Vec<PendingRequest>,
    additions_before: Vec<PendingAddition>,
    version_before: u64,
    version_after: u64,
    removal: RemovalReport,
    apply_time: Duration,
    /// Whether the model update ran (not deferred).
    applied: bool,
    /// The clients the request names, in id order.
    named_clients: Vec<ClientId>,
    /// The clients whose model update the round ran.
    applied_clients: BTreeSet<ClientId>,
    privacy_warning: Option<String>,
}

impl Applied {
    /// The library serves the request (or the pending updates) on
    /// `state`'s federation.
    pub(super) fn on(state: &mut State, asked: &Asked) -> Result<Self, StoreError> {
        // In memory: the library serves the request.
        let before = state.centroids();
        let pending_before = state.fed.pending().to_vec();
        let additions_before = state.fed.pending_additions().to_vec();
        let waiting_before: BTreeSet<ClientId> = state.fed.pending_clients().into_iter().collect();
        let version_before = state.model_version;
        let start = Instant::now();
        let removal = match (&asked.request, &asked.addition, &asked.overdue_clients) {
            (Some(r), _, _) => state.fed.remove(r).map_err(|e| named_error(state, e))?,
            (None, Some(a), _) => state.fed.add(a).map_err(|e| named_error(state, e))?,
            (None, None, Some(clients)) => state.fed.flush_clients(clients)?.ok_or_else(empty)?,
            (None, None, None) => state.fed.flush()?.ok_or_else(empty)?,
        };
        let apply_time = start.elapsed();
        let applied = !removal.outcome.is_deferred();
        // A request after a withdrawal changes no model: no new version.
        let model_changed = applied
            && !(removal.outcome.is_withdrawn()
                && matches!(removal.server, mufc::ServerUpdate::Unchanged));
        let version_after = if model_changed {
            version_before.saturating_add(1)
        } else {
            version_before
        };
        let named_clients: Vec<ClientId> = match (&asked.request, &asked.addition) {
            (Some(r), _) => request_clients(r),
            (None, Some(a)) => {
                let set: BTreeSet<ClientId> = a.named().collect();
                set.into_iter().collect()
            }
            (None, None) => Vec::new(),
        };
        let waiting_after: BTreeSet<ClientId> = state.fed.pending_clients().into_iter().collect();
        let applied_clients: BTreeSet<ClientId> = if applied {
            waiting_before
                .iter()
                .chain(&named_clients)
                .copied()
                .filter(|c| !waiting_after.contains(c))
                .collect()
        } else {
            BTreeSet::new()
        };
        let privacy_warning = named_warning(state, &removal);
        Ok(Self {
            before,
            pending_before,
            additions_before,
            version_before,
            version_after,
            removal,
            apply_time,
            applied,
            named_clients,
            applied_clients,
            privacy_warning,
        })
    }

    /// The report of the committed request.
    pub(super) fn report(
        self,
        state: &State,
        asked: &Asked,
        outcome: ForgetOutcome,
        after: &[Centroid],
        commit_time: Duration,
        time: u64,
    ) -> ForgetReport {
        let removal = self.removal;
        ForgetReport {
            request: removal.request,
            outcome,
            records: asked.records,
            added_points: asked.added.len(),
            skipped: asked.skipped.clone(),
            erased_points: asked.erased.len(),
            clients: state.names_of(&self.named_clients),
            applied_requests: removal.requests.clone(),
            removed_points: removal.removed_points,
            removed_clients: state.names_of(&removal.removed_clients),
            reseeded: state.names_of(&removal.reseeded),
            centroid_shift: if self.applied {
                shift(&self.before, after)
            } else {
                Some(0.0)
            },
            version_before: self.version_before,
            version_after: self.version_after,
            time,
            privacy_warning: self.privacy_warning,
            overdue: asked.overdue_clients.is_some(),
            apply_time: self.apply_time,
            commit_time,
            removal,
        }
    }
}

/// Writes the request in `tx` and commits it, then brings `state` up to
/// date with the file; returns the time the writes took.
pub(super) fn commit(
    tx: Transaction<'_>,
    state: &mut State,
    fault: Option<crate::fault::FaultPoint>,
    asked: &Asked,
    done: &Applied,
    time: u64,
) -> Result<Duration, StoreError> {
    // The new clients' names go into the server row: a failed write
    // reloads the state (`Store::serve`), and they are gone again.
    for (c, name) in &asked.joined {
        state.names.insert(*c, name.clone());
        state.by_name.insert(name.clone(), *c);
    }
    let plan = plan(state, asked, done, time);
    let records_digest = plan.records_digest;
    let start = Instant::now();
    let entry = write_plan(&tx, state, &plan, fault)?;
    tx.commit().map_err(StoreError::db("committing"))?;
    let commit_time = start.elapsed();
    state.last_entry = entry;
    state.model_version = done.version_after;
    state.records_digest = records_digest;
    for (r, _) in &asked.erased {
        state.records.remove(r);
    }
    for (r, c, p) in &asked.added {
        state.records.insert(r.clone(), (*c, *p));
    }
    Ok(commit_time)
}

/// What the transaction writes.
fn plan<'a>(state: &State, asked: &'a Asked, done: &'a Applied, time: u64) -> Plan<'a> {
    let removal = &done.removal;
    Plan {
        request: removal.request,
        time,
        kind: asked.kind,
        named: asked.named.clone(),
        request_clients: &done.named_clients,
        whole: (asked.request.as_ref()).map_or(&[][..], RemovalRequest::clients_removed),
        erased: &asked.erased,
        added: &asked.added,
        applied: &done.applied_clients,
        pending_before: &done.pending_before,
        additions_before: &done.additions_before,
        removal,
        version_before: done.version_before,
        version_after: done.version_after,
        records_digest: {
            let mut d = state.records_digest;
            for (r, _) in &asked.erased {
                if let Some(&(c, p)) = state.records.get(r) {
                    d.toggle(r, c, p);
                }
            }
            for (r, c, p) in &asked.added {
                d.toggle(r, *c, *p);
            }
            d
        },
        warning: match &removal.outcome {
            RemovalOutcome::Withdrawn(w) => Some(w.to_string()),
            _ => audit_warning(
                done.privacy_warning.as_deref(),
                asked.overdue_clients.is_some(),
                state.max_defer,
            ),
        },
    }
}

/// The committed request's outcome: the model withdrawn, the update
/// applied, or deferred until a deadline.
pub(super) fn outcome(
    conn: &Connection,
    state: &State,
    done: &Applied,
    time: u64,
) -> Result<ForgetOutcome, StoreError> {
    Ok(
        if let RemovalOutcome::Withdrawn(w) = &done.removal.outcome {
            ForgetOutcome::Withdrawn(w.clone())
        } else if done.applied {
            ForgetOutcome::Applied
        } else {
            let oldest = crate::audit::oldest_waiting(conn, &state.fed)?.unwrap_or(time);
            ForgetOutcome::Deferred {
                pending_clients: state.names_of(&state.fed.pending_clients()),
                needed: state.fed.config().min_updating_clients(),
                deadline: oldest.saturating_add(state.max_defer),
            }
        },
    )
}

/// The clients a request names, in id order.
fn request_clients(r: &RemovalRequest) -> Vec<ClientId> {
    let mut v: Vec<ClientId> = r
        .clients_removed()
        .iter()
        .copied()
        .chain(r.point_entries().iter().map(|(c, _)| *c))
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The library's privacy warning of a round, with the clients named as
/// the store names them.
fn named_warning(state: &State, removal: &RemovalReport) -> Option<String> {
    removal.privacy_warning.as_ref()?;
    let needed = state.fed.config().min_updating_clients();
    let parts: Vec<Vec<ClientId>> = match state.fed.layout() {
        Some(layout) => {
            let mut by: BTreeMap<usize, Vec<ClientId>> = BTreeMap::new();
            for c in &removal.updated_clients {
                if let Some(g) = layout.group_of(*c) {
                    by.entry(g).or_default().push(*c);
                }
            }
            by.into_values().collect()
        }
        None => vec![removal.updated_clients.clone()],
    };
    parts
        .iter()
        .find_map(|p| mufc::privacy_warning(&state.names_of(p), needed))
}

/// The audit's warning of a round: why it ran despite the policy.
fn audit_warning(privacy: Option<&str>, overdue: bool, max_defer: u64) -> Option<String> {
    match (privacy, overdue) {
        (None, false) => None,
        (Some(w), false) => Some(format!("applied on request (flush): {w}")),
        (w, true) => Some(format!(
            "applied past the deferral deadline ({} after erasure){}",
            crate::words::duration_words(max_defer),
            w.map_or(String::new(), |w| format!(": {w}"))
        )),
    }
}

/// A library error with the store's names for clients.
fn named_error(state: &State, e: MufcError) -> StoreError {
    match e {
        MufcError::UnknownClient(c) => StoreError::UnknownClient {
            name: state.name(c).to_string(),
            known: String::new(),
        },
        e => StoreError::Mufc(e),
    }
}

/// How far the centroids moved: the Hausdorff distance between the two
/// sets (the largest distance from a centroid of either to the nearest
/// of the other), so that it does not depend on the order the server's
/// K-means lists them in; `None` when either set is empty.
pub(super) fn shift(before: &[Centroid], after: &[Centroid]) -> Option<f64> {
    let dist = |a: &Centroid, b: &Centroid| {
        a.coords
            .iter()
            .zip(&b.coords)
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt()
    };
    let one_way = |from: &[Centroid], to: &[Centroid]| {
        from.iter()
            .map(|a| to.iter().map(|b| dist(a, b)).fold(f64::INFINITY, f64::min))
            .fold(0.0, f64::max)
    };
    if before.is_empty() || after.is_empty() {
        return None;
    }
    Some(one_way(before, after).max(one_way(after, before)))
}
