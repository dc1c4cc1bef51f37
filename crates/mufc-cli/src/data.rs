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

// The parts: the options and the table every reader fills, one reader
// per format, and `load`, which picks the reader by the file's extension.
// This file only declares and re-exports them, so no part depends on it.
mod delimited;
mod load;
mod npy;
mod options;
mod table;

pub use delimited::read_csv;
pub use load::load;
pub use npy::read_npy;
pub use options::{Header, LoadOptions};
pub use table::Table;
