//! What removal rounds cost, round by round, and the table that sets
//! topologies side by side (`mufc unlearn --topology`, `mufc
//! topologies`).

use mufc::{Federation, StageTimes, Topology};
use serde_json::{Value, json};

use crate::federated::secs;
use crate::output::TextTable;

/// The figures of one round, in the order of [`LABELS`] and [`KEYS`].
pub(super) type Figures = [f64; 7];

/// The rows of the table.
const LABELS: [&str; 7] = [
    "clients involved (client-rounds)",
    "messages the clients sent",
    "groups that ran a round",
    "models updated",
    "bytes the clients sent",
    "time (paper count)",
    "wall clock",
];

/// The rows of the groups that ran a round and of the models updated
/// (not costs: no ratio), of the bytes, and of the two times.
const GROUPS: usize = 2;
const MODELS: usize = 3;
const BYTES: usize = 4;
const TIMES: [usize; 2] = [5, 6];

/// The JSON keys.
const KEYS: [&str; 7] = [
    "clients_involved",
    "messages",
    "groups",
    "models_updated",
    "bytes",
    "seconds_paper",
    "seconds_wall",
];

/// The figures of every applied removal round of one federation.
#[derive(Default)]
pub(super) struct RoundCosts(Vec<Figures>);

impl RoundCosts {
    /// Records the round `fed` has just applied, which took `times`.
    pub(super) fn push(&mut self, fed: &Federation, times: &StageTimes) {
        let who = fed.last_involvement().cloned().unwrap_or_default();
        self.0.push([
            who.clients as f64,
            who.messages as f64,
            who.groups.len() as f64,
            who.nodes as f64,
            who.bytes as f64,
            secs(times.paper()),
            secs(times.wall),
        ]);
    }

    /// The rounds recorded.
    pub(super) fn rounds(&self) -> usize {
        self.0.len()
    }

    /// The clients involved, over every round: the rounds across all
    /// clients, as the TreeAvg poster counts them.
    pub(super) fn client_rounds(&self) -> f64 {
        self.0.iter().map(|f| f[0]).sum()
    }

    /// `stat` of each figure over the rounds.
    pub(super) fn summary(&self, stat: fn(&[f64]) -> f64) -> Figures {
        std::array::from_fn(|k| stat(&self.0.iter().map(|f| f[k]).collect::<Vec<_>>()))
    }
}

/// The mean of `v` (NaN when empty).
pub(super) fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// `figures` as a JSON object.
pub(super) fn figures_json(figures: &Figures) -> Value {
    let mut m = serde_json::Map::new();
    for (k, x) in KEYS.iter().zip(figures) {
        m.insert((*k).to_string(), json!(x));
    }
    Value::Object(m)
}

/// A short name of `topology` for a column head.
pub(super) fn column_name(topology: Topology) -> String {
    match topology {
        Topology::Tree {
            group_size,
            fan_out,
        } => format!("tree (B {group_size}, F {fan_out})"),
        Topology::Groups { size } => format!("groups (B {size})"),
        _ => "flat".into(),
    }
}

/// The table of `sides` (a name and its figures), flat first, with the
/// ratio of flat's figure to each other side's.
pub(super) fn table(stat: &str, sides: &[(String, Figures)]) -> String {
    let mut head = vec![format!("per removal round ({stat})")];
    head.extend(sides.iter().map(|(n, _)| n.clone()));
    head.extend(sides[1..].iter().map(|(n, _)| {
        let short = n.split(' ').next().unwrap_or(n);
        format!("flat / {short}")
    }));
    let refs: Vec<&str> = head.iter().map(String::as_str).collect();
    let mut table = TextTable::new(&refs);
    for (k, label) in LABELS.iter().enumerate() {
        let fmt = |x: f64| match k {
            _ if TIMES.contains(&k) => format!("{:.3} ms", x * 1e3),
            BYTES => format!("{x:.0}"),
            _ => format!("{x:.1}"),
        };
        let mut row = vec![label.to_string()];
        for (i, (_, f)) in sides.iter().enumerate() {
            // Flat has no groups.
            row.push(if k == GROUPS && i == 0 {
                "-".into()
            } else {
                fmt(f[k])
            });
        }
        let flat = sides[0].1[k];
        for (_, f) in &sides[1..] {
            // Groups and models are not costs to compare.
            row.push(if k == GROUPS || k == MODELS {
                String::new()
            } else {
                format!("{:.1}x", flat / f[k])
            });
        }
        table.row(row);
    }
    table.render()
}
