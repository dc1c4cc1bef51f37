//! The federation: Algorithm 1 (training) and Algorithm 4 (unlearning)
//! over many clients in one process.

mod exchange;
mod requests;
mod setup;
mod unlearn;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use seeding::{Dataset, Quantizer};

#[cfg(feature = "store")]
pub(crate) use requests::Loss;
pub(crate) use setup::Setup;

use crate::aggregation::Aggregation;
use crate::{
    Client, ClientId, FitReport, MufcError, MufcResult, PendingRequest, RemovalReport,
    RemovalRequest, Server, StageTimes, ValidConfig,
};
use exchange::{empty_plain, exchange, keep_encoded, plain_bytes, plain_of};

/// L clients and a server running federated K-means with secure
/// aggregation (Algorithm 1 of the paper) and exact unlearning
/// (Algorithm 4), in one process.
///
/// [`Federation::new`] trains: every client clusters its own data (in
/// parallel with the `parallel` feature), quantizes its centroids into a
/// sparse histogram and sends a masked sketch of it; the server sums the
/// sketches, decodes the aggregate histogram, builds its points and runs
/// its K-means. [`Federation::remove`] serves a removal request: the
/// affected clients unlearn, a fresh aggregation round runs, the server
/// decodes the change and updates its K-means. After any sequence of
/// removals the state is, bit for bit, the state of a federation built
/// from the remaining data with the same configuration, as long as no
/// client drops out (see the crate docs, "Exactness"; with
/// [`Masking::SecAgg`](crate::Masking::SecAgg) and dropouts the server
/// holds the included clients' data).
///
/// # Example
///
/// ```
/// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, PointId};
///
/// // Three clients with points in the box [-1/2, 1/2]^2.
/// let clients: Vec<Dataset> = (0..3)
///     .map(|l| Dataset::new(DMatrix::from_fn(2, 40, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
///     .collect::<Result<_, _>>()?;
/// let config = FederationConfig::new(3).client_k(2).gamma(0.05).seed(1).validate()?;
/// let mut fed = Federation::new(clients.clone(), &config)?;
/// assert_eq!(fed.server().total_count(), 120);
///
/// // Unlearn a point of client 1 and one of client 2, in one round (a
/// // round in which one client alone changes waits for another: the
/// // server would learn that client's change, docs/threat-model.md U3).
/// let request = RemovalRequest::points(ClientId(1), vec![PointId(5)])
///     .with_points(ClientId(2), vec![PointId(8)]);
/// let report = fed.remove(&request)?;
/// assert_eq!(report.removed_points, 2);
///
/// // The same as training on the remaining data (with the resolved config).
/// let mut rest = clients;
/// rest[1] = rest[1].without(&[PointId(5)])?;
/// rest[2] = rest[2].without(&[PointId(8)])?;
/// let retrained = Federation::new(rest, fed.config())?;
/// assert_eq!(fed.server().counts(), retrained.server().counts());
/// assert_eq!(fed.server().centroids(), retrained.server().centroids());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Federation {
    config: ValidConfig,
    dim: usize,
    quantizer: Option<Quantizer>,
    clients: Vec<Client>,
    aggregation: Option<Aggregation>,
    server: Server,
    fit_report: FitReport,
    history: Vec<RemovalReport>,
    /// Requests applied by rounds whose reports are not in `history` (a
    /// federation loaded from a store keeps only the last report).
    earlier_requests: u64,
    pending: Vec<PendingRequest>,
    messages: Option<Vec<(ClientId, Vec<u8>)>>,
}

impl Federation {
    /// Trains a federation (Algorithm 1) over `clients`, whose ids are
    /// their positions: `ClientId(0)`, `ClientId(1)`, ...
    ///
    /// # Errors
    ///
    /// As [`Self::with_ids`].
    pub fn new(clients: Vec<Dataset>, config: &ValidConfig) -> MufcResult<Self> {
        let clients = clients
            .into_iter()
            .enumerate()
            .map(|(i, d)| (ClientId(i as u64), d))
            .collect();
        Self::with_ids(clients, config)
    }

    /// Trains a federation (Algorithm 1) over named clients.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoClients`], [`MufcError::DuplicateClient`],
    /// [`MufcError::EmptyClient`], [`MufcError::DimensionMismatch`],
    /// [`MufcError::OutsideBox`] (SCMA modes),
    /// [`MufcError::TooFewDistinctPoints`], [`MufcError::TooFewClients`]
    /// (fewer clients than
    /// [`FederationConfig::min_clients`](crate::FederationConfig::min_clients),
    /// default 3, in every privacy mode),
    /// [`MufcError::InvalidConfig`] when the points exceed `max_points`,
    /// [`MufcError::IntegerDecoderTooLarge`],
    /// [`MufcError::TooManyDropouts`] (with
    /// [`Masking::SecAgg`](crate::Masking::SecAgg)), and the errors of the lower
    /// crates (for instance coordinates beyond the fixed-point range of
    /// [`seeding::ExactKMeans`], 2^16, in the full and plain modes).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, MufcError};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let inside = Dataset::new(DMatrix::from_fn(1, 10, |_, c| c as f64 / 20.0))?;
    /// let outside = Dataset::new(DMatrix::from_fn(1, 10, |_, c| c as f64))?;
    /// let config = FederationConfig::new(2).validate()?;
    /// let err = Federation::with_ids(vec![(ClientId(7), inside), (ClientId(9), outside)], &config).unwrap_err();
    /// assert!(matches!(err, MufcError::OutsideBox { client: ClientId(9), .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_ids(clients: Vec<(ClientId, Dataset)>, config: &ValidConfig) -> MufcResult<Self> {
        let wall = Instant::now();
        let setup = Setup::new(clients, config)?;
        let mut aggregation = setup.aggregation(None)?;
        let mut server = setup.server()?;
        let fitted = setup.fit_clients()?;
        let own: Vec<Duration> = fitted.iter().map(|(_, t)| *t).collect();
        let mut clients: Vec<Client> = fitted.into_iter().map(|(c, _)| c).collect();
        let all: Vec<&Client> = clients.iter().collect();
        let every_centroid = || {
            clients
                .iter()
                .map(|c| (empty_plain(c.id(), setup.dim), plain_of(c)))
                .collect()
        };
        let exchanged = exchange(&mut aggregation, &mut server, &all, every_centroid, None)?;
        let mut times = StageTimes::default();
        let bytes_per_client = exchanged.account(
            &mut times,
            &own,
            plain_bytes(setup.config.client_k(), setup.dim),
        );
        let mut messages = None;
        let done = exchanged.commit(&mut aggregation, &mut messages);
        let included = done
            .included
            .unwrap_or_else(|| clients.iter().map(Client::id).collect());
        let dropped = done.dropped;
        keep_encoded(&mut clients, done.encoded);
        times.wall = wall.elapsed();
        let fit_report = FitReport {
            times,
            bytes_per_client,
            nonzero_bins: server.nonzero_bins(),
            sketch: aggregation.as_ref().map(Aggregation::info),
            server_points: server.data().len(),
            included,
            dropped,
        };
        Ok(Self {
            config: setup.config,
            dim: setup.dim,
            quantizer: setup.quantizer,
            clients,
            aggregation,
            server,
            fit_report,
            history: Vec::new(),
            earlier_requests: 0,
            pending: Vec::new(),
            messages,
        })
    }

    /// Assembles a federation from restored parts (used by loading).
    #[cfg(feature = "serde")]
    pub(crate) fn from_parts(
        setup: Setup,
        clients: Vec<Client>,
        aggregation: Option<Aggregation>,
        server: Server,
        fit_report: FitReport,
        history: Vec<RemovalReport>,
        pending: Vec<PendingRequest>,
    ) -> Self {
        Self {
            config: setup.config,
            dim: setup.dim,
            quantizer: setup.quantizer,
            clients,
            aggregation,
            server,
            fit_report,
            history,
            earlier_requests: 0,
            pending,
            messages: None,
        }
    }

    /// The configuration, with `gamma` and `max_points` resolved: build a
    /// federation from it on other data to retrain with the same grid and
    /// field.
    pub fn config(&self) -> &ValidConfig {
        &self.config
    }

    /// The dimension of the points.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The quantizer (none in plain mode).
    pub fn quantizer(&self) -> Option<&Quantizer> {
        self.quantizer.as_ref()
    }

    /// The clients, in id order.
    pub fn clients(&self) -> &[Client] {
        &self.clients
    }

    /// The client `id`, if present.
    pub fn client(&self, id: ClientId) -> Option<&Client> {
        self.position(id).ok().map(|p| &self.clients[p])
    }

    /// The ids of the clients, in order.
    pub fn client_ids(&self) -> Vec<ClientId> {
        self.clients.iter().map(Client::id).collect()
    }

    /// The total number of points the clients hold.
    pub fn num_points(&self) -> usize {
        self.clients.iter().map(|c| c.data().len()).sum()
    }

    /// The server.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// What training cost (times of the first round; unchanged by
    /// removals).
    pub fn fit_report(&self) -> &FitReport {
        &self.fit_report
    }

    /// The reports of every removal round applied, in order (a round may
    /// cover several requests, [`RemovalReport::requests`]; deferred
    /// requests have no entry until a round applies them).
    pub fn history(&self) -> &[RemovalReport] {
        &self.history
    }

    /// The number of requests applied, by every round since training
    /// (those of reports a store no longer keeps included).
    pub fn applied_requests(&self) -> u64 {
        let kept: u64 = self.history.iter().map(|r| r.requests.len() as u64).sum();
        self.earlier_requests.saturating_add(kept)
    }

    /// Says that `n` requests were applied by rounds whose reports are
    /// not in the history (a store keeps only the last report: its audit
    /// log is the history).
    #[cfg(feature = "store")]
    pub(crate) fn set_earlier_requests(&mut self, n: u64) {
        self.earlier_requests = n;
    }

    /// The number of aggregation rounds started (training included, and
    /// failed rounds too; none in plain mode). A round consumes its number
    /// before any mask exists, so no round number is ever run twice by one
    /// federation; the counter is saved with it.
    pub fn rounds(&self) -> u64 {
        self.aggregation.as_ref().map_or(0, Aggregation::rounds)
    }

    /// The number and the masked vectors of the last aggregation round
    /// started, failed or not (recorded with
    /// [`FederationConfig::record_messages`](crate::FederationConfig::record_messages)).
    #[cfg(all(test, feature = "serde"))]
    pub(crate) fn last_masked_inputs(&self) -> Option<&(u64, crate::aggregation::MaskedInputs)> {
        self.aggregation.as_ref().and_then(Aggregation::last_masked)
    }

    /// Drops every client's kept sketch: the next round encodes every bin
    /// afresh, as before the clients kept them (tests).
    #[cfg(test)]
    pub(crate) fn forget_encoded(&mut self) {
        self.clients.iter_mut().for_each(Client::forget_encoded);
    }

    /// The sketch parameters of the clients' messages (none in plain
    /// mode).
    #[cfg(test)]
    pub(crate) fn sketch_params(&self) -> Option<&syndrome_agg::ValidAnyParams> {
        self.aggregation.as_ref().map(Aggregation::params)
    }

    /// Makes the next aggregation round fail right after its masked
    /// vectors exist (fault injection for tests).
    #[cfg(all(test, feature = "serde"))]
    pub(crate) fn fail_next_round_after_masking(&mut self) {
        if let Some(agg) = &mut self.aggregation {
            agg.fail_next_round_after_masking();
        }
    }

    /// The clients whose data the server's aggregate holds: those the last
    /// aggregation round included (every client, unless some dropped out
    /// of a [`Masking::SecAgg`](crate::Masking::SecAgg) round).
    ///
    /// # Example
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use mufc::{Channel, ClientId, Federation, FederationConfig, Masks, RemovalRequest, SecAggOptions};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..8)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// // The dropout-tolerant protocol; each client drops out of a round
    /// // with probability 0.2.
    /// let config = FederationConfig::new(2).gamma(0.1).channel(Channel::scma(Masks::SecAgg(SecAggOptions::new().dropout(0.2)))).seed(3).validate()?;
    /// let mut fed = Federation::new(clients, &config)?;
    /// fed.remove(&RemovalRequest::points(ClientId(0), vec![PointId(1)]).with_points(ClientId(1), vec![PointId(2)]))?;
    /// // The server holds exactly the plain sum of the included clients.
    /// let mut sum = BTreeMap::new();
    /// for c in fed.clients().iter().filter(|c| fed.last_included().contains(&c.id())) {
    ///     for (bin, n) in c.histogram() {
    ///         *sum.entry(bin.clone()).or_insert(0) += n;
    ///     }
    /// }
    /// assert_eq!(fed.server().counts(), &sum);
    /// assert_eq!(fed.last_included(), fed.history()[0].included.as_slice());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn last_included(&self) -> &[ClientId] {
        self.history
            .last()
            .map_or(&self.fit_report.included, |r| &r.included)
    }

    /// The wire frames of the last round, by client, when the
    /// configuration records them
    /// ([`FederationConfig::record_messages`](crate::FederationConfig::record_messages)):
    /// what the server received, masked.
    pub fn last_messages(&self) -> Option<&[(ClientId, Vec<u8>)]> {
        self.messages.as_deref()
    }

    fn position(&self, id: ClientId) -> MufcResult<usize> {
        self.clients
            .binary_search_by_key(&id, Client::id)
            .map_err(|_| MufcError::UnknownClient(id))
    }

    /// Serves a removal request by Algorithm 4, exactly: the clients named
    /// unlearn their points (Algorithm 3 when they run seeding; their
    /// counts always change), clients removed whole leave, a fresh
    /// aggregation round runs over the remaining clients, the server
    /// decodes the change of the aggregate and updates its K-means.
    ///
    /// **Lone updates wait** (docs/threat-model.md U3). The difference of
    /// two aggregates is the change of the clients whose message changed,
    /// so a round that changes one client alone tells the server that
    /// client's change (for a removed point that is not a seed: the bin
    /// it counted in). When the request, together with the requests
    /// already pending, names fewer clients than
    /// [`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients)
    /// (default 2), it is checked in full, then kept pending
    /// ([`Self::pending`]) and the report says so
    /// ([`RemovalOutcome::Deferred`](crate::RemovalOutcome::Deferred)); nothing else changes. Once the
    /// pending requests name enough clients, the call that completes them
    /// applies them all in one round: its report lists every request it
    /// covers ([`RemovalReport::requests`]). [`Self::flush`] applies what
    /// is pending at once. Requests of one client merge: the union of
    /// their points (a point named twice is
    /// [`MufcError::AlreadyPending`]), or its whole removal.
    ///
    /// Only the clients named recompute; every remaining client sends its
    /// sketch again (the unmasked sketch of its last message, updated by
    /// the bins whose counts changed: one insert per changed bin, none for
    /// a client that did not change) masked with fresh masks: the round draws new
    /// secrets from the operating system (see
    /// [`FederationConfig::insecure_deterministic_masks`](crate::FederationConfig::insecure_deterministic_masks))
    /// and consumes its round number before masking, so that a retry after
    /// a failure, or a reloaded older save, never reuses a mask. A client all of whose
    /// points are named is removed whole. The result is, bit for bit, the
    /// federation built by [`Self::with_ids`] from the remaining data with
    /// [`Self::config`] (the points of pending requests still count as
    /// remaining).
    ///
    /// # Errors
    ///
    /// [`MufcError::EmptyRequest`], [`MufcError::UnknownClient`],
    /// [`MufcError::RepeatedClient`], [`MufcError::UnknownPoint`],
    /// [`MufcError::RepeatedPoint`], [`MufcError::AlreadyPending`] (a point
    /// or client a pending request names),
    /// [`MufcError::TooFewClients`] (policy: the request would leave fewer
    /// clients than
    /// [`FederationConfig::min_clients`](crate::FederationConfig::min_clients),
    /// but some),
    /// [`MufcError::TooManyDropouts`] (with
    /// [`Masking::SecAgg`](crate::Masking::SecAgg): the round's dropouts
    /// left too few clients), [`MufcError::InvalidConfig`] when no
    /// SecAgg parameters suit the remaining clients, and decoding or
    /// server errors of the lower crates. On any error nothing changes
    /// (the request is not kept pending, the pending ones stay), but for
    /// the round counter once the aggregation round has started.
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
        let wall = Instant::now();
        // Check everything before any work.
        let merged = self.merged(Some(request))?;
        self.check_remaining(&merged)?;
        let number = self.next_request_number();
        let needed = self.config.min_updating_clients();
        if merged.len() < needed {
            self.pending.push(PendingRequest {
                number,
                request: request.clone(),
            });
            return Ok(self.deferred_report(
                number,
                merged.keys().copied().collect(),
                needed,
                wall,
            ));
        }
        let mut numbers: Vec<u64> = self.pending.iter().map(|p| p.number).collect();
        numbers.push(number);
        let report = self.apply(&merged, number, numbers, wall)?;
        self.pending.clear();
        Ok(report)
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
        let Some(last) = self.pending.last() else {
            return Ok(None);
        };
        let number = last.number;
        let wall = Instant::now();
        let merged = self.merged(None)?;
        self.check_remaining(&merged)?;
        let numbers = self.pending.iter().map(|p| p.number).collect();
        let report = self.apply(&merged, number, numbers, wall)?;
        self.pending.clear();
        Ok(Some(report))
    }

    /// The removal requests accepted but not applied yet, in order (see
    /// [`Self::remove`]); saved with the federation.
    pub fn pending(&self) -> &[PendingRequest] {
        &self.pending
    }

    /// The clients the pending requests name, in id order.
    pub fn pending_clients(&self) -> Vec<ClientId> {
        let set: BTreeSet<ClientId> = self
            .pending
            .iter()
            .flat_map(|p| {
                p.request
                    .clients_removed()
                    .iter()
                    .copied()
                    .chain(p.request.point_entries().iter().map(|(c, _)| *c))
            })
            .collect();
        set.into_iter().collect()
    }
}
