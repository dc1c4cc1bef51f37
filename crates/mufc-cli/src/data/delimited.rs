//! Reading delimited text (CSV, TSV): one point per record, an optional
//! header, and the client column; errors name their line and column.

use std::io::Read;

use nalgebra::DMatrix;

use super::options::{Header, LoadOptions};
use super::table::{At, ClientIndex, IdIndex, Table, check_points, valid_coordinate};
use crate::CliError;

/// Reads CSV records, one point per record, every field a feature except
/// the client column and the record id column (both kept verbatim: a name
/// or id with whitespace at either end is refused, never trimmed, so that
/// `" A"` and `"A"` are not silently one client). Spaces around a number
/// are allowed; blank lines are skipped.
///
/// # Errors
///
/// [`CliError::CsvSyntax`], [`CliError::RaggedRow`], [`CliError::BadField`]
/// (naming line and column) for a field that is not a finite number, or a
/// client name or record id a store cannot keep (empty, over 256 bytes, a
/// control character), [`CliError::DuplicateRecordId`],
/// [`CliError::ClientColumnOutOfRange`], [`CliError::IdColumn`] and
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
    if opts.id_column.is_some() && opts.id_column == opts.client_column {
        return Err(CliError::IdColumn {
            column: opts.id_column.unwrap_or(0),
            reason: "is the client column".into(),
        });
    }
    // The whole input in memory, so that line numbers can be computed from
    // byte offsets: the reader's own line count points at the blank lines
    // it skips before a record, not at the record.
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(|e| CliError::Io {
        path: "<input>".into(),
        message: e.to_string(),
    })?;
    let lines = Lines::of(&bytes);
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .delimiter(delimiter)
        .trim(csv::Trim::None)
        .from_reader(&bytes[..]);
    let mut record = csv::StringRecord::new();
    let mut rows = Rows::new(opts);
    while rdr
        .read_record(&mut record)
        .map_err(|e| CliError::CsvSyntax {
            line: e.position().map_or(0, csv::Position::line),
            message: e.to_string(),
        })?
    {
        if !record.iter().all(|f| f.trim().is_empty()) {
            rows.take(&record, lines.line_of(record.position()))?;
        }
    }
    rows.finish()
}

/// Where the lines of the input start: a record's line from its byte
/// offset, past the line breaks the reader skipped before it.
struct Lines<'a> {
    bytes: &'a [u8],
    newlines: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn of(bytes: &'a [u8]) -> Self {
        let newlines = (bytes.iter().enumerate())
            .filter(|&(_, &b)| b == b'\n')
            .map(|(i, _)| i)
            .collect();
        Self { bytes, newlines }
    }

    /// The 1-based line of the record at `pos`.
    fn line_of(&self, pos: Option<&csv::Position>) -> u64 {
        let start = pos.map_or(0, |p| usize::try_from(p.byte()).unwrap_or(usize::MAX));
        let skip = self.bytes.get(start..).map_or(0, |rest| {
            rest.iter()
                .take_while(|&&b| b == b'\n' || b == b'\r')
                .count()
        });
        let first = start.saturating_add(skip);
        (self.newlines.partition_point(|&p| p < first) as u64).saturating_add(1)
    }
}

/// The records read so far: their coordinates, clients and ids, the
/// width every record must have, and whether a header was skipped.
struct Rows<'o> {
    opts: &'o LoadOptions,
    coords: Vec<f64>,
    clients: ClientIndex,
    ids: IdIndex,
    width: Option<usize>,
    first: bool,
    header_skipped: bool,
}

impl<'o> Rows<'o> {
    fn new(opts: &'o LoadOptions) -> Self {
        Self {
            opts,
            coords: Vec::new(),
            clients: ClientIndex::default(),
            ids: IdIndex::default(),
            width: None,
            first: true,
            header_skipped: false,
        }
    }

    fn is_feature(&self, col: usize) -> bool {
        self.opts.client_column != Some(col) && self.opts.id_column != Some(col)
    }

    /// One non-blank record, on line `line`.
    fn take(&mut self, record: &csv::StringRecord, line: u64) -> Result<(), CliError> {
        self.check_width(record.len(), line)?;
        if std::mem::take(&mut self.first) && self.is_header(record) {
            self.header_skipped = true;
            return Ok(());
        }
        for (column, field) in record.iter().enumerate() {
            let at = At { line, column };
            if self.opts.client_column == Some(column) {
                Verbatim::ClientName.check(field, at)?;
                self.clients.push(field, at)?;
            } else if self.opts.id_column == Some(column) {
                Verbatim::RecordId.check(field, at)?;
                self.ids.push(field, at)?;
            } else {
                let value = coordinate(field, at, self.opts)?;
                self.coords.push(value);
            }
        }
        Ok(())
    }

    /// The client and id columns exist, and every record is as wide as
    /// the first.
    fn check_width(&mut self, columns: usize, line: u64) -> Result<(), CliError> {
        if let Some(c) = self.opts.client_column
            && c >= columns
        {
            return Err(CliError::ClientColumnOutOfRange { column: c, columns });
        }
        if let Some(c) = self.opts.id_column
            && c >= columns
        {
            return Err(CliError::IdColumn {
                column: c,
                reason: format!(
                    "does not exist: the data has {columns} column{}",
                    if columns == 1 { "" } else { "s" }
                ),
            });
        }
        match self.width {
            None => self.width = Some(columns),
            Some(w) if w != columns => {
                return Err(CliError::RaggedRow {
                    line,
                    expected: w,
                    found: columns,
                });
            }
            Some(_) => {}
        }
        Ok(())
    }

    /// Whether the first record is a header: as the options say, or
    /// (auto) when none of its feature fields is a number.
    fn is_header(&self, record: &csv::StringRecord) -> bool {
        match self.opts.header {
            Header::Present => true,
            Header::Absent => false,
            Header::Auto => !record
                .iter()
                .enumerate()
                .any(|(c, f)| self.is_feature(c) && f.trim().parse::<f64>().is_ok()),
        }
    }

    /// The table of the records read.
    fn finish(self) -> Result<Table, CliError> {
        let opts = self.opts;
        let columns = self.width.ok_or(CliError::NoData(
            "the file has no data rows (it is empty or blank)",
        ))?;
        let dim = columns
            .saturating_sub(usize::from(opts.client_column.is_some()))
            .saturating_sub(usize::from(opts.id_column.is_some()));
        if dim == 0 {
            return Err(CliError::NoData(
                "the data has no feature columns (only the client and id columns)",
            ));
        }
        let n = self.coords.len().checked_div(dim).unwrap_or(0);
        if n == 0 {
            return Err(CliError::NoData(if self.header_skipped {
                "the file has only a header line, no data rows"
            } else {
                "the data has no points"
            }));
        }
        let points = DMatrix::from_vec(dim, n, self.coords);
        check_points(&points)?;
        Ok(Table {
            points,
            clients: opts.client_column.map(|_| self.clients.of_point),
            client_names: self.clients.names,
            ids: opts.id_column.map(|_| self.ids.ids),
        })
    }
}

/// The verbatim fields of a record: its client's name and its id.
#[derive(Clone, Copy)]
enum Verbatim {
    ClientName,
    RecordId,
}

impl Verbatim {
    /// `field` as this kind of name: kept as written, so neither empty
    /// nor padded with whitespace.
    fn check(self, field: &str, at: At) -> Result<(), CliError> {
        let (empty, padding) = match self {
            Self::ClientName => (
                "is an empty client name",
                "is a client name with whitespace at either end (names are kept as \
                 written, and a store takes none that begins or ends with whitespace)",
            ),
            Self::RecordId => (
                "is an empty record id",
                "is a record id with whitespace at either end (ids are kept as written, \
                 and a store takes none that begins or ends with whitespace)",
            ),
        };
        if field.is_empty() {
            return Err(CliError::BadField {
                line: at.line,
                column: at.column,
                value: field.to_string(),
                reason: empty,
            });
        }
        padded(field, at, padding)
    }
}

/// A feature field as a coordinate: a finite number of sane magnitude.
fn coordinate(field: &str, at: At, opts: &LoadOptions) -> Result<f64, CliError> {
    let At { line, column } = at;
    let value = field.trim().parse::<f64>().map_err(|_| CliError::BadField {
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
    Ok(value)
}

/// A name or id with whitespace at either end: refused with its place.
fn padded(field: &str, at: At, reason: &'static str) -> Result<(), CliError> {
    if field.trim() == field {
        return Ok(());
    }
    Err(CliError::BadField {
        line: at.line,
        column: at.column,
        value: field.to_string(),
        reason,
    })
}

#[cfg(test)]
// Values written as decimal literals and read back are exact.
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn padded_names_and_ids_are_refused_not_trimmed() {
        let clients = LoadOptions {
            client_column: Some(0),
            ..LoadOptions::default()
        };
        // Three strings that trimming would make one client.
        let err = csv("A,1\n\" A\",2\nA ,3\n", clients).unwrap_err();
        assert!(
            matches!(&err, CliError::BadField { line: 2, column: 0, value, .. } if value == " A"),
            "{err}"
        );
        let ids = LoadOptions {
            id_column: Some(1),
            ..LoadOptions::default()
        };
        assert!(matches!(
            csv("1,P-1\n2,P-2 \n", ids),
            Err(CliError::BadField {
                line: 2,
                column: 1,
                ..
            })
        ));
        // Spaces around numbers are fine, and names keep inner spaces.
        let t = csv("H\u{f4}pital Nord, 0.5 , 1\n", clients).unwrap();
        assert_eq!(t.dim(), 2);
    }

    #[test]
    fn record_ids_are_kept_as_written_and_unique() {
        let o = LoadOptions {
            id_column: Some(0),
            ..LoadOptions::default()
        };
        let t = csv("id,x\nP-001,0.5\n17,1\n007,2\n", o).unwrap();
        assert_eq!(t.ids().unwrap(), &["P-001", "17", "007"]);
        assert_eq!(t.dim(), 1);
        let err = csv("a,1\nb,2\na,3\n", o).unwrap_err();
        assert!(
            matches!(&err, CliError::DuplicateRecordId { line: 3, first: 1, value } if value == "a"),
            "{err}"
        );
        let long = format!("{},1\n", "x".repeat(300));
        assert!(matches!(
            csv(&long, o),
            Err(CliError::BadField {
                line: 1,
                column: 0,
                reason: "is longer than 256 bytes",
                ..
            })
        ));
        assert!(matches!(
            csv("1,2\n,3\n", o),
            Err(CliError::BadField {
                line: 2,
                reason: "is an empty record id",
                ..
            })
        ));
        let same = LoadOptions {
            id_column: Some(1),
            client_column: Some(1),
            ..LoadOptions::default()
        };
        assert!(matches!(
            csv("1,2,3\n", same),
            Err(CliError::IdColumn { .. })
        ));
        let out = LoadOptions {
            id_column: Some(4),
            ..LoadOptions::default()
        };
        assert!(matches!(
            csv("1,2\n", out),
            Err(CliError::IdColumn { column: 4, .. })
        ));
    }

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
        // A short row says so, in words.
        let err = csv("1,2,3\n4,5,6\n7\n", o).unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 3 has 1 field, expected 3 (as the first record)"
        );
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
        // Names verbatim: "05" and "5" are two clients.
        let t = csv("1,05,2\n3,5,4\n", o).unwrap();
        assert_eq!(t.client_names(), &["05", "5"]);
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
            id_column: None,
        };
        assert!(matches!(
            csv("a\nb\n", only_clients),
            Err(CliError::NoData(_))
        ));
    }
}
