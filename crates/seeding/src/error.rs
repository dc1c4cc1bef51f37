//! The one error type of the crate.

use num_bigint::BigUint;

use crate::point_id::PointId;

/// Everything that can go wrong in this crate. Every variant carries the
/// numbers a caller needs to find the offending input.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SeedingError {
    /// Points must have at least one coordinate.
    #[error("points must have at least one coordinate")]
    ZeroDimension,
    /// Two things that must have the same dimension or length do not.
    #[error("{what}: expected {expected}, found {found}")]
    LengthMismatch {
        /// What was being compared.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        found: usize,
    },
    /// A coordinate is not finite or exceeds [`crate::Dataset::MAX_ABS_COORD`]
    /// in magnitude (larger values could overflow the costs).
    #[error("coordinate {axis} of point {point} is invalid: {value}")]
    InvalidCoordinate {
        /// Position of the point in its input.
        point: usize,
        /// The axis (row) of the coordinate.
        axis: usize,
        /// The offending value.
        value: f64,
    },
    /// A point id occurs twice in a data set.
    #[error("point id {0} occurs twice in the data set")]
    DuplicateId(PointId),
    /// A removal request names an id that is not in the data set.
    #[error("point id {0} is not in the data set")]
    UnknownId(PointId),
    /// A removal request names the same id twice.
    #[error("point id {0} is named twice in one removal request")]
    RepeatedId(PointId),
    /// Weights must be positive.
    #[error("point {point} has weight zero")]
    ZeroWeight {
        /// Position of the point in its input.
        point: usize,
    },
    /// The total weight of a data set must fit in a `u64`, so that every
    /// cluster size does.
    #[error("the total weight of the data set exceeds u64::MAX")]
    WeightOverflow,
    /// The operation needs at least one point.
    #[error("the data set is empty")]
    EmptyDataset,
    /// The number of clusters must be at least one.
    #[error("the number of clusters must be at least 1")]
    ZeroClusters,
    /// A numeric parameter is out of its range.
    #[error("parameter {name} = {value} is out of range")]
    InvalidParameter {
        /// The parameter's name.
        name: &'static str,
        /// The value given.
        value: f64,
    },
    /// The grid step must be finite and positive, with at most 2^53 bins per
    /// axis.
    #[error("invalid grid step gamma = {gamma}")]
    InvalidGamma {
        /// The step given.
        gamma: f64,
    },
    /// A point lies outside the quantizer's box `[-1/2, 1/2]^d`.
    #[error("point {point:?} lies outside [-1/2, 1/2] on axis {axis} (coordinate {value})")]
    OutsideBox {
        /// Position of the point in a batch (`None` for a single point).
        point: Option<usize>,
        /// The axis on which it is outside.
        axis: usize,
        /// The coordinate.
        value: f64,
    },
    /// A bin index outside `[1, B^d]`.
    #[error("bin index {index} is outside [1, {bins}]")]
    BinOutOfRange {
        /// The index given.
        index: BigUint,
        /// The number of bins, `B^d`.
        bins: BigUint,
    },
    /// A bin coordinate outside `[0, B)`.
    #[error("bin coordinate {value} on axis {axis} is outside [0, {bins_per_axis})")]
    BinCoordinateOutOfRange {
        /// The axis.
        axis: usize,
        /// The coordinate given.
        value: u64,
        /// `B`, the number of bins per axis.
        bins_per_axis: u64,
    },
    /// On a shifted grid, the last cells of an axis can lie wholly outside
    /// the box: no point falls in them, so they have no centre.
    #[error("bin coordinate {value} on axis {axis} is a cell outside the box")]
    EmptyBin {
        /// The axis.
        axis: usize,
        /// The bin coordinate on that axis.
        value: u64,
    },
    /// `B^d` does not fit in a `u64`: use the `BigUint` methods.
    #[error("B^d = {bins} bins do not fit in a u64 index")]
    IndexTooLarge {
        /// The number of bins, `B^d`.
        bins: BigUint,
    },
    /// A coordinate is outside the range of the fixed-point arithmetic of
    /// [`crate::ExactKMeans`] (`|x| <= 2^16`, see
    /// [`crate::ExactKMeans::MAX_ABS_COORD`]).
    #[error("coordinate {axis} of point {id} is outside the exact range: {value}")]
    OutOfFixedRange {
        /// The point.
        id: PointId,
        /// The axis of the coordinate.
        axis: usize,
        /// The offending value.
        value: f64,
    },
    /// A list of [`crate::Changes`] does not describe the new data set.
    #[error("change of point {id} does not match the data: {reason}")]
    InconsistentChange {
        /// The point.
        id: PointId,
        /// What does not match.
        reason: &'static str,
    },
    /// A deserialized state is inconsistent.
    #[error("invalid state: {0}")]
    InvalidState(&'static str),
}
