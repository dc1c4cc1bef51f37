#![doc = include_str!("../README.md")]
mod dataset;
mod derive;
mod error;
mod exact;
mod kmeanspp;
mod lloyd;
mod metric;
mod min_size;
mod objective;
mod params;
mod point_id;
mod quantizer;
mod sampler;

pub use dataset::Dataset;
pub use derive::{derive_seed, mix64, restart_seed};
pub use error::SeedingError;
pub use exact::{Changes, ExactKMeans, ExactModel, RunReport, UpdateReport};
pub use kmeanspp::{
    InsertOutcome, InsertReport, KMeansPlusPlus, Seeding, UnlearnOutcome, UnlearnReport,
};
pub use lloyd::{KMeans, KMeansModel, phi};
pub use metric::{Cosine, L1, Metric, SqEuclidean};
pub use min_size::MinSizeClusters;
pub use objective::{InducedClient, induced_phi, loss_ratio};
pub use params::{KMeansParams, SeedingParams, ValidKMeansParams, ValidSeedingParams};
pub use point_id::PointId;
pub use quantizer::{BoxTransform, Quantizer};
pub use sampler::{Branch, Enumerator, ExpRace, RngSampler, Sampler};
