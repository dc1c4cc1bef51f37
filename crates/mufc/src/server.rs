//! The server: decoded counts, its points, and its exactly unlearnable
//! K-means (Algorithm 1, lines 5-7; Algorithm 4, lines 7-13).

pub(crate) mod decode;

use std::collections::{BTreeMap, HashMap, HashSet};
use syndrome_agg::DecodeError;

use nalgebra::{DMatrix, DMatrixView};
use num_bigint::BigUint;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use seeding::{Changes, Dataset, ExactKMeans, ExactModel, PointId, Quantizer, SeedingError};
use syndrome_agg::SketchError;

use crate::ids::{bin_key, center_point_id, plain_point_id, sample_point_id, sample_rng_seed};
use crate::{ClientId, MufcError, MufcResult, ServerPoints};
use decode::Decoded;

/// What an update of the server's K-means did.
///
/// # Example
///
/// ```
/// use mufc::UpdateSummary;
///
/// let s = UpdateSummary::default();
/// assert!(!s.seeding_changed && s.points_recomputed == 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UpdateSummary {
    /// Whether the server's K-means++ seeds changed (one pass over the
    /// server's points, then most of the first iterations recomputed).
    pub seeding_changed: bool,
    /// Whether a run was refit from scratch inside the update (the number
    /// of seeds changed).
    pub fell_back: bool,
    /// Assignments computed by the update, over all iterations and runs (a
    /// fit computes the number of points per iteration).
    pub points_recomputed: usize,
    /// Lloyd iterations of the kept run after the update.
    pub iterations: usize,
    /// The number of server points after the update.
    pub points: usize,
}

/// How the server's clustering changed in a request (Algorithm 4, lines
/// 8-13).
///
/// # Example
///
/// ```
/// use mufc::ServerUpdate;
///
/// assert!(!ServerUpdate::Unchanged.refit());
/// assert!(ServerUpdate::Full.refit());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum ServerUpdate {
    /// The decoded aggregate did not change: the centroids stay (lines
    /// 8-9).
    Unchanged,
    /// The server's exact K-means was updated to the fit of its new points
    /// ([`seeding::ExactModel::update`]: the same bits as a fresh fit, at a
    /// fraction of its cost).
    Incremental(UpdateSummary),
    /// The server's K-means was fit from scratch.
    Full,
    /// Every point was removed: the server holds no model.
    Cleared,
}

impl ServerUpdate {
    /// Whether the server fit its K-means from scratch.
    pub fn refit(&self) -> bool {
        matches!(self, Self::Full)
    }

    /// A short name for tables: `unchanged`, `incremental`, `full` or
    /// `cleared`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Unchanged => "unchanged",
            Self::Incremental(_) => "incremental",
            Self::Full => "full",
            Self::Cleared => "cleared",
        }
    }
}

/// One client's centroids and sizes, for the plain mode (Algorithm 5).
#[derive(Debug)]
pub(crate) struct PlainCentroids {
    pub(crate) client: ClientId,
    pub(crate) centroids: DMatrix<f64>,
    pub(crate) sizes: Vec<u64>,
}

/// The server's input change in a request.
pub(crate) enum InputChange {
    /// SCMA: the decoded difference or the whole decoded aggregate.
    Counts(Decoded),
    /// Plain mode: per changed client, its centroids before and after
    /// (empty after when the client is removed; empty before at the first
    /// fit).
    Plain(Vec<(PlainCentroids, PlainCentroids)>),
}

/// A server update, computed but not applied.
pub(crate) struct ServerPlan {
    counts: BTreeMap<BigUint, u64>,
    data: Dataset,
    changes: Changes,
}

/// Point-level changes before they are applied to a data set.
#[derive(Default)]
struct PointChanges {
    removed: Vec<PointId>,
    reweighted: Vec<(PointId, u64)>,
    added: Vec<(PointId, Vec<f64>, u64)>,
}

/// The server of Algorithm 1: it holds the decoded counts `q` (SCMA), the
/// points it builds from them (or the clients' weighted centroids in the
/// plain mode of Algorithm 5), and an exactly unlearnable K-means of those
/// points.
///
/// The server's points are a function of `q` alone (see
/// [`ServerPoints`]), with ids derived from the bins, so that the same `q`
/// always gives the same points with the same ids, and
/// [`seeding::ExactModel::update`] gives after any change what a fresh fit
/// of the new points gives.
///
/// # Example
///
/// ```
/// use mufc::{Federation, FederationConfig};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let a = Dataset::new(DMatrix::from_fn(2, 40, |r, c| ((c * 7 + r) % 10) as f64 / 25.0 - 0.2))?;
/// // One client, for brevity (a lone aggregate: `min_clients(1)`).
/// let fed = Federation::new(vec![a], &FederationConfig::new(3).gamma(0.05).min_clients(1).validate()?)?;
/// let server = fed.server();
/// // Centres mode: one weighted point per non-empty bin.
/// assert_eq!(server.data().len(), server.counts().len());
/// assert_eq!(server.total_count(), 40);
/// assert_eq!(server.centroids().unwrap().ncols(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Server {
    points: Option<ServerPoints>,
    quantizer: Option<Quantizer>,
    small_grid: bool,
    kmeans: ExactKMeans,
    seed: u64,
    sample_seed: u64,
    counts: BTreeMap<BigUint, u64>,
    data: Dataset,
    model: Option<ExactModel>,
}

impl Server {
    /// An empty server. `points` and `quantizer` are `None` in plain mode.
    pub(crate) fn new(
        points: Option<ServerPoints>,
        quantizer: Option<Quantizer>,
        kmeans: ExactKMeans,
        seed: u64,
        sample_seed: u64,
        dim: usize,
    ) -> MufcResult<Self> {
        let small_grid = quantizer
            .as_ref()
            .is_some_and(|q| q.num_bins_u64().is_some());
        Ok(Self {
            points,
            quantizer,
            small_grid,
            kmeans,
            seed,
            sample_seed,
            counts: BTreeMap::new(),
            data: Dataset::empty(dim)?,
            model: None,
        })
    }

    /// The grid the server rebuilds points on (none in plain mode).
    pub(crate) fn quantizer(&self) -> Option<&Quantizer> {
        self.quantizer.as_ref()
    }

    /// The decoded counts `q`: `(bin, count)` of every non-empty bin
    /// (empty in plain mode).
    pub fn counts(&self) -> &BTreeMap<BigUint, u64> {
        &self.counts
    }

    /// The number of non-empty bins (in plain mode: of weighted centroids).
    pub fn nonzero_bins(&self) -> usize {
        if self.points.is_some() {
            self.counts.len()
        } else {
            self.data.len()
        }
    }

    /// The total count: the number of client points the server's input
    /// stands for.
    pub fn total_count(&self) -> u64 {
        self.data.total_weight()
    }

    /// The server's points `X_s` (weighted in the centres and plain modes).
    pub fn data(&self) -> &Dataset {
        &self.data
    }

    /// The server's K-means, if it has points.
    pub fn model(&self) -> Option<&ExactModel> {
        self.model.as_ref()
    }

    /// The server's centroids `C_s`, if it has points.
    pub fn centroids(&self) -> Option<DMatrixView<'_, f64>> {
        self.model.as_ref().map(ExactModel::centroids)
    }

    /// The server's K-means parameters.
    pub fn kmeans(&self) -> &ExactKMeans {
        &self.kmeans
    }

    fn key(&self, bin: &BigUint) -> u64 {
        bin_key(bin, self.small_grid)
    }

    fn sample(&self, bin: &BigUint, key: u64, i: u64) -> MufcResult<Vec<f64>> {
        let q = self.quantizer.as_ref().ok_or(MufcError::NoServerModel)?;
        let mut rng = ChaCha8Rng::seed_from_u64(sample_rng_seed(self.sample_seed, key, i));
        Ok(q.sample_in_bin(bin, &mut rng)?)
    }

    fn center(&self, bin: &BigUint) -> MufcResult<Vec<f64>> {
        let q = self.quantizer.as_ref().ok_or(MufcError::NoServerModel)?;
        Ok(q.bin_center(bin)?)
    }

    /// The point changes of one bin's count going from `old` to `new`.
    fn bin_changes(
        &self,
        bin: &BigUint,
        old: u64,
        new: u64,
        out: &mut PointChanges,
    ) -> MufcResult<()> {
        let key = self.key(bin);
        match self.points {
            Some(ServerPoints::Uniform) => {
                // Sample i of a bin is fixed by (seed, bin, i): a count
                // change appends or drops the last samples.
                for i in new..old {
                    out.removed.push(sample_point_id(key, i));
                }
                for i in old..new {
                    out.added
                        .push((sample_point_id(key, i), self.sample(bin, key, i)?, 1));
                }
            }
            _ => {
                let id = center_point_id(key);
                match (old, new) {
                    (0, 0) => {}
                    (0, w) => out.added.push((id, self.center(bin)?, w)),
                    (_, 0) => out.removed.push(id),
                    (_, w) => out.reweighted.push((id, w)),
                }
            }
        }
        Ok(())
    }

    /// Computes the update for `change` without applying it.
    pub(crate) fn plan(&self, change: InputChange) -> MufcResult<ServerPlan> {
        let mut pc = PointChanges::default();
        let mut counts = self.counts.clone();
        match change {
            InputChange::Counts(Decoded::Delta(delta)) => {
                for (bin, ch) in delta {
                    let old = self.counts.get(&bin).copied().unwrap_or(0);
                    let new = i128::from(old) + ch;
                    let new = u64::try_from(new).map_err(|_| {
                        MufcError::Sketch(SketchError::Decode(DecodeError::CountOutOfRange {
                            key: bin.to_string(),
                            count: new.to_string(),
                            reason: "the decoded change makes a count negative",
                        }))
                    })?;
                    self.bin_changes(&bin, old, new, &mut pc)?;
                    if new == 0 {
                        counts.remove(&bin);
                    } else {
                        counts.insert(bin, new);
                    }
                }
            }
            InputChange::Counts(Decoded::Full(full)) => {
                let new_counts: BTreeMap<BigUint, u64> =
                    full.into_iter().filter(|(_, c)| *c > 0).collect();
                for (bin, &old) in &self.counts {
                    let new = new_counts.get(bin).copied().unwrap_or(0);
                    if new != old {
                        self.bin_changes(bin, old, new, &mut pc)?;
                    }
                }
                for (bin, &new) in &new_counts {
                    if !self.counts.contains_key(bin) {
                        self.bin_changes(bin, 0, new, &mut pc)?;
                    }
                }
                counts = new_counts;
            }
            InputChange::Plain(changed) => {
                for (before, after) in changed {
                    plain_changes(&before, &after, &mut pc);
                }
            }
        }
        let (data, changes) = self.apply_changes(pc)?;
        Ok(ServerPlan {
            counts,
            data,
            changes,
        })
    }

    /// The new data set and the changes for the model: one pass over the
    /// points.
    fn apply_changes(&self, pc: PointChanges) -> MufcResult<(Dataset, Changes)> {
        let removed: HashSet<PointId> = pc.removed.iter().copied().collect();
        let reweighted: HashMap<PointId, u64> = pc.reweighted.iter().copied().collect();
        let d = self.data.dim();
        let n = self.data.len() + pc.added.len();
        let (mut coords, mut ids, mut weights) = (
            Vec::with_capacity(n * d),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for (pos, &id) in self.data.ids().iter().enumerate() {
            if removed.contains(&id) {
                continue;
            }
            coords.extend_from_slice(self.data.point(pos));
            ids.push(id);
            weights.push(
                reweighted
                    .get(&id)
                    .copied()
                    .unwrap_or(self.data.weight(pos)),
            );
        }
        for (id, x, w) in &pc.added {
            coords.extend_from_slice(x);
            ids.push(*id);
            weights.push(*w);
        }
        let m = DMatrix::from_vec(d, ids.len(), coords);
        let data = if self.points == Some(ServerPoints::Uniform) {
            Dataset::with_ids(m, ids)
        } else {
            Dataset::with_weights(m, ids, weights)
        };
        let data = data.map_err(|e| match e {
            SeedingError::DuplicateId(id) => MufcError::ServerIdCollision(id),
            other => other.into(),
        })?;
        let changes = Changes {
            removed: pc.removed,
            added: pc.added.into_iter().map(|(id, _, _)| id).collect(),
            reweighted: pc.reweighted.into_iter().map(|(id, _)| id).collect(),
        };
        Ok((data, changes))
    }

    /// Forgets the counts, the points and the model (a withdrawn
    /// federation's server).
    pub(crate) fn clear(&mut self) {
        self.counts.clear();
        self.model = None;
        if let Ok(empty) = Dataset::empty(self.data.dim()) {
            self.data = empty;
        }
    }

    /// Applies a plan: the K-means is updated (or fit, or dropped) first;
    /// if that fails nothing changes.
    pub(crate) fn apply(&mut self, plan: ServerPlan) -> MufcResult<ServerUpdate> {
        if plan.changes.is_empty() {
            self.counts = plan.counts;
            return Ok(ServerUpdate::Unchanged);
        }
        let update = if plan.data.is_empty() {
            self.model = None;
            ServerUpdate::Cleared
        } else if let Some(model) = &mut self.model {
            let r = model.update(&plan.data, &plan.changes)?;
            ServerUpdate::Incremental(UpdateSummary {
                seeding_changed: r.seeding_changed(),
                fell_back: r.fell_back(),
                points_recomputed: r.points_recomputed(),
                iterations: r.iterations(),
                points: r.points,
            })
        } else {
            self.model = Some(self.kmeans.fit(&plan.data, self.seed)?);
            ServerUpdate::Full
        };
        self.counts = plan.counts;
        self.data = plan.data;
        Ok(update)
    }

    /// The server cluster of a local centroid in bin `bin` (Definition 3.1
    /// in the SCMA modes): in centres mode the cluster of the bin's centre;
    /// with uniform samples the cluster most of the bin's samples belong
    /// to (the lowest index on ties).
    pub(crate) fn cluster_of_bin(&self, bin: &BigUint) -> Option<usize> {
        let model = self.model.as_ref()?;
        let key = self.key(bin);
        match self.points {
            Some(ServerPoints::Uniform) => {
                let count = self.counts.get(bin).copied()?;
                let mut votes = vec![0u64; model.num_centroids()];
                for i in 0..count {
                    let a = model.assignment(sample_point_id(key, i))?;
                    *votes.get_mut(a)? += 1;
                }
                let mut best = 0;
                for (j, &v) in votes.iter().enumerate() {
                    if v > votes[best] {
                        best = j;
                    }
                }
                Some(best)
            }
            _ => model.assignment(center_point_id(key)),
        }
    }

    /// The server cluster of local centroid `j` of `client` (plain mode).
    pub(crate) fn cluster_of_plain(&self, client: ClientId, j: usize) -> Option<usize> {
        self.model.as_ref()?.assignment(plain_point_id(client, j))
    }
}

/// The point changes of one client's centroids in the plain mode: ids are
/// `(client, j)`; a centroid that moved is removed and added again.
fn plain_changes(before: &PlainCentroids, after: &PlainCentroids, out: &mut PointChanges) {
    let client = if before.sizes.is_empty() {
        after.client
    } else {
        before.client
    };
    let col = |m: &DMatrix<f64>, j: usize| -> Vec<f64> { m.column(j).iter().copied().collect() };
    let n = before.sizes.len().max(after.sizes.len());
    for j in 0..n {
        let id = plain_point_id(client, j);
        // A centroid with an empty cluster stands for no point.
        let w0 = before.sizes.get(j).filter(|&&w| w > 0);
        let w1 = after.sizes.get(j).filter(|&&w| w > 0);
        match (w0, w1) {
            (Some(_), None) => out.removed.push(id),
            (None, Some(&w)) => out.added.push((id, col(&after.centroids, j), w)),
            (Some(&w0), Some(&w1)) => {
                let (x0, x1) = (col(&before.centroids, j), col(&after.centroids, j));
                let same = x0.iter().zip(&x1).all(|(a, b)| a.to_bits() == b.to_bits());
                if !same {
                    out.removed.push(id);
                    out.added.push((id, x1, w1));
                } else if w0 != w1 {
                    out.reweighted.push((id, w1));
                }
            }
            (None, None) => {}
        }
    }
}
