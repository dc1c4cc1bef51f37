//! K-means++ seeding generic over a metric, with exact unlearning; weighted
//! K-means++ and Lloyd's iterations; the uniform grid quantizer.
//!
//! This is the clustering half of "Machine Unlearning of Federated
//! Clusters" (Pan et al., ICLR 2023) as a general library:
//!
//! - [`KMeansPlusPlus`] seeds a [`Dataset`] (Appendix B of the paper; the
//!   client side of Algorithm 1) and returns a [`Seeding`] that remembers
//!   the order of its seeds, the nearest seed of every point and the cluster
//!   sizes. [`Seeding::unlearn`] removes points by Algorithm 3: the seeds
//!   stay when none is removed (O(|R| + k)), otherwise seeding resumes from
//!   the first removed seed. The result is distributed exactly as seeding
//!   the remaining points from scratch (Lemma 5.1).
//! - Every random choice goes through a [`Sampler`]. The default,
//!   [`ExpRace`], is a keyed exponential race whose choices do not move
//!   when losing candidates are removed, so that unlearning gives *bit for
//!   bit* the seeding of the remaining points under the same seed.
//!   [`RngSampler`] samples from any `rand::Rng`; [`Enumerator`] walks every
//!   branch, so tests compute exact output distributions.
//! - [`KMeans`] is weighted K-means++ followed by Lloyd's iterations (the
//!   server side of Algorithms 1 and 5), and [`phi`] the objective.
//! - Configuration follows one idiom: a builder ([`KMeansParams`],
//!   [`SeedingParams`]) whose `validate()` gives the `Valid*` value the
//!   algorithms take; [`KMeans`] and [`ExactKMeans`] share
//!   [`KMeansParams`], best-of-`restarts` included. Sub-seeds come from
//!   [`derive_seed`] and [`restart_seed`].
//! - [`ExactKMeans`] is K-means++ then Lloyd with exact integer sums and a
//!   per-iteration trace: [`ExactModel::update`] turns a fitted model into
//!   the fit of changed data (points added, removed, reweighted) bit for
//!   bit, at a fraction of the cost of refitting.
//! - [`Quantizer`] is the uniform grid of Appendix H, with 1-based
//!   mixed-radix bin indices; [`BoxTransform`] brings data into its box.
//!
//! # Example
//!
//! ```
//! use nalgebra::DMatrix;
//! use seeding::{
//!     Dataset, ExpRace, KMeans, KMeansParams, KMeansPlusPlus, PointId, Quantizer, SeedingParams,
//! };
//!
//! // A client: 40 points in the box, 3 seeds.
//! let m = DMatrix::from_fn(2, 40, |r, c| ((c * 13 + r * 7) % 40) as f64 / 80.0 - 0.25);
//! let kpp = KMeansPlusPlus::new(SeedingParams::new(3).validate()?);
//! let mut client = kpp.fit(Dataset::new(m)?, ExpRace::new(2023));
//! let q = Quantizer::new(2, 0.1)?;
//! let hist = q.histogram(client.centers(), client.sizes())?;
//! assert_eq!(hist.iter().map(|(_, c)| c).sum::<u64>(), 40);
//!
//! // A removal request.
//! client.unlearn(&[PointId(5), PointId(6)])?;
//! let hist = q.histogram(client.centers(), client.sizes())?;
//!
//! // The server: weighted bin centres, then K-means.
//! let server_data = q.centers_dataset(&hist)?;
//! let km = KMeans::new(KMeansParams::new(3).validate()?);
//! let model = km.fit(&server_data, &mut ExpRace::new(1))?;
//! assert!(model.phi() >= 0.0);
//! # Ok::<(), seeding::SeedingError>(())
//! ```
//!
//! # Features
//!
//! - `parallel` (default): rayon-parallel per-point passes. Results are the
//!   same bits with and without it: only per-point maps run in parallel;
//!   sums and sampling run in position order.
//! - `serde` (default): `Serialize`/`Deserialize` for [`Dataset`],
//!   [`Seeding`], [`KMeansModel`], [`Quantizer`], [`BoxTransform`] and
//!   [`ExactModel`] (stored as parameters, seed and data; loading refits).
//!   Loading re-validates everything (a seeding is replayed from its
//!   seeds), so corrupt input gives an error, never a panic later. Use a
//!   format that round-trips `f64` exactly (postcard, bincode-like formats,
//!   or `serde_json` with its `float_roundtrip` feature): a restored
//!   seeding then unlearns bit for bit as the original would.

mod dataset;
mod derive;
mod error;
mod exact;
mod kmeanspp;
mod lloyd;
mod metric;
mod objective;
mod params;
mod point_id;
mod quantizer;
mod sampler;

pub use dataset::Dataset;
pub use derive::{derive_seed, mix64, restart_seed};
pub use error::SeedingError;
pub use exact::{Changes, ExactKMeans, ExactModel, RunReport, UpdateReport};
pub use kmeanspp::{KMeansPlusPlus, Seeding, UnlearnOutcome, UnlearnReport};
pub use lloyd::{KMeans, KMeansModel, phi};
pub use metric::{Cosine, L1, Metric, SqEuclidean};
pub use objective::{InducedClient, induced_phi, loss_ratio};
pub use params::{KMeansParams, SeedingParams, ValidKMeansParams, ValidSeedingParams};
pub use point_id::PointId;
pub use quantizer::{BoxTransform, Quantizer};
pub use sampler::{Branch, Enumerator, ExpRace, RngSampler, Sampler};
