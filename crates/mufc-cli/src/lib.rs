#![doc = include_str!("../README.md")]
pub mod central;
mod checks;
pub mod cli;
pub mod commands;
pub mod data;
mod error;
pub mod exit;
pub mod federated;
pub mod output;
pub mod plot;
pub mod progress;
mod random;
pub mod split;
pub mod synth;

pub use error::CliError;
