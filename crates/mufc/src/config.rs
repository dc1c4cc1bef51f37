//! The federation's configuration: an unchecked builder,
//! [`FederationConfig`], validated into a [`ValidConfig`] (STYLE: params ->
//! valid params).

use core::fmt;
use core::str::FromStr;

use crate::error::config_error;
use crate::{MufcError, MufcResult};

macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident { $( $(#[$vmeta:meta])* $variant:ident => $text:literal, )+ }
    ) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[non_exhaustive]
        pub enum $name { $( $(#[$vmeta])* $variant, )+ }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The name used on command lines and in reports.
            pub fn name(self) -> &'static str {
                match self { $(Self::$variant => $text,)+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $name {
            type Err = MufcError;
            fn from_str(s: &str) -> Result<Self, MufcError> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name() == s)
                    .ok_or_else(|| {
                        let names: Vec<&str> = Self::ALL.iter().map(|v| v.name()).collect();
                        config_error(stringify!($name), format!("unknown value {s:?}, expected one of {}", names.join(", ")))
                    })
            }
        }
    };
}

named_enum! {
    /// How clients tell the server about their clusters.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::Privacy;
    ///
    /// assert_eq!("scma-wide".parse::<Privacy>()?, Privacy::ScmaWide);
    /// assert_eq!(Privacy::Plain.to_string(), "plain");
    /// assert!("scma2".parse::<Privacy>().is_err());
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub enum Privacy {
        /// Secure compressed multiset aggregation (Algorithm 2 of the
        /// paper) over the cheapest finite field with `p > max(B^d, 2n)`
        /// (the factor 2 leaves room for the signed differences that
        /// unlearning decodes), with `r` extra check syndromes. The
        /// default.
        #[default]
        Scma => "scma",
        /// SCMA with the deterministic integer decoder of Appendix K: exact
        /// integers under a power-of-two modulus, decoded over the
        /// rationals. Only feasible for a tiny capacity `t`: larger
        /// configurations are refused
        /// ([`MufcError::IntegerDecoderTooLarge`]).
        ScmaInteger => "scma-integer",
        /// SCMA with wide keys (`syndrome_agg::wide`): the bytes of a bin
        /// index travel as the key, decoded in GF(2^61 - 1) whatever the
        /// size of `B^d` (beyond the paper; for large d).
        ScmaWide => "scma-wide",
        /// The simplified scheme of Algorithm 5 (Appendix I): each client
        /// sends its exact local centroids and cluster sizes in the clear;
        /// no quantization (no box, no `gamma`); the server clusters the
        /// weighted centroids ([`ServerPoints`] does not apply).
        Plain => "plain",
    }
}

named_enum! {
    /// Where the masks of a secure aggregation round come from.
    ///
    /// Each hides a client's sketch behind a uniformly random vector that
    /// cancels in the sum over the clients of the round, so the decoded
    /// aggregate does not depend on the masking: with no dropouts all three
    /// give the same counts, bit for bit.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::Masking;
    ///
    /// assert_eq!("pairwise".parse::<Masking>()?, Masking::Pairwise);
    /// assert_eq!("secagg".parse::<Masking>()?, Masking::SecAgg);
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub enum Masking {
        /// An offline dealer deals zero-sum masks for every round
        /// (Algorithm 2, line 2: "generated offline"). The default; the
        /// dealing is timed apart, as offline work.
        #[default]
        Dealer => "dealer",
        /// Pairwise masks: every pair of clients agrees on a seed by X25519
        /// and HKDF-SHA256 and expands it with ChaCha20 (no dropouts).
        /// Each client pays one agreement per peer and round.
        Pairwise => "pairwise",
        /// The dropout-tolerant protocol of Bonawitz et al. 2017 (and
        /// SecAgg+, Bell et al. 2020, with [`SecAggGraph::Harary`]), from
        /// `syndrome_agg::secagg`: all five steps (advertise keys, share
        /// keys, masked input, consistency check, unmasking), double masking (pairwise masks
        /// plus a self-mask) and Shamir sharing of the mask secrets, run
        /// in process for every round. Needs a field:
        /// [`Privacy::Scma`] or [`Privacy::ScmaWide`] (the Appendix K
        /// integer ring is refused).
        ///
        /// Clients drop out at the rate set by
        /// [`FederationConfig::dropout`]: whether client `u` drops in round
        /// `r`, and from which step (advertise keys, share keys, masked
        /// input or unmasking), is a fixed function of
        /// the federation seed, `r` and `u` (so runs reproduce; a failed
        /// round consumes `r`, so a retry draws afresh). A client
        /// that drops before sending its masked input is left out of the
        /// round; one that drops during unmasking is *included* (its
        /// self-mask is rebuilt from its shares, docs/threat-model.md D3). The server
        /// decodes the sum of the included clients only, so its counts
        /// and its model are those of the included clients' data; the
        /// reports list the included clients and the dropped ones with
        /// their step. A round in which too few clients remain fails with
        /// [`MufcError::TooManyDropouts`] and changes nothing but the
        /// round counter.
        ///
        /// Privacy caveat (docs/threat-model.md §2.2): the difference of two rounds'
        /// aggregates contains the whole histogram of every client whose
        /// inclusion changed between them; when that is a single client
        /// and nothing else changed, the server learns its histogram.
        SecAgg => "secagg",
    }
}

named_enum! {
    /// The neighbourhood graph of [`Masking::SecAgg`]: who shares its
    /// secrets with whom.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::SecAggGraph;
    ///
    /// assert_eq!(SecAggGraph::default(), SecAggGraph::Complete);
    /// assert_eq!("harary".parse::<SecAggGraph>()?, SecAggGraph::Harary);
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub enum SecAggGraph {
        /// Every client masks with, and shares its secrets with, every
        /// other (Bonawitz et al. 2017; the default). The threshold is
        /// the least `t` with `2t > n + c` (a server that may lie about
        /// who dropped, docs/threat-model.md S1b), `c = floor(colluding n)`
        /// ([`FederationConfig::colluding`]), and must leave room for
        /// `ceil(dropout n)` dropouts (else the configuration is refused
        /// when the federation is built); a round fails when more than
        /// `n - t` clients drop. The cost is quadratic in the number of
        /// clients.
        #[default]
        Complete => "complete",
        /// SecAgg+ (Bell et al. 2020): a Harary graph on a random ring,
        /// of the least even degree that the parameter finder of
        /// `syndrome_agg::secagg::params::ThreatModel` accepts for the
        /// round's number of clients, the dropout rate and the colluding
        /// fraction (security `2^-40`, failure probability `2^-20` given
        /// at most `ceil(dropout n)` dropouts). Small federations get the
        /// complete graph (no smaller degree passes).
        Harary => "harary",
    }
}

named_enum! {
    /// The points the server builds from the decoded counts (Algorithm 1,
    /// line 6).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::ServerPoints;
    ///
    /// assert_eq!(ServerPoints::default(), ServerPoints::Centers);
    /// assert_eq!("uniform".parse::<ServerPoints>()?, ServerPoints::Uniform);
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub enum ServerPoints {
        /// One point per non-empty bin, at the bin centre, weighted by its
        /// count (Section 4; the default here). A removal that changes one
        /// count changes one weight, and the server's exact K-means updates
        /// at a small fraction of the cost of a fit.
        #[default]
        Centers => "centers",
        /// `q_j` points drawn uniformly inside bin `j` (Appendix H; the
        /// paper's default). Sample `i` of a bin is a fixed function of the
        /// federation seed, the bin and `i`, so the server's data depends
        /// on the counts only and unlearning stays exact; but an update
        /// then costs about a fit on overlapping data (see the crate docs).
        Uniform => "uniform",
    }
}

named_enum! {
    /// What each client runs on its own data (Algorithm 1, line 2).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::ClientTraining;
    ///
    /// assert_eq!("full".parse::<ClientTraining>()?, ClientTraining::Full);
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub enum ClientTraining {
        /// K-means++ seeding only (Algorithm 1, line 2; the default):
        /// unlearning reseeds only when a seed is removed (Algorithm 3).
        #[default]
        Seeding => "seeding",
        /// Full K-means (seeding then Lloyd, Appendix M.3), with the
        /// exactly unlearnable [`seeding::ExactKMeans`]: a removal updates
        /// the client's model to the fit of its remaining data, bit for
        /// bit, but its centroids (means) move with every removal.
        Full => "full",
    }
}

/// The default cap on the capacity `t` of the Appendix K integer decoder.
pub const DEFAULT_INTEGER_MAX_CAPACITY: usize = 16;

/// The default of [`FederationConfig::min_clients`]: the fewest clients
/// whose messages the server may sum (docs/threat-model.md P4).
pub const DEFAULT_MIN_CLIENTS: usize = 3;

/// The default of [`FederationConfig::min_updating_clients`]: the fewest
/// clients whose message an unlearning round may change
/// (docs/threat-model.md U3).
pub const DEFAULT_MIN_UPDATING_CLIENTS: usize = 2;

/// The default fraction of clients assumed to collude with the server in
/// [`Masking::SecAgg`] ([`FederationConfig::colluding`]).
pub const DEFAULT_COLLUDING: f64 = 0.05;

/// The configuration of a federation, unchecked; [`validate`](Self::validate)
/// turns it into a [`ValidConfig`].
///
/// Defaults follow the paper where it has one: clients run K-means++
/// seeding only, `gamma = 1/sqrt(n)` (n the total number of points at
/// construction), SCMA over the cheapest field with one extra check
/// syndrome, masks from an offline dealer. Two defaults differ, both for
/// cheap exact unlearning: server points are bin centres with weights
/// (the paper's default is uniform samples, [`ServerPoints::Uniform`]), and
/// the server's K-means is [`seeding::ExactKMeans`] (tolerance `1e-4`, at
/// most 300 iterations, one run).
///
/// The privacy policies of docs/threat-model.md §6 are on: the server sums
/// the messages of at least [`DEFAULT_MIN_CLIENTS`] clients
/// ([`Self::min_clients`]), and an unlearning round changes the messages of
/// at least [`DEFAULT_MIN_UPDATING_CLIENTS`] clients: removal requests wait
/// until enough clients have one ([`Self::min_updating_clients`]).
///
/// # Example
///
/// ```
/// use mufc::{FederationConfig, Privacy, ServerPoints};
///
/// // The paper's non-iid Gaussian setup: K = 10 at the server, K' = 3 per client.
/// let config = FederationConfig::new(10)
///     .client_k(3)
///     .privacy(Privacy::Scma)
///     .server_points(ServerPoints::Centers)
///     .restarts(3)
///     .seed(2023)
///     .validate()?;
/// assert_eq!(config.client_k(), 3);
/// assert_eq!(config.gamma(), None); // 1/sqrt(n), resolved by the federation
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FederationConfig {
    k: usize,
    client_k: Option<usize>,
    gamma: Option<f64>,
    shift: bool,
    privacy: Privacy,
    masking: Masking,
    server_points: ServerPoints,
    client_training: ClientTraining,
    tolerance: f64,
    max_iterations: usize,
    restarts: usize,
    client_tolerance: f64,
    client_max_iterations: usize,
    seed: u64,
    extra_syndromes: usize,
    integer_max_capacity: usize,
    allow_fewer_distinct: bool,
    min_clients: usize,
    min_updating_clients: usize,
    parallel: bool,
    record_messages: bool,
    insecure_deterministic_masks: bool,
    max_points: Option<u64>,
    dropout: f64,
    colluding: f64,
    secagg_graph: SecAggGraph,
}

impl FederationConfig {
    /// `k` clusters at the server (and, unless [`Self::client_k`] says
    /// otherwise, at every client); every other setting at its default.
    pub fn new(k: usize) -> Self {
        Self {
            k,
            client_k: None,
            gamma: None,
            shift: false,
            privacy: Privacy::Scma,
            masking: Masking::Dealer,
            server_points: ServerPoints::Centers,
            client_training: ClientTraining::Seeding,
            tolerance: 1e-4,
            max_iterations: 300,
            restarts: 1,
            client_tolerance: 1e-4,
            client_max_iterations: 300,
            seed: 0,
            extra_syndromes: syndrome_agg::DEFAULT_EXTRA,
            integer_max_capacity: DEFAULT_INTEGER_MAX_CAPACITY,
            allow_fewer_distinct: false,
            min_clients: DEFAULT_MIN_CLIENTS,
            min_updating_clients: DEFAULT_MIN_UPDATING_CLIENTS,
            parallel: true,
            record_messages: false,
            insecure_deterministic_masks: false,
            max_points: None,
            dropout: 0.0,
            colluding: DEFAULT_COLLUDING,
            secagg_graph: SecAggGraph::Complete,
        }
    }

    /// The number of clusters each client finds (the paper's `K'` for
    /// non-iid splits; default: the server's `k`). The sketch capacity is
    /// `t = client_k * L`.
    #[must_use]
    pub fn client_k(mut self, k: usize) -> Self {
        self.client_k = Some(k);
        self
    }

    /// The quantization step gamma (`B = ceil(1/gamma)` bins per axis).
    /// Default: `1/sqrt(n)` with `n` the total number of points when the
    /// federation is built.
    #[must_use]
    pub fn gamma(mut self, gamma: f64) -> Self {
        self.gamma = Some(gamma);
        self
    }

    /// Whether the grid is shifted by a random offset per axis (Ginart et
    /// al. 2019; Appendix H, footnote 2), drawn from the federation seed.
    /// Default `false`.
    #[must_use]
    pub fn shift(mut self, shift: bool) -> Self {
        self.shift = shift;
        self
    }

    /// The privacy mode.
    #[must_use]
    pub fn privacy(mut self, privacy: Privacy) -> Self {
        self.privacy = privacy;
        self
    }

    /// The source of the aggregation masks.
    #[must_use]
    pub fn masking(mut self, masking: Masking) -> Self {
        self.masking = masking;
        self
    }

    /// The server's points.
    #[must_use]
    pub fn server_points(mut self, server_points: ServerPoints) -> Self {
        self.server_points = server_points;
        self
    }

    /// What the clients run.
    #[must_use]
    pub fn client_training(mut self, training: ClientTraining) -> Self {
        self.client_training = training;
        self
    }

    /// The relative tolerance of the server's Lloyd iterations (see
    /// [`seeding::KMeansParams::tolerance`]; default `1e-4`).
    #[must_use]
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// The server's iteration cap (default 300).
    #[must_use]
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// The number of runs of the server's K-means, the best kept (default
    /// 1; every run is updated on unlearning).
    #[must_use]
    pub fn restarts(mut self, restarts: usize) -> Self {
        self.restarts = restarts;
        self
    }

    /// The tolerance of the clients' Lloyd iterations in
    /// [`ClientTraining::Full`] (default `1e-4`).
    #[must_use]
    pub fn client_tolerance(mut self, tolerance: f64) -> Self {
        self.client_tolerance = tolerance;
        self
    }

    /// The clients' iteration cap in [`ClientTraining::Full`] (default 300).
    #[must_use]
    pub fn client_max_iterations(mut self, max_iterations: usize) -> Self {
        self.client_max_iterations = max_iterations;
        self
    }

    /// The federation seed: every client seed, the server's seed, the
    /// samples in bins and the simulated dropouts derive from it (default
    /// 0). The masks do not, unless
    /// [`Self::insecure_deterministic_masks`] says so.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// `r`, the extra check syndromes beyond `2t` (default 1; 0 is the
    /// paper's Algorithm 2).
    #[must_use]
    pub fn extra_syndromes(mut self, r: usize) -> Self {
        self.extra_syndromes = r;
        self
    }

    /// The largest capacity `t` accepted by [`Privacy::ScmaInteger`]
    /// (default [`DEFAULT_INTEGER_MAX_CAPACITY`]).
    #[must_use]
    pub fn integer_max_capacity(mut self, t: usize) -> Self {
        self.integer_max_capacity = t;
        self
    }

    /// Whether clients with fewer distinct points than their `k` are
    /// accepted (they then find fewer clusters). Default `false`: such a
    /// client is an error. Removals never fail for this reason; a client
    /// that drops below `k` distinct points simply finds fewer clusters,
    /// which is what a federation built with this flag set on the remaining
    /// data holds.
    #[must_use]
    pub fn allow_fewer_distinct(mut self, allow: bool) -> Self {
        self.allow_fewer_distinct = allow;
        self
    }

    /// The fewest clients whose messages the server may sum (default
    /// [`DEFAULT_MIN_CLIENTS`], 3; docs/threat-model.md P4). The sum of two
    /// clients reveals each to the other, and in general the server plus
    /// `m - 1` colluding clients learn the last client of an `m`-client
    /// aggregate (docs/threat-model.md §2.1).
    ///
    /// A federation of fewer clients is refused when it is built, a
    /// removal request that would leave fewer (but not zero) clients is
    /// refused, and a [`Masking::SecAgg`] round whose dropouts leave fewer
    /// included clients fails: [`MufcError::TooFewClients`] or
    /// [`MufcError::TooManyDropouts`], and nothing changes (but for the
    /// round counter of a round that started). With [`Masking::SecAgg`]
    /// the protocol's own threshold applies too.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{Federation, FederationConfig, MufcError};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let two: Vec<Dataset> = (0..2)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let config = FederationConfig::new(2).gamma(0.1).validate()?;
    /// assert_eq!(config.min_clients(), 3);
    /// let err = Federation::new(two.clone(), &config).unwrap_err();
    /// assert_eq!(err, MufcError::TooFewClients { clients: 2, min_clients: 3 });
    /// // Accepting that the two clients learn each other's histogram:
    /// let fed = Federation::new(two, &config.into_builder().min_clients(2).validate()?)?;
    /// assert_eq!(fed.clients().len(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn min_clients(mut self, m: usize) -> Self {
        self.min_clients = m;
        self
    }

    /// The fewest clients whose message an unlearning round may change
    /// (default [`DEFAULT_MIN_UPDATING_CLIENTS`], 2; docs/threat-model.md
    /// U3): the difference of two aggregates is the change of the clients
    /// that updated, so a round in which one client alone changes reveals
    /// that change to the server (for a removed point that is not a seed,
    /// the bin it counted in).
    ///
    /// [`Federation::remove`](crate::Federation::remove) keeps a request
    /// that, with the requests already pending, names fewer clients as
    /// pending ([`RemovalOutcome::Deferred`](crate::RemovalOutcome::Deferred)):
    /// the model does not change until the pending requests name enough
    /// clients, and then one round applies them all.
    /// [`Federation::flush`](crate::Federation::flush) applies what is
    /// pending at once, with a warning in the report. `1` applies every
    /// request at once (the report's
    /// [`lone_update`](crate::RemovalReport::lone_update) and
    /// [`privacy_warning`](crate::RemovalReport::privacy_warning) then say
    /// when a single client changed).
    #[must_use]
    pub fn min_updating_clients(mut self, m: usize) -> Self {
        self.min_updating_clients = m;
        self
    }

    /// Whether clients run in parallel (with the `parallel` feature;
    /// default `true`). The results are the same bits either way.
    #[must_use]
    pub fn parallel(mut self, parallel: bool) -> Self {
        self.parallel = parallel;
        self
    }

    /// Whether the federation keeps the wire frames of the last round, for
    /// inspection (default `false`).
    #[must_use]
    pub fn record_messages(mut self, record: bool) -> Self {
        self.record_messages = record;
        self
    }

    /// **Insecure; for tests and reproduction only.** Whether the secrets
    /// of every aggregation round (the session id, the dealer's masks, the
    /// clients' key pairs, the SecAgg self-mask seeds, Shamir polynomials
    /// and SecAgg+ graph) derive from the federation seed and the round
    /// number instead of the operating system's random source (default
    /// `false`: fresh secrets every round).
    ///
    /// With it, anyone who knows the seed knows every mask, and a round
    /// number that runs twice (a reloaded older save serving another
    /// request) masks two different inputs with the same masks: their
    /// difference reveals the difference of the inputs. The models do not
    /// depend on it: masks cancel in the sum, and data, seeding, K-means
    /// and simulated dropouts derive from the seed either way.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    ///
    /// let c = FederationConfig::new(3).validate()?;
    /// assert!(!c.insecure_deterministic_masks());
    /// let c = c.into_builder().insecure_deterministic_masks(true).validate()?;
    /// assert!(c.insecure_deterministic_masks());
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    #[must_use]
    pub fn insecure_deterministic_masks(mut self, deterministic: bool) -> Self {
        self.insecure_deterministic_masks = deterministic;
        self
    }

    /// The public bound on the total count, which fixes the count policy
    /// and with it the field. Default: the number of points when the
    /// federation is built (removals only lower it).
    #[must_use]
    pub fn max_points(mut self, n: u64) -> Self {
        self.max_points = Some(n);
        self
    }

    /// The probability that a client drops out of a round of
    /// [`Masking::SecAgg`], in `[0, 1)` (default 0). Each client that
    /// drops does so from one of the protocol's steps (advertise keys,
    /// share keys, masked input, unmasking), uniformly;
    /// draws are a function of the federation seed, the round and the
    /// client (a simulation input, reproducible). A failed round consumes
    /// its round number, so a retry draws afresh. Only [`Masking::SecAgg`] survives dropouts: a positive rate
    /// with another masking is refused.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{FederationConfig, Masking, MufcError};
    ///
    /// let c = FederationConfig::new(3).masking(Masking::SecAgg).dropout(0.2).validate()?;
    /// assert_eq!(c.dropout(), 0.2);
    /// let err = FederationConfig::new(3).masking(Masking::SecAgg).dropout(1.0).validate();
    /// assert!(matches!(err, Err(MufcError::InvalidConfig { name: "dropout", .. })));
    /// # Ok::<(), MufcError>(())
    /// ```
    #[must_use]
    pub fn dropout(mut self, rate: f64) -> Self {
        self.dropout = rate;
        self
    }

    /// The fraction `gamma` of clients assumed to collude with the server,
    /// in `[0, 1)` (default [`DEFAULT_COLLUDING`]), from which
    /// [`Masking::SecAgg`] sizes its threshold: `c = floor(gamma n)`
    /// colluders on the complete graph, or the finder's bound on the
    /// colluders among one client's neighbours on a Harary graph.
    #[must_use]
    pub fn colluding(mut self, fraction: f64) -> Self {
        self.colluding = fraction;
        self
    }

    /// The neighbourhood graph of [`Masking::SecAgg`] (default
    /// [`SecAggGraph::Complete`]).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{FederationConfig, Masking, SecAggGraph};
    ///
    /// // SecAgg+ for a large federation, planned for 10% dropouts and 2%
    /// // colluding clients.
    /// let c = FederationConfig::new(10)
    ///     .masking(Masking::SecAgg)
    ///     .secagg_graph(SecAggGraph::Harary)
    ///     .dropout(0.1)
    ///     .colluding(0.02)
    ///     .validate()?;
    /// assert_eq!((c.secagg_graph(), c.colluding()), (SecAggGraph::Harary, 0.02));
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    #[must_use]
    pub fn secagg_graph(mut self, graph: SecAggGraph) -> Self {
        self.secagg_graph = graph;
        self
    }

    /// Checks every setting.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidConfig`] naming the setting: `k` or `client_k`
    /// zero, `gamma` not finite and positive, a tolerance negative or not
    /// finite, an iteration cap or restart count of zero, `max_points`
    /// zero, `min_clients` or `min_updating_clients` zero, a dropout rate
    /// or colluding fraction outside `[0, 1)`, a
    /// positive dropout rate without [`Masking::SecAgg`], and
    /// [`Masking::SecAgg`] with [`Privacy::ScmaInteger`] (a ring, not a
    /// field: Shamir sharing and the protocol's masks need a field) or
    /// [`Privacy::Plain`] (nothing to aggregate securely).
    pub fn validate(self) -> MufcResult<ValidConfig> {
        if self.k == 0 {
            return Err(config_error("k", "the server needs at least one cluster"));
        }
        if self.client_k == Some(0) {
            return Err(config_error(
                "client_k",
                "clients need at least one cluster",
            ));
        }
        if let Some(g) = self.gamma
            && !(g > 0.0 && g.is_finite())
        {
            return Err(config_error(
                "gamma",
                format!("{g} is not finite and positive"),
            ));
        }
        for (name, t) in [
            ("tolerance", self.tolerance),
            ("client_tolerance", self.client_tolerance),
        ] {
            if !(t >= 0.0 && t.is_finite()) {
                return Err(config_error(
                    name,
                    format!("{t} is not finite and non-negative"),
                ));
            }
        }
        for (name, v) in [
            ("max_iterations", self.max_iterations),
            ("client_max_iterations", self.client_max_iterations),
            ("restarts", self.restarts),
        ] {
            if v == 0 {
                return Err(config_error(name, "must be at least 1"));
            }
        }
        if self.max_points == Some(0) {
            return Err(config_error("max_points", "must be at least 1"));
        }
        for (name, m) in [
            ("min_clients", self.min_clients),
            ("min_updating_clients", self.min_updating_clients),
        ] {
            if m == 0 {
                return Err(config_error(name, "must be at least 1"));
            }
        }
        for (name, r) in [("dropout", self.dropout), ("colluding", self.colluding)] {
            if !(0.0..1.0).contains(&r) {
                return Err(config_error(name, format!("{r} is not in [0, 1)")));
            }
        }
        if self.dropout > 0.0 && self.masking != Masking::SecAgg {
            return Err(config_error(
                "dropout",
                format!(
                    "only the secagg masking survives dropouts (masking is {})",
                    self.masking
                ),
            ));
        }
        if self.masking == Masking::SecAgg {
            match self.privacy {
                Privacy::ScmaInteger => {
                    return Err(config_error(
                        "masking",
                        "secagg needs a field, and the integer scheme (Appendix K) works in the \
                         ring Z/2^k: use scma or scma-wide, or the dealer or pairwise masking",
                    ));
                }
                Privacy::Plain => {
                    return Err(config_error(
                        "masking",
                        "the plain mode sends centroids in the clear: there is nothing to \
                         aggregate securely",
                    ));
                }
                Privacy::Scma | Privacy::ScmaWide => {}
            }
        }
        Ok(ValidConfig(self))
    }
}

/// A checked [`FederationConfig`]; [`Federation::new`](crate::Federation::new)
/// takes only these. A federation's own config
/// ([`Federation::config`](crate::Federation::config)) has `gamma` and
/// `max_points` resolved, so that a federation built from it on other data
/// uses the same grid and the same field: that is how to retrain from
/// scratch for comparison.
///
/// # Example
///
/// ```
/// use mufc::{FederationConfig, Privacy};
///
/// let c = FederationConfig::new(4).gamma(0.1).privacy(Privacy::Plain).validate()?;
/// assert_eq!(c.k(), 4);
/// assert_eq!(c.client_k(), 4);
/// assert_eq!(c.gamma(), Some(0.1));
/// assert_eq!(c.privacy(), Privacy::Plain);
/// // Back to the builder, to change a setting.
/// let c2 = c.into_builder().seed(7).validate()?;
/// assert_eq!(c2.seed(), 7);
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ValidConfig(FederationConfig);

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for ValidConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FederationConfig::deserialize(d)?
            .validate()
            .map_err(serde::de::Error::custom)
    }
}

impl ValidConfig {
    /// The unchecked builder, to change settings.
    pub fn into_builder(self) -> FederationConfig {
        self.0
    }
    /// The server's number of clusters `K`.
    pub fn k(&self) -> usize {
        self.0.k
    }
    /// Each client's number of clusters.
    pub fn client_k(&self) -> usize {
        self.0.client_k.unwrap_or(self.0.k)
    }
    /// The grid step, if set (else `1/sqrt(n)` at construction).
    pub fn gamma(&self) -> Option<f64> {
        self.0.gamma
    }
    /// Whether the grid is randomly shifted.
    pub fn shift(&self) -> bool {
        self.0.shift
    }
    /// The privacy mode.
    pub fn privacy(&self) -> Privacy {
        self.0.privacy
    }
    /// The mask source.
    pub fn masking(&self) -> Masking {
        self.0.masking
    }
    /// The server points.
    pub fn server_points(&self) -> ServerPoints {
        self.0.server_points
    }
    /// What the clients run.
    pub fn client_training(&self) -> ClientTraining {
        self.0.client_training
    }
    /// The server's tolerance.
    pub fn tolerance(&self) -> f64 {
        self.0.tolerance
    }
    /// The server's iteration cap.
    pub fn max_iterations(&self) -> usize {
        self.0.max_iterations
    }
    /// The server's number of runs.
    pub fn restarts(&self) -> usize {
        self.0.restarts
    }
    /// The clients' tolerance (full training).
    pub fn client_tolerance(&self) -> f64 {
        self.0.client_tolerance
    }
    /// The clients' iteration cap (full training).
    pub fn client_max_iterations(&self) -> usize {
        self.0.client_max_iterations
    }
    /// The federation seed.
    pub fn seed(&self) -> u64 {
        self.0.seed
    }
    /// `r`, the extra check syndromes.
    pub fn extra_syndromes(&self) -> usize {
        self.0.extra_syndromes
    }
    /// The cap on the integer decoder's capacity.
    pub fn integer_max_capacity(&self) -> usize {
        self.0.integer_max_capacity
    }
    /// Whether clients with fewer distinct points than `k` are accepted.
    pub fn allow_fewer_distinct(&self) -> bool {
        self.0.allow_fewer_distinct
    }
    /// The fewest clients in an aggregate the server sees
    /// ([`FederationConfig::min_clients`]).
    pub fn min_clients(&self) -> usize {
        self.0.min_clients
    }
    /// The fewest clients whose message an unlearning round may change
    /// ([`FederationConfig::min_updating_clients`]).
    pub fn min_updating_clients(&self) -> usize {
        self.0.min_updating_clients
    }
    /// Whether clients run in parallel.
    pub fn parallel(&self) -> bool {
        self.0.parallel
    }
    /// Whether the last round's frames are kept.
    pub fn record_messages(&self) -> bool {
        self.0.record_messages
    }
    /// Whether the round secrets derive from the seed (insecure, see
    /// [`FederationConfig::insecure_deterministic_masks`]).
    pub fn insecure_deterministic_masks(&self) -> bool {
        self.0.insecure_deterministic_masks
    }
    /// The bound on the total count, if set.
    pub fn max_points(&self) -> Option<u64> {
        self.0.max_points
    }
    /// The dropout rate ([`Masking::SecAgg`]).
    pub fn dropout(&self) -> f64 {
        self.0.dropout
    }
    /// The colluding fraction ([`Masking::SecAgg`]).
    pub fn colluding(&self) -> f64 {
        self.0.colluding
    }
    /// The neighbourhood graph ([`Masking::SecAgg`]).
    pub fn secagg_graph(&self) -> SecAggGraph {
        self.0.secagg_graph
    }

    /// This config with `gamma` and `max_points` fixed.
    pub(crate) fn resolved(&self, gamma: f64, max_points: u64) -> Self {
        let mut c = self.0.clone();
        c.gamma = Some(gamma);
        c.max_points = Some(max_points);
        Self(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in Privacy::ALL {
            assert_eq!(p.name().parse::<Privacy>().unwrap(), *p);
        }
        for m in Masking::ALL {
            assert_eq!(m.to_string().parse::<Masking>().unwrap(), *m);
        }
        for s in ServerPoints::ALL {
            assert_eq!(s.name().parse::<ServerPoints>().unwrap(), *s);
        }
        for t in ClientTraining::ALL {
            assert_eq!(t.name().parse::<ClientTraining>().unwrap(), *t);
        }
        for g in SecAggGraph::ALL {
            assert_eq!(g.name().parse::<SecAggGraph>().unwrap(), *g);
        }
        let err = "Scma".parse::<Privacy>().unwrap_err();
        assert!(
            err.to_string()
                .contains("scma, scma-integer, scma-wide, plain")
        );
    }

    #[test]
    fn resolved_config_fixes_gamma_and_the_bound() {
        let c = FederationConfig::new(3).validate().unwrap();
        assert_eq!((c.gamma(), c.max_points()), (None, None));
        let r = c.resolved(0.25, 40);
        assert_eq!((r.gamma(), r.max_points()), (Some(0.25), Some(40)));
        assert_eq!(r.clone().into_builder().validate().unwrap(), r);
    }
}
