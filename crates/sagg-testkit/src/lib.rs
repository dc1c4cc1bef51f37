//! The test machinery of the `syndrome-agg` layer: property suites over
//! every field and sketch ([`sagg`]), the secure-aggregation harness and
//! oracle ([`secagg`]), the malicious server and clients ([`lying`],
//! [`fuzz_secagg`]), and the fuzz bodies of its targets. It depends on
//! `syndrome-agg`, `field` and their test crates alone, so that
//! `cargo test -p syndrome-agg` builds nothing of the layers above;
//! `testkit` re-exports it for them. Not published.

// Test code: these functions panic on a counterexample by design.
#![allow(clippy::missing_panics_doc, clippy::unwrap_used)]

pub mod fuzz_secagg;
pub mod lying;
pub mod sagg;
pub mod secagg;

pub use field_testkit::fuzz;
pub use testdata::{Fnv, cases, known_primes, rng};
