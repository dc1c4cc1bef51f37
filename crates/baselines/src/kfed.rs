//! K-FED, the one-shot federated clustering of Dennis, Li and Smith
//! ("Heterogeneity for the Win: One-Shot Federated Clustering", ICML
//! 2021), in the form the MUFC experiments compare against.
//!
//! In our words: every client clusters its own points once and sends its
//! k' centroids; the server clusters the centroids it receives in a single
//! pass and never sees a point. No round trips, so it is as cheap as
//! federated clustering gets; but nothing is unlearnable short of
//! retraining, and the server's one Lloyd round leaves it sensitive to how
//! the clients' centroids fall.
//!
//! 1. Client step (the Awasthi-Sheffet procedure, [`awasthi_sheffet`]):
//!    project the points onto their top-k' right singular subspace, seed
//!    k' centres there with K-means++, move each to the mean of the points
//!    three times closer to it than to any other seed (the "1:3 split"),
//!    lift those means back to R^d and run Lloyd's iterations from them.
//! 2. Server step: take the union of the local centroids, each with unit
//!    weight; start from the first client's centroids (which K-FED's
//!    analysis puts in distinct target clusters), add the centroid
//!    farthest from the centres chosen so far until there are K (the
//!    "max-from-set" rule), and run one round of Lloyd: each local
//!    centroid joins its nearest initial centre, and each centre moves to
//!    the mean of the centroids that joined it.
//! 3. Every point takes the server centroid whose cluster its local
//!    centroid joined in that round: the induced (federated) objective,
//!    [`seeding::induced_phi`].
//!
//! Seeding and Lloyd's iterations are [`seeding`]'s; every random choice
//! comes from an [`ExpRace`] keyed by the run's seed and the client's
//! index ([`crate::stage_seed`]), so runs reproduce bit for bit, with or
//! without the `parallel` feature.

use std::time::Instant;

use nalgebra::{DMatrix, DMatrixView};
use seeding::{
    Dataset, ExpRace, InducedClient, KMeans, KMeansParams, KMeansPlusPlus, Metric, SeedingParams,
    SqEuclidean, induced_phi,
};

use crate::BaselineError;
use crate::error::at_least_one;
use crate::seeds::{map_indexed, stage, stage_seed};

/// Parameters of [`kfed`], checked by [`KFedParams::validate`].
///
/// # Example
///
/// ```
/// use baselines::KFedParams;
///
/// let p = KFedParams::new(10, 3).max_iterations(100).validate()?;
/// assert_eq!((p.k(), p.local_k(), p.max_iterations()), (10, 3, 100));
/// assert!(KFedParams::new(10, 0).validate().is_err());
/// # Ok::<(), baselines::BaselineError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KFedParams {
    k: usize,
    local_k: usize,
    max_iterations: usize,
}

impl KFedParams {
    /// K server clusters, k' local ones, 300 Lloyd iterations at most (as
    /// the reference runs).
    pub fn new(k: usize, local_k: usize) -> Self {
        Self {
            k,
            local_k,
            max_iterations: 300,
        }
    }

    /// The cap on the clients' Lloyd iterations, at least 1.
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// Checks the parameters.
    ///
    /// # Errors
    ///
    /// [`BaselineError::InvalidParameter`] for K, k' or the iteration cap
    /// of 0.
    pub fn validate(self) -> Result<ValidKFedParams, BaselineError> {
        at_least_one("K", self.k)?;
        at_least_one("k'", self.local_k)?;
        at_least_one("max iterations", self.max_iterations)?;
        Ok(ValidKFedParams(self))
    }
}

/// [`KFedParams`] that passed [`KFedParams::validate`]: what [`kfed`] and
/// [`awasthi_sheffet`] take.
///
/// # Example
///
/// ```
/// use baselines::KFedParams;
///
/// let p = KFedParams::new(4, 2).validate()?;
/// assert_eq!((p.k(), p.local_k(), p.max_iterations()), (4, 2, 300));
/// # Ok::<(), baselines::BaselineError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValidKFedParams(KFedParams);

impl ValidKFedParams {
    /// The number of server clusters K.
    pub fn k(&self) -> usize {
        self.0.k
    }

    /// The number of clusters k' of every client.
    pub fn local_k(&self) -> usize {
        self.0.local_k
    }

    /// The cap on the clients' Lloyd iterations.
    pub fn max_iterations(&self) -> usize {
        self.0.max_iterations
    }
}

/// A client's clustering: its centroids and the local cluster of each of
/// its points.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, ExpRace};
/// use baselines::{awasthi_sheffet, KFedParams};
///
/// let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 0.1, 9.0, 9.1]))?;
/// let local = awasthi_sheffet(&data, &KFedParams::new(2, 2).validate()?, &mut ExpRace::new(1))?;
/// assert_eq!(local.centroids.ncols(), 2);
/// assert_eq!(local.assignment.len(), 4);
/// # Ok::<(), baselines::BaselineError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct LocalClustering {
    /// The centroids, one per column.
    pub centroids: DMatrix<f64>,
    /// The centroid of each point, by position.
    pub assignment: Vec<u32>,
}

/// The outcome of one K-FED run.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
/// use baselines::{kfed, KFedParams};
///
/// let a = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 0.1, 9.0, 9.1]))?;
/// let run = kfed(&[a], &KFedParams::new(2, 2).validate()?, 3)?;
/// assert_eq!(run.induced[0].len(), 4);
/// assert!(run.seconds() >= run.server_seconds);
/// # Ok::<(), baselines::BaselineError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct KFedRun {
    /// The K server centroids, one per column.
    pub centroids: DMatrix<f64>,
    /// The induced (federated) objective phi_f.
    pub phi_f: f64,
    /// The server centroid each point takes (Definition 3.1), by client and
    /// position.
    pub induced: Vec<Vec<u32>>,
    /// The number of local centroids sent to the server.
    pub local_centroids: usize,
    /// The time of each client's local clustering, in seconds.
    pub client_seconds: Vec<f64>,
    /// The server's time, in seconds.
    pub server_seconds: f64,
}

impl KFedRun {
    /// The time as the paper counts it: the slowest client plus the server.
    pub fn seconds(&self) -> f64 {
        self.client_seconds.iter().copied().fold(0.0, f64::max) + self.server_seconds
    }
}

/// Runs K-FED on clients' data sets; client `l` draws its random choices
/// from `ExpRace::new(stage_seed(seed, 5, l))`. Clients run in parallel
/// under the `parallel` feature (the result does not depend on it).
///
/// # Errors
///
/// [`BaselineError::InvalidParameter`] when the clients send fewer than K
/// centroids in all; [`BaselineError::EmptyClient`];
/// [`BaselineError::Seeding`].
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, PointId};
/// use baselines::{kfed, KFedParams};
///
/// // Two clients, each with one tight pair of points near 0 and near 10.
/// let a = Dataset::with_ids(DMatrix::from_column_slice(1, 4, &[0.0, 0.1, 10.0, 10.1]),
///     (0..4).map(PointId).collect())?;
/// let b = Dataset::with_ids(DMatrix::from_column_slice(1, 4, &[0.2, 0.3, 10.2, 10.3]),
///     (4..8).map(PointId).collect())?;
/// let run = kfed(&[a, b], &KFedParams::new(2, 2).validate()?, 1)?;
/// assert_eq!(run.local_centroids, 4);
/// assert!(run.phi_f < 0.2); // server centroids at 0.15 and 10.15
/// # Ok::<(), baselines::BaselineError>(())
/// ```
pub fn kfed(
    clients: &[Dataset],
    params: &ValidKFedParams,
    seed: u64,
) -> Result<KFedRun, BaselineError> {
    if let Some(client) = clients.iter().position(Dataset::is_empty) {
        return Err(BaselineError::EmptyClient { client });
    }
    let locals: Vec<(LocalClustering, f64)> = map_indexed(clients, |l, data| {
        let start = Instant::now();
        let mut sampler = ExpRace::new(stage_seed(seed, stage::KFED_CLIENT, l as u64));
        let local = awasthi_sheffet(data, params, &mut sampler)?;
        Ok::<_, BaselineError>((local, start.elapsed().as_secs_f64()))
    })?;
    let start = Instant::now();
    let dim = clients.first().map_or(0, Dataset::dim);
    let mut coords = Vec::new();
    let mut offsets = Vec::with_capacity(locals.len());
    for (local, _) in &locals {
        offsets.push(coords.len() / dim.max(1));
        coords.extend(local.centroids.iter());
    }
    let m = coords.len() / dim.max(1);
    let k = params.k();
    if m < k {
        return Err(BaselineError::InvalidParameter {
            name: "K",
            value: k.to_string(),
            reason: "K-FED needs at least K local centroids in all",
        });
    }
    let estimates = Dataset::new(DMatrix::from_vec(dim, m, coords))?;
    let first = locals.first().map_or(0, |(l, _)| l.centroids.ncols());
    let init = max_from_set(&estimates, first.min(k), k);
    let (centroids, server_assignment) = one_lloyd_round(&estimates, &init);
    let server_seconds = start.elapsed().as_secs_f64();
    let parts: Vec<InducedClient<'_>> = clients
        .iter()
        .zip(&locals)
        .zip(&offsets)
        .map(|((data, (local, _)), &off)| InducedClient {
            data,
            local: &local.assignment,
            server: &server_assignment[off..off + local.centroids.ncols()],
        })
        .collect();
    let induced = parts
        .iter()
        .map(|c| c.local.iter().map(|&j| c.server[j as usize]).collect())
        .collect();
    let phi_f = induced_phi(&SqEuclidean, parts, centroids.as_view())?;
    Ok(KFedRun {
        centroids,
        phi_f,
        induced,
        local_centroids: m,
        client_seconds: locals.iter().map(|(_, t)| *t).collect(),
        server_seconds,
    })
}

/// The server's initial centres (K-FED's "max-from-set" rule): the first
/// `first` estimates, then repeatedly the estimate farthest (in Euclidean
/// distance) from the centres chosen so far, the lowest index on ties,
/// until there are `k`. Returns them as the columns of a matrix.
fn max_from_set(estimates: &Dataset, first: usize, k: usize) -> DMatrix<f64> {
    let m = estimates.len();
    let mut chosen: Vec<usize> = (0..first.min(m)).collect();
    let mut taken = vec![false; m];
    let mut dist = vec![f64::INFINITY; m];
    for &c in &chosen {
        taken[c] = true;
    }
    let update = |dist: &mut [f64], c: usize| {
        for (p, dp) in dist.iter_mut().enumerate() {
            *dp = dp.min(SqEuclidean.cost(estimates.point(p), estimates.point(c)));
        }
    };
    for &c in &chosen {
        update(&mut dist, c);
    }
    while chosen.len() < k.min(m) {
        let mut best: Option<usize> = None;
        for p in (0..m).filter(|&p| !taken[p]) {
            if best.is_none_or(|b| dist[p] > dist[b]) {
                best = Some(p);
            }
        }
        // `chosen.len() < m`, so some estimate is not taken yet.
        let Some(b) = best else { break };
        taken[b] = true;
        chosen.push(b);
        update(&mut dist, b);
    }
    let dim = estimates.dim();
    let coords: Vec<f64> = chosen
        .iter()
        .flat_map(|&c| estimates.point(c).iter().copied())
        .collect();
    DMatrix::from_vec(dim, chosen.len(), coords)
}

/// One round of Lloyd's algorithm from `init` (columns), as K-FED's server
/// runs it: every estimate goes to its nearest initial centre (the lowest
/// index on ties), and each centre moves to the mean of its estimates (a
/// centre without estimates stays). Returns the moved centres and the
/// assignment *of that round*, so that each server cluster is exactly the
/// set whose mean its centroid is; the reference computes its induced loss
/// from this same assignment.
fn one_lloyd_round(estimates: &Dataset, init: &DMatrix<f64>) -> (DMatrix<f64>, Vec<u32>) {
    let (dim, k) = init.shape();
    let centres: Vec<Vec<f64>> = (0..k)
        .map(|j| init.column(j).iter().copied().collect())
        .collect();
    let mut sums = DMatrix::<f64>::zeros(dim, k);
    let mut counts = vec![0usize; k];
    let mut assignment = Vec::with_capacity(estimates.len());
    for p in 0..estimates.len() {
        let x = estimates.point(p);
        let mut best = (0usize, f64::INFINITY);
        for (j, c) in centres.iter().enumerate() {
            let cost = SqEuclidean.cost(x, c);
            if cost < best.1 {
                best = (j, cost);
            }
        }
        let j = best.0;
        for (a, &xa) in x.iter().enumerate() {
            sums[(a, j)] += xa;
        }
        counts[j] += 1;
        assignment.push(u32::try_from(j).unwrap_or(u32::MAX));
    }
    let mut out = init.clone();
    for (j, &count) in counts.iter().enumerate() {
        if count > 0 {
            out.set_column(j, &(sums.column(j) / count as f64));
        }
    }
    (out, assignment)
}

/// The local step of K-FED: the Awasthi-Sheffet clustering of one client's
/// points into `k = params.local_k()` clusters (see the module
/// documentation), with Lloyd's iterations capped at
/// `params.max_iterations()`. A client with at most `k` points makes every
/// point its own centroid (as the reference does).
///
/// The top-k right singular vectors of the n x d point matrix are the top
/// eigenvectors of the d x d Gram matrix `X X^T` (our points are columns),
/// which is what we decompose. A seed whose 1:3 set is empty (only
/// possible when two seeds coincide) keeps its own position.
///
/// # Errors
///
/// [`BaselineError::Seeding`] for empty data.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, ExpRace};
/// use baselines::{awasthi_sheffet, KFedParams};
///
/// let data = Dataset::new(DMatrix::from_column_slice(2, 4, &[0.0, 0.0, 0.0, 1.0, 9.0, 9.0, 9.0, 10.0]))?;
/// let params = KFedParams::new(2, 2).validate()?;
/// let local = awasthi_sheffet(&data, &params, &mut ExpRace::new(3))?;
/// assert_eq!(local.assignment[0], local.assignment[1]);
/// assert_ne!(local.assignment[0], local.assignment[2]);
/// # Ok::<(), baselines::BaselineError>(())
/// ```
pub fn awasthi_sheffet(
    data: &Dataset,
    params: &ValidKFedParams,
    sampler: &mut ExpRace,
) -> Result<LocalClustering, BaselineError> {
    let k = params.local_k();
    let kpp = KMeansPlusPlus::new(SeedingParams::new(k).validate()?);
    if data.is_empty() {
        return Err(seeding::SeedingError::EmptyDataset.into());
    }
    let (d, n) = (data.dim(), data.len());
    if n <= k {
        return Ok(LocalClustering {
            centroids: data.points().clone(),
            assignment: (0..n)
                .map(|p| u32::try_from(p).unwrap_or(u32::MAX))
                .collect(),
        });
    }
    let x = data.points();
    let v = top_subspace(x, k.min(d));
    let projected = v.transpose() * x;
    let pdata = Dataset::with_ids(projected.clone(), data.ids().to_vec())?;
    let seeds = kpp.fit(pdata, &mut *sampler);
    let s = seeds.centers().clone_owned();
    let init = split_means(&projected, s.as_view(), &v);
    let lloyd = KMeansParams::new(init.ncols()).max_iterations(params.max_iterations());
    let model = KMeans::new(lloyd.validate()?).fit_from(data, init.as_view(), sampler)?;
    Ok(LocalClustering {
        centroids: model.centroids().clone_owned(),
        assignment: model.assignment().to_vec(),
    })
}

/// The top-`r` eigenvectors of `X X^T` as the columns of a d x r matrix
/// (eigenvalues descending, the lower index first on ties).
fn top_subspace(x: &DMatrix<f64>, r: usize) -> DMatrix<f64> {
    let gram = x * x.transpose();
    let eig = gram.symmetric_eigen();
    let mut order: Vec<usize> = (0..eig.eigenvalues.len()).collect();
    order.sort_by(|&a, &b| {
        eig.eigenvalues[b]
            .total_cmp(&eig.eigenvalues[a])
            .then(a.cmp(&b))
    });
    let cols: Vec<_> = order[..r]
        .iter()
        .map(|&i| eig.eigenvectors.column(i).clone_owned())
        .collect();
    DMatrix::from_columns(&cols)
}

/// The 1:3 split of Awasthi and Sheffet: for every seed (column of
/// `seeds`, in the projected space), the mean of the projected points at
/// least three times closer to it than to any other seed, lifted back by
/// `v`.
fn split_means(
    projected: &DMatrix<f64>,
    seeds: DMatrixView<'_, f64>,
    v: &DMatrix<f64>,
) -> DMatrix<f64> {
    let (r, m) = seeds.shape();
    let mut sums = DMatrix::<f64>::zeros(r, m);
    let mut counts = vec![0usize; m];
    let seed_cols: Vec<Vec<f64>> = (0..m)
        .map(|j| seeds.column(j).iter().copied().collect())
        .collect();
    for p in 0..projected.ncols() {
        let x: Vec<f64> = projected.column(p).iter().copied().collect();
        let costs: Vec<f64> = seed_cols.iter().map(|s| SqEuclidean.cost(&x, s)).collect();
        for j in 0..m {
            // dist_i >= 3 dist_j for every other seed i, in squares.
            let inside = (0..m).all(|i| i == j || costs[i] >= 9.0 * costs[j]);
            if inside {
                let mut col = sums.column_mut(j);
                col += projected.column(p);
                counts[j] += 1;
            }
        }
    }
    let mut means = DMatrix::<f64>::zeros(r, m);
    for (j, &count) in counts.iter().enumerate() {
        if count == 0 {
            means.set_column(j, &seeds.column(j));
        } else {
            means.set_column(j, &(sums.column(j) / count as f64));
        }
    }
    v * means
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdata::{blobs, non_iid, recovers, star};

    fn params(k: usize, local_k: usize) -> ValidKFedParams {
        KFedParams::new(k, local_k).validate().unwrap()
    }

    #[test]
    fn recovers_well_separated_blobs() {
        let (points, labels) = blobs(4, 100, 3, 0.01, "kfed-blobs");
        let clients = non_iid(&points, &labels, 8, 2);
        let all = Dataset::new(points).unwrap();
        let run = kfed(&clients, &params(4, 2), 9).unwrap();
        let ratio = seeding::loss_ratio(run.phi_f, star(&all, 4)).unwrap();
        assert!((0.999..1.1).contains(&ratio), "{ratio}");
        assert!(recovers(&clients, &run.induced, &labels));
        assert_eq!(run.local_centroids, 16);
        assert_eq!(run.client_seconds.len(), 8);
        // Reproducible.
        let again = kfed(&clients, &params(4, 2), 9).unwrap();
        assert_eq!(run.centroids, again.centroids);
    }

    #[test]
    fn max_from_set_takes_the_farthest() {
        let m = DMatrix::from_column_slice(1, 5, &[0.0, 1.0, 5.0, -3.0, 2.0]);
        let est = Dataset::new(m).unwrap();
        let init = max_from_set(&est, 1, 3);
        // From {0}: 5 is farthest; then from {0, 5}: -3 (distance 3).
        assert_eq!(init.as_slice(), &[0.0, 5.0, -3.0]);
    }

    #[test]
    fn split_means_use_the_one_to_three_rule() {
        // Seeds at 0 and 10 in 1-D: 1 is inside seed 0's set (9 >= 3),
        // 4 is in neither (6 < 12 and 4 < 18).
        let p = DMatrix::from_column_slice(1, 4, &[0.0, 1.0, 4.0, 10.0]);
        let seeds = DMatrix::from_column_slice(1, 2, &[0.0, 10.0]);
        let v = DMatrix::identity(1, 1);
        let means = split_means(&p, seeds.as_view(), &v);
        assert!((means[(0, 0)] - 0.5).abs() < 1e-12);
        assert!((means[(0, 1)] - 10.0).abs() < 1e-12);
    }

    #[test]
    fn small_clients_and_bad_parameters() {
        let data = Dataset::new(DMatrix::from_column_slice(1, 2, &[0.0, 1.0])).unwrap();
        let local = awasthi_sheffet(
            &data,
            &KFedParams::new(1, 3).max_iterations(10).validate().unwrap(),
            &mut ExpRace::new(1),
        )
        .unwrap();
        assert_eq!(local.centroids.ncols(), 2);
        assert_eq!(local.assignment, vec![0, 1]);
        assert!(KFedParams::new(0, 1).validate().is_err());
        assert!(KFedParams::new(1, 1).max_iterations(0).validate().is_err());
        // Two centroids cannot make three server clusters.
        assert!(kfed(std::slice::from_ref(&data), &params(3, 2), 1).is_err());
        let empty = Dataset::empty(1).unwrap();
        assert!(matches!(
            kfed(&[data, empty], &params(1, 1), 1),
            Err(BaselineError::EmptyClient { client: 1 })
        ));
    }
}
