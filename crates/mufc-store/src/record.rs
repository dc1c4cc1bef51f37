//! What a store's users name: a record ([`RecordId`]) and a client
//! ([`ClientName`]), both as written in the data.

use std::fmt;

/// A record id or client name that a store cannot keep: empty, too long,
/// with a control character, or with whitespace at an end.
///
/// # Example
///
/// ```
/// use mufc_store::RecordId;
///
/// let err = RecordId::parse("").unwrap_err();
/// assert_eq!(err.reason, "is empty");
/// assert_eq!(err.to_string(), "invalid record id \"\": it is empty");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} {name:?}: it {reason}")]
pub struct InvalidName {
    /// A record id or a client name.
    pub what: &'static str,
    /// The name (at most its first 64 characters).
    pub name: String,
    /// Why not.
    pub reason: &'static str,
}

/// The longest record id or client name a store takes, in bytes of
/// UTF-8: ids are names (`P-000123`, a UUID, a hospital's code), not
/// documents.
pub const MAX_NAME_BYTES: usize = 256;

/// Checks a name as written: not empty, at most [`MAX_NAME_BYTES`] bytes,
/// no control character (a line break in an id would break every report
/// and audit line that shows it), no whitespace at either end (readers
/// trim fields: an id with it could never be named again).
fn check(what: &'static str, s: &str) -> Result<(), InvalidName> {
    let reason = if s.is_empty() {
        Some("is empty")
    } else if s.len() > MAX_NAME_BYTES {
        Some("is longer than 256 bytes")
    } else if s.chars().any(char::is_control) {
        Some("holds a control character")
    } else if s.trim() != s {
        Some("begins or ends with whitespace")
    } else {
        None
    };
    match reason {
        Some(reason) => Err(InvalidName {
            what,
            name: s.chars().take(64).collect(),
            reason,
        }),
        None => Ok(()),
    }
}

/// Whether `s` is an integer written the one way its value is written:
/// an optional `-`, then digits without a leading zero (`0` alone), in
/// the range of `i64`. `17` is; `017`, `+17` and `17.0` are not.
fn canonical_integer(s: &str) -> Option<i64> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && s != "-0";
    if canonical { s.parse().ok() } else { None }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Repr {
    Int(i64),
    Text(Box<str>),
}

/// The id of a record (a point) in a [`Store`](crate::Store): what a
/// deletion request names.
///
/// - **As written in the data**: an integer or a string (UTF-8, at most
///   [`MAX_NAME_BYTES`] bytes, no control character, no whitespace at
///   either end), kept verbatim. A string that is an integer written the
///   usual way (`17`, `-3`) is that integer, so that a request naming
///   `17` finds the record whose id column says `17`; any other string
///   is itself (`017`, `P-000123` and a UUID are strings, and `017` is
///   not `17`). SQLite keeps integers as integers and strings as text.
/// - **Unique across the store**, not per client: a request names records
///   without knowing which client holds them (the store looks the client
///   up).
/// - **Stable**: fixed when the store is built (an id column of the
///   data, or the point's row number when there is none) and never
///   reassigned; forgetting a record leaves a tombstone (a keyed hash of
///   the id, never the id itself), so that naming it again is answered
///   "already forgotten in request N", not "unknown".
///
/// # Example
///
/// ```
/// use mufc_store::RecordId;
///
/// let a = RecordId::parse("17")?;
/// assert_eq!(a, RecordId::from(17));
/// assert_eq!(a.to_string(), "17");
/// let b = RecordId::parse("P-000123")?;
/// assert_eq!(b.to_string(), "P-000123");
/// // Verbatim: a zero-padded id is a string, another id than 17.
/// assert_ne!(RecordId::parse("017")?, a);
/// assert!(RecordId::parse("").is_err());
/// assert!(RecordId::parse("two\nlines").is_err());
/// # Ok::<(), mufc_store::InvalidName>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordId(Repr);

impl RecordId {
    /// The id written `s` (see the type's docs).
    ///
    /// # Errors
    ///
    /// [`InvalidName`] for an empty string, one longer than
    /// [`MAX_NAME_BYTES`], or one with a control character or whitespace
    /// at an end.
    pub fn parse(s: &str) -> Result<Self, InvalidName> {
        if let Some(i) = canonical_integer(s) {
            return Ok(Self(Repr::Int(i)));
        }
        check("record id", s)?;
        Ok(Self(Repr::Text(s.into())))
    }

    /// The integer, for an integer id.
    pub fn as_int(&self) -> Option<i64> {
        match &self.0 {
            Repr::Int(i) => Some(*i),
            Repr::Text(_) => None,
        }
    }

    /// The bytes that identify the id, for its tombstone's keyed hash
    /// and the records' digest: an integer and a string never share them.
    /// Given in two parts (the kind, then the value) to `feed`, so that a
    /// hash of every record allocates nothing.
    pub(crate) fn tag(&self, mut feed: impl FnMut(&[u8])) {
        match &self.0 {
            Repr::Int(i) => {
                feed(b"i");
                feed(&i.to_le_bytes());
            }
            Repr::Text(s) => {
                feed(b"t");
                feed(s.as_bytes());
            }
        }
    }

    /// The id as SQLite stores it: an integer, or text.
    pub(crate) fn to_sql(&self) -> rusqlite::types::Value {
        match &self.0 {
            Repr::Int(i) => rusqlite::types::Value::Integer(*i),
            Repr::Text(s) => rusqlite::types::Value::Text(s.to_string()),
        }
    }

    /// The id SQLite stored: an integer, or text (checked as
    /// [`Self::parse`] checks it); what is wrong otherwise.
    pub(crate) fn from_sql(v: rusqlite::types::ValueRef<'_>) -> Result<Self, String> {
        match v {
            rusqlite::types::ValueRef::Integer(i) => Ok(Self(Repr::Int(i))),
            rusqlite::types::ValueRef::Text(t) => {
                let s =
                    std::str::from_utf8(t).map_err(|_| "a record id is not UTF-8".to_string())?;
                let id = Self::parse(s).map_err(|e| format!("a stored record id: {e}"))?;
                // An integer stored as text would be two ids at once.
                if id.as_int().is_some() {
                    return Err(format!("record id {s} is stored as text"));
                }
                Ok(id)
            }
            _ => Err("a record id is neither integer nor text".to_string()),
        }
    }
}

impl From<i64> for RecordId {
    fn from(i: i64) -> Self {
        Self(Repr::Int(i))
    }
}

impl TryFrom<u64> for RecordId {
    type Error = InvalidName;

    fn try_from(i: u64) -> Result<Self, InvalidName> {
        i64::try_from(i).map(Self::from).map_err(|_| InvalidName {
            what: "record id",
            name: i.to_string(),
            reason: "is above 2^63 - 1, the largest integer a store holds",
        })
    }
}

impl std::str::FromStr for RecordId {
    type Err = InvalidName;

    fn from_str(s: &str) -> Result<Self, InvalidName> {
        Self::parse(s)
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Int(i) => write!(f, "{i}"),
            Repr::Text(s) => f.write_str(s),
        }
    }
}

/// A client's name in a [`Store`](crate::Store), as written in the data
/// (`site-5`, `72`, `Hôpital Nord`), kept verbatim: UTF-8, at most
/// [`MAX_NAME_BYTES`] bytes, no control character, no whitespace at
/// either end. Every report, audit row and error of the store names
/// clients so, and `forget_client` takes it; the federation's own
/// numbering of clients ([`ClientId`](mufc::ClientId)) stays inside.
///
/// # Example
///
/// ```
/// use mufc_store::ClientName;
///
/// let a = ClientName::new("site-5")?;
/// assert_eq!(a.as_str(), "site-5");
/// // Verbatim: "05" and "5" are two clients.
/// assert_ne!(ClientName::new("05")?, ClientName::new("5")?);
/// assert!(ClientName::new(" padded").is_err());
/// # Ok::<(), mufc_store::InvalidName>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
pub struct ClientName(Box<str>);

impl ClientName {
    /// The name `s`.
    ///
    /// # Errors
    ///
    /// [`InvalidName`] for an empty string, one longer than
    /// [`MAX_NAME_BYTES`], or one with a control character or whitespace
    /// at an end.
    pub fn new(s: &str) -> Result<Self, InvalidName> {
        check("client name", s)?;
        Ok(Self(s.into()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for ClientName {
    type Err = InvalidName;

    fn from_str(s: &str) -> Result<Self, InvalidName> {
        Self::new(s)
    }
}

impl fmt::Display for ClientName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for ClientName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::new(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_those_written_the_usual_way() {
        for (s, int) in [
            ("0", Some(0)),
            ("17", Some(17)),
            ("-3", Some(-3)),
            ("9223372036854775807", Some(i64::MAX)),
            ("-9223372036854775808", Some(i64::MIN)),
            ("9223372036854775808", None),
            ("017", None),
            ("-0", None),
            ("+17", None),
            ("17.0", None),
            ("1e3", None),
            ("-", None),
        ] {
            let id = RecordId::parse(s).unwrap();
            assert_eq!(id.as_int(), int, "{s}");
            // Verbatim either way.
            assert_eq!(id.to_string(), s);
        }
    }

    #[test]
    fn bad_names_are_refused_with_the_reason() {
        let long = "x".repeat(MAX_NAME_BYTES + 1);
        for (s, reason) in [
            ("", "is empty"),
            (long.as_str(), "is longer than 256 bytes"),
            ("a\tb", "holds a control character"),
            ("a ", "begins or ends with whitespace"),
        ] {
            match RecordId::parse(s) {
                Err(InvalidName { reason: r, .. }) => assert_eq!(r, reason, "{s:?}"),
                other => panic!("{s:?}: {other:?}"),
            }
            assert!(ClientName::new(s).is_err());
        }
        assert!(RecordId::parse(&"x".repeat(MAX_NAME_BYTES)).is_ok());
        assert!(RecordId::try_from(u64::MAX).is_err());
        assert_eq!(RecordId::try_from(5u64).unwrap(), RecordId::from(5));
    }

    #[test]
    fn integer_and_text_ids_have_different_tags() {
        let i = RecordId::from(0x7474_7474_7474_7474);
        let t = RecordId::parse("tttttttt").unwrap();
        let bytes = |r: &RecordId| {
            let mut v = Vec::new();
            r.tag(|b| v.extend_from_slice(b));
            v
        };
        assert_ne!(bytes(&i), bytes(&t));
    }
}
