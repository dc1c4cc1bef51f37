//! The test machinery of the `syndrome-agg` layer: property suites over
//! every field and sketch ([`sagg`]) and the fuzz bodies of its targets
//! (the secure-aggregation harness is `sum-testkit`'s, the layer of
//! `masked-sum` below). It depends on
//! `syndrome-agg`, `field` and their test crates alone, so that
//! `cargo test -p syndrome-agg` builds nothing of the layers above;
//! the layers above that use it depend on it themselves. Not published.

// Test code: these functions panic on a counterexample by design.
#![allow(clippy::missing_panics_doc, clippy::unwrap_used)]

pub mod sagg;

pub use field_testkit::fuzz;
pub use testdata::{Fnv, cases, known_primes, rng};
