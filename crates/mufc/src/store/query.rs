//! What a store tells: its model, configuration and records
//! ([`Store::centroids`], [`Store::predict`] and the accessors).

use std::path::Path;

use nalgebra::DMatrix;
use seeding::{BoxTransform, PointId};

use super::error::StoreError;
use super::fault::FaultPoint;
use super::handle::Store;
use super::record::RecordId;
use super::types::Centroid;
use crate::{ClientId, Federation, PendingRequest, ValidConfig};

impl Store {
    /// The map from the data's coordinates to the model's, if training
    /// used one ([`Self::fit_transformed`]).
    pub fn transform(&self) -> Option<&BoxTransform> {
        self.transform.as_ref()
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The federation: clients, server, reports (read only: requests go
    /// through [`Self::forget`] so that they are committed).
    pub fn federation(&self) -> &Federation {
        &self.fed
    }

    /// The configuration (resolved, as [`Federation::config`]).
    pub fn config(&self) -> &ValidConfig {
        self.fed.config()
    }

    /// The number of server clusters, K.
    pub fn k(&self) -> usize {
        self.fed.config().server().k()
    }

    /// The dimension of the points.
    pub fn dim(&self) -> usize {
        self.fed.dim()
    }

    /// The clients' ids, in order.
    pub fn client_ids(&self) -> Vec<ClientId> {
        self.fed.client_ids()
    }

    /// The number of points the clients hold (those of pending requests
    /// included).
    pub fn num_points(&self) -> usize {
        self.fed.num_points()
    }

    /// The model version: 1 after training, one more for every applied
    /// request.
    pub fn model_version(&self) -> u64 {
        self.model_version
    }

    /// The aggregation rounds run (as [`Federation::rounds`]).
    pub fn rounds(&self) -> u64 {
        self.fed.rounds()
    }

    /// The requests deferred by the privacy policy, not applied yet.
    pub fn pending(&self) -> &[PendingRequest] {
        self.fed.pending()
    }

    /// Where record `id` is: its client and its point id there (`None`
    /// once forgotten, or if never held).
    pub fn record(&self, id: RecordId) -> Option<(ClientId, PointId)> {
        self.records.get(&id).copied()
    }

    /// The server's centroids with their weights (empty once every client
    /// is removed), in the data's coordinates: mapped back through the
    /// [transform](Self::transform), if any.
    pub fn centroids(&self) -> Vec<Centroid> {
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

    /// The index of the nearest centroid of each point (a column of
    /// `points`, in the data's coordinates: mapped through the
    /// [transform](Self::transform) first, if any; the lowest index on
    /// ties), in [`Self::centroids`]' order.
    ///
    /// # Errors
    ///
    /// [`StoreError::Dimension`], [`StoreError::NotFinite`],
    /// [`StoreError::NoModel`].
    ///
    /// # Example
    ///
    /// See [`Store`].
    pub fn predict(&self, points: &DMatrix<f64>) -> Result<Vec<usize>, StoreError> {
        let model = self.fed.server().model().ok_or(StoreError::NoModel)?;
        if points.nrows() != self.fed.dim() {
            return Err(StoreError::Dimension {
                expected: self.fed.dim(),
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
                let x = match &self.transform {
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
