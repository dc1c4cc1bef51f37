//! The test machinery of the `seeding` layer: the exact distribution of
//! K-means++ seeding and of an unlearner ([`seeding`](mod@seeding)) or an
//! inserter ([`insertion`]), and the
//! bit-identity checks of exact K-means ([`exact`]), and synthetic client
//! data for the layers above ([`mixtures`]). It depends on
//! `seeding`, `field` and the test data alone, so that
//! `cargo test -p seeding` builds nothing of the layers above; those that
//! use it depend on it themselves. Not published.

// Test code: these functions panic on a counterexample by design.
#![allow(clippy::missing_panics_doc, clippy::unwrap_used)]

pub mod exact;
pub mod insertion;
pub mod mixtures;
pub mod seeding;

pub use testdata::{Fnv, cases, rng};
