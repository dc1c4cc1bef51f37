//! A client of the federation: its points, its local clustering
//! (Algorithm 1, line 2), and the sparse bin histogram it sends through
//! the secure aggregation (Algorithm 1, lines 3-4).

pub(crate) mod message;

use std::sync::Arc;

use nalgebra::{DMatrix, DMatrixView};
use num_bigint::BigUint;
use seeding::{
    Changes, Dataset, ExactKMeans, ExactModel, ExpRace, KMeansParams, KMeansPlusPlus, PointId,
    Quantizer, Seeding, SeedingParams, SqEuclidean,
};

use crate::{ClientId, ClientTraining, MufcError, MufcResult};
use message::Encoded;

/// What a client runs, with its parameters (from the federation's config).
#[derive(Clone, Debug)]
pub(crate) struct LocalParams {
    pub(crate) k: usize,
    pub(crate) training: ClientTraining,
    pub(crate) tolerance: f64,
    pub(crate) max_iterations: usize,
}

#[derive(Clone, Debug)]
enum Local {
    /// K-means++ seeding only (Algorithm 1, line 2).
    Seeding(Seeding<SqEuclidean, ExpRace>),
    /// Full K-means (Appendix M.3), exactly unlearnable.
    Full {
        data: Dataset,
        model: Box<ExactModel>,
    },
}

/// One client: its points (with stable ids), its local clustering, and the
/// sparse histogram of its quantized centroids.
///
/// Clients live inside a [`Federation`](crate::Federation), which builds,
/// unlearns and aggregates them; this type exposes what a client holds.
///
/// - With [`ClientTraining::Seeding`] the local clustering is K-means++
///   seeding (Algorithm 1, line 2): the centroids are the seeds (data
///   points), each point belongs to its nearest seed, and the sizes count
///   the points per seed. Unlearning is Algorithm 3: the seeds stay unless
///   one is removed, the sizes always shrink by the removed points.
/// - With [`ClientTraining::Full`] it is [`seeding::ExactKMeans`]: the
///   centroids are cluster means, and unlearning updates the model to the
///   fit of the remaining points, bit for bit.
///
/// The histogram (Algorithm 1, lines 3-4) puts the size of local cluster
/// `j` into the bin of centroid `j` (equal bins add up); it is empty in
/// the plain mode of Algorithm 5, where the centroids themselves are sent.
///
/// # Example
///
/// ```
/// use mufc::{ClientId, Federation, FederationConfig};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let a = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 7 + r) % 10) as f64 / 25.0 - 0.2))?;
/// let b = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 3 + r) % 11) as f64 / 25.0 - 0.2))?;
/// // Two clients: the sum reveals each to the other, so the default
/// // minimum of 3 clients per aggregate is lowered explicitly.
/// let fed = Federation::new(vec![a, b], &FederationConfig::new(2).gamma(0.1).min_clients(2).validate()?)?;
/// let client = fed.client(ClientId(1)).unwrap();
/// assert_eq!(client.num_centroids(), 2);
/// assert_eq!(client.sizes().iter().sum::<u64>(), 30);
/// assert_eq!(client.histogram().iter().map(|(_, c)| c).sum::<u64>(), 30);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Client {
    id: ClientId,
    local: Local,
    histogram: Vec<(BigUint, u64)>,
    /// The unmasked sketch of the client's last message and the histogram
    /// it encodes (none before the first round, after loading, and in
    /// plain mode): the next message updates it by the bins whose counts
    /// changed instead of encoding every bin again. Shared by the copies
    /// a removal works on; replaced, never changed, once a round commits.
    encoded: Option<Arc<Encoded>>,
}

impl Client {
    /// Runs the local clustering of `data` with `seed` and quantizes its
    /// centroids with `quantizer` (none in plain mode).
    pub(crate) fn fit(
        id: ClientId,
        data: Dataset,
        params: &LocalParams,
        seed: u64,
        quantizer: Option<&Quantizer>,
    ) -> MufcResult<Self> {
        let local = match params.training {
            ClientTraining::Seeding => {
                let kpp = KMeansPlusPlus::new(SeedingParams::new(params.k).validate()?);
                Local::Seeding(kpp.fit(data, ExpRace::new(seed)))
            }
            ClientTraining::Full => {
                let kmeans = KMeansParams::new(params.k)
                    .tolerance(params.tolerance)
                    .max_iterations(params.max_iterations)
                    .validate()?;
                let model = ExactKMeans::new(kmeans).fit(&data, seed)?;
                Local::Full {
                    data,
                    model: Box::new(model),
                }
            }
        };
        let mut c = Self {
            id,
            local,
            histogram: Vec::new(),
            encoded: None,
        };
        c.quantize(quantizer)?;
        Ok(c)
    }

    /// Algorithm 1, lines 3-4: the sizes of the local clusters, each in
    /// the bin of its centroid.
    fn quantize(&mut self, quantizer: Option<&Quantizer>) -> MufcResult<()> {
        let Some(q) = quantizer else {
            self.histogram.clear();
            return Ok(());
        };
        let hist = match &self.local {
            Local::Seeding(s) => q.histogram(s.centers(), s.sizes()),
            Local::Full { model, .. } => {
                // Means of points of the box lie in the box; the clamp only
                // guards the last rounding of the fixed-point mean.
                let c = model.centroids().map(|x| x.clamp(-0.5, 0.5));
                q.histogram(c.as_view(), model.sizes())
            }
        };
        let mut hist = hist.map_err(|e| self.box_error(e))?;
        // An empty local cluster (possible only at the iteration cap of
        // full K-means) sends nothing.
        hist.retain(|(_, c)| *c > 0);
        self.histogram = hist;
        Ok(())
    }

    fn box_error(&self, e: seeding::SeedingError) -> MufcError {
        match e {
            seeding::SeedingError::OutsideBox { point, axis, value } => MufcError::OutsideBox {
                client: self.id,
                id: point
                    .and_then(|j| self.seed_ids().get(j).copied())
                    .unwrap_or_default(),
                axis,
                value,
            },
            other => other.into(),
        }
    }

    /// A copy of this client with `ids` removed (Algorithm 3 for seeding,
    /// an exact update for full K-means) and its histogram recomputed;
    /// whether it reseeded. The ids must be present and distinct, and not
    /// all of the client's points (checked by the caller).
    pub(crate) fn unlearned(
        &self,
        ids: &[PointId],
        quantizer: Option<&Quantizer>,
    ) -> MufcResult<(Self, bool)> {
        let mut next = self.clone();
        let reseeded = match &mut next.local {
            Local::Seeding(s) => s.unlearn(ids)?.reseeded(),
            Local::Full { data, model } => {
                let mut smaller = data.clone();
                smaller.remove(ids)?;
                let report = model.update(&smaller, &Changes::removing(ids.to_vec()))?;
                *data = smaller;
                report.seeding_changed()
            }
        };
        next.quantize(quantizer)?;
        Ok((next, reseeded))
    }

    /// The client's id.
    pub fn id(&self) -> ClientId {
        self.id
    }

    /// The client's (remaining) points.
    pub fn data(&self) -> &Dataset {
        match &self.local {
            Local::Seeding(s) => s.data(),
            Local::Full { data, .. } => data,
        }
    }

    /// The number of clusters asked for.
    pub fn k(&self) -> usize {
        match &self.local {
            Local::Seeding(s) => s.k(),
            Local::Full { model, .. } => model.params().k(),
        }
    }

    /// The number of local centroids (`k`, or fewer when the client has
    /// fewer distinct points).
    pub fn num_centroids(&self) -> usize {
        match &self.local {
            Local::Seeding(s) => s.num_seeds(),
            Local::Full { model, .. } => model.num_centroids(),
        }
    }

    /// The local centroids as the columns of a d x m matrix: the seeds in
    /// the order chosen, or the means of full K-means.
    pub fn centroids(&self) -> DMatrixView<'_, f64> {
        match &self.local {
            Local::Seeding(s) => s.centers(),
            Local::Full { model, .. } => model.centroids(),
        }
    }

    /// The ids of the K-means++ seeds, in the order chosen (of the kept run
    /// in full mode).
    pub fn seed_ids(&self) -> &[PointId] {
        match &self.local {
            Local::Seeding(s) => s.seed_ids(),
            Local::Full { model, .. } => model.seeds(),
        }
    }

    /// The sizes of the local clusters, by centroid.
    pub fn sizes(&self) -> &[u64] {
        match &self.local {
            Local::Seeding(s) => s.sizes(),
            Local::Full { model, .. } => model.sizes(),
        }
    }

    /// The histogram sent through the secure aggregation: `(bin, count)`
    /// sorted by bin (empty in plain mode).
    pub fn histogram(&self) -> &[(BigUint, u64)] {
        &self.histogram
    }

    /// The local cluster of every point, by position in [`Self::data`].
    pub fn local_clusters(&self) -> Vec<u32> {
        match &self.local {
            Local::Seeding(s) => s.assignments().to_vec(),
            Local::Full { data, model } => data
                .ids()
                .iter()
                .map(|&id| {
                    // Every point of `data` is in the model (same data).
                    model
                        .assignment(id)
                        .and_then(|a| u32::try_from(a).ok())
                        .unwrap_or(0)
                })
                .collect(),
        }
    }

    /// The unmasked sketch of the client's last committed message, with
    /// the histogram it encodes.
    pub(crate) fn encoded(&self) -> Option<&Encoded> {
        self.encoded.as_deref()
    }

    /// Keeps `sketch`, the unmasked sketch of the current histogram a
    /// committed round encoded (see [`message::sketch_of`]).
    pub(crate) fn keep_encoded(&mut self, sketch: syndrome_agg::AnySketch) {
        self.encoded = Some(Arc::new(Encoded {
            histogram: self.histogram.clone(),
            sketch,
        }));
    }

    /// Drops the kept sketch: the next message encodes every bin (tests).
    #[cfg(test)]
    pub(crate) fn forget_encoded(&mut self) {
        self.encoded = None;
    }

    /// The bin of every local centroid (Definition 3.1 in the SCMA modes).
    pub(crate) fn centroid_bins(&self, q: &Quantizer) -> MufcResult<Vec<BigUint>> {
        let c = self.centroids().map(|x| x.clamp(-0.5, 0.5));
        c.column_iter()
            .map(|col| {
                let x: Vec<f64> = col.iter().copied().collect();
                q.bin_of(&x).map_err(|e| self.box_error(e))
            })
            .collect()
    }

    /// The local centroids as an owned matrix (for the plain mode).
    pub(crate) fn centroid_matrix(&self) -> DMatrix<f64> {
        self.centroids().into_owned()
    }
}
