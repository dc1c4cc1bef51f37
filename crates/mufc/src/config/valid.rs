//! The checked configuration, [`ValidConfig`], and its accessors: the
//! client, server and channel parts, and shortcuts to the settings the
//! federation reads often.

use super::builder::FederationConfig;
use super::channel::Channel;
use super::names::{ClientTraining, Masking, Privacy, SecAggGraph, ServerPoints};
use super::parts::{ClientConfig, ServerConfig};

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
/// use mufc::{Channel, FederationConfig, Privacy};
///
/// let c = FederationConfig::new(4).gamma(0.1).channel(Channel::Plain).validate()?;
/// assert_eq!(c.k(), 4);
/// assert_eq!(c.client_k(), 4);
/// assert_eq!(c.gamma(), Some(0.1));
/// assert_eq!(c.privacy(), Privacy::Plain);
/// // Back to the builder, to change a setting.
/// let c2 = c.into_builder().seed(7).validate()?;
/// assert_eq!(c2.seed(), 7);
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ValidConfig(pub(super) FederationConfig);

impl ValidConfig {
    /// The unchecked builder, to change settings.
    pub fn into_builder(self) -> FederationConfig {
        self.0
    }
    /// The client part.
    pub fn client(&self) -> &ClientConfig {
        &self.0.client
    }
    /// The server part.
    pub fn server(&self) -> &ServerConfig {
        &self.0.server
    }
    /// The channel part.
    pub fn channel(&self) -> &Channel {
        &self.0.channel
    }

    // Shortcuts to the parts' settings, which the federation reads often.

    /// The server's number of clusters `K`.
    pub fn k(&self) -> usize {
        self.0.server.k
    }
    /// Each client's number of clusters.
    pub fn client_k(&self) -> usize {
        self.0.client.k.unwrap_or(self.0.server.k)
    }
    /// The grid step, if set (else `1/sqrt(n)` at construction).
    pub fn gamma(&self) -> Option<f64> {
        self.0.gamma
    }
    /// Whether the grid is randomly shifted.
    pub fn shift(&self) -> bool {
        self.0.shift
    }
    /// The privacy mode ([`Channel::privacy`]).
    pub fn privacy(&self) -> Privacy {
        self.0.channel.privacy()
    }
    /// The mask source ([`Channel::masking`]).
    pub fn masking(&self) -> Masking {
        self.0.channel.masking()
    }
    /// The server points.
    pub fn server_points(&self) -> ServerPoints {
        self.0.server.points
    }
    /// What the clients run.
    pub fn client_training(&self) -> ClientTraining {
        self.0.client.training
    }
    /// The server's tolerance.
    pub fn tolerance(&self) -> f64 {
        self.0.server.tolerance
    }
    /// The server's iteration cap.
    pub fn max_iterations(&self) -> usize {
        self.0.server.max_iterations
    }
    /// The server's number of runs.
    pub fn restarts(&self) -> usize {
        self.0.server.restarts
    }
    /// The clients' tolerance (full training).
    pub fn client_tolerance(&self) -> f64 {
        self.0.client.tolerance
    }
    /// The clients' iteration cap (full training).
    pub fn client_max_iterations(&self) -> usize {
        self.0.client.max_iterations
    }
    /// The federation seed.
    pub fn seed(&self) -> u64 {
        self.0.seed
    }
    /// `r`, the extra check syndromes ([`Channel::extra_syndromes`]).
    pub fn extra_syndromes(&self) -> usize {
        self.0.channel.extra_syndromes()
    }
    /// The cap on the integer decoder's capacity
    /// ([`Channel::integer_max_capacity`]).
    pub fn integer_max_capacity(&self) -> usize {
        self.0.channel.integer_max_capacity()
    }
    /// Whether clients with fewer distinct points than `k` are accepted.
    pub fn allow_fewer_distinct(&self) -> bool {
        self.0.allow_fewer_distinct
    }
    /// The fewest clients in an aggregate the server sees
    /// ([`FederationConfig::min_clients`]).
    pub fn min_clients(&self) -> usize {
        self.0.server.min_clients
    }
    /// The fewest clients whose message an unlearning round may change
    /// ([`FederationConfig::min_updating_clients`]).
    pub fn min_updating_clients(&self) -> usize {
        self.0.server.min_updating_clients
    }
    /// Whether clients run in parallel.
    pub fn parallel(&self) -> bool {
        self.0.parallel
    }
    /// Whether the last round's frames are kept.
    pub fn record_messages(&self) -> bool {
        self.0.record_messages
    }
    /// Whether the round secrets derive from the seed (insecure, see
    /// [`FederationConfig::insecure_deterministic_masks`]).
    pub fn insecure_deterministic_masks(&self) -> bool {
        self.0.insecure_deterministic_masks
    }
    /// The bound on the total count, if set.
    pub fn max_points(&self) -> Option<u64> {
        self.0.max_points
    }
    /// The dropout rate ([`Channel::dropout`]).
    pub fn dropout(&self) -> f64 {
        self.0.channel.dropout()
    }
    /// The colluding fraction ([`Channel::colluding`]).
    pub fn colluding(&self) -> f64 {
        self.0.channel.colluding()
    }
    /// The neighbourhood graph ([`Channel::secagg_graph`]).
    pub fn secagg_graph(&self) -> SecAggGraph {
        self.0.channel.secagg_graph()
    }

    /// This config with `gamma` and `max_points` fixed.
    pub(crate) fn resolved(&self, gamma: f64, max_points: u64) -> Self {
        let mut c = self.0.clone();
        c.gamma = Some(gamma);
        c.max_points = Some(max_points);
        Self(c)
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
