//! The integration tests, one module per file of this folder. One test
//! binary compiles and links the crate's test dependencies once, where a
//! binary per file did it once per file (CI's cold build). A new file
//! needs its `mod` line here.

mod arrivals;
mod arrivals_groups;
mod distribution;
mod doc_citations;
mod e2e;
mod errors;
mod exact;
mod fuzz_corpus;
mod groups;
mod masking;
mod min_cluster_size;
mod module_graph;
mod nonseed;
mod parallel;
mod persistence;
mod privacy;
mod secagg;
mod test_files;
