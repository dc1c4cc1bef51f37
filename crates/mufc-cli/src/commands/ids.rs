//! The record id column of `mufc fit --id-column`: taken out of the
//! loaded table's features and checked (non-negative integers, distinct).

use std::collections::HashMap;
use std::path::Path;

use crate::CliError;
use crate::data::Table;

/// The largest id read exactly from a floating-point field.
const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

/// Takes file column `col` (0-based, the client column `client_column`
/// counted) out of `table`'s features; returns the table without it and
/// the id of each point.
///
/// # Errors
///
/// [`CliError::BadRecordId`] naming the column or the data rows.
pub(crate) fn take_id_column(
    table: Table,
    col: usize,
    client_column: Option<usize>,
    path: &Path,
) -> Result<(Table, Vec<u64>), CliError> {
    let bad = |message: String| CliError::BadRecordId {
        path: path.to_path_buf(),
        message,
    };
    let columns = table.dim() + usize::from(client_column.is_some());
    if client_column == Some(col) {
        return Err(bad(format!(
            "--id-column {col} is the client column (--client-column {col})"
        )));
    }
    if col >= columns {
        return Err(bad(format!(
            "--id-column {col} (counting from 0) does not exist: the data has {columns} columns"
        )));
    }
    // The feature row of file column `col`.
    let row = match client_column {
        Some(c) if c < col => col - 1,
        _ => col,
    };
    if table.dim() < 2 {
        return Err(bad(format!("--id-column {col} leaves no feature column")));
    }
    let mut ids = Vec::with_capacity(table.len());
    let mut first_row: HashMap<u64, usize> = HashMap::new();
    for (r, &v) in table.points().row(row).iter().enumerate() {
        if !((0.0..=MAX_EXACT).contains(&v) && v.fract() == 0.0) {
            return Err(bad(format!(
                "data row {r} (counting from 0, header excluded): record id {v} in column {col} \
                 is not a non-negative integer up to 2^53"
            )));
        }
        // Exact: a non-negative integer up to 2^53.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let id = v as u64;
        if let Some(prev) = first_row.insert(id, r) {
            return Err(bad(format!(
                "record id {id} (column {col}) occurs twice: data rows {prev} and {r} (counting \
                 from 0, header excluded)"
            )));
        }
        ids.push(id);
    }
    let points = table.points().clone().remove_row(row);
    let t = match table.clients() {
        Some(c) => Table::with_clients(points, c.to_vec())?,
        None => Table::new(points)?,
    };
    Ok((t, ids))
}
