//! The uniform grid quantizer of Appendix H of the paper, and an affine map
//! that brings data into its box.
//!
//! - `grid.rs`: the [`Quantizer`] type, its constructors and accessors, and
//!   the bin coordinates of a point;
//! - `index.rs`: bin coordinates to 1-based bin indices and back;
//! - `bins.rs`: the centre of a bin and uniform samples inside it;
//! - `histogram.rs`: the bin histogram of weighted points, and data sets
//!   rebuilt from a histogram;
//! - `transform.rs`: [`BoxTransform`], the map into the box;
//! - `serialization.rs`: serde support (feature `serde`).

mod bins;
mod grid;
mod histogram;
mod index;
#[cfg(feature = "serde")]
mod serialization;
mod transform;

pub use self::grid::Quantizer;
pub use self::transform::BoxTransform;
