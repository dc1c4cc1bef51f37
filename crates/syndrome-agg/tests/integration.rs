//! The integration tests, one module per file of this folder. One test
//! binary compiles and links the crate's test dependencies once, where a
//! binary per file did it once per file (CI's cold build). A new file
//! needs its `mod` line here.

mod any;
mod dealer_threats;
mod deps;
mod fuzz_replay;
mod kat_ring;
mod partitioned;
mod props;
mod secagg_sketches;
mod threats;
mod wheel_kat;
