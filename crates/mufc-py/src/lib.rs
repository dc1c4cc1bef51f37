//! The `mufc` Python package's native module (`mufc._native`): the model
//! store and the estimator's training (`model`), and sparse secure
//! aggregation on its own (`agg`). The package's Python layer
//! (`python/mufc`) builds the scikit-learn-style estimator on them; the
//! Python tests (`pytests/`, pytest) are this crate's tests.
//!
//! Every error of the Rust crates reaches Python as an exception of
//! `errors`' hierarchy, with the Rust error's message.

use pyo3::prelude::*;

mod agg;
mod convert;
mod errors;
mod model;
mod parties;
mod secagg;

/// The native module: its classes, functions and exceptions.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    errors::register(m)?;
    model::register(m)?;
    agg::register(m)?;
    parties::register(m)?;
    secagg::register(m)?;
    Ok(())
}
