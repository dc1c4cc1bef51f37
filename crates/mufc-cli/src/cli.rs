//! The command line, declared with clap's derive API.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod bounds;
mod named;
mod net;
mod privacy;
mod store;
mod topology;

pub use bounds::Bounds;
pub use net::{
    ClientAction, ClientAddArgs, ClientArgs, ClientForgetArgs, ClientLeaveArgs, DealerArgs,
    ServerArgs, TlsArgs,
};
pub use privacy::{Privacy, channel};
pub use store::{
    AddArgs, CertsArgs, ExportArgs, ExportFormat, FitArgs, ForgetArgs, InspectArgs, PredictArgs,
    StoreOutput, VerifyArgs, Wait, parse_topology,
};
pub use topology::{AUTO_REMOVAL_RATE, GroupSize, TopologyArgs, TopologyKind};

/// Machine unlearning of federated clusters (Pan et al., ICLR 2023):
/// federated K-means with secure aggregation and exact unlearning, on your
/// data or on the paper's Gaussian data set.
///
/// # Example
///
/// ```
/// use clap::Parser;
/// use mufc_cli::cli::{Cli, Command, Split};
///
/// let cli = Cli::try_parse_from(["mufc", "compare", "--trials", "3", "--split", "iid"]).unwrap();
/// let Command::Compare(args) = cli.command else { panic!() };
/// assert_eq!(args.trials, 3);
/// assert_eq!(args.data.split, Split::Iid);
/// assert_eq!(args.data.clients, 100);
/// ```
#[derive(Clone, Debug, Parser)]
#[command(name = "mufc", version, about, long_about = None)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Clone, Debug, Subcommand)]
pub enum Command {
    /// Federated clustering (Algorithm 1) on a data set: loss ratio, times,
    /// bytes per client.
    Run(RunArgs),
    /// Train, then serve removal requests (Algorithm 4), measuring complete
    /// retraining after each removal round in the same run (a request that
    /// changes one client alone waits for another's: see
    /// --min-updating-clients).
    Unlearn(UnlearnArgs),
    /// MUFC against K-FED and DC-KMeans over several trials: mean and
    /// standard deviation of the loss ratio (the paper's Table 1).
    Compare(CompareArgs),
    /// Performance figures as ratios measured in one run.
    Bench(BenchArgs),
    /// Flat against groups against a tree (--group-size, --fan-out): the
    /// same removal requests served by the three in one run, with the
    /// clients, bytes and time each removal involves.
    Topologies(TopologiesArgs),
    /// Train (Algorithm 1) and write the model store: one SQLite file
    /// holding the federation, the record ids and the audit log.
    Fit(FitArgs),
    /// Serve one removal request from the store (Algorithm 4, exact): the
    /// records' data is erased at once, the model updated (or its update
    /// deferred by the privacy policy), committed before it is reported,
    /// with an audit row per client. Exit codes: 0 applied, 3 erased and
    /// the model update deferred, 4 refused (nothing changed), 1 any other
    /// error.
    Forget(ForgetArgs),
    /// Add records that arrive to clients of the store (the counterpart of
    /// `forget`): the clients learn them at once, the model update follows
    /// under the same privacy policy and deadline, committed before it is
    /// reported, with an audit row per client. Exit codes as `forget`'s:
    /// 0 applied, 3 added and the model update deferred, 4 refused
    /// (nothing changed), 1 any other error.
    Add(AddArgs),
    /// Retrain from the store's remaining records with its configuration
    /// and compare with the served model, bit for bit; print the evidence
    /// (versions, digests). Exit codes: 0 equal, 3 the clients equal and
    /// the model's update is pending, 5 different, 1 any other error.
    Verify(VerifyArgs),
    /// The nearest centroid of each point of a data file.
    Predict(PredictArgs),
    /// The store's centroids and their weights, as CSV or JSON.
    Export(ExportArgs),
    /// What a store holds: clients, points, configuration, pending
    /// requests and the audit history.
    Inspect(InspectArgs),
    /// Create a federation's certificate authority and certificates for
    /// its server and clients (mutual TLS 1.3, for `mufc-net`), or issue
    /// more with an existing authority.
    Certs(CertsArgs),
    /// The federation's server across processes: registers the clients of
    /// its roster over mutually authenticated TLS 1.3 (gRPC), drives the
    /// training and unlearning rounds, and keeps the model in its store
    /// (never a client's point). Runs until interrupted.
    Server(ServerArgs),
    /// A client of the federation across processes: keeps its points in
    /// its own store and joins the server's rounds; `mufc client forget`
    /// asks it to forget points. Runs until interrupted.
    Client(ClientArgs),
    /// The dealer of a federation with dealt masks (`--masking dealer`):
    /// connects to the server with its certificate and deals every round
    /// (a fresh seed sealed to each client, the correction to the server),
    /// checking each round as a client does. It sees no histogram and no
    /// masked message. Runs until interrupted.
    Dealer(DealerArgs),
}

impl Command {
    /// The common options of the subcommands that train (`None` for those
    /// that only read or change a store).
    pub fn common(&self) -> Option<&Common> {
        match self {
            Self::Run(a) => Some(&a.common),
            Self::Unlearn(a) => Some(&a.common),
            Self::Compare(a) => Some(&a.common),
            Self::Bench(a) => Some(&a.common),
            Self::Topologies(a) => Some(&a.common),
            Self::Fit(a) => Some(&a.common),
            Self::Forget(_)
            | Self::Add(_)
            | Self::Verify(_)
            | Self::Predict(_)
            | Self::Export(_)
            | Self::Inspect(_)
            | Self::Certs(_)
            | Self::Server(_)
            | Self::Client(_)
            | Self::Dealer(_) => None,
        }
    }

    /// The output options of the subcommands without [`Common`].
    fn store_output(&self) -> Option<&StoreOutput> {
        match self {
            Self::Forget(a) => Some(&a.out),
            Self::Add(a) => Some(&a.out),
            Self::Verify(a) => Some(&a.out),
            Self::Predict(a) => Some(&a.out),
            Self::Export(a) => Some(&a.out),
            Self::Inspect(a) => Some(&a.out),
            Self::Certs(a) => Some(&a.out),
            Self::Server(a) => Some(&a.out),
            Self::Client(a) => Some(match &a.action {
                Some(ClientAction::Forget(f)) => &f.out,
                Some(ClientAction::Add(f)) => &f.out,
                Some(ClientAction::Leave(f)) => &f.out,
                None => &a.out,
            }),
            Self::Dealer(a) => Some(&a.out),
            _ => None,
        }
    }

    /// Whether `--json` was given.
    pub fn json(&self) -> bool {
        self.common()
            .map(|c| c.json)
            .or(self.store_output().map(|o| o.json))
            .unwrap_or(false)
    }

    /// Whether `--quiet` was given.
    pub fn quiet(&self) -> bool {
        self.common()
            .map(|c| c.quiet)
            .or(self.store_output().map(|o| o.quiet))
            .unwrap_or(false)
    }

    /// The federated options of the subcommands that train.
    pub fn fed(&self) -> Option<&FedArgs> {
        match self {
            Self::Run(a) => Some(&a.fed),
            Self::Unlearn(a) => Some(&a.fed),
            Self::Compare(a) => Some(&a.fed),
            Self::Bench(a) => Some(&a.fed),
            Self::Topologies(a) => Some(&a.fed),
            Self::Fit(a) => Some(&a.fed),
            Self::Forget(_)
            | Self::Add(_)
            | Self::Verify(_)
            | Self::Predict(_)
            | Self::Export(_)
            | Self::Inspect(_)
            | Self::Certs(_)
            | Self::Server(_)
            | Self::Client(_)
            | Self::Dealer(_) => None,
        }
    }

    /// The subcommand's name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Run(_) => "run",
            Self::Unlearn(_) => "unlearn",
            Self::Compare(_) => "compare",
            Self::Bench(_) => "bench",
            Self::Topologies(_) => "topologies",
            Self::Fit(_) => "fit",
            Self::Forget(_) => "forget",
            Self::Add(_) => "add",
            Self::Verify(_) => "verify",
            Self::Predict(_) => "predict",
            Self::Export(_) => "export",
            Self::Inspect(_) => "inspect",
            Self::Certs(_) => "certs",
            Self::Server(_) => "server",
            Self::Client(_) => "client",
            Self::Dealer(_) => "dealer",
        }
    }
}

/// Options of every subcommand.
#[derive(Clone, Debug, Args)]
pub struct Common {
    /// Seed of every random choice (data, split, clients, server); the same
    /// seed gives the same results.
    #[arg(long, default_value_t = 2023)]
    pub seed: u64,
    /// Print one JSON object on stdout instead of a table.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// How points are distributed over clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Split {
    /// Every cluster spread evenly over the clients.
    Iid,
    /// Each client holds points of at most K' clusters (App. M.1).
    NonIid,
}

/// Which labelling the i.i.d. and non-i.i.d. splits follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Labels {
    /// The clusters of a centralized K-means (best of `--restarts` runs),
    /// as the reference's `split_data` does for every data set. The
    /// default: on the built-in data, MUFC's loss ratio is about 0.1 lower
    /// than with the true labels (docs/benchmarks.md, "The mufc command").
    Kmeans,
    /// The true clusters of the built-in data (data from a file has none:
    /// a centralized K-means labelling is used).
    True,
}

/// Where the data comes from and how it is split.
#[derive(Clone, Debug, Args)]
pub struct DataArgs {
    /// Data set: CSV (.csv, .txt; .tsv tab-separated) or .npy (2-D, f64 or
    /// f32), one point per row. Default: the paper's Gaussian data set
    /// (n = 30000, d = 10, K = 10), scaled into the quantizer's box.
    #[arg(long, value_name = "PATH")]
    pub data: Option<PathBuf>,
    /// The CSV's first row is a header (default: detected; a first row with
    /// no numeric feature field is a header).
    #[arg(long)]
    pub header: bool,
    /// Column (0-based) holding each row's client id; it is not a feature.
    /// The clients are then the ones the file names.
    #[arg(long, value_name = "N", conflicts_with_all = ["clients", "split"])]
    pub client_column: Option<usize>,
    /// Number of clients L.
    #[arg(long, value_name = "L", default_value_t = 100)]
    pub clients: usize,
    /// How to split the data over the clients.
    #[arg(long, value_enum, default_value_t = Split::NonIid)]
    pub split: Split,
    /// K': the most clusters a client holds in the non-i.i.d. split
    /// [default: 3, the paper's K' ~ sqrt(K) for K = 10, or K when K is
    /// smaller].
    #[arg(long, value_name = "K'")]
    pub k_prime: Option<usize>,
    /// Which labelling the split follows.
    #[arg(long, value_enum, default_value_t = Labels::Kmeans)]
    pub labels: Labels,
    /// Number of clusters K.
    #[arg(long, short, value_name = "K", default_value_t = 10)]
    pub k: usize,
    /// Map the data into the quantizer's box [-1/2, 1/2]^d (one common
    /// scale, so loss ratios do not change). Always done for the built-in
    /// data.
    #[arg(long)]
    pub scale: bool,
    /// Per-coordinate variance of the built-in Gaussian clusters.
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "V",
        default_value_t = 0.5
    )]
    pub variance: f64,
    /// Centralized K-means runs whose best objective estimates phi_c*
    /// (and labels file data for splitting).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub restarts: usize,
}

/// Options of the federated algorithm.
#[derive(Clone, Debug, Args)]
pub struct FedArgs {
    /// Quantization step gamma [default: min(1/sqrt(n d), 1/1024), for n
    /// points of d coordinates; --preset paper: 1/sqrt(n)]. The data is
    /// scaled into the box by one factor, so an axis that spreads over
    /// less than a step (a feature in other units than the widest) has
    /// its centroids snapped to the same bin centres, a bias that does not
    /// average out: on scikit-learn's wine set 1/sqrt(n d) (0.021) cost
    /// 0.11 in loss ratio, 1/1024 nothing measurable (docs/benchmarks.md,
    /// "The defaults on the data suite").
    #[arg(allow_negative_numbers = true, long, value_name = "G")]
    pub gamma: Option<f64>,
    /// Secure aggregation mode.
    #[arg(long, value_parser = named::named!(Privacy), default_value_t = Privacy::Scma)]
    pub privacy: Privacy,
    /// Where the masks come from (SCMA modes).
    #[arg(long, value_parser = named::named!(mufc::Masking), default_value_t = mufc::Masking::Dealer)]
    pub masking: mufc::Masking,
    /// With `--masking secagg`: the probability that a client drops out of
    /// an aggregation round (at a random step of the protocol; drawn from
    /// the seed, the round and the client). The server's model is then
    /// that of the clients included, which the output lists.
    #[arg(
        allow_negative_numbers = true,
        long,
        value_name = "RATE",
        default_value_t = 0.0
    )]
    pub dropout: f64,
    /// With `--masking secagg`: the neighbourhood graph.
    #[arg(long, value_parser = named::named!(mufc::SecAggGraph), default_value_t = mufc::SecAggGraph::Complete)]
    pub secagg_graph: mufc::SecAggGraph,
    /// How the server builds its points [default: bin centres with
    /// weights, which let the server update its K-means exactly at a
    /// fraction of a fit; --preset paper: uniform samples in the bins].
    #[arg(long, value_parser = named::named!(mufc::ServerPoints))]
    pub server_points: Option<mufc::ServerPoints>,
    /// What clients compute [default: full K-means, exactly unlearnable;
    /// --preset paper: K-means++ seeding only].
    #[arg(long, value_parser = named::named!(mufc::ClientTraining))]
    pub client_training: Option<mufc::ClientTraining>,
    /// Runs of the server's K-means, the best kept (every run is updated
    /// on unlearning) [default: 10, scikit-learn's n_init; the server
    /// works on at most k L weighted points; --preset paper: 1].
    #[arg(long, value_name = "N")]
    pub server_restarts: Option<usize>,
    /// K-means runs of every client with full K-means, the best kept
    /// (every run is updated on unlearning, so each costs client time on
    /// every removal) [default: 1]. Three gained about 0.015 in loss ratio
    /// on clients of 15 points (docs/benchmarks.md).
    #[arg(long, value_name = "N")]
    pub client_restarts: Option<usize>,
    /// Clusters each MUFC client computes: a number, or `auto` [default:
    /// auto; --preset paper: K]. `auto` adapts to the data: the
    /// federation's k is the largest of K, min(ceil(n / L), ceil(1000 /
    /// L)) (every point its own cluster for data of at most 1000 points,
    /// else at most 1000 server points in all; ceil(n / L) whenever that
    /// is at most 2K) and, when the clients hold
    /// about K clusters each (their survey of their own data: an i.i.d.
    /// split, on which one K-means run with K clusters merges two now and
    /// then), min(2K, ceil(n / (10 L))); a client of n_l points computes
    /// min(k, n_l). `auto:M:T:P` sets the three (1, 1000, 10: M points a
    /// cluster, T server points, twice K from P points a cluster). A
    /// number also sets the baselines' (K-FED, DC-KMeans), which otherwise
    /// compute K, as in the paper's App. M.2.
    #[arg(long, value_name = "k|auto")]
    pub client_k: Option<ClientKArg>,
    /// The fewest points a client's cluster must stand for to be sent in
    /// a bin of its own [default: 1, every cluster sent]. Smaller clusters
    /// are dissolved into the nearest remaining ones of the same client,
    /// whose centres (with full K-means) move to the mean of their new
    /// members, so every bin is the mean of at least S records
    /// (docs/threat-model.md §6a). 2 costs nothing on clients of hundreds
    /// of points and about 0.02 to 0.04 in loss ratio on clients of 15
    /// points (docs/benchmarks.md).
    #[arg(long, value_name = "S")]
    pub min_cluster_size: Option<u64>,
    /// The configuration the other options start from: `default` (chosen
    /// for the model's quality on a suite of data sets,
    /// docs/benchmarks.md) or `paper` (the paper's experiment: seeding-only
    /// clients with K clusters, uniform server points, one server run,
    /// gamma = 1/sqrt(n), to reproduce Table 1 and Fig. 3).
    #[arg(long, value_enum, default_value_t = Preset::Default)]
    pub preset: Preset,
    /// The fewest clients whose messages the server may sum. The server
    /// learns the sum of the clients' histograms: with two clients each
    /// learns the other's from it, and the server with m - 1 colluding
    /// clients learns the last of m (threat P4 of docs/threat-model.md). A
    /// federation, a removal or a dropout round that would leave fewer
    /// clients is refused. Below 3, a warning is printed.
    #[arg(long, value_name = "M", default_value_t = mufc::DEFAULT_MIN_CLIENTS)]
    pub min_clients: usize,
    /// The fewest clients whose message one unlearning round may change.
    /// The difference of two aggregates is the change of the clients that
    /// updated, so a round that changes one client alone tells the server
    /// that client's change, such as the bin of a removed point (threat U3
    /// of docs/threat-model.md). A request that changes fewer clients
    /// waits, deferred, until other clients' requests join it; one round
    /// then applies them all. Below 2, a warning is printed.
    #[arg(
        long,
        value_name = "M",
        default_value_t = mufc::DEFAULT_MIN_UPDATING_CLIENTS
    )]
    pub min_updating_clients: usize,
    /// How the clients are organised for aggregation.
    #[command(flatten)]
    pub layout: TopologyArgs,
}

/// The configuration `mufc`'s options start from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Preset {
    /// `mufc::FederationConfig::new`: full K-means clients with an
    /// adaptive k, small clusters merged, ten server runs.
    #[default]
    Default,
    /// `mufc::FederationConfig::paper`: the paper's experiment.
    Paper,
}

/// `--client-k`: a number, `auto`, or `auto:M:T:P`.
///
/// # Example
///
/// ```
/// use mufc::ClientK;
/// use mufc_cli::cli::ClientKArg;
///
/// assert_eq!("7".parse::<ClientKArg>().unwrap().0, ClientK::Fixed(7));
/// assert_eq!("auto".parse::<ClientKArg>().unwrap().0, ClientK::ADAPTIVE);
/// assert_eq!(
///     "auto:4:500:60".parse::<ClientKArg>().unwrap().0,
///     ClientK::Adaptive { points_per_cluster: 4, server_points: 500, double_from: 60 }
/// );
/// assert!("many".parse::<ClientKArg>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientKArg(pub mufc::ClientK);

impl std::str::FromStr for ClientKArg {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("{s:?} is neither a number nor auto (or auto:M:T:P)");
        if let Ok(k) = s.parse::<usize>() {
            return Ok(Self(mufc::ClientK::Fixed(k)));
        }
        let mut parts = s.split(':');
        if parts.next() != Some("auto") {
            return Err(bad());
        }
        let rest: Vec<usize> = parts
            .map(|p| p.parse::<usize>().map_err(|_| bad()))
            .collect::<Result<_, _>>()?;
        match rest[..] {
            [] => Ok(Self(mufc::ClientK::ADAPTIVE)),
            [m, t, p] => Ok(Self(mufc::ClientK::Adaptive {
                points_per_cluster: m,
                server_points: t,
                double_from: p,
            })),
            _ => Err(bad()),
        }
    }
}

impl FedArgs {
    /// The configuration the options give for `k` server clusters, before
    /// the data fixes gamma and the clients' k: the preset's, with every
    /// option given.
    pub fn base(&self, k: usize) -> mufc::FederationConfig {
        let mut c = match self.preset {
            Preset::Default => mufc::FederationConfig::new(k),
            Preset::Paper => mufc::FederationConfig::paper(k),
        };
        if let Some(t) = self.client_training {
            c = c.client_training(t);
        }
        if let Some(r) = self.server_restarts {
            c = c.restarts(r);
        }
        if let Some(r) = self.client_restarts {
            c = c.client_restarts(r);
        }
        if let Some(p) = self.server_points {
            c = c.server_points(p);
        }
        if let Some(ClientKArg(rule)) = self.client_k {
            c = c.client_k_rule(rule);
        }
        if let Some(s) = self.min_cluster_size {
            c = c.min_cluster_size(s);
        }
        c
    }

    /// The settings the summaries print: the preset's, or the options
    /// given (for one server cluster: the rest does not depend on `K`).
    ///
    /// # Errors
    ///
    /// [`mufc::MufcError::InvalidConfig`] for an option out of range.
    pub fn settings(&self) -> Result<mufc::ValidConfig, mufc::MufcError> {
        self.base(1).validate()
    }

    /// A fixed `--client-k`, which the baselines compute too.
    pub fn fixed_client_k(&self) -> Option<usize> {
        match self.client_k {
            Some(ClientKArg(mufc::ClientK::Fixed(k))) => Some(k),
            _ => None,
        }
    }

    /// The topology the options name, for a federation of `clients`
    /// clients (read by `--group-size auto`, with `--dropout`).
    ///
    /// # Errors
    ///
    /// As [`TopologyArgs::topology`].
    pub fn topology(&self, clients: usize) -> Result<mufc::Topology, crate::CliError> {
        self.layout.topology(clients, self.dropout)
    }
}

/// Options of `mufc run`.
#[derive(Clone, Debug, Args)]
pub struct RunArgs {
    /// Common options.
    #[command(flatten)]
    pub common: Common,
    /// Data options.
    #[command(flatten)]
    pub data: DataArgs,
    /// Federated options.
    #[command(flatten)]
    pub fed: FedArgs,
    /// Independent trials (the loss ratio is their mean).
    #[arg(long, value_name = "T", default_value_t = 1)]
    pub trials: usize,
}

/// Which points removal requests name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Uniformly random points of a uniformly random client.
    Random,
    /// The point with the largest contribution to the current objective.
    Adversarial,
}

/// Options of `mufc unlearn`.
#[derive(Clone, Debug, Args)]
pub struct UnlearnArgs {
    /// Common options.
    #[command(flatten)]
    pub common: Common,
    /// Data options.
    #[command(flatten)]
    pub data: DataArgs,
    /// Federated options.
    #[command(flatten)]
    pub fed: FedArgs,
    /// Number of removal requests.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub removals: usize,
    /// Which points are removed.
    #[arg(long, value_enum, default_value_t = Mode::Random)]
    pub mode: Mode,
    /// Points per request (of one client).
    #[arg(
        long,
        value_name = "R",
        default_value_t = 1,
        conflicts_with = "whole_clients"
    )]
    pub batch: usize,
    /// Each request removes a whole client.
    #[arg(long)]
    pub whole_clients: bool,
    /// Remove these points (0-based data rows, comma-separated) instead of
    /// chosen ones: `--batch` rows per request, in the order given (a
    /// request may span clients). Overrides `--removals` and `--mode`.
    #[arg(
        long,
        value_name = "ROWS",
        value_delimiter = ',',
        conflicts_with = "whole_clients"
    )]
    pub remove: Option<Vec<u64>>,
    /// Draw the paper's Fig. 3 (accumulated removal time on a logarithmic
    /// axis, loss ratio) into FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE")]
    pub plot: Option<PathBuf>,
    /// Serve the same requests with DC-KMeans too.
    #[arg(long)]
    pub compare: bool,
    /// After the last request, apply the requests still deferred even if
    /// they change a single client's message (a warning says what the
    /// server learns); without it they are reported as pending.
    #[arg(long)]
    pub flush: bool,
}

/// Options of `mufc compare`.
#[derive(Clone, Debug, Args)]
pub struct CompareArgs {
    /// Common options.
    #[command(flatten)]
    pub common: Common,
    /// Data options.
    #[command(flatten)]
    pub data: DataArgs,
    /// Federated options.
    #[command(flatten)]
    pub fed: FedArgs,
    /// Trials per method (the paper: 5).
    #[arg(long, value_name = "T", default_value_t = 5)]
    pub trials: usize,
    /// Removal requests MUFC serves after each trial's training, each one
    /// random point of each of two random clients (one round each), for
    /// the mean time of a removal round (0: none).
    #[arg(long, value_name = "R", default_value_t = 3)]
    pub removals: usize,
}

/// Options of `mufc bench`.
#[derive(Clone, Debug, Args)]
pub struct BenchArgs {
    /// Common options.
    #[command(flatten)]
    pub common: Common,
    /// Data options.
    #[command(flatten)]
    pub data: DataArgs,
    /// Federated options.
    #[command(flatten)]
    pub fed: FedArgs,
    /// Single-point removal requests (a random point of a random client)
    /// for the unlearning ratios, measured per removal round: with
    /// --min-updating-clients 2 a request waits until another client's
    /// joins it.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub requests: usize,
}

/// Options of `mufc topologies`.
#[derive(Clone, Debug, Args)]
pub struct TopologiesArgs {
    /// Common options.
    #[command(flatten)]
    pub common: Common,
    /// Data options.
    #[command(flatten)]
    pub data: DataArgs,
    /// Federated options (--topology is not read: the three run).
    #[command(flatten)]
    pub fed: FedArgs,
    /// Removal requests, each one point of two clients of one group.
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub removals: usize,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults_leave_the_federation_to_the_preset() {
        let cli = Cli::try_parse_from(["mufc", "run"]).unwrap();
        let Command::Run(a) = cli.command else {
            panic!("not run")
        };
        assert_eq!(a.common.seed, 2023);
        assert!(!a.common.json);
        assert_eq!(a.data.clients, 100);
        assert_eq!(a.data.split, Split::NonIid);
        assert_eq!(a.data.k_prime, None);
        assert_eq!(a.data.k, 10);
        assert_eq!(a.fed.gamma, None);
        assert_eq!(a.fed.privacy, Privacy::Scma);
        assert_eq!(a.fed.preset, Preset::Default);
        // Unset: the preset's (the library's) values apply.
        assert_eq!(a.fed.server_points, None);
        assert_eq!(a.fed.server_restarts, None);
        assert_eq!(a.fed.client_restarts, None);
        assert_eq!(a.fed.client_k, None);
        assert_eq!(a.fed.client_training, None);
        assert_eq!(a.fed.min_cluster_size, None);
        assert_eq!(a.data.labels, Labels::Kmeans);
        assert_eq!((a.fed.min_clients, a.fed.min_updating_clients), (3, 2));
        assert_eq!(a.trials, 1);
        let s = a.fed.settings().unwrap();
        assert_eq!(s.client_training(), mufc::ClientTraining::Full);
        assert_eq!(s.client().k(), mufc::ClientK::ADAPTIVE);
        assert_eq!(s.server().kmeans().restarts(), 10);
        let paper = Cli::try_parse_from(["mufc", "run", "--preset", "paper"]).unwrap();
        let Command::Run(p) = paper.command else {
            panic!("not run")
        };
        let s = p.fed.settings().unwrap();
        assert_eq!(s.client_training(), mufc::ClientTraining::Seeding);
        assert_eq!(s.client().k(), mufc::ClientK::Server);
        assert_eq!(s.server().points(), mufc::ServerPoints::Uniform);
        assert_eq!(s.server().kmeans().restarts(), 1);
        assert_eq!(s.gamma_rule(), mufc::GammaRule::PerPoint);
    }

    #[test]
    fn every_flag_of_the_issue_parses() {
        let cli = Cli::try_parse_from([
            "mufc",
            "unlearn",
            "--seed",
            "7",
            "--json",
            "--data",
            "x.csv",
            "--clients",
            "10",
            "--split",
            "non-iid",
            "--k-prime",
            "2",
            "--k",
            "4",
            "--gamma",
            "0.01",
            "--privacy",
            "scma-integer",
            "--server-points",
            "centers",
            "--client-training",
            "full",
            "--scale",
            "--removals",
            "100",
            "--mode",
            "adversarial",
            "--batch",
            "3",
            "--plot",
            "fig.svg",
            "--compare",
        ])
        .unwrap();
        let Command::Unlearn(a) = cli.command else {
            panic!("not unlearn")
        };
        assert_eq!(a.common.seed, 7);
        assert_eq!(a.data.k_prime, Some(2));
        assert_eq!(a.fed.privacy, Privacy::ScmaInteger);
        assert_eq!(a.mode, Mode::Adversarial);
        assert_eq!(a.batch, 3);
        assert!(a.compare && a.common.json && a.data.scale);
        let cli = Cli::try_parse_from([
            "mufc",
            "run",
            "--data",
            "x.csv",
            "--client-column",
            "0",
            "--trials",
            "5",
        ])
        .unwrap();
        assert_eq!(cli.command.common().map(|c| c.seed), Some(2023));
        // A client column names the clients: --clients contradicts it.
        assert!(
            Cli::try_parse_from(["mufc", "run", "--client-column", "0", "--clients", "5"]).is_err()
        );
        assert!(
            Cli::try_parse_from(["mufc", "unlearn", "--whole-clients", "--batch", "2"]).is_err()
        );
        assert!(Cli::try_parse_from(["mufc", "run", "--privacy", "none"]).is_err());
    }
}
