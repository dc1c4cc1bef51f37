//! Saving and loading a whole federation (postcard: every `f64` round-trips
//! exactly).
//!
//! What is stored: the resolved configuration, each client's id, points
//! and seeds, the decoded counts, the sketch capacity, the round counter
//! and the reports. Loading rebuilds every client's clustering from its
//! points and the configuration, and the server's K-means from the counts:
//! by exactness (see the crate docs) that is the saved state, bit for bit,
//! and the stored seeds and counts are checked against it, so that a
//! corrupt or foreign file is an error, never a different federation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use num_bigint::BigUint;
use seeding::{Dataset, PointId};
use serde::{Deserialize, Serialize};

use crate::aggregation::Decoded;
use crate::federation::Setup;
use crate::server::{InputChange, PlainCentroids};
use crate::{ClientId, Federation, FitReport, MufcError, MufcResult, RemovalReport, ValidConfig};

/// Version 2: the reports name dropped clients and the protocol's times,
/// the configuration the dropout settings.
const MAGIC: &[u8; 8] = b"MUFCFED\x02";

#[derive(Serialize)]
struct ReprRef<'a> {
    config: &'a ValidConfig,
    dim: usize,
    clients: Vec<(ClientId, &'a Dataset, &'a [PointId])>,
    counts: Vec<(&'a BigUint, u64)>,
    capacity: Option<usize>,
    rounds: u64,
    fit_report: &'a FitReport,
    history: &'a [RemovalReport],
}

#[derive(Deserialize)]
struct Repr {
    config: ValidConfig,
    dim: usize,
    clients: Vec<(ClientId, Dataset, Vec<PointId>)>,
    counts: Vec<(BigUint, u64)>,
    capacity: Option<usize>,
    rounds: u64,
    fit_report: FitReport,
    history: Vec<RemovalReport>,
}

fn bad(what: impl Into<String>) -> MufcError {
    MufcError::Persistence(what.into())
}

impl Federation {
    /// The federation as bytes (a magic header, then postcard).
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`] if serialization fails.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let a = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 7 + r) % 10) as f64 / 25.0 - 0.2))?;
    /// let b = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 3 + r) % 11) as f64 / 25.0 - 0.2))?;
    /// let mut fed = Federation::new(vec![a, b], &FederationConfig::new(2).gamma(0.1).validate()?)?;
    /// let mut loaded = Federation::from_bytes(&fed.to_bytes()?)?;
    /// let req = RemovalRequest::points(ClientId(0), vec![PointId(2)]);
    /// fed.remove(&req)?;
    /// loaded.remove(&req)?;
    /// assert_eq!(fed.server().counts(), loaded.server().counts());
    /// assert_eq!(fed.server().centroids(), loaded.server().centroids());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> MufcResult<Vec<u8>> {
        let repr = ReprRef {
            config: self.config(),
            dim: self.dim(),
            clients: self
                .clients()
                .iter()
                .map(|c| (c.id(), c.data(), c.seed_ids()))
                .collect(),
            counts: self
                .server()
                .counts()
                .iter()
                .map(|(b, &c)| (b, c))
                .collect(),
            capacity: self.fit_report().sketch.as_ref().map(|s| s.capacity),
            rounds: self.rounds(),
            fit_report: self.fit_report(),
            history: self.history(),
        };
        let mut out = MAGIC.to_vec();
        postcard::to_extend(&repr, Vec::new())
            .map(|v| {
                out.extend_from_slice(&v);
                out
            })
            .map_err(|e| bad(format!("cannot serialize: {e}")))
    }

    /// A federation from [`Self::to_bytes`]: the clients' clusterings and
    /// the server's K-means are rebuilt and checked against the stored
    /// seeds and counts.
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`] for bytes that are not a saved
    /// federation or whose stored seeds or counts do not match the rebuilt
    /// state; the validation errors of [`Self::with_ids`] for invalid
    /// contents.
    pub fn from_bytes(bytes: &[u8]) -> MufcResult<Self> {
        let body = bytes
            .strip_prefix(MAGIC.as_slice())
            .ok_or_else(|| bad("not a saved federation (bad header)"))?;
        let r: Repr = postcard::from_bytes(body).map_err(|e| bad(format!("cannot parse: {e}")))?;
        let stored_seeds: BTreeMap<ClientId, Vec<PointId>> = r
            .clients
            .iter()
            .map(|(id, _, s)| (*id, s.clone()))
            .collect();
        let setup = Setup::restore(
            r.clients.into_iter().map(|(id, d, _)| (id, d)).collect(),
            &r.config,
            r.dim,
        )?;
        let fitted = setup.fit_clients()?;
        let clients: Vec<_> = fitted.into_iter().map(|(c, _)| c).collect();
        for c in &clients {
            if stored_seeds.get(&c.id()).map(Vec::as_slice) != Some(c.seed_ids()) {
                return Err(bad(format!(
                    "client {} does not reproduce its stored seeds",
                    c.id()
                )));
            }
        }
        let counts: BTreeMap<BigUint, u64> = r.counts.into_iter().collect();
        let mut server = setup.server()?;
        let mut aggregation = setup.aggregation(r.capacity)?;
        let change = match &mut aggregation {
            Some(agg) => {
                // The decoded aggregate of the last round is the plain sum
                // of the histograms of the clients it included (all of
                // them unless some dropped out).
                let included: BTreeSet<ClientId> = r
                    .history
                    .last()
                    .map_or(&r.fit_report.included, |h| &h.included)
                    .iter()
                    .copied()
                    .collect();
                let mut sum: BTreeMap<BigUint, u64> = BTreeMap::new();
                for c in clients.iter().filter(|c| included.contains(&c.id())) {
                    for (b, n) in c.histogram() {
                        let e = sum.entry(b.clone()).or_insert(0);
                        *e = e.saturating_add(*n);
                    }
                }
                if sum != counts {
                    return Err(bad(
                        "the stored counts are not the sum of the included clients' histograms",
                    ));
                }
                agg.restore_last(&counts)?;
                agg.set_rounds(r.rounds);
                InputChange::Counts(Decoded::Full(counts.into_iter().collect()))
            }
            None => InputChange::Plain(
                clients
                    .iter()
                    .map(|c| {
                        (
                            PlainCentroids {
                                client: c.id(),
                                centroids: nalgebra::DMatrix::zeros(setup.dim, 0),
                                sizes: Vec::new(),
                            },
                            PlainCentroids {
                                client: c.id(),
                                centroids: c.centroid_matrix(),
                                sizes: c.sizes().to_vec(),
                            },
                        )
                    })
                    .collect(),
            ),
        };
        server.apply(server.plan(change)?)?;
        Ok(Self::from_parts(
            setup,
            clients,
            aggregation,
            server,
            r.fit_report,
            r.history,
        ))
    }

    /// Saves the federation to a file ([`Self::to_bytes`]).
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`] for serialization or I/O errors.
    pub fn save(&self, path: impl AsRef<Path>) -> MufcResult<()> {
        let bytes = self.to_bytes()?;
        std::fs::write(path.as_ref(), bytes)
            .map_err(|e| bad(format!("cannot write {}: {e}", path.as_ref().display())))
    }

    /// Loads a federation saved by [`Self::save`].
    ///
    /// # Errors
    ///
    /// As [`Self::from_bytes`], plus [`MufcError::Persistence`] for I/O
    /// errors.
    pub fn load(path: impl AsRef<Path>) -> MufcResult<Self> {
        let bytes = std::fs::read(path.as_ref())
            .map_err(|e| bad(format!("cannot read {}: {e}", path.as_ref().display())))?;
        Self::from_bytes(&bytes)
    }
}
