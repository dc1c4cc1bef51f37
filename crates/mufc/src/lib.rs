#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod aggregation;
#[cfg(test)]
mod change_round_tests;
mod client;
mod config;
mod error;
mod federation;
mod ids;
#[cfg(test)]
mod incremental_tests;
mod layout;
#[cfg(test)]
mod mask_freshness_tests;
mod objective;
mod par;
mod persist;
#[cfg(test)]
mod regroup_tests;
pub mod remote;
mod report;
mod request;
mod server;
mod state;
#[cfg(test)]
mod test_channels;
#[cfg(test)]
mod withdraw_tests;

pub use aggregation::SketchInfo;
pub use client::{Client, StoredClusters};
pub use config::{
    Channel, ClientConfig, ClientK, ClientTraining, DEFAULT_MIN_CLIENTS,
    DEFAULT_MIN_UPDATING_CLIENTS, FederationConfig, GammaRule, Masking, Masks, RingMasks,
    RunOptions, Scma, SecAggGraph, SecAggOptions, SecAggPlan, ServerConfig, ServerPoints, Topology,
    ValidConfig,
};
pub use error::{ConfigParam, MufcError, MufcResult, PersistError};
pub use federation::Federation;
pub use ids::ClientId;
pub use layout::{Layout, NodeId};
pub use objective::Objectives;
pub use persist::{ClientSnapshot, ServerSnapshot};
pub use report::{
    DecodeKind, FitReport, Involvement, RemovalOutcome, RemovalReport, StageTimes, Withdrawal,
};
pub use request::{AdditionRequest, PendingAddition, PendingRequest, RemovalRequest};
pub use server::{Server, ServerUpdate, UpdateSummary};
pub use state::privacy_warning;
/// The steps of the [`Masking::SecAgg`] protocol, as the reports name the
/// step at which a client dropped out.
///
/// # Example
///
/// ```
/// use mufc::SecAggStep;
///
/// assert!(SecAggStep::MaskedInput < SecAggStep::Unmasking);
/// assert_eq!(SecAggStep::Unmasking.to_string(), "unmasking");
/// ```
pub use syndrome_agg::secagg::Step as SecAggStep;
