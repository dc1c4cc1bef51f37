//! The messages and the service of `proto/mufc.proto` (package
//! `mufc.v1`), as prost and tonic generate them at build time.
#![allow(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    unused_qualifications,
    clippy::all,
    clippy::pedantic
)]

tonic::include_proto!("mufc.v1");
