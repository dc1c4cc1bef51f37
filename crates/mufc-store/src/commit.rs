//! The transaction of one request: what it writes, in order (the journal
//! row, the erasure, the model, the audit), with the fault points a
//! crash test stops it at.

use std::collections::{BTreeMap, BTreeSet};

use rusqlite::{Connection, params};

use crate::audit::{write_audit, write_journal};
use crate::error::StoreError;
use crate::fault::{FaultPoint, abort_if_asked};
use crate::handle::{sql_client, sql_point, write_client, write_server};
use crate::record::RecordId;
use crate::reports::{AuditEntry, AuditOutcome};
use crate::state::State;
use crate::tombstone::{applied, bury};
use mufc::{ClientId, PendingAddition, PendingRequest, RemovalReport};
use seeding::PointId;

/// What one request writes, worked out before the transaction's writes.
pub(crate) struct Plan<'a> {
    pub(crate) request: u64,
    pub(crate) time: u64,
    pub(crate) kind: &'static str,
    /// What the journal says the request named (never record ids: a
    /// count, or a client's name).
    pub(crate) named: String,
    /// The clients the request names (none for a flush), in id order.
    pub(crate) request_clients: &'a [ClientId],
    /// Those it removes whole.
    pub(crate) whole: &'a [ClientId],
    /// The records it erases, with their clients.
    pub(crate) erased: &'a [(RecordId, ClientId)],
    /// The records it adds, with their clients and points.
    pub(crate) added: &'a [(RecordId, ClientId, PointId)],
    /// The clients whose model update the round ran (none when deferred).
    pub(crate) applied: &'a BTreeSet<ClientId>,
    /// The pending removals before this one.
    pub(crate) pending_before: &'a [PendingRequest],
    /// The pending additions before this one.
    pub(crate) additions_before: &'a [PendingAddition],
    pub(crate) removal: &'a RemovalReport,
    pub(crate) version_before: u64,
    pub(crate) version_after: u64,
    /// The audit's warning for the round's rows.
    pub(crate) warning: Option<String>,
    /// The digest of the records left ([`crate::digest::RecordsDigest`]).
    pub(crate) records_digest: crate::digest::RecordsDigest,
}

/// Fails at `at` if a test asked for it (see [`FaultPoint`]).
fn fault_at(fault: Option<FaultPoint>, at: FaultPoint) -> Result<(), StoreError> {
    abort_if_asked(at);
    if fault == Some(at) {
        Err(StoreError::InjectedFault(at))
    } else {
        Ok(())
    }
}

/// Writes `plan` (the state after it is `state`) in the caller's
/// transaction; returns its journal entry.
pub(crate) fn write_plan(
    tx: &Connection,
    state: &State,
    plan: &Plan<'_>,
    fault: Option<FaultPoint>,
) -> Result<i64, StoreError> {
    let entry = write_journal(tx, plan.request, plan.time, plan.kind, &plan.named)?;
    fault_at(fault, FaultPoint::AfterJournal)?;

    // The erasure, at once whatever the model update: the named clients'
    // new rows (or none), their records out, a tombstone each.
    let db = StoreError::db;
    for &c in plan.request_clients {
        match state.fed.client(c) {
            Some(client) => write_client(tx, client)?,
            None => {
                tx.execute("DELETE FROM clients WHERE id = ?1", params![sql_client(c)])
                    .map_err(db("deleting a client's state"))?;
            }
        }
    }
    let applied_now = (!plan.applied.is_empty()).then_some((plan.version_after, plan.time));
    let mut erased_of: BTreeMap<ClientId, usize> = BTreeMap::new();
    {
        let mut stmt = tx
            .prepare_cached("DELETE FROM records WHERE record = ?1")
            .map_err(db("deleting records"))?;
        for (r, c) in plan.erased {
            stmt.execute(params![r.to_sql()])
                .map_err(db("deleting records"))?;
            bury(
                tx,
                &state.secret.tag(r),
                plan.request,
                c.0,
                plan.time,
                applied_now,
            )?;
            let n = erased_of.entry(*c).or_insert(0);
            *n = n.saturating_add(1);
        }
    }
    let mut added_of: BTreeMap<ClientId, usize> = BTreeMap::new();
    {
        let mut stmt = tx
            .prepare_cached("INSERT INTO records (record, client, point) VALUES (?1, ?2, ?3)")
            .map_err(db("adding records"))?;
        for (r, c, p) in plan.added {
            stmt.execute(params![r.to_sql(), sql_client(*c), sql_point(*p)?])
                .map_err(db("adding records"))?;
            let n = added_of.entry(*c).or_insert(0);
            *n = n.saturating_add(1);
        }
    }
    fault_at(fault, FaultPoint::AfterClients)?;

    // The model: the earlier erasures the round applies, the server row,
    // the audit.
    let mut earlier: BTreeMap<ClientId, (usize, u64)> = BTreeMap::new();
    for &c in plan.applied {
        if let Some(found) = applied(tx, c.0, plan.version_after, plan.time)? {
            earlier.insert(c, found);
        }
    }
    write_server(tx, state, plan.version_after, plan.records_digest)?;
    for a in audit_rows(state, plan, (&erased_of, &added_of), &earlier) {
        write_audit(tx, &a)?;
    }
    fault_at(fault, FaultPoint::BeforeCommit)?;
    Ok(entry)
}

/// The audit rows of a request: one per client it names when its update
/// waits; one per client whose update the round ran when applied.
fn audit_rows(
    state: &State,
    plan: &Plan<'_>,
    (erased_of, added_of): (&BTreeMap<ClientId, usize>, &BTreeMap<ClientId, usize>),
    earlier: &BTreeMap<ClientId, (usize, u64)>,
) -> Vec<AuditEntry> {
    let row = |c: ClientId| AuditEntry {
        request: plan.request,
        time: plan.time,
        client: state.name(c),
        points: erased_of.get(&c).copied().unwrap_or(0),
        whole_client: plan.whole.contains(&c),
        reseeded: false,
        outcome: AuditOutcome::Deferred,
        applied: Vec::new(),
        erased_at: plan.time,
        removed_at: None,
        version_before: plan.version_before,
        version_after: plan.version_after,
        warning: None,
        added: added_of.get(&c).copied().unwrap_or(0),
    };
    if plan.applied.is_empty() {
        return plan.request_clients.iter().map(|&c| row(c)).collect();
    }
    let named: BTreeSet<ClientId> = plan.request_clients.iter().copied().collect();
    plan.applied
        .iter()
        .map(|&c| {
            let removals = (plan.pending_before.iter())
                .filter(|p| p.request.named().any(|x| x == c))
                .map(|p| p.number);
            let additions = (plan.additions_before.iter())
                .filter(|a| a.named().any(|x| x == c))
                .map(|a| a.number);
            let mut requests: Vec<u64> = removals.chain(additions).collect();
            requests.sort_unstable();
            let added_before: usize = (plan.additions_before.iter())
                .flat_map(|a| a.points.iter())
                .filter(|(x, _)| *x == c)
                .map(|(_, ids)| ids.len())
                .sum();
            let mut erased_at = earlier.get(&c).map(|e| e.1);
            if named.contains(&c) {
                requests.push(plan.request);
                erased_at = Some(erased_at.map_or(plan.time, |e| e.min(plan.time)));
            }
            requests.dedup();
            let now = erased_of.get(&c).copied().unwrap_or(0);
            AuditEntry {
                points: now.saturating_add(earlier.get(&c).map_or(0, |e| e.0)),
                whole_client: plan.removal.removed_clients.contains(&c),
                reseeded: plan.removal.reseeded.contains(&c),
                outcome: if plan.removal.outcome.is_withdrawn() {
                    AuditOutcome::Withdrawn
                } else {
                    AuditOutcome::Applied
                },
                applied: requests,
                erased_at: erased_at.unwrap_or(plan.time),
                removed_at: Some(plan.time),
                warning: plan.warning.clone(),
                added: added_before.saturating_add(added_of.get(&c).copied().unwrap_or(0)),
                ..row(c)
            }
        })
        .collect()
}
