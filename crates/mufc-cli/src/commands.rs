//! What each subcommand does, as functions from parsed options to a
//! [`Report`](crate::output::Report). The binary only parses, calls [`execute`] and prints.
//!
//! One file per subcommand ([`run()`], [`compare()`], [`unlearn()`],
//! [`bench()`]); [`prepare()`] readies the data they share. This file only
//! declares the parts and re-exports the public ones, so none of them
//! depends on it: the helpers the subcommands share are in leaf modules
//! (`prepare`, `trials`, `summary`), and `execute` is the only one that
//! uses every subcommand.

mod bench;
#[cfg(feature = "net")]
mod certs;
mod compare;
mod costs;
#[cfg(feature = "net")]
mod dealer;
mod execute;
mod experiment;
#[cfg(feature = "net")]
mod log_lines;
#[cfg(feature = "net")]
mod net;
#[cfg(feature = "net")]
mod net_events;
#[cfg(feature = "net")]
mod net_files;
#[cfg(feature = "net")]
mod net_requests;
mod prepare;
mod run;
mod store;
mod summary;
mod topologies;
mod trials;
mod unlearn;

pub use bench::bench;
pub use compare::compare;
#[cfg(feature = "net")]
pub use dealer::dealer;
pub use execute::execute;
#[cfg(feature = "net")]
pub use net::{client, server};
pub use prepare::{Prepared, prepare};
pub use run::run;
pub use store::{
    add, export, fit, fit_config_for_parties, fit_table, forget, inspect, predict, report_json,
    verification_json, verify,
};
pub use topologies::topologies;
pub use unlearn::unlearn;
