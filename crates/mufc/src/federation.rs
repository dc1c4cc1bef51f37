//! The federation: Algorithm 1 (training) and Algorithm 4 (unlearning)
//! over many clients in one process.

mod apply;
mod exchange;
mod minimum;
mod plan;
mod requests;
pub(crate) mod setup;
mod train;
pub(crate) mod tree;
mod unlearn;
pub(crate) mod unsent;
mod withdraw;

use std::collections::{BTreeMap, BTreeSet};

use seeding::Quantizer;

pub(crate) use exchange::{client_times, plain_of, request_times};
pub(crate) use minimum::{check_remaining, withdrawal_after};
pub(crate) use requests::{check_request, check_unsent};
pub(crate) use setup::Setup;
pub use unlearn::privacy_warning;
pub(crate) use unlearn::still_pending;
pub(crate) use unsent::Unsent;

use crate::aggregation::Aggregation;
use crate::{
    Client, ClientId, FitReport, Layout, MufcError, MufcResult, NodeId, PendingRequest,
    RemovalReport, Server, ValidConfig, Withdrawal,
};
use tree::Tree;

/// L clients and a server running federated K-means with secure
/// aggregation (Algorithm 1 of the paper) and exact unlearning
/// (Algorithm 4), in one process.
///
/// [`Federation::new`] trains: every client clusters its own data (in
/// parallel with the `parallel` feature), quantizes its centroids into a
/// sparse histogram and sends a masked sketch of it; the server sums the
/// sketches, decodes the aggregate histogram, builds its points and runs
/// its K-means. [`Federation::remove`] serves a removal request: the
/// affected clients unlearn, a fresh aggregation round runs, the server
/// decodes the change and updates its K-means. After any sequence of
/// removals the state is, bit for bit, the state of a federation built
/// from the remaining data with the same configuration, as long as no
/// client drops out (see the crate docs, "Exactness"; with
/// [`Masking::SecAgg`](crate::Masking::SecAgg) and dropouts the server
/// holds the included clients' data).
///
/// # Example
///
/// ```
/// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, PointId};
///
/// // Three clients with points in the box [-1/2, 1/2]^2.
/// let clients: Vec<Dataset> = (0..3)
///     .map(|l| Dataset::new(DMatrix::from_fn(2, 40, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
///     .collect::<Result<_, _>>()?;
/// let config = FederationConfig::new(3).client_k(2).gamma(0.05).seed(1).validate()?;
/// let mut fed = Federation::new(clients.clone(), &config)?;
/// assert_eq!(fed.server().total_count(), 120);
///
/// // Unlearn a point of client 1 and one of client 2, in one round (a
/// // round in which one client alone changes waits for another: the
/// // server would learn that client's change, docs/threat-model.md U3).
/// let request = RemovalRequest::points(ClientId(1), vec![PointId(5)])
///     .with_points(ClientId(2), vec![PointId(8)]);
/// let report = fed.remove(&request)?;
/// assert_eq!(report.removed_points, 2);
///
/// // The same as training on the remaining data (with the resolved config).
/// let mut rest = clients;
/// rest[1] = rest[1].without(&[PointId(5)])?;
/// rest[2] = rest[2].without(&[PointId(8)])?;
/// let retrained = Federation::new(rest, fed.config())?;
/// assert_eq!(fed.server().counts(), retrained.server().counts());
/// assert_eq!(fed.server().centroids(), retrained.server().centroids());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Federation {
    config: ValidConfig,
    dim: usize,
    quantizer: Option<Quantizer>,
    clients: Vec<Client>,
    aggregation: Option<Aggregation>,
    server: Server,
    fit_report: FitReport,
    history: Vec<RemovalReport>,
    /// Requests applied by rounds whose reports are not in `history` (a
    /// federation loaded from a store keeps only the last report).
    earlier_requests: u64,
    pending: Vec<PendingRequest>,
    /// What the aggregate still holds of the clients whose points the
    /// pending requests erased (their rounds wait), by client.
    unsent: BTreeMap<ClientId, Unsent>,
    messages: Option<Vec<(ClientId, Vec<u8>)>>,
    /// The groups and the nodes' models ([`Topology::Groups`](crate::Topology::Groups),
    /// [`Topology::Tree`](crate::Topology::Tree)); `server` is the root's.
    tree: Option<Tree>,
    /// Who took part in the last round applied (not saved).
    involvement: Option<crate::Involvement>,
    /// Why no model is served (then the server is empty, and there is no
    /// aggregation, tree, pending request or waiting message).
    withdrawn: Option<Withdrawal>,
}

/// What a federation keeps of its requests: how many were applied, the
/// reports kept, the pending requests, what the aggregate still holds of
/// their clients, and the withdrawal.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestBook {
    pub(crate) applied: u64,
    pub(crate) history: Vec<RemovalReport>,
    pub(crate) pending: Vec<PendingRequest>,
    pub(crate) unsent: BTreeMap<ClientId, Unsent>,
    pub(crate) withdrawn: Option<Withdrawal>,
}

impl Federation {
    /// Assembles a federation from its parts (trained, or restored by
    /// loading), flat, with no recorded messages.
    pub(crate) fn from_parts(
        setup: Setup,
        clients: Vec<Client>,
        aggregation: Option<Aggregation>,
        server: Server,
        fit_report: FitReport,
        history: Vec<RemovalReport>,
        pending: Vec<PendingRequest>,
    ) -> Self {
        Self {
            config: setup.config,
            dim: setup.dim,
            quantizer: setup.quantizer,
            clients,
            aggregation,
            server,
            fit_report,
            history,
            earlier_requests: 0,
            pending,
            unsent: BTreeMap::new(),
            messages: None,
            tree: None,
            involvement: None,
            withdrawn: None,
        }
    }

    /// What a saved federation keeps of its groups (`None` when flat).
    pub(crate) fn saved_tree(&self) -> Option<crate::persist::body::SavedTree> {
        self.tree.as_ref().map(Tree::saved)
    }

    /// Gives a federation assembled by [`Self::from_parts`] its groups
    /// (restored by [`Tree::restore`]).
    pub(crate) fn with_tree(mut self, tree: Tree) -> Self {
        self.tree = Some(tree);
        self
    }

    /// The configuration, with `gamma` and `max_points` resolved: build a
    /// federation from it on other data to retrain with the same grid and
    /// field.
    pub fn config(&self) -> &ValidConfig {
        &self.config
    }

    /// The dimension of the points.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The quantizer (none in plain mode).
    pub fn quantizer(&self) -> Option<&Quantizer> {
        self.quantizer.as_ref()
    }

    /// The clients, in id order.
    pub fn clients(&self) -> &[Client] {
        &self.clients
    }

    /// The client `id`, if present.
    pub fn client(&self, id: ClientId) -> Option<&Client> {
        self.position(id).ok().map(|p| &self.clients[p])
    }

    /// The ids of the clients, in order.
    pub fn client_ids(&self) -> Vec<ClientId> {
        self.clients.iter().map(Client::id).collect()
    }

    /// The total number of points the clients hold.
    pub fn num_points(&self) -> usize {
        self.clients.iter().map(|c| c.data().len()).sum()
    }

    /// The server.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Why the federation serves no model, if a request withdrew it
    /// ([`RemovalOutcome::Withdrawn`](crate::RemovalOutcome::Withdrawn)):
    /// the server then holds no counts and no centroids.
    ///
    /// # Example
    ///
    /// See [`Withdrawal`].
    pub fn withdrawal(&self) -> Option<&Withdrawal> {
        self.withdrawn.as_ref()
    }

    /// What training cost (times of the first round; unchanged by
    /// removals).
    pub fn fit_report(&self) -> &FitReport {
        &self.fit_report
    }

    /// The reports of every removal round applied, in order (a round may
    /// cover several requests, [`RemovalReport::requests`]; deferred
    /// requests have no entry until a round applies them).
    pub fn history(&self) -> &[RemovalReport] {
        &self.history
    }

    /// The number of requests applied, by every round since training
    /// (those of reports a store no longer keeps included).
    pub fn applied_requests(&self) -> u64 {
        let kept: u64 = self.history.iter().map(|r| r.requests.len() as u64).sum();
        self.earlier_requests.saturating_add(kept)
    }

    /// Says that `n` requests were applied by rounds whose reports are
    /// not in the history (a store keeps only the last report: its audit
    /// log is the history).
    pub(crate) fn set_earlier_requests(&mut self, n: u64) {
        self.earlier_requests = n;
    }

    /// The number of aggregation rounds started (training included, and
    /// failed rounds too; none in plain mode). A round consumes its number
    /// before any mask exists, so no round number is ever run twice by one
    /// federation; the counter is saved with it.
    pub fn rounds(&self) -> u64 {
        if let Some(w) = &self.withdrawn {
            return w.rounds;
        }
        if let Some(t) = &self.tree {
            return t.rounds();
        }
        self.aggregation.as_ref().map_or(0, Aggregation::rounds)
    }

    /// Who took part in the last removal round this federation applied:
    /// the clients that sent a message, the groups that ran a round, the
    /// models updated and the bytes sent. `None` before the first round
    /// (and after loading: it is not saved).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..4)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let mut fed = Federation::new(clients, &FederationConfig::new(2).gamma(0.1).validate()?)?;
    /// assert!(fed.last_involvement().is_none());
    /// fed.remove(&RemovalRequest::points(ClientId(0), vec![PointId(1)]).with_points(ClientId(1), vec![PointId(1)]))?;
    /// // Flat: every client sends again, one model (the server's) updates.
    /// let who = fed.last_involvement().unwrap();
    /// assert_eq!((who.clients, who.nodes), (4, 1));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn last_involvement(&self) -> Option<&crate::Involvement> {
        self.involvement.as_ref()
    }

    /// The groups and the tree above them (`None` for a flat federation,
    /// [`Topology::Flat`](crate::Topology::Flat)).
    pub fn layout(&self) -> Option<&Layout> {
        self.tree.as_ref().map(Tree::layout)
    }

    /// The model of `node` of the layout: a group's (of its clients'
    /// data), an inner node's (of its subtree's), or the root's, which is
    /// [`Self::server`]. A flat federation has one node, the root,
    /// `NodeId(0)`. `None` for a node out of range.
    pub fn node(&self, node: NodeId) -> Option<&Server> {
        match &self.tree {
            Some(t) if node == t.layout().root() => Some(&self.server),
            Some(t) => t.node(node),
            None => (node == NodeId(0)).then_some(&self.server),
        }
    }

    /// The number and the masked vectors of the last aggregation round
    /// started, failed or not (recorded with
    /// [`FederationConfig::record_messages`](crate::FederationConfig::record_messages)).
    #[cfg(test)]
    pub(crate) fn last_masked_inputs(&self) -> Option<&(u64, crate::aggregation::MaskedInputs)> {
        self.aggregation.as_ref().and_then(Aggregation::last_masked)
    }

    /// Drops every client's kept sketch: the next round encodes every bin
    /// afresh, as before the clients kept them (tests).
    #[cfg(test)]
    pub(crate) fn forget_encoded(&mut self) {
        self.clients.iter_mut().for_each(Client::forget_encoded);
    }

    /// The sketch parameters of the clients' messages (none in plain
    /// mode).
    #[cfg(test)]
    pub(crate) fn sketch_params(&self) -> Option<&syndrome_agg::ValidAnyParams> {
        self.aggregation.as_ref().map(Aggregation::params)
    }

    /// Makes the next aggregation round fail right after its masked
    /// vectors exist (fault injection for tests).
    #[cfg(test)]
    pub(crate) fn fail_next_round_after_masking(&mut self) {
        if let Some(agg) = &mut self.aggregation {
            agg.fail_next_round_after_masking();
        }
    }

    /// The clients whose data the server's aggregate holds: those the last
    /// aggregation round included (every client, unless some dropped out
    /// of a [`Masking::SecAgg`](crate::Masking::SecAgg) round).
    ///
    /// # Example
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use mufc::{Channel, ClientId, Federation, FederationConfig, Masks, RemovalRequest, SecAggOptions};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..8)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// // The dropout-tolerant protocol; each client drops out of a round
    /// // with probability 0.2.
    /// let config = FederationConfig::new(2).gamma(0.1).channel(Channel::scma(Masks::SecAgg(SecAggOptions::new().dropout(0.2)))).seed(3).validate()?;
    /// let mut fed = Federation::new(clients, &config)?;
    /// fed.remove(&RemovalRequest::points(ClientId(0), vec![PointId(1)]).with_points(ClientId(1), vec![PointId(2)]))?;
    /// // The server holds exactly the plain sum of the included clients.
    /// let mut sum = BTreeMap::new();
    /// for c in fed.clients().iter().filter(|c| fed.last_included().contains(&c.id())) {
    ///     for (bin, n) in c.histogram() {
    ///         *sum.entry(bin.clone()).or_insert(0) += n;
    ///     }
    /// }
    /// assert_eq!(fed.server().counts(), &sum);
    /// assert_eq!(fed.last_included(), fed.history()[0].included.as_slice());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn last_included(&self) -> &[ClientId] {
        self.history
            .last()
            .map_or(&self.fit_report.included, |r| &r.included)
    }

    /// The wire frames of the last round, by client, when the
    /// configuration records them
    /// ([`FederationConfig::record_messages`](crate::FederationConfig::record_messages)):
    /// what the server received, masked. With dealt masks the dealer's
    /// correction is among them, as the frame of the pseudo-client
    /// `u64::MAX` (one per group's round with groups): the server's view
    /// of a round includes it.
    pub fn last_messages(&self) -> Option<&[(ClientId, Vec<u8>)]> {
        self.messages.as_deref()
    }

    fn position(&self, id: ClientId) -> MufcResult<usize> {
        self.clients
            .binary_search_by_key(&id, Client::id)
            .map_err(|_| MufcError::UnknownClient(id))
    }

    /// The removal requests accepted but not applied yet, in order (see
    /// [`Self::remove`]); saved with the federation.
    pub fn pending(&self) -> &[PendingRequest] {
        &self.pending
    }

    /// What the aggregate still holds of the clients whose rounds wait.
    pub(crate) fn unsent(&self) -> &BTreeMap<ClientId, Unsent> {
        &self.unsent
    }

    /// Gives a federation assembled by [`Self::from_parts`] the clients
    /// whose rounds wait (loading).
    pub(crate) fn with_unsent(mut self, unsent: BTreeMap<ClientId, Unsent>) -> Self {
        self.unsent = unsent;
        self
    }

    /// The clients the pending requests name, in id order.
    pub fn pending_clients(&self) -> Vec<ClientId> {
        let set: BTreeSet<ClientId> = self
            .pending
            .iter()
            .flat_map(|p| {
                p.request
                    .clients_removed()
                    .iter()
                    .copied()
                    .chain(p.request.point_entries().iter().map(|(c, _)| *c))
            })
            .collect();
        set.into_iter().collect()
    }
}
