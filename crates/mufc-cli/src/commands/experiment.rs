//! The experiment `mufc unlearn` and `mufc bench` share: one federation
//! trained on the prepared data (trial 0's federation seed), serving
//! removal requests, and after every round that applied some, the same
//! data retrained from scratch and compared with it bit for bit.

use std::collections::{BTreeMap, HashSet};

use mufc::{ClientId, Federation, RemovalReport, RemovalRequest, ValidConfig};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use seeding::{Dataset, PointId};

use super::prepare::Prepared;
use super::trials::{fed_config, trial_seed};
use crate::CliError;
use crate::cli::FedArgs;
use crate::federated;
use crate::random::{derive_seed, tag};

/// The points of some requests, by client.
pub(super) type Entries = Vec<(ClientId, Vec<PointId>)>;

/// A federation under removal requests, with the data it should hold.
pub(super) struct Experiment {
    /// The prepared data.
    pub p: Prepared,
    /// The federation's configuration.
    pub config: ValidConfig,
    /// The federation's seed (trial 0's).
    pub fed_seed: u64,
    /// The clients' data at training.
    pub clients: Vec<Dataset>,
    /// The federation.
    pub fed: Federation,
    /// The generator of the random requests.
    pub rng: ChaCha8Rng,
    /// The requests the federation deferred (docs/threat-model.md U3).
    pub deferred: usize,
    /// What each client holds once the applied requests are removed.
    remaining: BTreeMap<ClientId, Dataset>,
    /// Retraining's configuration (`federated::retrain_config`).
    retrain_config: ValidConfig,
    /// The entries of the requests not applied yet.
    waiting: Entries,
}

/// A removal round that applied requests, checked against retraining.
pub(super) struct Checked {
    /// The round's report.
    pub report: RemovalReport,
    /// The entries it applied.
    pub applied: Entries,
    /// The federation retrained on the data left.
    pub fresh: Federation,
    /// The first difference from it (`None`: equal bit for bit).
    pub diff: Option<String>,
}

impl Experiment {
    /// Trains the federation on the prepared data `p`
    /// ([`prepare`](super::prepare::prepare)), configured by `fed`.
    ///
    /// # Errors
    ///
    /// As the configuration and training.
    pub(super) fn new(p: Prepared, fed: &FedArgs, seed: u64) -> Result<Self, CliError> {
        let fed_seed = trial_seed(seed, 0);
        let config = fed_config(&p, fed, fed_seed)?;
        let clients = p.split.client_datasets(&p.points)?;
        let federation = Federation::new(clients.clone(), &config)?;
        let remaining = clients
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, d)| (ClientId(i as u64), d))
            .collect();
        Ok(Self {
            retrain_config: federated::retrain_config(&federation)?,
            rng: ChaCha8Rng::seed_from_u64(derive_seed(seed, tag::REMOVALS, 0)),
            p,
            config,
            fed_seed,
            clients,
            fed: federation,
            deferred: 0,
            remaining,
            waiting: Vec::new(),
        })
    }

    /// Serves `request`, which names `entries`: erased at once; a
    /// deferred request is counted and waits for the round that applies it.
    ///
    /// # Errors
    ///
    /// The library's refusal of the request.
    pub(super) fn remove(
        &mut self,
        request: &RemovalRequest,
        entries: Entries,
    ) -> Result<RemovalReport, CliError> {
        let report = self.fed.remove(request)?;
        self.waiting.extend(entries);
        if report.outcome.is_deferred() {
            self.deferred += 1;
        }
        Ok(report)
    }

    /// The requests still waiting for a round.
    pub(super) fn pending(&self) -> usize {
        self.fed.pending().len()
    }

    /// Checks the round of `report` against retraining: the entries it
    /// applied (those no pending request names any more: with groups, the
    /// parts of requests in groups without enough clients wait on) leave
    /// the data, which is retrained from scratch and compared.
    ///
    /// # Errors
    ///
    /// As retraining.
    pub(super) fn check(&mut self, report: RemovalReport) -> Result<Checked, CliError> {
        let applied = split_applied(&mut self.waiting, &self.fed);
        for (client, ids) in &applied {
            federated::remove_from(&mut self.remaining, *client, ids)?;
        }
        let (fresh, diff) = federated::check_retrained(
            &self.fed,
            &self.remaining,
            &self.waiting,
            &self.retrain_config,
        )?;
        Ok(Checked {
            report,
            applied,
            fresh,
            diff,
        })
    }
}

/// The points the pending requests of `fed` name.
pub(super) fn pending_points(fed: &Federation) -> HashSet<(ClientId, PointId)> {
    fed.pending()
        .iter()
        .flat_map(|p| p.request.point_entries())
        .flat_map(|(c, ids)| ids.iter().map(|id| (*c, *id)))
        .collect()
}

/// Moves out of `waiting` the entries a round applied: those that no
/// pending request of `fed` names any more.
fn split_applied(waiting: &mut Entries, fed: &Federation) -> Entries {
    let whole: HashSet<ClientId> = fed
        .pending()
        .iter()
        .flat_map(|p| p.request.clients_removed().iter().copied())
        .collect();
    let points = pending_points(fed);
    let mut applied = Vec::new();
    let mut kept = Vec::new();
    for (c, ids) in waiting.drain(..) {
        if whole.contains(&c) {
            kept.push((c, ids));
            continue;
        }
        let (wait, done): (Vec<_>, Vec<_>) =
            ids.into_iter().partition(|id| points.contains(&(c, *id)));
        if !done.is_empty() {
            applied.push((c, done));
        }
        if !wait.is_empty() {
            kept.push((c, wait));
        }
    }
    *waiting = kept;
    applied
}
