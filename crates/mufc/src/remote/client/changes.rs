//! A client's points changing between rounds: forgotten (Algorithm 4,
//! lines 1-6) or added (issue 29). Both stage the client's new points and
//! clustering first, so that a driver checks every client a request names
//! before any changes, and the next round carries the new histogram.

use seeding::{Dataset, PointId};

use super::trained::{Local, Staged, train};
use super::{RemoteClient, State};
use crate::state::setup::check_box;
use crate::{MufcError, MufcResult};

impl RemoteClient {
    /// Forgets the points `ids` (Algorithm 4, lines 1-6): the client's
    /// clustering is updated at once (reseeded from the first removed
    /// seed, if one is); the next round carries its new histogram. Returns
    /// whether it reseeded. On error nothing changes.
    ///
    /// # Errors
    ///
    /// [`MufcError::Seeding`] for an id the client does not hold, or one
    /// named twice; [`MufcError::EmptyRequest`] for no id.
    pub fn forget(&mut self, ids: &[PointId]) -> MufcResult<bool> {
        let (forgetting, reseeded) = self.forgetting(ids)?;
        self.take(forgetting);
        Ok(reseeded)
    }

    /// What forgetting `ids` makes of the client's points and clustering,
    /// computed without changing it ([`Self::take`] then changes it), and
    /// whether it reseeded: a driver stages every client of a request
    /// before any changes.
    ///
    /// # Errors
    ///
    /// As [`Self::forget`].
    pub(crate) fn forgetting(&self, ids: &[PointId]) -> MufcResult<(Staged, bool)> {
        if ids.is_empty() {
            return Err(MufcError::EmptyRequest);
        }
        match &self.state {
            State::Waiting(data) => Ok((Staged::Waiting(data.without(ids)?), false)),
            State::Trained(t) => {
                let data = t.data();
                data.positions_of(ids)?;
                if ids.len() == data.len() {
                    return Ok((Staged::Trained(Local::Empty(data.without(ids)?)), true));
                }
                let Local::Active(c) = &t.local else {
                    return Err(MufcError::EmptyRequest);
                };
                let (next, reseeded) = c.unlearned(ids, t.quantizer.as_ref())?;
                Ok((Staged::Trained(Local::Active(Box::new(next))), reseeded))
            }
        }
    }

    /// Adds the points of `records` (issue 29, the counterpart of
    /// [`Self::forget`]): the client's clustering is updated at once
    /// ([`seeding::Seeding::insert`]: reseeded from the first round a new
    /// record wins, if one does); the next round carries its new
    /// histogram, as after a removal. A client that had forgotten every
    /// point trains again on the records. Returns whether it reseeded. On
    /// error nothing changes.
    ///
    /// What an addition cannot change is fixed at training: the grid
    /// (records must lie in its box, as the training data did), the
    /// parameters the federation resolved, the capacity of its sums, and
    /// their bound on points (`max_points`, resolved from the points at
    /// training unless the configuration gives one: give one with room
    /// for records that arrive). A round whose sum passes the bound fails
    /// at the server and commits nothing: the federation must be trained
    /// again with a larger one.
    ///
    /// # Errors
    ///
    /// [`MufcError::EmptyRequest`] for no record;
    /// [`MufcError::DimensionMismatch`]; [`MufcError::HeldPoint`] for an
    /// id the client holds already; [`MufcError::OutsideBox`] for a record
    /// outside the grid's box; [`MufcError::InvalidConfig`] when the
    /// client alone would pass the federation's `max_points`.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::ClientId;
    /// use mufc::remote::RemoteClient;
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let data = Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * 7 + r) % 10) as f64 / 25.0))?;
    /// let mut client = RemoteClient::new(ClientId(0), data)?;
    /// let more = Dataset::with_ids(DMatrix::from_column_slice(2, 1, &[0.1, -0.2]), vec![PointId(20)])?;
    /// client.learn(&more)?;
    /// assert_eq!(client.data().len(), 21);
    /// assert!(client.learn(&more).is_err()); // id 20 is held already: nothing changes
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn learn(&mut self, records: &Dataset) -> MufcResult<bool> {
        let (staged, reseeded) = self.learning(records)?;
        self.take(staged);
        Ok(reseeded)
    }

    /// What adding `records` makes of the client's points and clustering,
    /// computed without changing it, as [`Self::forgetting`].
    ///
    /// # Errors
    ///
    /// As [`Self::learn`].
    pub(crate) fn learning(&self, records: &Dataset) -> MufcResult<(Staged, bool)> {
        if records.is_empty() {
            return Err(MufcError::EmptyRequest);
        }
        if let Some(&id) = records.ids().iter().find(|&&id| self.data().contains(id)) {
            return Err(MufcError::HeldPoint {
                client: self.id,
                id,
            });
        }
        let t = match &self.state {
            State::Waiting(data) => {
                let mut more = data.clone();
                more.append(records)?;
                return Ok((Staged::Waiting(more), false));
            }
            State::Trained(t) => t,
        };
        if records.dim() != t.setup.dim {
            return Err(MufcError::DimensionMismatch {
                client: self.id,
                expected: t.setup.dim,
                found: records.dim(),
            });
        }
        if t.quantizer.is_some() {
            check_box(self.id, records)?;
        }
        // The federation's sums were sized at training for at most
        // `max_points` points: one client alone may not pass it.
        let max_points = t.setup.config.max_points().unwrap_or(u64::MAX);
        let total = u128::from(t.data().total_weight()) + u128::from(records.total_weight());
        if total > u128::from(max_points) {
            return Err(crate::error::config_error(
                crate::ConfigParam::MaxPoints,
                format!(
                    "client {} would hold {total} points, beyond the bound {max_points} the \
                     federation was trained with (train it with a larger max_points to leave \
                     room for records that arrive)",
                    self.id
                ),
            ));
        }
        match &t.local {
            Local::Active(c) => {
                let (next, reseeded) = c.learned(records, t.quantizer.as_ref())?;
                Ok((Staged::Trained(Local::Active(Box::new(next))), reseeded))
            }
            Local::Empty(data) => {
                let mut more = data.clone();
                more.append(records)?;
                let again = train(self.id, more, t.setup.clone(), None)?;
                Ok((Staged::Trained(again.local), true))
            }
        }
    }

    /// Takes what [`Self::forgetting`] or [`Self::learning`] computed.
    pub(crate) fn take(&mut self, forgetting: Staged) {
        match (&mut self.state, forgetting) {
            (State::Trained(t), Staged::Trained(local)) => t.local = local,
            (State::Waiting(d), Staged::Waiting(data)) => *d = data,
            // Computed in another state: a client never goes back to
            // waiting, and one that trains since computes again.
            (State::Trained(_), Staged::Waiting(_)) | (State::Waiting(_), Staged::Trained(_)) => {}
        }
    }
}
