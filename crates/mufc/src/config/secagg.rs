//! The options of SecAgg (dropout rate, colluding fraction, neighbourhood
//! graph) and how the protocol is planned from them: the threshold and the
//! colluders the complete graph is sized for, from `syndrome_agg`'s threat
//! model, so that the aggregation and a command line's pre-check use one
//! rule.

use syndrome_agg::secagg::params::{ServerModel, ThreatModel};

use super::names::SecAggGraph;
use crate::MufcResult;
use crate::error::config_error;

/// The default fraction of clients assumed to collude with the server in
/// [`Masks::SecAgg`](crate::Masks::SecAgg) ([`SecAggOptions::colluding`]).
pub(crate) const DEFAULT_COLLUDING: f64 = 0.05;

/// The settings of [`Masks::SecAgg`](crate::Masks::SecAgg): the simulated dropout rate, the
/// fraction of clients assumed to collude with the server, and the
/// neighbourhood graph. Checked by
/// [`FederationConfig::validate`](crate::FederationConfig::validate).
///
/// # Example
///
/// ```
/// use mufc::{Channel, FederationConfig, Masks, MufcError, Scma, SecAggOptions};
///
/// let secagg = |rate| Channel::Scma(Scma::field(Masks::SecAgg(SecAggOptions::new().dropout(rate))));
/// let c = FederationConfig::new(3).channel(secagg(0.2)).validate()?;
/// let Some(Masks::SecAgg(options)) = c.channel().as_scma().map(Scma::masks) else { unreachable!() };
/// assert_eq!(options.dropout_rate(), 0.2);
/// let err = FederationConfig::new(3).channel(secagg(1.0)).validate();
/// assert!(matches!(err, Err(MufcError::InvalidConfig { param: mufc::ConfigParam::Dropout, .. })));
/// # Ok::<(), MufcError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SecAggOptions {
    dropout: f64,
    colluding: f64,
    graph: SecAggGraph,
}

impl Default for SecAggOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl SecAggOptions {
    /// No dropouts, 5 % colluders, the complete graph.
    pub fn new() -> Self {
        Self {
            dropout: 0.0,
            colluding: DEFAULT_COLLUDING,
            graph: SecAggGraph::Complete,
        }
    }

    /// The probability that a client drops out of a round, in `[0, 1)`
    /// (default 0). Each client that drops does so from one of the
    /// protocol's steps (advertise keys, share keys, masked input,
    /// unmasking), uniformly; draws are a function of the federation seed,
    /// the round and the client (a simulation input, reproducible). A
    /// failed round consumes its round number, so a retry draws afresh.
    #[must_use]
    pub fn dropout(mut self, rate: f64) -> Self {
        self.dropout = rate;
        self
    }

    /// The fraction of clients assumed to collude with the server, in
    /// `[0, 1)` (default 0.05), from which the threshold
    /// is sized: `c = floor(fraction n)` colluders on the complete graph,
    /// or the finder's bound on the colluders among one client's
    /// neighbours on a Harary graph.
    #[must_use]
    pub fn colluding(mut self, fraction: f64) -> Self {
        self.colluding = fraction;
        self
    }

    /// The neighbourhood graph (default [`SecAggGraph::Complete`]).
    #[must_use]
    pub fn graph(mut self, graph: SecAggGraph) -> Self {
        self.graph = graph;
        self
    }

    /// The dropout rate.
    pub fn dropout_rate(&self) -> f64 {
        self.dropout
    }

    /// The colluding fraction.
    pub fn colluding_fraction(&self) -> f64 {
        self.colluding
    }

    /// The neighbourhood graph.
    pub fn neighbourhood(&self) -> SecAggGraph {
        self.graph
    }

    pub(super) fn validate(&self) -> MufcResult<()> {
        for (name, r) in [
            (crate::ConfigParam::Dropout, self.dropout),
            (crate::ConfigParam::Colluding, self.colluding),
        ] {
            if !(0.0..1.0).contains(&r) {
                return Err(config_error(name, format!("{r} is not in [0, 1)")));
            }
        }
        Ok(())
    }
}

/// How SecAgg is planned for a round of `n` clients on the complete graph
/// ([`SecAggOptions::complete_graph_plan`]): the server may lie about who
/// dropped, so the threshold `t` is the least `t >= 2` with `2t > n + c`.
///
/// # Example
///
/// ```
/// use mufc::SecAggOptions;
///
/// let plan = SecAggOptions::new().dropout(0.2).colluding(0.1).complete_graph_plan(10)?;
/// assert_eq!((plan.colluders, plan.threshold, plan.dropouts), (1, 6, 2));
/// assert!(plan.survives()); // 8 clients left, 6 needed
/// let plan = SecAggOptions::new().dropout(0.5).complete_graph_plan(10)?;
/// assert!(!plan.survives()); // 5 left, 6 needed
/// # Ok::<(), mufc::MufcError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SecAggPlan {
    /// The number of clients `n`.
    pub clients: usize,
    /// The colluders the threshold is sized against: `floor(colluding n)`,
    /// at most `n - 1`.
    pub colluders: usize,
    /// The threshold `t`: how many clients must reach the unmasking.
    pub threshold: usize,
    /// The dropouts planned for: `ceil(dropout n)`, at most `n`.
    pub dropouts: usize,
}

impl SecAggPlan {
    /// Whether the clients left after the planned dropouts reach the
    /// threshold (else a round with that many dropouts fails cleanly).
    pub fn survives(&self) -> bool {
        self.clients - self.dropouts >= self.threshold
    }
}

impl SecAggOptions {
    /// The complete graph's plan for `clients` clients: the threshold and
    /// colluders of `syndrome_agg`'s threat model for a lying server, and
    /// the dropouts the rate plans for (the same numbers a round uses).
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidConfig`](crate::MufcError::InvalidConfig) for
    /// fewer than two clients or rates outside `[0, 1)`.
    pub fn complete_graph_plan(&self, clients: usize) -> MufcResult<SecAggPlan> {
        let model = ThreatModel::new(clients, 0.0, self.colluding, ServerModel::SemiMalicious);
        let params = model
            .complete()
            .map_err(|e| config_error(crate::ConfigParam::Colluding, e.to_string()))?;
        Ok(SecAggPlan {
            clients,
            colluders: params.max_colluders,
            threshold: params.threshold,
            dropouts: planned_dropouts(self.dropout, clients),
        })
    }
}

/// The dropouts a rate plans for among `n` clients: `ceil(rate n)`, at most
/// `n` (the threat model's finder rounds down, which for small federations
/// would plan for none).
pub(crate) fn planned_dropouts(rate: f64, n: usize) -> usize {
    // Exact for the rates and client counts of a configuration.
    #[allow(
        clippy::cast_precision_loss,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )]
    let d = (rate * n as f64).ceil() as usize;
    d.min(n)
}

impl SecAggOptions {
    /// The group size for `clients` clients by the dynamic-users paper's
    /// ParGen (`syndrome_agg::secagg::groups::GroupParams::par_gen`, with
    /// the corrections its module docs give), for
    /// [`Topology::Groups`](crate::Topology::Groups) and
    /// [`Topology::Tree`](crate::Topology::Tree): the least size at which,
    /// with these colluding and dropout rates and a fraction
    /// `removal_rate` of a group removed, every group keeps fewer
    /// colluders than its threshold and more survivors than it, except
    /// with probability `2^-40`. The threshold rate is the one that needs
    /// the smallest groups: halfway between the colluding rate and
    /// `1 - dropout - removal_rate`, so that both margins are equal.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidConfig`](crate::MufcError::InvalidConfig) when
    /// the rates leave no margin or no size up to `clients` meets the
    /// conditions (small federations: take the whole federation as one
    /// group, or accept a weaker guarantee with a size of your own).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::SecAggOptions;
    ///
    /// let options = SecAggOptions::new().dropout(0.05).colluding(0.05);
    /// let b = options.group_size(1000, 0.05)?;
    /// assert!(b > 50 && b < 500);
    /// // No size fits among 100 clients with 30 % dropping out.
    /// assert!(SecAggOptions::new().dropout(0.3).group_size(100, 0.05).is_err());
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn group_size(&self, clients: usize, removal_rate: f64) -> MufcResult<usize> {
        use syndrome_agg::secagg::groups::GroupParams;
        let margin = 1.0 - self.dropout - removal_rate;
        if !(0.0..1.0).contains(&removal_rate) || margin <= self.colluding {
            return Err(config_error(
                crate::ConfigParam::RemovalRate,
                format!(
                    "colluding {} + dropout {} + removal {removal_rate} leave no room for a threshold",
                    self.colluding, self.dropout
                ),
            ));
        }
        let params = GroupParams {
            clients,
            colluding_rate: self.colluding,
            dropout_rate: self.dropout,
            removal_rate,
            threshold_rate: f64::midpoint(self.colluding, margin),
            security_bits: 40.0,
            correctness_bits: 40.0,
        };
        params
            .par_gen()
            .map(|s| s.group_size)
            .map_err(|e| config_error(crate::ConfigParam::GroupSize, e.to_string()))
    }
}
