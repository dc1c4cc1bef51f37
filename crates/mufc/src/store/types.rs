//! The store's inputs and reports: the clients' data with record ids, the
//! report of a request, an audit entry, a centroid.

use std::time::Duration;

use seeding::Dataset;

use super::error::StoreError;
use super::record::RecordId;
use crate::{ClientId, RemovalOutcome, RemovalReport};

/// One client's data for [`Store::fit`](super::Store::fit): its id, its
/// points and the stable id of each point ([`RecordId`], in the points'
/// order).
///
/// # Example
///
/// ```
/// use mufc::ClientId;
/// use mufc::store::{ClientRecords, RecordId};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let data = Dataset::new(DMatrix::from_fn(2, 3, |r, c| (r + c) as f64 / 10.0))?;
/// let c = ClientRecords::new(ClientId(4), data.clone(), vec![RecordId(900), RecordId(17), RecordId(5)])?;
/// assert_eq!(c.records()[1], RecordId(17));
/// assert!(ClientRecords::new(ClientId(4), data, vec![RecordId(1)]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ClientRecords {
    id: ClientId,
    data: Dataset,
    records: Vec<RecordId>,
}

impl ClientRecords {
    /// Client `id` holding `data`, whose point at position `i` is record
    /// `records[i]`.
    ///
    /// # Errors
    ///
    /// [`StoreError::RecordCount`] unless there is one record per point.
    pub fn new(id: ClientId, data: Dataset, records: Vec<RecordId>) -> Result<Self, StoreError> {
        if records.len() != data.len() {
            return Err(StoreError::RecordCount {
                client: id,
                points: data.len(),
                records: records.len(),
            });
        }
        Ok(Self { id, data, records })
    }

    /// Clients `ClientId(0)`, `ClientId(1)`, ... holding `clients`, their
    /// records numbered by row of the concatenated data: client 0's
    /// points are records `0 .. n0`, client 1's `n0 .. n0 + n1`, ...
    /// (data without an id column).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::store::{ClientRecords, RecordId};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let a = Dataset::new(DMatrix::from_fn(1, 2, |_, c| c as f64 / 10.0))?;
    /// let b = Dataset::new(DMatrix::from_fn(1, 3, |_, c| c as f64 / 10.0))?;
    /// let v = ClientRecords::numbered(vec![a, b]);
    /// assert_eq!(v[1].records(), &[RecordId(2), RecordId(3), RecordId(4)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn numbered(clients: Vec<Dataset>) -> Vec<Self> {
        let mut next = 0u64;
        clients
            .into_iter()
            .zip(0u64..)
            .map(|(data, l)| {
                let records = (0..data.len())
                    .map(|_| {
                        let r = RecordId(next);
                        next = next.saturating_add(1);
                        r
                    })
                    .collect();
                Self {
                    id: ClientId(l),
                    data,
                    records,
                }
            })
            .collect()
    }

    /// The client's id.
    pub fn id(&self) -> ClientId {
        self.id
    }

    /// The client's points.
    pub fn data(&self) -> &Dataset {
        &self.data
    }

    /// The record id of each point, in the points' order.
    pub fn records(&self) -> &[RecordId] {
        &self.records
    }

    pub(super) fn into_parts(self) -> (ClientId, Dataset, Vec<RecordId>) {
        (self.id, self.data, self.records)
    }
}

/// What [`Store::fit`](super::Store::fit) does when the file exists.
///
/// # Example
///
/// ```
/// use mufc::store::IfExists;
///
/// assert_ne!(IfExists::Refuse, IfExists::Replace);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IfExists {
    /// Refuse with [`StoreError::Exists`]: a store holds the only record
    /// of the requests it served.
    Refuse,
    /// Replace it (atomically: the new store is written next to it and
    /// renamed over it).
    Replace,
}

/// What one request did ([`Store::forget`](super::Store::forget)): returned
/// only once it is committed.
///
/// # Example
///
/// ```
/// use mufc::FederationConfig;
/// use mufc::store::{ClientRecords, IfExists, RecordId, Store};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let clients: Vec<Dataset> = (0..3)
///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
///     .collect::<Result<_, _>>()?;
/// let dir = tempfile::tempdir()?;
/// let config = FederationConfig::new(2).gamma(0.1).validate()?;
/// let (mut store, _) = Store::fit(dir.path().join("m.mufc"), ClientRecords::numbered(clients), &config, IfExists::Refuse)?;
/// // A lone client's request waits (docs/threat-model.md U3) ...
/// let r = store.forget(&[RecordId(3)])?;
/// assert!(r.outcome.is_deferred());
/// assert_eq!((r.version_before, r.version_after), (1, 1));
/// // ... until another client's request applies both.
/// let r = store.forget(&[RecordId(40)])?;
/// assert_eq!(r.applied_requests, vec![1, 2]);
/// assert_eq!(r.removed_points, 2);
/// assert_eq!((r.version_before, r.version_after), (1, 2));
/// assert!(r.centroid_shift.is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ForgetReport {
    /// The request's number (1 for the store's first request).
    pub request: u64,
    /// Applied, or deferred by the privacy policy (then nothing is removed
    /// yet; see the module docs).
    pub outcome: RemovalOutcome,
    /// The records this request named (0 for a whole client).
    pub records: usize,
    /// The clients this request named, in id order.
    pub clients: Vec<ClientId>,
    /// The requests this round applied (earlier deferred ones and this
    /// one), in order; empty when deferred.
    pub applied_requests: Vec<u64>,
    /// The points removed by the round, whole clients included.
    pub removed_points: usize,
    /// The clients removed whole.
    pub removed_clients: Vec<ClientId>,
    /// The clients that reseeded (Algorithm 3).
    pub reseeded: Vec<ClientId>,
    /// How far the server's centroids moved, in the data's coordinates:
    /// the Hausdorff distance between the centroids before and after (the
    /// largest distance from a centroid of either set to the nearest of
    /// the other, so the order K-means lists them in does not matter);
    /// `None` when there is no model before or after; `Some(0.0)` when
    /// deferred.
    pub centroid_shift: Option<f64>,
    /// The model version before the request (1 after training).
    pub version_before: u64,
    /// The model version after it (one more when applied).
    pub version_after: u64,
    /// When the request was served, in seconds since the Unix epoch.
    pub time: u64,
    /// The library's work: unlearning, the aggregation round, the server's
    /// update.
    pub apply_time: Duration,
    /// Writing and committing the transaction.
    pub commit_time: Duration,
    /// The library's report of the request.
    pub removal: RemovalReport,
}

/// Whether an audited request was applied.
///
/// # Example
///
/// ```
/// use mufc::store::AuditOutcome;
///
/// assert_eq!(AuditOutcome::Deferred.name(), "deferred");
/// assert_eq!(AuditOutcome::from_name("applied"), Some(AuditOutcome::Applied));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditOutcome {
    /// The client's points were removed from the model in this request's
    /// round.
    Applied,
    /// The request is pending (the privacy policy waits for other
    /// clients' requests); the client's points are still in the model.
    Deferred,
}

impl AuditOutcome {
    /// The name stored in the `audit` table.
    pub fn name(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::Deferred => "deferred",
        }
    }

    /// The outcome named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "applied" => Some(Self::Applied),
            "deferred" => Some(Self::Deferred),
            _ => None,
        }
    }
}

/// One row of the audit log ([`Store::history`](super::Store::history)):
/// what a request did to one client. Never the removed points'
/// coordinates.
///
/// # Example
///
/// ```
/// use mufc::ClientId;
/// use mufc::store::{AuditEntry, AuditOutcome};
///
/// let e = AuditEntry {
///     request: 3, time: 1_790_000_000, client: ClientId(4), points: 2, whole_client: false,
///     reseeded: false, outcome: AuditOutcome::Applied, applied: vec![2, 3],
///     version_before: 1, version_after: 2,
/// };
/// assert_eq!(e.points, 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditEntry {
    /// The request's number.
    pub request: u64,
    /// When it was served, in seconds since the Unix epoch.
    pub time: u64,
    /// The client.
    pub client: ClientId,
    /// The client's points removed (applied) or named (deferred).
    pub points: usize,
    /// Whether the client was removed whole.
    pub whole_client: bool,
    /// Whether the client reseeded (Algorithm 3).
    pub reseeded: bool,
    /// Applied or deferred.
    pub outcome: AuditOutcome,
    /// The requests whose points of this client the round removed (an
    /// earlier deferred request's points are applied by a later request);
    /// empty when deferred.
    pub applied: Vec<u64>,
    /// The model version before the request.
    pub version_before: u64,
    /// The model version after it.
    pub version_after: u64,
}

/// A server centroid and its weight (the number of client points its
/// cluster stands for).
///
/// # Example
///
/// ```
/// use mufc::store::Centroid;
///
/// let c = Centroid { coords: vec![0.1, -0.2], weight: 40 };
/// assert_eq!(c.coords.len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Centroid {
    /// Its coordinates.
    pub coords: Vec<f64>,
    /// Its cluster's total weight.
    pub weight: u64,
}
