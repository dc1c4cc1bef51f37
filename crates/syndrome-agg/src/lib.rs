#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

// Modules import from the module that defines an item, never from this
// root: the use graph between files has no circle.
#[macro_use]
mod hazmat;
mod aggregate;
mod decode;
mod error;
mod integer;
mod par;
mod params;
mod sketch;
mod sparse;
pub mod wire;

/// The masked sums this crate's sketches travel by, re-exported from
/// `masked-sum` (a dense-vector system takes that crate alone): masks
/// ([`masking`]) and dropout-tolerant secure aggregation ([`secagg`]).
pub use masked_sum::{masking, secagg};

/// The field crate, re-exported: [`ValidAnyParams::mask_field`] names
/// the field of a sketch's elements, so a consumer that runs a field
/// protocol on them needs no dependency of its own on it.
pub use field;

pub use aggregate::Aggregator;
pub use error::{DecodeError, ParamsError, ProtocolError, SketchError, SketchResult, WireError};
pub use integer::{DEFAULT_MAX_INTEGER_BITS, IntegerParams, IntegerRing, ValidIntegerParams};
pub use params::{
    CountPolicy, DEFAULT_EXTRA, DEFAULT_MAX_SYNDROMES, SketchParams, ValidSketchParams,
};
pub use sketch::any::AnySketch;
pub use sketch::any::SealedSeeds;
pub use sketch::any::params::{
    AnyDomain, AnyParams, MAX_FIELD_KEY_BITS, Scheme, ValidAnyParams, fits_word_field,
};
pub use sketch::field::Sketch;
pub use sketch::integer::IntegerSketch;
pub use sketch::{LinearParams, LinearSketch, MaskedSketch};
/// Raw access to sketch elements and their frames (`hazmat`: a protocol
/// internal).
#[cfg(feature = "hazmat")]
pub use sketch::{RawParams, RawSketch};
pub use sparse::SparseVector;

/// Wide keys (beyond the paper): keys that are arbitrary byte strings,
/// decoded in a 64- or 128-bit field whatever their size. The scheme, its
/// decoder and its cost are described on [`WideSketch`](crate::wide::WideSketch).
pub mod wide {
    pub use crate::sketch::wide::WideSketch;
    pub use crate::sketch::wide::key::MAX_WIDE_KEY_LEN;
    /// The keyed hash of wide keys (`hazmat`: a protocol internal).
    #[cfg(feature = "hazmat")]
    pub use crate::sketch::wide::key::{KEY_HASH_PREFIX, key_hash};
    pub use crate::sketch::wide::params::{ValidWideKeyParams, WideKeyParams};
}

// Partitioned sketches (beyond the paper): the bucket hash, the overflow
// bound and the bytes it costs are in the module's docs.
pub use sketch::partitioned;

/// The cost model that picks the default scheme (see [`fastest_scheme`]).
pub mod cost {
    pub use crate::sketch::any::cost::{
        BIG348, CHANNEL, M127, SchemeEstimate, TIE, WORD, default_partition, scheme_estimates,
    };
}
pub use sketch::any::cost::fastest_scheme;
