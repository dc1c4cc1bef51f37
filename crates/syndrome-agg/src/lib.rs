#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod aggregate;
mod decode;
mod error;
mod integer;
pub mod masking;
mod params;
pub mod secagg;
mod sketch;
pub mod wire;

pub use aggregate::{Aggregator, MaskedSketch};
pub use error::SketchError;
pub use integer::{DEFAULT_MAX_INTEGER_BITS, IntegerParams, IntegerRing, ValidIntegerParams};
pub use params::{
    CountPolicy, DEFAULT_EXTRA, DEFAULT_MAX_SYNDROMES, SketchParams, ValidSketchParams,
};
pub use sketch::{
    AnyDomain, AnyParams, AnySketch, IntegerSketch, LinearParams, LinearSketch, Scheme, Sketch,
    SparseVector, ValidAnyParams,
};

/// Wide keys (beyond the paper): keys that are arbitrary byte strings,
/// decoded in a 64- or 128-bit field whatever their size. The scheme, its
/// decoder and its cost are described on [`WideSketch`].
pub mod wide {
    pub use crate::sketch::wide::{
        KEY_HASH_PREFIX, MAX_WIDE_KEY_LEN, ValidWideKeyParams, WideKeyParams, WideSketch, key_hash,
    };
}

/// The result type of this crate.
pub type SketchResult<T> = Result<T, SketchError>;
