//! A client of the federation: its points, its local clustering
//! (Algorithm 1, line 2), and the sparse bin histogram it sends through
//! the secure aggregation (Algorithm 1, lines 3-4).

mod change;
pub(crate) mod message;

use std::sync::Arc;

use nalgebra::{DMatrix, DMatrixView};
use num_bigint::BigUint;
use seeding::{
    Dataset, ExactKMeans, ExactModel, ExpRace, KMeansParams, KMeansPlusPlus, MinSizeClusters,
    PointId, Quantizer, Seeding, SeedingParams, SqEuclidean,
};

use crate::{ClientId, ClientTraining, MufcError, MufcResult};
use message::Encoded;

/// What a client runs, with its parameters (from the federation's config).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct LocalParams {
    /// The federation's client `k`: every client's, or the largest.
    pub(crate) k: usize,
    /// With [`ClientK::Adaptive`](crate::ClientK::Adaptive): a client of
    /// `n` points finds `min(k, ceil(n / m))` clusters.
    pub(crate) per_cluster: Option<usize>,
    pub(crate) training: ClientTraining,
    pub(crate) tolerance: f64,
    pub(crate) max_iterations: usize,
    /// The K-means runs, the best kept (full K-means).
    pub(crate) restarts: usize,
    /// The fewest points a cluster stands for to be sent in its own bin
    /// (smaller ones are dissolved, see [`seeding::MinSizeClusters`]).
    pub(crate) min_cluster_size: u64,
}

impl LocalParams {
    /// The number of clusters a client of `n` points finds.
    pub(crate) fn k_for(&self, n: usize) -> usize {
        match self.per_cluster {
            Some(m) => self.k.min(n.div_ceil(m.max(1))).max(1),
            None => self.k,
        }
    }
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
    /// Read from a store, not fitted yet: the points and the stored seeds;
    /// the clusters it sends are the stored ones ([`Client::stored`]).
    /// Opening a store fits no client; a client is fitted, and checked
    /// against what was stored, when a request changes it
    /// ([`Client::fitted`]).
    Stored { data: Dataset, seeds: Vec<PointId> },
}

/// The clusters a client sends, as a store keeps them: the centres
/// (column after column, `dim` coordinates each), the weight of each
/// cluster, and the cluster of each point in the order of the client's
/// points ([`Client::clusters`]). With them a store opens without
/// fitting its clients again; `mufc verify` fits them and compares.
///
/// # Example
///
/// ```
/// use mufc::{ClientId, Federation, FederationConfig};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let client = |s: usize| Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * 7 + r + s) % 10) as f64 / 25.0));
/// let config = FederationConfig::new(2).gamma(0.1).validate()?;
/// let fed = Federation::new(vec![client(0)?, client(1)?, client(2)?], &config)?;
/// let c = fed.client(ClientId(0)).unwrap();
/// let stored = c.clusters();
/// assert_eq!(stored.sizes(), c.sizes());
/// assert_eq!(stored.labels().len(), c.data().len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredClusters {
    centroids: Vec<f64>,
    sizes: Vec<u64>,
    labels: Vec<u32>,
}

impl StoredClusters {
    /// The weight of each cluster.
    pub fn sizes(&self) -> &[u64] {
        &self.sizes
    }

    /// The cluster of each point, in the order of the client's points.
    pub fn labels(&self) -> &[u32] {
        &self.labels
    }
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
/// let config = FederationConfig::new(2).gamma(0.1).min_clients(2).validate()?;
/// let fed = Federation::new(vec![a.clone(), b.clone()], &config)?;
/// // The adaptive k: data of at most 1000 points is sent point by point
/// // (30 clusters a client here; fewer when the client has fewer
/// // distinct points).
/// assert_eq!(fed.config().client_k(), 30);
/// let client = fed.client(ClientId(1)).unwrap();
/// assert!(client.num_centroids() <= 30);
/// assert_eq!(client.sizes().iter().sum::<u64>(), 30);
/// assert_eq!(client.histogram().iter().map(|(_, c)| c).sum::<u64>(), 30);
///
/// // Every cluster of at least 4 points: the small ones dissolved into
/// // their neighbours, each bin the mean of 4 records or more.
/// let merged = Federation::new(vec![a, b], &config.into_builder().min_cluster_size(4).validate()?)?;
/// let client = merged.client(ClientId(1)).unwrap();
/// assert!(client.sizes().iter().all(|&s| s >= 4));
/// assert_eq!(client.sizes().iter().sum::<u64>(), 30);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Client {
    id: ClientId,
    /// Its seed and what it runs: a removal that changes its number of
    /// clusters ([`LocalParams::k_for`]) refits it with them.
    seed: u64,
    params: LocalParams,
    local: Local,
    /// The clusters it sends: the local clustering with the clusters
    /// below the minimum size dissolved (a function of `local`).
    sent: MinSizeClusters,
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
        let k = params.k_for(data.len());
        let local = match params.training {
            ClientTraining::Seeding => {
                let kpp = KMeansPlusPlus::new(SeedingParams::new(k).validate()?);
                Local::Seeding(kpp.fit(data, ExpRace::new(seed)))
            }
            ClientTraining::Full => {
                let kmeans = KMeansParams::new(k)
                    .tolerance(params.tolerance)
                    .max_iterations(params.max_iterations)
                    .restarts(params.restarts)
                    .validate()?;
                let model = ExactKMeans::new(kmeans).fit(&data, seed)?;
                Local::Full {
                    data,
                    model: Box::new(model),
                }
            }
        };
        let sent = sent_clusters(&local, params.min_cluster_size)?;
        let mut c = Self {
            id,
            seed,
            params: params.clone(),
            local,
            sent,
            histogram: Vec::new(),
            encoded: None,
        };
        c.quantize(quantizer)?;
        Ok(c)
    }

    /// A client read from a store: its points, its stored seeds and the
    /// clusters it sends ([`Self::clusters`] when it was written),
    /// checked against each other and quantized; its local clustering is
    /// fitted only when a request changes it ([`Self::fitted`]).
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`] when the parts do not fit together (a
    /// seed that is not a point, clusters of another shape, a size that
    /// is not the weight of its points); [`MufcError::OutsideBox`] as
    /// quantizing refuses.
    pub(crate) fn stored(
        id: ClientId,
        data: Dataset,
        seeds: Vec<PointId>,
        clusters: StoredClusters,
        params: &LocalParams,
        seed: u64,
        quantizer: Option<&Quantizer>,
    ) -> MufcResult<Self> {
        let bad =
            |what: String| MufcError::Persistence(format!("client {id}'s stored state: {what}"));
        let m = clusters.sizes.len();
        if Some(clusters.centroids.len()) != data.dim().checked_mul(m) {
            return Err(bad(format!(
                "{} centre coordinates for {m} clusters of dimension {}",
                clusters.centroids.len(),
                data.dim()
            )));
        }
        let mut distinct = std::collections::HashSet::new();
        if seeds.len() > params.k_for(data.len())
            || !seeds
                .iter()
                .all(|&s| data.contains(s) && distinct.insert(s))
        {
            return Err(bad(format!(
                "{} seeds that are not distinct points of the client, at most {}",
                seeds.len(),
                params.k_for(data.len())
            )));
        }
        let centroids = DMatrix::from_vec(data.dim(), m, clusters.centroids);
        let sent = MinSizeClusters::from_parts(
            centroids,
            clusters.sizes,
            &data,
            &clusters.labels,
            params.min_cluster_size,
        )
        .map_err(|e| bad(e.to_string()))?;
        let mut c = Self {
            id,
            seed,
            params: params.clone(),
            local: Local::Stored { data, seeds },
            sent,
            histogram: Vec::new(),
            encoded: None,
        };
        c.quantize(quantizer)?;
        Ok(c)
    }

    /// This client with its local clustering fitted: itself unless it was
    /// read from a store ([`Self::stored`]); then it is fitted from its
    /// points and checked to give the stored seeds and clusters.
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`] when the fit does not give what was
    /// stored; a fitting error.
    fn fitted(&self, quantizer: Option<&Quantizer>) -> MufcResult<std::borrow::Cow<'_, Self>> {
        let Local::Stored { data, seeds } = &self.local else {
            return Ok(std::borrow::Cow::Borrowed(self));
        };
        let fresh = Self::fit(self.id, data.clone(), &self.params, self.seed, quantizer)?;
        // The histogram is a function of the clusters sent.
        if fresh.seed_ids() != seeds.as_slice() || fresh.sent != self.sent {
            return Err(MufcError::Persistence(format!(
                "client {} does not reproduce its stored seeds and clusters",
                self.id
            )));
        }
        Ok(std::borrow::Cow::Owned(Self {
            encoded: self.encoded.clone(),
            ..fresh
        }))
    }

    /// The clusters the client sends, as a store keeps them (see
    /// [`StoredClusters`]).
    pub fn clusters(&self) -> StoredClusters {
        StoredClusters {
            centroids: self.sent.centroids().iter().copied().collect(),
            sizes: self.sent.sizes().to_vec(),
            // Every point of the data is in the clustering (same data).
            labels: self.sent.labels_of(self.data().ids()).unwrap_or_default(),
        }
    }

    /// Algorithm 1, lines 3-4: the size of every cluster the client sends,
    /// in the bin of its centre; nothing when the client is too small to
    /// send any ([`Self::sends`]).
    fn quantize(&mut self, quantizer: Option<&Quantizer>) -> MufcResult<()> {
        self.histogram.clear();
        let Some(q) = quantizer else {
            return Ok(());
        };
        if !self.sends() {
            return Ok(());
        }
        // Means of points of the box lie in the box; the clamp only guards
        // the last rounding of the fixed-point mean.
        let c = self.sent.centroids().map(|x| x.clamp(-0.5, 0.5));
        let mut hist = q
            .histogram(c.as_view(), self.sent.sizes())
            .map_err(|e| self.box_error(e))?;
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

    /// The client's id.
    pub fn id(&self) -> ClientId {
        self.id
    }

    /// The client's (remaining) points.
    pub fn data(&self) -> &Dataset {
        match &self.local {
            Local::Seeding(s) => s.data(),
            Local::Full { data, .. } | Local::Stored { data, .. } => data,
        }
    }

    /// The number of clusters asked for.
    pub fn k(&self) -> usize {
        match &self.local {
            Local::Seeding(s) => s.k(),
            Local::Full { model, .. } => model.params().k(),
            // The k it was fitted with: a removal that changes k_for refits.
            Local::Stored { data, .. } => self.params.k_for(data.len()),
        }
    }

    /// The number of clusters the client sends: its local clusters
    /// (`k`, or fewer when it holds fewer distinct points) less those
    /// dissolved for being smaller than the minimum cluster size.
    pub fn num_centroids(&self) -> usize {
        self.sent.len()
    }

    /// The centres of the clusters the client sends, as the columns of a
    /// d x m matrix, in the order of the local clusters they come from:
    /// the seeds ([`ClientTraining::Seeding`]) or the means of full
    /// K-means ([`ClientTraining::Full`]), once every cluster smaller than
    /// the minimum size has been dissolved into its nearest neighbours
    /// (for full K-means, a centre that took points in is the mean of its
    /// new members; see [`seeding::ExactModel::min_size`]).
    pub fn centroids(&self) -> DMatrixView<'_, f64> {
        self.sent.centroids()
    }

    /// Whether the client sends its clusters: `false` when it holds fewer
    /// points than the minimum cluster size (all of them form one cluster,
    /// which it keeps to itself).
    pub fn sends(&self) -> bool {
        self.sent.is_sendable()
    }

    /// The ids of the K-means++ seeds, in the order chosen (of the kept run
    /// in full mode).
    pub fn seed_ids(&self) -> &[PointId] {
        match &self.local {
            Local::Seeding(s) => s.seed_ids(),
            Local::Full { model, .. } => model.seeds(),
            Local::Stored { seeds, .. } => seeds,
        }
    }

    /// The number of points of every cluster the client sends, by centre.
    pub fn sizes(&self) -> &[u64] {
        self.sent.sizes()
    }

    /// The histogram sent through the secure aggregation: `(bin, count)`
    /// sorted by bin (empty in plain mode).
    pub fn histogram(&self) -> &[(BigUint, u64)] {
        &self.histogram
    }

    /// The cluster of every point (an index into [`Self::centroids`]), by
    /// position in [`Self::data`].
    pub fn local_clusters(&self) -> Vec<u32> {
        self.data()
            .ids()
            .iter()
            .map(|&id| {
                // Every point of the data is in the clustering (same data).
                self.sent
                    .assignment(id)
                    .and_then(|a| u32::try_from(a).ok())
                    .unwrap_or(0)
            })
            .collect()
    }

    /// The unmasked sketch of the client's last committed message, with
    /// the histogram it encodes.
    pub(crate) fn encoded(&self) -> Option<&Encoded> {
        self.encoded.as_deref()
    }

    /// Keeps `encoded`, the sketch a committed round encoded with the
    /// histogram it encoded then. Across processes a removal may reach
    /// the client while a round runs: paired with the current histogram
    /// instead, the sketch of the old points passed for the new ones, and
    /// the next round re-sent it unchanged (issue 28, item 1).
    pub(crate) fn keep_encoded_of(&mut self, encoded: Encoded) {
        self.encoded = Some(Arc::new(encoded));
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

    /// The centroids and sizes the client sends in the plain mode (none
    /// when it does not send, [`Self::sends`]).
    /// The client's plain-mode message (Algorithm 5): its centroids and
    /// sizes, in the clear.
    pub(crate) fn plain_centroids(&self) -> crate::server::PlainCentroids {
        let (centroids, sizes) = self.plain_message();
        crate::server::PlainCentroids {
            client: self.id(),
            centroids,
            sizes,
        }
    }

    pub(crate) fn plain_message(&self) -> (DMatrix<f64>, Vec<u64>) {
        if self.sends() {
            (
                self.sent.centroids().into_owned(),
                self.sent.sizes().to_vec(),
            )
        } else {
            (DMatrix::zeros(self.data().dim(), 0), Vec::new())
        }
    }
}

/// The clusters a client sends: its local clustering with every cluster
/// smaller than `min` dissolved (a seed stays a seed; a K-means centre
/// that takes points in becomes their mean). A function of the local
/// clustering, so unlearning stays exact.
fn sent_clusters(local: &Local, min: u64) -> MufcResult<MinSizeClusters> {
    match local {
        Local::Seeding(s) => Ok(s.min_size(min)),
        Local::Full { model, .. } => Ok(model.min_size(min)),
        // A stored client is built with its clusters, and fitted before
        // it changes.
        Local::Stored { .. } => Err(MufcError::Persistence(
            "a stored client's clusters were asked for before it was fitted".into(),
        )),
    }
}
