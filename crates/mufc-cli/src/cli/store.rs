//! The options of the model-store commands: `fit`, `forget`, `predict`,
//! `export`, `inspect` (thin layers over `mufc::store`).

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{Common, DataArgs, FedArgs};

/// Output options of the commands that read a store.
#[derive(Clone, Debug, Args)]
pub struct StoreOutput {
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Options of `mufc fit`.
#[derive(Clone, Debug, Args)]
pub struct FitArgs {
    /// Common options.
    #[command(flatten)]
    pub common: Common,
    /// Data options.
    #[command(flatten)]
    pub data: DataArgs,
    /// Federated options.
    #[command(flatten)]
    pub fed: FedArgs,
    /// The model store to write (an SQLite file). An existing file is
    /// refused unless --force is given.
    #[arg(long, value_name = "STORE")]
    pub model: PathBuf,
    /// Column (0-based, counted in the file, client column included) holding
    /// each row's record id: a non-negative integer (at most 2^53), unique
    /// in the file; it is not a feature. A removal request names these ids.
    /// Default: none; each point's id is its 0-based data row (header
    /// excluded).
    #[arg(long, value_name = "N", requires = "data")]
    pub id_column: Option<usize>,
    /// Replace an existing store at --model (atomically; its audit history
    /// is lost). Default: refuse.
    #[arg(long)]
    pub force: bool,
}

/// Options of `mufc forget`.
#[derive(Clone, Debug, Args)]
pub struct ForgetArgs {
    /// Output options.
    #[command(flatten)]
    pub out: StoreOutput,
    /// The model store.
    #[arg(long, value_name = "STORE")]
    pub model: PathBuf,
    /// Record ids to forget, comma-separated (one request; may name
    /// records of several clients).
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub ids: Option<Vec<u64>>,
    /// A file of record ids to forget (separated by commas, spaces or
    /// newlines; `#` starts a comment), joined with --ids into one request.
    #[arg(long, value_name = "FILE")]
    pub ids_file: Option<PathBuf>,
    /// Forget a whole client (its id as `inspect` lists it).
    #[arg(long, value_name = "C", conflicts_with_all = ["ids", "ids_file"])]
    pub client: Option<u64>,
    /// Then apply every pending (deferred) request now, even when the
    /// round changes a single client's message (a warning says what the
    /// server learns). Alone, without --ids/--ids-file/--client, only
    /// applies the pending requests. Default: pending requests wait for
    /// other clients' requests.
    #[arg(long)]
    pub flush: bool,
}

/// Options of `mufc predict`.
#[derive(Clone, Debug, Args)]
pub struct PredictArgs {
    /// Output options.
    #[command(flatten)]
    pub out: StoreOutput,
    /// The model store.
    #[arg(long, value_name = "STORE")]
    pub model: PathBuf,
    /// The points to assign: CSV (.csv, .txt; .tsv tab-separated) or .npy,
    /// one point per row, as many columns as the model's dimension, in the
    /// data's own coordinates (if `fit` scaled the data, with --scale or
    /// for the built-in data, the store keeps the map and applies it).
    #[arg(long, value_name = "PATH")]
    pub data: PathBuf,
    /// The CSV's first row is a header (default: detected).
    #[arg(long)]
    pub header: bool,
    /// Write the labels (the index of the nearest centroid, one per line)
    /// to this file instead of stdout.
    #[arg(long = "out", value_name = "FILE")]
    pub out_file: Option<PathBuf>,
}

/// The format of `mufc export`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// A header `centroid,weight,x0,x1,...` and one row per centroid.
    Csv,
    /// One JSON object: k, dim, model_version, centroids (index, weight,
    /// coords).
    Json,
}

/// Options of `mufc export`.
#[derive(Clone, Debug, Args)]
pub struct ExportArgs {
    /// Output options (--json prints the JSON object whatever --format).
    #[command(flatten)]
    pub out: StoreOutput,
    /// The model store.
    #[arg(long, value_name = "STORE")]
    pub model: PathBuf,
    /// The format of the centroids and weights on stdout.
    #[arg(long, value_enum, default_value_t = ExportFormat::Csv)]
    pub format: ExportFormat,
}

/// Options of `mufc inspect`.
#[derive(Clone, Debug, Args)]
pub struct InspectArgs {
    /// Output options.
    #[command(flatten)]
    pub out: StoreOutput,
    /// The model store.
    #[arg(long, value_name = "STORE")]
    pub model: PathBuf,
}

/// Options of `mufc certs`.
#[derive(Clone, Debug, Args)]
pub struct CertsArgs {
    /// Output options.
    #[command(flatten)]
    pub out: StoreOutput,
    /// The directory to write to (created if missing). If it holds an
    /// authority's key (`ca-key.pem`), that authority issues the new
    /// certificates; otherwise a new one is created.
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
    /// The federation's name (one DNS label): it names the authority.
    #[arg(long, value_name = "NAME")]
    pub federation: String,
    /// Clients to issue certificates for, comma-separated (each one DNS
    /// label: letters, digits, hyphens).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub clients: Vec<String>,
    /// Hosts the server is reached at (IP addresses or DNS names),
    /// comma-separated; a server certificate is written when given, or
    /// when the directory has none [default when none exists: 127.0.0.1,
    /// localhost].
    #[arg(long, value_name = "HOSTS", value_delimiter = ',')]
    pub hosts: Vec<String>,
    /// Overwrite certificates that exist (never the authority's key).
    #[arg(long)]
    pub force: bool,
}
