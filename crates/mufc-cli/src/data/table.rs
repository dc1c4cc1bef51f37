//! The loaded data set ([`Table`]): the points, the client of each point
//! and the clients' names, with the checks every table passes and the
//! numbering of client names (`ClientIndex`) that the readers share.

use std::collections::HashMap;

use nalgebra::DMatrix;
use seeding::Dataset;

use crate::CliError;

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
/// let csv = "client,id,x,y\nalice,P-1,0.5,1\nbob,P-2,2,3\nalice,007,4,5\n";
/// let opts = LoadOptions { header: Header::Auto, client_column: Some(0), id_column: Some(1) };
/// let t = read_csv(csv.as_bytes(), b',', &opts)?;
/// assert_eq!((t.dim(), t.len()), (2, 3));
/// assert_eq!(t.clients(), Some(&[0, 1, 0][..]));
/// assert_eq!(t.client_names(), &["alice".to_string(), "bob".to_string()]);
/// // Record ids as written.
/// assert_eq!(t.ids().unwrap(), &["P-1".to_string(), "P-2".into(), "007".into()]);
/// assert_eq!(t.points()[(1, 2)], 5.0);
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    pub(super) points: DMatrix<f64>,
    pub(super) clients: Option<Vec<usize>>,
    pub(super) client_names: Vec<String>,
    pub(super) ids: Option<Vec<String>>,
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
            ids: None,
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
            ids: None,
        })
    }

    /// The same table with a record id for every point, kept as written
    /// (a file's id column; `mufc fit` and the store check each id).
    ///
    /// # Errors
    ///
    /// [`CliError::InvalidParameter`] when there is not one id per point.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc_cli::data::Table;
    /// use nalgebra::DMatrix;
    ///
    /// let t = Table::new(DMatrix::from_element(1, 2, 0.25))?;
    /// let t = t.with_ids(vec!["P-1".into(), "P-2".into()])?;
    /// assert_eq!(t.ids(), Some(&["P-1".to_string(), "P-2".to_string()][..]));
    /// # Ok::<(), mufc_cli::CliError>(())
    /// ```
    pub fn with_ids(self, ids: Vec<String>) -> Result<Self, CliError> {
        if ids.len() != self.points.ncols() {
            return Err(CliError::InvalidParameter {
                name: "record ids",
                value: ids.len().to_string(),
                reason: "need one record id per point",
            });
        }
        Ok(Self {
            ids: Some(ids),
            ..self
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

    /// The record id of each point as written, when the input had an id
    /// column.
    pub fn ids(&self) -> Option<&[String]> {
        self.ids.as_deref()
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

pub(super) fn check_points(points: &DMatrix<f64>) -> Result<(), CliError> {
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

pub(super) fn valid_coordinate(x: f64) -> bool {
    x.is_finite() && x.abs() <= Dataset::MAX_ABS_COORD
}

/// Where a field is: a CSV line or a `.npy` row, and its column.
#[derive(Clone, Copy, Debug)]
pub(super) struct At {
    pub(super) line: u64,
    pub(super) column: usize,
}

/// A name the store cannot keep, as a bad field.
fn bad_name(at: At, value: &str, e: mufc_store::InvalidName) -> CliError {
    CliError::BadField {
        line: at.line,
        column: at.column,
        value: value.to_string(),
        reason: e.reason,
    }
}

/// Maps client names (kept verbatim) to dense indices in order of first
/// appearance.
#[derive(Default)]
pub(super) struct ClientIndex {
    index: HashMap<String, usize>,
    pub(super) names: Vec<String>,
    pub(super) of_point: Vec<usize>,
}

impl ClientIndex {
    /// The client of the next point: `name`, at `at`.
    pub(super) fn push(&mut self, name: &str, at: At) -> Result<(), CliError> {
        if let Some(&id) = self.index.get(name) {
            self.of_point.push(id);
            return Ok(());
        }
        mufc_store::ClientName::new(name).map_err(|e| bad_name(at, name, e))?;
        let id = self.names.len();
        self.index.insert(name.to_string(), id);
        self.names.push(name.to_string());
        self.of_point.push(id);
        Ok(())
    }
}

/// The record ids of the points, as written, each checked to be one a
/// store keeps and to occur once.
#[derive(Default)]
pub(super) struct IdIndex {
    first: HashMap<String, u64>,
    pub(super) ids: Vec<String>,
}

impl IdIndex {
    /// The id of the next point: `id`, at `at`.
    pub(super) fn push(&mut self, id: &str, at: At) -> Result<(), CliError> {
        mufc_store::RecordId::parse(id).map_err(|e| bad_name(at, id, e))?;
        if let Some(&first) = self.first.get(id) {
            return Err(CliError::DuplicateRecordId {
                line: at.line,
                first,
                value: id.to_string(),
            });
        }
        self.first.insert(id.to_string(), at.line);
        self.ids.push(id.to_string());
        Ok(())
    }
}
