//! The audit log: the rows a request adds ([`audit_rows`]) and reading
//! them back ([`Store::history`]).

use std::collections::BTreeMap;

use super::error::StoreError;
use super::handle::Store;
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
