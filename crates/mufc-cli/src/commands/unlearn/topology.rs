//! `mufc unlearn --topology groups|tree`: the same requests served by a
//! flat federation alongside, so that each removal's cost (clients
//! involved, their bytes, time) is printed next to flat's.

use mufc::{Federation, RemovalReport, RemovalRequest, Topology};
use serde_json::{Value, json};

use super::super::costs::{RoundCosts, column_name, figures_json, mean, table};
use crate::CliError;

/// A flat federation serving the same requests as a grouped one, and
/// both costs of every applied round.
pub(super) struct NextToFlat {
    topology: Topology,
    flat: Federation,
    flat_costs: RoundCosts,
    grouped_costs: RoundCosts,
}

impl NextToFlat {
    /// A flat federation on `clients` with `config` made flat; `None`
    /// when `config` is flat already.
    pub(super) fn new(
        clients: &[seeding::Dataset],
        config: &mufc::ValidConfig,
    ) -> Result<Option<Self>, CliError> {
        let topology = config.topology();
        if topology == Topology::Flat {
            return Ok(None);
        }
        let flat_config = config
            .clone()
            .into_builder()
            .topology(Topology::Flat)
            .validate()?;
        Ok(Some(Self {
            topology,
            flat: Federation::new(clients.to_vec(), &flat_config)?,
            flat_costs: RoundCosts::default(),
            grouped_costs: RoundCosts::default(),
        }))
    }

    /// Serves `request` (or, with `None`, the flush) on the flat
    /// federation too and keeps both costs when `grouped` (of
    /// `grouped_fed`) was applied.
    pub(super) fn serve(
        &mut self,
        request: Option<&RemovalRequest>,
        grouped: &RemovalReport,
        grouped_fed: &Federation,
    ) -> Result<(), CliError> {
        let flat = match request {
            Some(r) => Some(self.flat.remove(r)?),
            None => self.flat.flush()?,
        };
        if let Some(f) = flat
            && !grouped.outcome.is_deferred()
        {
            self.grouped_costs.push(grouped_fed, &grouped.times);
            self.flat_costs.push(&self.flat, &f.times);
        }
        Ok(())
    }

    /// The figures, as JSON.
    pub(super) fn json(&self) -> Value {
        let (g, f) = (
            self.grouped_costs.summary(mean),
            self.flat_costs.summary(mean),
        );
        json!({
            "topology": self.topology.name(),
            "group_size": self.topology.group_size(),
            "fan_out": self.topology.fan_out(),
            "rounds": self.grouped_costs.rounds(),
            "per_round_mean": figures_json(&g),
            "flat_per_round_mean": figures_json(&f),
            "wall_speedup_over_flat": f[5] / g[5],
            "paper_speedup_over_flat": f[4] / g[4],
        })
    }

    /// The table: per removal round, flat next to the grouped one.
    pub(super) fn text(&self) -> String {
        let sides = [
            ("flat".to_string(), self.flat_costs.summary(mean)),
            (column_name(self.topology), self.grouped_costs.summary(mean)),
        ];
        format!(
            "\nthe same {} removal rounds, flat alongside:\n{}",
            self.grouped_costs.rounds(),
            table("mean", &sides)
        )
    }
}
