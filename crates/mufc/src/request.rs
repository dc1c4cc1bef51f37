//! Removal requests (the input of Algorithm 4), records that arrive
//! (their counterpart, issue 29), and a request of either kind that waits.

use seeding::{Dataset, PointId};

use crate::ClientId;

/// A removal request (the input of Algorithm 4): points of one or several
/// clients, and whole clients, served in one round.
///
/// # Example
///
/// ```
/// use mufc::{ClientId, RemovalRequest};
/// use seeding::PointId;
///
/// let one = RemovalRequest::points(ClientId(2), vec![PointId(7)]);
/// assert_eq!(one.num_points(), 1);
/// let batch = RemovalRequest::new()
///     .with_points(ClientId(0), vec![PointId(1), PointId(4)])
///     .with_points(ClientId(5), vec![PointId(9)])
///     .with_clients(vec![ClientId(3)]);
/// assert_eq!(batch.num_points(), 3);
/// assert_eq!(batch.clients_removed(), &[ClientId(3)]);
/// assert!(RemovalRequest::new().is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemovalRequest {
    points: Vec<(ClientId, Vec<PointId>)>,
    clients: Vec<ClientId>,
}

impl RemovalRequest {
    /// An empty request (serving it is an error: add points or clients).
    pub fn new() -> Self {
        Self::default()
    }

    /// `ids` of one client (single-client removal, Section 5.3).
    pub fn points(client: ClientId, ids: Vec<PointId>) -> Self {
        Self::new().with_points(client, ids)
    }

    /// Whole clients (multi-client removal, Section 5.3).
    pub fn clients(clients: Vec<ClientId>) -> Self {
        Self::new().with_clients(clients)
    }

    /// This request plus `ids` of `client`.
    #[must_use]
    pub fn with_points(mut self, client: ClientId, ids: Vec<PointId>) -> Self {
        self.points.push((client, ids));
        self
    }

    /// This request plus whole clients.
    #[must_use]
    pub fn with_clients(mut self, clients: Vec<ClientId>) -> Self {
        self.clients.extend(clients);
        self
    }

    /// The points named, per client.
    pub fn point_entries(&self) -> &[(ClientId, Vec<PointId>)] {
        &self.points
    }

    /// The clients to remove whole.
    pub fn clients_removed(&self) -> &[ClientId] {
        &self.clients
    }

    /// The number of points named (whole clients not counted).
    pub fn num_points(&self) -> usize {
        self.points.iter().map(|(_, ids)| ids.len()).sum()
    }

    /// Whether the request names nothing.
    pub fn is_empty(&self) -> bool {
        self.clients.is_empty() && self.points.iter().all(|(_, ids)| ids.is_empty())
    }

    /// Every client the request names, points or whole (a client may
    /// come twice).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, RemovalRequest};
    /// use seeding::PointId;
    ///
    /// let r = RemovalRequest::points(ClientId(1), vec![PointId(4)]).with_clients(vec![ClientId(2)]);
    /// assert_eq!(r.named().collect::<Vec<_>>(), [ClientId(2), ClientId(1)]);
    /// ```
    pub fn named(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.clients
            .iter()
            .copied()
            .chain(self.points.iter().map(|(c, _)| *c))
    }

    /// The part of this request that names the clients `keep` accepts.
    pub(crate) fn restricted(&self, keep: impl Fn(ClientId) -> bool) -> Self {
        Self {
            points: self
                .points
                .iter()
                .filter(|(c, _)| keep(*c))
                .cloned()
                .collect(),
            clients: self.clients.iter().copied().filter(|c| keep(*c)).collect(),
        }
    }
}

/// A removal request that [`Federation::remove`](crate::Federation::remove)
/// accepted and keeps until enough clients have one
/// ([`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients));
/// see [`Federation::pending`](crate::Federation::pending).
///
/// # Example
///
/// ```
/// use mufc::{ClientId, PendingRequest, RemovalRequest};
/// use seeding::PointId;
///
/// let p = PendingRequest { number: 1, request: RemovalRequest::points(ClientId(2), vec![PointId(7)]) };
/// assert_eq!(p.request.num_points(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PendingRequest {
    /// The request's number (1 for the first request the federation
    /// accepted; see [`RemovalReport::request`](crate::RemovalReport::request)).
    pub number: u64,
    /// The request as given.
    pub request: RemovalRequest,
}

/// Records that arrive (the counterpart of a [`RemovalRequest`]): new
/// points for clients of the federation, and new clients with their
/// points, served in one round
/// ([`Federation::add`](crate::Federation::add)). Each client's records are
/// a [`Dataset`] whose ids it does not hold yet. A new client is named
/// apart ([`Self::new_client`]), so that a mistyped id is an error, not a
/// member.
///
/// # Example
///
/// ```
/// use mufc::{AdditionRequest, ClientId};
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, PointId};
///
/// let one = Dataset::with_ids(DMatrix::from_column_slice(2, 1, &[0.1, 0.2]), vec![PointId(40)])?;
/// let two = Dataset::with_ids(DMatrix::from_column_slice(2, 2, &[0.0, 0.1, -0.1, 0.3]), vec![PointId(41), PointId(42)])?;
/// let request = AdditionRequest::records(ClientId(0), one).with_records(ClientId(2), two);
/// assert_eq!(request.num_points(), 3);
/// assert_eq!(request.named().collect::<Vec<_>>(), [ClientId(0), ClientId(2)]);
/// assert!(AdditionRequest::new().is_empty());
///
/// // Client 7 joins the federation with its records.
/// let seven = Dataset::new(DMatrix::from_column_slice(2, 2, &[0.2, 0.2, -0.3, 0.1]))?;
/// let joining = request.with_new_client(ClientId(7), seven);
/// assert_eq!(joining.num_points(), 5);
/// assert_eq!(joining.new_clients()[0].0, ClientId(7));
/// assert_eq!(joining.named().collect::<Vec<_>>(), [ClientId(0), ClientId(2), ClientId(7)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AdditionRequest {
    records: Vec<(ClientId, Dataset)>,
    /// The clients that join with the request, each with its records.
    joining: Vec<(ClientId, Dataset)>,
}

impl AdditionRequest {
    /// An empty request (serving it is an error: add records).
    pub fn new() -> Self {
        Self::default()
    }

    /// `records` for `client`.
    pub fn records(client: ClientId, records: Dataset) -> Self {
        Self::new().with_records(client, records)
    }

    /// This request plus `records` for `client`.
    #[must_use]
    pub fn with_records(mut self, client: ClientId, records: Dataset) -> Self {
        self.records.push((client, records));
        self
    }

    /// `client`, new to the federation, joining it with `records` (its
    /// first; it trains on them as it would have at training).
    pub fn new_client(client: ClientId, records: Dataset) -> Self {
        Self::new().with_new_client(client, records)
    }

    /// This request plus the new client `client` with `records`.
    #[must_use]
    pub fn with_new_client(mut self, client: ClientId, records: Dataset) -> Self {
        self.joining.push((client, records));
        self
    }

    /// The records for clients of the federation, per client, as given.
    pub fn entries(&self) -> &[(ClientId, Dataset)] {
        &self.records
    }

    /// The new clients, each with its records, as given.
    pub fn new_clients(&self) -> &[(ClientId, Dataset)] {
        &self.joining
    }

    /// Every entry: the records for clients of the federation, then the
    /// new clients'.
    pub(crate) fn all_entries(&self) -> impl Iterator<Item = &(ClientId, Dataset)> {
        self.records.iter().chain(&self.joining)
    }

    /// The number of records (points, not weights), the new clients'
    /// included.
    pub fn num_points(&self) -> usize {
        self.all_entries().map(|(_, d)| d.len()).sum()
    }

    /// Whether the request holds no record.
    pub fn is_empty(&self) -> bool {
        self.all_entries().all(|(_, d)| d.is_empty())
    }

    /// Every client the request names, in its order, the new clients
    /// last (a client may come twice: serving it is then an error).
    pub fn named(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.all_entries().map(|(c, _)| *c)
    }
}

/// An [`AdditionRequest`] that [`Federation::add`](crate::Federation::add)
/// accepted and whose round waits, as a [`PendingRequest`] does: the
/// clients hold its records already, the model does not count them yet.
/// It names the records' ids (the records are the clients').
///
/// # Example
///
/// ```
/// use mufc::{ClientId, PendingAddition};
/// use seeding::PointId;
///
/// let p = PendingAddition { number: 3, points: vec![(ClientId(1), vec![PointId(40)])] };
/// assert_eq!(p.named().collect::<Vec<_>>(), [ClientId(1)]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PendingAddition {
    /// The request's number, in the one sequence of every request.
    pub number: u64,
    /// The ids of the records added, per client still waiting.
    pub points: Vec<(ClientId, Vec<PointId>)>,
}

impl PendingAddition {
    /// The clients it names.
    pub fn named(&self) -> impl Iterator<Item = ClientId> + '_ {
        self.points.iter().map(|(c, _)| *c)
    }
}
