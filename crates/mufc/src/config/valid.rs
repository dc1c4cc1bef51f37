//! The checked configuration, [`ValidConfig`], and its accessors: the
//! client, server and channel parts, the settings outside them, and
//! shortcuts to the part settings read in many places.

use super::builder::FederationConfig;
use super::channel::Channel;
use super::names::ClientTraining;
use super::parts::{ClientConfig, ServerConfig};
use super::run::RunOptions;

/// A checked [`FederationConfig`]; [`Federation::new`](crate::Federation::new)
/// takes only these. A federation's own config
/// ([`Federation::config`](crate::Federation::config)) has `gamma` and
/// `max_points` resolved, so that a federation built from it on other data
/// uses the same grid and the same field: that is how to retrain from
/// scratch for comparison.
///
/// # Example
///
/// ```
/// use mufc::{Channel, FederationConfig};
///
/// let c = FederationConfig::new(4).gamma(0.1).channel(Channel::Plain).validate()?;
/// assert_eq!(c.server().k(), 4);
/// assert_eq!(c.client_k(), 4);
/// assert_eq!(c.gamma(), Some(0.1));
/// assert_eq!(c.channel(), &Channel::Plain);
/// // Back to the builder, to change a setting.
/// let c2 = c.into_builder().seed(7).validate()?;
/// assert_eq!(c2.seed(), 7);
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ValidConfig {
    /// The settings as written, serialized as they are.
    pub(super) config: FederationConfig,
    /// The server part, checked from `config.server`.
    pub(super) server: ServerConfig,
}

/// A checked configuration is saved as its settings (it is checked again
/// when read: [`FederationConfig::validate`]).
impl serde::Serialize for ValidConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.config.serialize(s)
    }
}

impl ValidConfig {
    /// The unchecked builder, to change settings.
    pub fn into_builder(self) -> FederationConfig {
        self.config
    }
    /// The client part.
    pub fn client(&self) -> &ClientConfig {
        &self.config.client
    }
    /// The server part.
    pub fn server(&self) -> &ServerConfig {
        &self.server
    }
    /// The channel part.
    pub fn channel(&self) -> &Channel {
        &self.config.channel
    }

    // The settings outside the parts (grid, seed, run options), and
    // shortcuts to the parts' settings read in many places (the others:
    // through `client()`, `server()` and `channel()`).

    /// The clients' number of clusters: every client's, or, with
    /// [`ClientK::Adaptive`](crate::ClientK::Adaptive), the most a client
    /// finds (resolved from the data when the federation is built; the
    /// server's `k` before).
    pub fn client_k(&self) -> usize {
        match self.config.client.k {
            crate::ClientK::Server => self.server.k(),
            crate::ClientK::Fixed(k) => k,
            crate::ClientK::Adaptive { .. } => {
                self.config.client.resolved_k.unwrap_or(self.server.k())
            }
        }
    }
    /// Whether an adaptive rule's `k` is fixed already (from the data the
    /// federation was built on).
    pub(crate) fn client_k_resolved(&self) -> bool {
        self.config.client.resolved_k.is_some()
    }

    /// How `gamma` is chosen when not given.
    pub fn gamma_rule(&self) -> crate::GammaRule {
        self.config.gamma_rule
    }
    /// The grid step, if set (else [`Self::gamma_rule`]'s at construction).
    pub fn gamma(&self) -> Option<f64> {
        self.config.gamma
    }
    /// Whether the grid is randomly shifted.
    pub fn shift(&self) -> bool {
        self.config.shift
    }
    /// What the clients run.
    pub fn client_training(&self) -> ClientTraining {
        self.config.client.training
    }
    /// The federation seed.
    pub fn seed(&self) -> u64 {
        self.config.seed
    }
    /// Whether clients with fewer distinct points than `k` are accepted.
    pub fn allow_fewer_distinct(&self) -> bool {
        self.config.allow_fewer_distinct
    }
    /// The fewest clients in an aggregate the server sees
    /// ([`FederationConfig::min_clients`]).
    pub fn min_clients(&self) -> usize {
        self.server.min_clients()
    }
    /// The fewest clients whose message an unlearning round may change
    /// ([`FederationConfig::min_updating_clients`]).
    pub fn min_updating_clients(&self) -> usize {
        self.server.min_updating_clients()
    }
    /// The lone-update policy (docs/threat-model.md U3) as every driver
    /// applies it: whether a round of a group of `members` clients (the
    /// whole federation when flat) may change the messages of `updating`
    /// of them. It may once [`Self::min_updating_clients`] change, or
    /// every member when the group has fewer (a group that could never
    /// reach the minimum would wait for ever).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    ///
    /// let c = FederationConfig::new(2).validate()?; // min_updating_clients: 2
    /// assert!(!c.updates_enough(5, 1));
    /// assert!(c.updates_enough(5, 2));
    /// // A group of one member: its one change is enough.
    /// assert!(c.updates_enough(1, 1));
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn updates_enough(&self, members: usize, updating: usize) -> bool {
        updating >= self.min_updating_clients().clamp(1, members.max(1))
    }
    /// How this process runs the federation.
    pub fn run(&self) -> RunOptions {
        self.config.run
    }
    /// Whether the round secrets derive from the seed (insecure, see
    /// [`FederationConfig::insecure_deterministic_masks`]).
    pub fn insecure_deterministic_masks(&self) -> bool {
        self.config.insecure_deterministic_masks
    }
    /// How the clients are organised for aggregation.
    pub fn topology(&self) -> crate::Topology {
        self.config.topology
    }
    /// The bound on the total count, if set.
    pub fn max_points(&self) -> Option<u64> {
        self.config.max_points
    }

    /// This config with `gamma` and `max_points` fixed.
    pub(crate) fn resolved(&self, gamma: f64, max_points: u64) -> Self {
        let mut c = self.clone();
        c.config.gamma = Some(gamma);
        c.config.max_points = Some(max_points);
        c
    }

    /// This config with the clients' `k` fixed (an adaptive rule's, from
    /// the data; a fixed one's stays).
    pub(crate) fn with_client_k(&self, k: usize) -> Self {
        let mut c = self.clone();
        let client = &mut c.config.client;
        if matches!(client.k, crate::ClientK::Adaptive { .. }) && client.resolved_k.is_none() {
            client.resolved_k = Some(k);
        }
        c
    }

    /// What a client of this (resolved) config runs.
    pub(crate) fn local_params(&self) -> crate::client::LocalParams {
        let client = &self.config.client;
        crate::client::LocalParams {
            k: self.client_k(),
            per_cluster: match client.k {
                crate::ClientK::Adaptive {
                    points_per_cluster, ..
                } => Some(points_per_cluster),
                _ => None,
            },
            training: client.training,
            tolerance: client.tolerance,
            max_iterations: client.max_iterations,
            restarts: client.restarts,
            min_cluster_size: client.min_cluster_size,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolved_config_fixes_gamma_and_the_bound() {
        let c = FederationConfig::new(3).validate().unwrap();
        assert_eq!((c.gamma(), c.max_points()), (None, None));
        let r = c.resolved(0.25, 40);
        assert_eq!((r.gamma(), r.max_points()), (Some(0.25), Some(40)));
        assert_eq!(r.clone().into_builder().validate().unwrap(), r);
    }
}
