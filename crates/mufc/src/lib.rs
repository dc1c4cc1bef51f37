//! Machine unlearning of federated clusters (Pan et al., ICLR 2023): the
//! composition of [`field`], [`syndrome_agg`] and [`seeding`] into the
//! system of the paper.
//!
//! - [`Federation::new`] runs Algorithm 1: every [`Client`] runs K-means++
//!   seeding on its own points (line 2; full K-means with
//!   [`ClientTraining::Full`], Appendix M.3), quantizes its centroids into
//!   a sparse histogram of cluster sizes (lines 3-4), and sends a masked
//!   syndrome sketch of it (Algorithm 2, SCMA); the [`Server`] sums the
//!   sketches, decodes the aggregate histogram `q` (line 5), builds its
//!   points from it (line 6) and runs K-means++ and Lloyd (line 7).
//! - [`Federation::remove`] runs Algorithm 4 for a [`RemovalRequest`]:
//!   points of one client, whole clients, or a batch of both; requests
//!   that would change a single client's message wait for others (see
//!   "Privacy" below).
//! - [`Privacy::Plain`] is Algorithm 5 (Appendix I): centroids and sizes in
//!   the clear, no quantization.
//! - [`Masking`] chooses how the sketches are masked: an offline dealer
//!   (the paper's Algorithm 2), pairwise masks, or [`Masking::SecAgg`], the
//!   dropout-tolerant protocol of Bonawitz et al. 2017 (SecAgg+ with
//!   [`SecAggGraph::Harary`]), run in full every round with clients that
//!   drop out at the rate [`SecAggOptions::dropout`]; the reports list
//!   the clients each aggregate includes and those that dropped
//!   ([`FitReport::included`], [`FitReport::dropped`]).
//! - [`Federation::objectives`] gives phi_f (Definition 3.1), phi_c and the
//!   loss ratio; [`Federation::save`] / [`Federation::load`] persist it all.
//!
//! # Example
//!
//! ```
//! use mufc::{ClientId, Federation, FederationConfig, RemovalOutcome, RemovalRequest, ServerUpdate};
//! use nalgebra::DMatrix;
//! use seeding::{Dataset, PointId};
//!
//! // Four clients, each with 50 points in the box [-1/2, 1/2]^2.
//! let clients: Vec<Dataset> = (0..4)
//!     .map(|l| {
//!         let m = DMatrix::from_fn(2, 50, |r, c| {
//!             let blob = ((c + l) % 2) as f64 * 0.5 - 0.25;
//!             blob + ((c * 13 + r * 7 + l) % 10) as f64 / 100.0 - 0.05
//!         });
//!         Dataset::new(m)
//!     })
//!     .collect::<Result<_, _>>()?;
//! let config = FederationConfig::new(2).seed(7).validate()?; // gamma = 1/sqrt(n)
//! let mut fed = Federation::new(clients.clone(), &config)?;
//! // The server decoded exactly the sum of the clients' histograms.
//! assert_eq!(fed.server().total_count(), 200);
//! let star = fed.estimate_phi_c_star(3)?;
//! let before = fed.objectives(Some(star))?;
//! assert!(before.loss_ratio.unwrap() < 2.0);
//!
//! // Unlearn a point that is not a seed of client 2: the request waits
//! // (alone, its round would tell the server the bin of the point,
//! // docs/threat-model.md U3) ...
//! let non_seed = |c: u64| {
//!     let seeds = fed.client(ClientId(c)).unwrap().seed_ids();
//!     (0..50).map(PointId).find(|id| !seeds.contains(id)).unwrap()
//! };
//! let (a, b) = (non_seed(2), non_seed(3));
//! let report = fed.remove(&RemovalRequest::points(ClientId(2), vec![a]))?;
//! assert_eq!(report.outcome, RemovalOutcome::Deferred { pending_clients: vec![ClientId(2)], needed: 2 });
//! assert_eq!(fed.server().total_count(), 200);
//! // ... until a request of another client comes: one round serves both.
//! let report = fed.remove(&RemovalRequest::points(ClientId(3), vec![b]))?;
//! assert_eq!(report.requests, vec![1, 2]);
//! assert!(report.reseeded.is_empty());
//! assert!(matches!(report.server, ServerUpdate::Incremental(_)));
//!
//! // Exactly the federation trained without those points.
//! let mut rest = clients;
//! rest[2] = rest[2].without(&[a])?;
//! rest[3] = rest[3].without(&[b])?;
//! let retrained = Federation::new(rest, fed.config())?;
//! assert_eq!(fed.server().counts(), retrained.server().counts());
//! assert_eq!(fed.objectives(None)?, retrained.objectives(None)?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Exactness
//!
//! Without dropouts, after **any** sequence of removal requests the whole state of a
//! federation (every client's seeds, sizes and histogram, the decoded
//! counts `q`, the server's points, centroids, assignments and objective)
//! equals *bit for bit* the state of a federation built with
//! [`Federation::with_ids`] from the remaining data and
//! [`Federation::config`] (the configuration with `gamma` and the count
//! bound resolved, so that both use the same grid and field). The
//! remaining data is what the applied requests left: a deferred request
//! ([`RemovalOutcome::Deferred`]) changes nothing until the round that
//! applies it. Exact
//! unlearning in the paper's sense (equality in distribution, Section 3)
//! follows for any distribution of the federation seed. How:
//!
//! - Every random choice is keyed by *names*, never positions: a client's
//!   seeding uses [`seeding::ExpRace`] keyed by a seed derived from the
//!   federation seed and the [`ClientId`], and by point ids; the server's
//!   K-means is keyed by the server seed and the ids of its points, which
//!   derive from bin indices. Removing a whole client is therefore the same
//!   as never having it.
//! - A client's seeding after Algorithm 3 is the seeding of its remaining
//!   points (the race's winners do not move when losers leave).
//! - **Counts are updated on every removal.** The paper's Algorithm 4
//!   (line 3) updates `q^(l)` only when the client reseeds; but `q` holds
//!   cluster *sizes*, so a removed non-seed point would still be counted
//!   (the total stays `n` instead of `n - 1`: distinguishable from
//!   retraining with certainty). Here the client's histogram loses one
//!   count in the bin of the removed point's seed, and a new aggregation
//!   round runs.
//! - The server's points are a function of `q` alone: one weighted point
//!   per bin at its centre ([`ServerPoints::Centers`], the default), or
//!   `q_j` samples in bin `j` where sample `i` is a fixed function of the
//!   federation seed, the bin and `i` ([`ServerPoints::Uniform`]), so that a
//!   count change appends or drops the last samples.
//! - The server runs [`seeding::ExactKMeans`], whose
//!   [`update`](seeding::ExactModel::update) gives the fit of the new points
//!   bit for bit.
//!
//! Issue 5 also asked that "a removal whose point was not a seed leaves
//! every client message unchanged and does not refit the server". That
//! conflicts with exactness (the count must change), so this crate meets
//! it in its exact form: no client reseeds, every *other* client's
//! plaintext histogram is unchanged, the affected client's histogram
//! differs by exactly -1 in one bin, the server's K-means is updated
//! incrementally ([`ServerUpdate::Incremental`], not
//! [`ServerUpdate::Full`]), and the result equals retraining bit for bit.
//!
//! **With dropouts** ([`Masking::SecAgg`] and a positive
//! [`SecAggOptions::dropout`]) each round aggregates only the clients
//! it includes, so the server's counts are the plain sum of *their*
//! histograms and its model is the fit of those counts, bit for bit (the
//! same [`seeding::ExactKMeans`] argument); the clients themselves unlearn
//! exactly as above. Retraining from scratch on the remaining data equals
//! it only when the same clients are included. Which clients drop is a
//! fixed function of the federation seed, the round and the client, so a
//! run reproduces, after a save and load too. A failed round consumes its
//! round number, so a retry runs the next round, with the next round's
//! draws.
//!
//! # Cost of a removal
//!
//! The affected client unlearns in O(|R| + k) when no seed is removed
//! (O(n_l k d) otherwise). Every remaining client re-encodes and re-masks
//! its histogram (fresh masks: `O(k (2t + r))` field operations each). The
//! server sums the messages and decodes the *difference* from the last
//! aggregate, a sparse signed vector (one entry for a non-seed removal, at
//! most `2k` per reseeding client), whose decoding costs in proportion to
//! its size; it then changes only the affected server points and updates
//! its K-means. With bin centres a one-count change costs a few percent of
//! a fit; with uniform samples the update equals a fit bit for bit too,
//! but on overlapping data Lloyd's iterations amplify the change and the
//! update costs about a fit (see `docs/benchmarks.md`, "seeding" and
//! "mufc").
//!
//! [`StageTimes::paper`] counts time as the paper does (the slowest
//! client plus the server); [`StageTimes::cpu`] adds every client's work.
//!
//! # Privacy
//!
//! In the SCMA modes the server sees only masked sketches and their sum;
//! see `docs/threat-model.md`. Not protected: the aggregate itself, and the
//! difference of two aggregates, which reveals the change of the clients
//! that updated in a round. Two policies (docs/threat-model.md §6) bound
//! both, on by default: the server sums the messages of at least
//! [`DEFAULT_MIN_CLIENTS`] (3) clients, else the federation or the request
//! is refused with [`MufcError::TooFewClients`]
//! ([`FederationConfig::min_clients`]); and a removal round changes the
//! messages of at least [`DEFAULT_MIN_UPDATING_CLIENTS`] (2) clients:
//! a request of one client alone waits, pending, until another client has
//! one ([`FederationConfig::min_updating_clients`],
//! [`RemovalOutcome::Deferred`], [`Federation::pending`]), or until
//! [`Federation::flush`] serves it with a
//! [`RemovalReport::privacy_warning`]. With dropouts the
//! difference of two aggregates also holds the whole histogram of every
//! client whose inclusion changed between the rounds (see
//! [`Masking::SecAgg`]). [`Masking::SecAgg`] protects against a server
//! that colludes with fewer than its threshold of clients and may lie
//! about who dropped (`syndrome_agg::secagg` documents its limits). The
//! simulation plays every party in one process. Their secrets (session
//! id, dealer masks, key pairs, self-mask seeds) are fresh for every
//! round, drawn from the operating system's random source, and every
//! round consumes its round number before masking: no mask ever masks two
//! inputs, even when a round fails and is retried or an older save is
//! reloaded (the difference of two inputs under one mask would be the
//! difference of the inputs). The models do not depend on the masks, so
//! runs still reproduce bit for bit;
//! [`FederationConfig::insecure_deterministic_masks`] derives the secrets
//! from the seed instead, for tests and reproduction only. A deployment
//! keeps each party's secrets in its own process.
//!
//! # Features
//!
//! - `parallel` (default): clients train, unlearn and encode in parallel
//!   (rayon). Results are the same bits with and without it.
//! - `serde` (default): [`Federation::save`], [`Federation::load`], and
//!   serde for the configuration and the reports.

#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod aggregation;
mod client;
mod config;
mod error;
mod federation;
mod ids;
#[cfg(all(test, feature = "serde"))]
mod mask_freshness_tests;
mod objective;
mod par;
#[cfg(feature = "serde")]
mod persist;
mod report;
mod server;

pub use aggregation::SketchInfo;
pub use client::Client;
pub use config::{
    Channel, ClientConfig, ClientTraining, DEFAULT_COLLUDING, DEFAULT_INTEGER_MAX_CAPACITY,
    DEFAULT_MIN_CLIENTS, DEFAULT_MIN_UPDATING_CLIENTS, FederationConfig, Masking, Masks, Privacy,
    RingMasks, Scma, SecAggGraph, SecAggOptions, ServerConfig, ServerPoints, ValidConfig,
};
pub use error::{MufcError, MufcResult, PersistError};
pub use federation::Federation;
pub use ids::ClientId;
pub use objective::{Objectives, estimate_phi_c_star, union};
pub use report::{
    DecodeKind, FitReport, PendingRequest, RemovalOutcome, RemovalReport, RemovalRequest,
    StageTimes,
};
pub use server::{Server, ServerUpdate, UpdateSummary};
/// The steps of the [`Masking::SecAgg`] protocol, as the reports name the
/// step at which a client dropped out.
///
/// # Example
///
/// ```
/// use mufc::SecAggStep;
///
/// assert!(SecAggStep::MaskedInput < SecAggStep::Unmasking);
/// assert_eq!(SecAggStep::Unmasking.to_string(), "unmasking");
/// ```
pub use syndrome_agg::secagg::Step as SecAggStep;
