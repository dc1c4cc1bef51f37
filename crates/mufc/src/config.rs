//! The federation's configuration: an unchecked builder,
//! [`FederationConfig`], validated into a [`ValidConfig`] (STYLE: params ->
//! valid params). A configuration has the shape of the system: a client
//! part ([`ClientConfig`]), a server part ([`ServerConfig`]) and a channel
//! part ([`Channel`]), plus the federation seed and run options.

mod channel;
mod names;

pub use channel::{
    Channel, DEFAULT_COLLUDING, DEFAULT_INTEGER_MAX_CAPACITY, Masks, RingMasks, Scma, SecAggOptions,
};
pub use names::{ClientTraining, Masking, Privacy, SecAggGraph, ServerPoints};

use crate::MufcResult;
use crate::error::config_error;

/// The default of [`FederationConfig::min_clients`]: the fewest clients
/// whose messages the server may sum (docs/threat-model.md P4).
pub const DEFAULT_MIN_CLIENTS: usize = 3;

/// The default of [`FederationConfig::min_updating_clients`]: the fewest
/// clients whose message an unlearning round may change
/// (docs/threat-model.md U3).
pub const DEFAULT_MIN_UPDATING_CLIENTS: usize = 2;

/// What each client runs on its own data (the client part of a
/// configuration; Algorithm 1, line 2).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ClientConfig {
    k: Option<usize>,
    training: ClientTraining,
    tolerance: f64,
    max_iterations: usize,
}

impl ClientConfig {
    /// The number of clusters each client finds, if set apart from the
    /// server's (else the server's `k`).
    pub fn k(&self) -> Option<usize> {
        self.k
    }
    /// Seeding only, or full K-means.
    pub fn training(&self) -> ClientTraining {
        self.training
    }
    /// The tolerance of the clients' Lloyd iterations
    /// ([`ClientTraining::Full`]).
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }
    /// The clients' iteration cap ([`ClientTraining::Full`]).
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }
}

/// What the server builds and runs (the server part of a configuration;
/// Algorithm 1, lines 5-6), and the privacy policies it enforces.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ServerConfig {
    k: usize,
    points: ServerPoints,
    tolerance: f64,
    max_iterations: usize,
    restarts: usize,
    min_clients: usize,
    min_updating_clients: usize,
}

impl ServerConfig {
    /// The server's number of clusters `K`.
    pub fn k(&self) -> usize {
        self.k
    }
    /// The points the server builds from the decoded counts.
    pub fn points(&self) -> ServerPoints {
        self.points
    }
    /// The relative tolerance of the server's Lloyd iterations.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }
    /// The server's iteration cap.
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }
    /// The server's number of K-means runs, the best kept.
    pub fn restarts(&self) -> usize {
        self.restarts
    }
    /// The fewest clients whose messages the server may sum.
    pub fn min_clients(&self) -> usize {
        self.min_clients
    }
    /// The fewest clients whose message an unlearning round may change.
    pub fn min_updating_clients(&self) -> usize {
        self.min_updating_clients
    }
}

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
/// use mufc::{Channel, FederationConfig, Masks, Scma, ServerPoints};
///
/// // The paper's non-iid Gaussian setup: K = 10 at the server, K' = 3 per client.
/// let config = FederationConfig::new(10)
///     .client_k(3)
///     .channel(Channel::Scma(Scma::field(Masks::Dealer)))
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
    client: ClientConfig,
    server: ServerConfig,
    channel: Channel,
    gamma: Option<f64>,
    shift: bool,
    seed: u64,
    allow_fewer_distinct: bool,
    parallel: bool,
    record_messages: bool,
    insecure_deterministic_masks: bool,
    max_points: Option<u64>,
}

impl FederationConfig {
    /// `k` clusters at the server (and, unless [`Self::client_k`] says
    /// otherwise, at every client); every other setting at its default.
    pub fn new(k: usize) -> Self {
        Self {
            client: ClientConfig {
                k: None,
                training: ClientTraining::Seeding,
                tolerance: 1e-4,
                max_iterations: 300,
            },
            server: ServerConfig {
                k,
                points: ServerPoints::Centers,
                tolerance: 1e-4,
                max_iterations: 300,
                restarts: 1,
                min_clients: DEFAULT_MIN_CLIENTS,
                min_updating_clients: DEFAULT_MIN_UPDATING_CLIENTS,
            },
            channel: Channel::default(),
            gamma: None,
            shift: false,
            seed: 0,
            allow_fewer_distinct: false,
            parallel: true,
            record_messages: false,
            insecure_deterministic_masks: false,
            max_points: None,
        }
    }

    /// The number of clusters each client finds (the paper's `K'` for
    /// non-iid splits; default: the server's `k`). The sketch capacity is
    /// `t = client_k * L`.
    #[must_use]
    pub fn client_k(mut self, k: usize) -> Self {
        self.client.k = Some(k);
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
    /// 1; every run is updated on unlearning).
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

    /// Checks every setting.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidConfig`](crate::MufcError::InvalidConfig) naming
    /// the setting: `k` or `client_k` zero, `gamma` not finite and
    /// positive, a tolerance negative or not finite, an iteration cap or
    /// restart count of zero, `max_points` zero, `min_clients` or
    /// `min_updating_clients` zero, a SecAgg dropout rate or colluding
    /// fraction outside `[0, 1)`. Combinations that cannot work (SecAgg in
    /// the integer ring or the plain mode, dropouts without SecAgg) cannot
    /// be written: see [`Channel`].
    pub fn validate(self) -> MufcResult<ValidConfig> {
        if self.server.k == 0 {
            return Err(config_error("k", "the server needs at least one cluster"));
        }
        if self.client.k == Some(0) {
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
            ("tolerance", self.server.tolerance),
            ("client_tolerance", self.client.tolerance),
        ] {
            if !(t >= 0.0 && t.is_finite()) {
                return Err(config_error(
                    name,
                    format!("{t} is not finite and non-negative"),
                ));
            }
        }
        for (name, v) in [
            ("max_iterations", self.server.max_iterations),
            ("client_max_iterations", self.client.max_iterations),
            ("restarts", self.server.restarts),
        ] {
            if v == 0 {
                return Err(config_error(name, "must be at least 1"));
            }
        }
        if self.max_points == Some(0) {
            return Err(config_error("max_points", "must be at least 1"));
        }
        for (name, m) in [
            ("min_clients", self.server.min_clients),
            ("min_updating_clients", self.server.min_updating_clients),
        ] {
            if m == 0 {
                return Err(config_error(name, "must be at least 1"));
            }
        }
        self.channel.validate()?;
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
/// use mufc::{Channel, FederationConfig, Privacy};
///
/// let c = FederationConfig::new(4).gamma(0.1).channel(Channel::Plain).validate()?;
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
    /// The client part.
    pub fn client(&self) -> &ClientConfig {
        &self.0.client
    }
    /// The server part.
    pub fn server(&self) -> &ServerConfig {
        &self.0.server
    }
    /// The channel part.
    pub fn channel(&self) -> &Channel {
        &self.0.channel
    }

    // Shortcuts to the parts' settings, which the federation reads often.

    /// The server's number of clusters `K`.
    pub fn k(&self) -> usize {
        self.0.server.k
    }
    /// Each client's number of clusters.
    pub fn client_k(&self) -> usize {
        self.0.client.k.unwrap_or(self.0.server.k)
    }
    /// The grid step, if set (else `1/sqrt(n)` at construction).
    pub fn gamma(&self) -> Option<f64> {
        self.0.gamma
    }
    /// Whether the grid is randomly shifted.
    pub fn shift(&self) -> bool {
        self.0.shift
    }
    /// The privacy mode ([`Channel::privacy`]).
    pub fn privacy(&self) -> Privacy {
        self.0.channel.privacy()
    }
    /// The mask source ([`Channel::masking`]).
    pub fn masking(&self) -> Masking {
        self.0.channel.masking()
    }
    /// The server points.
    pub fn server_points(&self) -> ServerPoints {
        self.0.server.points
    }
    /// What the clients run.
    pub fn client_training(&self) -> ClientTraining {
        self.0.client.training
    }
    /// The server's tolerance.
    pub fn tolerance(&self) -> f64 {
        self.0.server.tolerance
    }
    /// The server's iteration cap.
    pub fn max_iterations(&self) -> usize {
        self.0.server.max_iterations
    }
    /// The server's number of runs.
    pub fn restarts(&self) -> usize {
        self.0.server.restarts
    }
    /// The clients' tolerance (full training).
    pub fn client_tolerance(&self) -> f64 {
        self.0.client.tolerance
    }
    /// The clients' iteration cap (full training).
    pub fn client_max_iterations(&self) -> usize {
        self.0.client.max_iterations
    }
    /// The federation seed.
    pub fn seed(&self) -> u64 {
        self.0.seed
    }
    /// `r`, the extra check syndromes ([`Channel::extra_syndromes`]).
    pub fn extra_syndromes(&self) -> usize {
        self.0.channel.extra_syndromes()
    }
    /// The cap on the integer decoder's capacity
    /// ([`Channel::integer_max_capacity`]).
    pub fn integer_max_capacity(&self) -> usize {
        self.0.channel.integer_max_capacity()
    }
    /// Whether clients with fewer distinct points than `k` are accepted.
    pub fn allow_fewer_distinct(&self) -> bool {
        self.0.allow_fewer_distinct
    }
    /// The fewest clients in an aggregate the server sees
    /// ([`FederationConfig::min_clients`]).
    pub fn min_clients(&self) -> usize {
        self.0.server.min_clients
    }
    /// The fewest clients whose message an unlearning round may change
    /// ([`FederationConfig::min_updating_clients`]).
    pub fn min_updating_clients(&self) -> usize {
        self.0.server.min_updating_clients
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
    /// The dropout rate ([`Channel::dropout`]).
    pub fn dropout(&self) -> f64 {
        self.0.channel.dropout()
    }
    /// The colluding fraction ([`Channel::colluding`]).
    pub fn colluding(&self) -> f64 {
        self.0.channel.colluding()
    }
    /// The neighbourhood graph ([`Channel::secagg_graph`]).
    pub fn secagg_graph(&self) -> SecAggGraph {
        self.0.channel.secagg_graph()
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
