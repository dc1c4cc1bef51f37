//! The integration tests, one module per file of this folder, in one test
//! binary (CI's cold build links the test dependencies once). A new file
//! needs its `mod` line here.

mod common;
mod deps;
mod fuzz_replay;
mod kat;
mod secagg_bad_peers;
mod secagg_lying_server;
mod secagg_props;
mod secagg_threats_dropouts;
mod secagg_threats_inputs;
mod secagg_threats_privacy;
mod secagg_threats_server;
