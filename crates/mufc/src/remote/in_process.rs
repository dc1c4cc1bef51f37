//! The parties driven in one process: the server's, every client's and,
//! with dealt masks, the dealer's, with their messages carried as bytes in
//! memory, as `mufc-net` carries the same bytes over TLS. The driver
//! decides nothing a party decides: it forwards requests, carries each
//! step's messages to their addressee and commits what the server
//! committed (the shape of `syndrome_agg::secagg::transport::InProcess`).

mod additions;
mod regroup;
mod reports;
mod requests;
mod round;
mod saved;

pub use saved::PartiesSnapshot;
pub(crate) use saved::with_saved_layout;

use std::collections::BTreeMap;
use std::time::Duration;

use seeding::Dataset;
use syndrome_agg::masking::dealer::SealKey;
use syndrome_agg::masking::pairwise::MaskKeyPair;

use super::{RemoteClient, RemoteDealer, RemoteServer, RemoteSetup, RoundReport};
use crate::aggregation::{RoundSecrets, SecretSource};
use crate::{
    Channel, ClientId, ClientK, FitReport, Layout, Masking, MufcError, MufcResult, PendingAddition,
    PendingRequest, RemovalReport, StageTimes, ValidConfig, Withdrawal, par,
};

/// A federation's parties ([`RemoteServer`], a [`RemoteClient`] per
/// client, and a [`RemoteDealer`] with dealt masks) run in one process by
/// a driver that only moves their bytes: the protocol each party runs
/// across processes, with no transport. Training runs one round in every
/// group (one round when flat); a removal request is forwarded to the
/// clients it names, then one round runs in every group with a changed
/// client: a change round where the server can run one, else a whole
/// round.
///
/// With SecAgg, the configuration's dropout rate
/// ([`SecAggOptions::dropout`](crate::SecAggOptions::dropout)) is
/// simulated as [`Federation`](crate::Federation) simulates it: a client
/// the federation's draw drops from a step on neither hears nor answers
/// that step or a later one, so each round includes the clients the
/// federation's would.
///
/// With dealt masks the driver plays the dealer's operator and the
/// clients': it draws the key each client shares with the dealer from the
/// operating system and gives it to both, where across processes the two
/// agree it from the keys they pinned.
///
/// # Example
///
/// ```
/// use mufc::remote::InProcess;
/// use mufc::{ClientId, Federation, FederationConfig, RemovalOutcome, RemovalRequest};
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, PointId};
///
/// let data: Vec<(ClientId, Dataset)> = (0..3)
///     .map(|l| {
///         let d = DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2);
///         Dataset::new(d).map(|d| (ClientId(l as u64), d))
///     })
///     .collect::<Result<_, _>>()?;
/// let config = FederationConfig::new(2).seed(5).validate()?; // dealt masks
/// let mut parties = InProcess::train(data.clone(), &config)?;
/// let fed = Federation::with_ids(data.clone(), parties.server().setup().config())?;
/// assert_eq!(parties.server().server().centroids(), fed.server().centroids());
///
/// // Two clients forget a point each: one round, equal to retraining.
/// let request = RemovalRequest::points(ClientId(1), vec![PointId(4)])
///     .with_points(ClientId(2), vec![PointId(0)]);
/// let report = parties.remove(&request)?;
/// assert_eq!(report.outcome, RemovalOutcome::Applied);
/// assert_eq!(report.updated_clients, [ClientId(1), ClientId(2)]);
/// assert_eq!(parties.last_rounds().len(), 1);
/// let mut rest = data;
/// rest[1].1 = rest[1].1.without(&[PointId(4)])?;
/// rest[2].1 = rest[2].1.without(&[PointId(0)])?;
/// let retrained = Federation::with_ids(rest, parties.server().setup().config())?;
/// assert_eq!(parties.server().server().counts(), retrained.server().counts());
/// assert_eq!(parties.server().server().centroids(), retrained.server().centroids());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct InProcess {
    server: RemoteServer,
    /// In id order.
    clients: Vec<RemoteClient>,
    dealer: Option<RemoteDealer>,
    /// The clients whose points changed since their group's last round
    /// (held back by the lone-update policy, or by a failed round), with
    /// what they lost.
    waiting: BTreeMap<ClientId, Waiting>,
    /// The removals accepted whose rounds wait, in part or whole.
    pending: Vec<PendingRequest>,
    /// The additions accepted whose rounds wait, in part or whole.
    additions: Vec<PendingAddition>,
    /// The reports of the requests applied or withdrawn.
    history: Vec<RemovalReport>,
    /// The training rounds, one per group.
    training: Vec<DrivenRound>,
    /// The rounds of the last request or flush.
    last: Vec<DrivenRound>,
    /// The requests accepted so far.
    requests: u64,
    /// Why the model was withdrawn, if it was.
    withdrawn: Option<Withdrawal>,
    /// The clients that left whole before a saved federation was loaded
    /// (the file keeps their ids alone, not their place in the roster):
    /// no join takes their ids.
    retired: std::collections::BTreeSet<ClientId>,
    /// A failure the tests inject, and what the failed round received.
    #[cfg(test)]
    pub(crate) injected: Injected,
}

/// A round the tests make fail once every message is in, before the
/// server finishes it (a server that crashed, a network that failed), and
/// what it had received by then.
#[cfg(test)]
#[derive(Clone, Debug, Default)]
pub(crate) struct Injected {
    pub(crate) fail_next: bool,
    /// With `fail_next`, the rounds to let commit before the one that
    /// fails.
    pub(crate) pass_first: usize,
    /// The failed round's number and what it received.
    pub(crate) failed: Option<(u64, Received)>,
}

/// What one round cost the parties other than the server, as the driver
/// timed their calls and counted their bytes (the server's own times are
/// in its [`RoundReport`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PartyCosts {
    /// Each member's training in this round (its first; zero after), in
    /// id order.
    pub training: Vec<(ClientId, Duration)>,
    /// Each member's join but its training, in id order: the checks of
    /// the round, the encoding and masking of its first message.
    pub joins: Vec<(ClientId, Duration)>,
    /// The protocol's later steps on the clients' side: the longest
    /// answer of each step, summed over the steps.
    pub protocol_client_max: Duration,
    /// Every answer's time, summed.
    pub protocol_client_sum: Duration,
    /// The dealer's time, with dealt masks.
    pub dealer: Duration,
    /// The bytes the clients sent the server, in all.
    pub bytes_up: u64,
    /// The messages the clients sent the server.
    pub messages: usize,
}

impl PartyCosts {
    fn sent(&mut self, bytes: &[u8]) {
        self.bytes_up += bytes.len() as u64;
        self.messages += 1;
    }

    /// The bytes a member sent, on average: a report's bytes per client.
    fn bytes_per_member(&self) -> usize {
        let members = self.joins.len().max(1) as u64;
        usize::try_from(self.bytes_up / members).unwrap_or(usize::MAX)
    }
}

/// Adds the other parties' costs of `rounds` to `times`: the protocol's
/// client times and the dealer's, and each member's part of its round,
/// `own` its training or unlearning, its join the encoding and masking.
fn add_party_costs(
    times: &mut StageTimes,
    rounds: &[DrivenRound],
    own: impl Fn(ClientId, &PartyCosts) -> Duration,
) {
    let (mut owns, mut encode) = (Vec::new(), Vec::new());
    for c in rounds.iter().map(|r| &r.costs) {
        times.protocol_client_max += c.protocol_client_max;
        times.protocol_client_sum += c.protocol_client_sum;
        times.offline += c.dealer;
        for (id, t) in &c.joins {
            owns.push(own(*id, c));
            encode.push(*t);
        }
    }
    crate::state::client_times(times, &owns, &encode);
}

/// What a client's requests did to it since its group's last round.
#[derive(Clone, Copy, Debug, Default)]
struct Waiting {
    /// The points it forgot.
    points: u64,
    /// Whether it left whole.
    left: bool,
    /// Whether it reseeded (Algorithm 3; never a client that left).
    reseeded: bool,
}

/// One round the driver ran: the server's report, and what it cost the
/// other parties.
#[derive(Clone, Debug, PartialEq)]
pub struct DrivenRound {
    /// The server's report of the round.
    pub report: RoundReport,
    /// The other parties' costs.
    pub costs: PartyCosts,
    /// Every message the server received in the round, in the order it
    /// received them, by sender (the dealer's answer as the pseudo-client
    /// `u64::MAX`), when the configuration records them
    /// ([`RunOptions::record_messages`](crate::RunOptions::record_messages));
    /// else empty. What a curious server sees.
    pub received: Vec<(ClientId, Vec<u8>)>,
}

/// What the server received in a round, by sender, in order.
#[cfg(test)]
pub(crate) type Received = Vec<(ClientId, Vec<u8>)>;

impl InProcess {
    /// The parties of `clients` under `config`, trained: every group runs
    /// one round (Algorithm 1), in which each client trains on its points,
    /// encodes and masks its histogram, and the server decodes the sum and
    /// fits its model.
    ///
    /// # Errors
    ///
    /// The errors of [`RemoteClient::new`], [`RemoteSetup::new`] and
    /// [`RemoteServer::new`]; a round's errors.
    ///
    /// In the plain mode ([`Channel::Plain`]) every client is allowed it
    /// ([`RemoteClient::allowing_plain`]: the configuration is its
    /// operator's choice) and sends its centroids in the clear; a removal
    /// runs one round of the clients that changed, whatever the
    /// lone-update policy (the server sees every message there).
    pub fn train(clients: Vec<(ClientId, Dataset)>, config: &ValidConfig) -> MufcResult<Self> {
        Self::train_in(clients, config, None)
    }

    /// The parties of `clients` trained in the groups `layout` in place of
    /// those of the configuration's topology ([`RemoteSetup::with_layout`]):
    /// as [`Federation::with_layout`](crate::Federation::with_layout).
    ///
    /// # Errors
    ///
    /// As [`Self::train`], and those of [`RemoteSetup::with_layout`].
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::InProcess;
    /// use mufc::{ClientId, FederationConfig, Layout, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let data: Vec<(ClientId, Dataset)> = (0..6)
    ///     .map(|l| {
    ///         let d = DMatrix::from_fn(2, 20, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2);
    ///         Dataset::new(d).map(|d| (ClientId(l as u64), d))
    ///     })
    ///     .collect::<Result<_, _>>()?;
    /// let config = FederationConfig::new(2).gamma(0.1).seed(2).validate()?;
    /// let odd_even = Layout::from_groups(vec![[0, 2, 4].map(ClientId).to_vec(), [1, 3, 5].map(ClientId).to_vec()], None)?;
    /// let mut parties = InProcess::train_with_layout(data, &config, odd_even)?;
    /// assert_eq!(parties.training().len(), 2);
    /// // A request in the odd group runs a round there alone.
    /// parties.remove(&RemovalRequest::points(ClientId(1), vec![PointId(0)]).with_points(ClientId(3), vec![PointId(2)]))?;
    /// assert_eq!(parties.last_rounds().len(), 1);
    /// assert_eq!(parties.last_rounds()[0].report.group, Some(1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn train_with_layout(
        clients: Vec<(ClientId, Dataset)>,
        config: &ValidConfig,
        layout: Layout,
    ) -> MufcResult<Self> {
        Self::train_in(clients, config, Some(layout))
    }

    fn train_in(
        clients: Vec<(ClientId, Dataset)>,
        config: &ValidConfig,
        layout: Option<Layout>,
    ) -> MufcResult<Self> {
        // The configuration is every client's operator's choice: the
        // plain mode is allowed where it says so.
        let mut parties: Vec<RemoteClient> = clients
            .into_iter()
            .map(|(id, data)| Ok(as_configured(RemoteClient::new(id, data)?, config)))
            .collect::<MufcResult<_>>()?;
        parties.sort_by_key(RemoteClient::id);
        // The survey of a client's data (a short K-means) matters to the
        // adaptive rule alone: the other rules register without it.
        let survey = matches!(config.client().k(), ClientK::Adaptive { .. });
        let regs = par::map(config.run().is_parallel(), &parties, |_, c| {
            Ok::<_, MufcError>(c.registration_with(survey))
        })?;
        let setup = RemoteSetup::resolved(config, &regs)?;
        // Data errors first, as each client's first round would find them,
        // then the policy's minimum.
        let quantizer = crate::state::setup::quantizer(setup.config(), setup.dim())?;
        let data = parties.iter().map(|c| (c.id(), c.data()));
        crate::state::setup::check_data(data, setup.config(), quantizer.as_ref())?;
        setup.check_policy()?;
        let setup = match layout {
            Some(layout) => setup.with_layout(layout)?,
            None => setup,
        };
        let dealer = match config.channel().as_scma().map(|s| s.masks().masking()) {
            Some(Masking::Dealer) => Some(pair_with_a_dealer(
                &mut parties,
                config.insecure_deterministic_masks(),
            )?),
            _ => None,
        };
        let mut driver = Self {
            server: RemoteServer::new(setup)?,
            clients: parties,
            dealer,
            waiting: BTreeMap::new(),
            pending: Vec::new(),
            additions: Vec::new(),
            history: Vec::new(),
            training: Vec::new(),
            last: Vec::new(),
            requests: 0,
            withdrawn: None,
            retired: std::collections::BTreeSet::new(),
            #[cfg(test)]
            injected: Injected::default(),
        };
        for g in 0..driver.server.groups().len() {
            let members = driver.server.groups()[g].clone();
            // A layout may hold an empty group (one whose clients all
            // left or moved, retrained): it sums nothing.
            if members.is_empty() {
                continue;
            }
            let round = driver.round(&members, None)?;
            driver.training.push(round);
        }
        Ok(driver)
    }

    /// The training rounds, one per group (one when flat).
    pub fn training(&self) -> &[DrivenRound] {
        &self.training
    }

    /// What training cost and produced (Algorithm 1), as
    /// [`Federation::fit_report`](crate::Federation::fit_report) reports
    /// it: the server's part of its report, with the clients' times and
    /// bytes the driver measured in the training rounds (the bytes a
    /// client sent in the last group's round, as the federation in one
    /// process counts them). `None` before the model is trained.
    pub fn fit_report(&self) -> Option<FitReport> {
        let mut report = self.server.fit_report()?.clone();
        add_party_costs(&mut report.times, &self.training, |id, c| {
            let trained = c.training.iter().find(|(t, _)| *t == id);
            trained.map_or(Duration::ZERO, |(_, t)| *t)
        });
        if let Some(last) = self.training.last() {
            report.bytes_per_client = last.costs.bytes_per_member();
        }
        Some(report)
    }

    /// The server's party: the model, the decoded aggregate, the groups.
    pub fn server(&self) -> &RemoteServer {
        &self.server
    }

    /// The clients' parties, in id order.
    pub fn clients(&self) -> &[RemoteClient] {
        &self.clients
    }

    /// Drops every client's kept sketch (tests).
    #[cfg(test)]
    pub(crate) fn forget_encoded(&mut self) {
        self.clients
            .iter_mut()
            .for_each(RemoteClient::forget_encoded);
    }

    /// The dealer's party, with dealt masks.
    pub fn dealer(&self) -> Option<&RemoteDealer> {
        self.dealer.as_ref()
    }

    fn client(&self, id: ClientId) -> MufcResult<&RemoteClient> {
        self.clients
            .get(self.at(id)?)
            .ok_or(MufcError::UnknownClient(id))
    }

    /// The clients that hold no point (they left, or their leave's round
    /// waits): they count for no group's size.
    fn emptied(&self) -> std::collections::BTreeSet<ClientId> {
        (self.clients.iter())
            .filter(|c| c.data().is_empty())
            .map(RemoteClient::id)
            .collect()
    }

    fn at(&self, id: ClientId) -> MufcResult<usize> {
        self.clients
            .binary_search_by_key(&id, RemoteClient::id)
            .map_err(|_| MufcError::UnknownClient(id))
    }
}

/// `client` allowed what the configuration chose, its operators' choice:
/// the plain mode, masks derived from the seed.
fn as_configured(client: RemoteClient, config: &ValidConfig) -> RemoteClient {
    let client = match config.channel() == &Channel::Plain {
        true => client.allowing_plain(),
        false => client,
    };
    match config.insecure_deterministic_masks() {
        true => client.allowing_deterministic_masks(),
        false => client,
    }
}

/// A dealer for `clients`, each pair sharing a key drawn from the
/// operating system and given to both: the driver plays every operator,
/// so it stands for the agreement that pinned keys give across processes
/// (`SealKey::agree`, two X25519 operations a client, which would take
/// most of a fit's surplus over `Federation`'s on the built-in data).
fn pair_with_a_dealer(
    clients: &mut [RemoteClient],
    deterministic: bool,
) -> MufcResult<RemoteDealer> {
    let own = MaskKeyPair::generate(&mut rand::rng());
    let mut keys = BTreeMap::new();
    for c in clients.iter_mut() {
        let key = dealer_key(c.id())?;
        c.pair_with_dealer_key(key.clone());
        keys.insert(c.id(), key);
    }
    let dealer = RemoteDealer::with_keys(own.public_key(), keys);
    Ok(match deterministic {
        true => dealer.allowing_deterministic_masks(),
        false => dealer,
    })
}

/// The key client `id` shares with the dealer, drawn from the operating
/// system (a key from it, derived under the pair's name as a round derives
/// its secrets).
fn dealer_key(id: ClientId) -> MufcResult<SealKey> {
    let secrets = RoundSecrets::new(SecretSource::Fresh, 0)?;
    Ok(SealKey::from_secret_bytes(
        secrets.secret("dealer-pair", id.0),
    ))
}
