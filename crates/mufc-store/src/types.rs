//! The store's inputs: the clients' data with their names and record
//! ids, the options of a new store, a centroid.

use std::time::Duration;

use seeding::{BoxTransform, Dataset};

use crate::error::StoreError;
use crate::record::{ClientName, RecordId};

/// One client's data for [`Store::fit`](crate::Store::fit): its name, its
/// points and the id of each point ([`RecordId`], in the points' order).
///
/// # Example
///
/// ```
/// use mufc_store::{ClientName, ClientRecords, RecordId};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let data = Dataset::new(DMatrix::from_fn(2, 3, |r, c| (r + c) as f64 / 10.0))?;
/// let ids = vec![RecordId::parse("P-900")?, RecordId::from(17), RecordId::from(5)];
/// let c = ClientRecords::new(ClientName::new("site-4")?, data.clone(), ids)?;
/// assert_eq!(c.records()[1], RecordId::from(17));
/// assert_eq!(c.name().as_str(), "site-4");
/// assert!(ClientRecords::new(ClientName::new("site-4")?, data, vec![RecordId::from(1)]).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct ClientRecords {
    name: ClientName,
    data: Dataset,
    records: Vec<RecordId>,
}

impl ClientRecords {
    /// Client `name` holding `data`, whose point at position `i` is
    /// record `records[i]`.
    ///
    /// # Errors
    ///
    /// [`StoreError::RecordCount`] unless there is one record per point.
    pub fn new(
        name: ClientName,
        data: Dataset,
        records: Vec<RecordId>,
    ) -> Result<Self, StoreError> {
        if records.len() != data.len() {
            return Err(StoreError::RecordCount {
                client: name,
                points: data.len(),
                records: records.len(),
            });
        }
        Ok(Self {
            name,
            data,
            records,
        })
    }

    /// Clients named `0`, `1`, ... holding `clients`, their records
    /// numbered by row of the concatenated data: client 0's points are
    /// records `0 .. n0`, client 1's `n0 .. n0 + n1`, ... (data without
    /// an id column).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc_store::{ClientRecords, RecordId};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let a = Dataset::new(DMatrix::from_fn(1, 2, |_, c| c as f64 / 10.0))?;
    /// let b = Dataset::new(DMatrix::from_fn(1, 3, |_, c| c as f64 / 10.0))?;
    /// let v = ClientRecords::numbered(vec![a, b]);
    /// assert_eq!(v[1].name().as_str(), "1");
    /// assert_eq!(v[1].records(), &[RecordId::from(2), RecordId::from(3), RecordId::from(4)]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn numbered(clients: Vec<Dataset>) -> Vec<Self> {
        let mut next = 0i64;
        clients
            .into_iter()
            .zip(0u64..)
            .map(|(data, l)| {
                let records = (0..data.len())
                    .map(|_| {
                        let r = RecordId::from(next);
                        next = next.saturating_add(1);
                        r
                    })
                    .collect();
                Self {
                    // A number is a name.
                    name: ClientName::new(&l.to_string())
                        .unwrap_or_else(|_| unreachable!("a number is a valid name")),
                    data,
                    records,
                }
            })
            .collect()
    }

    /// The client's name.
    pub fn name(&self) -> &ClientName {
        &self.name
    }

    /// The client's points.
    pub fn data(&self) -> &Dataset {
        &self.data
    }

    /// The record id of each point, in the points' order.
    pub fn records(&self) -> &[RecordId] {
        &self.records
    }

    pub(crate) fn into_parts(self) -> (ClientName, Dataset, Vec<RecordId>) {
        (self.name, self.data, self.records)
    }
}

/// What [`Store::fit`](crate::Store::fit) does when the file exists.
///
/// # Example
///
/// ```
/// use mufc_store::IfExists;
///
/// assert_ne!(IfExists::Refuse, IfExists::Replace);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IfExists {
    /// Refuse with [`StoreError::Exists`]: a store holds the only record
    /// of the requests it served.
    #[default]
    Refuse,
    /// Replace it (atomically: the new store is written next to it and
    /// renamed over it). The replaced store's tombstones carry over: a
    /// record it forgot may not come back (see [`OnForgotten`]).
    Replace,
}

/// What [`Store::fit`](crate::Store::fit) does with a record that the
/// store it replaces had forgotten ([`IfExists::Replace`]): a re-import
/// of the original data must not bring an erased record back silently.
///
/// # Example
///
/// ```
/// use mufc_store::OnForgotten;
///
/// assert_eq!(OnForgotten::default(), OnForgotten::Refuse);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnForgotten {
    /// Refuse the whole fit with [`StoreError::Forgotten`], naming them.
    #[default]
    Refuse,
    /// Leave them out of the new store and report them
    /// ([`Store::skipped`](crate::Store::skipped)).
    Skip,
}

/// How long a request's model update may wait for other clients'
/// requests by default: 7 days.
///
/// The wait exists for the model update only: the records' data is
/// erased from the store at once, whatever the policy. A week leaves time
/// for another client's request to join (so that the server learns a sum
/// of changes, not one client's), and keeps the model's own erasure well
/// inside the month that the GDPR (Art. 12(3)) allows for acting on a
/// request. A request still waiting then is applied alone, with a warning
/// in the audit log that says what the server learned.
pub const DEFAULT_MAX_DEFER: Duration = Duration::from_secs(7 * 24 * 3600);

/// The longest deferral a store takes (30 days): a model update that
/// waits longer would outlast the month the GDPR (Art. 12(3)) gives to act
/// on a request. [`Store::fit`](crate::Store::fit) refuses more.
pub const MAX_DEFER: Duration = Duration::from_secs(30 * 24 * 3600);

/// The options of a new store ([`Store::fit`](crate::Store::fit)).
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use mufc_store::{FitOptions, IfExists, DEFAULT_MAX_DEFER};
///
/// let o = FitOptions::new();
/// assert_eq!(o.if_exists(), IfExists::Refuse);
/// assert_eq!(o.max_defer(), DEFAULT_MAX_DEFER);
/// let o = o.replace(true).with_max_defer(Duration::from_secs(3600));
/// assert_eq!(o.if_exists(), IfExists::Replace);
/// assert_eq!(o.max_defer().as_secs(), 3600);
/// ```
#[derive(Clone, Debug, Default)]
pub struct FitOptions {
    if_exists: IfExists,
    transform: Option<BoxTransform>,
    max_defer: Option<Duration>,
    on_forgotten: OnForgotten,
}

impl FitOptions {
    /// Refuse an existing file, no transform, [`DEFAULT_MAX_DEFER`],
    /// refuse forgotten records.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replace an existing store (`true`) or refuse it.
    #[must_use]
    pub fn replace(mut self, replace: bool) -> Self {
        self.if_exists = if replace {
            IfExists::Replace
        } else {
            IfExists::Refuse
        };
        self
    }

    /// The data was mapped into the model's coordinates by `transform`
    /// (the clients' points are the mapped ones): the store keeps the
    /// map, so that [`Store::predict`](crate::Store::predict) takes
    /// points in the data's own coordinates and
    /// [`Store::centroids`](crate::Store::centroids) gives them there.
    #[must_use]
    pub fn with_transform(mut self, transform: Option<BoxTransform>) -> Self {
        self.transform = transform;
        self
    }

    /// How long a request's model update may wait for other clients'
    /// requests ([`DEFAULT_MAX_DEFER`]); see
    /// [`Store::apply_overdue`](crate::Store::apply_overdue).
    #[must_use]
    pub fn with_max_defer(mut self, max_defer: Duration) -> Self {
        self.max_defer = Some(max_defer);
        self
    }

    /// What to do with records the replaced store had forgotten.
    #[must_use]
    pub fn on_forgotten(mut self, on: OnForgotten) -> Self {
        self.on_forgotten = on;
        self
    }

    /// Whether an existing store is replaced.
    pub fn if_exists(&self) -> IfExists {
        self.if_exists
    }

    /// The input transform.
    pub fn transform(&self) -> Option<&BoxTransform> {
        self.transform.as_ref()
    }

    /// The longest wait of a model update.
    pub fn max_defer(&self) -> Duration {
        self.max_defer.unwrap_or(DEFAULT_MAX_DEFER)
    }

    /// What to do with forgotten records.
    pub fn forgotten(&self) -> OnForgotten {
        self.on_forgotten
    }
}

/// A server centroid and its weight (the number of client points its
/// cluster stands for).
///
/// # Example
///
/// ```
/// use mufc_store::Centroid;
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
