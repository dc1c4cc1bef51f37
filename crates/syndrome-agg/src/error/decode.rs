//! Decoder rejections: one group of [`SketchError`](crate::SketchError).

use thiserror::Error;

/// Decoder rejections: the decoder contract of the threat model (docs/threat-model.md §3). A decoder returns the exact vector or one of these, never a wrong vector.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// Decoder: a syndrome vector or frame of the wrong length.
    #[error("wrong length: expected {expected}, found {found}")]
    WrongLength {
        /// The length the parameters require.
        expected: usize,
        /// The length that was given.
        found: usize,
    },
    /// Decoder or parser: an element encoding that is not canonical (not
    /// below the modulus).
    #[error("non-canonical element encoding")]
    NonCanonical,
    /// Decoder: the syndromes need more than `capacity` keys (over
    /// capacity).
    #[error("too many keys: capacity {capacity}, the syndromes need at least {needed}")]
    TooManyKeys {
        /// The capacity t.
        capacity: usize,
        /// A lower bound on the number of keys the syndromes need.
        needed: usize,
    },
    /// Decoder: the locator polynomial does not split into linear factors
    /// over the field (the syndromes are not those of at most t keys).
    #[error("locator polynomial does not split into distinct linear factors")]
    LocatorDoesNotSplit,
    /// Decoder: the locator polynomial has a repeated root.
    #[error("locator polynomial has a repeated root")]
    RepeatedRoot,
    /// Decoder: a located key lies outside `[1, N]`.
    #[error("decoded key {key} outside the key domain [1, {domain}]")]
    KeyOutOfRange {
        /// The decoded key, in decimal.
        key: String,
        /// The key domain `N`, in decimal.
        domain: String,
    },
    /// Decoder: a decoded count is zero, or outside what the count policy
    /// allows.
    #[error("decoded count {count} for key {key} is not allowed: {reason}")]
    CountOutOfRange {
        /// The key, in decimal.
        key: String,
        /// The count (canonical or centered representative), in decimal.
        count: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// Decoder: the candidate vector does not re-encode to the received
    /// syndromes (the first mismatching index is given, 1-based).
    #[error("re-encoded syndromes differ from the received ones at index {index}")]
    CheckMismatch {
        /// The first syndrome index (1-based) that differs.
        index: usize,
    },
    /// Decoder: randomized root finding gave up after its fixed budget.
    #[error("root finding exhausted its budget of {attempts} attempts")]
    Timeout {
        /// The attempt budget.
        attempts: u32,
    },
    /// Wide keys: two different keys given to one encoder hash to the same
    /// field element, or a decoded payload does not hash back to its
    /// locator (a collision of the keyed hash, or inconsistent syndromes).
    #[error("wide-key checksum failed: {reason}")]
    HashMismatch {
        /// Which check failed.
        reason: &'static str,
    },
    /// Partitioned sketches: bucket `bucket` did not decode; `error` says
    /// why. An overflowing bucket (more keys hashed to it than its
    /// capacity) is `error` =
    /// [`TooManyKeys`](Self::TooManyKeys) when it overflows by at most
    /// `r`, and some rejection in any case, never a wrong answer.
    #[error("bucket {bucket}: {error}")]
    Bucket {
        /// The index of the bucket, `0..G`.
        bucket: usize,
        /// The bucket's own decoder rejection.
        error: Box<Self>,
    },
    /// Partitioned sketches: a bucket decoded to a key that the public
    /// bucket hash sends to another bucket (a crafted or inconsistent
    /// aggregate).
    #[error("decoded key {key} hashes to bucket {hashed_to}")]
    KeyInWrongBucket {
        /// The key, in decimal.
        key: String,
        /// The bucket the key's hash names.
        hashed_to: usize,
    },
}
