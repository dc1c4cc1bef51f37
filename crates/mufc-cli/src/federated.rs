//! The bridge to the `mufc` library: its configuration from the command
//! line, training (Algorithm 1), retraining from scratch, the comparison of
//! an unlearned federation with a retrained one, and the times of a round.

use std::collections::BTreeMap;
use std::time::Duration;

use mufc::{ClientId, Federation, SecAggOptions, StageTimes, ValidConfig};
use seeding::{Dataset, PointId};
use serde_json::{Value, json};

use crate::CliError;
use crate::cli::{FedArgs, Privacy, channel};

/// The federation's configuration: `k` clusters at the server, step
/// `gamma`, the options of `fed` on their preset (the clients' k, their
/// topology for `clients` clients, ...), and the federation seed `seed`.
///
/// # Errors
///
/// [`CliError::InvalidParameter`] for zero server restarts;
/// [`CliError::Mufc`] for a configuration the library refuses.
///
/// # Example
///
/// ```
/// use clap::Parser;
/// use mufc_cli::cli::{Cli, Command};
/// use mufc_cli::federated::config;
///
/// let cli = Cli::try_parse_from(["mufc", "run", "--privacy", "plain", "--client-k", "3"]).unwrap();
/// let Command::Run(a) = cli.command else { panic!() };
/// let c = config(10, 0.01, 100, &a.fed, 7)?;
/// assert_eq!((c.server().k(), c.client_k(), c.seed()), (10, 3, 7));
/// assert_eq!(c.channel(), &mufc::Channel::Plain);
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
pub fn config(
    k: usize,
    gamma: f64,
    clients: usize,
    fed: &FedArgs,
    seed: u64,
) -> Result<ValidConfig, CliError> {
    if fed.server_restarts == Some(0) {
        return Err(CliError::InvalidParameter {
            name: "server restarts",
            value: "0".into(),
            reason: "must be at least 1",
        });
    }
    Ok(fed
        .base(k)
        .gamma(gamma)
        .channel(channel(
            fed.privacy,
            fed.masking,
            SecAggOptions::new()
                .dropout(fed.dropout)
                .graph(fed.secagg_graph),
        )?)
        // A client with fewer distinct points than a fixed k finds fewer
        // clusters, with a warning (`prepare`), rather than failing.
        .allow_fewer_distinct(true)
        .min_clients(fed.min_clients)
        .min_updating_clients(fed.min_updating_clients)
        .topology(fed.topology(clients)?)
        .seed(seed)
        .validate()?)
}

/// What is weak about the privacy of a run with the options `fed`, one
/// sentence each: a minimum aggregate below 3 clients, lone updates
/// allowed, or the plain mode (docs/threat-model.md §6).
///
/// # Example
///
/// ```
/// use clap::Parser;
/// use mufc_cli::cli::{Cli, Command};
/// use mufc_cli::federated::privacy_warnings;
///
/// let cli = Cli::try_parse_from(["mufc", "run"]).unwrap();
/// assert!(privacy_warnings(cli.command.fed().unwrap()).is_empty());
/// let cli = Cli::try_parse_from(["mufc", "run", "--min-clients", "2", "--privacy", "plain"]).unwrap();
/// let w = privacy_warnings(cli.command.fed().unwrap());
/// assert_eq!(w.len(), 2);
/// assert!(w[0].starts_with("--min-clients 2 is below 3"));
/// ```
pub fn privacy_warnings(fed: &FedArgs) -> Vec<String> {
    let mut out = Vec::new();
    match fed.min_clients {
        0 | 3.. => {}
        1 => out.push(
            "--min-clients 1 is below 3: the server may see the message of a single client, \
             that is its histogram (docs/threat-model.md P4)"
                .to_string(),
        ),
        m => out.push(format!(
            "--min-clients {m} is below 3: in an aggregate of two clients each learns the \
             other's histogram from the sum, and so does the server with one colluding client \
             (docs/threat-model.md P4)"
        )),
    }
    if fed.min_updating_clients == 1 {
        out.push(
            "--min-updating-clients 1 is below 2: a removal round that changes one client's \
             message alone tells the server how that client's histogram changed, such as the \
             bin of a removed point (docs/threat-model.md U3)"
                .to_string(),
        );
    }
    if fed.privacy == Privacy::Plain {
        out.push(
            "--privacy plain sends each client's centroids and cluster sizes to the server in \
             the clear: nothing is masked or aggregated securely"
                .to_string(),
        );
    }
    out
}

/// The configuration retraining uses: the federation's own (with `gamma`
/// and the count bound resolved, so the grid and the field are the same),
/// accepting clients that removals left with fewer distinct points than
/// their k, as the unlearned federation does.
///
/// # Errors
///
/// [`CliError::Mufc`] (not expected: the configuration was valid).
pub fn retrain_config(fed: &Federation) -> Result<ValidConfig, CliError> {
    Ok(fed
        .config()
        .clone()
        .into_builder()
        .allow_fewer_distinct(true)
        .validate()?)
}

/// Complete retraining (Algorithm 1 from scratch: every client trains, a
/// full aggregation round with a full decode, the server fits) on the
/// remaining data; in the groups of `layout` when given (a federation's
/// [`Federation::layout`], which no longer names the clients it removed).
///
/// # Errors
///
/// As [`Federation::with_ids`] and [`Federation::with_layout`].
pub fn retrain(
    remaining: &BTreeMap<ClientId, Dataset>,
    config: &ValidConfig,
    layout: Option<&mufc::Layout>,
) -> Result<Federation, CliError> {
    let clients = remaining.iter().map(|(id, d)| (*id, d.clone())).collect();
    Ok(match layout {
        // The same groups, without the clients removed whole.
        Some(l) => Federation::with_layout(clients, config, l.clone())?,
        None => Federation::with_ids(clients, config)?,
    })
}

/// Retrains on `applied` (the data without the requests a round applied)
/// and compares with `fed`: the whole federation when nothing waits; when
/// requests wait (`waiting`: their points, erased from the clients at
/// once, still in the model), the clients against retraining without
/// them too and the model against retraining without the applied ones.
/// Returns the retrained federation (its times are retraining's) and the
/// first difference, if any.
///
/// # Errors
///
/// As [`retrain`] and [`remove_from`].
pub fn check_retrained(
    fed: &Federation,
    applied: &BTreeMap<ClientId, Dataset>,
    waiting: &[(ClientId, Vec<PointId>)],
    config: &ValidConfig,
) -> Result<(Federation, Option<String>), CliError> {
    let fresh = retrain(applied, config, fed.layout())?;
    if waiting.is_empty() {
        let d = difference(fed, &fresh);
        return Ok((fresh, d));
    }
    let mut erased = applied.clone();
    for (client, ids) in waiting {
        remove_from(&mut erased, *client, ids)?;
    }
    let layout = fed.layout().map(|l| {
        let left: Vec<ClientId> = l
            .clients()
            .into_iter()
            .filter(|c| !erased.contains_key(c))
            .collect();
        l.without(&left)
    });
    let all = retrain(&erased, config, layout.as_ref())?;
    let d = client_difference(fed, &all).or_else(|| model_difference(fed, &fresh));
    Ok((fresh, d))
}

/// Applies a removal to the record of the remaining data: the `ids` of
/// `client` leave it, and a client left empty leaves.
///
/// # Errors
///
/// [`CliError::UnknownPoint`] for an id the client does not hold.
pub fn remove_from(
    remaining: &mut BTreeMap<ClientId, Dataset>,
    client: ClientId,
    ids: &[PointId],
) -> Result<(), CliError> {
    let data = remaining.get(&client).ok_or(CliError::UnknownPoint {
        id: ids.first().map_or(0, |i| i.0),
    })?;
    if ids.len() >= data.len() {
        remaining.remove(&client);
        return Ok(());
    }
    let rest = data.without(ids).map_err(|e| match e {
        seeding::SeedingError::UnknownId(id) => CliError::UnknownPoint { id: id.0 },
        other => other.into(),
    })?;
    remaining.insert(client, rest);
    Ok(())
}

/// Where two federations differ, if anywhere: the clients, each client's
/// seeds, sizes and histogram, the server's decoded counts and the bits of
/// its centroids. The library guarantees that a federation after removals
/// equals, bit for bit, one retrained on the remaining data with its
/// configuration; this checks it where it is cheap.
pub fn difference(a: &Federation, b: &Federation) -> Option<String> {
    client_difference(a, b).or_else(|| model_difference(a, b))
}

/// Where the clients of two federations differ, if anywhere: which
/// clients, each one's seeds, sizes and histogram.
pub fn client_difference(a: &Federation, b: &Federation) -> Option<String> {
    if a.client_ids() != b.client_ids() {
        return Some("the clients differ".into());
    }
    for (x, y) in a.clients().iter().zip(b.clients()) {
        if x.seed_ids() != y.seed_ids() {
            return Some(format!("client {}: seeds differ", x.id()));
        }
        if x.sizes() != y.sizes() || x.histogram() != y.histogram() {
            return Some(format!("client {}: counts differ", x.id()));
        }
    }
    None
}

/// Where the models of two federations differ, if anywhere: the server's
/// decoded counts and the bits of its centroids.
pub fn model_difference(a: &Federation, b: &Federation) -> Option<String> {
    if a.server().counts() != b.server().counts() {
        return Some("the server's decoded counts differ".into());
    }
    let bits = |f: &Federation| {
        f.server()
            .centroids()
            .map(|c| c.iter().map(|x| x.to_bits()).collect::<Vec<u64>>())
    };
    if bits(a) != bits(b) {
        return Some("the server's centroids differ".into());
    }
    None
}

/// Seconds of a duration.
pub fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// The times of a round in seconds, as JSON: the paper's count (slowest
/// client plus server), total CPU, wall clock, and the stages.
pub fn times_json(t: &StageTimes) -> Value {
    json!({
        "paper_seconds": secs(t.paper()),
        "cpu_seconds": secs(t.cpu()),
        "wall_seconds": secs(t.wall),
        "client_seconds": secs(t.client_max),
        "aggregation_seconds": secs(t.aggregation()),
        "decode_seconds": secs(t.decode),
        "server_kmeans_seconds": secs(t.server),
        "server_seconds": secs(t.server_total()),
        "offline_seconds": secs(t.offline),
    })
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;

    use super::*;

    fn clients() -> Vec<Dataset> {
        (0..3)
            .map(|l| {
                let m = DMatrix::from_fn(2, 30, |r, c| {
                    ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2
                });
                let ids = (0..30).map(|i| PointId((l * 100 + i) as u64)).collect();
                Dataset::with_ids(m, ids).unwrap()
            })
            .collect()
    }

    #[test]
    fn unlearning_equals_retraining_and_a_difference_is_found() {
        let data = clients();
        let cfg = mufc::FederationConfig::paper(3)
            .client_k(2)
            .gamma(0.05)
            .seed(3)
            // One client's request served at once (a lone update).
            .min_updating_clients(1)
            .validate()
            .unwrap();
        let mut fed = Federation::new(data.clone(), &cfg).unwrap();
        let mut remaining: BTreeMap<ClientId, Dataset> = data
            .into_iter()
            .enumerate()
            .map(|(i, d)| (ClientId(i as u64), d))
            .collect();
        let victim = fed.client(ClientId(1)).unwrap().seed_ids()[0];
        fed.remove(&mufc::RemovalRequest::points(ClientId(1), vec![victim]))
            .unwrap();
        // Before the record is updated, retraining differs.
        let stale = retrain(&remaining, &retrain_config(&fed).unwrap(), None).unwrap();
        assert!(difference(&fed, &stale).is_some());
        remove_from(&mut remaining, ClientId(1), &[victim]).unwrap();
        let fresh = retrain(&remaining, &retrain_config(&fed).unwrap(), None).unwrap();
        assert_eq!(difference(&fed, &fresh), None);
        // A whole client.
        let all: Vec<PointId> = remaining[&ClientId(2)].ids().to_vec();
        remove_from(&mut remaining, ClientId(2), &all).unwrap();
        assert!(!remaining.contains_key(&ClientId(2)));
        assert!(matches!(
            remove_from(&mut remaining, ClientId(0), &[PointId(999)]),
            Err(CliError::UnknownPoint { id: 999 })
        ));
    }
}
