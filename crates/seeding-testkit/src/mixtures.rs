//! Synthetic client data for the layers above `seeding` (moved here from
//! `testkit` so that `mufc`'s own tests build without the hub, issue 27,
//! item 8): a Gaussian mixture split across clients non-iid, as the
//! paper's Appendix M.1, and labelled blobs.

use nalgebra::DMatrix;
use rand::Rng;
use seeding::{Dataset, KMeansParams};

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
/// let (points, labels) = seeding_testkit::mixtures::blobs(3, 10, 2, 0.01, "doc");
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
    let mut rng = testdata::rng(label);
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

    /// Six clients of 30 points in 2-D from four components, two each:
    /// the federation of the exactness tests (random removals, random
    /// additions and removals).
    pub const SIX: Self = Self {
        clients: 6,
        per_client: 30,
        dim: 2,
        clusters: 4,
        k_prime: 2,
        spread: 0.2,
        sigma: 0.08,
    };

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
    let mut rng = testdata::rng(label);
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
    let mut rng = testdata::rng(label);
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
