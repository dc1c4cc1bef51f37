//! The client and server parts of a configuration ([`ClientConfig`],
//! [`ServerConfig`]: what each side runs) and the defaults of the server's
//! privacy policies. The builder ([`super::builder`]) writes their fields;
//! [`ValidConfig`](crate::ValidConfig) hands them out checked.

use seeding::{KMeansParams, SeedingError, ValidKMeansParams};

use super::names::{ClientTraining, ServerPoints};
use crate::error::config_error;
use crate::{ConfigParam, MufcResult};

/// The default of
/// [`FederationConfig::min_clients`](crate::FederationConfig::min_clients):
/// the fewest clients whose messages the server may sum
/// (docs/threat-model.md P4).
pub const DEFAULT_MIN_CLIENTS: usize = 3;

/// The default of
/// [`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients):
/// the fewest clients whose message an unlearning round may change
/// (docs/threat-model.md U3).
pub const DEFAULT_MIN_UPDATING_CLIENTS: usize = 2;

/// The default of [`FederationConfig::min_cluster_size`](crate::FederationConfig::min_cluster_size):
/// a client's cluster is sent in a bin of its own only if it stands for at
/// least this many points (docs/threat-model.md §6a).
///
/// 1: every cluster is sent. Chosen by measurement on the data suite
/// (docs/benchmarks.md, "The defaults on the data suite"): a minimum of 2
/// costs nothing on clients of hundreds of points, but 0.044 in loss ratio
/// on scikit-learn's iris and 0.020 on wine split over 10 clients (15 to
/// 18 points a client), which takes both above 1.05; 3 costs 0.09 and
/// 0.05. With full client K-means a bin is then the mean of a cluster,
/// and of a single record only for a cluster of one point; a federation
/// that must never send one asks for 2 or more.
pub(crate) const DEFAULT_MIN_CLUSTER_SIZE: u64 = 1;

/// The default of
/// [`FederationConfig::client_restarts`](crate::FederationConfig::client_restarts):
/// the K-means runs of a client, the best kept.
///
/// 1, measured on the data suite (docs/benchmarks.md, "The defaults on the
/// data suite"): with the adaptive k's spare clusters ([`ClientK::ADAPTIVE`])
/// every set is within 1.05 of the best objective with one run; three runs
/// gain 0.013 on iris and 0.016 on wine split over 10 clients, and cost
/// about three times the client's part of every fit and removal (a removal
/// round on four sites of 5 000 points: 194 ms against 83 ms).
pub(crate) const DEFAULT_CLIENT_RESTARTS: usize = 1;

/// How many clusters each client finds
/// ([`FederationConfig::client_k_rule`](crate::FederationConfig::client_k_rule)).
///
/// # Example
///
/// ```
/// use mufc::ClientK;
///
/// // The default: a federation of 100 clients holding 30 000 points, K = 10,
/// // whose clients hold a few clusters each (survey scale 4).
/// let rule = ClientK::ADAPTIVE;
/// assert_eq!(rule.federation_k(10, 30_000, 100, 4), 10);
/// // The same clients holding all ten clusters each (an i.i.d. split,
/// // survey scale 8 or more): twice K.
/// assert_eq!(rule.federation_k(10, 30_000, 100, 8), 20);
/// // Four sites of 5 000 points each: many more clusters a site.
/// assert_eq!(rule.federation_k(10, 20_000, 4, 1), 250);
/// // 150 points over 20 clients: every point its own cluster.
/// assert_eq!(rule.federation_k(3, 150, 20, 1), 8);
/// // 500 clients of 12 points, K = 10: all twelve, although more than
/// // 1000 server points.
/// assert_eq!(rule.federation_k(10, 6_000, 500, 1), 12);
/// assert_eq!(ClientK::Fixed(3).federation_k(10, 20_000, 4, 16), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum ClientK {
    /// The server's `K` at every client (the paper's App. M.2: "K is set
    /// to be the same in both clients and server").
    Server,
    /// `k` clusters at every client.
    Fixed(usize),
    /// Adapted to the data (the default). For `n` points over `L`
    /// clients (`n / L` a client on average) the federation's `k` is the
    /// largest of
    ///
    /// - `K`, the server's clusters;
    /// - `min(ceil(n / (L m)), ceil(T / L))`: about `m` points a local
    ///   cluster, but at most `T` server points in all (the sketch's
    ///   capacity, hence its bytes and decode time, grows with `k L`).
    ///   With `m = 1`, a data set of at most `T` points is sent whole,
    ///   every point its own cluster (quantized); and so are clients of at
    ///   most `2K` points on average (`ceil(n / (L m)) <= 2K`), whatever
    ///   `T`: the floor of `K` clusters a client costs half that capacity
    ///   already, and a summary would merge pairs of points, on an i.i.d.
    ///   split most often of different clusters (500 clients of 12 points:
    ///   1.046 with `k = K = 10`, 1.022 with 12);
    /// - when the clients hold about `K` clusters each (the median of
    ///   their survey scales, [`Registration::surveying`](crate::remote::Registration::surveying), is at least
    ///   the largest power of two not above `K`: an i.i.d. split),
    ///   `min(2K, ceil(n / (L P)))`: up to twice `K` for clients of `P`
    ///   points a server cluster. One K-means run with `K` centres on a
    ///   client that holds all `K` clusters now and then merges two of
    ///   them, and every point of a merged cluster pays the distance to
    ///   one server centroid; spare centres keep them apart (on i.i.d.
    ///   splits of 200 to 5 000 points a client, loss ratios of 1.1 to
    ///   2.4 fell to 1.00-1.05). Clients that hold fewer clusters than
    ///   `K` (a non-i.i.d. split) have spare centres already, and doubling
    ///   would only double the bytes and the decode time.
    ///
    /// A client of `n_l` points finds `min(k, ceil(n_l / m))` clusters.
    /// The federation's `k` is fixed when it is built; a client's own
    /// follows its size, and a removal that changes it refits that client.
    Adaptive {
        /// `m`: the points a local cluster aims at.
        points_per_cluster: usize,
        /// `T`: the most server points (the sketch's capacity) the second
        /// term gives.
        server_points: usize,
        /// `P`: the points a client holds per server cluster from which it
        /// finds up to `2K` when the survey says it holds about `K`
        /// clusters (the third term).
        double_from: usize,
    },
}

impl ClientK {
    /// The default rule: `Adaptive { points_per_cluster: 1,
    /// server_points: 1000, double_from: 10 }` (docs/benchmarks.md, "The
    /// defaults on the data suite").
    ///
    /// `m = 1`: a local cluster of two points on an i.i.d. split is most
    /// often two records of two different clusters, and its mean lies
    /// between them; on scikit-learn's iris and wine split i.i.d. over 20
    /// clients (7 to 9 points a client) `m = 2` gave 1.078 and 1.064, `m =
    /// 1` 1.000, and on 500 clients of 12 points 2.47 against 1.05
    /// (docs/benchmarks.md, the suite's `500-small`).
    /// `P = 10`: the survey, not the size, says when to double; ten points
    /// a cluster is where the doubled clusters are still means of several
    /// points.
    pub const ADAPTIVE: Self = Self::Adaptive {
        points_per_cluster: 1,
        server_points: 1000,
        double_from: 10,
    };

    /// The federation's client `k` for `n` points over `clients` clients,
    /// `K = server_k` server clusters and the median `scale` of the
    /// clients' survey scales ([`Registration::surveying`](crate::remote::Registration::surveying);
    /// only the adaptive rule reads it).
    pub fn federation_k(self, server_k: usize, n: u64, clients: usize, scale: u32) -> usize {
        match self {
            Self::Server => server_k,
            Self::Fixed(k) => k,
            Self::Adaptive {
                points_per_cluster,
                server_points,
                double_from,
            } => {
                let l = clients.max(1);
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                let per = n.div_ceil(l.saturating_mul(points_per_cluster.max(1)));
                let budget = server_points.div_ceil(l);
                // Clients of at most 2K points on average send them all:
                // the floor of K clusters a client costs half that
                // capacity already, and a summary would merge pairs of
                // points (on an i.i.d. split, of different clusters).
                let sent = if per <= server_k.saturating_mul(2) {
                    per
                } else {
                    per.min(budget)
                };
                let holds_k = usize::try_from(scale).unwrap_or(usize::MAX) >= floor_pow2(server_k);
                let spare = if holds_k {
                    n.div_ceil(l.saturating_mul(double_from.max(1)))
                        .min(server_k.saturating_mul(2))
                } else {
                    0
                };
                server_k.max(sent).max(spare)
            }
        }
    }

    /// The federation's client `k` for these clients' data: their
    /// survey scales ([`Registration::surveying`](crate::remote::Registration::surveying))
    /// taken when the rule is adaptive (what [`Federation::new`](crate::Federation::new) resolves).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, ClientK};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let one = Dataset::new(DMatrix::from_fn(2, 40, |a, i| (a + i) as f64 / 100.0))?;
    /// let clients = vec![(ClientId(0), one.clone()), (ClientId(1), one)];
    /// assert_eq!(ClientK::ADAPTIVE.federation_k_for(2, &clients), 40);
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn federation_k_for(
        self,
        server_k: usize,
        clients: &[(crate::ClientId, seeding::Dataset)],
    ) -> usize {
        let n = clients.iter().map(|(_, d)| d.len() as u64).sum();
        let scale = match self {
            Self::Adaptive { .. } => super::survey::median_scale_of(clients),
            _ => 1,
        };
        self.federation_k(server_k, n, clients.len(), scale)
    }
}

/// The largest power of two not above `k` (`1` for `k <= 1`).
fn floor_pow2(k: usize) -> usize {
    1 << k.max(1).ilog2()
}

/// How the quantization step gamma is chosen when it is not given
/// ([`FederationConfig::gamma_rule`](crate::FederationConfig::gamma_rule)),
/// for `n` points of dimension `d` when the federation is built.
///
/// # Example
///
/// ```
/// use mufc::GammaRule;
///
/// assert_eq!(GammaRule::Fine.gamma(400, 4), 1.0 / 1024.0);
/// assert_eq!(GammaRule::Fine.gamma(4_000_000, 4), 1.0 / 4000.0);
/// assert_eq!(GammaRule::PerPointAndAxis.gamma(400, 4), 1.0 / 40.0);
/// assert_eq!(GammaRule::PerPoint.gamma(400, 4), 1.0 / 20.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum GammaRule {
    /// `min(1/sqrt(n d), 1/1024)` (the default): the rule below, but at
    /// least [`GammaRule::FINE_STEPS`] steps along each side of the box.
    ///
    /// Why the cap: the data is scaled into the box by one common factor,
    /// so an axis whose values spread over less than a step (a feature in
    /// other units than the widest, wine's colour next to its proline)
    /// has all its centroids snapped to the same few bin centres: a bias
    /// that does not average out over clients, up to `gamma/2` on each such
    /// axis for every point. On scikit-learn's wine set `1/sqrt(n d)`
    /// (0.021) cost 0.11 in loss ratio, 1/1024 nothing measurable
    /// (docs/benchmarks.md, "The defaults on the data suite"). The price is
    /// `d log2(1024) = 10 d` bits in a bin's index at most.
    #[default]
    Fine,
    /// `1/sqrt(n d)`. Quantizing moves a point by up to `gamma/2` along
    /// each axis, about `n d gamma^2 / 12` in the objective (the box has
    /// side 1): `1/12` with this rule, whatever the data's size and
    /// dimension.
    PerPointAndAxis,
    /// `1/sqrt(n)`: the paper's. It adds about `d/12` to the objective,
    /// which on small real data sets is as large as the best objective
    /// itself (docs/benchmarks.md, "The defaults on real data").
    PerPoint,
}

impl GammaRule {
    /// The fewest steps along a side of the box [`GammaRule::Fine`] allows.
    pub const FINE_STEPS: u32 = 1024;

    /// The step for `n` points of dimension `d`.
    pub fn gamma(self, n: u64, d: usize) -> f64 {
        let n = n.max(1) as f64;
        let per_point_and_axis = 1.0 / (n * d.max(1) as f64).sqrt();
        match self {
            Self::Fine => per_point_and_axis.min(1.0 / f64::from(Self::FINE_STEPS)),
            Self::PerPointAndAxis => per_point_and_axis,
            Self::PerPoint => 1.0 / n.sqrt(),
        }
    }
}

/// What each client runs on its own data (the client part of a
/// configuration; Algorithm 1, line 2).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ClientConfig {
    pub(super) k: ClientK,
    /// The federation's `k` once resolved from the data
    /// ([`ClientK::Adaptive`]), fixed from then on.
    pub(super) resolved_k: Option<usize>,
    pub(super) training: ClientTraining,
    pub(super) tolerance: f64,
    pub(super) max_iterations: usize,
    pub(super) restarts: usize,
    pub(super) min_cluster_size: u64,
}

impl ClientConfig {
    /// How many clusters each client finds.
    pub fn k(&self) -> ClientK {
        self.k
    }
    /// The fewest points a client's cluster stands for to be sent in a
    /// bin of its own.
    pub fn min_cluster_size(&self) -> u64 {
        self.min_cluster_size
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
    /// The K-means runs of every client, the best kept
    /// ([`ClientTraining::Full`]).
    pub fn restarts(&self) -> usize {
        self.restarts
    }
    /// The clients' iteration cap ([`ClientTraining::Full`]).
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }
}

/// The server part as the builder writes it, unchecked; serialized as it
/// always was (a saved federation and the store's rows keep these fields
/// in this order). [`Self::checked`] gives the [`ServerConfig`] a
/// [`ValidConfig`](crate::ValidConfig) hands out.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ServerSettings {
    pub(super) k: usize,
    pub(super) points: ServerPoints,
    pub(super) tolerance: f64,
    pub(super) max_iterations: usize,
    pub(super) restarts: usize,
    pub(super) min_clients: usize,
    pub(super) min_updating_clients: usize,
}

impl ServerSettings {
    /// The server part, its K-means checked by `seeding`'s own rule
    /// ([`KMeansParams::validate`]), each refusal named by the parameter
    /// the builder set.
    pub(super) fn checked(&self) -> MufcResult<ServerConfig> {
        let kmeans = KMeansParams::new(self.k)
            .tolerance(self.tolerance)
            .max_iterations(self.max_iterations)
            .restarts(self.restarts)
            .validate()
            .map_err(|e| match e {
                SeedingError::ZeroClusters => {
                    config_error(ConfigParam::K, "the server needs at least one cluster")
                }
                SeedingError::InvalidParameter { name, value } => match name {
                    "tolerance" => config_error(
                        ConfigParam::Tolerance,
                        format!("{value} is not finite and non-negative"),
                    ),
                    "max_iterations" => {
                        config_error(ConfigParam::MaxIterations, "must be at least 1")
                    }
                    "restarts" => config_error(ConfigParam::Restarts, "must be at least 1"),
                    // "k": beyond the labels' range.
                    _ => config_error(ConfigParam::K, format!("{value} clusters are too many")),
                },
                other => config_error(ConfigParam::K, other.to_string()),
            })?;
        Ok(ServerConfig {
            kmeans,
            points: self.points,
            min_clients: self.min_clients,
            min_updating_clients: self.min_updating_clients,
        })
    }
}

/// What the server builds and runs (the server part of a configuration;
/// Algorithm 1, lines 5-6): its K-means, as the `seeding` crate takes it,
/// the points it builds from the decoded counts, and the privacy policies
/// it enforces.
///
/// # Example
///
/// ```
/// use mufc::FederationConfig;
/// use seeding::ExactKMeans;
///
/// let c = FederationConfig::new(4).restarts(3).validate()?;
/// let kmeans = c.server().kmeans();
/// assert_eq!((kmeans.k(), kmeans.restarts()), (4, 3));
/// // The server's exact K-means, as the federation builds it.
/// assert_eq!(ExactKMeans::new(kmeans.clone()).k(), 4);
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    kmeans: ValidKMeansParams,
    points: ServerPoints,
    min_clients: usize,
    min_updating_clients: usize,
}

impl ServerConfig {
    /// The server's number of clusters `K` (its K-means').
    pub fn k(&self) -> usize {
        self.kmeans.k()
    }
    /// The server's K-means (Algorithm 1, line 6): its `k`, the relative
    /// tolerance of its Lloyd iterations, its iteration cap and its number
    /// of runs, the best kept.
    pub fn kmeans(&self) -> &ValidKMeansParams {
        &self.kmeans
    }
    /// The points the server builds from the decoded counts.
    pub fn points(&self) -> ServerPoints {
        self.points
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

#[cfg(test)]
mod tests {
    use crate::{ConfigParam, FederationConfig, MufcError};

    /// Each refusal of the server's K-means (`seeding`'s rule) names the
    /// parameter the builder set, and a checked one is the K-means the
    /// builder described.
    #[test]
    fn the_servers_kmeans_is_checked_by_seedings_rule_and_named_by_its_setter() {
        let cases = [
            (FederationConfig::new(0), ConfigParam::K),
            (FederationConfig::new(u32::MAX as usize), ConfigParam::K),
            (
                FederationConfig::new(2).tolerance(-1.0),
                ConfigParam::Tolerance,
            ),
            (
                FederationConfig::new(2).tolerance(f64::NAN),
                ConfigParam::Tolerance,
            ),
            (
                FederationConfig::new(2).max_iterations(0),
                ConfigParam::MaxIterations,
            ),
            (FederationConfig::new(2).restarts(0), ConfigParam::Restarts),
        ];
        for (config, expected) in cases {
            match config.clone().validate() {
                Err(MufcError::InvalidConfig { param, .. }) => {
                    assert_eq!(param, expected, "{config:?}");
                }
                other => panic!("{config:?}: {other:?}"),
            }
        }
        let c = FederationConfig::new(5)
            .tolerance(1e-6)
            .max_iterations(40)
            .restarts(3)
            .validate()
            .unwrap();
        let k = c.server().kmeans();
        assert_eq!(
            (k.k(), k.tolerance(), k.max_iterations(), k.restarts()),
            (5, 1e-6, 40, 3)
        );
        // The checked config reads back as the same settings.
        assert_eq!(c.clone().into_builder().validate().unwrap(), c);
    }
}
