//! Conversions at the edge: numpy arrays of points (one per row, as
//! scikit-learn has them) to the d x n matrices of the Rust crates (one
//! point per column), record ids, Python integers of any size.

use nalgebra::DMatrix;
use num_bigint::{BigInt, BigUint};
use numpy::PyReadonlyArray2;
use pyo3::prelude::*;
use pyo3::types::PyInt;

use crate::errors::DataError;

/// The points of an `n x d` array as the columns of a `d x n` matrix.
pub(crate) fn columns(points: &PyReadonlyArray2<'_, f64>) -> DMatrix<f64> {
    let a = points.as_array();
    let (n, d) = a.dim();
    DMatrix::from_fn(d, n, |r, c| a[[c, r]])
}

/// A Python integer (of any size) as a natural number.
pub(crate) fn natural(x: &Bound<'_, PyAny>) -> PyResult<BigUint> {
    let big = integer(x)?;
    big.to_biguint()
        .ok_or_else(|| DataError::new_err(format!("{big} is negative: a key is a natural number")))
}

/// A Python integer (of any size).
pub(crate) fn integer(x: &Bound<'_, PyAny>) -> PyResult<BigInt> {
    if let Ok(v) = x.extract::<i64>() {
        return Ok(v.into());
    }
    let int = x.cast::<PyInt>().map_err(|_| {
        DataError::new_err(format!(
            "expected an integer, got {}",
            x.get_type()
                .name()
                .map_or_else(|_| "?".into(), |n| n.to_string())
        ))
    })?;
    let text = int.str()?.to_string();
    text.parse::<BigInt>()
        .map_err(|e| DataError::new_err(format!("{text}: {e}")))
}

/// A natural number or integer as a Python integer.
pub(crate) fn to_int<'py>(py: Python<'py>, x: &impl ToString) -> PyResult<Bound<'py, PyAny>> {
    py.get_type::<PyInt>().call1((x.to_string(),))
}
