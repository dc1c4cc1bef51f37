//! The stable id of a point in a store.

use std::fmt;

/// The stable id of a point (a record) in a [`Store`](super::Store): what a
/// deletion request names.
///
/// - **Unique across the store**, not per client: a request names records
///   without knowing which client holds them (the store looks the client
///   up).
/// - **Stable**: fixed when the store is built (an id column of the data,
///   or the point's row number when there is none, see
///   [`ClientRecords::numbered`](super::ClientRecords::numbered)) and
///   never reassigned; forgetting a record does not renumber the others,
///   and a forgotten id stays unknown.
/// - **At most `2^63 - 1`** ([`Self::MAX`]): SQLite's integers are signed
///   64-bit, and ids are stored as they are, so that any SQLite tool shows
///   the same numbers. Data whose ids are not numbers (names, UUIDs) needs
///   a numbering of its own, kept by its owner.
///
/// # Example
///
/// ```
/// use mufc::store::RecordId;
///
/// assert_eq!(RecordId(17).to_string(), "17");
/// assert!(RecordId(17) <= RecordId::MAX);
/// assert_eq!(RecordId::MAX.0, i64::MAX as u64);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordId(pub u64);

impl RecordId {
    /// The largest id a store holds, `2^63 - 1`.
    pub const MAX: Self = Self(i64::MAX as u64);

    /// The id as SQLite stores it, if it is at most [`Self::MAX`].
    pub(super) fn to_sql(self) -> Option<i64> {
        i64::try_from(self.0).ok()
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
