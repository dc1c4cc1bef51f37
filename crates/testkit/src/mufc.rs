//! Test machinery for the `mufc` crate: synthetic federations (a Gaussian
//! mixture split across clients, as the paper's Appendix M.1), the plain
//! sum of the clients' histograms (the oracle of the secure aggregation),
//! and a bit-for-bit comparison of two federations.

use std::collections::BTreeMap;

use ::mufc::{ClientId, Federation, RemovalReport, RemovalRequest, StageTimes};
use nalgebra::DMatrix;
use num_bigint::BigUint;
use rand::Rng;
use seeding::{Dataset, KMeansParams, PointId};

/// A standard normal draw (Box-Muller).
fn normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    let u = ((rng.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
    let v = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    (-2.0 * u.ln()).sqrt() * (core::f64::consts::TAU * v).cos()
}

/// `k` spherical blobs of `per` points in `dim` dimensions, centre `c` at
/// `5 c` on the first axis, with the given per-coordinate variance: far
/// apart when the variance is small. Returns the points (one per column)
/// and the true labels. Every coordinate's noise is the cosine half of a
/// Box-Muller pair from two uniforms in `(0, 1]` drawn from
/// [`crate::rng`]`(label)` (the draws the unit tests of the baselines and
/// of the command were written against).
///
/// # Example
///
/// ```
/// let (points, labels) = testkit::mufc::blobs(3, 10, 2, 0.01, "doc");
/// assert_eq!((points.nrows(), points.ncols()), (2, 30));
/// assert_eq!(labels[25], 2);
/// ```
pub fn blobs(
    k: usize,
    per: usize,
    dim: usize,
    variance: f64,
    label: &str,
) -> (DMatrix<f64>, Vec<usize>) {
    let unit = |rng: &mut rand_chacha::ChaCha8Rng| {
        ((rng.next_u64() >> 11) + 1) as f64 / 9_007_199_254_740_992.0
    };
    let mut rng = crate::rng(label);
    let sd = variance.sqrt();
    let mut coords = Vec::with_capacity(k * per * dim);
    let mut labels = Vec::with_capacity(k * per);
    for c in 0..k {
        for _ in 0..per {
            for a in 0..dim {
                let centre = if a == 0 { 5.0 * c as f64 } else { 0.0 };
                let r = (-2.0 * unit(&mut rng).ln()).sqrt();
                let theta = core::f64::consts::TAU * unit(&mut rng);
                coords.push(centre + sd * r * theta.cos());
            }
            labels.push(c);
        }
    }
    (DMatrix::from_vec(dim, k * per, coords), labels)
}

/// A Gaussian mixture split non-iid across clients as the paper's
/// reference code splits its data sets (Appendix M.1): `clusters` centres
/// uniform in `[-spread, spread]^dim`, points the centre's coordinates plus
/// `sigma` times standard normals (clamped into the box `[-1/2, 1/2]^dim`);
/// then the points are labelled by a centralized K-means with `clusters`
/// clusters, and client `l` takes `per_client` points from the K-means
/// clusters `l, l + 1, ..., l + k_prime - 1` (mod `clusters`) in turn
/// (from any cluster once those run out). Ids are `0..per_client` within
/// each client.
#[derive(Clone, Copy, Debug)]
pub struct Mixture {
    /// The number of clients.
    pub clients: usize,
    /// Points per client.
    pub per_client: usize,
    /// The dimension.
    pub dim: usize,
    /// The number of Gaussian components (and of K-means clusters).
    pub clusters: usize,
    /// The number of clusters each client draws from.
    pub k_prime: usize,
    /// Centres are uniform in `[-spread, spread]^dim`.
    pub spread: f64,
    /// The standard deviation per axis.
    pub sigma: f64,
}

impl Mixture {
    /// Four clients of 30 points in 2-D from three components: the small
    /// federation of the error and privacy tests.
    pub const SMALL: Self = Self {
        clients: 4,
        per_client: 30,
        dim: 2,
        clusters: 3,
        k_prime: 2,
        spread: 0.2,
        sigma: 0.1,
    };

    /// `clients` clients of 40 points in 2-D from three components, two
    /// each: the federations the tests across processes run.
    pub const fn net(clients: usize) -> Self {
        Self {
            clients,
            per_client: 40,
            dim: 2,
            clusters: 3,
            k_prime: 2,
            spread: 0.3,
            sigma: 0.05,
        }
    }

    /// Three clients of 30 points in 2-D from two components, one each:
    /// the federation the persistence tests save and load.
    pub const TINY: Self = Self {
        clients: 3,
        per_client: 30,
        dim: 2,
        clusters: 2,
        k_prime: 1,
        spread: 0.2,
        sigma: 0.1,
    };
}

/// Each data set with its position as its client's id, as
/// `Federation::new` numbers them.
pub fn numbered(data: Vec<Dataset>) -> Vec<(ClientId, Dataset)> {
    (0u64..).map(ClientId).zip(data).collect()
}

/// The clients' data sets of `m`, from the randomness named `label`.
pub fn gaussian_clients(label: &str, m: Mixture) -> Vec<Dataset> {
    let Mixture {
        clients,
        per_client,
        dim,
        clusters,
        k_prime,
        spread,
        sigma,
    } = m;
    let mut rng = crate::rng(label);
    let centres: Vec<Vec<f64>> = (0..clusters)
        .map(|_| {
            (0..dim)
                .map(|_| {
                    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 * spread - spread
                })
                .collect()
        })
        .collect();
    let n = clients * per_client;
    let mut coords = Vec::with_capacity(n * dim);
    for i in 0..n {
        for x in &centres[i % clusters] {
            coords.push((x + sigma * normal(&mut rng)).clamp(-0.5, 0.5));
        }
    }
    let all = Dataset::new(DMatrix::from_vec(dim, n, coords)).unwrap();
    split_by_kmeans(&all, clusters, clients, per_client, k_prime)
}

/// The paper's Gaussian data set (Appendix M.1) scaled into the box:
/// `clusters` centres uniform in the unit hypercube, `per_cluster` points
/// around each with variance 0.5 per axis, mapped into `[-1/2, 1/2]^dim`
/// by [`seeding::BoxTransform`], then split across `clients` as
/// [`gaussian_clients`] splits (K-means cells, `k_prime` per client).
pub fn paper_gaussian_clients(
    label: &str,
    clients: usize,
    dim: usize,
    clusters: usize,
    per_cluster: usize,
    k_prime: usize,
) -> Vec<Dataset> {
    let mut rng = crate::rng(label);
    let centres: Vec<Vec<f64>> = (0..clusters)
        .map(|_| {
            (0..dim)
                .map(|_| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
                .collect()
        })
        .collect();
    let n = clusters * per_cluster;
    let sd = 0.5f64.sqrt();
    let mut coords = Vec::with_capacity(n * dim);
    for c in &centres {
        for _ in 0..per_cluster {
            for x in c {
                coords.push(x + sd * normal(&mut rng));
            }
        }
    }
    let raw = Dataset::new(DMatrix::from_vec(dim, n, coords)).unwrap();
    let boxed = seeding::BoxTransform::fit(&raw)
        .unwrap()
        .apply_dataset(&raw)
        .unwrap();
    split_by_kmeans(&boxed, clusters, clients, n / clients, k_prime)
}

/// Labels `all` by a centralized K-means with `clusters` clusters and gives
/// client `l` `per_client` points of the clusters `l, ..., l + k_prime - 1`
/// in turn (from any cluster once those run out), as the paper's
/// reference code splits non-iid.
fn split_by_kmeans(
    all: &Dataset,
    clusters: usize,
    clients: usize,
    per_client: usize,
    k_prime: usize,
) -> Vec<Dataset> {
    let dim = all.dim();
    let model = seeding::KMeans::new(KMeansParams::new(clusters).validate().unwrap())
        .fit(all, &mut seeding::ExpRace::new(7))
        .unwrap();
    let mut pools: Vec<Vec<usize>> = vec![Vec::new(); clusters];
    for (p, &a) in model.assignment().iter().enumerate() {
        pools[a as usize].push(p);
    }
    (0..clients)
        .map(|l| {
            let mut coords = Vec::with_capacity(per_client * dim);
            for turn in 0..per_client {
                let own = (l + turn % k_prime.max(1)) % clusters;
                let pool = if pools[own].is_empty() {
                    pools.iter_mut().find(|p| !p.is_empty()).unwrap()
                } else {
                    &mut pools[own]
                };
                coords.extend_from_slice(all.point(pool.pop().unwrap()));
            }
            Dataset::new(DMatrix::from_vec(dim, per_client, coords)).unwrap()
        })
        .collect()
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
fn compare_server(what: &str, s: &::mufc::Server, t: &::mufc::Server) -> Result<(), String> {
    same!(format!("{what}: decoded counts"), s.counts(), t.counts());
    same!(format!("{what}: points"), by_id(s.data()), by_id(t.data()));
    match (s.model(), t.model()) {
        (Some(m), Some(n)) => crate::exact::compare(m, n).map_err(|e| format!("{what}: {e}"))?,
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
            let node = ::mufc::NodeId(n);
            let (Some(s), Some(t)) = (a.node(node), b.node(node)) else {
                return Err(format!("{node} is missing"));
            };
            compare_server(&node.to_string(), s, t)?;
        }
    }
    Ok(())
}
