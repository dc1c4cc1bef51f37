//! Serving requests ([`Store::forget`], [`Store::forget_client`],
//! [`Store::flush`], [`Store::apply_overdue`]): under SQLite's write lock,
//! the state is brought up to date with the file, the request is checked
//! against it and applied in memory, and one transaction writes it
//! (`commit.rs`); the request is acknowledged only once that commits.
//! What a request asks for is resolved in the `asked` submodule.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::commit::{Plan, write_plan};
use crate::error::StoreError;
use crate::handle::{Store, unix_now};
use crate::load::{load, mark};
use crate::record::RecordId;
use crate::reports::{ForgetOutcome, ForgetReport};
use crate::state::State;
use crate::tombstone;
use crate::types::Centroid;
use mufc::{ClientId, MufcError, PendingRequest, RemovalOutcome, RemovalReport, RemovalRequest};

mod asked;

use asked::Asked;

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
    let Some(asked) = Asked::of(&tx, state, job, time)? else {
        return Ok(None);
    };
    let done = Applied::on(state, &asked)?;
    let commit_time = commit(tx, state, fault, &asked, &done, time)?;
    let after = state.centroids();
    let outcome = outcome(conn, state, &done, time)?;
    Ok(Some(done.report(
        state,
        &asked,
        outcome,
        &after,
        commit_time,
        time,
    )))
}

/// A request applied in memory, with what it changed.
struct Applied {
    /// The centroids before.
    before: Vec<Centroid>,
    pending_before: Vec<PendingRequest>,
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
    fn on(state: &mut State, asked: &Asked) -> Result<Self, StoreError> {
        // In memory: the library serves the request.
        let before = state.centroids();
        let pending_before = state.fed.pending().to_vec();
        let waiting_before: BTreeSet<ClientId> = state.fed.pending_clients().into_iter().collect();
        let version_before = state.model_version;
        let start = Instant::now();
        let removal = match (&asked.request, &asked.overdue_clients) {
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
        let named_clients: Vec<ClientId> = asked
            .request
            .as_ref()
            .map_or_else(Vec::new, request_clients);
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
    fn report(
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
fn commit(
    tx: Transaction<'_>,
    state: &mut State,
    fault: Option<crate::fault::FaultPoint>,
    asked: &Asked,
    done: &Applied,
    time: u64,
) -> Result<Duration, StoreError> {
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
        applied: &done.applied_clients,
        pending_before: &done.pending_before,
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
fn outcome(
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
            let oldest = tombstone::oldest_waiting(conn)?.unwrap_or(time);
            ForgetOutcome::Deferred {
                pending_clients: state.names_of(&state.fed.pending_clients()),
                needed: state.fed.config().min_updating_clients(),
                deadline: oldest.saturating_add(state.max_defer),
            }
        },
    )
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
