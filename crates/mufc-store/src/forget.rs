//! Serving requests ([`Store::forget`], [`Store::forget_client`],
//! [`Store::flush`], [`Store::apply_overdue`], and [`Store::add`] in the
//! `added` submodule): under SQLite's write lock, the state is brought up
//! to date with the file, the request is checked against it and applied
//! in memory (`applied`), and one transaction writes it (`commit.rs`);
//! the request is acknowledged only once that commits. What a request
//! asks for is resolved in the `asked` submodule.

use rusqlite::{Connection, Transaction, TransactionBehavior};

use crate::error::StoreError;
use crate::handle::{Store, unix_now};
use crate::load::{load, mark};
use crate::record::RecordId;
use crate::reports::ForgetReport;
use crate::state::State;
use crate::types::Centroid;

mod added;
mod applied;
mod asked;
mod job;

use applied::{Applied, commit, outcome};
use asked::Asked;
use job::{Job, empty};

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
                | Self::RecordHeld { .. }
                | Self::DuplicateClient(_)
                | Self::Forgotten { .. }
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
    use super::applied::shift;
    use super::job::plural;
    use crate::types::Centroid;

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
