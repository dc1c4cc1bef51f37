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
    pub(super) points: DMatrix<f64>,
    pub(super) clients: Option<Vec<usize>>,
    pub(super) client_names: Vec<String>,
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

/// Maps client names to dense indices in order of first appearance.
#[derive(Default)]
pub(super) struct ClientIndex {
    index: HashMap<String, usize>,
    pub(super) names: Vec<String>,
    pub(super) of_point: Vec<usize>,
}

impl ClientIndex {
    pub(super) fn push(&mut self, name: &str) {
        let next = self.names.len();
        let id = *self.index.entry(name.to_string()).or_insert(next);
        if id == next {
            self.names.push(name.to_string());
        }
        self.of_point.push(id);
    }
}
