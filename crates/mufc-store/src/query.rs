//! What a store tells: its model, configuration and records
//! ([`Store::centroids`], [`Store::predict`] and the accessors).

use std::path::Path;
use std::time::Duration;

use nalgebra::DMatrix;
use seeding::BoxTransform;

use crate::error::StoreError;
use crate::fault::FaultPoint;
use crate::handle::Store;
use crate::record::{ClientName, RecordId};
use crate::reports::RecordStatus;
use crate::tombstone;
use crate::types::Centroid;
use mufc::{ClientId, Federation, PendingRequest, ValidConfig};

impl Store {
    /// The map from the data's coordinates to the model's, if training
    /// used one ([`FitOptions::with_transform`](crate::FitOptions::with_transform)).
    pub fn transform(&self) -> Option<&BoxTransform> {
        self.state.transform.as_ref()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The federation: clients, server, reports (read only: requests go
    /// through [`Self::forget`] so that they are committed).
    pub fn federation(&self) -> &Federation {
        &self.state.fed
    }

    /// The server's part of the federation's state: all a server run
    /// across processes holds ([`RemoteServer::from_snapshot`](mufc::remote::RemoteServer::from_snapshot)
    /// takes it back).
    pub fn server_snapshot(&self) -> mufc::ServerSnapshot {
        self.state.fed.server_snapshot()
    }

    /// The configuration (resolved, as [`Federation::config`]).
    pub fn config(&self) -> &ValidConfig {
        self.state.fed.config()
    }

    /// The number of server clusters, K.
    pub fn k(&self) -> usize {
        self.state.fed.config().server().k()
    }

    /// The dimension of the points.
    pub fn dim(&self) -> usize {
        self.state.fed.dim()
    }

    /// The clients' numbers in the federation, in order (their names:
    /// [`Self::client_names`]).
    pub fn client_ids(&self) -> Vec<ClientId> {
        self.state.fed.client_ids()
    }

    /// The number of points the clients hold (those of pending requests
    /// are erased already: the model may still count them).
    pub fn num_points(&self) -> usize {
        self.state.fed.num_points()
    }

    /// The model version: 1 after training, one more for every applied
    /// request.
    pub fn model_version(&self) -> u64 {
        self.state.model_version
    }

    /// The aggregation rounds run (as [`Federation::rounds`]).
    pub fn rounds(&self) -> u64 {
        self.state.fed.rounds()
    }

    /// The requests deferred by the privacy policy, not applied yet.
    pub fn pending(&self) -> &[PendingRequest] {
        self.state.fed.pending()
    }

    /// Which client holds record `id`, by name (`None` once forgotten,
    /// or if never held; [`Self::locate`] tells which).
    pub fn record(&self, id: &RecordId) -> Option<ClientName> {
        self.state.records.get(id).map(|(c, _)| self.state.name(*c))
    }

    /// Where record `id` is in the federation ([`Self::federation`]): its
    /// client's number and its point there (`None` once forgotten, or if
    /// never held). For comparing with a [`Federation`]; people name
    /// clients by [`Self::record`].
    pub fn placement(&self, id: &RecordId) -> Option<(ClientId, seeding::PointId)> {
        self.state.records.get(id).copied()
    }

    /// The client `id` of the federation ([`Self::federation`]) by name.
    pub fn client_name(&self, id: ClientId) -> ClientName {
        self.state.name(id)
    }

    /// The names of the clients the store holds, in the federation's
    /// order.
    pub fn client_names(&self) -> Vec<ClientName> {
        self.state.names_of(&self.state.fed.client_ids())
    }

    /// The pending requests, removals and additions: each one's number and
    /// the clients it names, in order.
    pub fn pending_requests(&self) -> Vec<(u64, Vec<ClientName>)> {
        let fed = &self.state.fed;
        let removals = (fed.pending().iter()).map(|p| (p.number, p.request.named().collect()));
        let additions = (fed.pending_additions().iter()).map(|a| (a.number, a.named().collect()));
        let mut all: Vec<(u64, Vec<ClientId>)> = removals.chain(additions).collect();
        all.sort_unstable_by_key(|(n, _)| *n);
        all.into_iter()
            .map(|(n, mut c)| {
                c.sort_unstable();
                c.dedup();
                (n, self.state.names_of(&c))
            })
            .collect()
    }

    /// How long a request's model update may wait for other clients'
    /// requests before [`Self::apply_overdue`] runs it.
    pub fn max_defer(&self) -> Duration {
        Duration::from_secs(self.state.max_defer)
    }

    /// When the oldest pending model update is due (its erasure plus
    /// [`Self::max_defer`]), in seconds since the Unix epoch; `None` when
    /// nothing waits.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`].
    pub fn deadline(&self) -> Result<Option<u64>, StoreError> {
        let oldest = crate::audit::oldest_waiting(&self.conn, &self.state.fed)?;
        Ok(oldest.map(|t| t.saturating_add(self.state.max_defer)))
    }

    /// Where record `id` is: held by a client, forgotten (when, by which
    /// request, and the model version that no longer counts it), or
    /// unknown to the store.
    ///
    /// # Errors
    ///
    /// [`StoreError::Database`], [`StoreError::Corrupt`].
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    /// use mufc_store::{ClientRecords, FitOptions, RecordId, RecordStatus, Store};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let dir = tempfile::tempdir()?;
    /// let config = FederationConfig::new(2).gamma(0.1).validate()?;
    /// let (mut store, _) = Store::fit(dir.path().join("m.mufc"), ClientRecords::numbered(clients), &config, &FitOptions::new())?;
    /// store.forget(&[RecordId::from(7), RecordId::from(77)])?;
    /// assert!(matches!(store.locate(&RecordId::from(8))?, RecordStatus::Held { client } if client.as_str() == "0"));
    /// match store.locate(&RecordId::from(7))? {
    ///     RecordStatus::Forgotten(f) => assert_eq!((f.request, f.applied.map(|a| a.0)), (1, Some(2))),
    ///     other => panic!("{other:?}"),
    /// }
    /// assert_eq!(store.locate(&RecordId::from(700))?, RecordStatus::Unknown);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn locate(&self, id: &RecordId) -> Result<RecordStatus, StoreError> {
        if let Some(client) = self.record(id) {
            return Ok(RecordStatus::Held { client });
        }
        let found = tombstone::lookup(&self.conn, &self.state.secret, id, |c| {
            self.state.names.get(&ClientId(c)).cloned()
        })?;
        Ok(found.map_or(RecordStatus::Unknown, RecordStatus::Forgotten))
    }

    /// The server's centroids with their weights (empty once every client
    /// is removed), in the data's coordinates: mapped back through the
    /// [transform](Self::transform), if any.
    pub fn centroids(&self) -> Vec<Centroid> {
        self.state.centroids()
    }

    /// The index of the nearest centroid of each point (a column of
    /// `points`, in the data's coordinates: mapped through the
    /// [transform](Self::transform) first, if any; the lowest index on
    /// ties), in [`Self::centroids`]' order.
    ///
    /// # Errors
    ///
    /// [`StoreError::Dimension`], [`StoreError::NotFinite`],
    /// [`StoreError::NoModel`], [`StoreError::Withdrawn`].
    ///
    /// # Example
    ///
    /// See [`Store`].
    pub fn predict(&self, points: &DMatrix<f64>) -> Result<Vec<usize>, StoreError> {
        if let Some(w) = self.state.fed.withdrawal() {
            return Err(StoreError::Withdrawn(w.clone()));
        }
        let model = self.state.fed.server().model().ok_or(StoreError::NoModel)?;
        if points.nrows() != self.state.fed.dim() {
            return Err(StoreError::Dimension {
                expected: self.state.fed.dim(),
                found: points.nrows(),
            });
        }
        points
            .column_iter()
            .enumerate()
            .map(|(index, x)| {
                let x: Vec<f64> = x.iter().copied().collect();
                if !x.iter().all(|v| v.is_finite()) {
                    return Err(StoreError::NotFinite { index });
                }
                let x = match &self.state.transform {
                    Some(t) => t.apply(&x),
                    None => x,
                };
                model.predict(&x).ok_or(StoreError::NoModel)
            })
            .collect()
    }

    /// Test hook: the next requests fail at `at` (`None`: no more), rolled
    /// back with [`StoreError::InjectedFault`]. See [`FaultPoint`].
    #[doc(hidden)]
    pub fn inject_fault(&mut self, at: Option<FaultPoint>) {
        self.fault = at;
    }
}
