//! The removal requests of `mufc unlearn`: the rows given with
//! `--remove` grouped into requests, or the next request chosen at random
//! or adversarially among the points no deferred request names.

use std::collections::{BTreeMap, HashSet};

use mufc::{ClientId, Federation};
use rand_chacha::ChaCha8Rng;
use seeding::PointId;

use crate::CliError;
use crate::cli::{Mode, UnlearnArgs};
use crate::commands::experiment::Entries;
use crate::commands::prepare::invalid;
use crate::random::below;

/// The requests naming `rows` (data rows, which are the point ids),
/// `batch` rows each, grouped by client.
///
/// # Errors
///
/// [`CliError::UnknownPoint`] for a row outside the data;
/// [`CliError::InvalidParameter`] for a row named twice or every point
/// named.
pub(super) fn explicit(
    rows: &[u64],
    batch: usize,
    client_of: &[usize],
) -> Result<Vec<Entries>, CliError> {
    let mut seen = HashSet::new();
    for &r in rows {
        if usize::try_from(r).map_or(true, |i| i >= client_of.len()) {
            return Err(CliError::UnknownPoint { id: r });
        }
        if !seen.insert(r) {
            return Err(invalid("remove", r, "a row is named twice"));
        }
    }
    if rows.len() >= client_of.len() {
        return Err(invalid(
            "remove",
            rows.len(),
            "at least one point must remain",
        ));
    }
    Ok(rows
        .chunks(batch)
        .map(|chunk| {
            let mut by: BTreeMap<ClientId, Vec<PointId>> = BTreeMap::new();
            for &r in chunk {
                // Checked above: `r` is a position in `client_of`.
                let c = client_of[usize::try_from(r).unwrap_or(0)];
                by.entry(ClientId(c as u64)).or_default().push(PointId(r));
            }
            by.into_iter().collect()
        })
        .collect())
}

/// What the deferred requests already name (a point may be named once).
#[derive(Debug, Default)]
struct Named {
    whole: HashSet<ClientId>,
    points: HashSet<(ClientId, PointId)>,
}

impl Named {
    fn of(fed: &Federation) -> Self {
        let mut named = Self::default();
        for p in fed.pending() {
            named
                .whole
                .extend(p.request.clients_removed().iter().copied());
            for (c, ids) in p.request.point_entries() {
                named.points.extend(ids.iter().map(|id| (*c, *id)));
            }
        }
        named
    }

    /// Whether a request may name `id` of `client`.
    fn free(&self, client: ClientId, id: PointId) -> bool {
        !self.whole.contains(&client) && !self.points.contains(&(client, id))
    }
}

/// The next request: a client and the ids it loses, among the points that
/// no deferred request names.
pub(super) fn choose(
    fed: &Federation,
    a: &UnlearnArgs,
    rng: &mut ChaCha8Rng,
) -> Result<(ClientId, Vec<PointId>), CliError> {
    let free = free_positions(fed);
    if free.is_empty() {
        return Err(CliError::NoData(
            "every client was removed or is named by a deferred request",
        ));
    }
    match a.mode {
        Mode::Random => choose_random(fed, a, rng, &free),
        Mode::Adversarial => choose_adversarial(fed, a, &free),
    }
}

/// Positions of each client's points no deferred request names (clients
/// with none left out).
fn free_positions(fed: &Federation) -> Vec<(ClientId, Vec<usize>)> {
    let named = Named::of(fed);
    fed.clients()
        .iter()
        .map(|c| {
            let d = c.data();
            let pos = (0..d.len()).filter(|&p| named.free(c.id(), d.id(p)));
            (c.id(), pos.collect::<Vec<_>>())
        })
        .filter(|(_, pos)| !pos.is_empty())
        .collect()
}

/// The data of the chosen client.
fn data_of(fed: &Federation, id: ClientId) -> Result<&seeding::Dataset, CliError> {
    fed.client(id)
        .map(mufc::Client::data)
        .ok_or(CliError::NoData("the chosen client vanished"))
}

/// A random client with free points, and `batch` of them at random (or
/// all its points, with `--whole-clients`).
fn choose_random(
    fed: &Federation,
    a: &UnlearnArgs,
    rng: &mut ChaCha8Rng,
    free: &[(ClientId, Vec<usize>)],
) -> Result<(ClientId, Vec<PointId>), CliError> {
    let (id, mut pos) = free[below(rng, free.len())].clone();
    let data = data_of(fed, id)?;
    if a.whole_clients {
        return Ok((id, data.ids().to_vec()));
    }
    // A partial Fisher-Yates shuffle: `batch` distinct positions.
    let r = a.batch.min(pos.len());
    for i in 0..r {
        let j = i + below(rng, pos.len() - i);
        pos.swap(i, j);
    }
    Ok((id, pos[..r].iter().map(|&p| data.id(p)).collect()))
}

/// The paper's adversarial removals: the largest contribution to the
/// current objective phi_f (ties: the first), among the points no
/// deferred request names.
fn choose_adversarial(
    fed: &Federation,
    a: &UnlearnArgs,
    free: &[(ClientId, Vec<usize>)],
) -> Result<(ClientId, Vec<PointId>), CliError> {
    let costs = free_costs(fed, free)?;
    let total = |v: &[f64]| v.iter().filter(|x| x.is_finite()).sum::<f64>();
    let top = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let key = |v: &[f64]| if a.whole_clients { total(v) } else { top(v) };
    let mut best = 0;
    for (i, (_, v)) in costs.iter().enumerate() {
        if key(v) > key(&costs[best].1) {
            best = i;
        }
    }
    let (id, v) = &costs[best];
    let data = data_of(fed, *id)?;
    if a.whole_clients {
        return Ok((*id, data.ids().to_vec()));
    }
    let mut pos: Vec<usize> = (0..v.len()).filter(|&p| v[p].is_finite()).collect();
    // Largest first; equal costs in position order.
    pos.sort_by(|&x, &y| v[y].total_cmp(&v[x]).then(x.cmp(&y)));
    pos.truncate(a.batch);
    Ok((*id, pos.iter().map(|&p| data.id(p)).collect()))
}

/// Each client's points' contributions to phi_f, minus infinity for the
/// points a deferred request names (clients with no free point left out).
fn free_costs(
    fed: &Federation,
    free: &[(ClientId, Vec<usize>)],
) -> Result<Vec<(ClientId, Vec<f64>)>, CliError> {
    Ok(fed
        .induced_costs()?
        .into_iter()
        .map(|(id, v)| {
            let free = free.iter().find(|(c, _)| *c == id).map(|(_, p)| p);
            let v = (0..v.len())
                .map(|p| match free {
                    Some(f) if f.contains(&p) => v[p],
                    _ => f64::NEG_INFINITY,
                })
                .collect();
            (id, v)
        })
        .filter(|(id, _)| free.iter().any(|(c, _)| c == id))
        .collect())
}
