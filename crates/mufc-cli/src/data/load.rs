//! Loading a file: the format chosen by the extension, and errors that
//! only know a line made to name the file.

use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use super::delimited::read_csv;
use super::npy::read_npy;
use super::options::LoadOptions;
use super::table::Table;
use crate::CliError;

/// Loads a data set, choosing the format by the file's extension: `.csv`
/// and `.txt` (comma-separated), `.tsv` (tab-separated), `.npy`.
///
/// # Errors
///
/// [`CliError::UnknownFormat`] for another extension, [`CliError::Io`] when
/// the file cannot be read, and the errors of [`read_csv`] and
/// [`read_npy`], those naming a line or no data inside a
/// [`CliError::InFile`] that names the file.
///
/// # Example
///
/// ```
/// use mufc_cli::data::{load, LoadOptions};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("points.csv");
/// std::fs::write(&path, "1,2\n3,4\n").unwrap();
/// let t = load(&path, &LoadOptions::default())?;
/// assert_eq!((t.dim(), t.len()), (2, 2));
/// assert!(load(&dir.path().join("points.xlsx"), &LoadOptions::default()).is_err());
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
pub fn load(path: &Path, opts: &LoadOptions) -> Result<Table, CliError> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let delimiter = match ext.as_deref() {
        Some("csv" | "txt") => Some(b','),
        Some("tsv") => Some(b'\t'),
        Some("npy") => None,
        _ => {
            return Err(CliError::UnknownFormat {
                path: path.to_path_buf(),
                expected: ".csv, .tsv, .txt or .npy",
            });
        }
    };
    let file = File::open(path).map_err(|e| CliError::io(path, &e))?;
    let reader = BufReader::new(file);
    let table = match delimiter {
        Some(delim) => read_csv(reader, delim, opts),
        None => read_npy(reader, path, opts),
    };
    // Name the file in errors that only know a line.
    table.map_err(|e| match e {
        CliError::Io { message, .. } => CliError::Io {
            path: path.to_path_buf(),
            message,
        },
        e @ (CliError::NoData(_)
        | CliError::CsvSyntax { .. }
        | CliError::BadField { .. }
        | CliError::RaggedRow { .. }
        | CliError::DuplicateRecordId { .. }
        | CliError::IdColumn { .. }
        | CliError::ClientColumnOutOfRange { .. }) => CliError::InFile {
            path: path.to_path_buf(),
            inner: Box::new(e),
        },
        other => other,
    })
}
