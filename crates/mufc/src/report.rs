//! What training and each removal request cost, and what a request did.

use std::time::Duration;

use crate::{ClientId, SecAggStep, ServerUpdate, SketchInfo};

/// The time of each stage of a round of Algorithm 1 or 4.
///
/// Clients run in parallel in a real federation, so the paper counts
/// "the longest processing time of a client and the processing time of
/// the server" (Section 6): that is [`Self::paper`]. [`Self::cpu`] adds up
/// every client's work as well, the cost of simulating the federation on
/// one core. Both leave out [`Self::offline`], the dealing of masks, which
/// the paper counts as offline work (Algorithm 2, line 2).
///
/// With [`Masking::SecAgg`](crate::Masking::SecAgg) the round has four
/// synchronous steps: the clients' share of its latency is, per step, the
/// slowest client's time, added up ([`Self::protocol_client_max`]); the
/// server's share of the protocol (relaying keys and shares, checking and
/// reconstructing secrets, removing the masks, summing) is [`Self::sum`];
/// [`Self::encode_mask_max`] is then the encoding alone. Nothing is
/// offline: the key steps do not need the inputs, but they need the
/// clients online in the same session, so they are counted as online work.
///
/// # Example
///
/// ```
/// use std::time::Duration;
/// use mufc::StageTimes;
///
/// let t = StageTimes {
///     client_round_max: Duration::from_millis(3),
///     client_sum: Duration::from_millis(20),
///     encode_mask_sum: Duration::from_millis(10),
///     sum: Duration::from_millis(1),
///     decode: Duration::from_millis(2),
///     server: Duration::from_millis(4),
///     ..StageTimes::default()
/// };
/// assert_eq!(t.paper(), Duration::from_millis(10));
/// assert_eq!(t.cpu(), Duration::from_millis(37));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StageTimes {
    /// The slowest client's own training or unlearning (Algorithm 1 line
    /// 2, or Algorithm 3).
    pub client_max: Duration,
    /// Every client's training or unlearning, added up.
    pub client_sum: Duration,
    /// The slowest client's encoding and masking of its message.
    pub encode_mask_max: Duration,
    /// Every client's encoding and masking, added up.
    pub encode_mask_sum: Duration,
    /// The slowest client's whole part of the round: its training or
    /// unlearning plus its encoding and masking.
    pub client_round_max: Duration,
    /// [`Masking::SecAgg`](crate::Masking::SecAgg): the clients' part of
    /// the protocol's latency, the slowest client's time in each of the
    /// five steps, added up (zero with the other maskings).
    pub protocol_client_max: Duration,
    /// [`Masking::SecAgg`](crate::Masking::SecAgg): every client's
    /// protocol work, added up (zero with the other maskings).
    pub protocol_client_sum: Duration,
    /// The server's sum of the masked messages (with
    /// [`Masking::SecAgg`](crate::Masking::SecAgg): the server's whole
    /// protocol, unmasking included).
    pub sum: Duration,
    /// The server's decoding of the sum (or of its difference).
    pub decode: Duration,
    /// The server's points and K-means (Algorithm 1 lines 6-7, Algorithm 4
    /// lines 11-12).
    pub server: Duration,
    /// Dealing the masks (offline work, not in [`Self::paper`] nor
    /// [`Self::cpu`]).
    pub offline: Duration,
    /// The wall-clock time of the whole call, simulation included.
    pub wall: Duration,
}

impl StageTimes {
    /// The time as the paper counts it: the slowest client's part of the
    /// round (and of the protocol's steps) plus the server's (sum, decode,
    /// clustering).
    pub fn paper(&self) -> Duration {
        self.client_round_max + self.protocol_client_max + self.sum + self.decode + self.server
    }

    /// The total CPU time: every client's work plus the server's.
    pub fn cpu(&self) -> Duration {
        self.client_sum
            + self.encode_mask_sum
            + self.protocol_client_sum
            + self.sum
            + self.decode
            + self.server
    }

    /// The aggregation as the paper would count it: the slowest client's
    /// encoding and masking (and protocol steps), then the server's sum.
    pub fn aggregation(&self) -> Duration {
        self.encode_mask_max + self.protocol_client_max + self.sum
    }

    /// The server's share: decoding and clustering.
    pub fn server_total(&self) -> Duration {
        self.decode + self.server
    }
}

/// What the server decoded in a round.
///
/// # Example
///
/// ```
/// use mufc::DecodeKind;
///
/// assert_eq!(DecodeKind::Delta { nonzeros: 1 }.nonzeros(), 1);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum DecodeKind {
    /// No round ran (no client's message changed).
    Skipped,
    /// The difference from the previous aggregate, with this many nonzero
    /// entries (one per changed count).
    Delta {
        /// Nonzero entries of the difference.
        nonzeros: usize,
    },
    /// The whole aggregate (the first round, the integer decoder, or a
    /// difference over capacity).
    Full {
        /// Nonzero bins of the aggregate.
        nonzeros: usize,
    },
    /// The plain mode: the centroids arrived in the clear.
    Plain,
}

impl DecodeKind {
    /// How a round was decoded: the entries of a difference, or the
    /// nonzero bins of a whole aggregate.
    pub(crate) fn of(decoded: &crate::server::decode::Decoded) -> Self {
        use crate::server::decode::Decoded;
        match decoded {
            Decoded::Delta(v) => Self::Delta { nonzeros: v.len() },
            Decoded::Full(v) => Self::Full {
                nonzeros: v.iter().filter(|(_, c)| *c > 0).count(),
            },
        }
    }

    /// The number of nonzero entries decoded (0 for `Skipped` and
    /// `Plain`).
    pub fn nonzeros(&self) -> usize {
        match self {
            Self::Delta { nonzeros } | Self::Full { nonzeros } => *nonzeros,
            Self::Skipped | Self::Plain => 0,
        }
    }
}

/// Who took part in a round: how much of the federation a removal
/// involves ([`Topology`](crate::Topology): one group's clients rather
/// than all L, and the nodes on its path); see
/// [`Federation::last_involvement`](crate::Federation::last_involvement).
///
/// # Example
///
/// ```
/// use mufc::Involvement;
///
/// let i = Involvement { clients: 5, messages: 5, groups: vec![2], nodes: 3, bytes: 5 * 800 };
/// assert_eq!(i.bytes / i.clients, 800);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Involvement {
    /// The clients that sent a masked message (one each; with
    /// [`Masking::SecAgg`](crate::Masking::SecAgg), a run of the
    /// protocol each): a removal is one round for each, so this is also
    /// the rounds across all clients as the TreeAvg poster counts them.
    pub clients: usize,
    /// The messages the involved clients sent, counted as the round ran:
    /// one each with dealt or pairwise masks, every message of every
    /// protocol step with SecAgg (four or five a client).
    pub messages: usize,
    /// The groups that ran a round (empty when flat).
    pub groups: Vec<usize>,
    /// The models updated: the root's, and with groups those of the
    /// nodes on the paths from the affected groups.
    pub nodes: usize,
    /// The bytes the involved clients sent, in all.
    pub bytes: usize,
}

/// What training the federation (Algorithm 1) cost and produced.
///
/// # Example
///
/// ```
/// use mufc::{Federation, FederationConfig};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let a = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 7 + r) % 10) as f64 / 25.0 - 0.2))?;
/// let b = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 3 + r) % 11) as f64 / 25.0 - 0.2))?;
/// // Two clients: the minimum aggregate is lowered explicitly.
/// let fed = Federation::new(vec![a, b], &FederationConfig::new(2).client_k(2).gamma(0.1).min_clients(2).validate()?)?;
/// let r = fed.fit_report();
/// assert_eq!(r.included, vec![mufc::ClientId(0), mufc::ClientId(1)]);
/// assert!(r.bytes_per_client > 0);
/// assert_eq!(r.sketch.as_ref().unwrap().capacity, 4); // t = k L
/// assert!(r.times.paper() <= r.times.cpu() + r.times.client_round_max);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FitReport {
    /// The time of each stage.
    pub times: StageTimes,
    /// The bytes of one client's message on the wire (a masked sketch
    /// frame, or `k (8 d + 8)` bytes of centroids and sizes in plain mode;
    /// with [`Masking::SecAgg`](crate::Masking::SecAgg), the bytes a client
    /// sends over the protocol's five steps, on average).
    pub bytes_per_client: usize,
    /// The nonzero bins of the decoded aggregate (in plain mode: the
    /// weighted centroids the server received).
    pub nonzero_bins: usize,
    /// The sketch parameters (none in plain mode).
    pub sketch: Option<SketchInfo>,
    /// The number of server points.
    pub server_points: usize,
    /// The clients the aggregate includes, in id order: all of them, but
    /// with [`Masking::SecAgg`](crate::Masking::SecAgg) only those whose
    /// masked input reached the server (a client that dropped during
    /// unmasking is included, docs/threat-model.md D3). The server's counts are the
    /// plain sum of these clients' histograms, its model that of their
    /// data.
    pub included: Vec<ClientId>,
    /// The clients that dropped out of the round, in id order, with the
    /// first protocol step each missed (empty unless
    /// [`Masking::SecAgg`](crate::Masking::SecAgg) runs with a dropout
    /// rate). Those that dropped at [`SecAggStep::Unmasking`] are also in
    /// `included`.
    pub dropped: Vec<(ClientId, SecAggStep)>,
}

/// Whether a call of [`Federation::remove`](crate::Federation::remove)
/// changed the federation.
///
/// # Example
///
/// ```
/// use mufc::{ClientId, RemovalOutcome};
///
/// let o = RemovalOutcome::Deferred { pending_clients: vec![ClientId(4)], needed: 2 };
/// assert!(o.is_deferred());
/// assert!(!RemovalOutcome::Applied.is_deferred());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum RemovalOutcome {
    /// One aggregation round (or none, when no message changed) applied
    /// the requests of [`RemovalReport::requests`]: the federation equals
    /// one retrained without all of their points.
    Applied,
    /// The request is valid and pending
    /// ([`Federation::pending`](crate::Federation::pending)); nothing
    /// changed. With the requests already pending it names fewer clients
    /// than the policy's minimum (docs/threat-model.md U3): a round that
    /// changed one client's message alone would reveal that change.
    Deferred {
        /// The clients the pending requests name, this one's included, in
        /// id order.
        pending_clients: Vec<ClientId>,
        /// How many clients they must name for a round to run
        /// ([`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients)).
        needed: usize,
    },
    /// The request would leave fewer clients than the policy's minimum
    /// aggregate ([`FederationConfig::min_clients`](crate::FederationConfig::min_clients),
    /// docs/threat-model.md P4), or the federation's model was withdrawn
    /// by an earlier request: its points are erased from the clients at
    /// once, and the federation serves no model
    /// ([`Federation::withdrawal`](crate::Federation::withdrawal)). No
    /// aggregate of the remaining clients may be decoded, and the old one
    /// counts the erased points, so the server keeps neither counts nor
    /// centroids; the pending requests are covered too
    /// ([`RemovalReport::requests`]).
    Withdrawn(Withdrawal),
}

impl RemovalOutcome {
    /// Whether the request was kept pending.
    pub fn is_deferred(&self) -> bool {
        matches!(self, Self::Deferred { .. })
    }

    /// Whether the federation serves no model after the request.
    pub fn is_withdrawn(&self) -> bool {
        matches!(self, Self::Withdrawn { .. })
    }
}

/// Why a federation serves no model: the request that would have left
/// fewer clients (in a group, with groups) than the policy's minimum
/// aggregate (docs/threat-model.md P4). Its points, and those of every
/// request after it, are erased from the clients at once; no round runs
/// again, because any aggregate of the clients left would tell the server
/// (and a colluding client) too much of each.
///
/// # Example
///
/// ```
/// use mufc::{ClientId, Federation, FederationConfig, RemovalOutcome, RemovalRequest};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let clients: Vec<Dataset> = (0..3)
///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
///     .collect::<Result<_, _>>()?;
/// let mut fed = Federation::new(clients, &FederationConfig::new(2).gamma(0.1).validate()?)?;
/// // Three clients, a minimum of three: the second cannot be the last.
/// let report = fed.remove(&RemovalRequest::clients(vec![ClientId(1)]))?;
/// let w = fed.withdrawal().expect("withdrawn");
/// assert_eq!(report.outcome, RemovalOutcome::Withdrawn(w.clone()));
/// assert_eq!((w.request, w.clients, w.min_clients, w.group), (1, 2, 3, None));
/// assert!(fed.server().model().is_none());
/// assert_eq!(fed.server().total_count(), 0);
/// assert_eq!(fed.num_points(), 60);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct Withdrawal {
    /// The request that withdrew the model.
    pub request: u64,
    /// The clients it left (in its group, with groups).
    pub clients: usize,
    /// The policy's minimum aggregate.
    pub min_clients: usize,
    /// The group that fell below the minimum, with groups.
    pub group: Option<usize>,
    /// The aggregation rounds started before (kept so that the counter
    /// never goes back).
    pub(crate) rounds: u64,
}

impl std::fmt::Display for Withdrawal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let where_ = self
            .group
            .map_or_else(String::new, |g| format!(" in group {g}"));
        write!(
            f,
            "request {} would have left {} client{}{where_}, fewer than the minimum aggregate of {} \
             (docs/threat-model.md P4): its records were erased and the model withdrawn",
            self.request,
            self.clients,
            if self.clients == 1 { "" } else { "s" },
            self.min_clients
        )
    }
}

/// What a call of [`Federation::remove`](crate::Federation::remove) or
/// [`Federation::flush`](crate::Federation::flush) did (Algorithm 4).
///
/// A deferred request ([`RemovalOutcome::Deferred`]) changes nothing: its
/// report names no point, client, round or time but its own wall clock.
/// An applied report covers every request in [`Self::requests`] (the
/// pending ones and the last), served in one aggregation round; only
/// applied reports enter [`Federation::history`](crate::Federation::history).
///
/// # Example
///
/// ```
/// use mufc::{ClientId, Federation, FederationConfig, RemovalOutcome, RemovalRequest, ServerUpdate};
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, PointId};
///
/// let clients: Vec<Dataset> = (0..5)
///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
///     .collect::<Result<_, _>>()?;
/// let mut fed = Federation::new(clients, &FederationConfig::new(2).gamma(0.1).validate()?)?;
/// let report = fed.remove(&RemovalRequest::clients(vec![ClientId(1), ClientId(2)]))?;
/// assert_eq!(report.outcome, RemovalOutcome::Applied);
/// assert_eq!(report.removed_clients, vec![ClientId(1), ClientId(2)]);
/// assert_eq!(report.removed_points, 60);
/// assert!(matches!(report.server, ServerUpdate::Incremental(_)));
/// assert_eq!(fed.server().total_count(), 90);
/// assert_eq!(report.privacy_warning, None);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RemovalReport {
    /// The number of the request this report answers: every request
    /// [`Federation::remove`](crate::Federation::remove) accepts gets the
    /// next number, 1 for the first (a report of
    /// [`Federation::flush`](crate::Federation::flush): the last request it
    /// applies).
    pub request: u64,
    /// Whether the requests were applied or this one deferred.
    pub outcome: RemovalOutcome,
    /// The numbers of the requests this round applied, in order (pending
    /// ones first; empty when deferred).
    pub requests: Vec<u64>,
    /// Points removed, whole clients included.
    pub removed_points: usize,
    /// Clients removed whole (named, or all of whose points were named).
    pub removed_clients: Vec<ClientId>,
    /// Clients that reseeded (Algorithm 3, lines 4-14; in full mode:
    /// whose K-means seeds changed).
    pub reseeded: Vec<ClientId>,
    /// Clients whose message changed, removed clients included. Every
    /// removal changes a count, so this is every client the requests of
    /// the round name.
    pub updated_clients: Vec<ClientId>,
    /// What the server decoded.
    pub decode: DecodeKind,
    /// How the server's clustering changed.
    pub server: ServerUpdate,
    /// The time of each stage.
    pub times: StageTimes,
    /// The bytes of one client's message on the wire (as
    /// [`FitReport::bytes_per_client`]).
    pub bytes_per_client: usize,
    /// Nonzero bins of the aggregate after the request (in plain mode:
    /// weighted centroids).
    pub nonzero_bins: usize,
    /// The clients the aggregate includes after the request, in id order:
    /// every remaining client, but with
    /// [`Masking::SecAgg`](crate::Masking::SecAgg) only those whose masked
    /// input reached the server in this request's round (or, when no round
    /// ran, in the last one). The server's counts are the plain sum of
    /// these clients' histograms.
    pub included: Vec<ClientId>,
    /// The clients that dropped out of this request's round, with the
    /// first protocol step each missed (see [`FitReport::dropped`]; empty
    /// when no round ran).
    pub dropped: Vec<(ClientId, SecAggStep)>,
    /// Whether only one client's message changed: the difference of two
    /// aggregates then reveals that client's change of counts, whatever
    /// the masking (docs/threat-model.md §2.2, U3). The default policy
    /// ([`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients))
    /// defers such requests; it happens with a policy of 1 or after
    /// [`Federation::flush`](crate::Federation::flush).
    pub lone_update: bool,
    /// What the server can learn from this round beyond the policy, when
    /// it can: a round in which a single client's message changed (the
    /// server learns that client's change of counts, docs/threat-model.md
    /// U3), or fewer than
    /// [`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients)
    /// (after [`Federation::flush`](crate::Federation::flush)).
    pub privacy_warning: Option<String>,
}

impl RemovalReport {
    /// The report of request `number` that ran no round (`outcome`
    /// deferred or withdrawn): nothing decoded or sent, the model
    /// unchanged, no client listed; a caller sets what it did.
    pub(crate) fn without_round(number: u64, outcome: RemovalOutcome, times: StageTimes) -> Self {
        Self {
            request: number,
            outcome,
            requests: Vec::new(),
            removed_points: 0,
            removed_clients: Vec::new(),
            reseeded: Vec::new(),
            updated_clients: Vec::new(),
            decode: DecodeKind::Skipped,
            server: ServerUpdate::Unchanged,
            times,
            bytes_per_client: 0,
            nonzero_bins: 0,
            included: Vec::new(),
            dropped: Vec::new(),
            lone_update: false,
            privacy_warning: None,
        }
    }
}
