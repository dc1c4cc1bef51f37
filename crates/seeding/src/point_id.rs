//! Point ids: a leaf module, so that the data set and the error type both
//! name them without depending on each other.

use core::fmt;

/// A stable name for a point. Removal requests name ids, never positions:
/// positions change when points are removed, ids do not.
///
/// # Example
///
/// ```
/// use seeding::PointId;
///
/// assert_eq!(PointId(7).to_string(), "7");
/// assert!(PointId(1) < PointId(2));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(transparent)
)]
pub struct PointId(pub u64);

impl fmt::Display for PointId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<u64> for PointId {
    fn from(v: u64) -> Self {
        Self(v)
    }
}
