//! The client and server parts of a configuration ([`ClientConfig`],
//! [`ServerConfig`]: what each side runs) and the defaults of the server's
//! privacy policies. The builder ([`super::builder`]) writes their fields;
//! [`ValidConfig`](crate::ValidConfig) hands them out checked.

use super::names::{ClientTraining, ServerPoints};

/// The default of
/// [`FederationConfig::min_clients`](crate::FederationConfig::min_clients):
/// the fewest clients whose messages the server may sum
/// (docs/threat-model.md P4).
pub const DEFAULT_MIN_CLIENTS: usize = 3;

/// The default of
/// [`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients):
/// the fewest clients whose message an unlearning round may change
/// (docs/threat-model.md U3).
pub const DEFAULT_MIN_UPDATING_CLIENTS: usize = 2;

/// What each client runs on its own data (the client part of a
/// configuration; Algorithm 1, line 2).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ClientConfig {
    pub(super) k: Option<usize>,
    pub(super) training: ClientTraining,
    pub(super) tolerance: f64,
    pub(super) max_iterations: usize,
}

impl ClientConfig {
    /// The number of clusters each client finds, if set apart from the
    /// server's (else the server's `k`).
    pub fn k(&self) -> Option<usize> {
        self.k
    }
    /// Seeding only, or full K-means.
    pub fn training(&self) -> ClientTraining {
        self.training
    }
    /// The tolerance of the clients' Lloyd iterations
    /// ([`ClientTraining::Full`]).
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }
    /// The clients' iteration cap ([`ClientTraining::Full`]).
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }
}

/// What the server builds and runs (the server part of a configuration;
/// Algorithm 1, lines 5-6), and the privacy policies it enforces.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ServerConfig {
    pub(super) k: usize,
    pub(super) points: ServerPoints,
    pub(super) tolerance: f64,
    pub(super) max_iterations: usize,
    pub(super) restarts: usize,
    pub(super) min_clients: usize,
    pub(super) min_updating_clients: usize,
}

impl ServerConfig {
    /// The server's number of clusters `K`.
    pub fn k(&self) -> usize {
        self.k
    }
    /// The points the server builds from the decoded counts.
    pub fn points(&self) -> ServerPoints {
        self.points
    }
    /// The relative tolerance of the server's Lloyd iterations.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }
    /// The server's iteration cap.
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }
    /// The server's number of K-means runs, the best kept.
    pub fn restarts(&self) -> usize {
        self.restarts
    }
    /// The fewest clients whose messages the server may sum.
    pub fn min_clients(&self) -> usize {
        self.min_clients
    }
    /// The fewest clients whose message an unlearning round may change.
    pub fn min_updating_clients(&self) -> usize {
        self.min_updating_clients
    }
}
