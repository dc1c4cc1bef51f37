//! Loading data sets: CSV (one point per row) and `.npy` (a 2-D array of
//! `f64` or `f32`, C or Fortran order), with an optional column naming the
//! client that holds each point.
//!
//! Loading is all or nothing: the first bad record or field ends it with an
//! error naming its line and column, and no partial table is returned.

// Untrusted input reaches this module (docs/threat-model.md §8): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use nalgebra::DMatrix;
use seeding::Dataset;

use crate::CliError;

/// How the first CSV record is treated.
///
/// # Example
///
/// ```
/// use mufc_cli::data::Header;
///
/// assert_eq!(Header::default(), Header::Auto);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Header {
    /// A header when none of its feature fields is a number; data when all
    /// of them are; an error when it is a mix (a typo in the first data row
    /// must not silently turn it into a header).
    #[default]
    Auto,
    /// The first record is a header and is skipped.
    Present,
    /// There is no header: the first record is data.
    Absent,
}

/// Options for [`load`], [`read_csv`] and [`read_npy`].
///
/// # Example
///
/// ```
/// use mufc_cli::data::{Header, LoadOptions};
///
/// let opts = LoadOptions { header: Header::Present, client_column: Some(0) };
/// assert_eq!(LoadOptions::default().client_column, None);
/// # let _ = opts;
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadOptions {
    /// How the first CSV record is treated (ignored for `.npy`).
    pub header: Header,
    /// The 0-based column holding each row's client id; it is not a
    /// feature. In a `.npy` file its values must be non-negative integers.
    pub client_column: Option<usize>,
}

/// A loaded data set: points as the columns of a d x n matrix (the layout
/// of [`seeding::Dataset`]) and, when the input named them, the client of
/// every point.
///
/// Client ids are numbered `0..` in the order of their first appearance;
/// [`Table::client_names`] keeps the names as written.
///
/// # Example
///
/// ```
/// use mufc_cli::data::{read_csv, Header, LoadOptions};
///
/// let csv = "client,x,y\nalice,0.5,1\nbob,2,3\nalice,4,5\n";
/// let opts = LoadOptions { header: Header::Auto, client_column: Some(0) };
/// let t = read_csv(csv.as_bytes(), b',', &opts)?;
/// assert_eq!((t.dim(), t.len()), (2, 3));
/// assert_eq!(t.clients(), Some(&[0, 1, 0][..]));
/// assert_eq!(t.client_names(), &["alice".to_string(), "bob".to_string()]);
/// assert_eq!(t.points()[(1, 2)], 5.0);
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    points: DMatrix<f64>,
    clients: Option<Vec<usize>>,
    client_names: Vec<String>,
}

impl Table {
    /// A table without client ids.
    ///
    /// # Errors
    ///
    /// [`CliError::NoData`] for a matrix without rows or columns, and
    /// [`CliError::Seeding`] for a coordinate that is not finite or too
    /// large for [`Dataset`].
    pub fn new(points: DMatrix<f64>) -> Result<Self, CliError> {
        check_points(&points)?;
        Ok(Self {
            points,
            clients: None,
            client_names: Vec::new(),
        })
    }

    /// A table whose point `i` belongs to client `clients[i]`, clients
    /// named `0..` as their indices.
    ///
    /// # Errors
    ///
    /// As [`Self::new`], plus [`CliError::InvalidParameter`] when there is
    /// not one client per point.
    pub fn with_clients(points: DMatrix<f64>, clients: Vec<usize>) -> Result<Self, CliError> {
        check_points(&points)?;
        if clients.len() != points.ncols() {
            return Err(CliError::InvalidParameter {
                name: "client ids",
                value: clients.len().to_string(),
                reason: "need one client id per point",
            });
        }
        let count = clients.iter().max().map_or(0, |&m| m.saturating_add(1));
        Ok(Self {
            points,
            clients: Some(clients),
            client_names: (0..count).map(|c| c.to_string()).collect(),
        })
    }

    /// The points, one per column.
    pub fn points(&self) -> &DMatrix<f64> {
        &self.points
    }

    /// The dimension d.
    pub fn dim(&self) -> usize {
        self.points.nrows()
    }

    /// The number of points n.
    pub fn len(&self) -> usize {
        self.points.ncols()
    }

    /// Whether the table has no points (never true for a loaded table).
    pub fn is_empty(&self) -> bool {
        self.points.ncols() == 0
    }

    /// The client of each point, when the input named them.
    pub fn clients(&self) -> Option<&[usize]> {
        self.clients.as_deref()
    }

    /// The client names as written, by client index.
    pub fn client_names(&self) -> &[String] {
        &self.client_names
    }

    /// The points as a [`Dataset`] with ids `0..n` (the column positions).
    ///
    /// # Errors
    ///
    /// [`CliError::Seeding`] (not expected: the constructor checked).
    pub fn dataset(&self) -> Result<Dataset, CliError> {
        Ok(Dataset::new(self.points.clone())?)
    }

    /// Replaces the points (same shape), for instance by their image under
    /// a [`seeding::BoxTransform`]; the clients stay.
    ///
    /// # Errors
    ///
    /// [`CliError::InvalidParameter`] for another shape, or as
    /// [`Self::new`].
    pub fn with_points(self, points: DMatrix<f64>) -> Result<Self, CliError> {
        if points.shape() != self.points.shape() {
            return Err(CliError::InvalidParameter {
                name: "points",
                value: format!("{}x{}", points.nrows(), points.ncols()),
                reason: "must keep the shape of the table",
            });
        }
        check_points(&points)?;
        Ok(Self { points, ..self })
    }
}

fn check_points(points: &DMatrix<f64>) -> Result<(), CliError> {
    if points.nrows() == 0 {
        return Err(CliError::NoData("the data has no feature columns"));
    }
    if points.ncols() == 0 {
        return Err(CliError::NoData("the data has no points"));
    }
    // The same checks as the clustering library, so that nothing fails
    // later on a table that loaded.
    for (p, col) in points.as_slice().chunks_exact(points.nrows()).enumerate() {
        for (axis, &value) in col.iter().enumerate() {
            if !valid_coordinate(value) {
                return Err(seeding::SeedingError::InvalidCoordinate {
                    point: p,
                    axis,
                    value,
                }
                .into());
            }
        }
    }
    Ok(())
}

fn valid_coordinate(x: f64) -> bool {
    x.is_finite() && x.abs() <= Dataset::MAX_ABS_COORD
}

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
        | CliError::ClientColumnOutOfRange { .. }) => CliError::InFile {
            path: path.to_path_buf(),
            inner: Box::new(e),
        },
        other => other,
    })
}

/// Maps client names to dense indices in order of first appearance.
#[derive(Default)]
struct ClientIndex {
    index: HashMap<String, usize>,
    names: Vec<String>,
    of_point: Vec<usize>,
}

impl ClientIndex {
    fn push(&mut self, name: &str) {
        let next = self.names.len();
        let id = *self.index.entry(name.to_string()).or_insert(next);
        if id == next {
            self.names.push(name.to_string());
        }
        self.of_point.push(id);
    }
}

/// Reads CSV records, one point per record, every field a feature except
/// the client column. Fields are trimmed; blank lines are skipped.
///
/// # Errors
///
/// [`CliError::CsvSyntax`], [`CliError::RaggedRow`], [`CliError::BadField`]
/// (naming line and column) for a field that is not a finite number or an
/// empty client id, [`CliError::ClientColumnOutOfRange`] and
/// [`CliError::NoData`].
///
/// # Example
///
/// ```
/// use mufc_cli::data::{read_csv, LoadOptions};
/// use mufc_cli::CliError;
///
/// let err = read_csv("1,2\n3,x\n".as_bytes(), b',', &LoadOptions::default()).unwrap_err();
/// assert!(matches!(err, CliError::BadField { line: 2, column: 1, .. }));
/// ```
pub fn read_csv<R: Read>(
    mut reader: R,
    delimiter: u8,
    opts: &LoadOptions,
) -> Result<Table, CliError> {
    // The whole input in memory, so that line numbers can be computed from
    // byte offsets: the reader's own line count points at the blank lines
    // it skips before a record, not at the record.
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(|e| CliError::Io {
        path: "<input>".into(),
        message: e.to_string(),
    })?;
    let newlines: Vec<usize> = bytes
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i)
        .collect();
    let line_of = |pos: Option<&csv::Position>| {
        let start = pos.map_or(0, |p| usize::try_from(p.byte()).unwrap_or(usize::MAX));
        let skip = bytes.get(start..).map_or(0, |rest| {
            rest.iter()
                .take_while(|&&b| b == b'\n' || b == b'\r')
                .count()
        });
        let first = start.saturating_add(skip);
        (newlines.partition_point(|&p| p < first) as u64).saturating_add(1)
    };
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .trim(csv::Trim::All)
        .from_reader(&bytes[..]);
    let mut record = csv::StringRecord::new();
    let mut coords: Vec<f64> = Vec::new();
    let mut clients = ClientIndex::default();
    let mut width: Option<usize> = None;
    let mut first = true;
    let mut header_skipped = false;
    loop {
        let more = rdr
            .read_record(&mut record)
            .map_err(|e| CliError::CsvSyntax {
                line: e.position().map_or(0, csv::Position::line),
                message: e.to_string(),
            })?;
        if !more {
            break;
        }
        let line = line_of(record.position());
        if record.iter().all(str::is_empty) {
            continue;
        }
        let columns = record.len();
        if let Some(c) = opts.client_column
            && c >= columns
        {
            return Err(CliError::ClientColumnOutOfRange { column: c, columns });
        }
        match width {
            None => width = Some(columns),
            Some(w) if w != columns => {
                return Err(CliError::RaggedRow {
                    line,
                    expected: w,
                    found: columns,
                });
            }
            Some(_) => {}
        }
        let is_feature = |col: usize| opts.client_column != Some(col);
        if first {
            first = false;
            let skip = match opts.header {
                Header::Present => true,
                Header::Absent => false,
                Header::Auto => {
                    let numeric = record
                        .iter()
                        .enumerate()
                        .filter(|&(c, _)| is_feature(c))
                        .filter(|(_, f)| f.parse::<f64>().is_ok())
                        .count();
                    numeric == 0
                }
            };
            if skip {
                header_skipped = true;
                continue;
            }
        }
        for (column, field) in record.iter().enumerate() {
            if !is_feature(column) {
                if field.is_empty() {
                    return Err(CliError::BadField {
                        line,
                        column,
                        value: field.to_string(),
                        reason: "is an empty client id",
                    });
                }
                clients.push(field);
                continue;
            }
            let value = field.parse::<f64>().map_err(|_| CliError::BadField {
                line,
                column,
                value: field.to_string(),
                reason: if line == 1 && opts.header == Header::Auto {
                    "is not a number (a header row must have no numeric feature field; or pass --header)"
                } else if field.contains([';', '\t', ' ', ',']) {
                    "is not a number (fields are separated by ',' in .csv and .txt files, by tabs in .tsv files)"
                } else {
                    "is not a number"
                },
            })?;
            if !valid_coordinate(value) {
                return Err(CliError::BadField {
                    line,
                    column,
                    value: field.to_string(),
                    reason: "is not finite or exceeds 2^400 in magnitude",
                });
            }
            coords.push(value);
        }
    }
    let columns = width.ok_or(CliError::NoData(
        "the file has no data rows (it is empty or blank)",
    ))?;
    let dim = columns.saturating_sub(usize::from(opts.client_column.is_some()));
    if dim == 0 {
        return Err(CliError::NoData(
            "the data has no feature columns (only the client column)",
        ));
    }
    let n = coords.len().checked_div(dim).unwrap_or(0);
    if n == 0 {
        return Err(CliError::NoData(if header_skipped {
            "the file has only a header line, no data rows"
        } else {
            "the data has no points"
        }));
    }
    let points = DMatrix::from_vec(dim, n, coords);
    check_points(&points)?;
    Ok(Table {
        points,
        clients: opts.client_column.map(|_| clients.of_point),
        client_names: clients.names,
    })
}

/// Refuses an `.npy` header whose shape has more elements than a `u64`
/// counts, or whose dimensions are not plain integers: npyz multiplies the
/// dimensions unchecked (an overflow panic in builds with overflow checks,
/// a wrong count without; found by fuzzing, docs/fuzzing.md). A header
/// without a parenthesized shape is left to npyz.
fn check_npy_shape(header: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(header);
    let Some(after) = text.find("shape").and_then(|i| text.get(i..)) else {
        return Ok(());
    };
    let (Some(open), Some(close)) = (after.find('('), after.find(')')) else {
        return Ok(());
    };
    let Some(dims) = after.get(open.saturating_add(1)..close) else {
        return Ok(());
    };
    let mut total: u64 = 1;
    for d in dims.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        // numpy writes plain decimal integers; anything else (npyz also
        // evaluates sums and differences) is refused rather than counted
        // by npyz.
        let digits = d.trim_end_matches('L');
        let Some(v) = digits
            .bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| digits.parse::<u64>().ok())
            .flatten()
        else {
            return Err(format!(
                "the .npy shape ({dims}) is not a tuple of plain integers"
            ));
        };
        total = total.checked_mul(v).ok_or_else(|| {
            format!("the .npy shape ({dims}) has more elements than can be counted")
        })?;
    }
    Ok(())
}

/// The most nesting of brackets an `.npy` header may have: a header of a
/// 2-D float array has two (the dictionary and the shape); the header
/// parser behind npyz backtracks exponentially on deep nesting (twelve
/// levels took 18 s in the fuzzing campaign, docs/fuzzing.md).
const NPY_MAX_NESTING: usize = 4;
/// The longest `.npy` header read (the format pads it to 64 bytes; real
/// headers are under 200).
const NPY_MAX_HEADER: usize = 64 * 1024;

/// Reads an `.npy` file's magic, version, header length and header, and
/// checks the header's length and nesting before npyz parses it. Returns
/// those bytes (to be read again by npyz) and the rest of the reader.
fn npy_preamble<R: Read>(mut reader: R) -> Result<(Vec<u8>, R), String> {
    let mut fixed = [0u8; 8];
    reader
        .read_exact(&mut fixed)
        .map_err(|e| format!("not an .npy file (no header): {e}"))?;
    if fixed.get(..6) != Some(b"\x93NUMPY".as_slice()) {
        return Err("not an .npy file (bad magic)".into());
    }
    let len_bytes = if fixed.get(6) == Some(&1) { 2 } else { 4 };
    let mut len = [0u8; 4];
    reader
        .read_exact(len.get_mut(..len_bytes).unwrap_or(&mut []))
        .map_err(|e| format!("truncated .npy header: {e}"))?;
    let header_len = usize::try_from(u32::from_le_bytes(len)).unwrap_or(usize::MAX);
    if header_len > NPY_MAX_HEADER {
        return Err(format!(
            "the .npy header is {header_len} bytes long, more than {NPY_MAX_HEADER}"
        ));
    }
    let mut header = vec![0u8; header_len];
    reader
        .read_exact(&mut header)
        .map_err(|e| format!("truncated .npy header: {e}"))?;
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in &header {
        match b {
            b'{' | b'[' | b'(' => {
                depth = depth.saturating_add(1);
                deepest = deepest.max(depth);
            }
            b'}' | b']' | b')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if deepest > NPY_MAX_NESTING {
        return Err(format!(
            "the .npy header nests brackets {deepest} deep (at most {NPY_MAX_NESTING} in an array of numbers)"
        ));
    }
    check_npy_shape(&header)?;
    let mut preamble = fixed.to_vec();
    preamble.extend_from_slice(len.get(..len_bytes).unwrap_or(&[]));
    preamble.extend_from_slice(&header);
    Ok((preamble, reader))
}

/// Reads a `.npy` file holding a 2-D array of `f64` or `f32` (any byte
/// order, C or Fortran layout), one point per row. `source` names the file
/// in error messages.
///
/// # Errors
///
/// [`CliError::Npy`] for a file that is not such an array, for a value that
/// is not finite, or for a client column whose values are not
/// non-negative integers; [`CliError::ClientColumnOutOfRange`];
/// [`CliError::NoData`].
///
/// # Example
///
/// ```
/// use std::path::Path;
/// use mufc_cli::data::{read_npy, LoadOptions};
///
/// // Not an npy file.
/// assert!(read_npy(&b"1,2,3"[..], Path::new("x.npy"), &LoadOptions::default()).is_err());
/// ```
pub fn read_npy<R: Read>(reader: R, source: &Path, opts: &LoadOptions) -> Result<Table, CliError> {
    let npy_err = |message: String| CliError::Npy {
        path: source.to_path_buf(),
        message,
    };
    let (preamble, reader) = npy_preamble(reader).map_err(npy_err)?;
    let file = npyz::NpyFile::new(std::io::Cursor::new(preamble).chain(reader))
        .map_err(|e| npy_err(e.to_string()))?;
    let shape = file.shape().to_vec();
    let [rows, cols] = shape[..] else {
        return Err(npy_err(format!(
            "expected a 2-D array (points x features), found shape {shape:?}"
        )));
    };
    let order = file.order();
    let dtype = file.dtype();
    let float_size = match &dtype {
        npyz::DType::Plain(ts) if ts.type_char() == npyz::TypeChar::Float => ts.size_field(),
        _ => 0,
    };
    let flat: Vec<f64> = match float_size {
        8 => file.into_vec::<f64>().map_err(|e| npy_err(e.to_string()))?,
        4 => file
            .into_vec::<f32>()
            .map_err(|e| npy_err(e.to_string()))?
            .into_iter()
            .map(f64::from)
            .collect(),
        _ => {
            return Err(npy_err(format!(
                "expected float64 or float32 values, found dtype {}",
                dtype.descr()
            )));
        }
    };
    let too_big = || npy_err(format!("shape {shape:?} is too large for this machine"));
    let n = usize::try_from(rows).map_err(|_| too_big())?;
    let columns = usize::try_from(cols).map_err(|_| too_big())?;
    if n.checked_mul(columns) != Some(flat.len()) {
        return Err(npy_err(format!(
            "shape {shape:?} does not match the {} values read",
            flat.len()
        )));
    }
    if let Some(c) = opts.client_column
        && c >= columns
    {
        return Err(CliError::ClientColumnOutOfRange { column: c, columns });
    }
    // In range: row < n and col < columns, and `flat` holds n x columns
    // values (checked above); a miss reads as NaN, which is refused below.
    let at = |row: usize, col: usize| {
        let i = match order {
            npyz::Order::C => row.checked_mul(columns).and_then(|x| x.checked_add(col)),
            npyz::Order::Fortran => col.checked_mul(n).and_then(|x| x.checked_add(row)),
        };
        i.and_then(|i| flat.get(i).copied()).unwrap_or(f64::NAN)
    };
    let dim = columns.saturating_sub(usize::from(opts.client_column.is_some()));
    if dim == 0 {
        return Err(CliError::NoData("the data has no feature columns"));
    }
    if n == 0 {
        return Err(CliError::NoData("the data has no points"));
    }
    let mut coords = Vec::with_capacity(n.saturating_mul(dim));
    let mut clients = ClientIndex::default();
    for row in 0..n {
        for col in 0..columns {
            let v = at(row, col);
            if opts.client_column == Some(col) {
                // Exact integers below 2^53 name clients.
                if !(v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0) {
                    return Err(npy_err(format!(
                        "row {row}, column {col} (counting from 0): client id {v} is not a non-negative integer"
                    )));
                }
                clients.push(&format!("{v:.0}"));
            } else {
                if !valid_coordinate(v) {
                    return Err(npy_err(format!(
                        "row {row}, column {col} (counting from 0): {v} is not finite or exceeds 2^400 in magnitude"
                    )));
                }
                coords.push(v);
            }
        }
    }
    let points = DMatrix::from_vec(dim, n, coords);
    Ok(Table {
        points,
        clients: opts.client_column.map(|_| clients.of_point),
        client_names: clients.names,
    })
}

#[cfg(test)]
// Values written as decimal literals and read back are exact.
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    fn csv(s: &str, opts: LoadOptions) -> Result<Table, CliError> {
        read_csv(s.as_bytes(), b',', &opts)
    }

    #[test]
    fn header_is_detected_or_forced() {
        let t = csv("x,y\n1,2\n3,4\n", LoadOptions::default()).unwrap();
        assert_eq!(t.len(), 2);
        let t = csv("1,2\n3,4\n", LoadOptions::default()).unwrap();
        assert_eq!(t.len(), 2);
        let forced = LoadOptions {
            header: Header::Present,
            ..LoadOptions::default()
        };
        let t = csv("1,2\n3,4\n", forced).unwrap();
        assert_eq!(t.len(), 1);
        assert_eq!(t.points().as_slice(), &[3.0, 4.0]);
        // A mixed first row is an error, not a header.
        let err = csv("1,y\n3,4\n", LoadOptions::default()).unwrap_err();
        assert!(matches!(
            err,
            CliError::BadField {
                line: 1,
                column: 1,
                ..
            }
        ));
        let absent = LoadOptions {
            header: Header::Absent,
            ..LoadOptions::default()
        };
        assert!(csv("x,y\n1,2\n", absent).is_err());
    }

    #[test]
    fn every_bad_field_names_line_and_column() {
        let o = LoadOptions::default();
        let cases: [(&str, u64, usize); 5] = [
            ("1,2\n3,\n", 2, 1),
            ("1,2\n3,4\n5,nan\n", 3, 1),
            ("1,2\ninf,4\n", 2, 0),
            ("1,2\n\n1e999,4\n", 3, 0),
            ("a,b\n1,2\n3,x4\n", 3, 1),
        ];
        for (input, line, column) in cases {
            match csv(input, o) {
                Err(CliError::BadField {
                    line: l, column: c, ..
                }) => assert_eq!((l, c), (line, column), "{input:?}"),
                other => panic!("{input:?}: {other:?}"),
            }
        }
        assert!(matches!(
            csv("1,2\n3,4,5\n", o),
            Err(CliError::RaggedRow {
                line: 2,
                expected: 2,
                found: 3
            })
        ));
        assert!(matches!(csv("", o), Err(CliError::NoData(_))));
        assert!(matches!(csv("x,y\n", o), Err(CliError::NoData(_))));
        // Invalid UTF-8 is a syntax error of its record.
        assert!(matches!(
            read_csv(&b"1,2\n3,\xff\n"[..], b',', &o),
            Err(CliError::CsvSyntax { line: 2, .. })
        ));
    }

    #[test]
    fn client_column_is_not_a_feature() {
        let o = LoadOptions {
            client_column: Some(1),
            ..LoadOptions::default()
        };
        let t = csv("0.5,b,1\n2,a,3\n4,b,5\n", o).unwrap();
        assert_eq!(t.dim(), 2);
        assert_eq!(t.points().as_slice(), &[0.5, 1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(t.clients(), Some(&[0, 1, 0][..]));
        assert_eq!(t.client_names(), &["b", "a"]);
        let err = csv("1,,2\n", o).unwrap_err();
        assert!(matches!(
            err,
            CliError::BadField {
                line: 1,
                column: 1,
                ..
            }
        ));
        let o = LoadOptions {
            client_column: Some(5),
            ..LoadOptions::default()
        };
        assert!(matches!(
            csv("1,2\n", o),
            Err(CliError::ClientColumnOutOfRange {
                column: 5,
                columns: 2
            })
        ));
        let only_clients = LoadOptions {
            client_column: Some(0),
            header: Header::Absent,
        };
        assert!(matches!(
            csv("a\nb\n", only_clients),
            Err(CliError::NoData(_))
        ));
    }

    fn npy_bytes<T: npyz::AutoSerialize + Copy>(
        shape: &[u64],
        order: npyz::Order,
        values: &[T],
    ) -> Vec<u8> {
        use npyz::WriterBuilder;
        let mut buf = Vec::new();
        let mut w = npyz::WriteOptions::new()
            .default_dtype()
            .shape(shape)
            .order(order)
            .writer(&mut buf)
            .begin_nd()
            .unwrap();
        w.extend(values.iter().copied()).unwrap();
        w.finish().unwrap();
        buf
    }

    #[test]
    fn npy_orders_and_types() {
        let src = Path::new("t.npy");
        let o = LoadOptions::default();
        // Rows (points) [1, 2, 3] and [4, 5, 6].
        let c = npy_bytes(&[2, 3], npyz::Order::C, &[1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let f = npy_bytes(
            &[2, 3],
            npyz::Order::Fortran,
            &[1.0f64, 4.0, 2.0, 5.0, 3.0, 6.0],
        );
        let s = npy_bytes(&[2, 3], npyz::Order::C, &[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let want = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
        for bytes in [c, f, s] {
            let t = read_npy(&bytes[..], src, &o).unwrap();
            assert_eq!((t.dim(), t.len()), (3, 2));
            assert_eq!(t.points().as_slice(), &want);
        }
        let with_client = LoadOptions {
            client_column: Some(0),
            ..o
        };
        let bytes = npy_bytes(&[2, 2], npyz::Order::C, &[7.0f64, 0.5, 3.0, 1.5]);
        let t = read_npy(&bytes[..], src, &with_client).unwrap();
        assert_eq!(t.clients(), Some(&[0, 1][..]));
        assert_eq!(t.client_names(), &["7", "3"]);
        let bytes = npy_bytes(&[2, 2], npyz::Order::C, &[7.5f64, 0.5, 3.0, 1.5]);
        assert!(read_npy(&bytes[..], src, &with_client).is_err());
    }

    #[test]
    fn npy_rejects_what_it_cannot_use() {
        let src = Path::new("t.npy");
        let o = LoadOptions::default();
        let one_d = npy_bytes(&[3], npyz::Order::C, &[1.0f64, 2.0, 3.0]);
        let ints = npy_bytes(&[1, 2], npyz::Order::C, &[1i64, 2]);
        let nan = npy_bytes(&[1, 2], npyz::Order::C, &[1.0f64, f64::NAN]);
        let empty = npy_bytes::<f64>(&[0, 2], npyz::Order::C, &[]);
        for bytes in [one_d, ints, nan] {
            assert!(matches!(
                read_npy(&bytes[..], src, &o),
                Err(CliError::Npy { .. })
            ));
        }
        assert!(matches!(
            read_npy(&empty[..], src, &o),
            Err(CliError::NoData(_))
        ));
        // Truncated data: fewer values than the shape says.
        let mut cut = npy_bytes(&[2, 2], npyz::Order::C, &[1.0f64, 2.0, 3.0, 4.0]);
        cut.truncate(cut.len() - 8);
        assert!(read_npy(&cut[..], src, &o).is_err());
    }
}
