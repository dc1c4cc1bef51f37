//! Checking a configuration: [`FederationConfig::validate`], and the
//! deserialization of a [`ValidConfig`], which validates too, so that the
//! only ways into a [`ValidConfig`] check every setting.

use super::builder::FederationConfig;
use super::channel::Channel;
use super::valid::ValidConfig;
use crate::MufcResult;
use crate::error::config_error;

impl FederationConfig {
    /// Checks every setting.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidConfig`](crate::MufcError::InvalidConfig) naming
    /// the setting: `k` or `client_k` zero, `gamma` not finite and
    /// positive, a tolerance negative or not finite, an iteration cap or
    /// restart count of zero, `max_points` zero, `min_clients` or
    /// `min_updating_clients` zero, a SecAgg dropout rate or colluding
    /// fraction outside `[0, 1)`, a [`Topology`](crate::Topology) whose
    /// groups are smaller than `min_clients` or whose fan-out is below 2,
    /// or groups in the plain mode. Combinations that cannot work (SecAgg in
    /// the integer ring or the plain mode, dropouts without SecAgg) cannot
    /// be written: see [`Channel`].
    pub fn validate(self) -> MufcResult<ValidConfig> {
        let server = self.server.checked()?;
        match self.client.k {
            crate::ClientK::Fixed(0) => {
                return Err(config_error(
                    crate::ConfigParam::ClientK,
                    "clients need at least one cluster",
                ));
            }
            crate::ClientK::Adaptive {
                points_per_cluster,
                server_points,
                double_from,
            } if points_per_cluster == 0 || server_points == 0 || double_from == 0 => {
                return Err(config_error(
                    crate::ConfigParam::ClientK,
                    "the adaptive rule needs at least one point a cluster, one server point and \
                     one point a cluster to double from",
                ));
            }
            _ => {}
        }
        if self.client.min_cluster_size == 0 {
            return Err(config_error(
                crate::ConfigParam::MinClusterSize,
                "must be at least 1 (1 sends every cluster)",
            ));
        }
        self.validate_numbers()?;
        self.channel.validate()?;
        self.validate_topology()?;
        Ok(ValidConfig {
            config: self,
            server,
        })
    }
}

impl FederationConfig {
    /// The numeric settings: `gamma` finite and positive, tolerances
    /// finite and non-negative, iteration caps, restart counts,
    /// `max_points` and the policies' minimums at least 1.
    fn validate_numbers(&self) -> MufcResult<()> {
        if let Some(g) = self.gamma
            && !(g > 0.0 && g.is_finite())
        {
            return Err(config_error(
                crate::ConfigParam::Gamma,
                format!("{g} is not finite and positive"),
            ));
        }
        let t = self.client.tolerance;
        if !(t >= 0.0 && t.is_finite()) {
            return Err(config_error(
                crate::ConfigParam::ClientTolerance,
                format!("{t} is not finite and non-negative"),
            ));
        }
        for (name, v) in [
            (
                crate::ConfigParam::ClientMaxIterations,
                self.client.max_iterations,
            ),
            (crate::ConfigParam::ClientRestarts, self.client.restarts),
        ] {
            if v == 0 {
                return Err(config_error(name, "must be at least 1"));
            }
        }
        if self.max_points == Some(0) {
            return Err(config_error(
                crate::ConfigParam::MaxPoints,
                "must be at least 1",
            ));
        }
        for (name, m) in [
            (crate::ConfigParam::MinClients, self.server.min_clients),
            (
                crate::ConfigParam::MinUpdatingClients,
                self.server.min_updating_clients,
            ),
        ] {
            if m == 0 {
                return Err(config_error(name, "must be at least 1"));
            }
        }
        Ok(())
    }

    /// Groups of at least `min_clients` (the server decodes each group's
    /// sum), a fan-out of at least 2, and an aggregate to split (the plain
    /// mode sends centroids in the clear: groups would hide nothing).
    fn validate_topology(&self) -> MufcResult<()> {
        let Some(size) = self.topology.group_size() else {
            return Ok(());
        };
        if size < self.server.min_clients {
            return Err(config_error(
                crate::ConfigParam::GroupSize,
                format!(
                    "{size} is below min_clients ({}): the server decodes each group's sum",
                    self.server.min_clients
                ),
            ));
        }
        if let Some(f) = self.topology.fan_out()
            && f < 2
        {
            return Err(config_error(
                crate::ConfigParam::FanOut,
                "must be at least 2",
            ));
        }
        if self.channel == Channel::Plain {
            return Err(groups_need_scma());
        }
        Ok(())
    }
}

/// The error of groups without an aggregate to split.
pub(crate) fn groups_need_scma() -> crate::MufcError {
    config_error(
        crate::ConfigParam::Topology,
        "groups need an SCMA channel (the plain mode sends centroids in the clear)",
    )
}

impl<'de> serde::Deserialize<'de> for ValidConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        FederationConfig::deserialize(d)?
            .validate()
            .map_err(serde::de::Error::custom)
    }
}
