//! The test machinery of the `mufc` layer, for the layers above it and
//! the workspace's tests: the plain sum of the clients' histograms (the
//! oracle of the secure aggregation), the clients' data after a removal
//! (what retraining from scratch trains on), and bit-for-bit comparisons
//! of two federations, flat or with groups. The synthetic clients they
//! are built from are `seeding-testkit`'s
//! ([`seeding_testkit::mixtures`]). It depends on `mufc`, `seeding` and
//! `seeding-testkit` alone (issue 27, item 8). `mufc`'s own tests do not
//! use it: they would build a second `mufc` (`crates/mufc/tests/deps.rs`).
//! Not published.

// Test code: these functions panic on a counterexample by design.
#![allow(clippy::missing_panics_doc, clippy::unwrap_used)]

use std::collections::BTreeMap;

use mufc::{ClientId, Federation, NodeId, RemovalReport, RemovalRequest, Server, StageTimes};
use num_bigint::BigUint;
use seeding::{Dataset, PointId};
use seeding_testkit::exact;

/// Each data set with its position as its client's id, as
/// `Federation::new` numbers them.
pub fn numbered(data: Vec<Dataset>) -> Vec<(ClientId, Dataset)> {
    (0u64..).map(ClientId).zip(data).collect()
}

/// The plain sum of the clients' histograms: what the secure aggregation
/// must decode.
pub fn plain_sum(fed: &Federation) -> BTreeMap<BigUint, u64> {
    let mut sum = BTreeMap::new();
    for c in fed.clients() {
        for (b, n) in c.histogram() {
            *sum.entry(b.clone()).or_insert(0) += n;
        }
    }
    sum
}

/// The plain sum of the histograms of `included` clients only: what a
/// round with dropouts must decode (clients not in the federation are
/// ignored).
pub fn plain_sum_over(fed: &Federation, included: &[ClientId]) -> BTreeMap<BigUint, u64> {
    let mut sum = BTreeMap::new();
    for c in fed.clients().iter().filter(|c| included.contains(&c.id())) {
        for (b, n) in c.histogram() {
            *sum.entry(b.clone()).or_insert(0) += n;
        }
    }
    sum
}

/// The clients' data after removing `removed` points from some clients and
/// whole clients, in the order the federation holds them (for retraining
/// from scratch).
pub fn remaining(
    original: &[(ClientId, Dataset)],
    removed_points: &BTreeMap<ClientId, Vec<PointId>>,
    removed_clients: &[ClientId],
) -> Vec<(ClientId, Dataset)> {
    original
        .iter()
        .filter(|(id, _)| !removed_clients.contains(id))
        .filter_map(|(id, d)| {
            let gone = removed_points.get(id).map_or(&[][..], Vec::as_slice);
            let rest = d.without(gone).unwrap();
            (!rest.is_empty()).then_some((*id, rest))
        })
        .collect()
}

/// The clients' data after the removal request `req` (see [`remaining`]).
pub fn without_request(
    data: &[(ClientId, Dataset)],
    req: &RemovalRequest,
) -> Vec<(ClientId, Dataset)> {
    let points: BTreeMap<ClientId, Vec<PointId>> = req.point_entries().iter().cloned().collect();
    remaining(data, &points, req.clients_removed())
}

fn bits(m: nalgebra::DMatrixView<'_, f64>) -> Vec<u64> {
    m.iter().map(|x| x.to_bits()).collect()
}

fn by_id(d: &Dataset) -> BTreeMap<PointId, (Vec<u64>, u64)> {
    (0..d.len())
        .map(|p| {
            (
                d.id(p),
                (
                    d.point(p).iter().map(|x| x.to_bits()).collect(),
                    d.weight(p),
                ),
            )
        })
        .collect()
}

macro_rules! same {
    ($what:expr, $x:expr, $y:expr) => {
        if $x != $y {
            return Err(format!("{}: {:?} != {:?}", $what, $x, $y));
        }
    };
}

/// Everything observable about two federations' models, compared bit for
/// bit; points matched by id (their positions differ after removals).
/// Round counters, reports and timings are not compared.
///
/// # Errors
///
/// The first difference, described.
pub fn compare(a: &Federation, b: &Federation) -> Result<(), String> {
    compare_clients(a, b)?;
    compare_model(a, b)?;
    if a.server().model().is_some() {
        let (oa, ob) = (a.objectives(None).unwrap(), b.objectives(None).unwrap());
        same!("phi_f", oa.phi_f.to_bits(), ob.phi_f.to_bits());
        same!("phi_c", oa.phi_c.to_bits(), ob.phi_c.to_bits());
    }
    Ok(())
}

/// The clients of two federations, bit for bit: ids, points (by id),
/// seeds, sizes, centroids, histograms and local clusters. While a
/// request's model update waits, its points are erased from the clients
/// already: they equal retraining, the model does not yet.
///
/// # Errors
///
/// The first difference, described.
pub fn compare_clients(a: &Federation, b: &Federation) -> Result<(), String> {
    same!("clients", a.client_ids(), b.client_ids());
    for (x, y) in a.clients().iter().zip(b.clients()) {
        let id = x.id();
        same!(
            format!("data of client {id}"),
            by_id(x.data()),
            by_id(y.data())
        );
        same!(format!("seeds of client {id}"), x.seed_ids(), y.seed_ids());
        same!(format!("sizes of client {id}"), x.sizes(), y.sizes());
        same!(
            format!("centroids of client {id}"),
            bits(x.centroids()),
            bits(y.centroids())
        );
        same!(
            format!("histogram of client {id}"),
            x.histogram(),
            y.histogram()
        );
        let lx: BTreeMap<PointId, u32> = x
            .data()
            .ids()
            .iter()
            .copied()
            .zip(x.local_clusters())
            .collect();
        let ly: BTreeMap<PointId, u32> = y
            .data()
            .ids()
            .iter()
            .copied()
            .zip(y.local_clusters())
            .collect();
        same!(format!("local clusters of client {id}"), lx, ly);
    }
    Ok(())
}

/// The models of two federations, bit for bit: the server's counts,
/// points and K-means.
///
/// # Errors
///
/// The first difference, described.
pub fn compare_model(a: &Federation, b: &Federation) -> Result<(), String> {
    let (s, t) = (a.server(), b.server());
    compare_server("server", s, t)?;
    Ok(())
}

/// A report without its timings (which differ between runs).
pub fn untimed(r: &RemovalReport) -> RemovalReport {
    RemovalReport {
        times: StageTimes::default(),
        ..r.clone()
    }
}

/// Two servers' counts, points and models, bit for bit.
fn compare_server(what: &str, s: &Server, t: &Server) -> Result<(), String> {
    same!(format!("{what}: decoded counts"), s.counts(), t.counts());
    same!(format!("{what}: points"), by_id(s.data()), by_id(t.data()));
    match (s.model(), t.model()) {
        (Some(m), Some(n)) => exact::compare(m, n).map_err(|e| format!("{what}: {e}"))?,
        (None, None) => {}
        (m, n) => return Err(format!("{what}: model {} vs {}", m.is_some(), n.is_some())),
    }
    Ok(())
}

/// As [`compare`], and the layouts of two federations with groups and
/// the model of every node (groups, inner nodes, root), bit for bit.
///
/// # Errors
///
/// The first difference, described.
pub fn compare_tree(a: &Federation, b: &Federation) -> Result<(), String> {
    compare(a, b)?;
    compare_tree_model(a, b)
}

/// The models of two federations with groups, bit for bit: the layout and
/// the model of every node (groups, inner nodes, root); not the clients
/// (see [`compare_clients`]).
///
/// # Errors
///
/// The first difference, described.
pub fn compare_tree_model(a: &Federation, b: &Federation) -> Result<(), String> {
    compare_model(a, b)?;
    same!("layout", a.layout(), b.layout());
    if let Some(layout) = a.layout() {
        for n in 0..layout.nodes() {
            let node = NodeId(n);
            let (Some(s), Some(t)) = (a.node(node), b.node(node)) else {
                return Err(format!("{node} is missing"));
            };
            compare_server(&node.to_string(), s, t)?;
        }
    }
    Ok(())
}
