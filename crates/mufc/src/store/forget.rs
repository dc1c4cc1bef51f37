//! Serving requests ([`Store::forget`], [`Store::forget_client`],
//! [`Store::flush`]): the library applies the request in memory, then one
//! transaction writes the journal row, the changed clients' rows and
//! records, the server row and the audit rows; the request is
//! acknowledged only once that commits.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use rusqlite::{Connection, params};
use seeding::PointId;

use super::audit::{audit_rows, begin, joined, sql, write_audit, write_journal};
use super::error::StoreError;
use super::fault::{FaultPoint, abort_if_asked};
use super::handle::{Store, unix_now, write_client, write_server};
use super::record::RecordId;
use super::types::{AuditEntry, Centroid, ForgetReport};
use crate::federation::Loss;
use crate::{ClientId, MufcError, RemovalRequest};

/// What one request writes, worked out before the transaction.
struct Plan {
    request: u64,
    time: u64,
    kind: &'static str,
    named: String,
    /// The clients the round changes (applied) and what they lose.
    merged: BTreeMap<ClientId, Loss>,
    audit: Vec<AuditEntry>,
    version_after: u64,
}

/// How far the centroids moved: the Hausdorff distance between the two
/// sets (the largest distance from a centroid of either to the nearest
/// of the other), so that it does not depend on the order the server's
/// K-means lists them in; `None` when either set is empty.
fn shift(before: &[Centroid], after: &[Centroid]) -> Option<f64> {
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

impl Store {
    /// Forgets the records `ids` in one removal request (Algorithm 4,
    /// exactly: the model then equals one trained without them), committed
    /// in one transaction before this returns. When the privacy policy
    /// defers it (it names fewer clients than
    /// [`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients),
    /// with the requests already pending), it is committed as pending and
    /// the report says so: the points stay until a later request or
    /// [`Self::flush`] applies it.
    ///
    /// # Errors
    ///
    /// [`StoreError::UnknownRecords`] naming every id the store does not
    /// hold, [`StoreError::DuplicateRecord`], and [`StoreError::Mufc`] for
    /// a request the federation refuses (empty, a record already pending,
    /// one that would leave too few clients, ...): nothing changes. On a
    /// database error the transaction is rolled back and the store
    /// reloaded from the file.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    /// use mufc::store::{ClientRecords, IfExists, RecordId, Store, StoreError};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let dir = tempfile::tempdir()?;
    /// let config = FederationConfig::new(2).gamma(0.1).validate()?;
    /// let (mut store, _) = Store::fit(dir.path().join("m.mufc"), ClientRecords::numbered(clients), &config, IfExists::Refuse)?;
    /// let err = store.forget(&[RecordId(5), RecordId(500), RecordId(90)]).unwrap_err();
    /// assert!(matches!(&err, StoreError::UnknownRecords { ids } if ids == &[RecordId(90), RecordId(500)]));
    /// assert_eq!(store.num_points(), 90);
    /// let report = store.forget(&[RecordId(5), RecordId(65)])?;
    /// assert_eq!(report.removed_points, 2);
    /// assert_eq!(store.record(RecordId(5)), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn forget(&mut self, ids: &[RecordId]) -> Result<ForgetReport, StoreError> {
        self.usable()?;
        let mut seen = HashSet::new();
        let mut unknown = Vec::new();
        let mut per: BTreeMap<ClientId, Vec<PointId>> = BTreeMap::new();
        for &id in ids {
            if !seen.insert(id) {
                return Err(StoreError::DuplicateRecord(id));
            }
            match self.records.get(&id) {
                Some(&(c, p)) => per.entry(c).or_default().push(p),
                None => unknown.push(id),
            }
        }
        if !unknown.is_empty() {
            unknown.sort_unstable();
            return Err(StoreError::UnknownRecords { ids: unknown });
        }
        let request = per
            .into_iter()
            .fold(RemovalRequest::new(), |r, (c, p)| r.with_points(c, p));
        self.serve(Some(&request), "records", joined(ids), ids.len())
    }

    /// Removes client `client` whole (its points and its row), as
    /// [`Self::forget`] does records.
    ///
    /// # Errors
    ///
    /// As [`Self::forget`]; an unknown client is
    /// [`MufcError::UnknownClient`] (in [`StoreError::Mufc`]).
    pub fn forget_client(&mut self, client: ClientId) -> Result<ForgetReport, StoreError> {
        self.usable()?;
        let request = RemovalRequest::clients(vec![client]);
        self.serve(Some(&request), "client", client.to_string(), 0)
    }

    /// Applies the pending requests now, however few clients they name
    /// (the report's [`RemovalReport::privacy_warning`](crate::RemovalReport::privacy_warning) says what the
    /// server learns); `None` when nothing is pending.
    ///
    /// # Errors
    ///
    /// As [`Self::forget`].
    pub fn flush(&mut self) -> Result<Option<ForgetReport>, StoreError> {
        self.usable()?;
        if self.fed.pending().is_empty() {
            return Ok(None);
        }
        self.serve(None, "flush", String::new(), 0).map(Some)
    }

    fn usable(&self) -> Result<(), StoreError> {
        if self.poisoned {
            Err(StoreError::Poisoned)
        } else {
            Ok(())
        }
    }

    /// Serves `request` (or the pending requests, for `None`).
    fn serve(
        &mut self,
        request: Option<&RemovalRequest>,
        kind: &'static str,
        named: String,
        records: usize,
    ) -> Result<ForgetReport, StoreError> {
        let time = unix_now();
        // What each client would lose if the round runs, and which
        // requests name it (checked here as the library checks).
        let merged = self.fed.merged(request)?;
        let sizes: BTreeMap<ClientId, (usize, bool)> = merged
            .iter()
            .map(|(c, loss)| {
                let len = self.fed.client(*c).map_or(0, |x| x.data().len());
                match loss {
                    Loss::Whole => (*c, (len, true)),
                    Loss::Points(ids) => (*c, (ids.len(), ids.len() == len)),
                }
            })
            .collect();
        let mut touch: BTreeMap<ClientId, Vec<u64>> = BTreeMap::new();
        for p in self.fed.pending() {
            for c in request_clients(&p.request) {
                touch.entry(c).or_default().push(p.number);
            }
        }
        let clients = match request {
            Some(r) => request_clients(r),
            None => self.fed.pending_clients(),
        };
        let before = self.centroids();
        let version_before = self.model_version;

        let start = Instant::now();
        let removal = match request {
            Some(r) => self.fed.remove(r)?,
            None => self.fed.flush()?.ok_or(MufcError::EmptyRequest)?,
        };
        let apply_time = start.elapsed();
        let applied = !removal.outcome.is_deferred();
        if let Some(r) = request {
            for c in request_clients(r) {
                touch.entry(c).or_default().push(removal.request);
            }
        }
        let version_after = if applied {
            version_before.saturating_add(1)
        } else {
            version_before
        };
        let audit = audit_rows(
            &removal,
            request,
            &sizes,
            &touch,
            time,
            version_before,
            version_after,
        );
        let after = self.centroids();
        let plan = Plan {
            request: removal.request,
            time,
            kind,
            named,
            merged: if applied { merged } else { BTreeMap::new() },
            audit,
            version_after,
        };

        let start = Instant::now();
        if let Err(e) = self.commit(&plan) {
            // The file has the state before the request: so must memory.
            self.reload();
            return Err(e);
        }
        let commit_time = start.elapsed();
        self.model_version = version_after;
        if applied {
            self.drop_records(&plan.merged);
        }
        Ok(ForgetReport {
            request: removal.request,
            outcome: removal.outcome.clone(),
            records,
            clients,
            applied_requests: removal.requests.clone(),
            removed_points: removal.removed_points,
            removed_clients: removal.removed_clients.clone(),
            reseeded: removal.reseeded.clone(),
            centroid_shift: if applied {
                shift(&before, &after)
            } else {
                Some(0.0)
            },
            version_before,
            version_after,
            time,
            apply_time,
            commit_time,
            removal,
        })
    }

    /// The records of the points a round removed, out of the map.
    fn drop_records(&mut self, merged: &BTreeMap<ClientId, Loss>) {
        let mut gone: HashSet<(ClientId, PointId)> = HashSet::new();
        let mut whole: HashSet<ClientId> = HashSet::new();
        for (c, loss) in merged {
            match loss {
                Loss::Whole => {
                    whole.insert(*c);
                }
                Loss::Points(ids) => gone.extend(ids.iter().map(|p| (*c, *p))),
            }
        }
        self.records
            .retain(|_, (c, p)| !whole.contains(c) && !gone.contains(&(*c, *p)));
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

    /// The transaction of one request; rolled back on any error.
    fn commit(&mut self, plan: &Plan) -> Result<(), StoreError> {
        let fault = self.fault;
        let fed = &self.fed;
        let tx = begin(&mut self.conn, self.last_entry)?;
        let entry = write_journal(&tx, plan.request, plan.time, plan.kind, &plan.named)?;
        Self::fault_at(fault, FaultPoint::AfterJournal)?;
        for (c, loss) in &plan.merged {
            write_changed_client(&tx, fed, *c, loss)?;
        }
        Self::fault_at(fault, FaultPoint::AfterClients)?;
        write_server(&tx, fed, plan.version_after, self.transform.as_ref())?;
        for a in &plan.audit {
            write_audit(&tx, a)?;
        }
        Self::fault_at(fault, FaultPoint::BeforeCommit)?;
        tx.commit().map_err(StoreError::db("committing"))?;
        self.last_entry = entry;
        Ok(())
    }
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

/// Client `c`'s row and records after a round that took `loss` from it.
fn write_changed_client(
    conn: &Connection,
    fed: &crate::Federation,
    c: ClientId,
    loss: &Loss,
) -> Result<(), StoreError> {
    let key = i64::try_from(c.0).map_err(|_| StoreError::ClientOutOfRange(c))?;
    let db = StoreError::db;
    match fed.client(c) {
        Some(client) => write_client(conn, client)?,
        None => {
            conn.execute("DELETE FROM clients WHERE id = ?1", params![key])
                .map_err(db("deleting a client's state"))?;
        }
    }
    match loss {
        Loss::Whole => {
            conn.execute("DELETE FROM records WHERE client = ?1", params![key])
                .map_err(db("deleting records"))?;
        }
        Loss::Points(ids) => {
            let mut stmt = conn
                .prepare_cached("DELETE FROM records WHERE client = ?1 AND point = ?2")
                .map_err(db("deleting records"))?;
            for p in ids {
                stmt.execute(params![key, sql(p.0)])
                    .map_err(db("deleting records"))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Centroid, shift};

    fn c(x: f64, y: f64) -> Centroid {
        Centroid {
            coords: vec![x, y],
            weight: 1,
        }
    }

    #[test]
    fn the_shift_does_not_depend_on_the_centroids_order() {
        let before = [c(0.0, 0.0), c(1.0, 0.0), c(0.0, 1.0)];
        let permuted = [c(0.0, 1.0), c(0.0, 0.0), c(1.0, 0.0)];
        assert_eq!(shift(&before, &permuted), Some(0.0));
        // One centroid moved by 0.25, listed elsewhere.
        let moved = [c(1.0, 0.0), c(0.0, 1.25), c(0.0, 0.0)];
        assert_eq!(shift(&before, &moved), Some(0.25));
        // Both ways: a centroid of `after` far from every one of `before`.
        let extra = [c(0.0, 0.0), c(1.0, 0.0), c(0.0, 1.0), c(3.0, 4.0)];
        // (3, 4) is nearest to (0, 1): sqrt(9 + 9).
        assert_eq!(shift(&before, &extra), Some(18.0_f64.sqrt()));
        assert_eq!(shift(&[], &before), None);
    }
}
