//! The one error type of the library half of the crate.

use std::path::PathBuf;

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
    #[error("line {line}: {found} fields, but the first record has {expected}")]
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
        "client column {column} (counting from 0) does not exist: the data has {columns} columns"
    )]
    ClientColumnOutOfRange {
        /// The column asked for.
        column: usize,
        /// The number of columns.
        columns: usize,
    },
    /// The input holds no data points, or no feature columns.
    #[error("{0}")]
    NoData(&'static str),
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
    /// Data outside the quantizer's box `[-1/2, 1/2]^d` (SCMA modes).
    #[error("{0}; pass --scale to map the data into the box")]
    OutsideBox(MufcError),
    /// An error of the federation (for instance a client with fewer
    /// distinct points than its k, or data outside the quantizer's box).
    #[error(transparent)]
    Mufc(#[from] MufcError),
}

impl CliError {
    pub(crate) fn io(path: impl Into<PathBuf>, err: &std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            message: err.to_string(),
        }
    }
}
