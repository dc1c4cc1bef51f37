#![doc = include_str!("../README.md")]
pub mod central;
mod checks;
pub mod cli;
pub mod commands;
pub mod data;
pub mod dc_kmeans;
mod error;
pub mod federated;
pub mod kfed;
pub mod output;
pub mod plot;
pub mod progress;
mod random;
pub mod split;
pub mod synth;
#[cfg(test)]
mod testdata;

pub use error::CliError;
