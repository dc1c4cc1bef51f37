#![doc = include_str!("../README.md")]
// Everything a store holds comes from outside (a file anyone can edit,
// docs/threat-model.md §8): no panicking index, unwrap or expect, and no
// unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

mod admissions;
mod audit;
mod commit;
mod digest;
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

#[cfg(test)]
mod stored_clusters_tests;

pub use admissions::{AdmittedClient, DepartedClient};
pub use error::StoreError;
pub use fault::{FAULT_ENV, FaultPoint, WAIT_SUFFIX, WAITING};
pub use handle::Store;
pub use load::quick_check;
pub use record::{ClientName, InvalidName, MAX_NAME_BYTES, RecordId};
pub use reports::{AuditEntry, AuditOutcome, ForgetOutcome, ForgetReport, Forgotten, RecordStatus};
pub use schema::configure;
pub use serving::RoundEntry;
pub use types::{
    Centroid, ClientRecords, DEFAULT_MAX_DEFER, FitOptions, IfExists, MAX_DEFER, OnForgotten,
};
pub use verify::{Verification, VerifyOutcome};
pub use words::{duration_words, utc};
