//! The one error type of this crate, grouped by concern: parameters,
//! decoding, wire format, protocol. Each group is an enum of its own leaf
//! module, so that every module can name its errors without importing the
//! rest of the crate.

mod decode;
mod params;
mod protocol;
mod wire;

use field::FieldError;
use thiserror::Error;

pub use decode::DecodeError;
pub use params::ParamsError;
pub use protocol::ProtocolError;
pub use wire::WireError;

/// The result type of this crate.
pub type SketchResult<T> = Result<T, SketchError>;

/// Everything that can go wrong in `syndrome-agg`, by concern: invalid
/// parameters (and keys or counts they do not allow), decoder rejections,
/// wire-format errors, and masking or protocol errors. `?` converts each
/// group into this type.
///
/// The decoder group follows the decoder contract of the threat model
/// ([`DecodeError`]): a decoder returns the exact vector or one of these,
/// never a wrong vector.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::{ParamsError, SketchError, SketchParams};
///
/// // Key 0 is invisible in the power sums, so the key domain starts at 1;
/// // a domain of size 0 is refused.
/// let err = SketchParams::new(4, 0u32).validate(Mersenne61).unwrap_err();
/// assert!(matches!(err, SketchError::Params(ParamsError::InvalidParams { .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SketchError {
    /// Parameters that cannot work, or a key, count or sketch they do not
    /// allow.
    #[error(transparent)]
    Params(#[from] ParamsError),
    /// A decoder rejection (or a vector of the wrong length or encoding).
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Bytes that are not a frame this build reads.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A masking, aggregation or secure-aggregation protocol error.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// An error of the field algorithms that has no more specific meaning
    /// here.
    #[error(transparent)]
    Field(#[from] FieldError),
}

/// [`DecodeError::WrongLength`] unless `found == expected`: every vector
/// from outside is checked against the length its parameters require.
pub(crate) fn check_len(expected: usize, found: usize) -> SketchResult<()> {
    if found == expected {
        Ok(())
    } else {
        Err(DecodeError::WrongLength { expected, found }.into())
    }
}

pub(crate) fn invalid(reason: impl Into<String>) -> SketchError {
    ParamsError::InvalidParams {
        reason: reason.into(),
    }
    .into()
}
