//! The model store: train once, forget on request months later, with an
//! audit trail, in one SQLite file (feature `store`, on by default).
//!
//! [`Store::fit`] trains a [`Federation`](crate::Federation) (Algorithm 1)
//! and writes it to a new database; [`Store::open`] checks and loads it;
//! [`Store::forget`] serves one removal request (Algorithm 4) in one
//! transaction and acknowledges it only once committed;
//! [`Store::history`] is the audit log; [`Store::locate`] tells where a
//! record is (held, or forgotten when and by which request);
//! [`Store::verify`] retrains from the remaining records and compares;
//! [`Store::predict`] assigns new points to the nearest centroid.
//! docs/store.md states the guarantees and names the tests that check
//! them.
//!
//! # Names
//!
//! A store speaks of records and clients as the data does. A client has a
//! [`ClientName`] (`site-5`, `72`), kept verbatim; the federation's own
//! numbering ([`ClientId`](crate::ClientId), `0..` in the order
//! [`Store::fit`] was given the clients, from which their seeds derive)
//! stays inside the store. A record has a [`RecordId`]: an integer or a
//! string (`P-000123`, a UUID), kept as given, unique across the store.
//!
//! # Schema (version 4)
//!
//! `PRAGMA application_id` is `0x4D554643` ("MUFC") and `PRAGMA
//! user_version` the schema version. Tables:
//!
//! | table        | one row per                  | contents                                              |
//! |--------------|------------------------------|-------------------------------------------------------|
//! | `meta`       | setting                      | `created` (unix seconds), `mufc_version` (informative), `secret` (the tombstones' 32-byte key), `max_defer` (seconds) |
//! | `server`     | store (`id = 1`)             | `state`: model version, the map into the box ([`seeding::BoxTransform`]), every client's name, configuration, dimension, decoded counts, sketch capacity, round counter, training report, the number of requests applied and the last removal report, pending requests and what the aggregate still holds of the clients they name (postcard); `sha256` |
//! | `clients`    | client (`id` = its number)   | `state`: the client's points and seeds (postcard); `sha256` |
//! | `records`    | point still held             | `record` (integer or text, as given), `client`, `point` |
//! | `tombstones` | record forgotten             | `tag` (HMAC-SHA-256 of the id under `secret`), `request`, `client`, `erased` (time), `version` and `applied` (the model version that stopped counting it, and when; empty while its update waits), `inherited` |
//! | `journal`    | request served               | `request`, `time`, `kind`, what it named (a count of records, or a client's name) |
//! | `audit`      | request and client           | `request`, `time`, `client` (its name), `points`, `whole_client`, `reseeded`, `outcome`, `applied`, `erased`, `removed`, `version_before`, `version_after`, `warning` |
//!
//! Every `sha256` is the SHA-256 of the table's name, the row's key and the
//! blob, so a blob moved to another row is refused as well as a changed
//! one. The audit log, the journal and the tombstones never hold
//! coordinates, nor a forgotten record's id.
//!
//! # Erasure at once
//!
//! A request erases its records from the store when it is served: the
//! clients holding them unlearn them (Algorithm 3), their rows are
//! rewritten without them, their `records` rows are deleted, and each
//! leaves a tombstone. The privacy policy
//! ([`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients):
//! a round changing one client's message alone would tell the server that
//! change) may defer the *model update*: what the aggregate holds of the
//! client's last message (bins and counts, never coordinates) stays until
//! a later request, [`Store::flush`], or [`Store::apply_overdue`] once
//! the store's deferral limit ([`DEFAULT_MAX_DEFER`]) has passed runs the
//! round.
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
//! # Several processes
//!
//! Any number of processes may use one store. Opening reads every table
//! in one read transaction (one snapshot: another process's request is
//! wholly in it or not at all). A request takes SQLite's write lock
//! first; if another process served a request since this store's state
//! was read, it reloads the state from the file under that lock, then
//! checks and serves the request on it. Requests so queue behind each
//! other, each applied once, on the state the one before it left.
//!
//! # What this store holds
//!
//! The federation is simulated in one process, so this one file holds every
//! client's data as well as the server's state: it is as sensitive as the
//! union of the clients' data sets. A deployment where each party stores
//! only its own state (the clients their points, the server its counts) is
//! `mufc-net`'s.
//!
//! # Example
//!
//! ```
//! use mufc::FederationConfig;
//! use mufc::store::{ClientName, ClientRecords, FitOptions, RecordId, Store};
//! use nalgebra::DMatrix;
//! use seeding::Dataset;
//!
//! let names = ["north", "south", "east", "west"];
//! let clients = names
//!     .iter()
//!     .enumerate()
//!     .map(|(l, name)| {
//!         let data = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2))?;
//!         let ids = (0..30).map(|i| RecordId::parse(&format!("{name}-{i:03}"))).collect::<Result<_, _>>()?;
//!         Ok(ClientRecords::new(ClientName::new(name)?, data, ids)?)
//!     })
//!     .collect::<Result<Vec<_>, Box<dyn std::error::Error>>>()?;
//! let config = FederationConfig::new(2).gamma(0.1).validate()?;
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("model.mufc");
//! let (store, _report) = Store::fit(&path, clients, &config, &FitOptions::new())?;
//! drop(store);
//!
//! let mut store = Store::open(&path)?;
//! // One request naming records of two clients: applied at once.
//! let report = store.forget(&[RecordId::parse("north-003")?, RecordId::parse("south-011")?])?;
//! assert!(!report.outcome.is_deferred());
//! assert_eq!(report.clients.iter().map(|c| c.as_str()).collect::<Vec<_>>(), ["north", "south"]);
//! assert_eq!(store.num_points(), 118);
//! assert_eq!(store.model_version(), 2);
//! assert_eq!(store.history()?.len(), 2); // one audit row per client
//! // A whole client, by its name.
//! store.forget_client("east")?;
//! assert_eq!(store.client_names().len(), 3);
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
mod commit;
mod error;
mod fault;
mod forget;
mod handle;
mod load;
mod query;
mod record;
mod reports;
mod rows;
mod schema;
mod serving;
mod state;
mod tombstone;
mod types;
mod verify;
mod words;

pub use error::StoreError;
pub use fault::{FAULT_ENV, FaultPoint, WAIT_SUFFIX, WAITING};
pub use handle::Store;
pub use record::{ClientName, InvalidName, MAX_NAME_BYTES, RecordId};
pub use reports::{AuditEntry, AuditOutcome, ForgetOutcome, ForgetReport, Forgotten, RecordStatus};
pub use schema::configure;
pub use serving::RoundEntry;
pub use types::{Centroid, ClientRecords, DEFAULT_MAX_DEFER, FitOptions, IfExists, OnForgotten};
pub use verify::{Verification, VerifyOutcome};
pub use words::{duration_words, utc};
