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
pub mod wide;
pub mod wire;

pub use aggregate::{Aggregator, MaskedSketch};
pub use error::SketchError;
pub use integer::{
    DEFAULT_MAX_INTEGER_BITS, IntegerParams, IntegerRing, IntegerSketch, ValidIntegerParams,
};
pub use params::{
    CountPolicy, DEFAULT_EXTRA, DEFAULT_MAX_SYNDROMES, SketchParams, ValidSketchParams,
};
pub use sketch::{Sketch, SparseVector};

/// The result type of this crate.
pub type SketchResult<T> = Result<T, SketchError>;
