//! Wire-format errors: one group of [`SumError`](crate::SumError).

use thiserror::Error;

/// Wire-format errors: bytes that are not a frame this build reads.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WireError {
    /// Wire format: a frame larger than the configured cap (checked before
    /// decoding anything).
    #[error("frame of {len} bytes exceeds the cap of {max} bytes")]
    FrameTooLarge {
        /// The frame's length.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// Wire format: the bytes are not a valid frame.
    #[error("malformed frame: {reason}")]
    Malformed {
        /// What the parser found.
        reason: String,
    },
    /// Wire format: an unsupported format version.
    #[error("unsupported wire version {found} (this build reads {supported})")]
    UnsupportedVersion {
        /// The version in the frame.
        found: u16,
        /// The version this build reads.
        supported: u16,
    },
}
