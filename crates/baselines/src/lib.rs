#![doc = include_str!("../README.md")]

mod dc_kmeans;
mod error;
mod kfed;
mod seeds;
#[cfg(test)]
mod testdata;

pub use dc_kmeans::{DcKMeans, DcParams, Deletion, ValidDcParams};
pub use error::BaselineError;
pub use kfed::{KFedParams, KFedRun, LocalClustering, ValidKFedParams, awasthi_sheffet, kfed};
pub use seeds::stage_seed;
