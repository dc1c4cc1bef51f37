//! The model store from Python: training through `mufc fit`'s own path
//! (so that the model equals the command's on the same records, bit for
//! bit), then forgetting, predicting and verifying on the store.

use std::path::PathBuf;
use std::sync::Mutex;

use clap::Parser;
use mufc_cli::cli::{Cli, Command};
use mufc_cli::commands::{report_json, verification_json};
use mufc_cli::data::Table;
use mufc_store::{RecordId, Store};
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;

use crate::convert::columns;
use crate::errors::{self, ConfigError, DataError, StoreError};

/// Adds the model class.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()
}

/// The centroids (`k x d`) and their weights.
type Centroids<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray1<u64>>);

/// A trained federation in its model store (an SQLite file): the state
/// the Python estimator `MufcKMeans` holds.
#[pyclass(module = "mufc._native", frozen)]
#[derive(Debug)]
pub(crate) struct Model {
    /// The open store; requests are served one at a time.
    store: Mutex<Store>,
}

impl Model {
    fn with<T>(&self, f: impl FnOnce(&mut Store) -> PyResult<T>) -> PyResult<T> {
        let mut store = self
            .store
            .lock()
            .map_err(|_| StoreError::new_err("an earlier request panicked"))?;
        f(&mut store)
    }
}

#[pymethods]
impl Model {
    /// Trains as `mufc fit <options>` would on these records, and writes
    /// the store: `points` is `n x d` (a point a row), `clients[i]` the
    /// client index of row `i`, `ids[i]` its record id (as `mufc fit
    /// --id-column` reads one). Returns the model and `mufc fit --json`'s
    /// report, as JSON text.
    #[staticmethod]
    fn fit(
        py: Python<'_>,
        options: Vec<String>,
        points: PyReadonlyArray2<'_, f64>,
        clients: Vec<usize>,
        ids: Vec<String>,
    ) -> PyResult<(Self, String)> {
        let argv = ["mufc".to_string(), "fit".to_string()]
            .into_iter()
            .chain(options);
        let cli = Cli::try_parse_from(argv).map_err(|e| ConfigError::new_err(e.to_string()))?;
        let Command::Fit(args) = cli.command else {
            return Err(ConfigError::new_err("not the options of `mufc fit`"));
        };
        let matrix = columns(&points);
        let (report, store) = py
            .detach(move || {
                let table = Table::with_clients(matrix, clients)?.with_ids(ids)?;
                mufc_cli::commands::fit_table(&args, table)
            })
            .map_err(errors::cli)?;
        Ok((
            Self {
                store: Mutex::new(store),
            },
            report.json.to_string(),
        ))
    }

    /// Opens (and checks) the store at `path`.
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let store = py.detach(|| Store::open(path)).map_err(errors::store)?;
        Ok(Self {
            store: Mutex::new(store),
        })
    }

    /// The store's file.
    #[getter]
    fn path(&self) -> PyResult<PathBuf> {
        self.with(|s| Ok(s.path().to_path_buf()))
    }

    /// The records the store holds.
    #[getter]
    fn num_points(&self) -> PyResult<usize> {
        self.with(|s| Ok(s.num_points()))
    }

    /// The dimension of the records.
    #[getter]
    fn dim(&self) -> PyResult<usize> {
        self.with(|s| Ok(s.dim()))
    }

    /// The model version (1 after training, one more per applied round).
    #[getter]
    fn model_version(&self) -> PyResult<u64> {
        self.with(|s| Ok(s.model_version()))
    }

    /// The server's centroids (`k x d`, in the data's coordinates) and
    /// their weights.
    fn centroids<'py>(&self, py: Python<'py>) -> PyResult<Centroids<'py>> {
        let (centroids, dim) = self.with(|s| Ok((s.centroids(), s.dim())))?;
        let weights: Vec<u64> = centroids.iter().map(|c| c.weight).collect();
        let flat: Vec<f64> = centroids.into_iter().flat_map(|c| c.coords).collect();
        let rows = weights.len();
        let array = Array2::from_shape_vec((rows, dim), flat)
            .map_err(|e| StoreError::new_err(format!("centroids of the wrong shape: {e}")))?;
        Ok((array.into_pyarray(py), weights.into_pyarray(py)))
    }

    /// The index of the nearest centroid of each row of `points` (`n x d`,
    /// in the data's coordinates).
    fn predict<'py>(
        &self,
        py: Python<'py>,
        points: PyReadonlyArray2<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<i64>>> {
        let matrix = columns(&points);
        let labels = self.with(|s| s.predict(&matrix).map_err(errors::store))?;
        let labels: Vec<i64> = labels
            .into_iter()
            .map(|l| i64::try_from(l).unwrap_or(i64::MAX))
            .collect();
        Ok(labels.into_pyarray(py))
    }

    /// Forgets the records `ids` (one request, in one transaction) and
    /// returns its report as JSON text.
    fn forget(&self, py: Python<'_>, ids: Vec<String>) -> PyResult<String> {
        let ids = ids
            .iter()
            .map(|id| RecordId::parse(id).map_err(|e| DataError::new_err(format!("{id:?}: {e}"))))
            .collect::<PyResult<Vec<_>>>()?;
        let json = self.with(|s| {
            let needed = s.config().min_updating_clients();
            let report = py.detach(|| s.forget(&ids)).map_err(errors::store)?;
            Ok(report_json(&report, needed).to_string())
        })?;
        Ok(json)
    }

    /// Runs the model update of every waiting request now, whatever the
    /// privacy policy says (`mufc forget --flush`); the report as JSON
    /// text, or `None` when nothing waited.
    fn flush(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.with(|s| {
            let needed = s.config().min_updating_clients();
            let report = py.detach(|| s.flush()).map_err(errors::store)?;
            Ok(report.map(|r| report_json(&r, needed).to_string()))
        })
    }

    /// Retrains from the records the store holds and compares (`mufc
    /// verify`); the evidence as JSON text.
    fn verify(&self, py: Python<'_>) -> PyResult<String> {
        let v = self.with(|s| py.detach(move || s.verify()).map_err(errors::store))?;
        Ok(verification_json(&v).to_string())
    }

    fn __repr__(&self) -> PyResult<String> {
        self.with(|s| {
            Ok(format!(
                "Model(path={:?}, points={}, version={})",
                s.path(),
                s.num_points(),
                s.model_version()
            ))
        })
    }
}
