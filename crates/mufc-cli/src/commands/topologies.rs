//! `mufc topologies`: flat against groups against a tree, the same
//! removal requests served by the three in one run.

use std::time::Instant;

use mufc::{ClientId, Federation, Layout, RemovalRequest, Topology, ValidConfig};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use seeding::Dataset;
use serde_json::{Value, json};

use super::costs::{Figures, RoundCosts, column_name, figures_json, table};
use super::prepare::{Prepared, invalid, prepare};
use super::summary::{data_json, fed_summary, median, merged, settings_json};
use super::trials::{fed_config, trial_seed};
use crate::CliError;
use crate::cli::TopologiesArgs;
use crate::federated::{self, secs};
use crate::output::Report;
use crate::progress::Progress;
use crate::random::{below, derive_seed, tag};

/// One topology's federation and the costs of its removal rounds.
struct Side {
    name: String,
    fed: Federation,
    fit_wall: f64,
    costs: RoundCosts,
}

/// A request of one point of each of two distinct clients of one group
/// (drawn at random), the same for every topology: the clients who leave
/// together live together, as in the TreeAvg poster's experiment.
fn request(
    layout: &Layout,
    fed: &Federation,
    rng: &mut ChaCha8Rng,
) -> Result<RemovalRequest, CliError> {
    let groups: Vec<&Vec<ClientId>> = layout.groups().iter().filter(|g| g.len() >= 2).collect();
    if groups.is_empty() {
        return Err(CliError::NoData("no group with two clients"));
    }
    let group = groups[below(rng, groups.len())];
    // Clients with more than one point, so that none leaves whole.
    let able: Vec<ClientId> = group
        .iter()
        .copied()
        .filter(|c| fed.client(*c).is_some_and(|x| x.data().len() > 1))
        .collect();
    if able.len() < 2 {
        return Err(CliError::NoData(
            "a group's clients have too few points left",
        ));
    }
    let i = below(rng, able.len());
    let mut j = below(rng, able.len() - 1);
    if j >= i {
        j += 1;
    }
    let mut req = RemovalRequest::new();
    for c in [able[i], able[j]] {
        let data = fed
            .client(c)
            .map(|x| x.data())
            .ok_or(CliError::NoData("a client left"))?;
        req = req.with_points(c, vec![data.id(below(rng, data.len()))]);
    }
    Ok(req)
}

/// `mufc topologies`: trains the same data flat, in groups of
/// `--group-size` and as a tree of fan-out `--fan-out` over the same
/// groups (`--topology` is not read), serves the same `--removals`
/// requests with the three (each names one point of two clients of one
/// group), and prints per removal round the medians of the clients
/// involved (the TreeAvg poster's client-rounds), the groups and models
/// touched, the bytes the clients sent and the time (paper count and wall
/// clock), with the ratios of flat's to each; the roots' models must be
/// equal bit for bit, and their loss ratio is printed.
///
/// # Errors
///
/// As [`prepare`] and the `mufc` library; [`CliError::InvalidParameter`]
/// for zero removals.
pub fn topologies(a: &TopologiesArgs, progress: bool) -> Result<Report, CliError> {
    if a.removals == 0 {
        return Err(invalid("removals", 0, "must be at least 1"));
    }
    let seed = a.common.seed;
    let start = Instant::now();
    let mut p = prepare(&a.data, &a.fed, seed)?;
    let config = fed_config(&p, &a.fed, trial_seed(seed, 0))?;
    let clients = p.split.client_datasets(&p.points)?;
    let phi_star = p.phi_c_star(a.data.restarts, seed)?;
    let shapes = shapes(a, clients.len())?;
    let mut bar = Progress::new((shapes.len() + a.removals) as u64, "topologies", progress);
    let mut sides = train(shapes, &config, &clients, &mut bar)?;
    serve(&mut sides, a.removals, seed, &mut bar)?;
    bar.finish();
    let end = Ending::of(&sides, phi_star)?;
    let total = start.elapsed().as_secs_f64();
    let json = merged(
        merged(
            json!({ "command": "topologies" }),
            merged(data_json(&p, seed), settings_json(&a.fed, &p)?),
        ),
        end.json(a, &sides, total),
    );
    let text = end.text(a, &p, &sides, total);
    let warnings: Vec<String> = end
        .root_difference
        .map(|d| format!("the roots differ ({d}): a bug, please report it"))
        .into_iter()
        .collect();
    Ok(Report {
        json,
        text,
        warnings: p.warnings.iter().cloned().chain(warnings).collect(),
        exit: 0,
    })
}

/// The three topologies compared: flat, groups of `--group-size`, and a
/// tree of fan-out `--fan-out` over the same groups.
fn shapes(a: &TopologiesArgs, clients: usize) -> Result<[Topology; 3], CliError> {
    let layout = &a.fed.layout;
    let (b, f) = (layout.group_size(clients, a.fed.dropout)?, layout.fan_out);
    Ok([
        Topology::Flat,
        Topology::Groups { size: b },
        Topology::Tree {
            group_size: b,
            fan_out: f,
        },
    ])
}

/// Trains the same clients in each topology, in the order given.
fn train(
    shapes: [Topology; 3],
    config: &ValidConfig,
    clients: &[Dataset],
    bar: &mut Progress,
) -> Result<Vec<Side>, CliError> {
    let mut sides = Vec::with_capacity(shapes.len());
    for t in shapes {
        let name = column_name(t);
        let c = config.clone().into_builder().topology(t).validate()?;
        let fed = Federation::new(clients.to_vec(), &c)?;
        let fit_wall = secs(fed.fit_report().times.wall);
        sides.push(Side {
            name,
            fed,
            fit_wall,
            costs: RoundCosts::default(),
        });
        bar.inc(1);
    }
    Ok(sides)
}

/// Serves the same `removals` requests with every side, each drawn from
/// the tree's groups.
fn serve(
    sides: &mut [Side],
    removals: usize,
    seed: u64,
    bar: &mut Progress,
) -> Result<(), CliError> {
    let layout = sides[2]
        .fed
        .layout()
        .cloned()
        .ok_or(CliError::NoData("the tree has no layout"))?;
    let mut rng = ChaCha8Rng::seed_from_u64(derive_seed(seed, tag::REMOVALS, 0));
    for _ in 0..removals {
        let req = request(&layout, &sides[0].fed, &mut rng)?;
        for side in &mut *sides {
            let r = side.fed.remove(&req)?;
            side.costs.push(&side.fed, &r.times);
        }
        bar.inc(1);
    }
    Ok(())
}

/// Where the sides stand after the removals: whether their roots agree,
/// their loss ratios, and the medians of their rounds' costs.
struct Ending {
    root_difference: Option<String>,
    loss: Vec<f64>,
    rows: Vec<(String, Figures)>,
}

impl Ending {
    fn of(sides: &[Side], phi_star: f64) -> Result<Self, CliError> {
        // The roots are flat MUFC's: checked, not assumed.
        let root_difference = sides[1..]
            .iter()
            .find_map(|s| federated::difference(&sides[0].fed, &s.fed));
        let loss: Vec<f64> = sides
            .iter()
            .map(|s| {
                s.fed
                    .objectives(Some(phi_star))
                    .map(|o| o.loss_ratio.unwrap_or(f64::NAN))
            })
            .collect::<Result<_, _>>()?;
        let rows: Vec<(String, Figures)> = sides
            .iter()
            .map(|s| (s.name.clone(), s.costs.summary(median)))
            .collect();
        Ok(Self {
            root_difference,
            loss,
            rows,
        })
    }

    /// `mufc topologies --json`'s fields beyond the data and the settings.
    fn json(&self, a: &TopologiesArgs, sides: &[Side], total: f64) -> Value {
        let rows = &self.rows;
        let flat = rows[0].1;
        let per: Vec<Value> = sides
            .iter()
            .zip(rows)
            .zip(&self.loss)
            .map(|((s, (_, r)), l)| {
                json!({
                    "topology": s.name,
                    "fit_wall_seconds": s.fit_wall,
                    "per_round_median": figures_json(r),
                    "client_rounds_total": s.costs.client_rounds(),
                    "loss_ratio": l,
                })
            })
            .collect();
        json!({
            "removals": a.removals,
            "topologies": per,
            "roots_equal": self.root_difference.is_none(),
            "roots_difference": self.root_difference,
            "wall_ratio_flat_over_groups": flat[5] / rows[1].1[5],
            "wall_ratio_flat_over_tree": flat[5] / rows[2].1[5],
            "seconds_total": total,
        })
    }

    /// `mufc topologies`' text: the table of medians, then the totals,
    /// the training times and the roots.
    fn text(&self, a: &TopologiesArgs, p: &Prepared, sides: &[Side], total: f64) -> String {
        let loss = &self.loss;
        let mut text = format!(
            "mufc topologies: {}\n{}; seed {}\n{} requests, each one point of two clients of one group, served by the three\n\n{}\n",
            p.summary(),
            fed_summary(&a.fed, p),
            a.common.seed,
            a.removals,
            table("median", &self.rows),
        );
        text.push_str(&format!(
            "rounds to unlearn across all clients (the TreeAvg poster's count): flat {:.0}, groups {:.0}, tree {:.0}\n",
            sides[0].costs.client_rounds(),
            sides[1].costs.client_rounds(),
            sides[2].costs.client_rounds(),
        ));
        text.push_str(&format!(
            "training wall clock: flat {:.3} s, groups {:.3} s, tree {:.3} s\n",
            sides[0].fit_wall, sides[1].fit_wall, sides[2].fit_wall
        ));
        text.push_str(&format!(
            "root models equal bit for bit: {}; loss ratio of the root after the removals: flat {:.4}, groups {:.4}, tree {:.4}\n",
            if self.root_difference.is_none() {
                "yes"
            } else {
                "NO"
            },
            loss[0],
            loss[1],
            loss[2]
        ));
        text.push_str(&format!("total time {total:.1} s\n"));
        text
    }
}
