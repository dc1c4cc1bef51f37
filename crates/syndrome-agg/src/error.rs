//! The one error type of this crate, grouped by concern: parameters,
//! decoding, wire format, protocol. Each group is an enum of its own leaf
//! module, so that every module can name its errors without importing the
//! rest of the crate; the wire and protocol groups are those of
//! `masked-sum`, whose masks and protocol this crate's sketches travel by.

mod decode;
mod params;

use field::FieldError;
use masked_sum::SumError;
use thiserror::Error;

pub use decode::DecodeError;
pub use masked_sum::{ProtocolError, WireError};
pub use params::ParamsError;

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

/// A masked sum's error as this crate groups it: each of
/// [`SumError`]'s variants is the one of this crate's groups that names
/// the same failure, so a caller matches one type whichever layer
/// refused.
impl From<SumError> for SketchError {
    fn from(e: SumError) -> Self {
        match e {
            SumError::InvalidParams { reason } => ParamsError::InvalidParams { reason }.into(),
            SumError::Mismatch { what } => ParamsError::ParamsMismatch { what }.into(),
            SumError::WrongLength { expected, found } => {
                DecodeError::WrongLength { expected, found }.into()
            }
            SumError::NonCanonical => DecodeError::NonCanonical.into(),
            SumError::Wire(w) => Self::Wire(w),
            SumError::Protocol(p) => Self::Protocol(p),
            SumError::Field(f) => Self::Field(f),
            // `SumError` is non-exhaustive: a variant added later keeps its
            // message.
            other => ParamsError::InvalidParams {
                reason: other.to_string(),
            }
            .into(),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Each refusal of a masked sum lands in the group that names the
    /// same failure, with its details.
    #[test]
    fn a_sum_error_keeps_its_meaning_as_a_sketch_error() {
        let cases = [
            (
                SumError::InvalidParams { reason: "r".into() },
                SketchError::Params(ParamsError::InvalidParams { reason: "r".into() }),
            ),
            (
                SumError::Mismatch { what: "w" },
                SketchError::Params(ParamsError::ParamsMismatch { what: "w" }),
            ),
            (
                SumError::WrongLength {
                    expected: 3,
                    found: 2,
                },
                SketchError::Decode(DecodeError::WrongLength {
                    expected: 3,
                    found: 2,
                }),
            ),
            (
                SumError::NonCanonical,
                SketchError::Decode(DecodeError::NonCanonical),
            ),
            (
                SumError::Protocol(ProtocolError::TooFewShares { have: 1, need: 2 }),
                SketchError::Protocol(ProtocolError::TooFewShares { have: 1, need: 2 }),
            ),
            (
                SumError::Wire(WireError::FrameTooLarge { len: 9, max: 8 }),
                SketchError::Wire(WireError::FrameTooLarge { len: 9, max: 8 }),
            ),
        ];
        for (sum, sketch) in cases {
            let text = sum.to_string();
            let converted = SketchError::from(sum);
            assert_eq!(converted, sketch);
            assert_eq!(
                converted.to_string(),
                text.replace("parameters differ", "sketch parameters or fields differ")
            );
        }
    }
}
