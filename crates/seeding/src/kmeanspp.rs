//! K-means++ seeding (Appendix B of the paper) that records the order of
//! its seeds, and its exact unlearning (Algorithm 3).
//!
//! - `config.rs`: [`KMeansPlusPlus`], the parameters and cost, and `fit`;
//! - `fitted.rs`: [`Seeding`], the seeded state's public methods;
//! - `state.rs`: the state behind a [`Seeding`], and Algorithm 3;
//! - `insert.rs`: its insertion counterpart, with the proof that it is
//!   exact, and [`InsertReport`];
//! - `report.rs`: [`UnlearnOutcome`] and [`UnlearnReport`];
//! - `nearest.rs`: the per-point nearest-seed state and the seeding rounds,
//!   shared with [`crate::KMeans`];
//! - `serialization.rs`: serde support (feature `serde`).

mod config;
mod fitted;
mod insert;
mod nearest;
mod report;
#[cfg(feature = "serde")]
mod serialization;
mod state;

pub use self::config::KMeansPlusPlus;
pub use self::fitted::Seeding;
pub use self::insert::{InsertOutcome, InsertReport};
pub(crate) use self::nearest::{Nearest, race_weight, run_rounds};
pub use self::report::{UnlearnOutcome, UnlearnReport};
