//! DC-KMeans, the divide-and-conquer K-means with deletion of Ginart,
//! Guan, Valiant and Zou ("Making AI Forget You: Data Deletion in Machine
//! Learning", NeurIPS 2019), as a tree of height 2 whose leaves are the
//! clients, the form the MUFC experiments compare against.
//!
//! In our words: every leaf runs K-means (K-means++ seeding and Lloyd) on
//! its client's points; the root runs K-means on the union of the leaves'
//! centroids, each with unit weight, keeping the best of several restarts.
//! Every point takes the root centroid its leaf centroid went to (the
//! induced objective, [`seeding::induced_phi`]).
//!
//! Deleting a point retrains its leaf and then the root; the other leaves
//! are untouched, which is what makes deletion cheaper than retraining the
//! whole tree. Each leaf and each root restart draws from an [`ExpRace`]
//! keyed by the run's seed and its own index ([`crate::stage_seed`]), so a
//! deletion gives exactly the model that training on the remaining points
//! from scratch gives with the same seed.

use std::collections::HashMap;
use std::time::Instant;

use nalgebra::{DMatrix, DMatrixView};
use seeding::{
    Dataset, ExpRace, InducedClient, KMeans, KMeansModel, KMeansParams, PointId, SqEuclidean,
    induced_phi,
};

use crate::BaselineError;
use crate::error::at_least_one;
use crate::seeds::{map_indexed, stage, stage_seed};

/// Parameters of [`DcKMeans`], checked by [`DcParams::validate`].
///
/// # Example
///
/// ```
/// use baselines::DcParams;
///
/// let p = DcParams::new(10, 3).validate()?;
/// assert_eq!((p.k(), p.leaf_k(), p.root_restarts(), p.max_iterations()), (10, 3, 10, 300));
/// assert!(DcParams::new(10, 3).root_restarts(0).validate().is_err());
/// # Ok::<(), baselines::BaselineError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DcParams {
    k: usize,
    leaf_k: usize,
    root_restarts: usize,
    max_iterations: usize,
}

impl DcParams {
    /// K root clusters and `leaf_k` per leaf; 10 root restarts and 300
    /// Lloyd iterations at most, as the reference runs.
    pub fn new(k: usize, leaf_k: usize) -> Self {
        Self {
            k,
            leaf_k,
            root_restarts: 10,
            max_iterations: 300,
        }
    }

    /// How many K-means runs the root keeps the best of, at least 1.
    pub fn root_restarts(mut self, root_restarts: usize) -> Self {
        self.root_restarts = root_restarts;
        self
    }

    /// The cap on Lloyd iterations, at the leaves and at the root; at
    /// least 1.
    pub fn max_iterations(mut self, max_iterations: usize) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// Checks the parameters.
    ///
    /// # Errors
    ///
    /// [`BaselineError::InvalidParameter`] for K, the leaves' k, the root
    /// restarts or the iteration cap of 0.
    pub fn validate(self) -> Result<ValidDcParams, BaselineError> {
        at_least_one("K", self.k)?;
        at_least_one("leaf k", self.leaf_k)?;
        at_least_one("root restarts", self.root_restarts)?;
        at_least_one("max iterations", self.max_iterations)?;
        Ok(ValidDcParams(self))
    }
}

/// [`DcParams`] that passed [`DcParams::validate`]: what [`DcKMeans::fit`]
/// takes.
///
/// # Example
///
/// ```
/// use baselines::DcParams;
///
/// let p = DcParams::new(4, 2).root_restarts(3).validate()?;
/// assert_eq!(p.root_restarts(), 3);
/// # Ok::<(), baselines::BaselineError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ValidDcParams(DcParams);

impl ValidDcParams {
    /// The number of root clusters K.
    pub fn k(&self) -> usize {
        self.0.k
    }

    /// The number of clusters of every leaf.
    pub fn leaf_k(&self) -> usize {
        self.0.leaf_k
    }

    /// How many K-means runs the root keeps the best of.
    pub fn root_restarts(&self) -> usize {
        self.0.root_restarts
    }

    /// The cap on Lloyd iterations.
    pub fn max_iterations(&self) -> usize {
        self.0.max_iterations
    }
}

/// What one deletion did.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, PointId};
/// use baselines::{DcKMeans, DcParams};
///
/// let a = Dataset::with_ids(DMatrix::from_column_slice(1, 2, &[0.0, 1.0]), vec![PointId(0), PointId(1)])?;
/// let b = Dataset::with_ids(DMatrix::from_column_slice(1, 2, &[8.0, 9.0]), vec![PointId(2), PointId(3)])?;
/// let mut dc = DcKMeans::fit(vec![a, b], DcParams::new(2, 1).validate()?, 0)?;
/// let del = dc.delete(PointId(3))?;
/// assert_eq!(del.leaf, 1);
/// assert!(del.seconds >= 0.0);
/// # Ok::<(), baselines::BaselineError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Deletion {
    /// The leaf (client) that held the point.
    pub leaf: usize,
    /// The time to retrain the leaf and the root, in seconds.
    pub seconds: f64,
}

/// A trained DC-KMeans tree of height 2 with deletion.
///
/// # Example
///
/// ```
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, PointId};
/// use baselines::{DcKMeans, DcParams};
///
/// let a = Dataset::with_ids(DMatrix::from_column_slice(1, 3, &[0.0, 0.1, 10.0]),
///     vec![PointId(0), PointId(1), PointId(2)])?;
/// let b = Dataset::with_ids(DMatrix::from_column_slice(1, 3, &[0.2, 10.1, 10.2]),
///     vec![PointId(3), PointId(4), PointId(5)])?;
/// let mut dc = DcKMeans::fit(vec![a, b], DcParams::new(2, 2).validate()?, 7)?;
/// assert!(dc.phi_f()? < 0.1);
/// let del = dc.delete(PointId(4))?;
/// assert_eq!(del.leaf, 1);
/// assert_eq!(dc.len(), 5);
/// # Ok::<(), baselines::BaselineError>(())
/// ```
#[derive(Clone, Debug)]
pub struct DcKMeans {
    params: ValidDcParams,
    seed: u64,
    leaves: Vec<Dataset>,
    models: Vec<Option<KMeansModel>>,
    root: KMeansModel,
    /// Where each leaf's centroids start among the root's points.
    offsets: Vec<usize>,
    owner: HashMap<PointId, usize>,
    leaf_seconds: Vec<f64>,
    root_seconds: f64,
}

impl DcKMeans {
    /// Trains the tree on the clients' data sets (the leaves); leaf `l`
    /// draws from `ExpRace::new(stage_seed(seed, 7, l))`, root restart `r`
    /// from `ExpRace::new(stage_seed(seed, 8, r))`. Leaves run in parallel
    /// under the `parallel` feature (the result does not depend on it).
    ///
    /// # Errors
    ///
    /// [`BaselineError::InvalidParameter`] for an id on two leaves;
    /// [`BaselineError::NoData`] when no leaf has a point;
    /// [`BaselineError::Seeding`].
    pub fn fit(
        leaves: Vec<Dataset>,
        params: ValidDcParams,
        seed: u64,
    ) -> Result<Self, BaselineError> {
        let mut owner = HashMap::new();
        for (l, data) in leaves.iter().enumerate() {
            for &id in data.ids() {
                if owner.insert(id, l).is_some() {
                    return Err(BaselineError::InvalidParameter {
                        name: "point id",
                        value: id.to_string(),
                        reason: "is on two leaves",
                    });
                }
            }
        }
        let fitted: Vec<(Option<KMeansModel>, f64)> = map_indexed(&leaves, |l, data| {
            let start = Instant::now();
            let model = fit_leaf(data, &params, seed, l)?;
            Ok::<_, BaselineError>((model, start.elapsed().as_secs_f64()))
        })?;
        let (models, leaf_seconds): (Vec<_>, Vec<_>) = fitted.into_iter().unzip();
        let start = Instant::now();
        let (root, offsets) = fit_root(&leaves, &models, &params, seed)?;
        let root_seconds = start.elapsed().as_secs_f64();
        Ok(Self {
            params,
            seed,
            leaves,
            models,
            root,
            offsets,
            owner,
            leaf_seconds,
            root_seconds,
        })
    }

    /// Deletes a point: removes it from its leaf, retrains that leaf with
    /// the leaf's own seed, then retrains the root. The returned time covers
    /// both retrainings (not the bookkeeping before).
    ///
    /// # Errors
    ///
    /// [`BaselineError::UnknownPoint`] for an id not in the tree (nothing
    /// changes); [`BaselineError::NoData`] when the last point goes;
    /// [`BaselineError::Seeding`].
    pub fn delete(&mut self, id: PointId) -> Result<Deletion, BaselineError> {
        self.delete_many(&[id])
    }

    /// Deletes several points of one leaf in one request (a batch, or a
    /// whole client): removes them, retrains that leaf once, then the root
    /// once. The returned time covers both retrainings.
    ///
    /// # Errors
    ///
    /// [`BaselineError::NoData`] for no ids; [`BaselineError::UnknownPoint`]
    /// for an id not in the tree; [`BaselineError::InvalidParameter`] when
    /// the ids are on several leaves; [`BaselineError::NoData`] when the
    /// last point goes; [`BaselineError::Seeding`] (for instance a repeated
    /// id). Nothing changes on error.
    pub fn delete_many(&mut self, ids: &[PointId]) -> Result<Deletion, BaselineError> {
        let first = ids
            .first()
            .ok_or(BaselineError::NoData("no point to delete"))?;
        let leaf_of = |id: &PointId| {
            self.owner
                .get(id)
                .copied()
                .ok_or(BaselineError::UnknownPoint { id: id.0 })
        };
        let leaf = leaf_of(first)?;
        for id in ids {
            if leaf_of(id)? != leaf {
                return Err(BaselineError::InvalidParameter {
                    name: "point id",
                    value: id.to_string(),
                    reason: "a deletion request names points of one leaf only",
                });
            }
        }
        // `without` keeps the order of the remaining points, so the leaf
        // is exactly the data set a fresh split without `ids` would give.
        let data = self.leaves[leaf].without(ids)?;
        let start = Instant::now();
        let model = fit_leaf(&data, &self.params, self.seed, leaf)?;
        let mut models = self.models.clone();
        models[leaf] = model;
        let mut leaves = self.leaves.clone();
        leaves[leaf] = data;
        let (root, offsets) = fit_root(&leaves, &models, &self.params, self.seed)?;
        let seconds = start.elapsed().as_secs_f64();
        for id in ids {
            self.owner.remove(id);
        }
        self.leaves = leaves;
        self.models = models;
        self.root = root;
        self.offsets = offsets;
        Ok(Deletion { leaf, seconds })
    }

    /// The induced objective phi_f: every point pays its squared distance
    /// to the root centroid its leaf centroid went to.
    ///
    /// # Errors
    ///
    /// [`BaselineError::Seeding`] (not expected: the tree is consistent).
    pub fn phi_f(&self) -> Result<f64, BaselineError> {
        let centroids = self.root.centroids();
        let parts: Vec<InducedClient<'_>> = self
            .leaves
            .iter()
            .zip(&self.models)
            .zip(&self.offsets)
            .filter_map(|((data, model), &off)| {
                let model = model.as_ref()?;
                Some(InducedClient {
                    data,
                    local: model.assignment(),
                    server: &self.root.assignment()[off..off + model.sizes().len()],
                })
            })
            .collect();
        Ok(induced_phi(&SqEuclidean, parts, centroids)?)
    }

    /// The root centroid each point takes, by leaf and position in the
    /// leaf.
    pub fn induced(&self) -> Vec<Vec<u32>> {
        self.models
            .iter()
            .zip(&self.offsets)
            .map(|(model, &off)| {
                model.as_ref().map_or_else(Vec::new, |m| {
                    m.assignment()
                        .iter()
                        .map(|&j| self.root.assignment()[off + j as usize])
                        .collect()
                })
            })
            .collect()
    }

    /// The root's centroids, one per column.
    pub fn centroids(&self) -> DMatrixView<'_, f64> {
        self.root.centroids()
    }

    /// The number of points still in the tree.
    pub fn len(&self) -> usize {
        self.owner.len()
    }

    /// Whether the tree holds no point (never true after [`Self::fit`]).
    pub fn is_empty(&self) -> bool {
        self.owner.is_empty()
    }

    /// The parameters.
    pub fn params(&self) -> &ValidDcParams {
        &self.params
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The leaves' data sets.
    pub fn leaves(&self) -> &[Dataset] {
        &self.leaves
    }

    /// The leaf models (`None` for a leaf left without points).
    pub fn leaf_models(&self) -> &[Option<KMeansModel>] {
        &self.models
    }

    /// The time of the initial training as the paper counts it: the
    /// slowest leaf plus the root, in seconds.
    pub fn fit_seconds(&self) -> f64 {
        self.leaf_seconds.iter().copied().fold(0.0, f64::max) + self.root_seconds
    }
}

/// Leaf `leaf`: one K-means run, or nothing for a leaf without points.
fn fit_leaf(
    data: &Dataset,
    params: &ValidDcParams,
    seed: u64,
    leaf: usize,
) -> Result<Option<KMeansModel>, BaselineError> {
    if data.is_empty() {
        return Ok(None);
    }
    let km = KMeans::new(
        KMeansParams::new(params.leaf_k())
            .max_iterations(params.max_iterations())
            .validate()?,
    );
    let mut sampler = ExpRace::new(stage_seed(seed, stage::DC_LEAF, leaf as u64));
    Ok(Some(km.fit(data, &mut sampler)?))
}

/// The root: the best of the restarts of K-means on the leaves' centroids.
fn fit_root(
    leaves: &[Dataset],
    models: &[Option<KMeansModel>],
    params: &ValidDcParams,
    seed: u64,
) -> Result<(KMeansModel, Vec<usize>), BaselineError> {
    let dim = leaves.first().map_or(1, Dataset::dim);
    let mut coords = Vec::new();
    let mut offsets = Vec::with_capacity(models.len());
    for model in models {
        offsets.push(coords.len() / dim);
        if let Some(m) = model {
            coords.extend(m.centroids().iter());
        }
    }
    let m = coords.len() / dim;
    if m == 0 {
        return Err(BaselineError::NoData("no leaf has a point left"));
    }
    let data = Dataset::new(DMatrix::from_vec(dim, m, coords))?;
    let km = KMeans::new(
        KMeansParams::new(params.k())
            .max_iterations(params.max_iterations())
            .restarts(params.root_restarts())
            .validate()?,
    );
    let root = km.fit_best(&data, |r| stage_seed(seed, stage::DC_ROOT, r as u64))?;
    Ok((root, offsets))
}

#[cfg(test)]
// Bit-identical retraining is the claim under test.
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;
    use crate::testdata::{blobs, non_iid, recovers, star};

    fn setup() -> (DMatrix<f64>, Vec<Dataset>, Vec<usize>) {
        let (points, labels) = blobs(4, 60, 3, 0.01, "dc-blobs");
        let clients = non_iid(&points, &labels, 6, 2);
        (points, clients, labels)
    }

    fn params(k: usize, leaf_k: usize) -> ValidDcParams {
        DcParams::new(k, leaf_k).validate().unwrap()
    }

    #[test]
    fn recovers_well_separated_blobs() {
        let (points, clients, labels) = setup();
        let all = Dataset::new(points).unwrap();
        let dc = DcKMeans::fit(clients.clone(), params(4, 2), 3).unwrap();
        let ratio = seeding::loss_ratio(dc.phi_f().unwrap(), star(&all, 4)).unwrap();
        // Unit weights on the leaf centroids pull root centroids off the
        // blob means a little; with blobs this tight that shows in the ratio.
        assert!((0.999..1.1).contains(&ratio), "{ratio}");
        assert!(recovers(&clients, &dc.induced(), &labels));
        assert_eq!(dc.centroids().ncols(), 4);
    }

    #[test]
    fn deletion_equals_retraining_leaf_and_root_with_the_same_seeds() {
        let (_, clients, _) = setup();
        let params = params(4, 2);
        let mut dc = DcKMeans::fit(clients.clone(), params, 11).unwrap();
        let before: Vec<Option<KMeansModel>> = dc.leaf_models().to_vec();
        // Delete a few points from different leaves, some of them K-means++
        // seeds (the hard case for any shortcut).
        let seed_victim = dc.leaf_models()[2].as_ref().unwrap().seeds()[0];
        let victims = [clients[0].id(3), seed_victim, clients[4].id(0)];
        let mut remaining = clients.clone();
        for &v in &victims {
            let del = dc.delete(v).unwrap();
            assert!(del.seconds >= 0.0);
            remaining[del.leaf] = remaining[del.leaf].without(&[v]).unwrap();
        }
        let fresh = DcKMeans::fit(remaining, params, 11).unwrap();
        assert_eq!(dc.centroids(), fresh.centroids());
        assert_eq!(dc.phi_f().unwrap(), fresh.phi_f().unwrap());
        assert_eq!(dc.leaf_models(), fresh.leaf_models());
        // Leaves without deletions kept their models.
        for l in [1, 3, 5] {
            assert_eq!(dc.leaf_models()[l], before[l]);
        }
        // A different seed gives a different tree somewhere (the test
        // above can fail).
        let other = DcKMeans::fit(clients, params, 12).unwrap();
        assert_ne!(other.leaf_models(), before.as_slice());
        assert_eq!(dc.len(), 240 - 3);
        assert!(matches!(
            dc.delete(victims[0]),
            Err(BaselineError::UnknownPoint { .. })
        ));
    }

    #[test]
    fn a_leaf_can_be_emptied() {
        let a =
            Dataset::with_ids(DMatrix::from_column_slice(1, 1, &[0.0]), vec![PointId(0)]).unwrap();
        let b = Dataset::with_ids(
            DMatrix::from_column_slice(1, 2, &[5.0, 6.0]),
            vec![PointId(1), PointId(2)],
        )
        .unwrap();
        let mut dc = DcKMeans::fit(vec![a, b], params(2, 1), 1).unwrap();
        dc.delete(PointId(0)).unwrap();
        assert!(dc.leaf_models()[0].is_none());
        assert!(dc.phi_f().unwrap() >= 0.0);
        dc.delete(PointId(1)).unwrap();
        assert!(matches!(
            dc.delete(PointId(2)),
            Err(BaselineError::NoData(_))
        ));
        // The failed deletion changed nothing.
        assert_eq!(dc.len(), 1);
    }

    #[test]
    fn bad_parameters_and_shared_ids_are_refused() {
        for p in [
            DcParams::new(0, 1),
            DcParams::new(1, 0),
            DcParams::new(1, 1).root_restarts(0),
            DcParams::new(1, 1).max_iterations(0),
        ] {
            assert!(matches!(
                p.validate(),
                Err(BaselineError::InvalidParameter { .. })
            ));
        }
        let a =
            Dataset::with_ids(DMatrix::from_column_slice(1, 1, &[0.0]), vec![PointId(0)]).unwrap();
        assert!(DcKMeans::fit(vec![a.clone(), a], params(1, 1), 0).is_err());
    }
}
