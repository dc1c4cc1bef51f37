//! The audit log: the rows a request adds ([`audit_rows`]) and reading
//! them back ([`Store::history`]).

use std::collections::BTreeMap;

use rusqlite::{Connection, Transaction, TransactionBehavior, params};

use super::error::StoreError;
use super::handle::Store;
use super::load::last_entry;
use super::types::{AuditEntry, AuditOutcome};
use crate::{ClientId, RemovalReport, RemovalRequest};

impl Store {
    /// The audit log: one entry per request and client, oldest first.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`], and [`StoreError::Corrupt`] for a row
    /// that does not read back.
    ///
    /// # Example
    ///
    /// See [`ForgetReport`](super::ForgetReport) and the module docs.
    pub fn history(&self) -> Result<Vec<AuditEntry>, StoreError> {
        let db = |e| StoreError::db("reading the audit log")(e);
        let mut stmt = self
            .conn
            .prepare(
                "SELECT request, time, client, points, whole_client, reseeded, outcome, \
                 applied, version_before, version_after FROM audit ORDER BY entry",
            )
            .map_err(db)?;
        let mut rows = stmt.query([]).map_err(db)?;
        let mut out = Vec::new();
        while let Some(r) = rows.next().map_err(db)? {
            let int = |i: usize| -> Result<u64, StoreError> {
                let v: i64 = r.get(i).map_err(db)?;
                u64::try_from(v).map_err(|_| StoreError::corrupt(format!("audit: negative {v}")))
            };
            let outcome: String = r.get(6).map_err(db)?;
            let applied: String = r.get(7).map_err(db)?;
            out.push(AuditEntry {
                request: int(0)?,
                time: int(1)?,
                client: ClientId(int(2)?),
                points: usize::try_from(int(3)?)
                    .map_err(|_| StoreError::corrupt("audit: points out of range"))?,
                whole_client: r.get(4).map_err(db)?,
                reseeded: r.get(5).map_err(db)?,
                outcome: AuditOutcome::from_name(&outcome)
                    .ok_or_else(|| StoreError::corrupt(format!("audit: outcome {outcome:?}")))?,
                applied: applied
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(str::parse)
                    .collect::<Result<_, _>>()
                    .map_err(|_| StoreError::corrupt(format!("audit: applied {applied:?}")))?,
                version_before: int(8)?,
                version_after: int(9)?,
            });
        }
        Ok(out)
    }
}

/// The audit rows of a request: per client it names (deferred) or the
/// round changes (applied).
pub(super) fn audit_rows(
    removal: &RemovalReport,
    request: Option<&RemovalRequest>,
    sizes: &BTreeMap<ClientId, (usize, bool)>,
    touch: &BTreeMap<ClientId, Vec<u64>>,
    time: u64,
    version_before: u64,
    version_after: u64,
) -> Vec<AuditEntry> {
    let entry = |client: ClientId, points: usize, whole_client: bool| AuditEntry {
        request: removal.request,
        time,
        client,
        points,
        whole_client,
        reseeded: false,
        outcome: AuditOutcome::Deferred,
        applied: Vec::new(),
        version_before,
        version_after,
    };
    if removal.outcome.is_deferred() {
        let Some(r) = request else {
            return Vec::new();
        };
        let mut rows: Vec<AuditEntry> = r
            .point_entries()
            .iter()
            .map(|(c, ids)| entry(*c, ids.len(), false))
            .chain(r.clients_removed().iter().map(|c| {
                let (n, _) = sizes.get(c).copied().unwrap_or((0, true));
                entry(*c, n, true)
            }))
            .collect();
        rows.sort_unstable_by_key(|a| a.client);
        return rows;
    }
    sizes
        .iter()
        .map(|(c, &(points, whole))| AuditEntry {
            reseeded: removal.reseeded.contains(c),
            outcome: AuditOutcome::Applied,
            applied: touch.get(c).cloned().unwrap_or_default(),
            ..entry(*c, points, whole)
        })
        .collect()
}

/// A `u64` as SQLite's integer (saturating: ids and times stay far below).
pub(super) fn sql(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(super) fn joined<T: ToString>(v: &[T]) -> String {
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The journal entry of a request (or a round), in the caller's
/// transaction; returns its row.
pub(super) fn write_journal(
    conn: &Connection,
    request: u64,
    time: u64,
    kind: &str,
    named: &str,
) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO journal (request, time, kind, named) VALUES (?1, ?2, ?3, ?4)",
        params![sql(request), sql(time), kind, named],
    )
    .map_err(StoreError::db("writing the journal"))?;
    Ok(conn.last_insert_rowid())
}

/// One audit row, in the caller's transaction.
pub(super) fn write_audit(conn: &Connection, a: &AuditEntry) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO audit (request, time, client, points, whole_client, reseeded, \
         outcome, applied, version_before, version_after) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        params![
            sql(a.request),
            sql(a.time),
            sql(a.client.0),
            i64::try_from(a.points).unwrap_or(i64::MAX),
            a.whole_client,
            a.reseeded,
            a.outcome.name(),
            joined(&a.applied),
            sql(a.version_before),
            sql(a.version_after),
        ],
    )
    .map_err(StoreError::db("writing the audit log"))?;
    Ok(())
}

/// Starts the write transaction of a request (or a round): takes SQLite's
/// write lock, then checks that no other connection wrote since this
/// store's state was read (its last journal entry `seen`): a request
/// computed from a stale state must not overwrite another's work.
pub(super) fn begin(conn: &mut Connection, seen: i64) -> Result<Transaction<'_>, StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(StoreError::db("starting the transaction"))?;
    if last_entry(&tx)? != seen {
        return Err(StoreError::Stale);
    }
    Ok(tx)
}
