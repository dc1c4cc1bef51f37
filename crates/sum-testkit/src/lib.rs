//! The test suites of `masked-sum`, depending on that layer alone (and
//! `field`): the secure-aggregation harness with its plaintext oracle
//! ([`secagg`]), the lying server ([`lying`]), and the fuzz bodies
//! ([`fuzz_secagg`], also reached as `secagg::fuzz_*`).
#![allow(clippy::missing_panics_doc, clippy::unwrap_used)]

pub mod fuzz_secagg;
pub mod lying;
pub mod secagg;

pub use field_testkit::fuzz;
pub use testdata::{Fnv, cases, known_primes, rng};
