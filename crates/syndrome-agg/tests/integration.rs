//! The integration tests, one module per file of this folder. One test
//! binary compiles and links the crate's test dependencies once, where a
//! binary per file did it once per file (CI's cold build). A new file
//! needs its `mod` line here.

mod any;
mod common;
mod dealer_threats;
mod deps;
mod fuzz_replay;
mod kat;
mod partitioned;
mod props;
mod secagg_bad_peers;
mod secagg_lying_server;
mod secagg_props;
mod secagg_threats_dropouts;
mod secagg_threats_inputs;
mod secagg_threats_privacy;
mod secagg_threats_server;
mod threats;
