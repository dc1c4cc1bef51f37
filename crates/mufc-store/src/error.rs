//! The errors of the model store.

use std::path::PathBuf;

use crate::fault::FaultPoint;
use crate::record::{ClientName, InvalidName, RecordId};
use crate::reports::Forgotten;
use mufc::MufcError;

/// Everything that can go wrong with a [`Store`](crate::Store). A request
/// that returns an error changed nothing in the file, and the store in
/// memory is the file's state (reloaded if need be; if even that fails,
/// [`Self::Poisoned`] until the store is opened again).
///
/// # Example
///
/// ```
/// use mufc_store::{RecordId, StoreError};
///
/// let err = StoreError::UnknownRecords { ids: vec![RecordId::from(17), RecordId::parse("P-42")?] };
/// assert_eq!(err.to_string(), "unknown record ids (the store never held them): 17, P-42");
/// let err = StoreError::SchemaVersion { found: 7, supported: 1 };
/// assert!(err.to_string().contains("version 7"));
/// # Ok::<(), StoreError>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// [`Store::fit`](crate::Store::fit) with
    /// [`IfExists::Refuse`](crate::IfExists::Refuse) and a file there.
    #[error("{} already exists: not overwritten (IfExists::Replace replaces it)", path.display())]
    Exists {
        /// The file that exists (the store, or its rollback journal).
        path: PathBuf,
    },
    /// The file is not a model store (not SQLite, or another
    /// application's database).
    #[error("{} is not a mufc model store: {reason}", path.display())]
    NotAStore {
        /// The file.
        path: PathBuf,
        /// Why not.
        reason: String,
    },
    /// The store was written with another schema version.
    #[error(
        "the store has schema version {found}; this build of mufc writes version {supported} and \
         reads it and version 5"
    )]
    SchemaVersion {
        /// The store's version (`PRAGMA user_version`).
        found: i64,
        /// The version this build writes (it reads version 5 too).
        supported: i64,
    },
    /// The store is damaged: SQLite's integrity check fails, a state blob
    /// does not match its checksum or does not parse, rows are missing,
    /// or the contents disagree with each other.
    #[error("the store is damaged: {reason}")]
    Corrupt {
        /// What is wrong, and where.
        reason: String,
    },
    /// A request names records the store never held; nothing was
    /// changed.
    #[error("unknown record ids (the store never held them): {}", list(ids))]
    UnknownRecords {
        /// The unknown ids, in increasing order.
        ids: Vec<RecordId>,
    },
    /// A request names records the store forgot already (their
    /// tombstones), and perhaps some it never held; nothing was changed.
    #[error("{}{}", forgotten_list(forgotten), unknown_tail(unknown))]
    AlreadyForgotten {
        /// The forgotten records: when, and by which request.
        forgotten: Vec<Forgotten>,
        /// The ids never held, in increasing order.
        unknown: Vec<RecordId>,
    },
    /// A new store's data, or an addition, holds records that the store
    /// (or the store it replaces) had forgotten
    /// ([`OnForgotten::Refuse`](crate::OnForgotten::Refuse)): nothing was
    /// written.
    #[error(
        "the data brings back {} record{} the store forgot ({}{}); leave them out of the data, or skip them (--skip-forgotten)",
        records.len(),
        if records.len() == 1 { "" } else { "s" },
        records.iter().take(5).map(|f| f.id.to_string()).collect::<Vec<_>>().join(", "),
        if records.len() > 5 { ", ..." } else { "" }
    )]
    Forgotten {
        /// The records, with their tombstones.
        records: Vec<Forgotten>,
    },
    /// An addition names a record the store holds
    /// ([`Store::add`](crate::Store::add)): nothing was written.
    #[error(
        "record {id} is held already (by client {client}): a new record needs an id of its own"
    )]
    RecordHeld {
        /// The record.
        id: RecordId,
        /// Its client.
        client: ClientName,
    },
    /// A record id occurs twice (in a request, or in the data of
    /// [`Store::fit`](crate::Store::fit)).
    #[error("record id {0} occurs twice")]
    DuplicateRecord(RecordId),
    /// A client name occurs twice in the data of
    /// [`Store::fit`](crate::Store::fit).
    #[error("client name {0} occurs twice")]
    DuplicateClient(ClientName),
    /// A record id or client name that a store cannot keep.
    #[error(transparent)]
    InvalidName(#[from] InvalidName),
    /// A request names a client the store does not hold.
    #[error("unknown client {name} (the store's clients: {known})")]
    UnknownClient {
        /// The name given.
        name: String,
        /// The store's clients, listed for people (the first ten).
        known: String,
    },
    /// A request names a client whose whole removal was served already.
    #[error("client {name} was already forgotten in request {request} at {} UTC{}", crate::words::utc(*at), if *pending { " (erased from the store; its removal from the model is pending)" } else { "" })]
    ClientForgotten {
        /// The client.
        name: ClientName,
        /// The request that removed it.
        request: u64,
        /// When (seconds since the Unix epoch).
        at: u64,
        /// Whether the model update still waits.
        pending: bool,
    },
    /// A client's record ids are not one per point.
    #[error("client {client} has {points} points but {records} record ids")]
    RecordCount {
        /// The client.
        client: ClientName,
        /// Its points.
        points: usize,
        /// Its record ids.
        records: usize,
    },
    /// Points to predict have another dimension than the model's.
    #[error("points of dimension {found}; the model's is {expected}")]
    Dimension {
        /// The model's dimension.
        expected: usize,
        /// The points'.
        found: usize,
    },
    /// A point to predict has a coordinate that is NaN or infinite.
    #[error("point {index} has a coordinate that is not finite")]
    NotFinite {
        /// The point's column.
        index: usize,
    },
    /// A transform ([`seeding::BoxTransform`]) of another dimension than
    /// the data's.
    #[error("invalid input transform: {reason}")]
    InvalidTransform {
        /// What is wrong.
        reason: String,
    },
    /// A deferral limit above [`MAX_DEFER`](crate::MAX_DEFER).
    #[error(
        "a model update may wait at most 30 days ({secs} s asked for): longer would outlast the \
         month the GDPR (Art. 12(3)) gives to act on a request (docs/store.md)"
    )]
    MaxDefer {
        /// The limit asked for, in seconds.
        secs: u64,
    },
    /// The model has no centroids (every client was removed).
    #[error("the model has no centroids: every client was removed")]
    NoModel,
    /// The model was withdrawn: a request would have left fewer clients
    /// than the minimum aggregate ([`mufc::Withdrawal`]).
    #[error(
        "the store serves no model: {0}. Fit a new store from the remaining records (a lower \
         --min-clients, FederationConfig::min_clients in the library, accepts fewer clients)"
    )]
    Withdrawn(mufc::Withdrawal),
    /// The federation refused (an invalid configuration or data at
    /// training, a request the policy refuses, ...).
    #[error(transparent)]
    Mufc(#[from] MufcError),
    /// SQLite failed (I/O, a locked database, ...).
    #[error("database error while {context}: {source}")]
    Database {
        /// What the store was doing.
        context: &'static str,
        /// SQLite's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// A file operation failed.
    #[error("cannot {what} {}: {source}", path.display())]
    Io {
        /// What the store was doing.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// Another connection (another process) served a request between
    /// two reads that must agree (the state and the audit log): read
    /// again. Requests never fail so: they reload the state under the
    /// write lock and serve the request on it.
    #[error(
        "the store changed while it was read (another process served a request): read it again"
    )]
    Stale,
    /// A fault injected by a test
    /// ([`Store::inject_fault`](crate::Store::inject_fault)); the
    /// request was rolled back.
    #[error("fault injected {0} (the request was rolled back)")]
    InjectedFault(FaultPoint),
    /// A write failed and the state could not be reloaded from the file:
    /// open the store again.
    #[error("the store's state in memory is lost after a failed write: open the store again")]
    Poisoned,
}

fn list(ids: &[RecordId]) -> String {
    ids.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn forgotten_list(forgotten: &[Forgotten]) -> String {
    forgotten
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

fn unknown_tail(unknown: &[RecordId]) -> String {
    if unknown.is_empty() {
        String::new()
    } else {
        format!(
            "; unknown record ids (the store never held them): {}",
            list(unknown)
        )
    }
}

impl StoreError {
    /// An SQLite error while doing `context`; damage and foreign files
    /// get their own variants.
    pub(crate) fn db(context: &'static str) -> impl FnOnce(rusqlite::Error) -> Self {
        move |e| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseCorrupt) => Self::Corrupt {
                reason: format!("{context}: {e}"),
            },
            _ => Self::Database {
                context,
                source: Box::new(e),
            },
        }
    }

    /// Damage described by `reason`.
    pub(crate) fn corrupt(reason: impl Into<String>) -> Self {
        Self::Corrupt {
            reason: reason.into(),
        }
    }
}
