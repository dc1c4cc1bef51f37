//! Reading `.npy` files: a 2-D array of `f64` or `f32` in either layout,
//! with the header's length, nesting and shape checked before npyz parses
//! it.

use std::io::Read;
use std::path::Path;

use nalgebra::DMatrix;

use super::options::LoadOptions;
use super::table::{At, ClientIndex, IdIndex, Table, valid_coordinate};
use crate::CliError;

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
    let array = Array::read(reader, source)?;
    let (n, columns) = (array.n, array.columns);
    check_columns(opts, columns)?;
    let dim = columns
        .saturating_sub(usize::from(opts.client_column.is_some()))
        .saturating_sub(usize::from(opts.id_column.is_some()));
    if dim == 0 {
        return Err(CliError::NoData("the data has no feature columns"));
    }
    if n == 0 {
        return Err(CliError::NoData("the data has no points"));
    }
    let mut cells = Cells {
        opts,
        source,
        coords: Vec::with_capacity(n.saturating_mul(dim)),
        clients: ClientIndex::default(),
        ids: IdIndex::default(),
    };
    for row in 0..n {
        for col in 0..columns {
            cells.take(row, col, array.at(row, col))?;
        }
    }
    Ok(cells.table(dim, n))
}

/// An `.npy` error of the file `source`.
fn npy_err(source: &Path, message: String) -> CliError {
    CliError::Npy {
        path: source.to_path_buf(),
        message,
    }
}

/// A 2-D array's values as read, in the file's layout.
struct Array {
    n: usize,
    columns: usize,
    order: npyz::Order,
    flat: Vec<f64>,
}

impl Array {
    /// Reads the array, its header checked first, its shape checked
    /// against the values read.
    fn read<R: Read>(reader: R, source: &Path) -> Result<Self, CliError> {
        let npy_err = |message: String| npy_err(source, message);
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
        let flat = float_values(file, source)?;
        let too_big = || npy_err(format!("shape {shape:?} is too large for this machine"));
        let n = usize::try_from(rows).map_err(|_| too_big())?;
        let columns = usize::try_from(cols).map_err(|_| too_big())?;
        if n.checked_mul(columns) != Some(flat.len()) {
            return Err(npy_err(format!(
                "shape {shape:?} does not match the {} values read",
                flat.len()
            )));
        }
        Ok(Self {
            n,
            columns,
            order,
            flat,
        })
    }

    /// The value at `row` and `col`.
    fn at(&self, row: usize, col: usize) -> f64 {
        // In range: row < n and col < columns, and `flat` holds n x columns
        // values (checked when read); a miss reads as NaN, which is refused.
        let i = match self.order {
            npyz::Order::C => row
                .checked_mul(self.columns)
                .and_then(|x| x.checked_add(col)),
            npyz::Order::Fortran => col.checked_mul(self.n).and_then(|x| x.checked_add(row)),
        };
        i.and_then(|i| self.flat.get(i).copied())
            .unwrap_or(f64::NAN)
    }
}

/// The file's values as `f64`, if it holds `f64` or `f32`.
fn float_values<R: Read>(file: npyz::NpyFile<R>, source: &Path) -> Result<Vec<f64>, CliError> {
    let npy_err = |message: String| npy_err(source, message);
    let dtype = file.dtype();
    let float_size = match &dtype {
        npyz::DType::Plain(ts) if ts.type_char() == npyz::TypeChar::Float => ts.size_field(),
        _ => 0,
    };
    Ok(match float_size {
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
    })
}

/// The client and id columns exist, and are not the same column.
fn check_columns(opts: &LoadOptions, columns: usize) -> Result<(), CliError> {
    if let Some(c) = opts.client_column
        && c >= columns
    {
        return Err(CliError::ClientColumnOutOfRange { column: c, columns });
    }
    if let Some(c) = opts.id_column {
        if c >= columns {
            return Err(CliError::IdColumn {
                column: c,
                reason: format!("does not exist: the data has {columns} columns"),
            });
        }
        if opts.client_column == Some(c) {
            return Err(CliError::IdColumn {
                column: c,
                reason: "is the client column".into(),
            });
        }
    }
    Ok(())
}

/// The table's columns, filled value by value in row order: the
/// coordinates, the clients and the record ids.
struct Cells<'a> {
    opts: &'a LoadOptions,
    source: &'a Path,
    coords: Vec<f64>,
    clients: ClientIndex,
    ids: IdIndex,
}

impl Cells<'_> {
    /// Checks the value at `row` and `col` for its column and keeps it.
    fn take(&mut self, row: usize, col: usize, v: f64) -> Result<(), CliError> {
        let place = At {
            line: row as u64,
            column: col,
        };
        if self.opts.client_column == Some(col) {
            // Exact integers below 2^53 name clients.
            if !(v >= 0.0 && v.fract() == 0.0 && v < 9_007_199_254_740_992.0) {
                return Err(npy_err(
                    self.source,
                    format!(
                        "row {row}, column {col} (counting from 0): client id {v} is not a non-negative integer"
                    ),
                ));
            }
            self.clients.push(&format!("{v:.0}"), place)?;
        } else if self.opts.id_column == Some(col) {
            // Exact integers of magnitude below 2^53 are record ids.
            if !(v.fract() == 0.0 && v.abs() < 9_007_199_254_740_992.0) {
                return Err(npy_err(
                    self.source,
                    format!(
                        "row {row}, column {col} (counting from 0): record id {v} is not an integer of magnitude below 2^53"
                    ),
                ));
            }
            self.ids.push(&format!("{v:.0}"), place)?;
        } else {
            if !valid_coordinate(v) {
                return Err(npy_err(
                    self.source,
                    format!(
                        "row {row}, column {col} (counting from 0): {v} is not finite or exceeds 2^400 in magnitude"
                    ),
                ));
            }
            self.coords.push(v);
        }
        Ok(())
    }

    /// The table of `n` points of `dim` coordinates.
    fn table(self, dim: usize, n: usize) -> Table {
        let points = DMatrix::from_vec(dim, n, self.coords);
        Table {
            points,
            clients: self.opts.client_column.map(|_| self.clients.of_point),
            client_names: self.clients.names,
            ids: self.opts.id_column.map(|_| self.ids.ids),
        }
    }
}

#[cfg(test)]
// Values written as decimal literals and read back are exact.
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

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
