//! Serving records that arrive (issue 29), the counterpart of
//! Algorithm 4: the clients named learn their records at once, then,
//! when the privacy policy allows, the round a removal runs.

use super::Federation;
use crate::{AdditionRequest, MufcResult, PendingAddition, RemovalReport};

impl Federation {
    /// Adds records to clients of the federation, exactly: the clients
    /// named learn them at once (with seeding, the insertion counterpart
    /// of Algorithm 3: a new point changes the seeding only if it wins a
    /// round of the race, and seeding resumes from that round; with full
    /// K-means, an exact update), then the round of [`Self::remove`] runs
    /// under the same rules. The server decodes the change of the sum of
    /// the updated clients' histograms, as for a removal, and the
    /// lone-update policy holds a lone addition back as it holds a lone
    /// removal back (docs/threat-model.md §2.2):
    /// the report's outcome is then
    /// [`RemovalOutcome::Deferred`](crate::RemovalOutcome::Deferred), the
    /// request waits in [`Self::pending_additions`], and a later request or
    /// [`Self::flush`] applies it. The report is a removal's: its
    /// `removed_points` counts what removals erased in the round (none
    /// for this request), its `reseeded` the clients whose seeding
    /// changed.
    ///
    /// After any sequence of additions and removals, the federation is,
    /// once nothing is pending, bit for bit the one [`Self::with_ids`]
    /// trains on the records present with [`Self::config`]. What may not
    /// change is fixed at training: the grid's box (a record outside it is
    /// refused: [`MufcError::OutsideBox`](crate::MufcError::OutsideBox)),
    /// the dimension, and the bound on points the sums were sized for
    /// ([`FederationConfig::max_points`](crate::FederationConfig::max_points):
    /// train with a larger one to leave room).
    ///
    /// **New clients** ([`AdditionRequest::new_client`]) join with their
    /// records: each trains as it would have at training, every member
    /// takes the setup with it on the roster and `client_k` more bins of
    /// sketch capacity, and the next round is a whole one at that capacity
    /// (every member sends its histogram). A join is an update like any
    /// other for the lone-update policy: a lone join waits, since its
    /// round would show the server the new client's whole histogram. The
    /// id of a client on the roster is refused
    /// ([`MufcError::MemberId`](crate::MufcError::MemberId), which says
    /// what a saved federation forgets). With groups the new clients of a
    /// request go together to the group with the fewest clients present
    /// ([`Layout::absorbing`](crate::Layout::absorbing)), and a group that
    /// holds twice the smallest size a group may have (the topology's
    /// size, at least `min_clients`) splits in two when its next round
    /// runs, if it can without showing the server a sum of fewer than
    /// `min_clients` clients
    /// ([`RemoteServer::is_full`](crate::remote::RemoteServer::is_full)): both halves run a
    /// whole round in that request, and the model equals retraining in the
    /// groups the joins made ([`Self::layout`],
    /// [`Self::with_layout`]).
    ///
    /// # Errors
    ///
    /// As [`InProcess::add`](crate::remote::InProcess::add): an error in
    /// the request changes nothing; a failed round leaves the records
    /// learned and the request pending, as for a removal.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{AdditionRequest, ClientId, Federation, FederationConfig, RemovalOutcome};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// // Room for records that arrive: the sums are sized at training.
    /// let config = FederationConfig::new(2).gamma(0.1).max_points(200).validate()?;
    /// let mut fed = Federation::new(clients.clone(), &config)?;
    ///
    /// let new = |id: u64, x: f64| Dataset::with_ids(DMatrix::from_column_slice(2, 1, &[x, 0.1]), vec![PointId(id)]);
    /// // A lone addition waits, as a lone removal does.
    /// let report = fed.add(&AdditionRequest::records(ClientId(0), new(30, 0.2)?))?;
    /// assert!(matches!(report.outcome, RemovalOutcome::Deferred { .. }));
    /// assert_eq!(fed.server().total_count(), 90);
    /// // A second client's records: one round applies both.
    /// let report = fed.add(&AdditionRequest::records(ClientId(1), new(30, -0.1)?))?;
    /// assert_eq!(report.requests, vec![1, 2]);
    /// assert_eq!(fed.server().total_count(), 92);
    ///
    /// // A new client joins with its records, and a member adds one: one
    /// // whole round at the new capacity.
    /// let joining = Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * 5 + r * 3) % 11) as f64 / 40.0))?;
    /// let request = AdditionRequest::new_client(ClientId(3), joining.clone())
    ///     .with_records(ClientId(2), new(30, 0.0)?);
    /// let report = fed.add(&request)?;
    /// assert_eq!(report.updated_clients, [ClientId(2), ClientId(3)]);
    /// assert_eq!(fed.server().total_count(), 113);
    ///
    /// // The same as training on the records present.
    /// let mut all = clients;
    /// all[0].append(&new(30, 0.2)?)?;
    /// all[1].append(&new(30, -0.1)?)?;
    /// all[2].append(&new(30, 0.0)?)?;
    /// all.push(joining);
    /// let retrained = Federation::new(all, fed.config())?;
    /// assert_eq!(fed.server().counts(), retrained.server().counts());
    /// assert_eq!(fed.server().centroids(), retrained.server().centroids());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add(&mut self, request: &AdditionRequest) -> MufcResult<RemovalReport> {
        let report = self.parties.add(request);
        self.after_request();
        report
    }

    /// The additions accepted but not applied yet, in order (see
    /// [`Self::add`]); saved with the federation.
    pub fn pending_additions(&self) -> &[PendingAddition] {
        self.parties.pending_additions()
    }
}
