#![doc = include_str!("../README.md")]
// Test code: these functions panic on a counterexample by design.
#![allow(clippy::missing_panics_doc, clippy::unwrap_used)]

pub mod fuzz_apps;
pub mod fuzz_corpus;
pub mod fuzz_net;
pub mod fuzz_remote;
