//! The federation: Algorithm 1 (training) and Algorithm 4 (unlearning)
//! over many clients in one process.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use seeding::{Dataset, ExactKMeans, KMeansParams, PointId, Quantizer, SeedingError};

use crate::aggregation::{Aggregation, AggregationSpec, Decoded, Input, RoundOutput};
use crate::client::LocalParams;
use crate::ids::{client_seed, sample_seed, server_seed, shift_seed};
use crate::server::{InputChange, PlainCentroids};
use crate::{
    Client, ClientId, DecodeKind, FitReport, MufcError, MufcResult, PendingRequest, Privacy,
    RemovalOutcome, RemovalReport, RemovalRequest, Server, ServerUpdate, StageTimes, ValidConfig,
    par,
};

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
    pending: Vec<PendingRequest>,
    messages: Option<Vec<(ClientId, Vec<u8>)>>,
}

/// Everything checked and derived before any client trains.
pub(crate) struct Setup {
    pub(crate) config: ValidConfig,
    pub(crate) dim: usize,
    pub(crate) quantizer: Option<Quantizer>,
    pub(crate) clients: Vec<(ClientId, Dataset)>,
}

fn nonzero(v: &[(num_bigint::BigUint, u64)]) -> usize {
    v.iter().filter(|(_, c)| *c > 0).count()
}

/// The number of distinct points of `data`, counting up to `cap`.
fn distinct_up_to(data: &Dataset, cap: usize) -> usize {
    let mut seen = HashSet::new();
    for pos in 0..data.len() {
        // -0.0 and 0.0 are the same point (distance zero).
        let key: Vec<u64> = data
            .point(pos)
            .iter()
            .map(|x| (x + 0.0).to_bits())
            .collect();
        seen.insert(key);
        if seen.len() >= cap {
            break;
        }
    }
    seen.len()
}

impl Setup {
    /// Checks the clients and resolves `gamma` and `max_points`.
    pub(crate) fn new(clients: Vec<(ClientId, Dataset)>, config: &ValidConfig) -> MufcResult<Self> {
        Self::build(clients, config, None)
    }

    /// As [`Self::new`] for a saved federation, which may have no client
    /// left (every client removed).
    #[cfg(feature = "serde")]
    pub(crate) fn restore(
        clients: Vec<(ClientId, Dataset)>,
        config: &ValidConfig,
        dim: usize,
    ) -> MufcResult<Self> {
        Self::build(clients, config, Some(dim))
    }

    fn build(
        mut clients: Vec<(ClientId, Dataset)>,
        config: &ValidConfig,
        dim: Option<usize>,
    ) -> MufcResult<Self> {
        let dim = match (clients.first(), dim) {
            (Some((_, d)), _) => d.dim(),
            (None, Some(dim)) => dim,
            (None, None) => return Err(MufcError::NoClients),
        };
        clients.sort_by_key(|(id, _)| *id);
        for w in clients.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(MufcError::DuplicateClient(w[0].0));
            }
        }
        let mut n: u64 = 0;
        for (id, data) in &clients {
            if data.is_empty() {
                return Err(MufcError::EmptyClient(*id));
            }
            if data.dim() != dim {
                return Err(MufcError::DimensionMismatch {
                    client: *id,
                    expected: dim,
                    found: data.dim(),
                });
            }
            n = n.saturating_add(data.len() as u64);
        }
        let gamma = config
            .gamma()
            .unwrap_or_else(|| 1.0 / (n.max(1) as f64).sqrt());
        let max_points = config.max_points().unwrap_or(n);
        if n > max_points {
            return Err(crate::error::config_error(
                "max_points",
                format!("{n} points exceed the bound {max_points}"),
            ));
        }
        let config = config.resolved(gamma, max_points);
        let quantizer = if config.privacy() == Privacy::Plain {
            None
        } else {
            let q = if config.shift() {
                let mut rng = ChaCha8Rng::seed_from_u64(shift_seed(config.seed()));
                Quantizer::with_random_shift(dim, gamma, &mut rng)?
            } else {
                Quantizer::new(dim, gamma)?
            };
            for (id, data) in &clients {
                check_box(*id, data)?;
            }
            Some(q)
        };
        if !config.allow_fewer_distinct() {
            let k = config.client_k();
            for (id, data) in &clients {
                let distinct = distinct_up_to(data, k);
                if distinct < k {
                    return Err(MufcError::TooFewDistinctPoints {
                        client: *id,
                        k,
                        distinct,
                    });
                }
            }
        }
        // The policy last: data errors are named first (docs/threat-model.md
        // P4). A saved federation may have no client left.
        let min_clients = config.min_clients();
        if !clients.is_empty() && clients.len() < min_clients {
            return Err(MufcError::TooFewClients {
                clients: clients.len(),
                min_clients,
            });
        }
        Ok(Self {
            config,
            dim,
            quantizer,
            clients,
        })
    }

    fn local_params(&self) -> LocalParams {
        LocalParams {
            k: self.config.client_k(),
            training: self.config.client_training(),
            tolerance: self.config.client_tolerance(),
            max_iterations: self.config.client_max_iterations(),
        }
    }

    /// Fits every client, in parallel; each with its training time.
    pub(crate) fn fit_clients(&self) -> MufcResult<Vec<(Client, Duration)>> {
        let params = self.local_params();
        let seed = self.config.seed();
        par::map(self.config.parallel(), &self.clients, |_, (id, data)| {
            let start = Instant::now();
            let c = Client::fit(
                *id,
                data.clone(),
                &params,
                client_seed(seed, *id),
                self.quantizer.as_ref(),
            )?;
            Ok((c, start.elapsed()))
        })
    }

    /// The aggregation, of capacity `client_k * L` unless given (a saved
    /// federation keeps its capacity).
    pub(crate) fn aggregation(&self, capacity: Option<usize>) -> MufcResult<Option<Aggregation>> {
        let Some(q) = &self.quantizer else {
            return Ok(None);
        };
        let c = &self.config;
        let ids: Vec<ClientId> = self.clients.iter().map(|(id, _)| *id).collect();
        let spec = AggregationSpec {
            privacy: c.privacy(),
            masking: c.masking(),
            seed: c.seed(),
            deterministic_masks: c.insecure_deterministic_masks(),
            capacity: capacity.unwrap_or_else(|| c.client_k().saturating_mul(ids.len())),
            extra: c.extra_syndromes(),
            num_bins: q.num_bins(),
            max_points: c.max_points().unwrap_or(1),
            integer_max_capacity: c.integer_max_capacity(),
            min_clients: c.min_clients(),
            parallel: c.parallel(),
            record: c.record_messages(),
            dropout: c.dropout(),
            colluding: c.colluding(),
            secagg_graph: c.secagg_graph(),
        };
        Aggregation::new(&spec, &ids).map(Some)
    }

    pub(crate) fn server(&self) -> MufcResult<Server> {
        let c = &self.config;
        let kmeans = ExactKMeans::new(
            KMeansParams::new(c.k())
                .tolerance(c.tolerance())
                .max_iterations(c.max_iterations())
                .restarts(c.restarts())
                .validate()?,
        );
        let points = (c.privacy() != Privacy::Plain).then_some(c.server_points());
        Server::new(
            points,
            self.quantizer.clone(),
            kmeans,
            server_seed(c.seed()),
            sample_seed(c.seed()),
            self.dim,
        )
    }
}

/// Every coordinate in `[-1/2, 1/2]`, else the first offending one.
fn check_box(id: ClientId, data: &Dataset) -> MufcResult<()> {
    for pos in 0..data.len() {
        if let Some((axis, &value)) = data
            .point(pos)
            .iter()
            .enumerate()
            .find(|(_, x)| !(-0.5..=0.5).contains(*x))
        {
            return Err(MufcError::OutsideBox {
                client: id,
                id: data.id(pos),
                axis,
                value,
            });
        }
    }
    Ok(())
}

/// The bytes of a plain-mode message: `k` centroids of `d` f64 and `k`
/// sizes as u64.
fn plain_bytes(k: usize, dim: usize) -> usize {
    k * (8 * dim + 8)
}

fn plain_of(c: &Client) -> PlainCentroids {
    PlainCentroids {
        client: c.id(),
        centroids: c.centroid_matrix(),
        sizes: c.sizes().to_vec(),
    }
}

fn empty_plain(id: ClientId, dim: usize) -> PlainCentroids {
    PlainCentroids {
        client: id,
        centroids: nalgebra::DMatrix::zeros(dim, 0),
        sizes: Vec::new(),
    }
}

/// Adds a round's times into `times`: the client side (in client order,
/// with each client's own training time), the protocol and the server's
/// sum and decoding.
fn round_times(times: &mut StageTimes, own: &[Duration], r: &RoundOutput) {
    client_times(times, own, &r.encode_mask);
    times.protocol_client_max = r.protocol_client_max;
    times.protocol_client_sum = r.protocol_client_sum;
    times.sum = r.sum;
    times.decode = r.decode;
    times.offline = r.offline;
}

/// Adds a round's client-side times (in client order, with each client's
/// own training time) into `times`.
fn client_times(times: &mut StageTimes, own: &[Duration], encode: &[Duration]) {
    for (i, &e) in encode.iter().enumerate() {
        let o = own.get(i).copied().unwrap_or_default();
        times.encode_mask_max = times.encode_mask_max.max(e);
        times.encode_mask_sum += e;
        times.client_round_max = times.client_round_max.max(o + e);
    }
    for &o in own {
        times.client_max = times.client_max.max(o);
        times.client_sum += o;
        times.client_round_max = times.client_round_max.max(o);
    }
}

fn decode_kind(d: &Decoded) -> DecodeKind {
    match d {
        Decoded::Delta(v) => DecodeKind::Delta { nonzeros: v.len() },
        Decoded::Full(v) => DecodeKind::Full {
            nonzeros: nonzero(v),
        },
    }
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
        let clients: Vec<Client> = fitted.into_iter().map(|(c, _)| c).collect();
        let mut times = StageTimes::default();
        let (change, round, included) = match &mut aggregation {
            Some(agg) => {
                let inputs: Vec<Input<'_>> = clients
                    .iter()
                    .map(|c| Input {
                        id: c.id(),
                        histogram: c.histogram(),
                    })
                    .collect();
                let round = agg.round(&inputs, server.counts())?;
                let included = round.included.clone();
                (
                    InputChange::Counts(round.decoded.clone()),
                    Some(round),
                    included,
                )
            }
            None => (
                InputChange::Plain(
                    clients
                        .iter()
                        .map(|c| (empty_plain(c.id(), setup.dim), plain_of(c)))
                        .collect(),
                ),
                None,
                clients.iter().map(Client::id).collect(),
            ),
        };
        let start = Instant::now();
        let plan = server.plan(change)?;
        server.apply(plan)?;
        times.server = start.elapsed();
        let dropped = round
            .as_ref()
            .map(|r| r.dropped.clone())
            .unwrap_or_default();
        let bytes_per_client = match &round {
            Some(r) => {
                round_times(&mut times, &own, r);
                r.bytes_per_client
            }
            None => {
                client_times(&mut times, &own, &[]);
                plain_bytes(setup.config.client_k(), setup.dim)
            }
        };
        let mut messages = None;
        if let (Some(agg), Some(r)) = (&mut aggregation, round) {
            messages = r.messages;
            agg.commit(r.pending);
        }
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
    /// use mufc::{ClientId, Federation, FederationConfig, Masking, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..8)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// // The dropout-tolerant protocol; each client drops out of a round
    /// // with probability 0.2.
    /// let config = FederationConfig::new(2).gamma(0.1).masking(Masking::SecAgg).dropout(0.2).seed(3).validate()?;
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
    /// ([`RemovalOutcome::Deferred`]); nothing else changes. Once the
    /// pending requests name enough clients, the call that completes them
    /// applies them all in one round: its report lists every request it
    /// covers ([`RemovalReport::requests`]). [`Self::flush`] applies what
    /// is pending at once. Requests of one client merge: the union of
    /// their points (a point named twice is
    /// [`MufcError::AlreadyPending`]), or its whole removal.
    ///
    /// Only the clients named recompute; every remaining client re-encodes
    /// and re-masks its message with fresh masks: the round draws new
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

    /// The number the next accepted request gets.
    fn next_request_number(&self) -> u64 {
        let applied: u64 = self.history.iter().map(|r| r.requests.len() as u64).sum();
        applied + self.pending.len() as u64 + 1
    }

    /// The pending requests, then `extra`, each checked against the
    /// clients and merged per client.
    pub(crate) fn merged(
        &self,
        extra: Option<&RemovalRequest>,
    ) -> MufcResult<BTreeMap<ClientId, Loss>> {
        let mut merged = BTreeMap::new();
        for p in &self.pending {
            self.merge_into(&mut merged, &p.request)?;
        }
        if let Some(r) = extra {
            self.merge_into(&mut merged, r)?;
        }
        Ok(merged)
    }

    /// Checks `request` on its own, then merges it into `merged` (which is
    /// untouched on an error).
    fn merge_into(
        &self,
        merged: &mut BTreeMap<ClientId, Loss>,
        request: &RemovalRequest,
    ) -> MufcResult<()> {
        if request.is_empty() {
            return Err(MufcError::EmptyRequest);
        }
        let mut named = HashSet::new();
        for &c in request.clients_removed() {
            self.position(c)?;
            if !named.insert(c) {
                return Err(MufcError::RepeatedClient(c));
            }
        }
        for (c, ids) in request.point_entries() {
            let pos = self.position(*c)?;
            if !named.insert(*c) {
                return Err(MufcError::RepeatedClient(*c));
            }
            if ids.is_empty() {
                return Err(MufcError::EmptyRequest);
            }
            self.clients[pos]
                .data()
                .positions_of(ids)
                .map_err(|e| match e {
                    SeedingError::UnknownId(id) => MufcError::UnknownPoint { client: *c, id },
                    SeedingError::RepeatedId(id) => MufcError::RepeatedPoint { client: *c, id },
                    other => other.into(),
                })?;
        }
        // Against the pending requests: every conflict before any change.
        for &c in request.clients_removed() {
            if matches!(merged.get(&c), Some(Loss::Whole)) {
                return Err(MufcError::AlreadyPending {
                    client: c,
                    id: None,
                });
            }
        }
        for (c, ids) in request.point_entries() {
            match merged.get(c) {
                Some(Loss::Whole) => {
                    return Err(MufcError::AlreadyPending {
                        client: *c,
                        id: ids.first().copied(),
                    });
                }
                Some(Loss::Points(prev)) => {
                    let prev: HashSet<PointId> = prev.iter().copied().collect();
                    if let Some(&id) = ids.iter().find(|id| prev.contains(id)) {
                        return Err(MufcError::AlreadyPending {
                            client: *c,
                            id: Some(id),
                        });
                    }
                }
                None => {}
            }
        }
        for &c in request.clients_removed() {
            // A whole removal takes in the client's pending points.
            merged.insert(c, Loss::Whole);
        }
        for (c, ids) in request.point_entries() {
            match merged.entry(*c).or_insert_with(|| Loss::Points(Vec::new())) {
                Loss::Points(prev) => prev.extend_from_slice(ids),
                Loss::Whole => {}
            }
        }
        Ok(())
    }

    /// Refuses a removal that would leave fewer clients than the policy's
    /// minimum aggregate, but some (docs/threat-model.md P4).
    fn check_remaining(&self, merged: &BTreeMap<ClientId, Loss>) -> MufcResult<()> {
        let gone = merged
            .iter()
            .filter(|(c, loss)| match loss {
                Loss::Whole => true,
                Loss::Points(ids) => self
                    .client(**c)
                    .is_some_and(|x| ids.len() == x.data().len()),
            })
            .count();
        let left = self.clients.len().saturating_sub(gone);
        let min_clients = self.config.min_clients();
        if left > 0 && left < min_clients {
            return Err(MufcError::TooFewClients {
                clients: left,
                min_clients,
            });
        }
        Ok(())
    }

    /// The report of a request kept pending: nothing changed.
    fn deferred_report(
        &self,
        number: u64,
        pending_clients: Vec<ClientId>,
        needed: usize,
        wall: Instant,
    ) -> RemovalReport {
        RemovalReport {
            request: number,
            outcome: RemovalOutcome::Deferred {
                pending_clients,
                needed,
            },
            requests: Vec::new(),
            removed_points: 0,
            removed_clients: Vec::new(),
            reseeded: Vec::new(),
            updated_clients: Vec::new(),
            decode: DecodeKind::Skipped,
            server: ServerUpdate::Unchanged,
            times: StageTimes {
                wall: wall.elapsed(),
                ..StageTimes::default()
            },
            bytes_per_client: 0,
            nonzero_bins: self.server.nonzero_bins(),
            included: self.last_included().to_vec(),
            dropped: Vec::new(),
            lone_update: false,
            privacy_warning: None,
        }
    }

    /// Applies the merged requests `numbers` in one round (Algorithm 4);
    /// the report answers request `number`.
    fn apply(
        &mut self,
        merged: &BTreeMap<ClientId, Loss>,
        number: u64,
        numbers: Vec<u64>,
        wall: Instant,
    ) -> MufcResult<RemovalReport> {
        let mut gone: Vec<usize> = Vec::new();
        let mut jobs: Vec<(usize, &[PointId])> = Vec::new();
        let mut removed_points = 0usize;
        for (c, loss) in merged {
            let pos = self.position(*c)?;
            let len = self.clients[pos].data().len();
            match loss {
                Loss::Whole => {
                    removed_points += len;
                    gone.push(pos);
                }
                Loss::Points(ids) => {
                    removed_points += ids.len();
                    if ids.len() == len {
                        gone.push(pos);
                    } else {
                        jobs.push((pos, ids.as_slice()));
                    }
                }
            }
        }
        gone.sort_unstable();
        jobs.sort_unstable_by_key(|(pos, _)| *pos);

        // The affected clients unlearn, on copies (Algorithm 4, line 3).
        let quantizer = self.quantizer.as_ref();
        let clients = &self.clients;
        let unlearned = par::map(self.config.parallel(), &jobs, |_, (pos, ids)| {
            let start = Instant::now();
            let (c, reseeded) = clients[*pos].unlearned(ids, quantizer)?;
            Ok::<_, MufcError>((c, reseeded, start.elapsed()))
        })?;
        let mut replaced: HashMap<usize, usize> = HashMap::new();
        let mut updated = Vec::new();
        let mut reseeded = Vec::new();
        for (j, ((pos, _), (c, re, _))) in jobs.iter().zip(&unlearned).enumerate() {
            replaced.insert(*pos, j);
            let old = &self.clients[*pos];
            let changed = match self.aggregation {
                Some(_) => old.histogram() != c.histogram(),
                None => old.sizes() != c.sizes() || old.centroids() != c.centroids(),
            };
            if changed {
                updated.push(*pos);
            }
            if *re {
                reseeded.push(old.id());
            }
        }
        updated.extend(gone.iter().copied());
        updated.sort_unstable();

        // The clients after the request, in id order.
        let gone_set: HashSet<usize> = gone.iter().copied().collect();
        let after: Vec<&Client> = (0..self.clients.len())
            .filter(|p| !gone_set.contains(p))
            .map(|p| match replaced.get(&p) {
                Some(&j) => &unlearned[j].0,
                None => &self.clients[p],
            })
            .collect();
        let own: Vec<Duration> = (0..self.clients.len())
            .filter(|p| !gone_set.contains(p))
            .map(|p| replaced.get(&p).map_or(Duration::ZERO, |&j| unlearned[j].2))
            .collect();

        // A new aggregation round (Algorithm 4, line 7), then the server
        // (lines 8-13).
        let mut times = StageTimes::default();
        let mut round: Option<RoundOutput> = None;
        let (change, decode) = if updated.is_empty() {
            (None, DecodeKind::Skipped)
        } else {
            match &mut self.aggregation {
                // Every client left: nothing to aggregate, the aggregate is
                // empty.
                Some(_) if after.is_empty() => (
                    Some(InputChange::Counts(Decoded::Full(Vec::new()))),
                    DecodeKind::Skipped,
                ),
                Some(agg) => {
                    let inputs: Vec<Input<'_>> = after
                        .iter()
                        .map(|c| Input {
                            id: c.id(),
                            histogram: c.histogram(),
                        })
                        .collect();
                    let r = agg.round(&inputs, self.server.counts())?;
                    let kind = decode_kind(&r.decoded);
                    let change = InputChange::Counts(r.decoded.clone());
                    round = Some(r);
                    (Some(change), kind)
                }
                None => {
                    let changes = updated
                        .iter()
                        .map(|&p| {
                            let before = plain_of(&self.clients[p]);
                            let after = match replaced.get(&p) {
                                Some(&j) => plain_of(&unlearned[j].0),
                                None => empty_plain(self.clients[p].id(), self.dim),
                            };
                            (before, after)
                        })
                        .collect();
                    (Some(InputChange::Plain(changes)), DecodeKind::Plain)
                }
            }
        };
        let start = Instant::now();
        let server_update = match change {
            // The last fallible step: on error the server's model is
            // untouched, and nothing else has changed yet.
            Some(change) => self.server.apply(self.server.plan(change)?)?,
            None => ServerUpdate::Unchanged,
        };
        times.server = start.elapsed();

        // Commit.
        let included: Vec<ClientId> = match &round {
            Some(r) => r.included.clone(),
            // No client changed, so no round ran: the aggregate is the
            // last round's, of the clients it included (with dropouts, not
            // necessarily all).
            None if updated.is_empty() && self.aggregation.is_some() => {
                self.last_included().to_vec()
            }
            None => after.iter().map(|c| c.id()).collect(),
        };
        let dropped = round
            .as_ref()
            .map(|r| r.dropped.clone())
            .unwrap_or_default();
        let bytes_per_client = match &round {
            Some(r) => {
                round_times(&mut times, &own, r);
                r.bytes_per_client
            }
            None => {
                client_times(&mut times, &own, &[]);
                if self.aggregation.is_some() {
                    self.fit_report.bytes_per_client
                } else {
                    plain_bytes(self.config.client_k(), self.dim)
                }
            }
        };
        if let (Some(agg), Some(r)) = (&mut self.aggregation, round) {
            self.messages = r.messages;
            agg.commit(r.pending);
        }
        let updated_ids: Vec<ClientId> = updated.iter().map(|&p| self.clients[p].id()).collect();
        let removed_clients: Vec<ClientId> = gone.iter().map(|&p| self.clients[p].id()).collect();
        for ((pos, _), (c, _, _)) in jobs.iter().zip(unlearned) {
            self.clients[*pos] = c;
        }
        for &p in gone.iter().rev() {
            self.clients.remove(p);
        }
        times.wall = wall.elapsed();
        let privacy_warning = privacy_warning(&updated_ids, self.config.min_updating_clients());
        let report = RemovalReport {
            request: number,
            outcome: RemovalOutcome::Applied,
            requests: numbers,
            removed_points,
            removed_clients,
            reseeded,
            lone_update: updated_ids.len() == 1,
            updated_clients: updated_ids,
            decode,
            server: server_update,
            times,
            bytes_per_client,
            nonzero_bins: self.server.nonzero_bins(),
            included,
            dropped,
            privacy_warning,
        };
        self.history.push(report.clone());
        Ok(report)
    }
}

/// What a client loses in the merged removal requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Loss {
    /// The whole client.
    Whole,
    /// These points (distinct; all of them removes the client whole).
    Points(Vec<PointId>),
}

/// What the server learns from a round that changed the messages of
/// `updated` alone, beyond a policy of `needed` (docs/threat-model.md U3).
fn privacy_warning(updated: &[ClientId], needed: usize) -> Option<String> {
    match updated {
        [] => None,
        [c] => Some(format!(
            "only client {c}'s message changed in this round: the difference of this aggregate \
             and the previous one tells the server how client {c}'s histogram changed (for a \
             removed point that is not a seed, the bin it counted in; for a removed client, its \
             whole histogram) (docs/threat-model.md U3)"
        )),
        v if v.len() < needed => Some(format!(
            "only {} clients' messages changed in this round, fewer than the policy's {needed}: \
             the difference of this aggregate and the previous one tells the server the sum of \
             their changes (docs/threat-model.md U3)",
            v.len()
        )),
        _ => None,
    }
}
