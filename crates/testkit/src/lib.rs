#![doc = include_str!("../README.md")]
// Test code: these functions panic on a counterexample by design.
#![allow(clippy::missing_panics_doc, clippy::unwrap_used)]

#[cfg(feature = "fuzz-apps")]
pub mod fuzz_apps;
pub mod fuzz_corpus;
#[cfg(feature = "fuzz-apps")]
pub mod fuzz_net;
#[cfg(feature = "fuzz-apps")]
pub mod fuzz_remote;

// The field layer's suites and fuzz bodies live in `field-testkit` (which
// `cargo test -p field` builds alone), the test data in `testdata`; the
// layers above reach them here, as before.
pub use field_testkit::{
    bm_suite, decoding, field_suite, fields, fuzz, poly, poly_suite, roots_suite, vandermonde_suite,
};
pub use sagg_testkit::{aggregator_suite, sagg, sagg_suite};
pub use seeding_testkit::{exact, seeding};
pub use sum_testkit::{fuzz_secagg, lying, secagg};
pub use testdata::{Fnv, cases, known_primes, rng};
