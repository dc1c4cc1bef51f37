//! The test machinery of the `field` layer: generic property suites for
//! every [`Field`](field::Field) and [`FiniteField`](field::FiniteField)
//! ([`fields`]), their polynomials ([`poly`]) and decoders
//! ([`decoding`]), and the fuzz bodies of the field targets ([`fuzz`]).
//! It depends on `field` and the workspace's test data alone, so that
//! `cargo test -p field` builds nothing else of the workspace; the layers
//! above that use it depend on it themselves. Not published.
//!
//! Test logic lives in ordinary generic functions that take a field
//! *value* (so run-time moduli join in); the macros only stamp out
//! `#[test]` wrappers.

// Test code: these functions panic on a counterexample by design.
#![allow(clippy::missing_panics_doc, clippy::unwrap_used)]

pub mod decoding;
pub mod fields;
pub mod fuzz;
pub mod poly;

pub use testdata::{Fnv, cases, known_primes, rng};
