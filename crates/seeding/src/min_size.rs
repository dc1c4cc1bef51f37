//! A clustering in which every cluster stands for at least a given weight:
//! the small clusters of a fitted model dissolved into the others.
//!
//! A federated client sends one point per cluster; a cluster of one
//! record sends that record. [`ExactModel::min_size`](crate::ExactModel::min_size)
//! and [`Seeding::min_size`](crate::Seeding::min_size) dissolve the
//! clusters below a minimum weight, smallest first: their points move to
//! the nearest remaining centre, and (for K-means) the centres that
//! received points become the means of their new members. The result is a
//! function of the model and its points alone (ties go to the lowest
//! index, means are exact), so a model unlearned bit for bit gives the
//! same clusters as a model retrained.

use std::collections::HashMap;

use nalgebra::{DMatrix, DMatrixView};

use crate::{Dataset, PointId, SeedingError};

/// The clusters of a model once every cluster below a minimum weight was
/// dissolved ([`crate::ExactModel::min_size`], [`crate::Seeding::min_size`]).
///
/// Every cluster weighs at least the minimum, except when the whole model
/// weighs less: then all points form one cluster and [`Self::is_sendable`]
/// is `false`.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, ExactKMeans, KMeansParams, PointId};
///
/// // Two groups of 4 points and one lone point far away.
/// let m = DMatrix::from_row_slice(1, 9, &[0.0, 0.1, 0.2, 0.3, 5.0, 5.1, 5.2, 5.3, 9.0]);
/// let data = Dataset::new(m)?;
/// let model = ExactKMeans::new(KMeansParams::new(3).validate()?).fit(&data, 1)?;
/// assert!(model.sizes().contains(&1));
///
/// let c = model.min_size(2);
/// assert_eq!(c.len(), 2);
/// assert!(c.sizes().iter().all(|&s| s >= 2));
/// // The lone point joined the nearer group, whose centre moved to the
/// // mean of its five points.
/// let far = c.assignment(PointId(8)).unwrap();
/// assert_eq!(c.assignment(PointId(4)), Some(far));
/// assert!((c.centroids()[(0, far)] - 5.92).abs() < 1e-9);
/// assert!(c.is_sendable());
/// # Ok::<(), seeding::SeedingError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MinSizeClusters {
    centroids: DMatrix<f64>,
    sizes: Vec<u64>,
    labels: HashMap<PointId, u32>,
    min: u64,
}

impl MinSizeClusters {
    /// The centres, as the columns of a d x m matrix, in the order of the
    /// model's clusters they come from.
    pub fn centroids(&self) -> DMatrixView<'_, f64> {
        self.centroids.as_view()
    }

    /// The weight of every cluster.
    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// The number of clusters.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Whether there is no cluster (a model of no point).
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    /// The minimum weight asked for.
    pub fn min_weight(&self) -> u64 {
        self.min
    }

    /// Whether every cluster weighs at least the minimum: `false` only when
    /// the whole model weighs less (its points then form one cluster, which
    /// a client should not send).
    pub fn is_sendable(&self) -> bool {
        self.sizes.iter().all(|&s| s >= self.min)
    }

    /// The cluster of point `id`, or `None` if it is not in the model.
    pub fn assignment(&self, id: PointId) -> Option<usize> {
        self.labels.get(&id).map(|&l| l as usize)
    }

    /// The cluster of each of `ids`, in their order; `None` if one is not
    /// in the model. With the centres and the sizes, this is what
    /// [`Self::from_parts`] takes back (a store keeps the clusters so, and
    /// does not fit its clients again to open).
    pub fn labels_of(&self, ids: &[PointId]) -> Option<Vec<u32>> {
        ids.iter().map(|id| self.labels.get(id).copied()).collect()
    }

    /// The clusters of the points of `data` from their parts: the centres
    /// (a `data.dim()` x m matrix), the weight of each cluster, the
    /// cluster of each point by position in `data` ([`Self::labels_of`]
    /// of `data.ids()`) and the minimum weight asked for.
    ///
    /// The parts are checked against each other and against `data`, not
    /// against a model: the caller vouches that they are a model's
    /// clusters (a stored copy under a checksum, say).
    ///
    /// # Errors
    ///
    /// [`SeedingError::InvalidState`] when the shapes disagree, a label
    /// names no cluster, a cluster's weight is not the sum of its points'
    /// weights, or a centre is not finite.
    ///
    /// # Example
    ///
    /// ```
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, ExactKMeans, KMeansParams, MinSizeClusters};
    ///
    /// let m = DMatrix::from_row_slice(1, 9, &[0.0, 0.1, 0.2, 0.3, 5.0, 5.1, 5.2, 5.3, 9.0]);
    /// let data = Dataset::new(m)?;
    /// let c = ExactKMeans::new(KMeansParams::new(3).validate()?).fit(&data, 1)?.min_size(2);
    ///
    /// let labels = c.labels_of(data.ids()).unwrap();
    /// let back = MinSizeClusters::from_parts(
    ///     c.centroids().into_owned(), c.sizes().to_vec(), &data, &labels, 2,
    /// )?;
    /// assert_eq!(back, c);
    /// // A label that names no cluster is refused.
    /// let mut bad = labels.clone();
    /// bad[0] = 7;
    /// assert!(MinSizeClusters::from_parts(
    ///     c.centroids().into_owned(), c.sizes().to_vec(), &data, &bad, 2,
    /// ).is_err());
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn from_parts(
        centroids: DMatrix<f64>,
        sizes: Vec<u64>,
        data: &Dataset,
        labels: &[u32],
        min: u64,
    ) -> Result<Self, SeedingError> {
        let bad = SeedingError::InvalidState;
        if centroids.ncols() != sizes.len()
            || (!sizes.is_empty() && centroids.nrows() != data.dim())
        {
            return Err(bad("the clusters' centres and sizes do not match"));
        }
        if labels.len() != data.len() {
            return Err(bad("the clusters do not label every point once"));
        }
        if centroids.iter().any(|x| !x.is_finite()) {
            return Err(bad("a cluster's centre is not finite"));
        }
        let mut weights = vec![0u64; sizes.len()];
        for (&l, &w) in labels.iter().zip(data.weights()) {
            let slot = weights
                .get_mut(l as usize)
                .ok_or(bad("a point's cluster label names no cluster"))?;
            *slot = slot
                .checked_add(w)
                .ok_or(bad("a cluster's weight overflows"))?;
        }
        if weights != sizes {
            return Err(bad("a cluster's size is not the weight of its points"));
        }
        Ok(Self {
            centroids,
            sizes,
            labels: data
                .ids()
                .iter()
                .copied()
                .zip(labels.iter().copied())
                .collect(),
            min,
        })
    }
}

/// What [`dissolve`] needs of a model: where a point goes, and how the
/// centres follow the points that move.
pub(crate) trait Centres {
    /// The nearest centre to the point at `pos` among those `alive`
    /// (lowest index on ties).
    fn nearest(&self, pos: usize, alive: &[bool]) -> usize;
    /// The point at `pos` moved from cluster `from` to cluster `to`.
    fn moved(&mut self, pos: usize, from: usize, to: usize);
    /// The clusters in `touched` changed members: their centres follow.
    fn settle(&mut self, touched: &[usize]);
}

/// Dissolves, smallest first (lowest index on ties), every cluster that
/// weighs less than `min` while more than one cluster is left: its points
/// go to their nearest remaining centre, then the centres settle. `labels`
/// and `weights` are by position, `sizes` by cluster; empty clusters are
/// dropped. Returns which clusters are left.
pub(crate) fn dissolve<C: Centres>(
    centres: &mut C,
    labels: &mut [u32],
    weights: &[u64],
    sizes: &mut [u64],
    min: u64,
) -> Vec<bool> {
    let mut alive: Vec<bool> = sizes.iter().map(|&s| s > 0).collect();
    loop {
        let left = alive.iter().filter(|&&a| a).count();
        let smallest = (0..sizes.len())
            .filter(|&j| alive[j] && sizes[j] < min)
            .min_by_key(|&j| (sizes[j], j));
        let Some(j) = smallest.filter(|_| left > 1) else {
            return alive;
        };
        alive[j] = false;
        let mut touched = Vec::new();
        for pos in 0..labels.len() {
            if labels[pos] as usize != j {
                continue;
            }
            let to = centres.nearest(pos, &alive);
            centres.moved(pos, j, to);
            // Indices are below the model's k, which fits a u32 label.
            labels[pos] = u32::try_from(to).unwrap_or(u32::MAX);
            sizes[to] = sizes[to].saturating_add(weights[pos]);
            touched.push(to);
        }
        sizes[j] = 0;
        touched.sort_unstable();
        touched.dedup();
        centres.settle(&touched);
    }
}

/// The clusters left by [`dissolve`], renumbered in order: `centroid(j)`
/// gives the centre of old cluster `j`, `ids` the point of each position.
pub(crate) fn collect<'a>(
    dim: usize,
    alive: &[bool],
    sizes: &[u64],
    labels: &[u32],
    ids: &[PointId],
    min: u64,
    centroid: impl Fn(usize) -> &'a [f64],
) -> MinSizeClusters {
    let kept: Vec<usize> = (0..alive.len()).filter(|&j| alive[j]).collect();
    let mut renumber = vec![u32::MAX; alive.len()];
    for (new, &old) in kept.iter().enumerate() {
        renumber[old] = u32::try_from(new).unwrap_or(u32::MAX);
    }
    let mut centroids = DMatrix::zeros(dim, kept.len());
    for (new, &old) in kept.iter().enumerate() {
        centroids.column_mut(new).copy_from_slice(centroid(old));
    }
    MinSizeClusters {
        centroids,
        sizes: kept.iter().map(|&j| sizes[j]).collect(),
        labels: ids
            .iter()
            .zip(labels)
            .map(|(&id, &l)| (id, renumber[l as usize]))
            .collect(),
        min,
    }
}

/// The nearest centre among those `alive` (lowest index on ties) under
/// `cost`, centres the columns of a column-major `centres` slice.
pub(crate) fn nearest_alive(
    x: &[f64],
    centres: &[f64],
    alive: &[bool],
    cost: impl Fn(&[f64], &[f64]) -> f64,
) -> usize {
    let d = x.len().max(1);
    let mut best: Option<(usize, f64)> = None;
    for (j, c) in centres.chunks_exact(d).enumerate() {
        if !alive.get(j).copied().unwrap_or(false) {
            continue;
        }
        let f = cost(x, c);
        if best.is_none_or(|(_, b)| f.total_cmp(&b).is_lt()) {
            best = Some((j, f));
        }
    }
    best.map_or(0, |(j, _)| j)
}
