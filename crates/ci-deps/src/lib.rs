//! No code. This crate's dependencies carry the features the whole
//! workspace gives them; CI selects it beside the crates it builds without
//! `parallel`, so that cargo reuses the dependencies it already built (see
//! `Cargo.toml`).
