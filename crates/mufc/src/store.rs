//! The model store: train once, forget on request months later, with an
//! audit trail, in one SQLite file (feature `store`, on by default).
//!
//! [`Store::fit`] trains a [`Federation`](crate::Federation) (Algorithm 1)
//! and writes it to a new database; [`Store::open`] checks and loads it;
//! [`Store::forget`] serves one removal request (Algorithm 4) in one
//! transaction and acknowledges it only once committed;
//! [`Store::history`] is the audit log; [`Store::predict`] assigns new
//! points to the nearest centroid.
//!
//! # Records
//!
//! A deletion request names records ([`RecordId`]), not positions: every
//! point gets a stable id when the store is built (an id column of the
//! data, or the point's row number), unique across the whole store. The
//! `records` table maps it to the client holding the point and the
//! point's [`PointId`](seeding::PointId) there, which is how
//! [`RemovalRequest`](crate::RemovalRequest) names points.
//!
//! # Schema (version 2)
//!
//! `PRAGMA application_id` is `0x4D554643` ("MUFC") and `PRAGMA
//! user_version` the schema version. Tables:
//!
//! | table     | one row per                  | contents                                              |
//! |-----------|------------------------------|-------------------------------------------------------|
//! | `meta`    | setting                      | `created` (unix seconds), `mufc_version` (informative) |
//! | `server`  | store (`id = 1`)             | `state`: model version, the map into the box ([`seeding::BoxTransform`]), configuration, dimension, decoded counts, sketch capacity, round counter, training report, the number of requests applied and the last removal report (the audit log is the history: a row growing with every request would slow every commit), pending requests (postcard); `sha256` |
//! | `clients` | client (`id` = client id)    | `state`: the client's points and seeds (postcard); `sha256` |
//! | `records` | point still held             | `record`, `client`, `point`                           |
//! | `journal` | request served               | `request`, `time`, `kind`, the record ids or client named |
//! | `audit`   | request and client           | `request`, `time`, `client`, `points`, `whole_client`, `reseeded`, `outcome`, `applied`, `version_before`, `version_after` |
//!
//! Every `sha256` is the SHA-256 of the table's name, the row's key and the
//! blob, so a blob moved to another row is refused as well as a changed
//! one. The audit log and the journal never hold coordinates: only ids and
//! counts.
//!
//! # What a request reads and writes
//!
//! A request writes only the rows of the clients it changes (a removed
//! client's row is deleted), the server row, its journal row and its audit
//! rows. Opening reads every row: the federation is one object in memory,
//! and loading rebuilds each client's clustering from its points (as
//! [`Federation::load`](crate::Federation::load) does), so opening costs
//! the clients' training, not the aggregation round.
//!
//! # Crash safety and deleted data
//!
//! The connection runs with a rollback journal (`journal_mode = DELETE`),
//! `synchronous = FULL` and `secure_delete = ON`: a crash at any point
//! leaves the last committed state (SQLite rolls a hot journal back when
//! the store is next opened), and once a request commits the journal file
//! is deleted and every freed byte of the database is overwritten with
//! zeros, so the coordinates of forgotten points are in none of the store's
//! files. (The file system may keep old blocks of a deleted journal; that
//! is below what a database can promise.)
//!
//! A request the privacy policy defers
//! ([`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients):
//! a round changing one client's message alone would tell the server that
//! change) is committed as pending: its points are still in the model, and
//! in the store, until a later request or [`Store::flush`] applies it.
//!
//! # Several processes
//!
//! Each [`Store`] holds the federation in memory. A request takes SQLite's
//! write lock, then checks that no other connection served a request since
//! its state was read (the journal's last entry); if one did, the request is
//! refused with [`StoreError::Stale`] and the store reloaded, never written
//! over the other's work.
//!
//! # What this store holds
//!
//! The federation is simulated in one process, so this one file holds every
//! client's data as well as the server's state: it is as sensitive as the
//! union of the clients' data sets. A deployment where each party stores
//! only its own state (the clients their points, the server its counts) is
//! the deployment issue's business, not this store's.
//!
//! # Example
//!
//! ```
//! use mufc::FederationConfig;
//! use mufc::store::{ClientRecords, IfExists, RecordId, Store};
//! use nalgebra::DMatrix;
//! use seeding::Dataset;
//!
//! let clients: Vec<Dataset> = (0..3)
//!     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
//!     .collect::<Result<_, _>>()?;
//! let config = FederationConfig::new(2).gamma(0.1).validate()?;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("model.mufc");
//! // Records are numbered by row: client 0 holds 0..30, client 1 30..60, ...
//! let (store, _report) = Store::fit(&path, ClientRecords::numbered(clients), &config, IfExists::Refuse)?;
//! drop(store);
//!
//! let mut store = Store::open(&path)?;
//! // One request naming points of two clients: applied at once.
//! let report = store.forget(&[RecordId(3), RecordId(41)])?;
//! assert!(!report.outcome.is_deferred());
//! assert_eq!(store.num_points(), 88);
//! assert_eq!(store.model_version(), 2);
//! assert_eq!(store.history()?.len(), 2); // one audit row per client
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Everything a store holds comes from outside (a file anyone can edit,
// docs/threat-model.md §8): no panicking index, unwrap or expect, and no
// unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

mod audit;
mod error;
mod fault;
mod forget;
mod handle;
mod load;
mod query;
mod record;
mod rows;
mod schema;
mod serving;
mod types;

pub use error::StoreError;
pub use fault::{FAULT_ENV, FaultPoint, WAIT_SUFFIX, WAITING};
pub use handle::Store;
pub use record::RecordId;
pub use schema::configure;
pub use serving::RoundEntry;
pub use types::{AuditEntry, AuditOutcome, Centroid, ClientRecords, ForgetReport, IfExists};
