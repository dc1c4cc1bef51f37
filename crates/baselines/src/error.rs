//! The one error type of the crate.

use seeding::SeedingError;

/// Everything the baselines can fail with. Every variant carries what a
/// caller needs to find the offending input.
///
/// # Example
///
/// ```
/// use baselines::{BaselineError, KFedParams};
///
/// let err = KFedParams::new(0, 2).validate().unwrap_err();
/// assert!(matches!(err, BaselineError::InvalidParameter { name: "K", .. }));
/// assert_eq!(err.to_string(), "invalid K = 0: must be at least 1");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BaselineError {
    /// A parameter is out of its range, or the data does not fit the
    /// parameters.
    #[error("invalid {name} = {value}: {reason}")]
    InvalidParameter {
        /// The parameter.
        name: &'static str,
        /// The value given.
        value: String,
        /// What it must satisfy.
        reason: &'static str,
    },
    /// A client has no points (K-FED needs every client to send centroids).
    #[error("client {client} has no points")]
    EmptyClient {
        /// The client's index.
        client: usize,
    },
    /// Nothing to work on: no point left, or no point named.
    #[error("{0}")]
    NoData(&'static str),
    /// A point id that is not (or no longer) in the model.
    #[error("point {id} is not in the data")]
    UnknownPoint {
        /// The id.
        id: u64,
    },
    /// An error of the clustering library.
    #[error(transparent)]
    Seeding(#[from] SeedingError),
}

/// `value` is not at least 1.
pub(crate) fn at_least_one(name: &'static str, value: usize) -> Result<(), BaselineError> {
    if value == 0 {
        return Err(BaselineError::InvalidParameter {
            name,
            value: "0".into(),
            reason: "must be at least 1",
        });
    }
    Ok(())
}
