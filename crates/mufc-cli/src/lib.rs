//! The library half of the `mufc` command: everything the binary does, as
//! testable modules.
//!
//! - [`data`]: CSV and `.npy` loading, with an optional client column.
//! - [`synth`]: the paper's Gaussian data set (App. M.1).
//! - [`split`]: i.i.d., non-i.i.d. (K') and by-column splits over clients.
//! - [`central`]: centralized K-means, the phi_c* estimate and labelling.
//! - The baselines of the paper's Table 1, K-FED (Dennis et al. 2021) and
//!   DC-KMeans (Ginart et al. 2019), are the [`baselines`] crate's.
//! - [`output`], [`progress`], [`plot`]: tables, JSON, progress bars and
//!   the paper's Fig. 3.
//! - [`federated`]: the bridge to the `mufc` library (configuration,
//!   retraining from scratch, comparison of federations).
//! - [`cli`] and [`commands`]: the command line and what each subcommand
//!   does.
//!
//! The induced (federated) objective and the loss ratio live in `seeding`
//! ([`seeding::induced_phi`], [`seeding::loss_ratio`]) so that the `mufc`
//! library shares them.
//!
//! # Example
//!
//! ```
//! use baselines::{kfed, KFedParams};
//! use mufc_cli::{split::Split, synth::GaussianMixture};
//!
//! let g = GaussianMixture { clusters: 3, per_cluster: 20, dim: 2, variance: 0.001 };
//! let s = g.sample(&mut testkit::rng("doc-lib"))?;
//! let split = Split::non_iid(&s.labels, 3, 2, &mut testkit::rng("doc-split"))?;
//! let clients = split.client_datasets(&s.points)?;
//! let run = kfed(&clients, &KFedParams::new(3, 2).validate()?, 1)?;
//! assert_eq!(run.centroids.ncols(), 3);
//! # Ok::<(), mufc_cli::CliError>(())
//! ```

pub mod central;
mod checks;
pub mod cli;
pub mod commands;
pub mod data;
mod error;
pub mod federated;
pub mod output;
pub mod plot;
pub mod progress;
mod random;
pub mod split;
pub mod synth;

pub use error::CliError;
