//! The one error type of the library half of the crate.

use std::path::PathBuf;

use baselines::BaselineError;
use mufc::MufcError;
use seeding::SeedingError;

/// Everything the library modules of the `mufc` command can fail with.
/// Variants carry what a user needs to find the problem: the file, the
/// line and column of a bad field, the numbers that do not fit.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// A file could not be opened, read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        message: String,
    },
    /// The file extension names no format this command reads or writes.
    #[error("{path}: unknown file type (expected {expected})")]
    UnknownFormat {
        /// The file.
        path: PathBuf,
        /// The extensions accepted.
        expected: &'static str,
    },
    /// The CSV reader could not split the input into fields (for instance
    /// an unterminated quote or invalid UTF-8).
    #[error("line {line}: {message}")]
    CsvSyntax {
        /// The 1-based line of the record.
        line: u64,
        /// What the reader said.
        message: String,
    },
    /// A field is not a usable number.
    #[error("line {line}, column {column} (counting from 0): {value:?} {reason}")]
    BadField {
        /// The 1-based line of the record.
        line: u64,
        /// The 0-based column of the field.
        column: usize,
        /// The field as written.
        value: String,
        /// Why it was rejected.
        reason: &'static str,
    },
    /// A record has a different number of fields than the first one.
    #[error(
        "line {line} has {found} field{}, expected {expected} (as the first record)",
        if *found == 1 { "" } else { "s" }
    )]
    RaggedRow {
        /// The 1-based line of the record.
        line: u64,
        /// The number of fields of the first record.
        expected: usize,
        /// The number of fields of this record.
        found: usize,
    },
    /// The client column is not a column of the data.
    #[error(
        "client column {column} (counting from 0) does not exist: the data has {columns} column{}",
        if *columns == 1 { "" } else { "s" }
    )]
    ClientColumnOutOfRange {
        /// The column asked for.
        column: usize,
        /// The number of columns.
        columns: usize,
    },
    /// The record id column is not a column of the data, or is the client
    /// column.
    #[error("--id-column {column} (counting from 0) {reason}")]
    IdColumn {
        /// The column asked for.
        column: usize,
        /// What is wrong.
        reason: String,
    },
    /// A record id occurs on two lines (or `.npy` rows).
    #[error(
        "line {line}: record id {value:?} is already the id of line {first}: record ids must be unique"
    )]
    DuplicateRecordId {
        /// The 1-based line (or 0-based `.npy` row) of the second.
        line: u64,
        /// That of the first.
        first: u64,
        /// The id.
        value: String,
    },
    /// The input holds no data points, or no feature columns.
    #[error("{0}")]
    NoData(&'static str),
    /// An error of reading a data file, with the file's name.
    #[error("{path}: {inner}")]
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong in it (a [`CliError::BadField`],
        /// [`CliError::RaggedRow`], [`CliError::CsvSyntax`],
        /// [`CliError::ClientColumnOutOfRange`] or [`CliError::NoData`]).
        inner: Box<Self>,
    },
    /// More clusters than points.
    #[error(
        "K = {k} exceeds the number of points ({points}): K-means needs at least K points; \
         pass a smaller --k"
    )]
    KExceedsPoints {
        /// The number of clusters asked for.
        k: usize,
        /// The number of points of the data.
        points: usize,
    },
    /// More clients than points: some client would hold none.
    #[error(
        "--clients {clients} exceeds the number of points ({points}): every client needs at \
         least one point; pass a smaller --clients"
    )]
    ClientsExceedPoints {
        /// The number of clients asked for.
        clients: usize,
        /// The number of points of the data.
        points: usize,
    },
    /// K' above the number of clusters.
    #[error(
        "K' = {k_prime}{} exceeds {}: a client cannot hold more clusters than there are; pass \
         --k-prime {clusters} or less",
        if *defaulted { " (the default)" } else { "" },
        if *labelled {
            format!("the {clusters} clusters the labelling found")
        } else {
            format!("K = {clusters}")
        }
    )]
    KPrimeExceedsK {
        /// K'.
        k_prime: usize,
        /// Whether K' is the default (3), not given.
        defaulted: bool,
        /// K, or the number of non-empty clusters of the labelling.
        clusters: usize,
        /// Whether `clusters` counts the labelling's clusters (fewer than
        /// K when some came out empty), not K.
        labelled: bool,
    },
    /// A non-i.i.d. split that cannot exist: each client holds at most K'
    /// clusters, so L clients cover at most L K' of them.
    #[error(
        "no non-i.i.d. split exists: {clusters} clusters cannot be spread over {clients} clients \
         holding at most K' = {k_prime} clusters each ({clients} x {k_prime} = {} < {clusters}); \
         pass a larger --clients or --k-prime, a smaller --k, or --split iid",
        clients.saturating_mul(*k_prime)
    )]
    NonIidImpossible {
        /// The clusters of the labelling.
        clusters: usize,
        /// The number of clients L.
        clients: usize,
        /// K'.
        k_prime: usize,
    },
    /// A dropout rate that leaves fewer clients than the secure
    /// aggregation threshold.
    #[error(
        "--dropout {rate} with {clients} clients plans for {dropouts} dropouts (ceil({rate} x \
         {clients})), leaving {survivors}, fewer than the {threshold} clients secure aggregation \
         needs to unmask the sum (threshold t with 2t > n + c, {colluding} colluding); at most \
         {max_dropouts} of {clients} clients may drop: pass --dropout {max_rate} or less, or \
         more --clients"
    )]
    DropoutTooHigh {
        /// The dropout rate.
        rate: f64,
        /// The number of clients n.
        clients: usize,
        /// The dropouts planned for, `ceil(rate n)`.
        dropouts: usize,
        /// The clients left, `n - dropouts`.
        survivors: usize,
        /// The protocol's threshold t.
        threshold: usize,
        /// The colluding clients c planned for.
        colluding: usize,
        /// The most dropouts the threshold leaves room for, `n - t`.
        max_dropouts: usize,
        /// The largest rate planning for at most `max_dropouts`.
        max_rate: f64,
    },
    /// A quantization step so coarse that every point falls into one bin.
    #[error(
        "--gamma {gamma}{}: every one of the {points} points falls into one quantization bin \
         (the grid has {bins_per_axis} bin{} per axis), so the server would see a single point; \
         pass a smaller --gamma, for instance {}",
        if *defaulted { " (the default)" } else { "" },
        if *bins_per_axis == 1 { "" } else { "s" },
        significant(*suggestion)
    )]
    GammaOneBin {
        /// The step.
        gamma: f64,
        /// Whether gamma is the default, not given.
        defaulted: bool,
        /// The number of points.
        points: usize,
        /// The grid's bins per axis.
        bins_per_axis: u64,
        /// A step that separates the data (a quarter of its widest
        /// extent along an axis).
        suggestion: f64,
    },
    /// A `.npy` file that cannot be read as a 2-D array of floats.
    #[error("{path}: {message}")]
    Npy {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A parameter is out of its range.
    #[error("invalid {name} = {value}: {reason}")]
    InvalidParameter {
        /// The parameter.
        name: &'static str,
        /// The value given.
        value: String,
        /// What it must satisfy.
        reason: &'static str,
    },
    /// The non-i.i.d. split did not respect K' within the allowed attempts.
    #[error(
        "no non-i.i.d. split with K' = {k_prime} over {clients} clients found in {attempts} attempts"
    )]
    SplitInfeasible {
        /// The bound on clusters per client.
        k_prime: usize,
        /// The number of clients.
        clients: usize,
        /// How many random splits were tried.
        attempts: usize,
    },
    /// A client has no points.
    #[error("client {client} has no points")]
    EmptyClient {
        /// The client's index.
        client: usize,
    },
    /// A point id that is not (or no longer) in the federation.
    #[error("point {id} is not in the data")]
    UnknownPoint {
        /// The id.
        id: u64,
    },
    /// Drawing a figure failed.
    #[error("plot {path}: {message}")]
    Plot {
        /// The output file.
        path: PathBuf,
        /// What the plotting library said.
        message: String,
    },
    /// An error of the clustering library.
    #[error(transparent)]
    Seeding(#[from] SeedingError),
    /// An error of a baseline that has no variant of its own here.
    #[error(transparent)]
    Baseline(BaselineError),
    /// Data outside the quantizer's box `[-1/2, 1/2]^d` (SCMA modes).
    #[error("{0}; pass --scale to map the data into the box")]
    OutsideBox(MufcError),
    /// Certificates or TLS (`mufc-net`).
    #[cfg(feature = "net")]
    #[error(transparent)]
    Net(#[from] mufc_net::NetError),
    /// An error of the model store (`mufc_store`), with its message.
    #[error("{0}")]
    Store(String),
    /// The store refused a request (unknown or already forgotten records,
    /// an unknown or removed client, a request the privacy policy refuses):
    /// nothing changed. `mufc forget` exits with
    /// [`exit::REFUSED`](crate::exit::REFUSED).
    #[error("{0}")]
    Refused(String),
    /// A record id column that does not give every point a distinct
    /// non-negative integer id.
    #[error("{path}: {message}")]
    BadRecordId {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the data row.
        message: String,
    },
    /// An error of the federation (for instance a client with fewer
    /// distinct points than its k, or data outside the quantizer's box).
    #[error(transparent)]
    Mufc(#[from] MufcError),
}

/// The baselines' errors as the variants the command printed before the
/// baselines had a crate of their own, so that its messages do not change.
impl From<BaselineError> for CliError {
    fn from(e: BaselineError) -> Self {
        match e {
            BaselineError::InvalidParameter {
                name,
                value,
                reason,
            } => Self::InvalidParameter {
                name,
                value,
                reason,
            },
            BaselineError::EmptyClient { client } => Self::EmptyClient { client },
            BaselineError::NoData(what) => Self::NoData(what),
            BaselineError::UnknownPoint { id } => Self::UnknownPoint { id },
            BaselineError::Seeding(e) => Self::Seeding(e),
            other => Self::Baseline(other),
        }
    }
}

/// The store's errors as their messages (the federation's keep their own
/// variant), with the option that overrides a refusal to overwrite.
impl From<mufc_store::StoreError> for CliError {
    fn from(e: mufc_store::StoreError) -> Self {
        use mufc_store::StoreError;
        match e {
            StoreError::Mufc(m) => Self::Mufc(m),
            e @ StoreError::Exists { .. } => Self::Store(format!("{e}").replace(
                "(IfExists::Replace replaces it)",
                "(pass --force to replace it)",
            )),
            e => Self::Store(e.to_string()),
        }
    }
}

impl From<mufc_store::InvalidName> for CliError {
    fn from(e: mufc_store::InvalidName) -> Self {
        Self::Store(e.to_string())
    }
}

impl CliError {
    pub(crate) fn io(path: impl Into<PathBuf>, err: &std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            message: err.to_string(),
        }
    }
}

/// `x` rounded to three significant digits, for suggestions.
fn significant(x: f64) -> f64 {
    if !(x.is_finite() && x > 0.0) {
        return x;
    }
    let scale = 10f64.powf(2.0 - x.log10().floor());
    (x * scale).round() / scale
}
