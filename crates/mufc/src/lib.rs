//! Machine unlearning of federated clusters: the composition of `field`,
//! `syndrome-agg` and `seeding`.
//!
//! Not implemented yet: this crate is filled by issue 5. It exports nothing.
