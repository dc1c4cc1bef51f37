//! The audit log and the journal: writing their rows (in a request's
//! transaction) and reading the audit back ([`Store::history`]).

use rusqlite::{Connection, Transaction, TransactionBehavior, params};

use crate::error::StoreError;
use crate::handle::Store;
use crate::load::mark;
use crate::record::ClientName;
use crate::reports::{AuditEntry, AuditOutcome};

impl Store {
    /// The audit log: one entry per request (or round) and client, oldest
    /// first. It is read in one read transaction and must be of the state
    /// this store holds in memory: if another process served a request
    /// since, [`StoreError::Stale`] (open the store again, or serve a
    /// request, which reloads).
    ///
    /// # Errors
    ///
    /// [`StoreError::Stale`], [`StoreError::Database`], and
    /// [`StoreError::Corrupt`] for a row that does not read back.
    ///
    /// # Example
    ///
    /// See [`ForgetReport`](crate::ForgetReport) and the module docs.
    pub fn history(&self) -> Result<Vec<AuditEntry>, StoreError> {
        let db = |e| StoreError::db("reading the audit log")(e);
        let tx = self
            .conn
            .unchecked_transaction()
            .map_err(StoreError::db("starting a read transaction"))?;
        if mark(&tx)? != self.state.mark() {
            return Err(StoreError::Stale);
        }
        let mut stmt = tx
            .prepare(
                "SELECT request, time, client, points, whole_client, reseeded, outcome, \
                 applied, erased, removed, version_before, version_after, warning, added \
                 FROM audit ORDER BY entry",
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
            let client: String = r.get(2).map_err(db)?;
            let removed: Option<i64> = r.get(9).map_err(db)?;
            out.push(AuditEntry {
                request: int(0)?,
                time: int(1)?,
                client: ClientName::new(&client)
                    .map_err(|e| StoreError::corrupt(format!("audit: {e}")))?,
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
                erased_at: int(8)?,
                removed_at: removed
                    .map(|v| {
                        u64::try_from(v)
                            .map_err(|_| StoreError::corrupt(format!("audit: negative {v}")))
                    })
                    .transpose()?,
                version_before: int(10)?,
                version_after: int(11)?,
                warning: r.get(12).map_err(db)?,
                added: usize::try_from(int(13)?)
                    .map_err(|_| StoreError::corrupt("audit: added out of range"))?,
            });
        }
        drop(rows);
        drop(stmt);
        tx.finish()
            .map_err(StoreError::db("ending the read transaction"))?;
        Ok(out)
    }
}

/// A `u64` as SQLite's integer (saturating: ids and times stay far below).
pub(crate) fn sql(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

pub(crate) fn joined<T: ToString>(v: &[T]) -> String {
    v.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The journal entry of a request (or a round), in the caller's
/// transaction; returns its row.
pub(crate) fn write_journal(
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

/// When request `request` was journaled, if it was (an addition's
/// deadline runs from it).
pub(crate) fn journaled_at(conn: &Connection, request: u64) -> Result<Option<u64>, StoreError> {
    let t: Option<i64> = conn
        .prepare_cached("SELECT min(time) FROM journal WHERE request = ?1")
        .and_then(|mut s| s.query_row(params![sql(request)], |r| r.get(0)))
        .map_err(StoreError::db("reading the journal"))?;
    Ok(t.and_then(|t| u64::try_from(t).ok()))
}

/// When the oldest change whose model update waits happened: an erasure
/// (its tombstone's time) or an addition (its journal entry's).
pub(crate) fn oldest_waiting(
    conn: &Connection,
    fed: &mufc::Federation,
) -> Result<Option<u64>, StoreError> {
    let mut oldest = crate::tombstone::oldest_waiting(conn)?;
    for a in fed.pending_additions() {
        if let Some(t) = journaled_at(conn, a.number)? {
            oldest = Some(oldest.map_or(t, |o| o.min(t)));
        }
    }
    Ok(oldest)
}

/// One audit row, in the caller's transaction.
pub(crate) fn write_audit(conn: &Connection, a: &AuditEntry) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO audit (request, time, client, points, whole_client, reseeded, \
         outcome, applied, erased, removed, version_before, version_after, warning, added) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    )
    .and_then(|mut s| {
        s.execute(params![
            sql(a.request),
            sql(a.time),
            a.client.as_str(),
            i64::try_from(a.points).unwrap_or(i64::MAX),
            a.whole_client,
            a.reseeded,
            a.outcome.name(),
            joined(&a.applied),
            sql(a.erased_at),
            a.removed_at.map(sql),
            sql(a.version_before),
            sql(a.version_after),
            a.warning,
            i64::try_from(a.added).unwrap_or(i64::MAX),
        ])
    })
    .map_err(StoreError::db("writing the audit log"))?;
    Ok(())
}

/// Starts the write transaction of a round across processes: takes
/// SQLite's write lock, then checks that no other connection wrote since
/// this store's state was read (its [`mark`] `seen`): a round computed
/// from a stale state must not overwrite another's work.
pub(crate) fn begin(conn: &Connection, seen: (i64, i64)) -> Result<Transaction<'_>, StoreError> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        .map_err(StoreError::db("starting the transaction"))?;
    if mark(&tx)? != seen {
        return Err(StoreError::Stale);
    }
    Ok(tx)
}
