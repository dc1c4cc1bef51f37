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
        .trim(csv::Trim::None)
        .from_reader(&bytes[..]);
    let mut record = csv::StringRecord::new();
    let mut coords: Vec<f64> = Vec::new();
    let mut clients = ClientIndex::default();
    let mut ids = IdIndex::default();
    if opts.id_column.is_some() && opts.id_column == opts.client_column {
        return Err(CliError::IdColumn {
            column: opts.id_column.unwrap_or(0),
            reason: "is the client column".into(),
        });
    }
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
        if record.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let columns = record.len();
        if let Some(c) = opts.client_column
            && c >= columns
        {
            return Err(CliError::ClientColumnOutOfRange { column: c, columns });
        }
        if let Some(c) = opts.id_column
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
        let is_feature =
            |col: usize| opts.client_column != Some(col) && opts.id_column != Some(col);
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
                        .filter(|(_, f)| f.trim().parse::<f64>().is_ok())
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
            let at = At { line, column };
            if opts.client_column == Some(column) {
                if field.is_empty() {
                    return Err(CliError::BadField {
                        line,
                        column,
                        value: field.to_string(),
                        reason: "is an empty client name",
                    });
                }
                padded(
                    field,
                    at,
                    "is a client name with whitespace at either end (names are kept as \
                     written, and a store takes none that begins or ends with whitespace)",
                )?;
                clients.push(field, at)?;
                continue;
            }
            if opts.id_column == Some(column) {
                if field.is_empty() {
                    return Err(CliError::BadField {
                        line,
                        column,
                        value: field.to_string(),
                        reason: "is an empty record id",
                    });
                }
                padded(
                    field,
                    at,
                    "is a record id with whitespace at either end (ids are kept as written, \
                     and a store takes none that begins or ends with whitespace)",
                )?;
                ids.push(field, at)?;
                continue;
            }
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
            coords.push(value);
        }
    }
    let columns = width.ok_or(CliError::NoData(
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
        ids: opts.id_column.map(|_| ids.ids),
    })
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
