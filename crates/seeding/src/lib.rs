//! K-means++ seeding generic over a metric, with exact unlearning.
//!
//! Not implemented yet: this crate is filled by issue 4. It exports nothing.
