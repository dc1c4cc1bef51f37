//! The options of the model-store commands: `fit`, `forget`, `predict`,
//! `export`, `inspect` (thin layers over `mufc_store`).

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use super::{Common, DataArgs, FedArgs};

/// Output options of the commands that read a store.
#[derive(Clone, Debug, Args)]
pub struct StoreOutput {
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print nothing but errors (and, with --json, the JSON object); the
    /// exit code still tells the outcome.
    #[arg(long, short)]
    pub quiet: bool,
}

/// A duration on the command line: a number with a unit, `s`, `m`, `h`
/// or `d` (`7d`, `36h`, `90m`, `3600s`; a bare number is seconds).
///
/// # Example
///
/// ```
/// use mufc_cli::cli::Wait;
///
/// assert_eq!("7d".parse::<Wait>().unwrap().0.as_secs(), 7 * 86_400);
/// assert_eq!("36h".parse::<Wait>().unwrap().0.as_secs(), 36 * 3_600);
/// assert_eq!("45".parse::<Wait>().unwrap().0.as_secs(), 45);
/// assert!("soon".parse::<Wait>().is_err());
/// assert!("-3d".parse::<Wait>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wait(pub Duration);

impl std::str::FromStr for Wait {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim();
        let (number, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
            Some(i) => s.split_at(i),
            None => (s, "s"),
        };
        let n: u64 = number
            .parse()
            .map_err(|_| format!("{s:?} is not a duration (a number and s, m, h or d: 7d, 36h)"))?;
        let scale = match unit {
            "s" => 1,
            "m" => 60,
            "h" => 3_600,
            "d" => 86_400,
            _ => {
                return Err(format!(
                    "{s:?}: the unit is s, m, h or d (7d, 36h, 90m, 3600s)"
                ));
            }
        };
        n.checked_mul(scale)
            .map(|secs| Self(Duration::from_secs(secs)))
            .ok_or_else(|| format!("{s:?} is too long"))
    }
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
    /// each row's record id, kept as written: a string (`P-000123`, a
    /// UUID; at most 256 bytes) or an integer, unique in the file; it is
    /// not a feature. A removal request names these ids. Default: none;
    /// each point's id is its 0-based data row (header excluded).
    #[arg(long, value_name = "N", requires = "data")]
    pub id_column: Option<usize>,
    /// The most points the federation may ever hold: the aggregation's
    /// sums are sized for it at training, so it leaves room for records
    /// that arrive (`mufc add`). Default: the points at training (no
    /// room).
    #[arg(long, value_name = "N")]
    pub max_points: Option<u64>,
    /// Replace an existing store at --model (atomically; its audit history
    /// is lost, its tombstones are kept: a record it forgot is refused).
    /// Default: refuse.
    #[arg(long)]
    pub force: bool,
    /// With --force: leave out of the new store the records that the
    /// replaced store had forgotten (and say how many), instead of
    /// refusing the data.
    #[arg(long, requires = "force")]
    pub skip_forgotten: bool,
    /// How long a removal request's model update may wait for other
    /// clients' requests (the privacy policy, --min-updating-clients)
    /// before it runs alone, with a warning in the audit log: a number
    /// and s, m, h or d (a bare number is seconds), at most 30d. The
    /// records' data is erased at once whatever this says. Default: 7d
    /// (docs/store.md, "Erasure").
    #[arg(long, value_name = "WAIT", default_value = "7d")]
    pub max_defer: Wait,
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
    /// Record ids to forget, comma-separated, as the data writes them
    /// (one request; may name records of several clients).
    #[arg(long, value_name = "IDS", value_delimiter = ',')]
    pub ids: Option<Vec<String>>,
    /// A file of record ids to forget, one per line as the data writes
    /// them (blank lines and lines starting with `#` are skipped), joined
    /// with --ids into one request.
    #[arg(long, value_name = "FILE")]
    pub ids_file: Option<PathBuf>,
    /// Forget a whole client, by its name (as the data's client column
    /// writes it, and `inspect` lists it).
    #[arg(long, value_name = "NAME", conflicts_with_all = ["ids", "ids_file"])]
    pub client: Option<String>,
    /// Then apply every pending (deferred) model update now, even when the
    /// round changes a single client's message (a warning says what the
    /// server learns). Alone, without --ids/--ids-file/--client, only
    /// applies the pending updates. Default: pending updates wait for
    /// other clients' requests, or their deadline (--max-defer of `fit`).
    #[arg(long)]
    pub flush: bool,
    /// Only apply the pending model updates whose deadline passed (every
    /// `mufc forget` does so first): for a timer.
    #[arg(long, conflicts_with_all = ["ids", "ids_file", "client", "flush"])]
    pub overdue: bool,
}

/// Options of `mufc add`.
#[derive(Clone, Debug, Args)]
pub struct AddArgs {
    /// Output options.
    #[command(flatten)]
    pub out: StoreOutput,
    /// The model store.
    #[arg(long, value_name = "STORE")]
    pub model: PathBuf,
    /// The records to add: CSV (.csv, .txt; .tsv tab-separated) or .npy,
    /// one record per row, in the data's own coordinates (a store that
    /// `fit` scaled keeps the map and applies it; see --bounds).
    #[arg(long, value_name = "PATH")]
    pub data: PathBuf,
    /// The CSV's first row is a header (default: detected).
    #[arg(long)]
    pub header: bool,
    /// A column (0-based) holding each record's client, by the name the
    /// store knows it (as `fit`'s --client-column wrote it).
    #[arg(long, value_name = "N", conflicts_with = "client")]
    pub client_column: Option<usize>,
    /// The client every record goes to, by name (instead of
    /// --client-column).
    #[arg(long, value_name = "NAME")]
    pub client: Option<String>,
    /// A column (0-based, counted in the file) holding each record's id,
    /// kept verbatim: an id the store holds, or forgot, is refused.
    #[arg(long, value_name = "N")]
    pub id_column: usize,
    /// Leave out the records the store forgot (and say how many), instead
    /// of refusing the request.
    #[arg(long)]
    pub skip_forgotten: bool,
    /// A client name the store does not know is a new client that joins
    /// the federation with its records (default: refused as unknown, so
    /// that a mistyped name adds no member). A name the store held once
    /// does not come back; clients join only a model without groups.
    #[arg(long)]
    pub new_clients: bool,
    /// Then apply every pending model update now, even when the round
    /// changes a single client's message (a warning says what the server
    /// learns). Default: a lone client's update waits, as a removal's.
    #[arg(long)]
    pub flush: bool,
    /// The bounds the data's coordinates were mapped from, `LO,HI`, for a
    /// store that keeps no map of its own (as `predict --bounds`).
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub bounds: Option<super::Bounds>,
}

/// Options of `mufc verify`.
#[derive(Clone, Debug, Args)]
pub struct VerifyArgs {
    /// Output options.
    #[command(flatten)]
    pub out: StoreOutput,
    /// The model store.
    #[arg(long, value_name = "STORE")]
    pub model: PathBuf,
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
    /// A column (0-based) holding each row's client: skipped, so that the
    /// file `fit` read predicts as it is.
    #[arg(long, value_name = "N")]
    pub client_column: Option<usize>,
    /// A column (0-based, counted in the file) holding each row's record
    /// id: skipped, as --client-column.
    #[arg(long, value_name = "N")]
    pub id_column: Option<usize>,
    /// Write the labels (the index of the nearest centroid, one per line)
    /// to this file instead of stdout.
    #[arg(long = "out", value_name = "FILE")]
    pub out_file: Option<PathBuf>,
    /// The bounds the data's coordinates were mapped from, `LO,HI` (as
    /// `mufc client --bounds`): for a store that keeps no map of its own,
    /// such as a server's, whose model is in the box `[-1/2, 1/2]^d`.
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub bounds: Option<super::Bounds>,
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
    /// The format of the centroids and weights on stdout [default: csv;
    /// with --json: json, and --format csv is refused].
    #[arg(long, value_enum)]
    pub format: Option<ExportFormat>,
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
    /// Where record ID is: the client holding it, or when and by which
    /// request it was forgotten and the model version that no longer
    /// counts it (as the data writes the id).
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
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
    /// The clients issued now join the trained federation (issue 29):
    /// their names are appended to the roster of the directory's
    /// federation file, which the new clients use. The members keep
    /// theirs: they check each new client's certificate when the server
    /// (started with --admit-new-clients) admits it. With dealt masks each
    /// new client's mask key is written too and pinned in the file, which
    /// the running dealer reads again.
    #[arg(long)]
    pub join: bool,
    /// How many days the certificates written now are valid for, from
    /// now (1 to 3660): issue new ones before they expire.
    #[arg(long, value_name = "DAYS", default_value_t = 365)]
    pub days: u32,
    /// The smallest grid step the federation file lets a setup have (the
    /// finer the step, the closer the server sees each client's
    /// centroids, which are records).
    #[arg(long, value_name = "G", default_value_t = mufc::remote::DEFAULT_MIN_GAMMA)]
    pub min_gamma: f64,
    /// The most points one client may claim in the federation file.
    #[arg(long, value_name = "N", default_value_t = mufc::remote::DEFAULT_MAX_CLIENT_POINTS)]
    pub max_client_points: u64,
    /// The dimension of the points, pinned in the federation file
    /// [default: not pinned; most clients' decides].
    #[arg(long, value_name = "D")]
    pub dim: Option<usize>,
    /// The bounds LO,HI of every coordinate in the clients' units, pinned
    /// in the federation file: each client maps its records from them
    /// into the model's box [default: not pinned; each client's --bounds].
    #[arg(long, value_name = "LO,HI", allow_hyphen_values = true)]
    pub bounds: Option<super::Bounds>,
    /// Pins the privacy policy in the federation file with this masking
    /// (`secagg`, `pairwise` or `dealer`; with `dealer`, also the
    /// dealer's certificate and every party's mask key, their public keys
    /// pinned in the file): every client refuses a setup that masks
    /// otherwise, and one below the pinned minimums [default: not
    /// pinned; with --min-clients or --min-updating-clients: secagg].
    #[arg(long, value_parser = super::named::named!(mufc::Masking))]
    pub masking: Option<mufc::Masking>,
    /// The pinned policy's smallest aggregate: a setup may require more
    /// clients, never fewer [default with a pinned policy: 3].
    #[arg(long, value_name = "M")]
    pub min_clients: Option<usize>,
    /// The pinned policy's lone-update floor: a setup may wait for more
    /// clients' removals, never fewer [default with a pinned policy: 2].
    #[arg(long, value_name = "M")]
    pub min_updating_clients: Option<usize>,
    /// Pins the topology in the federation file: `flat`, `groups:B` or
    /// `tree:B:F` (groups of at least B clients; F children per node)
    /// [default: not pinned].
    #[arg(long, value_name = "SPEC", value_parser = parse_topology)]
    pub topology: Option<mufc::Topology>,
    /// Revoke the certificates of these clients, comma-separated: each
    /// `client-NAME.pem` of the directory is added to `revoked.txt`,
    /// which the server reads again whenever it changes (its session is
    /// closed before the next round, and it is refused from then on).
    #[arg(long, value_name = "NAMES", value_delimiter = ',')]
    pub revoke: Vec<String>,
    /// Revoke the dealer's certificate (`dealer.pem` of the directory), as
    /// `--revoke` does a client's: the server closes the dealer's session
    /// before the next round and refuses it from then on (no dealt round
    /// starts until a dealer with a new certificate connects).
    #[arg(long)]
    pub revoke_dealer: bool,
}

/// A topology as `mufc certs --topology` takes it: `flat`, `groups:B`
/// or `tree:B:F`.
///
/// ```
/// use mufc_cli::cli::parse_topology;
/// assert_eq!(parse_topology("groups:4"), Ok(mufc::Topology::Groups { size: 4 }));
/// assert!(parse_topology("groups").is_err());
/// ```
///
/// # Errors
///
/// What the text lacks, in words.
pub fn parse_topology(s: &str) -> Result<mufc::Topology, String> {
    let number = |p: Option<&str>, what: &str| -> Result<usize, String> {
        p.and_then(|v| v.parse().ok())
            .filter(|v| *v > 0)
            .ok_or_else(|| format!("{s:?}: {what} must be a positive whole number"))
    };
    let mut parts = s.split(':');
    let topology = match parts.next() {
        Some("flat") => mufc::Topology::Flat,
        Some("groups") => mufc::Topology::Groups {
            size: number(parts.next(), "the group size B in groups:B")?,
        },
        Some("tree") => mufc::Topology::Tree {
            group_size: number(parts.next(), "the group size B in tree:B:F")?,
            fan_out: number(parts.next(), "the fan-out F in tree:B:F")?,
        },
        _ => return Err(format!("{s:?}: expected flat, groups:B or tree:B:F")),
    };
    match parts.next() {
        None => Ok(topology),
        Some(_) => Err(format!("{s:?}: expected flat, groups:B or tree:B:F")),
    }
}
