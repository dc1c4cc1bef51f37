//! Sparse secure multiset aggregation (SCMA): syndrome sketches of sparse
//! vectors, their decoders, and masked aggregation.
//!
//! Not implemented yet: this crate is filled by issue 3. It exports nothing.
