//! The federation's configuration: an unchecked builder,
//! [`FederationConfig`], validated into a [`ValidConfig`] (STYLE: params ->
//! valid params). A configuration has the shape of the system: a client
//! part ([`ClientConfig`]), a server part ([`ServerConfig`]) and a channel
//! part ([`Channel`]), plus the federation seed and run options.

mod builder;
mod channel;
mod names;
mod parts;
mod run;
pub(crate) mod secagg;
mod survey;
mod topology;
mod valid;
mod validate;

pub use builder::FederationConfig;
pub use channel::{Channel, Masks, RingMasks, Scma};
pub use names::{ClientTraining, Masking, SecAggGraph, ServerPoints};
pub use parts::{
    ClientConfig, ClientK, DEFAULT_MIN_CLIENTS, DEFAULT_MIN_UPDATING_CLIENTS, GammaRule,
    ServerConfig,
};
pub use run::RunOptions;
pub(crate) use secagg::planned_dropouts;
pub use secagg::{SecAggOptions, SecAggPlan};
pub(crate) use survey::survey_scale;
pub(crate) use survey::{median_scale, median_scale_of};
pub use topology::Topology;
pub use valid::ValidConfig;
pub(crate) use validate::groups_need_scma;
