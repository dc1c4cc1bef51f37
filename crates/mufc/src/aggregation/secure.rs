//! The settings of the dropout-tolerant aggregation of
//! [`Masking::SecAgg`](crate::Masking::SecAgg): one run of the protocol of
//! `syndrome_agg::secagg` (Bonawitz et al. 2017, SecAgg+) per round, by the
//! parties (`secagg_halves.rs`), driven in one process
//! (`remote::InProcess`, with the dropouts of the round drawn here) or
//! across processes (`mufc-net`).

use syndrome_agg::secagg::Step;
use syndrome_agg::secagg::params::{GraphChoice, SecAggParams, ServerModel, ThreatModel};
use syndrome_agg::{ProtocolError, SketchError};

use crate::config::planned_dropouts;
use crate::error::config_error;
use crate::ids::dropout_draw;
use crate::{ClientId, MufcError, MufcResult, SecAggGraph};

/// The steps a simulated dropout happens at, drawn uniformly: the four
/// steps of the protocol before the consistency round existed, so that the
/// draws (and the recorded figures) did not change when it was added. A
/// client that leaves after its masked input is included either way.
const DROPOUT_STEPS: [Step; 4] = [
    Step::AdvertiseKeys,
    Step::ShareKeys,
    Step::MaskedInput,
    Step::Unmasking,
];

/// The settings of the protocol, from the configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct SecAggSettings {
    pub(crate) seed: u64,
    pub(crate) dropout: f64,
    pub(crate) colluding: f64,
    pub(crate) graph: SecAggGraph,
    pub(crate) min_clients: usize,
}

/// The dropout fraction the parameters are planned for: the planned
/// dropouts ([`planned_dropouts`], `ceil(rate n)`) over `n`.
#[allow(clippy::cast_precision_loss)] // n is far below 2^53
fn planned_dropout(rate: f64, n: usize) -> f64 {
    planned_dropouts(rate, n) as f64 / n as f64
}

/// What the error of a failed round names: the protocol's "not enough
/// clients" becomes [`MufcError::TooManyDropouts`], in one process
/// (simulated dropouts) and across processes (`remote.rs`).
#[derive(Clone, Copy, Debug)]
pub(super) struct RoundFailure {
    pub(super) round: u64,
    pub(super) clients: usize,
    pub(super) threshold: usize,
    pub(super) min_clients: usize,
}

impl RoundFailure {
    /// The library's error for the protocol's `e`, with `dropped` of the
    /// round's clients out.
    pub(super) fn error(&self, e: SketchError, dropped: usize) -> MufcError {
        match e {
            SketchError::Protocol(ProtocolError::NotEnoughClients { step, have, need }) => {
                MufcError::TooManyDropouts {
                    round: self.round,
                    clients: self.clients,
                    dropped,
                    step,
                    have,
                    need,
                    threshold: self.threshold,
                    min_clients: self.min_clients,
                }
            }
            other => other.into(),
        }
    }
}

impl SecAggSettings {
    /// The protocol's parameters for a round of `n` clients: the server
    /// may lie about who dropped (threshold `2t > h + c`), the graph and
    /// threshold from the threat model of the configured rates, planned
    /// for `ceil(rate n)` dropouts.
    pub(crate) fn params(&self, n: usize) -> MufcResult<SecAggParams> {
        let mut params = if n < 2 {
            // A lone client: nothing to hide from peers, and the threat
            // model needs two; the threshold 1 still passes `2t > h + c`.
            SecAggParams::new(GraphChoice::Complete, 1, 0, ServerModel::SemiMalicious)
        } else {
            let model = ThreatModel::new(
                n,
                planned_dropout(self.dropout, n),
                self.colluding,
                ServerModel::SemiMalicious,
            );
            let found = match self.graph {
                SecAggGraph::Complete => model.complete(),
                SecAggGraph::Harary => model.find(),
            };
            found.map_err(|e| {
                config_error(
                    crate::ConfigParam::Dropout,
                    format!(
                        "no secure aggregation parameters for {n} clients with dropout rate {} \
                         and colluding fraction {}: {e}",
                        self.dropout, self.colluding
                    ),
                )
            })?
        };
        params.min_clients = self.min_clients.max(params.threshold);
        Ok(params)
    }

    /// The first step client `c` misses in round `round` of a simulation
    /// (a function of the federation seed and the round: a failed round
    /// consumes its number, so a retry draws afresh), if it drops out.
    pub(crate) fn dropped_from(&self, round: u64, c: ClientId) -> Option<Step> {
        dropout_draw(self.seed, self.dropout, round, c)
            .map(|step| DROPOUT_STEPS.get(step).copied().unwrap_or(Step::Unmasking))
    }
}

/// The included and dropped clients of a protocol run
/// ([`syndrome_agg::secagg::AggregationOutput`]), as the federation names
/// them.
pub(super) fn clients_of<E>(
    out: &syndrome_agg::secagg::AggregationOutput<E>,
) -> (Vec<ClientId>, Vec<(ClientId, Step)>) {
    (
        out.included.iter().copied().map(ClientId).collect(),
        out.dropped
            .iter()
            .map(|(c, s)| (ClientId(*c), *s))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(graph: SecAggGraph, dropout: f64) -> SecAggSettings {
        SecAggSettings {
            seed: 1,
            dropout,
            colluding: crate::config::secagg::DEFAULT_COLLUDING,
            graph,
            min_clients: 1,
        }
    }

    #[test]
    fn parameters_follow_the_graph_and_the_rates() {
        // Complete graph, 10 clients, no colluder (floor(0.05 * 10) = 0):
        // 2t > 10 gives t = 6, reachable after floor(0.2 * 10) = 2 drops.
        let p = settings(SecAggGraph::Complete, 0.2).params(10).unwrap();
        assert_eq!(
            (p.graph, p.threshold, p.min_clients),
            (GraphChoice::Complete, 6, 6)
        );
        // SecAgg+ for 40 clients: a Harary graph of small degree.
        let p = settings(SecAggGraph::Harary, 0.1).params(40).unwrap();
        let GraphChoice::Harary { degree } = p.graph else {
            panic!("expected a Harary graph, got {:?}", p.graph)
        };
        assert!(degree < 39 && 2 * p.threshold > degree + 1 + p.max_colluders);
        // Too few clients for a Harary graph: the finder falls back.
        let p = settings(SecAggGraph::Harary, 0.1).params(4).unwrap();
        assert_eq!(p.graph, GraphChoice::Complete);
        // A lone client, and a minimum aggregate above the threshold.
        assert_eq!(
            settings(SecAggGraph::Complete, 0.2)
                .params(1)
                .unwrap()
                .threshold,
            1
        );
        let mut s = settings(SecAggGraph::Complete, 0.0);
        s.min_clients = 9;
        assert_eq!(s.params(10).unwrap().min_clients, 9);
        // More dropouts than any threshold survives.
        assert!(matches!(
            settings(SecAggGraph::Complete, 0.6).params(10),
            Err(MufcError::InvalidConfig {
                param: crate::ConfigParam::Dropout,
                ..
            })
        ));
    }

    #[test]
    fn faults_are_the_draws_of_the_round() {
        let s = settings(SecAggGraph::Complete, 0.5);
        let ids: Vec<ClientId> = (0..40).map(ClientId).collect();
        let draws = |round: u64| -> Vec<Option<Step>> {
            ids.iter().map(|&c| s.dropped_from(round, c)).collect()
        };
        let f = draws(3);
        let dropped = f.iter().filter(|d| d.is_some()).count();
        assert!(dropped > 0 && dropped < ids.len());
        for (c, d) in ids.iter().zip(&f) {
            let step = dropout_draw(1, 0.5, 3, *c).map(|i| DROPOUT_STEPS[i]);
            assert_eq!(*d, step);
        }
        assert_ne!(draws(4), f);
    }
}
