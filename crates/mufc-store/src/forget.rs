//! Serving requests ([`Store::forget`], [`Store::forget_client`],
//! [`Store::flush`], [`Store::apply_overdue`]): under SQLite's write lock,
//! the state is brought up to date with the file, the request is checked
//! against it and applied in memory, and one transaction writes it
//! (`commit.rs`); the request is acknowledged only once that commits.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::Instant;

use rusqlite::{Connection, Transaction, TransactionBehavior};
use seeding::PointId;

use crate::commit::{Plan, write_plan};
use crate::error::StoreError;
use crate::handle::{Store, unix_now};
use crate::load::{load, mark};
use crate::record::{ClientName, RecordId};
use crate::reports::{ForgetOutcome, ForgetReport};
use crate::state::State;
use crate::tombstone::{self, lookup};
use crate::types::Centroid;
use mufc::{ClientId, MufcError, RemovalOutcome, RemovalRequest};

/// What a call asks for.
#[derive(Clone, Copy)]
enum Job<'a> {
    Records(&'a [RecordId]),
    Client(&'a str),
    Flush,
    Overdue,
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
    /// exactly), committed in one transaction before this returns. The
    /// records' data leaves the store at once: their clients unlearn
    /// them (their points, seeding and histograms are rewritten without
    /// them) and each leaves a tombstone. The model update follows in the
    /// same request unless the privacy policy defers it (the request,
    /// with those already pending, names fewer clients than
    /// [`FederationConfig::min_updating_clients`](mufc::FederationConfig::min_updating_clients)):
    /// the report says so, and a later request, [`Self::flush`], or
    /// [`Self::apply_overdue`] once the deadline passed runs it.
    ///
    /// Any number of processes may serve requests on one store: each
    /// request takes SQLite's write lock, reloads the state if another
    /// process changed the file since this one read it, and is served on
    /// that state; they queue, and none is lost or applied twice.
    ///
    /// # Errors
    ///
    /// [`StoreError::AlreadyForgotten`] when an id was forgotten before
    /// (saying when and by which request; ids never held are listed with
    /// it), [`StoreError::UnknownRecords`] naming every id the store never
    /// held, [`StoreError::DuplicateRecord`], and [`StoreError::Mufc`]
    /// for a request the federation refuses (empty, one that would leave
    /// too few clients, ...): nothing changes. On a database error the
    /// transaction is rolled back and the store reloaded from the file.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    /// use mufc_store::{ClientRecords, FitOptions, RecordId, Store, StoreError};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let dir = tempfile::tempdir()?;
    /// let config = FederationConfig::new(2).gamma(0.1).validate()?;
    /// let (mut store, _) = Store::fit(dir.path().join("m.mufc"), ClientRecords::numbered(clients), &config, &FitOptions::new())?;
    /// let err = store.forget(&[RecordId::from(5), RecordId::from(500), RecordId::from(90)]).unwrap_err();
    /// assert!(matches!(&err, StoreError::UnknownRecords { ids } if ids == &[RecordId::from(90), RecordId::from(500)]));
    /// assert_eq!(store.num_points(), 90);
    /// let report = store.forget(&[RecordId::from(5), RecordId::from(65)])?;
    /// assert_eq!(report.removed_points, 2);
    /// assert!(store.record(&RecordId::from(5)).is_none());
    /// // Naming it again says when it was forgotten.
    /// let again = store.forget(&[RecordId::from(5), RecordId::from(66)]).unwrap_err();
    /// assert!(again.to_string().starts_with("record 5 was already forgotten in request 1 at "), "{again}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn forget(&mut self, ids: &[RecordId]) -> Result<ForgetReport, StoreError> {
        self.serve(Job::Records(ids))
            .and_then(|r| r.ok_or_else(empty))
    }

    /// Removes client `name` whole (its points and its row leave the
    /// store at once), as [`Self::forget`] does records.
    ///
    /// # Errors
    ///
    /// As [`Self::forget`]; [`StoreError::UnknownClient`] for a name the
    /// store never held, [`StoreError::ClientForgotten`] for a client
    /// removed already.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    /// use mufc_store::{ClientRecords, FitOptions, Store, StoreError};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let clients: Vec<Dataset> = (0..4)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let dir = tempfile::tempdir()?;
    /// let config = FederationConfig::new(2).gamma(0.1).validate()?;
    /// let (mut store, _) = Store::fit(dir.path().join("m.mufc"), ClientRecords::numbered(clients), &config, &FitOptions::new())?;
    /// let r = store.forget_client("2")?;
    /// assert_eq!(r.erased_points, 30);
    /// assert_eq!(store.num_points(), 90);
    /// let again = store.forget_client("2").unwrap_err();
    /// assert!(matches!(again, StoreError::ClientForgotten { request: 1, at, .. } if at > 0));
    /// assert!(again.to_string().starts_with("client 2 was already forgotten in request 1 at "), "{again}");
    /// assert!(matches!(store.forget_client("site-9"), Err(StoreError::UnknownClient { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn forget_client(&mut self, name: &str) -> Result<ForgetReport, StoreError> {
        self.serve(Job::Client(name))
            .and_then(|r| r.ok_or_else(empty))
    }

    /// Runs the model update of every pending request now, however few
    /// clients they name (the report's `privacy_warning` says what the
    /// server learns); `None` when nothing is pending.
    ///
    /// # Errors
    ///
    /// As [`Self::forget`].
    pub fn flush(&mut self) -> Result<Option<ForgetReport>, StoreError> {
        self.serve(Job::Flush)
    }

    /// Runs the model update of the pending requests whose records were
    /// erased longer ago than the store's deferral limit
    /// ([`FitOptions::with_max_defer`](crate::FitOptions::with_max_defer),
    /// [`Self::max_defer`]), however few clients they name, with a warning
    /// in the audit log; `None` when none is due. A round sends every
    /// included client's current message, so it applies the other pending
    /// requests of the same clients (flat: of every client) too.
    ///
    /// Nothing runs by itself: call this regularly (`mufc forget` does,
    /// before every request; `mufc forget --model STORE --overdue` does it
    /// alone, for a timer).
    ///
    /// # Errors
    ///
    /// As [`Self::forget`].
    pub fn apply_overdue(&mut self) -> Result<Option<ForgetReport>, StoreError> {
        self.serve(Job::Overdue)
    }

    fn serve(&mut self, job: Job<'_>) -> Result<Option<ForgetReport>, StoreError> {
        if self.poisoned {
            return Err(StoreError::Poisoned);
        }
        let result = serve(&self.conn, &mut self.state, self.fault, job);
        if let Err(e) = &result
            && !e.changed_nothing()
        {
            // The file has the state before the request: so must memory.
            self.reload();
        }
        result
    }
}

fn empty() -> StoreError {
    StoreError::Mufc(MufcError::EmptyRequest)
}

impl StoreError {
    /// Whether this error is a refusal found before anything changed in
    /// memory (no reload needed).
    fn changed_nothing(&self) -> bool {
        matches!(
            self,
            Self::UnknownRecords { .. }
                | Self::AlreadyForgotten { .. }
                | Self::DuplicateRecord(_)
                | Self::UnknownClient { .. }
                | Self::ClientForgotten { .. }
        )
    }
}

/// The records `ids` by client, or the refusal naming those not held.
fn resolve(
    conn: &Connection,
    state: &State,
    ids: &[RecordId],
) -> Result<BTreeMap<ClientId, Vec<(RecordId, PointId)>>, StoreError> {
    let mut seen = HashSet::new();
    let mut per: BTreeMap<ClientId, Vec<(RecordId, PointId)>> = BTreeMap::new();
    let mut missing = Vec::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(StoreError::DuplicateRecord(id.clone()));
        }
        match state.records.get(id) {
            Some(&(c, p)) => per.entry(c).or_default().push((id.clone(), p)),
            None => missing.push(id.clone()),
        }
    }
    if missing.is_empty() {
        return Ok(per);
    }
    missing.sort_unstable();
    let mut forgotten = Vec::new();
    let mut unknown = Vec::new();
    for id in missing {
        match lookup(conn, &state.secret, &id, |c| {
            state.names.get(&ClientId(c)).cloned()
        })? {
            Some(f) => forgotten.push(f),
            None => unknown.push(id),
        }
    }
    Err(if forgotten.is_empty() {
        StoreError::UnknownRecords { ids: unknown }
    } else {
        StoreError::AlreadyForgotten { forgotten, unknown }
    })
}

/// The request that removed client `name` whole (from the audit log).
fn removed_by(conn: &Connection, name: &ClientName) -> Result<(u64, u64), StoreError> {
    let (request, time): (Option<i64>, Option<i64>) = conn
        .query_row(
            "SELECT request, time FROM audit WHERE client = ?1 AND whole_client = 1 \
             ORDER BY request LIMIT 1",
            [name.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok((None, None)),
            e => Err(e),
        })
        .map_err(StoreError::db("reading the audit log"))?;
    let num = |v: Option<i64>| v.and_then(|r| u64::try_from(r).ok()).unwrap_or(0);
    Ok((num(request), num(time)))
}

/// A client's name as the store knows it, or the refusal.
fn client_named(conn: &Connection, state: &State, name: &str) -> Result<ClientId, StoreError> {
    let unknown = || StoreError::UnknownClient {
        name: name.to_string(),
        known: {
            let held: Vec<String> = state
                .fed
                .client_ids()
                .iter()
                .take(10)
                .map(|c| state.name(*c).to_string())
                .collect();
            let more = state.fed.clients().len().saturating_sub(10);
            if more > 0 {
                format!("{}, and {more} more", held.join(", "))
            } else {
                held.join(", ")
            }
        },
    };
    let Ok(parsed) = ClientName::new(name) else {
        return Err(unknown());
    };
    let Some(&id) = state.by_name.get(&parsed) else {
        return Err(unknown());
    };
    if state.fed.client(id).is_none() {
        let (request, at) = removed_by(conn, &parsed)?;
        return Err(StoreError::ClientForgotten {
            request,
            at,
            pending: state.fed.pending_clients().contains(&id),
            name: parsed,
        });
    }
    Ok(id)
}

/// Serves `job` on `state` in one transaction of `conn` (see the module
/// docs); `None` when there is nothing to do.
fn serve(
    conn: &Connection,
    state: &mut State,
    fault: Option<crate::fault::FaultPoint>,
    job: Job<'_>,
) -> Result<Option<ForgetReport>, StoreError> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)
        .map_err(StoreError::db("starting the transaction"))?;
    // Another process served a request since this state was read: serve
    // this one on the file's state (the write lock keeps it so).
    if mark(&tx)? != state.mark() {
        *state = load(&tx, None)?;
    }
    let time = unix_now();
    let mut erased: Vec<(RecordId, ClientId)> = Vec::new();
    let mut overdue_clients: Option<Vec<ClientId>> = None;
    let (request, kind, named, records) = match job {
        Job::Records(ids) => {
            let per = resolve(&tx, state, ids)?;
            let mut r = RemovalRequest::new();
            for (c, v) in per {
                erased.extend(v.iter().map(|(id, _)| (id.clone(), c)));
                r = r.with_points(c, v.into_iter().map(|(_, p)| p).collect());
            }
            let n = ids.len();
            (Some(r), "records", plural(n, "record"), n)
        }
        Job::Client(name) => {
            let id = client_named(&tx, state, name)?;
            erased.extend(
                state
                    .records
                    .iter()
                    .filter(|(_, (c, _))| *c == id)
                    .map(|(r, _)| (r.clone(), id)),
            );
            erased.sort_unstable();
            (
                Some(RemovalRequest::clients(vec![id])),
                "client",
                state.name(id).to_string(),
                0,
            )
        }
        Job::Flush => {
            if state.fed.pending().is_empty() {
                return Ok(None);
            }
            (None, "flush", String::new(), 0)
        }
        Job::Overdue => {
            let due = time.saturating_sub(state.max_defer);
            let clients: Vec<ClientId> = tombstone::overdue(&tx, due)?
                .into_iter()
                .map(ClientId)
                .filter(|c| state.fed.pending_clients().contains(c))
                .collect();
            if clients.is_empty() {
                return Ok(None);
            }
            let names = state.names_of(&clients);
            overdue_clients = Some(clients);
            (
                None,
                "overdue",
                names
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                0,
            )
        }
    };

    // In memory: the library serves the request.
    let before = state.centroids();
    let pending_before = state.fed.pending().to_vec();
    let waiting_before: BTreeSet<ClientId> = state.fed.pending_clients().into_iter().collect();
    let version_before = state.model_version;
    let start = Instant::now();
    let removal = match (&request, &overdue_clients) {
        (Some(r), _) => state.fed.remove(r).map_err(|e| named_error(state, e))?,
        (None, Some(clients)) => state.fed.flush_clients(clients)?.ok_or_else(empty)?,
        (None, None) => state.fed.flush()?.ok_or_else(empty)?,
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
    let named_clients: Vec<ClientId> = request.as_ref().map_or_else(Vec::new, request_clients);
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
    let overdue = overdue_clients.is_some();
    let plan = Plan {
        request: removal.request,
        time,
        kind,
        named,
        request_clients: &named_clients,
        whole: request
            .as_ref()
            .map_or(&[][..], RemovalRequest::clients_removed),
        erased: &erased,
        applied: &applied_clients,
        pending_before: &pending_before,
        removal: &removal,
        version_before,
        version_after,
        records_digest: {
            let mut d = state.records_digest;
            for (r, _) in &erased {
                if let Some(&(c, p)) = state.records.get(r) {
                    d.toggle(r, c, p);
                }
            }
            d
        },
        warning: match &removal.outcome {
            RemovalOutcome::Withdrawn(w) => Some(w.to_string()),
            _ => audit_warning(privacy_warning.as_deref(), overdue, state.max_defer),
        },
    };
    let records_digest = plan.records_digest;
    let start = Instant::now();
    let entry = write_plan(&tx, state, &plan, fault)?;
    tx.commit().map_err(StoreError::db("committing"))?;
    let commit_time = start.elapsed();
    state.last_entry = entry;
    state.model_version = version_after;
    state.records_digest = records_digest;
    for (r, _) in &erased {
        state.records.remove(r);
    }
    let after = state.centroids();
    let outcome = if let RemovalOutcome::Withdrawn(w) = &removal.outcome {
        ForgetOutcome::Withdrawn(w.clone())
    } else if applied {
        ForgetOutcome::Applied
    } else {
        let oldest = tombstone::oldest_waiting(conn)?.unwrap_or(time);
        ForgetOutcome::Deferred {
            pending_clients: state.names_of(&state.fed.pending_clients()),
            needed: state.fed.config().min_updating_clients(),
            deadline: oldest.saturating_add(state.max_defer),
        }
    };
    Ok(Some(ForgetReport {
        request: removal.request,
        outcome,
        records,
        erased_points: erased.len(),
        clients: state.names_of(&named_clients),
        applied_requests: removal.requests.clone(),
        removed_points: removal.removed_points,
        removed_clients: state.names_of(&removal.removed_clients),
        reseeded: state.names_of(&removal.reseeded),
        centroid_shift: if applied {
            shift(&before, &after)
        } else {
            Some(0.0)
        },
        version_before,
        version_after,
        time,
        privacy_warning,
        overdue,
        apply_time,
        commit_time,
        removal,
    }))
}

/// "1 record", "3 records".
pub(crate) fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
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

/// The library's privacy warning of a round, with the clients named as
/// the store names them.
fn named_warning(state: &State, removal: &mufc::RemovalReport) -> Option<String> {
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

impl State {
    /// The server's centroids with their weights, in the data's
    /// coordinates.
    pub(crate) fn centroids(&self) -> Vec<Centroid> {
        let Some(m) = self.fed.server().model() else {
            return Vec::new();
        };
        m.centroids()
            .column_iter()
            .zip(m.sizes())
            .map(|(c, &weight)| {
                let c: Vec<f64> = c.iter().copied().collect();
                Centroid {
                    coords: match &self.transform {
                        Some(t) => t.invert(&c),
                        None => c,
                    },
                    weight,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{Centroid, plural, shift};

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

    #[test]
    fn counts_are_worded() {
        assert_eq!(plural(1, "record"), "1 record");
        assert_eq!(plural(0, "record"), "0 records");
        assert_eq!(plural(12, "record"), "12 records");
    }
}
