//! Parameters that cannot work, and keys, counts or sketches the parameters do not allow: one group of [`SketchError`](crate::SketchError).

use thiserror::Error;

/// Parameters that cannot work, and keys, counts or sketches the parameters do not allow.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ParamsError {
    /// Parameters that cannot work (empty key domain, zero capacity, a
    /// field too small for the key domain or the count bound, ...).
    #[error("invalid parameters: {reason}")]
    InvalidParams {
        /// What is wrong, in words.
        reason: String,
    },
    /// A field that cannot hold the key domain: keys `1..=N` need `p > N`.
    #[error(
        "field too small: modulus of {modulus_bits} bits, key domain needs more than {needed_bits} bits"
    )]
    FieldTooSmall {
        /// Bits of the field's modulus.
        modulus_bits: u64,
        /// Bits of the bound the modulus must exceed.
        needed_bits: u64,
    },
    /// Key 0, or a key above the key domain `N`, given to an encoder.
    #[error("key {key} outside the key domain [1, {domain}]")]
    KeyOutOfDomain {
        /// The key, in decimal.
        key: String,
        /// The key domain `N`, in decimal.
        domain: String,
    },
    /// A count outside what the count policy allows, given to an encoder
    /// or helper.
    #[error("count {count} not allowed by the count policy: {reason}")]
    InvalidCount {
        /// The count, in decimal.
        count: String,
        /// The policy's rule.
        reason: &'static str,
    },
    /// Two sketches (or a sketch and a message) with different fields or
    /// parameters cannot be added (minisketch's merge rule).
    #[error("sketch parameters or fields differ: {what}")]
    ParamsMismatch {
        /// Which parameter differs.
        what: &'static str,
    },
    /// Wide keys: a key longer than the configured maximum.
    #[error("key of {len} bytes exceeds the maximum of {max} bytes")]
    KeyTooLong {
        /// The key's length.
        len: usize,
        /// The maximum.
        max: usize,
    },
}
