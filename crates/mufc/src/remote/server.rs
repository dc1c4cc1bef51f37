//! The server's half: the aggregate, the model and the rounds, and never a
//! client's points.

use std::collections::BTreeSet;
use std::time::Instant;

mod finish;
mod joins;
mod regroup;
mod round;
mod saved;

use round::Half;
pub use round::{RoundReport, RoundStep, ServerRound};

use super::plain::PlainServer;
use super::{Announcement, RemoteSetup};
use crate::aggregation::{
    Aggregation, RoundProtocol, RoundSecrets, RoundSpec, SecretSource, Sends,
};
use crate::state::tree::Tree;
use crate::state::{check_remaining, withdrawal_after};
use crate::{
    ClientId, FitReport, MufcError, MufcResult, NodeId, SecAggStep, Server, StageTimes, Withdrawal,
};

/// The server of a federation run across processes: the aggregation's
/// state (the sketch parameters, the last unmasked sum, the round
/// counter) and the model. See the [module docs](super) for a round.
#[derive(Clone, Debug)]
pub struct RemoteServer {
    setup: RemoteSetup,
    /// The masked sums' state; `None` in the plain mode, which has none.
    aggregation: Option<Aggregation>,
    /// The rounds started in the plain mode (the aggregation counts them
    /// otherwise).
    plain_rounds: u64,
    /// The root's model (the only one when flat).
    server: Server,
    fit_report: Option<FitReport>,
    /// The groups and the other nodes' models, with groups.
    tree: Option<Tree>,
    /// The training rounds' times so far (one round when flat, one per
    /// group otherwise): the fit report's once the model is trained.
    training_times: StageTimes,
    /// Why the model was withdrawn, once it was ([`Self::withdraw`]),
    /// with the rounds started before: the counter never goes back.
    withdrawn: Option<Withdrawal>,
}

impl RemoteServer {
    /// The server of the federation `setup` describes, before training.
    ///
    /// # Errors
    ///
    /// As building a [`Federation`](crate::Federation) with this configuration (the field,
    /// the SecAgg parameters for the roster).
    pub fn new(setup: RemoteSetup) -> MufcResult<Self> {
        let parts = setup.parts()?;
        let aggregation = setup.aggregation(&parts)?;
        let server = parts.server()?;
        let tree = setup
            .layout()
            .map(|layout| Tree::serving(&parts, layout.clone(), setup.capacity()))
            .transpose()?;
        Ok(Self {
            setup,
            aggregation,
            plain_rounds: 0,
            server,
            fit_report: None,
            tree,
            training_times: StageTimes::default(),
            withdrawn: None,
        })
    }

    /// The last round committed in group `g` (when flat, `0`), if one was
    /// since the server was set up or resumed: the base of its next
    /// change round.
    pub(crate) fn committed(&self, g: usize) -> Option<u64> {
        match &self.tree {
            Some(t) => t.group_aggregation_ref(g)?.committed(),
            None => self.aggregation.as_ref()?.committed(),
        }
    }

    /// The federation's setup.
    pub fn setup(&self) -> &RemoteSetup {
        &self.setup
    }

    /// Withdraws the model for `w`: the clients left too few of the
    /// minimum aggregate (docs/threat-model.md P4), so the server forgets
    /// its counts and centroids, every node's and the groups' last sums,
    /// and runs no more rounds. The in-process driver calls it with
    /// [`Self::withdrawal_if_gone`]'s answer; across processes a driver
    /// calls [`Self::withdraw_if_too_few`].
    pub(crate) fn withdraw(&mut self, w: Withdrawal) {
        self.withdrawn = Some(w);
        self.server.clear();
        self.tree = None;
    }

    /// The withdrawal (docs/threat-model.md P4) that the clients `gone`
    /// call for by request `request`: every client of the roster that
    /// holds no point, those the request empties among them. Fewer than
    /// the minimum aggregate left with points, in a group that no other
    /// group can take (with groups: one that can merges into it), or in
    /// the roster, but some, withdraw the model. The server party
    /// decides it from its roster and groups alone, so that a driver need
    /// only tell it who left: in one process the request names them.
    pub(crate) fn withdrawal_if_gone(
        &self,
        gone: &BTreeSet<ClientId>,
        request: u64,
    ) -> Option<Withdrawal> {
        let min_clients = self.setup.config().min_clients();
        let gone: BTreeSet<ClientId> = (gone.iter().copied())
            .filter(|c| self.setup.roster().binary_search(c).is_ok())
            .collect();
        let remaining = self.setup.roster().len().saturating_sub(gone.len());
        let layout = self.setup.layout();
        let refusal = check_remaining(layout, min_clients, &gone, remaining).err()?;
        withdrawal_after(&refusal, request, self.rounds())
    }

    /// The withdrawal (docs/threat-model.md P4) that the clients `gone`
    /// call for across processes, where the driver hears who holds no
    /// point from the clients themselves (those that left, and those
    /// that said, with a request or when they connected, that they hold
    /// none): fewer than the minimum aggregate left with points in the
    /// roster, or in a group that no other group can take in (a group
    /// that one can take merges into it first, [`Self::merge_due`]), but
    /// some. `request`
    /// names the request that emptied the last client (across
    /// processes, that client's own number for it). `None` once the
    /// model is withdrawn: it is withdrawn once.
    ///
    /// # Example
    ///
    /// ```
    /// use std::collections::BTreeSet;
    /// use mufc::remote::InProcess;
    /// use mufc::{ClientId, FederationConfig};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let data: Vec<(ClientId, Dataset)> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)).map(|d| (ClientId(l as u64), d)))
    ///     .collect::<Result<_, _>>()?;
    /// let config = FederationConfig::new(2).seed(5).min_clients(2).validate()?;
    /// let mut server = InProcess::train(data, &config)?.server().clone();
    /// // One client holding no point leaves two: the minimum.
    /// assert!(server.withdraw_if_too_few(&BTreeSet::from([ClientId(2)]), 1).is_none());
    /// // Two leave one: its histogram would be the sum.
    /// let gone = BTreeSet::from([ClientId(1), ClientId(2)]);
    /// let w = server.withdraw_if_too_few(&gone, 4).unwrap();
    /// assert_eq!((w.request, w.clients, w.min_clients), (4, 1, 2));
    /// assert!(server.is_withdrawn() && server.withdrawal() == Some(&w));
    /// assert!(server.start_round(&[ClientId(0)]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn withdraw_if_too_few(
        &mut self,
        gone: &BTreeSet<ClientId>,
        request: u64,
    ) -> Option<Withdrawal> {
        let w = self.withdrawal_for(gone, request)?;
        self.withdraw(w.clone());
        Some(w)
    }

    /// The withdrawal [`Self::withdraw_if_too_few`] would make, without
    /// making it: a driver checks it before it decodes a round's sum.
    pub fn withdrawal_for(&self, gone: &BTreeSet<ClientId>, request: u64) -> Option<Withdrawal> {
        if self.withdrawn.is_some() || self.fit_report.is_none() {
            return None;
        }
        self.withdrawal_if_gone(gone, request)
    }

    /// Why the model was withdrawn, if it was.
    pub fn withdrawal(&self) -> Option<&Withdrawal> {
        self.withdrawn.as_ref()
    }

    /// Whether the model was withdrawn.
    pub fn is_withdrawn(&self) -> bool {
        self.withdrawn.is_some()
    }

    /// The first SecAgg step client `c` misses in round `round` of a
    /// simulation of the configuration's dropout rate (the draw of
    /// [`Federation`](crate::Federation)'s rounds); `None` with other masks.
    pub(crate) fn simulated_dropout(&self, round: u64, c: ClientId) -> Option<SecAggStep> {
        (self.aggregation.as_ref()).and_then(|a| a.simulated_dropout(round, c))
    }

    /// The model and the decoded aggregate (the root's, with groups).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The model of `node` of the layout ([`RemoteSetup::layout`]): a
    /// group's, an inner node's, or the root's ([`Self::server`]); when
    /// flat, `NodeId(0)` is the root. `None` out of range.
    pub fn node(&self, node: NodeId) -> Option<&Server> {
        match &self.tree {
            Some(t) if node == t.layout().root() => Some(&self.server),
            Some(t) => t.node(node),
            None => (node == NodeId(0)).then_some(&self.server),
        }
    }

    /// The fit report, once the model is trained: the server's part (its
    /// protocol, decoding and clustering times, the aggregate, the
    /// clients of the model); the clients' times and bytes are theirs.
    pub(crate) fn fit_report(&self) -> Option<&FitReport> {
        self.fit_report.as_ref()
    }

    /// Whether the model is trained: every group (or the one flat
    /// aggregate) has committed a round.
    pub fn is_trained(&self) -> bool {
        self.fit_report.is_some()
    }

    /// The groups a round may run in: the layout's groups, or the whole
    /// roster as one group when flat. The clients of a round
    /// ([`Self::start_round`]) are members of one of them, and a client
    /// joins only rounds of its own.
    ///
    /// ```
    /// # use mufc::remote::{RemoteServer, RemoteSetup};
    /// # use mufc::{Channel, FederationConfig, Masks, SecAggOptions, Topology};
    /// # use mufc::remote::Registration;
    /// # use mufc::ClientId;
    /// let config = FederationConfig::new(2)
    ///     .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
    ///     .min_clients(2)
    ///     .topology(Topology::Groups { size: 2 })
    ///     .validate()?;
    /// let regs: Vec<Registration> = (0..5)
    ///     .map(|i| Registration { id: ClientId(i), points: 10, dim: 2, scale: 1 })
    ///     .collect();
    /// let server = RemoteServer::new(RemoteSetup::new(&config, &regs)?)?;
    /// let sizes: Vec<usize> = server.groups().iter().map(Vec::len).collect();
    /// assert_eq!(sizes, [2, 3]);
    /// assert!(!server.group_trained(0));
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn groups(&self) -> &[Vec<ClientId>] {
        match &self.tree {
            Some(t) => t.layout().groups(),
            None => std::slice::from_ref(&self.setup.roster),
        }
    }

    /// The flat aggregation's state (none with groups, or in the plain
    /// mode; tests).
    #[cfg(test)]
    pub(crate) fn aggregation(&self) -> Option<&Aggregation> {
        self.aggregation.as_ref()
    }

    /// The groups and the tree above them, as they are now (`None` when
    /// flat).
    pub fn layout(&self) -> Option<&crate::Layout> {
        self.tree.as_ref().map(Tree::layout)
    }

    /// Whether group `g` of [`Self::groups`] has committed a round (when
    /// flat, whether the model is trained).
    pub fn group_trained(&self, g: usize) -> bool {
        match &self.tree {
            Some(t) => t.group_trained(g),
            None => g == 0 && self.is_trained(),
        }
    }

    /// The clients whose data group `g`'s model holds ([`Self::groups`];
    /// when flat, `0` is the whole roster): those its last committed round
    /// included, in id order. Every member after training; fewer after a
    /// round that a member missed (it was offline, or dropped out inside
    /// the protocol), until a round includes it again. Empty before the
    /// group trained.
    pub fn included(&self, g: usize) -> Vec<ClientId> {
        match &self.tree {
            Some(t) => t.group_included(g).to_vec(),
            None if g == 0 => self
                .fit_report
                .as_ref()
                .map_or_else(Vec::new, |r| r.included.clone()),
            None => Vec::new(),
        }
    }

    /// The fewest clients of a ring of `n` in group `g` that must answer
    /// for the round to commit: SecAgg's threshold (at least the minimum
    /// aggregate); with pairwise masks, all `n`.
    ///
    /// # Errors
    ///
    /// [`MufcError::Remote`] for a group out of range; the SecAgg
    /// parameter errors for a ring of `n`.
    pub fn survivors_needed(&self, g: usize, n: usize) -> MufcResult<usize> {
        match &self.tree {
            Some(t) => t
                .group_aggregation_ref(g)
                .ok_or_else(|| MufcError::Remote(format!("no group {g}")))?
                .survivors_needed(n),
            None => self
                .aggregation
                .as_ref()
                .map_or(Ok(n), |a| a.survivors_needed(n)),
        }
    }

    /// The number of rounds started so far (failed ones included; every
    /// group's, with groups).
    pub fn rounds(&self) -> u64 {
        if let Some(w) = &self.withdrawn {
            return w.rounds;
        }
        self.tree
            .as_ref()
            .map_or_else(|| self.flat_rounds(), Tree::rounds)
    }

    /// Starts a round for `clients` (those connected; a subset of the
    /// roster): its announcement for every one of them, and the server's
    /// half. The round number is consumed here, whatever happens next.
    ///
    /// # Errors
    ///
    /// [`MufcError::UnknownClient`] for a client outside the roster,
    /// [`MufcError::TooFewClients`] below the minimum aggregate, the
    /// protocol's parameter errors, [`MufcError::Randomness`].
    pub fn start_round(&mut self, clients: &[ClientId]) -> MufcResult<(Announcement, ServerRound)> {
        self.start(clients, None)
    }

    /// Starts a round for `clients` after `updated` of them changed their
    /// points since their group's last committed round (they asked to
    /// forget some): a change round ([`Sends::Changes`](super::Sends::Changes))
    /// when one applies, else a whole round as [`Self::start_round`]. A
    /// change round carries each client's change since the round it last
    /// sent in, so its messages, masks and decoding are sized by the
    /// `2 k updated` bins the changes may touch rather than by the
    /// federation's capacity. It applies with dealt or pairwise masks
    /// (every client of the ring must answer), when `clients` are exactly
    /// those the group's last committed round included, that round was
    /// the last one started in the group (no round failed since), and the
    /// changes' bound is below the capacity.
    ///
    /// A change round whose sum does not decode (more clients changed
    /// than `updated` says) fails at [`Self::finish_round`] and changes
    /// nothing; the next round is whole.
    ///
    /// # Errors
    ///
    /// As [`Self::start_round`].
    pub fn start_change_round(
        &mut self,
        clients: &[ClientId],
        updated: usize,
    ) -> MufcResult<(Announcement, ServerRound)> {
        self.start(clients, Some(updated))
    }

    /// [`Self::start_round`], or with `updated` [`Self::start_change_round`].
    fn start(
        &mut self,
        clients: &[ClientId],
        updated: Option<usize>,
    ) -> MufcResult<(Announcement, ServerRound)> {
        let started = Instant::now();
        if self.withdrawn.is_some() {
            return Err(MufcError::Remote(
                "the model was withdrawn: no round runs (docs/threat-model.md P4)".into(),
            ));
        }
        let mut ids = clients.to_vec();
        ids.sort_unstable();
        ids.dedup();
        if let Some(c) = ids.iter().find(|c| !self.setup.roster.contains(c)) {
            return Err(MufcError::UnknownClient(*c));
        }
        if self.aggregation.is_none() {
            return self.start_plain(ids, started);
        }
        let min = self.setup.config.min_clients();
        if ids.len() < min {
            return Err(MufcError::TooFewClients {
                clients: ids.len(),
                min_clients: min,
            });
        }
        let group = match &self.tree {
            Some(tree) => Some(tree.group_of_ring(&ids)?),
            None => None,
        };
        // The changes' bound: each updated client changes at most its k
        // old bins and its k new ones.
        let bound = updated
            .filter(|_| self.included(group.unwrap_or(0)) == ids)
            .map(|u| u.saturating_mul(self.setup.config.client_k().saturating_mul(2)));
        let agg = match (&mut self.tree, group) {
            (Some(tree), Some(g)) => tree
                .group_aggregation(g)
                .ok_or(MufcError::UnknownClient(ids[0]))?,
            _ => (self.aggregation.as_mut()).ok_or(MufcError::NoServerModel)?,
        };
        let change = match bound {
            Some(b) => agg.open_change_remote(&ids, b)?,
            None => None,
        };
        let (spec, half) = match change {
            Some(opened) => opened,
            None => agg.open_remote(&ids)?,
        };
        let announcement = Announcement {
            setup: self.setup.clone(),
            spec: spec.clone(),
        };
        Ok((
            announcement,
            ServerRound {
                half: Half::Masked(half),
                spec,
                started,
                group,
            },
        ))
    }

    /// A plain round of `ids` (any of the roster: a client whose points
    /// did not change need not send, the server holds its centroids):
    /// each sends its centroids in the clear.
    fn start_plain(
        &mut self,
        ids: Vec<ClientId>,
        started: Instant,
    ) -> MufcResult<(Announcement, ServerRound)> {
        if ids.is_empty() {
            return Err(MufcError::NoClients);
        }
        // A fresh session, as a masked round draws its own.
        let secrets = RoundSecrets::new(SecretSource::Fresh, self.plain_rounds)?;
        let spec = RoundSpec {
            round: self.plain_rounds,
            session: secrets.session().0,
            ring: ids,
            protocol: RoundProtocol::Plain,
            sends: Sends::Histograms,
        };
        self.plain_rounds += 1;
        let half = PlainServer::new(spec.clone(), self.setup.dim, self.setup.config.client_k());
        let announcement = Announcement {
            setup: self.setup.clone(),
            spec: spec.clone(),
        };
        let round = ServerRound {
            half: Half::Plain(half),
            spec,
            started,
            group: None,
        };
        Ok((announcement, round))
    }

    /// The rounds started when flat.
    /// The masked rounds started, as a saved state keeps them (the plain
    /// mode's are not: it has no masks to keep fresh).
    pub(crate) fn masked_rounds(&self) -> u64 {
        match (&self.withdrawn, &self.tree, &self.aggregation) {
            (Some(w), _, _) => w.rounds,
            (None, Some(t), _) => t.rounds(),
            (None, None, Some(a)) => a.rounds(),
            (None, None, None) => 0,
        }
    }

    fn flat_rounds(&self) -> u64 {
        (self.aggregation.as_ref()).map_or(self.plain_rounds, Aggregation::rounds)
    }
}
