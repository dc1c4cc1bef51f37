#![doc = include_str!("../README.md")]

pub mod certs;
pub mod client;
pub mod client_store;
pub mod dealer;
pub mod departure;
pub mod endorse;
mod error;
pub mod fault;
pub mod federation_file;
pub mod proto;
pub mod revocation;
mod running;
pub mod server;
pub mod tls;
pub mod transport;

pub use error::NetError;
