//! The one error type of the crate.

use seeding::{PointId, SeedingError};
use syndrome_agg::SketchError;

use crate::ClientId;

/// Everything that can go wrong in `mufc`. Every operation that returns it
/// leaves the federation exactly as it was (tested by comparing the saved
/// state before and after), with one exception: an aggregation round that
/// started consumes its round number even if it fails
/// ([`Federation::rounds`](crate::Federation::rounds) grows by one), so
/// that no round number, and no mask, is ever used twice.
///
/// # Example
///
/// ```
/// use mufc::{ClientId, ConfigParam, FederationConfig, MufcError};
///
/// let err = FederationConfig::new(0).validate().unwrap_err();
/// assert!(matches!(err, MufcError::InvalidConfig { param: ConfigParam::K, .. }));
/// assert_eq!(MufcError::UnknownClient(ClientId(4)).to_string(), "client 4 is not in the federation");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MufcError {
    /// A configuration value is out of range.
    #[error("invalid configuration: {param}: {reason}")]
    InvalidConfig {
        /// The setting.
        param: ConfigParam,
        /// What is wrong with it.
        reason: String,
    },
    /// A federation needs at least one client.
    #[error("a federation needs at least one client")]
    NoClients,
    /// A client id occurs twice among the clients given.
    #[error("client id {0} occurs twice")]
    DuplicateClient(ClientId),
    /// A client holds no points.
    #[error("client {0} holds no points")]
    EmptyClient(ClientId),
    /// The clients' points do not all have the same dimension.
    #[error("client {client} has points of dimension {found}, expected {expected}")]
    DimensionMismatch {
        /// The client.
        client: ClientId,
        /// The dimension of the first client.
        expected: usize,
        /// This client's dimension.
        found: usize,
    },
    /// A client has fewer distinct points than the number of clusters it
    /// must find (allow it with
    /// [`FederationConfig::allow_fewer_distinct`](crate::FederationConfig::allow_fewer_distinct)).
    #[error("client {client} has {distinct} distinct points, fewer than its k = {k}")]
    TooFewDistinctPoints {
        /// The client.
        client: ClientId,
        /// The client's number of clusters.
        k: usize,
        /// How many distinct points it has.
        distinct: usize,
    },
    /// A point lies outside the quantizer's box `[-1/2, 1/2]^d` (scale the
    /// data first, for instance with [`seeding::BoxTransform`]).
    #[error(
        "point {id} of client {client} lies outside [-1/2, 1/2] on axis {axis} (coordinate {value})"
    )]
    OutsideBox {
        /// The client.
        client: ClientId,
        /// The point.
        id: PointId,
        /// The axis on which it is outside.
        axis: usize,
        /// The coordinate.
        value: f64,
    },
    /// A removal request names a client that is not in the federation.
    #[error("client {0} is not in the federation")]
    UnknownClient(ClientId),
    /// A request (a removal, an addition) names a client twice.
    #[error("client {0} is named twice in one request")]
    RepeatedClient(ClientId),
    /// A removal request names a point that the client does not hold.
    #[error("point {id} is not held by client {client}")]
    UnknownPoint {
        /// The client.
        client: ClientId,
        /// The point.
        id: PointId,
    },
    /// A removal request names a point twice.
    #[error("point {id} of client {client} is named twice in one removal request")]
    RepeatedPoint {
        /// The client.
        client: ClientId,
        /// The point.
        id: PointId,
    },
    /// An addition names a point id its client holds already (ids name
    /// one record each, for as long as it is held). Nothing changed.
    #[error("client {client} already holds a point {id}: an added record needs an id of its own")]
    HeldPoint {
        /// The client.
        client: ClientId,
        /// The point.
        id: PointId,
    },
    /// A removal request that removes nothing, or an addition that adds
    /// nothing.
    #[error("the request is empty")]
    EmptyRequest,
    /// A removal request names a point (or a whole client) that an
    /// earlier request, still pending, already names
    /// ([`Federation::pending`](crate::Federation::pending)): the pending
    /// requests of a client are merged, and each point may be named once.
    /// Nothing changed.
    #[error("{}", already_pending(*client, *id))]
    AlreadyPending {
        /// The client.
        client: ClientId,
        /// The point named twice, or `None` when the client's whole removal
        /// is already pending (or named twice).
        id: Option<PointId>,
    },
    /// An aggregate the server would see, or the federation a request
    /// would leave, has fewer clients than the policy's minimum
    /// ([`FederationConfig::min_clients`](crate::FederationConfig::min_clients),
    /// docs/threat-model.md P4): the server, with the help of the other
    /// clients, would learn a client's histogram from the sum. Nothing
    /// changed.
    #[error(
        "the aggregate would include {clients} clients, fewer than the minimum of {min_clients} \
         (docs/threat-model.md P4: the server and {colluders} colluding client{s} would learn the \
         last client's histogram from the sum); nothing changed. To accept it, train with a lower \
         minimum of clients per aggregate (--min-clients {clients} on the command line, \
         FederationConfig::min_clients({clients}) in the library)",
        colluders = clients.saturating_sub(1),
        s = if clients.saturating_sub(1) == 1 { "" } else { "s" }
    )]
    TooFewClients {
        /// The clients the aggregate would include.
        clients: usize,
        /// The policy's minimum.
        min_clients: usize,
    },
    /// A group of a federation with groups
    /// ([`Topology`](crate::Topology)) would hold fewer clients than the
    /// policy's minimum, but some: the server decodes each group's sum
    /// (docs/threat-model.md §11). Nothing changed.
    #[error(
        "group {group} would hold {clients} clients, fewer than the minimum of {min_clients}: the \
         server decodes each group's sum (docs/threat-model.md §11); nothing changed"
    )]
    GroupTooSmall {
        /// The group (its index in the layout).
        group: usize,
        /// The clients the group would hold.
        clients: usize,
        /// The policy's minimum.
        min_clients: usize,
    },
    /// A layout of groups that does not name each of the federation's
    /// clients exactly once.
    #[error("the layout does not fit the clients: {0}")]
    InvalidLayout(String),
    /// Something a federation with groups cannot do yet.
    #[error("{0} is not supported with groups or trees yet (only with Topology::Flat)")]
    TopologyUnsupported(&'static str),
    /// The Appendix K integer decoder is only feasible for a tiny capacity
    /// `t`; larger configurations are refused up front instead of running
    /// for hours.
    #[error(
        "the integer decoder (Appendix K) is refused for t = {capacity} (allowed up to {max}): \
         each message would have {sketch_bits} bits and decoding costs about t^4 big-integer \
         operations on numbers of {syndrome_bits} bits; use the finite-field decoder"
    )]
    IntegerDecoderTooLarge {
        /// The capacity `t` of the sketch.
        capacity: usize,
        /// The largest capacity allowed.
        max: usize,
        /// The size of one message, `(2t + r) k` bits.
        sketch_bits: u64,
        /// The size `k` of one syndrome in bits.
        syndrome_bits: u64,
    },
    /// Two server points derived the same 64-bit id (a hash collision of
    /// the bin index, probability about `m^2 / 2^65` for `m` server
    /// points). Nothing changed; change the federation seed.
    #[error("two server points share the id {0}; change the federation seed")]
    ServerIdCollision(PointId),
    /// Too many clients dropped out of a round of
    /// [`Masking::SecAgg`](crate::Masking::SecAgg): fewer than the
    /// protocol's threshold (or than
    /// [`FederationConfig::min_clients`](crate::FederationConfig::min_clients))
    /// remained at some step, so the server unmasked nothing. Nothing
    /// changed but the round counter: the failed round consumed its
    /// number. The dropouts of a round are a fixed function of the
    /// federation seed, the round and the clients, so serving the same
    /// request again runs the next round, with its own draws.
    #[error(
        "secure aggregation round {round} failed: {dropped} of {clients} clients dropped out, \
         {have} remained at the {step} step where {need} are needed (the protocol's threshold \
         {threshold}, the federation's minimum aggregate {min_clients}: lower it with \
         FederationConfig::min_clients or mufc --min-clients); nothing changed but the round \
         counter"
    )]
    TooManyDropouts {
        /// The aggregation round (0 for training).
        round: u64,
        /// The clients of the round.
        clients: usize,
        /// How many of them dropped out.
        dropped: usize,
        /// The step at which too few remained.
        step: syndrome_agg::secagg::Step,
        /// How many clients (or shares of one secret) remained.
        have: usize,
        /// How many are needed (the threshold, or the minimum aggregate).
        need: usize,
        /// The protocol's Shamir threshold for the round.
        threshold: usize,
        /// The federation's minimum aggregate
        /// ([`FederationConfig::min_clients`](crate::FederationConfig::min_clients));
        /// `need` is the larger of the two.
        min_clients: usize,
    },
    /// A client of a round with pairwise or dealt masks did not answer a
    /// step: those masks cancel only when every client of the ring
    /// sends, so the server unmasked nothing. Nothing changed but the
    /// round counter; the next round runs without the missing clients, or
    /// with them once they answer. (SecAgg survives dropouts up to its
    /// threshold: [`Self::TooManyDropouts`].)
    #[error(
        "round {round} failed: {} of {clients} clients ({}) dropped out at the {step} step, and \
         the round's pairwise or dealt masks cancel only when every client of its ring answers; \
         nothing changed but the round counter (SecAgg masks survive dropouts up to a threshold)",
        missing.len(),
        listed(missing)
    )]
    RingIncomplete {
        /// The round.
        round: u64,
        /// The clients of its ring.
        clients: usize,
        /// Those that did not answer the step, in id order.
        missing: Vec<ClientId>,
        /// The step they missed.
        step: syndrome_agg::secagg::Step,
    },
    /// The server has no model (every client was removed).
    #[error("the server has no model: every client was removed")]
    NoServerModel,
    /// A new client ([`AdditionRequest::new_client`](crate::AdditionRequest::new_client))
    /// with the id of a client on the roster: a member's, or one that left
    /// whole while the federation stayed in memory. Nothing changed. A
    /// federation saved and loaded keeps no client that left on its
    /// roster, so its id is not refused there: the model store
    /// (`mufc-store`) and the deployment keep every name and never give a
    /// number twice.
    #[error("client {0} is or was a member of the federation: a new client needs an id of its own")]
    MemberId(ClientId),
    /// A client may not join a federation whose model was withdrawn
    /// (too few clients were left for the smallest aggregate,
    /// docs/threat-model.md P4): no round runs there again, so train a
    /// new federation. Nothing changed.
    #[error(
        "the federation's model was withdrawn after request {request} (too few clients left): \
         no client joins it; train a new federation"
    )]
    Withdrawn {
        /// The request that withdrew the model.
        request: u64,
    },
    /// An error of `seeding`.
    #[error(transparent)]
    Seeding(#[from] SeedingError),
    /// An error of `syndrome-agg` (parameters, masking or decoding), or
    /// of `masked-sum` below it, grouped as `syndrome-agg` groups them.
    #[error(transparent)]
    Sketch(#[from] SketchError),
    /// Saving or loading failed (the bytes are not a saved federation, or
    /// an I/O error).
    #[error("persistence: {0}")]
    Persistence(String),
    /// The bytes are a saved federation, but damaged or of a format this
    /// build refuses (see [`PersistError`]).
    #[error(transparent)]
    Persist(#[from] PersistError),
    /// The operating system's random source failed (the fresh secrets of
    /// an aggregation round could not be drawn). Nothing changed but the
    /// round counter.
    #[error("randomness: {0}")]
    Randomness(String),
    /// A client refused the round a server announced across processes
    /// (see [`crate::remote`]): it does not name the client, or its
    /// protocol parameters are not those the configuration gives.
    #[error("round {round} refused: {reason}")]
    RoundRefused {
        /// The round announced.
        round: u64,
        /// Why.
        reason: String,
    },
    /// A message or state of the federation across processes is not what
    /// the protocol allows at this point (see [`crate::remote`]).
    #[error("remote federation: {0}")]
    Remote(String),
    /// A change round's sum did not decode: more clients changed than the
    /// server announced ([`RemoteServer::start_change_round`](crate::remote::RemoteServer::start_change_round)).
    /// Nothing changed, and the group's next round is whole.
    #[error(
        "remote federation: round {round}: the change round's sum did not decode (more clients \
         changed than announced); nothing changed, and the next round is whole"
    )]
    ChangeUndecoded {
        /// The round.
        round: u64,
    },
}

/// Client ids as a message lists them: `1, 4`.
fn listed(ids: &[ClientId]) -> String {
    ids.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A masked sum's refusal (the masks, SecAgg), grouped as
/// [`SketchError`] groups it: a caller matches one type whichever layer
/// refused.
impl From<masked_sum::SumError> for MufcError {
    fn from(e: masked_sum::SumError) -> Self {
        Self::Sketch(SketchError::from(e))
    }
}

/// Why a saved federation (from
/// [`Federation::to_bytes`](crate::Federation::to_bytes) or
/// [`Federation::save`](crate::Federation::save)) is refused.
///
/// # Example
///
/// ```
/// use mufc::{MufcError, PersistError};
///
/// // What loading a file of format version 2 says.
/// let err = MufcError::from(PersistError::UnsupportedVersion { found: 2, supported: 4 });
/// assert!(err.to_string().contains("format version 2"));
/// assert!(err.to_string().contains("no checksum"));
/// let err = PersistError::Truncated { expected: 1256, found: 700 };
/// assert_eq!(err.to_string(), "the saved federation is truncated: 700 bytes, at least 1256 expected");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PersistError {
    /// The bytes end before the header says they do (the file was cut
    /// short, for instance by a crash during a non-atomic copy).
    #[error("the saved federation is truncated: {found} bytes, at least {expected} expected")]
    Truncated {
        /// The length the header announces (or, before the header is
        /// complete, the length of the header).
        expected: u64,
        /// The length found.
        found: u64,
    },
    /// The bytes are damaged: the checksum does not match, there are bytes
    /// after the checksum, or the checked contents do not parse.
    #[error("the saved federation is corrupt: {reason}")]
    Corrupt {
        /// What is wrong.
        reason: String,
    },
    /// A format version this build does not read.
    #[error(
        "the saved federation has format version {found}, this build reads version {supported} \
         only{}",
        version_hint(*found)
    )]
    UnsupportedVersion {
        /// The version in the header.
        found: u8,
        /// The version this build reads.
        supported: u8,
    },
}

fn already_pending(client: ClientId, id: Option<PointId>) -> String {
    match id {
        Some(id) => {
            format!("point {id} of client {client} is already named by a pending removal request")
        }
        None => format!("the removal of client {client} as a whole is already pending"),
    }
}

fn version_hint(found: u8) -> &'static str {
    match found {
        1 | 2 => {
            ": earlier versions carry no checksum, so a damaged file cannot be told from \
             a different federation; rebuild the federation from its data and save it again"
        }
        3 => {
            ": version 3 stored the configuration in the flat shape of earlier builds; \
             rebuild the federation from its data and save it again"
        }
        _ => " (a newer build, or a damaged header)",
    }
}

/// The result type of this crate.
pub type MufcResult<T> = Result<T, MufcError>;

pub(crate) fn config_error(param: ConfigParam, reason: impl Into<String>) -> MufcError {
    MufcError::InvalidConfig {
        param,
        reason: reason.into(),
    }
}

/// The setting a configuration error names
/// ([`MufcError::InvalidConfig`]): one variant per parameter, so that a
/// caller matches on the setting rather than on a string.
///
/// # Example
///
/// ```
/// use mufc::{ConfigParam, FederationConfig, MufcError};
///
/// match FederationConfig::new(2).gamma(-1.0).validate() {
///     Err(MufcError::InvalidConfig { param: ConfigParam::Gamma, reason }) => assert!(reason.contains("positive")),
///     other => panic!("{other:?}"),
/// }
/// assert_eq!(ConfigParam::MinClients.to_string(), "min_clients");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConfigParam {
    /// The server's number of clusters `k`. (`k`)
    K,
    /// The clients' number of clusters. (`client_k`)
    ClientK,
    /// The smallest cluster a client sends. (`min_cluster_size`)
    MinClusterSize,
    /// The grid step. (`gamma`)
    Gamma,
    /// The server's Lloyd tolerance. (`tolerance`)
    Tolerance,
    /// The clients' Lloyd tolerance. (`client_tolerance`)
    ClientTolerance,
    /// The server's iteration cap. (`max_iterations`)
    MaxIterations,
    /// The clients' iteration cap. (`client_max_iterations`)
    ClientMaxIterations,
    /// The server's K-means runs. (`restarts`)
    Restarts,
    /// The clients' K-means runs. (`client_restarts`)
    ClientRestarts,
    /// The bound on the federation's points. (`max_points`)
    MaxPoints,
    /// The smallest aggregate. (`min_clients`)
    MinClients,
    /// The clients a removal round must change (the lone-update policy). (`min_updating_clients`)
    MinUpdatingClients,
    /// The topology (flat, groups or a tree). (`topology`)
    Topology,
    /// The size of a group. (`group_size`)
    GroupSize,
    /// A tree's fan-out. (`fan_out`)
    FanOut,
    /// What the clients send (the privacy mode). (`privacy`)
    Privacy,
    /// How the clients mask their sketches. (`masking`)
    Masking,
    /// SecAgg's planned dropout rate. (`dropout`)
    Dropout,
    /// SecAgg's planned fraction of colluding clients. (`colluding`)
    Colluding,
    /// The planned rate of clients removed between rounds. (`removal_rate`)
    RemovalRate,
    /// SecAgg's neighbourhood graph. (`secagg_graph`)
    SecAggGraph,
    /// The points the server builds from the counts. (`server_points`)
    ServerPoints,
    /// How the clients train. (`client_training`)
    ClientTraining,
    /// The number of runs of an objective's estimate. (`runs`)
    Runs,
    /// An agreement's number of clients. (`clients`)
    Clients,
    /// An agreement's smallest grid step. (`min_gamma`)
    MinGamma,
    /// An agreement's bound on a client's points (and its dimension). (`max_client_points`)
    MaxClientPoints,
    /// An agreement's privacy policy. (`policy`)
    Policy,
    /// A client's registration. (`registration`)
    Registration,
}

impl ConfigParam {
    /// The setting's name, as the builder's method and the command
    /// line's option (with dashes) spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::K => "k",
            Self::ClientK => "client_k",
            Self::MinClusterSize => "min_cluster_size",
            Self::Gamma => "gamma",
            Self::Tolerance => "tolerance",
            Self::ClientTolerance => "client_tolerance",
            Self::MaxIterations => "max_iterations",
            Self::ClientMaxIterations => "client_max_iterations",
            Self::Restarts => "restarts",
            Self::ClientRestarts => "client_restarts",
            Self::MaxPoints => "max_points",
            Self::MinClients => "min_clients",
            Self::MinUpdatingClients => "min_updating_clients",
            Self::Topology => "topology",
            Self::GroupSize => "group_size",
            Self::FanOut => "fan_out",
            Self::Privacy => "privacy",
            Self::Masking => "masking",
            Self::Dropout => "dropout",
            Self::Colluding => "colluding",
            Self::RemovalRate => "removal_rate",
            Self::SecAggGraph => "secagg_graph",
            Self::ServerPoints => "server_points",
            Self::ClientTraining => "client_training",
            Self::Runs => "runs",
            Self::Clients => "clients",
            Self::MinGamma => "min_gamma",
            Self::MaxClientPoints => "max_client_points",
            Self::Policy => "policy",
            Self::Registration => "registration",
        }
    }
}

impl core::fmt::Display for ConfigParam {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}
