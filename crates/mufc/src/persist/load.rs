//! Loading a federation: the file's header, length and checksum are
//! checked ([`super::format`]), then the body is parsed, checked against
//! itself, and the clients and the server are rebuilt from it and checked
//! against the stored seeds and counts ([`Federation::from_bytes`](crate::Federation::from_bytes),
//! [`Federation::load`](crate::Federation::load)).

use std::collections::{BTreeMap, BTreeSet};

use num_bigint::BigUint;
use seeding::{Dataset, PointId};

use super::body::{Repr, SavedTree};
use super::format::{bad, corrupt};
use crate::aggregation::Aggregation;
use crate::server::decode::Decoded;
use crate::server::{InputChange, PlainCentroids};
use crate::state::tree::Tree;
use crate::state::unsent::Unsent;
use crate::state::{RequestBook, Setup, check_unsent};
use crate::{
    Client, ClientId, FitReport, MufcResult, Server, StoredClusters, Topology, ValidConfig,
};
#[cfg(doc)]
use crate::{MufcError, PersistError};

/// The largest dimension a saved federation without clients may state.
const MAX_DIM_WITHOUT_DATA: usize = 1 << 20;

/// A saved state rebuilt and checked, in parts: what a federation in one
/// process ([`Federation::assemble`](crate::Federation::assemble)), a server party and the parties'
/// driver each assemble (`remote`), so that none of them is built from
/// another.
#[derive(Clone, Debug)]
pub(crate) struct Restored {
    pub(crate) setup: Setup,
    /// In id order (none for a server's state).
    pub(crate) clients: Vec<Client>,
    pub(crate) aggregation: Option<Aggregation>,
    pub(crate) server: Server,
    pub(crate) fit_report: FitReport,
    pub(crate) tree: Option<Tree>,
    /// The reports, the pending requests, what the aggregate holds of
    /// their clients, the withdrawal; `applied` counts the kept reports'
    /// requests.
    pub(crate) book: RequestBook,
    /// The clients that left whole (a saved federation's, version 12):
    /// no join takes their ids.
    pub(crate) left: Vec<ClientId>,
}

/// Every check and rebuild of [`Federation::from_bytes`](crate::Federation::from_bytes) after the body is
/// parsed: the clients with `clusters` are built from them without
/// fitting ([`StoredClusters`]); the others are fitted and checked against
/// their stored seeds; the counts against the included clients'
/// histograms, the groups against theirs, the pending requests against
/// the waiting clients.
pub(crate) fn restore(
    r: Repr,
    clusters: BTreeMap<ClientId, StoredClusters>,
) -> MufcResult<Restored> {
    check_shape(&r)?;
    if r.withdrawn.is_some() {
        return restore_withdrawn(r, clusters);
    }
    let (setup, clients) = restore_clients(r.clients, &r.config, r.dim, clusters, Setup::restore)?;
    let unsent: BTreeMap<ClientId, Unsent> = r.unsent.into_iter().collect();
    let counts: BTreeMap<BigUint, u64> = r.counts.into_iter().collect();
    let mut server = setup.server()?;
    let mut aggregation = setup.aggregation(r.capacity)?;
    let change = match &mut aggregation {
        Some(agg) => {
            // The decoded aggregate of the last round is the plain sum
            // of the histograms of the clients it included (all of
            // them unless some dropped out).
            let included: BTreeSet<ClientId> = r
                .history
                .last()
                .map_or(&r.fit_report.included, |h| &h.included)
                .iter()
                .copied()
                .collect();
            restore_aggregate(agg, &clients, &unsent, &included, counts, r.rounds)?
        }
        None => plain_change(&clients, setup.dim),
    };
    server.apply(server.plan(change)?)?;
    let tree = restore_tree(
        &setup, r.tree, &clients, &unsent, r.capacity, &server, r.rounds,
    )?;
    // The pending requests and the waiting clients must agree, and
    // their points be erased.
    check_unsent((&r.pending, &r.additions), &unsent, &clients)
        .map_err(|e| bad(format!("the pending requests do not fit the clients: {e}")))?;
    Ok(Restored {
        setup,
        clients,
        aggregation,
        server,
        fit_report: r.fit_report,
        tree,
        book: RequestBook {
            applied: kept_requests(&r.history),
            history: r.history,
            pending: r.pending,
            unsent,
            withdrawn: None,
            additions: r.additions,
        },
        left: r.left,
    })
}

/// The requests the reports `history` applied.
fn kept_requests(history: &[crate::RemovalReport]) -> u64 {
    history.iter().map(|r| r.requests.len() as u64).sum()
}

/// How a saved state's setup is made ([`Setup::restore`], or
/// [`Setup::withdrawn`] without the policy's minimum).
type MakeSetup = fn(Vec<(ClientId, Dataset)>, &ValidConfig, usize) -> MufcResult<Setup>;

/// The setup and the clients of a saved state: each client built from
/// its stored clusters, or fitted and checked against its stored seeds.
fn restore_clients(
    saved: Vec<(ClientId, Dataset, Vec<PointId>)>,
    config: &ValidConfig,
    dim: usize,
    clusters: BTreeMap<ClientId, StoredClusters>,
    make: MakeSetup,
) -> MufcResult<(Setup, Vec<Client>)> {
    let seeds: BTreeMap<ClientId, Vec<PointId>> =
        saved.iter().map(|(id, _, s)| (*id, s.clone())).collect();
    let setup = make(
        saved.into_iter().map(|(id, d, _)| (id, d)).collect(),
        config,
        dim,
    )?;
    let clients = setup.load_clients(&seeds, clusters)?;
    Ok((setup, clients))
}

/// A federation whose model was withdrawn: its clients, and nothing of
/// an aggregate (no counts, pending request, waiting message or group).
fn restore_withdrawn(
    r: Repr,
    clusters: BTreeMap<ClientId, StoredClusters>,
) -> MufcResult<Restored> {
    let Some(w) = r.withdrawn else {
        return Err(corrupt("no withdrawal"));
    };
    let pending = !r.pending.is_empty() || !r.additions.is_empty();
    if !r.counts.is_empty() || pending || !r.unsent.is_empty() || r.tree.is_some() {
        return Err(corrupt(
            "a withdrawn model with counts, pending requests, waiting messages or groups",
        ));
    }
    if r.rounds != w.rounds {
        return Err(corrupt(format!(
            "{} rounds, the withdrawal says {}",
            r.rounds, w.rounds
        )));
    }
    let (setup, clients) =
        restore_clients(r.clients, &r.config, r.dim, clusters, Setup::withdrawn)?;
    let server = setup.server()?;
    Ok(Restored {
        setup,
        clients,
        aggregation: None,
        server,
        fit_report: r.fit_report,
        tree: None,
        book: RequestBook {
            applied: kept_requests(&r.history),
            history: r.history,
            pending: Vec::new(),
            unsent: BTreeMap::new(),
            withdrawn: Some(w),
            additions: Vec::new(),
        },
        left: r.left,
    })
}

/// The checks on a saved state's shape that come before any allocation
/// it sizes.
fn check_shape(r: &Repr) -> MufcResult<()> {
    // The stored dimension sizes the quantizer's grid before any data is
    // looked at: it must be the data's (a crafted file with a valid
    // checksum may say anything; a huge value aborted the process).
    if let Some((id, d, _)) = r.clients.iter().find(|(_, d, _)| d.dim() != r.dim) {
        return Err(corrupt(format!(
            "client {id}'s data has dimension {}, the file says {}",
            d.dim(),
            r.dim
        )));
    }
    // With no client left there is no data to check it against: a
    // dimension beyond 2^20 (an 8 MiB grid) is refused rather than
    // allocated.
    if r.clients.is_empty() && r.dim > MAX_DIM_WITHOUT_DATA {
        return Err(corrupt(format!(
            "dimension {} with no client to check it against",
            r.dim
        )));
    }
    // A client that left has no data, no waiting message and no group: a
    // file naming one as both would load it twice.
    if r.left.windows(2).any(|w| w.first() >= w.get(1)) {
        return Err(corrupt("the clients that left are not in strict id order"));
    }
    let present = (r.clients.iter().map(|(c, _, _)| c))
        .chain(r.unsent.iter().map(|(c, _)| c))
        .chain((r.tree.iter()).flat_map(|t| t.groups.iter().flat_map(|g| &g.members)));
    for c in present {
        if r.left.binary_search(c).is_ok() {
            return Err(corrupt(format!("client {c} left and is still named")));
        }
    }
    // Saving writes the capacity of the training report: a file whose two
    // copies disagree would load, then save something else.
    let reported = r.fit_report.sketch.as_ref().map(|s| s.capacity);
    if r.capacity != reported {
        return Err(corrupt(format!(
            "the stored sketch capacity {:?} is not the report's {:?}",
            r.capacity, reported
        )));
    }
    Ok(())
}

/// The aggregation's last sum and round counter, checked against the
/// histograms of the clients the last round `included`; the server's
/// input.
fn restore_aggregate(
    agg: &mut Aggregation,
    clients: &[Client],
    unsent: &BTreeMap<ClientId, Unsent>,
    included: &BTreeSet<ClientId>,
    counts: BTreeMap<BigUint, u64>,
    rounds: u64,
) -> MufcResult<InputChange> {
    let sum = super::included_sum(clients, unsent, included);
    // A server's state run across processes (`remote`) holds no client:
    // its counts are its own, checked by the hash.
    if !clients.is_empty() && sum.as_ref() != Some(&counts) {
        return Err(bad(
            "the stored counts are not the sum of the included clients' histograms",
        ));
    }
    agg.restore_last(&counts)?;
    agg.set_rounds(rounds);
    Ok(InputChange::Counts(Decoded::Full(
        counts.into_iter().collect(),
    )))
}

/// The plain mode's server input: every client's centroids, from none.
fn plain_change(clients: &[Client], dim: usize) -> InputChange {
    InputChange::Plain(
        clients
            .iter()
            .map(|c| {
                (
                    PlainCentroids {
                        client: c.id(),
                        centroids: nalgebra::DMatrix::zeros(dim, 0),
                        sizes: Vec::new(),
                    },
                    c.plain_centroids(),
                )
            })
            .collect(),
    )
}

/// The groups of a saved federation, checked: their sum is the root's
/// counts (`server`'s), their rounds the stored counter; none exactly
/// when the topology is flat.
fn restore_tree(
    setup: &Setup,
    saved: Option<SavedTree>,
    clients: &[Client],
    unsent: &BTreeMap<ClientId, Unsent>,
    capacity: Option<usize>,
    server: &Server,
    rounds: u64,
) -> MufcResult<Option<Tree>> {
    match saved {
        Some(saved) => {
            let (tree, root) = Tree::restore(setup, saved, clients, unsent, capacity)?;
            // The root's counts are its children's sum: the groups' sums
            // add up to the stored aggregate.
            if root.iter().map(|(b, c)| (b, c)).ne(server.counts().iter()) {
                return Err(bad("the groups' counts do not add up to the stored counts"));
            }
            if tree.rounds() != rounds {
                return Err(bad(format!(
                    "the groups started {} rounds, the file says {}",
                    tree.rounds(),
                    rounds
                )));
            }
            Ok(Some(tree))
        }
        None if setup.config.topology() != Topology::Flat => Err(bad(format!(
            "the configuration's topology is {}, and the file holds no groups",
            setup.config.topology().name()
        ))),
        None => Ok(None),
    }
}
