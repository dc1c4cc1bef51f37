//! The unchecked builder of a configuration, [`FederationConfig`]: its
//! defaults and one setter per setting. Checking it into a
//! [`ValidConfig`](crate::ValidConfig) is in [`super::validate`].

use super::channel::Channel;
#[cfg(doc)]
use super::names::Masking;
use super::names::{ClientTraining, ServerPoints};
use super::parts::{
    ClientConfig, ClientK, DEFAULT_CLIENT_RESTARTS, DEFAULT_MIN_CLIENTS, DEFAULT_MIN_CLUSTER_SIZE,
    DEFAULT_MIN_UPDATING_CLIENTS, GammaRule, ServerSettings,
};
use super::run::RunOptions;
use super::topology::Topology;

/// The configuration of a federation, unchecked; [`validate`](Self::validate)
/// turns it into a [`ValidConfig`](crate::ValidConfig).
///
/// **The defaults are chosen for the model's quality, with unlearning
/// exact and cheap** (docs/benchmarks.md, "The defaults on the data
/// suite": measured on synthetic sets of every shape and scikit-learn's
/// bundled ones), and differ from the paper's experiment, which
/// [`Self::paper`] reproduces:
///
/// - clients run full K-means ([`ClientTraining::Full`], the paper's App.
///   M.3), exactly unlearnable ([`seeding::ExactKMeans`]): their centroids
///   are cluster means (of a single record only for a cluster of one);
/// - the number of clusters a client finds follows the data
///   ([`ClientK::ADAPTIVE`]): every point its own cluster for data of at
///   most 1000 points or clients of at most `2K` points, else at most 1000
///   server points in all, never fewer than `K` a client, and `2K` when
///   the clients' survey of their own data ([`crate::remote::Registration::surveying`]) says
///   they hold about `K` clusters each;
/// - every cluster is sent (the minimum cluster size is 1; a larger
///   [`Self::min_cluster_size`] makes every bin the mean of that many
///   records, at a cost in loss ratio on small clients);
/// - the server keeps the best of 10 K-means runs ([`Self::restarts`],
///   scikit-learn's `n_init`), on bin centres with weights
///   ([`ServerPoints::Centers`]);
/// - `gamma = min(1/sqrt(n d), 1/1024)` ([`GammaRule::Fine`]).
///
/// SCMA runs over the cheapest field with one extra check syndrome, masks
/// from an offline dealer. The privacy policies of docs/threat-model.md §6
/// are on: the server sums the messages of at least
/// [`DEFAULT_MIN_CLIENTS`] clients ([`Self::min_clients`]), and an
/// unlearning round changes the messages of at least
/// [`DEFAULT_MIN_UPDATING_CLIENTS`] clients: removal requests wait until
/// enough clients have one ([`Self::min_updating_clients`]).
///
/// # Example
///
/// ```
/// use mufc::{Channel, ClientK, ClientTraining, FederationConfig, Masks, Scma, ServerPoints};
///
/// let config = FederationConfig::new(10).seed(2023).validate()?;
/// assert_eq!(config.client_training(), ClientTraining::Full);
/// assert_eq!(config.client().k(), ClientK::ADAPTIVE);
/// assert_eq!(config.server().kmeans().restarts(), 10);
/// // The paper's non-iid Gaussian setup: K = 10 at the server, K' = 3
/// // per client, seeding only.
/// let paper = FederationConfig::paper(10).client_k(3).validate()?;
/// assert_eq!(paper.client_k(), 3);
/// assert_eq!(paper.client_training(), ClientTraining::Seeding);
/// assert_eq!(paper.gamma(), None); // 1/sqrt(n), resolved by the federation
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FederationConfig {
    pub(super) client: ClientConfig,
    pub(super) server: ServerSettings,
    pub(super) channel: Channel,
    pub(super) gamma: Option<f64>,
    pub(super) gamma_rule: GammaRule,
    pub(super) shift: bool,
    pub(super) seed: u64,
    pub(super) allow_fewer_distinct: bool,
    pub(super) run: RunOptions,
    pub(super) insecure_deterministic_masks: bool,
    pub(super) max_points: Option<u64>,
    pub(super) topology: Topology,
}

impl FederationConfig {
    /// `k` clusters at the server; every other setting at its default
    /// (see the type's docs).
    pub fn new(k: usize) -> Self {
        Self {
            client: ClientConfig {
                k: ClientK::ADAPTIVE,
                resolved_k: None,
                training: ClientTraining::Full,
                tolerance: 1e-4,
                max_iterations: 300,
                restarts: DEFAULT_CLIENT_RESTARTS,
                min_cluster_size: DEFAULT_MIN_CLUSTER_SIZE,
            },
            server: ServerSettings {
                k,
                points: ServerPoints::Centers,
                tolerance: 1e-4,
                max_iterations: 300,
                restarts: 10,
                min_clients: DEFAULT_MIN_CLIENTS,
                min_updating_clients: DEFAULT_MIN_UPDATING_CLIENTS,
            },
            channel: Channel::default(),
            gamma: None,
            gamma_rule: GammaRule::Fine,
            shift: false,
            seed: 0,
            allow_fewer_distinct: false,
            run: RunOptions::new(),
            insecure_deterministic_masks: false,
            max_points: None,
            topology: Topology::Flat,
        }
    }

    /// The paper's experiment (Pan et al. 2023, Alg. 1 and App. M.2), to
    /// reproduce its Table 1 and Fig. 3: clients run K-means++ seeding
    /// only ([`ClientTraining::Seeding`]) with the server's `k`
    /// ([`ClientK::Server`]), every cluster sent however small, the
    /// server samples points uniformly in the bins
    /// ([`ServerPoints::Uniform`]) and runs K-means once, and `gamma =
    /// 1/sqrt(n)` ([`GammaRule::PerPoint`]). The privacy policies and the
    /// channel keep their defaults. On most data it gives a worse model
    /// than [`Self::new`] (docs/benchmarks.md).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientK, FederationConfig, GammaRule, ServerPoints};
    ///
    /// let c = FederationConfig::paper(4).validate()?;
    /// assert_eq!(c.client_k(), 4);
    /// assert_eq!(c.client().k(), ClientK::Server);
    /// assert_eq!(c.server().points(), ServerPoints::Uniform);
    /// assert_eq!(c.server().kmeans().restarts(), 1);
    /// assert_eq!(c.gamma_rule(), GammaRule::PerPoint);
    /// assert_eq!(c.client().min_cluster_size(), 1);
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn paper(k: usize) -> Self {
        let mut c = Self::new(k);
        c.client.k = ClientK::Server;
        c.client.training = ClientTraining::Seeding;
        c.client.min_cluster_size = 1;
        c.server.points = ServerPoints::Uniform;
        c.server.restarts = 1;
        c.gamma_rule = GammaRule::PerPoint;
        c
    }

    /// How the clients are organised for aggregation (default
    /// [`Topology::Flat`]): one aggregate, groups, or a tree of groups
    /// whose removals involve one group, not the whole federation.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{FederationConfig, Topology};
    ///
    /// let c = FederationConfig::new(2).topology(Topology::Groups { size: 5 }).validate()?;
    /// assert_eq!(c.topology().group_size(), Some(5));
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    #[must_use]
    pub fn topology(mut self, topology: Topology) -> Self {
        self.topology = topology;
        self
    }

    /// `k` clusters at every client ([`ClientK::Fixed`]; the paper's `K'`
    /// for non-iid splits). The sketch capacity is `t = k L`.
    #[must_use]
    pub fn client_k(mut self, k: usize) -> Self {
        self.client.k = ClientK::Fixed(k);
        self.client.resolved_k = None;
        self
    }

    /// How many clusters each client finds (default
    /// [`ClientK::ADAPTIVE`]).
    #[must_use]
    pub fn client_k_rule(mut self, rule: ClientK) -> Self {
        self.client.k = rule;
        self.client.resolved_k = None;
        self
    }

    /// The clients' `k` that the adaptive rule gives for the data at hand
    /// ([`ClientK::federation_k_for`]), fixed in advance: a program that
    /// builds several federations of the same data (trials with other
    /// seeds) surveys it once instead of at every
    /// [`Federation::new`](crate::Federation::new). Ignored by the other
    /// rules; a later [`Self::client_k_rule`] or [`Self::client_k`]
    /// clears it.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, ClientK, Federation, FederationConfig};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let clients: Vec<(ClientId, Dataset)> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 40, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)).map(|d| (ClientId(l as u64), d)))
    ///     .collect::<Result<_, _>>()?;
    /// let k = ClientK::ADAPTIVE.federation_k_for(2, &clients);
    /// let config = FederationConfig::new(2).gamma(0.05).resolved_client_k(k).validate()?;
    /// assert_eq!(config.client_k(), k);
    /// let fed = Federation::with_ids(clients, &config)?;
    /// assert_eq!(fed.config().client_k(), k);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn resolved_client_k(mut self, k: usize) -> Self {
        if matches!(self.client.k, ClientK::Adaptive { .. }) {
            self.client.resolved_k = Some(k);
        }
        self
    }

    /// The fewest points a client's cluster stands for to be sent in a
    /// bin of its own (default 1). A bin is
    /// what the server's aggregate shows: with seeding-only clients a
    /// cluster's bin is a quantized record (a seed is a data point), with
    /// full K-means the quantized mean of its points. Smaller clusters are
    /// dissolved, smallest first: their points join the nearest remaining
    /// centre of the same client, and with full K-means that centre moves
    /// to the mean of its new members ([`seeding::ExactModel::min_size`]),
    /// so every bin a client sends is the mean of at least this many of
    /// its records. A client with fewer points in all sends nothing. `1`
    /// sends every cluster (the paper). Deterministic, so unlearning stays
    /// exact (docs/threat-model.md §6a).
    #[must_use]
    pub fn min_cluster_size(mut self, points: u64) -> Self {
        self.client.min_cluster_size = points;
        self
    }

    /// The quantization step gamma (`B = ceil(1/gamma)` bins per axis).
    /// Default: by [`Self::gamma_rule`], `min(1/sqrt(n d), 1/1024)` with
    /// `n` the total number of points when the federation is built and `d`
    /// their dimension. Quantizing adds about
    /// `n d gamma^2 / 12` to the objective (the box has side 1): with the
    /// paper's `1/sqrt(n)` that is `d/12` whatever `n`, which on
    /// scikit-learn's wine and breast_cancer sets was 90 % and 53 % of
    /// the best objective (docs/benchmarks.md).
    #[must_use]
    pub fn gamma(mut self, gamma: f64) -> Self {
        self.gamma = Some(gamma);
        self
    }

    /// How `gamma` is chosen when [`Self::gamma`] does not give it
    /// (default [`GammaRule::Fine`], `min(1/sqrt(n d), 1/1024)`).
    #[must_use]
    pub fn gamma_rule(mut self, rule: GammaRule) -> Self {
        self.gamma_rule = rule;
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

    /// How clients tell the server about their clusters, and with which
    /// masks (default: SCMA over the cheapest field, dealer masks).
    #[must_use]
    pub fn channel(mut self, channel: Channel) -> Self {
        self.channel = channel;
        self
    }

    /// The server's points.
    #[must_use]
    pub fn server_points(mut self, server_points: ServerPoints) -> Self {
        self.server.points = server_points;
        self
    }

    /// What the clients run.
    #[must_use]
    pub fn client_training(mut self, training: ClientTraining) -> Self {
        self.client.training = training;
        self
    }

    /// The relative tolerance of the server's Lloyd iterations (see
    /// [`seeding::KMeansParams::tolerance`]; default `1e-4`).
    #[must_use]
    pub fn tolerance(mut self, tolerance: f64) -> Self {
        self.server.tolerance = tolerance;
        self
    }

    /// The server's iteration cap (default 300).
    #[must_use]
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.server.max_iterations = max_iterations;
        self
    }

    /// The number of runs of the server's K-means, the best kept (default
    /// 10, scikit-learn's `n_init`; every run is updated on unlearning:
    /// the server works on at most `k L` weighted points, so ten runs cost
    /// milliseconds).
    #[must_use]
    pub fn restarts(mut self, restarts: usize) -> Self {
        self.server.restarts = restarts;
        self
    }

    /// The tolerance of the clients' Lloyd iterations in
    /// [`ClientTraining::Full`] (default `1e-4`).
    #[must_use]
    pub fn client_tolerance(mut self, tolerance: f64) -> Self {
        self.client.tolerance = tolerance;
        self
    }

    /// The clients' iteration cap in [`ClientTraining::Full`] (default 300).
    #[must_use]
    pub fn client_max_iterations(mut self, max_iterations: usize) -> Self {
        self.client.max_iterations = max_iterations;
        self
    }

    /// The K-means runs of every client in [`ClientTraining::Full`], the
    /// best kept (default one). Every run is
    /// updated on unlearning, so each costs client time on every removal;
    /// more runs spare the federation a client whose one run merged two
    /// of its clusters (all of whose points then pay the distance to one
    /// server centroid), which the adaptive k's spare clusters already
    /// make rare.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    ///
    /// let c = FederationConfig::new(3).client_restarts(2).validate()?;
    /// assert_eq!(c.client().restarts(), 2);
    /// assert!(FederationConfig::new(3).client_restarts(0).validate().is_err());
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    #[must_use]
    pub fn client_restarts(mut self, restarts: usize) -> Self {
        self.client.restarts = restarts;
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
    /// included clients fails: [`MufcError::TooFewClients`](crate::MufcError::TooFewClients) or
    /// [`MufcError::TooManyDropouts`](crate::MufcError::TooManyDropouts), and nothing changes (but for the
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
        self.server.min_clients = m;
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
        self.server.min_updating_clients = m;
        self
    }

    /// How this process runs the federation (default
    /// [`RunOptions::new`]): switches that change no model and no message.
    #[must_use]
    pub fn run(mut self, options: RunOptions) -> Self {
        self.run = options;
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
    /// Every party reads it from the setup, so a client or a dealer
    /// refuses a setup that asks for it unless its operator allowed it
    /// ([`RemoteClient::allowing_deterministic_masks`](crate::remote::RemoteClient::allowing_deterministic_masks)):
    /// a server cannot make the masks predictable by announcing it. The
    /// in-process driver allows it when its configuration says so. The
    /// keys a dealer shares with the clients are drawn afresh either way
    /// (its seeds, and so the masks, derive from the federation seed).
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
}
