//! The integration tests, one module per file of this folder. One test
//! binary compiles and links the crate's test dependencies once, where a
//! binary per file did it once per file (CI's cold build). A new file
//! needs its `mod` line here.

mod cli_arrivals;
mod cli_certs;
mod cli_commands;
mod cli_concurrency;
mod cli_crash;
mod cli_deletion;
mod cli_deployment;
mod cli_errors;
mod cli_net;
mod cli_net_admission;
mod cli_net_agreement;
mod cli_net_arrivals;
mod cli_net_attacks;
mod cli_net_bounds;
mod cli_net_dealer;
mod cli_net_directory;
mod cli_net_erasure;
mod cli_net_faults;
mod cli_net_joins;
mod cli_net_membership;
mod cli_net_policy;
mod cli_net_revocation;
mod cli_net_signatures;
mod cli_net_splits;
mod cli_privacy;
mod cli_store;
mod cli_topology;
mod common;
