//! Serving removal requests (Algorithm 4): the clients named unlearn at
//! once, then, when the privacy policy allows, one round of messages, the
//! server's update, the commit and the report.

use super::Federation;
use crate::{ClientId, MufcResult, RemovalReport, RemovalRequest};

impl Federation {
    /// Serves a removal request by Algorithm 4, exactly: the clients named
    /// unlearn their points (Algorithm 3 when they run seeding; their
    /// counts always change) and clients removed whole leave, at once;
    /// then a fresh aggregation round runs over the remaining clients, the
    /// server decodes the change of the aggregate and updates its K-means.
    ///
    /// **Lone updates wait; erasure does not** (docs/threat-model.md U3).
    /// The difference of two aggregates is the change of the clients whose
    /// message changed, so a round that changes one client alone tells
    /// the server that client's change (for a removed point that is not a
    /// seed: the bin it counted in). When the request, together with the
    /// requests already pending, names fewer clients than
    /// [`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients)
    /// (default 2), it is checked in full and its points are erased from
    /// the clients at once (each named client's points, seeding and
    /// histogram are already those without them), but the round waits:
    /// the request is kept pending ([`Self::pending`]), the server's model
    /// still counts the points, and the report says so
    /// ([`RemovalOutcome::Deferred`](crate::RemovalOutcome::Deferred)).
    /// Once the pending requests name enough clients, the call that
    /// completes them runs one round for them all: its report lists every
    /// request it covers ([`RemovalReport::requests`]). [`Self::flush`]
    /// runs the round at once. A point named twice is
    /// [`MufcError::AlreadyPending`](crate::MufcError::AlreadyPending).
    /// With groups ([`Topology`](crate::Topology)) the server decodes
    /// each group's difference, so the policy holds per group: a request
    /// is applied once every group it names has enough clients named (by
    /// it and the pending requests); the round then applies the pending
    /// requests' parts in those groups too, and the parts in other groups
    /// keep waiting (a pending request may so be applied in parts, its
    /// number in the [`RemovalReport::requests`] of each round that
    /// applies one). In the plain mode of Algorithm 5 nothing waits: the
    /// server receives every client's centroids in the clear, so a round
    /// changing one client hides nothing that waiting would.
    ///
    /// **Below the minimum aggregate the model is withdrawn.** A request
    /// that would leave fewer clients than
    /// [`FederationConfig::min_clients`](crate::FederationConfig::min_clients)
    /// (with groups: in a group that no other group of at least that many
    /// can take; a group that one can take merges into it when its round
    /// runs, its clients counted as changed there for the lone-update
    /// policy), but some, is served all the same: its
    /// points are erased from the clients at once, and since no aggregate
    /// of the clients left may be decoded (docs/threat-model.md P4) and the
    /// old one counts the erased points, the server drops its counts and
    /// centroids ([`RemovalOutcome::Withdrawn`](crate::RemovalOutcome::Withdrawn),
    /// [`Self::withdrawal`]). The pending requests are covered by it; every
    /// later request is served the same way, with no round.
    ///
    /// Only the clients named recompute; every remaining client sends its
    /// sketch again (the unmasked sketch of its last message, updated by
    /// the bins whose counts changed: one insert per changed bin, none for
    /// a client that did not change) masked with fresh masks: the round draws new
    /// secrets from the operating system (see
    /// [`FederationConfig::insecure_deterministic_masks`](crate::FederationConfig::insecure_deterministic_masks))
    /// and consumes its round number before masking, so that a retry after
    /// a failure, or a reloaded older save, never reuses a mask. A client all of whose
    /// points are named is removed whole. The clients are at once, and
    /// the whole federation once no request is pending, bit for bit the
    /// federation built by [`Self::with_ids`] from the remaining data with
    /// [`Self::config`].
    ///
    /// # Errors
    ///
    /// [`MufcError::EmptyRequest`](crate::MufcError::EmptyRequest),
    /// [`MufcError::UnknownClient`](crate::MufcError::UnknownClient),
    /// [`MufcError::RepeatedClient`](crate::MufcError::RepeatedClient),
    /// [`MufcError::UnknownPoint`](crate::MufcError::UnknownPoint),
    /// [`MufcError::RepeatedPoint`](crate::MufcError::RepeatedPoint),
    /// [`MufcError::AlreadyPending`](crate::MufcError::AlreadyPending) (a
    /// point or client a pending request names),
    /// [`MufcError::TooManyDropouts`](crate::MufcError::TooManyDropouts)
    /// (with [`Masking::SecAgg`](crate::Masking::SecAgg): the round's
    /// dropouts left too few clients),
    /// [`MufcError::InvalidConfig`](crate::MufcError::InvalidConfig) when
    /// no SecAgg parameters suit the remaining clients, and decoding or
    /// server errors of the lower crates. An error in the request itself
    /// changes nothing. **A failed round does not undo the erasure**: once
    /// the request is checked, its clients have forgotten its points (as a
    /// client across processes forgets before it answers); a round that
    /// fails leaves its group's model as it was and the request pending
    /// ([`Self::pending`]), for the next request's rounds or
    /// [`Self::flush`] to apply. The round counter moves on once a round
    /// has started.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, MufcError, RemovalOutcome, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let mut fed = Federation::new(clients, &FederationConfig::new(2).gamma(0.1).validate()?)?;
    /// // A lone client's request waits: the server would learn its change.
    /// let report = fed.remove(&RemovalRequest::points(ClientId(0), vec![PointId(3), PointId(4)]))?;
    /// assert_eq!(report.outcome, RemovalOutcome::Deferred { pending_clients: vec![ClientId(0)], needed: 2 });
    /// // The points are gone from the client at once; the model still counts them.
    /// assert_eq!(fed.client(ClientId(0)).unwrap().data().len(), 28);
    /// assert_eq!(fed.server().total_count(), 90);
    /// // A second client's request: both are applied in one round.
    /// let report = fed.remove(&RemovalRequest::points(ClientId(1), vec![PointId(0)]))?;
    /// assert_eq!(report.outcome, RemovalOutcome::Applied);
    /// assert_eq!(report.requests, vec![1, 2]);
    /// assert_eq!(report.updated_clients, vec![ClientId(0), ClientId(1)]);
    /// assert_eq!(fed.server().total_count(), 87);
    /// // An unknown point: an error, and nothing changes.
    /// let err = fed.remove(&RemovalRequest::points(ClientId(1), vec![PointId(0)])).unwrap_err();
    /// assert_eq!(err, MufcError::UnknownPoint { client: ClientId(1), id: PointId(0) });
    /// assert_eq!(fed.server().total_count(), 87);
    /// assert!(fed.pending().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove(&mut self, request: &RemovalRequest) -> MufcResult<RemovalReport> {
        let report = self.parties.remove(request);
        self.after_request();
        report
    }

    /// Applies every pending request now, in one round, however few
    /// clients they name; `None` when nothing is pending. When fewer than
    /// [`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients)
    /// clients change, the report's
    /// [`privacy_warning`](RemovalReport::privacy_warning) says what the
    /// server learns (docs/threat-model.md U3).
    ///
    /// # Errors
    ///
    /// As [`Self::remove`]; on an error the requests stay pending.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let mut fed = Federation::new(clients, &FederationConfig::new(2).gamma(0.1).validate()?)?;
    /// fed.remove(&RemovalRequest::points(ClientId(2), vec![PointId(5)]))?;
    /// assert_eq!(fed.pending().len(), 1);
    /// let report = fed.flush()?.expect("a request was pending");
    /// assert!(report.lone_update);
    /// assert!(report.privacy_warning.unwrap().contains("client 2"));
    /// assert_eq!(fed.server().total_count(), 89);
    /// assert!(fed.flush()?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flush(&mut self) -> MufcResult<Option<RemovalReport>> {
        let report = self.parties.flush();
        self.after_request();
        report
    }

    /// Applies now the pending requests' parts that name `clients`, in
    /// one round, however few clients they name (as [`Self::flush`] does
    /// all of them); `None` when no pending request names any of them. A
    /// round sends the current message of every client it includes, so
    /// it applies too the pending parts of the other clients it includes:
    /// of every client of a flat federation, of every client of the
    /// groups of `clients` with groups. This is how a deadline is kept:
    /// the requests whose model update waited too long run, the newer
    /// ones of other groups keep waiting.
    ///
    /// # Errors
    ///
    /// As [`Self::flush`].
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let mut fed = Federation::new(clients, &FederationConfig::new(2).gamma(0.1).validate()?)?;
    /// fed.remove(&RemovalRequest::points(ClientId(2), vec![PointId(5)]))?;
    /// assert!(fed.flush_clients(&[ClientId(0)])?.is_none());
    /// let report = fed.flush_clients(&[ClientId(2)])?.expect("client 2 was pending");
    /// assert_eq!(report.requests, vec![1]);
    /// assert!(fed.pending().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flush_clients(&mut self, clients: &[ClientId]) -> MufcResult<Option<RemovalReport>> {
        let report = self.parties.flush_clients(clients);
        self.after_request();
        report
    }
}
