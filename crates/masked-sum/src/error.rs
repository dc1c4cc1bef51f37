//! The one error type of this crate ([`SumError`]): parameters, lengths
//! and encodings, and the two groups of their own leaf modules, the wire
//! format ([`WireError`]) and the protocol ([`ProtocolError`]).

mod protocol;
mod wire;

use field::FieldError;
use thiserror::Error;

pub use protocol::ProtocolError;
pub use wire::WireError;

/// The result of this crate's operations.
pub type SumResult<T> = Result<T, SumError>;

/// Why a masked sum, a mask or a protocol message was refused. Every
/// refusal is typed; nothing from outside panics.
///
/// # Example
///
/// ```
/// use masked_sum::SumError;
/// use masked_sum::secagg::graph::Neighbourhoods;
///
/// // A client listed twice: no graph.
/// let err = Neighbourhoods::complete([1, 2, 2]).unwrap_err();
/// assert!(matches!(err, SumError::InvalidParams { .. }), "{err}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SumError {
    /// Parameters that cannot work (a threshold above the number of
    /// clients, a vector length of zero, ...).
    #[error("invalid parameters: {reason}")]
    InvalidParams {
        /// What is wrong.
        reason: String,
    },
    /// A message made for other parameters than the receiver's.
    #[error("parameters differ: {what}")]
    Mismatch {
        /// Which parameter.
        what: &'static str,
    },
    /// A vector or a byte string of the wrong length.
    #[error("wrong length: expected {expected}, found {found}")]
    WrongLength {
        /// The length the receiver expects.
        expected: usize,
        /// The length it found.
        found: usize,
    },
    /// An element's encoding is not the canonical one.
    #[error("non-canonical element encoding")]
    NonCanonical,
    /// A frame that does not parse.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A message the protocol refuses.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// The field's own error.
    #[error(transparent)]
    Field(#[from] FieldError),
}

pub(crate) fn check_len(expected: usize, found: usize) -> SumResult<()> {
    if found == expected {
        Ok(())
    } else {
        Err(SumError::WrongLength { expected, found })
    }
}

pub(crate) fn invalid(reason: impl Into<String>) -> SumError {
    SumError::InvalidParams {
        reason: reason.into(),
    }
}
