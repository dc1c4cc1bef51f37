//! The objectives of the paper: the federated objective phi_f of
//! Definition 3.1, the centralized phi_c, and the loss ratio
//! `phi_f / phi_c*` of Section 6.

use nalgebra::DMatrix;
use seeding::{
    Dataset, InducedClient, KMeans, KMeansParams, Metric, SqEuclidean, induced_phi, loss_ratio, phi,
};

use crate::ids::star_seed;
use crate::{ClientId, Federation, MufcError, MufcResult};

/// The objectives of a federation's clustering.
///
/// # Example
///
/// ```
/// use mufc::Objectives;
///
/// let o = Objectives { phi_f: 12.5, phi_c: 11.0, phi_c_star: Some(10.0), loss_ratio: Some(1.25) };
/// assert!(o.phi_c <= o.phi_f);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Objectives {
    /// The federated objective phi_f (Definition 3.1, equation (2)): every
    /// point pays its squared distance to the server centroid *its local
    /// centroid* was assigned to (see [`Federation::objectives`] for the
    /// assignment in each mode).
    pub phi_f: f64,
    /// The centralized objective phi_c of the server's centroids: every
    /// point pays its squared distance to the nearest server centroid
    /// (equation (1)). Always at most `phi_f`.
    pub phi_c: f64,
    /// The estimate of the optimal centralized objective, if given.
    pub phi_c_star: Option<f64>,
    /// `phi_f / phi_c*`, the paper's loss ratio (Table 1), if `phi_c*` was
    /// given.
    pub loss_ratio: Option<f64>,
}

impl Federation {
    /// The server cluster of each cluster `client` sends (by index into
    /// its centroids): the cluster of the bin (or plain centroid) it was
    /// sent in; for a client too small to send ([`crate::Client::sends`]), the
    /// server centroid nearest to its one centre.
    fn induced_map(&self, pos: usize) -> MufcResult<Vec<u32>> {
        let client = &self.clients()[pos];
        let server = self.server();
        let clusters: Vec<Option<usize>> = if !client.sends() {
            let nearest = server.centroids().and_then(|centroids| {
                let c = client.centroids();
                (0..centroids.ncols()).min_by(|&a, &b| {
                    let d = |i: usize| {
                        SqEuclidean.cost(c.column(0).as_slice(), centroids.column(i).as_slice())
                    };
                    d(a).total_cmp(&d(b)).then(a.cmp(&b))
                })
            });
            vec![nearest; client.num_centroids()]
        } else {
            match self.quantizer() {
                Some(q) => client
                    .centroid_bins(q)?
                    .iter()
                    .map(|b| server.cluster_of_bin(b))
                    .collect(),
                None => (0..client.num_centroids())
                    .map(|j| server.cluster_of_plain(client.id(), j))
                    .collect(),
            }
        };
        clusters
            .into_iter()
            .map(|c| {
                // Every sent centre stands behind a server point; `None`
                // only before the server has a model.
                Ok(c.and_then(|c| u32::try_from(c).ok()).unwrap_or(0))
            })
            .collect()
    }

    /// The objectives of the current clustering.
    ///
    /// phi_f follows Definition 3.1: a point of local cluster `j` of a
    /// client takes the server centroid that local centroid `j` was
    /// assigned to, namely
    ///
    /// - SCMA with bin centres: the server's cluster of the centre of the
    ///   bin holding centroid `j` (the server's last assignment step);
    /// - SCMA with uniform samples: the server cluster that most of that
    ///   bin's samples were assigned to (the lowest index on ties; with
    ///   `gamma` small next to the clusters, all of them);
    /// - plain mode (Algorithm 5): the server's cluster of the weighted
    ///   point that *is* centroid `j`.
    ///
    /// Distances are to the server's final centroids. `phi_c_star`, if
    /// given (for instance from [`Self::estimate_phi_c_star`]), gives the
    /// loss ratio `phi_f / phi_c*`.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoServerModel`] when every client was removed;
    /// [`MufcError::Seeding`] for a `phi_c_star` that is not finite and
    /// positive.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{Federation, FederationConfig};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let a = Dataset::new(DMatrix::from_fn(2, 60, |r, c| ((c * 7 + r) % 13) as f64 / 40.0 - 0.2 + (c % 2) as f64 * 0.3))?;
    /// let fed = Federation::new(vec![a], &FederationConfig::new(2).gamma(0.02).min_clients(1).validate()?)?;
    /// let star = fed.estimate_phi_c_star(3)?;
    /// let o = fed.objectives(Some(star))?;
    /// assert!(o.phi_c <= o.phi_f);
    /// assert!(o.loss_ratio.unwrap() >= 0.9);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn objectives(&self, phi_c_star: Option<f64>) -> MufcResult<Objectives> {
        let centroids = self.server().centroids().ok_or(MufcError::NoServerModel)?;
        let maps = (0..self.clients().len())
            .map(|p| self.induced_map(p))
            .collect::<MufcResult<Vec<_>>>()?;
        // Sums run in id order, so that the objectives do not depend on
        // where removals moved the points (positions change, ids do not).
        let sorted = self
            .clients()
            .iter()
            .map(|c| by_id(c.data(), &c.local_clusters()))
            .collect::<MufcResult<Vec<_>>>()?;
        let parts = sorted
            .iter()
            .zip(&maps)
            .map(|((data, local), server)| InducedClient {
                data,
                local,
                server,
            });
        let phi_f = induced_phi(&SqEuclidean, parts, centroids)?;
        let mut phi_c = 0.0;
        for (data, _) in &sorted {
            phi_c += phi(&SqEuclidean, data, centroids)?;
        }
        let loss_ratio = phi_c_star.map(|s| loss_ratio(phi_f, s)).transpose()?;
        Ok(Objectives {
            phi_f,
            phi_c,
            phi_c_star,
            loss_ratio,
        })
    }

    /// Every point's contribution to phi_f (its squared distance to its
    /// induced server centroid), per client, by position in the client's
    /// data: the paper's adversarial removals take the largest.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoServerModel`] when every client was removed.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{Federation, FederationConfig};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let a = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 7 + r) % 10) as f64 / 25.0 - 0.2))?;
    /// let fed = Federation::new(vec![a], &FederationConfig::new(2).gamma(0.05).min_clients(1).validate()?)?;
    /// let costs = fed.induced_costs()?;
    /// let total: f64 = costs.iter().flat_map(|(_, c)| c).sum();
    /// assert!((total - fed.objectives(None)?.phi_f).abs() <= 1e-9 * total.max(1.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn induced_costs(&self) -> MufcResult<Vec<(ClientId, Vec<f64>)>> {
        let centroids = self.server().centroids().ok_or(MufcError::NoServerModel)?;
        let d = centroids.nrows();
        let flat: Vec<f64> = centroids.iter().copied().collect();
        (0..self.clients().len())
            .map(|p| {
                let c = &self.clients()[p];
                let map = self.induced_map(p)?;
                let local = c.local_clusters();
                let data = c.data();
                let costs = (0..data.len())
                    .map(|pos| {
                        let s = map.get(local[pos] as usize).copied().unwrap_or(0) as usize;
                        let centre = flat.get(s * d..(s + 1) * d).unwrap_or(&[]);
                        data.weight(pos) as f64 * SqEuclidean.cost(data.point(pos), centre)
                    })
                    .collect();
                Ok((c.id(), costs))
            })
            .collect()
    }

    /// All clients' points in one data set, client after client and each
    /// client's points in id order (so the result depends on the data, not
    /// on where removals moved points), ids renumbered `0..n`: for
    /// centralized baselines.
    ///
    /// # Errors
    ///
    /// [`MufcError::Seeding`] only if the points could not form a data set
    /// (they did when they came in).
    pub fn union(&self) -> MufcResult<Dataset> {
        let sorted = self
            .clients()
            .iter()
            .map(|c| by_id(c.data(), &[]).map(|(d, _)| d))
            .collect::<MufcResult<Vec<_>>>()?;
        union(&sorted)
    }

    /// The estimate of the optimal centralized objective phi_c* of the
    /// paper (footnote 1 of Section 6): the best of `runs` centralized
    /// K-means++ + Lloyd runs on the union of the clients' points, with
    /// the server's `K` and seeds derived from the federation seed.
    ///
    /// The runs are K-means++ + Lloyd ([`seeding::KMeans`], tolerance
    /// `1e-4`, at most 300 iterations), run `i` seeded from the
    /// federation seed and `i`.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidConfig`] for `runs == 0`.
    pub fn estimate_phi_c_star(&self, runs: usize) -> MufcResult<f64> {
        estimate_phi_c_star(
            &self.union()?,
            self.config().server().k(),
            runs,
            self.config().seed(),
        )
    }
}

/// `data` with its points in id order, and `labels` (by position) in the
/// same order.
fn by_id(data: &Dataset, labels: &[u32]) -> MufcResult<(Dataset, Vec<u32>)> {
    let mut order: Vec<usize> = (0..data.len()).collect();
    order.sort_unstable_by_key(|&p| data.id(p));
    let mut coords = Vec::with_capacity(data.coords().len());
    for &p in &order {
        coords.extend_from_slice(data.point(p));
    }
    let m = DMatrix::from_vec(data.dim(), order.len(), coords);
    let ids = order.iter().map(|&p| data.id(p)).collect();
    let weights = order.iter().map(|&p| data.weight(p)).collect();
    let labels = order
        .iter()
        .map(|&p| labels.get(p).copied().unwrap_or(0))
        .collect();
    Ok((Dataset::with_weights(m, ids, weights)?, labels))
}

/// The points of several data sets in one (ids renumbered `0..n`, in
/// order; weights kept).
///
/// # Errors
///
/// [`MufcError::Seeding`] for data sets of different dimensions or no data
/// set at all.
pub(crate) fn union<'a>(datasets: impl IntoIterator<Item = &'a Dataset>) -> MufcResult<Dataset> {
    let mut dim = None;
    let (mut coords, mut weights) = (Vec::new(), Vec::new());
    let mut weighted = false;
    for d in datasets {
        if *dim.get_or_insert(d.dim()) != d.dim() {
            return Err(seeding::SeedingError::LengthMismatch {
                what: "dimension of the data sets",
                expected: dim.unwrap_or(0),
                found: d.dim(),
            }
            .into());
        }
        coords.extend_from_slice(d.coords());
        weights.extend_from_slice(d.weights());
        weighted |= d.is_weighted();
    }
    let dim = dim.ok_or(seeding::SeedingError::EmptyDataset)?;
    let n = weights.len();
    let m = DMatrix::from_vec(dim, n, coords);
    let ids = (0..n as u64).map(seeding::PointId).collect();
    Ok(if weighted {
        Dataset::with_weights(m, ids, weights)?
    } else {
        Dataset::with_ids(m, ids)?
    })
}

/// The paper's estimate of the optimal centralized objective phi_c*: the
/// smallest objective of `runs` runs of K-means++ + Lloyd
/// ([`seeding::KMeans`], tolerance `1e-4`, at most 300 iterations) on
/// `data`, run `i` seeded from `seed` and `i`.
///
/// # Errors
///
/// [`MufcError::InvalidConfig`] for `runs == 0`; [`MufcError::Seeding`]
/// for `k == 0` or empty data.
pub(crate) fn estimate_phi_c_star(
    data: &Dataset,
    k: usize,
    runs: usize,
    seed: u64,
) -> MufcResult<f64> {
    if runs == 0 {
        return Err(crate::error::config_error(
            crate::ConfigParam::Runs,
            "at least one run",
        ));
    }
    let km = KMeans::new(KMeansParams::new(k).restarts(runs).validate()?);
    Ok(km.fit_best(data, |i| star_seed(seed, i))?.phi())
}

#[cfg(test)]
mod tests {
    use nalgebra::DMatrix;
    use seeding::Dataset;

    use super::{estimate_phi_c_star, union};

    #[test]
    fn the_union_keeps_every_point_in_order() {
        let a = Dataset::new(DMatrix::from_column_slice(1, 2, &[0.0, 1.0])).unwrap();
        let b = Dataset::new(DMatrix::from_column_slice(1, 1, &[5.0])).unwrap();
        let u = union([&a, &b]).unwrap();
        assert_eq!(u.len(), 3);
        assert_eq!(u.point(2), &[5.0]);
        let c = Dataset::new(DMatrix::from_column_slice(2, 1, &[5.0, 1.0])).unwrap();
        assert!(union([&a, &c]).is_err());
        assert!(union([]).is_err());
    }

    #[test]
    fn phi_c_star_is_the_best_of_the_runs() {
        let data = Dataset::new(DMatrix::from_column_slice(1, 4, &[0.0, 1.0, 10.0, 11.0])).unwrap();
        // Two clusters of two points, 1/4 + 1/4 each.
        assert!((estimate_phi_c_star(&data, 2, 5, 0).unwrap() - 1.0).abs() < 1e-12);
        assert!(estimate_phi_c_star(&data, 2, 0, 0).is_err());
    }
}
