//! The command line, declared with clap's derive API.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod net;
mod store;
mod topology;

pub use net::{ClientAction, ClientArgs, ClientForgetArgs, ServerArgs, TlsArgs};
pub use store::{
    CertsArgs, ExportArgs, ExportFormat, FitArgs, ForgetArgs, InspectArgs, PredictArgs,
    StoreOutput, VerifyArgs, Wait,
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
            | Self::Verify(_)
            | Self::Predict(_)
            | Self::Export(_)
            | Self::Inspect(_)
            | Self::Certs(_)
            | Self::Server(_)
            | Self::Client(_) => None,
        }
    }

    /// The output options of the subcommands without [`Common`].
    fn store_output(&self) -> Option<&StoreOutput> {
        match self {
            Self::Forget(a) => Some(&a.out),
            Self::Verify(a) => Some(&a.out),
            Self::Predict(a) => Some(&a.out),
            Self::Export(a) => Some(&a.out),
            Self::Inspect(a) => Some(&a.out),
            Self::Certs(a) => Some(&a.out),
            Self::Server(a) => Some(&a.out),
            Self::Client(a) => Some(match &a.action {
                Some(ClientAction::Forget(f)) => &f.out,
                None => &a.out,
            }),
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
            | Self::Verify(_)
            | Self::Predict(_)
            | Self::Export(_)
            | Self::Inspect(_)
            | Self::Certs(_)
            | Self::Server(_)
            | Self::Client(_) => None,
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
            Self::Verify(_) => "verify",
            Self::Predict(_) => "predict",
            Self::Export(_) => "export",
            Self::Inspect(_) => "inspect",
            Self::Certs(_) => "certs",
            Self::Server(_) => "server",
            Self::Client(_) => "client",
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
    /// Quantization step gamma [default: 1/sqrt(n d), for n points of d
    /// coordinates]. Quantizing moves a point by up to gamma/2 along each
    /// axis, about n d gamma^2 / 12 in the objective (the box has side 1):
    /// 1/12 with this default, d/12 with the paper's 1/sqrt(n). On small
    /// real data (wine, breast_cancer) d/12 is as large as phi_c* itself
    /// and cost 0.2 to 1.1 in loss ratio; on the built-in data both steps
    /// give the same loss ratio within the spread (docs/benchmarks.md, "The
    /// defaults on real data").
    #[arg(allow_negative_numbers = true, long, value_name = "G")]
    pub gamma: Option<f64>,
    /// Secure aggregation mode.
    #[arg(long, value_enum, default_value_t = mufc::Privacy::Scma)]
    pub privacy: mufc::Privacy,
    /// Where the masks come from (SCMA modes).
    #[arg(long, value_enum, default_value_t = mufc::Masking::Dealer)]
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
    #[arg(long, value_enum, default_value_t = mufc::SecAggGraph::Complete)]
    pub secagg_graph: mufc::SecAggGraph,
    /// How the server builds its points. Default: bin centres, which give
    /// the same loss ratio as uniform samples on the built-in data and let
    /// the server update its K-means exactly at a fraction of a fit.
    #[arg(long, value_enum, default_value_t = mufc::ServerPoints::Centers)]
    pub server_points: mufc::ServerPoints,
    /// What clients compute.
    #[arg(long, value_enum, default_value_t = mufc::ClientTraining::Seeding)]
    pub client_training: mufc::ClientTraining,
    /// Runs of the server's K-means, the best kept (every run is updated
    /// on unlearning, so each costs time on every request). Default 1: on
    /// the built-in data 10 runs (the reference's scikit-learn
    /// `KMeans(n_init = 10)`) lower MUFC's loss ratio by less than 0.01,
    /// within the spread over trials, and make a removal about 1.5 times
    /// slower.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub server_restarts: usize,
    /// Clusters each client computes, for every method [default: K, as the
    /// paper's App. M.2: "K is set to be the same in both clients and
    /// server for all methods"]. With k = K' = 3 MUFC's loss ratio on the
    /// built-in data is about 1.45 instead of 1.26, at a third of the
    /// decoding time.
    #[arg(long, value_name = "k")]
    pub client_k: Option<usize>,
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

impl FedArgs {
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
    fn defaults_are_the_papers() {
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
        assert_eq!(a.fed.privacy, mufc::Privacy::Scma);
        assert_eq!(a.fed.server_points, mufc::ServerPoints::Centers);
        assert_eq!(a.fed.server_restarts, 1);
        assert_eq!(a.fed.client_k, None);
        assert_eq!(a.data.labels, Labels::Kmeans);
        assert_eq!(a.fed.client_training, mufc::ClientTraining::Seeding);
        assert_eq!((a.fed.min_clients, a.fed.min_updating_clients), (3, 2));
        assert_eq!(a.trials, 1);
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
        assert_eq!(a.fed.privacy, mufc::Privacy::ScmaInteger);
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
