//! Helpers shared by the `secagg_threats_*` test files (the threat-model
//! cases of docs/threat-model.md §9); the session harness and fixtures
//! themselves are `sum_testkit::secagg`.

use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel};

/// Complete-graph parameters with threshold `t`, no colluders, a
/// semi-honest server.
pub(crate) fn complete(t: usize) -> SecAggParams {
    SecAggParams::new(GraphChoice::Complete, t, 0, ServerModel::SemiHonest)
}
