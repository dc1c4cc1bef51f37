//! A federation's state in the parts a store keeps apart: the server's
//! part ([`ServerSnapshot`]) and each client's points and seeds. The
//! `mufc-store` crate writes them as rows of its SQLite file, one row a
//! client, so that a request rewrites the clients it changed and the
//! server's row only.

use std::collections::BTreeMap;

use num_bigint::BigUint;
use seeding::{Dataset, PointId};
use serde::{Deserialize, Serialize};

use super::body::{Repr, SavedTree};
use super::load::Restored;
use crate::state::unsent::Unsent;
use crate::{
    ClientId, FitReport, MufcResult, PendingAddition, PendingRequest, PersistError, RemovalReport,
    StoredClusters, ValidConfig, Withdrawal,
};

/// Everything a [`Federation`](crate::Federation) holds but its clients' points: the
/// configuration, the decoded counts, the round counter, the reports
/// (the last removal report only, with the number of requests applied
/// before it), the requests whose model update waits, and the groups.
///
/// Serialized with serde; the field order is a stored format (the
/// server row of `mufc-store`'s schema 5), so it only ever grows at the
/// end, with a new schema version. Rebuilding a federation from it
/// ([`Federation::from_snapshot`](crate::Federation::from_snapshot)) runs every check of
/// [`Federation::from_bytes`](crate::Federation::from_bytes).
///
/// # Example
///
/// ```
/// use mufc::{Federation, FederationConfig};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let client = |s: usize| Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * 7 + r + s) % 10) as f64 / 25.0));
/// let config = FederationConfig::new(2).gamma(0.1).validate()?;
/// let fed = Federation::new(vec![client(0)?, client(1)?, client(2)?], &config)?;
///
/// let server = fed.server_snapshot();
/// let clients = fed
///     .clients()
///     .iter()
///     .map(|c| (c.id(), c.data().clone(), c.seed_ids().to_vec()))
///     .collect();
/// let again = Federation::from_snapshot(server, clients)?;
/// assert_eq!(again.server().centroids(), fed.server().centroids());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ServerSnapshot {
    config: ValidConfig,
    dim: usize,
    counts: Vec<(BigUint, u64)>,
    capacity: Option<usize>,
    rounds: u64,
    fit_report: FitReport,
    applied_requests: u64,
    history: Vec<RemovalReport>,
    pending: Vec<PendingRequest>,
    unsent: Vec<(ClientId, Unsent)>,
    tree: Option<SavedTree>,
    withdrawn: Option<Withdrawal>,
    /// The additions whose rounds wait (`mufc-store`'s schema 8).
    additions: Vec<PendingAddition>,
    /// The client-less federation the snapshot was taken of, when a
    /// running server took it ([`RemoteServer::snapshot`](crate::remote::RemoteServer::snapshot)):
    /// [`Federation::from_snapshot`](crate::Federation::from_snapshot) then returns it rather than rebuild
    /// it (the server's K-means again on every round a server's store
    /// commits: 3.4 ms against 7 us on the paper's Gaussian data,
    /// docs/benchmarks.md). Never stored: a snapshot read back is rebuilt
    /// and checked.
    #[serde(skip)]
    live: Option<Box<Restored>>,
}

impl ServerSnapshot {
    /// The snapshot of a server's state (the model `server` with its
    /// decoded counts, the training report, the rounds started, the
    /// groups), with the requests' `book` (of whose reports the last is
    /// kept), and nothing carried: the one builder of every snapshot
    /// (a federation's in one process, a server party's, the parties'
    /// driver's).
    pub(crate) fn describing(
        (config, dim): (&ValidConfig, usize),
        server: &crate::Server,
        fit_report: &FitReport,
        (rounds, tree): (u64, Option<SavedTree>),
        book: crate::state::RequestBook,
    ) -> Self {
        Self {
            config: config.clone(),
            dim,
            counts: (server.counts().iter())
                .map(|(b, &n)| (b.clone(), n))
                .collect(),
            capacity: fit_report.sketch.as_ref().map(|s| s.capacity),
            rounds,
            fit_report: fit_report.clone(),
            applied_requests: book.applied,
            history: book.history.last().cloned().into_iter().collect(),
            pending: book.pending,
            unsent: book.unsent.into_iter().collect(),
            tree,
            withdrawn: book.withdrawn,
            additions: book.additions,
            live: None,
        }
    }

    /// This snapshot carrying `parts`, the state it describes, so that
    /// taking it back with no client rebuilds no model (a running
    /// server's, `remote`).
    pub(crate) fn carrying(mut self, parts: Restored) -> Self {
        self.live = Some(Box::new(parts));
        self
    }

    /// This snapshot with the clients `gone` out of its groups, as a
    /// federation in one process drops a client whose leave a round
    /// applied (the parties' server keeps it in its ring: issue 29).
    pub(crate) fn without_members(mut self, gone: &std::collections::BTreeSet<ClientId>) -> Self {
        for group in self.tree.iter_mut().flat_map(|t| t.groups.iter_mut()) {
            group.members.retain(|c| !gone.contains(c));
            group.included.retain(|c| !gone.contains(c));
        }
        self
    }
}

/// One client's part of a snapshot: its id, its points and its seeds.
pub type ClientSnapshot = (ClientId, Dataset, Vec<PointId>);

impl ServerSnapshot {
    /// What a saved file holds: this snapshot, the clients' parts and
    /// every report of `history` (where a snapshot keeps the last).
    pub(crate) fn into_repr(
        self,
        clients: Vec<ClientSnapshot>,
        history: Vec<RemovalReport>,
        left: Vec<ClientId>,
    ) -> Repr {
        Repr {
            config: self.config,
            dim: self.dim,
            clients,
            counts: self.counts,
            capacity: self.capacity,
            rounds: self.rounds,
            fit_report: self.fit_report,
            history,
            pending: self.pending,
            unsent: self.unsent,
            tree: self.tree,
            withdrawn: self.withdrawn,
            additions: self.additions,
            left,
        }
    }

    /// The state of this snapshot and the clients' parts, rebuilt and
    /// checked as [`Federation::from_stored`](crate::Federation::from_stored) does; the state a running
    /// server carried when it took the snapshot, with no client.
    pub(crate) fn restore(
        mut self,
        clients: Vec<ClientSnapshot>,
        clusters: BTreeMap<ClientId, StoredClusters>,
    ) -> MufcResult<Restored> {
        if let Some(live) = self.live.take()
            && clients.is_empty()
            && clusters.is_empty()
        {
            return Ok(*live);
        }
        let applied = self.applied_requests;
        let history = std::mem::take(&mut self.history);
        let mut parts =
            super::load::restore(self.into_repr(clients, history, Vec::new()), clusters)?;
        let kept = parts.book.applied;
        if applied < kept {
            return Err(PersistError::Corrupt {
                reason: format!(
                    "{applied} requests applied, fewer than the {kept} of the last report"
                ),
            }
            .into());
        }
        parts.book.applied = applied;
        Ok(parts)
    }
}
