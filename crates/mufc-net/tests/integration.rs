//! The integration tests, one module per file of this folder. One test
//! binary compiles and links the crate's test dependencies once, where a
//! binary per file did it once per file (CI's cold build). A new file
//! needs its `mod` line here.

mod client_store;
mod dealer;
mod federation;
mod groups;
mod handshake;
mod joins;
mod parties;
mod withdrawal;
