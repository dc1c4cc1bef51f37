//! The integration tests, one module per file of this folder. One test
//! binary compiles and links the crate's test dependencies once, where a
//! binary per file did it once per file (CI's cold build). A new file
//! needs its `mod` line here.

mod autotraits;
mod bit_identity;
mod deps;
mod digest;
mod exact;
mod exact_digest;
mod exact_serde;
mod exactness;
mod insertion;
mod lloyd;
mod min_size;
mod quantizer;
#[path = "serde.rs"]
mod serde_roundtrip;
mod statistical;
