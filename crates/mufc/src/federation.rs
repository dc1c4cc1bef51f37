//! The federation: Algorithm 1 (training) and Algorithm 4 (unlearning)
//! over many clients in one process, by driving their parties
//! (`remote::InProcess`).

mod add;
mod saved;
mod train;
mod unlearn;

use std::collections::BTreeSet;

use seeding::Quantizer;

use crate::aggregation::masked_message;
use crate::remote::InProcess;
use crate::{
    Client, ClientId, FitReport, Involvement, Layout, NodeId, PendingAddition, PendingRequest,
    RemovalReport, Server, ValidConfig, Withdrawal,
};

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
    /// The parties, driven in this process: the one implementation of
    /// Algorithms 1 and 4 (`remote`).
    parties: InProcess,
    /// What training cost (kept: the parties' driver computes it from
    /// the training rounds, which a restored federation no longer has).
    fit_report: FitReport,
    /// Who took part in the last round applied (not saved).
    involvement: Option<Involvement>,
    /// What the server received in the last round or rounds run, when
    /// recorded (not saved).
    messages: Option<Vec<(ClientId, Vec<u8>)>>,
    /// The groups without the clients whose leave a round applied (the
    /// server party keeps them in its rings: issue 29); `None` when flat
    /// or withdrawn.
    layout: Option<Layout>,
}

/// The masked messages the server received in `rounds`, by sender, when
/// `config` records them and a round ran.
fn masked_messages(
    rounds: &[crate::remote::DrivenRound],
    config: &ValidConfig,
) -> Option<Vec<(ClientId, Vec<u8>)>> {
    if rounds.is_empty() || !config.run().records_messages() {
        return None;
    }
    let received = rounds.iter().flat_map(|r| r.received.iter());
    Some(
        received
            .filter_map(|(c, b)| Some((*c, masked_message(*c, b)?)))
            .collect(),
    )
}

impl Federation {
    /// The federation driving `parties`, whose training cost
    /// `fit_report`.
    pub(crate) fn driving(parties: InProcess, fit_report: FitReport) -> Self {
        let mut fed = Self {
            parties,
            fit_report,
            involvement: None,
            messages: None,
            layout: None,
        };
        fed.messages = masked_messages(fed.parties.training(), fed.config());
        fed.refresh_layout();
        fed
    }

    /// The groups as the federation states them: the server's, less the
    /// clients that left.
    fn refresh_layout(&mut self) {
        let gone: Vec<ClientId> = self.parties.gone().into_iter().collect();
        self.layout = match self.withdrawal() {
            Some(_) => None,
            None => (self.parties.server().layout()).map(|l| l.without(&gone)),
        };
    }

    /// The parties this federation drives.
    pub(crate) fn parties(&self) -> &InProcess {
        &self.parties
    }

    /// The sketch parameters of the clients' messages (none in plain
    /// mode; tests).
    #[cfg(test)]
    pub(crate) fn sketch_params(&self) -> Option<&syndrome_agg::ValidAnyParams> {
        self.parties.server().aggregation().map(|a| a.params())
    }

    /// Drops every client's kept sketch: the next round encodes every bin
    /// afresh, as before the clients kept them (tests).
    #[cfg(test)]
    pub(crate) fn forget_encoded(&mut self) {
        self.parties.forget_encoded();
    }

    /// The parties, to inject faults (tests).
    #[cfg(test)]
    pub(crate) fn parties_mut(&mut self) -> &mut InProcess {
        &mut self.parties
    }

    /// After a request or flush: its rounds' messages and who took part
    /// (kept from the last request that ran a round).
    fn after_request(&mut self) {
        if let Some(m) = masked_messages(self.parties.last_rounds(), self.config()) {
            self.messages = Some(m);
        }
        if let Some(who) = self.parties.last_involvement() {
            self.involvement = Some(who);
        }
        self.refresh_layout();
        // Clients that joined made the sketch larger (issue 29): the
        // report names the one the federation sums with.
        if let Some(sketch) = self.parties.server().fit_report().map(|r| &r.sketch) {
            self.fit_report.sketch.clone_from(sketch);
        }
    }

    /// The configuration, with `gamma` and `max_points` resolved: build a
    /// federation from it on other data to retrain with the same grid and
    /// field.
    pub fn config(&self) -> &ValidConfig {
        self.parties.server().setup().config()
    }

    /// The dimension of the points.
    pub fn dim(&self) -> usize {
        self.parties.server().setup().dim()
    }

    /// The quantizer (none in plain mode).
    pub fn quantizer(&self) -> Option<&Quantizer> {
        self.parties.server().server().quantizer()
    }

    /// The clients that hold points, in id order (a client removed whole,
    /// or all of whose points were removed, has left).
    pub fn clients(&self) -> Vec<&Client> {
        (self.parties.clients().iter())
            .filter_map(crate::remote::RemoteClient::clustering)
            .collect()
    }

    /// The client `id`, if present.
    pub fn client(&self, id: ClientId) -> Option<&Client> {
        let clients = self.parties.clients();
        let at = clients.binary_search_by_key(&id, |c| c.id()).ok()?;
        clients.get(at)?.clustering()
    }

    /// The ids of the clients, in order.
    pub fn client_ids(&self) -> Vec<ClientId> {
        self.clients().iter().map(|c| c.id()).collect()
    }

    /// The total number of points the clients hold.
    pub fn num_points(&self) -> usize {
        self.parties.clients().iter().map(|c| c.data().len()).sum()
    }

    /// The server.
    pub fn server(&self) -> &Server {
        self.parties.server().server()
    }

    /// Why the federation serves no model, if a request withdrew it
    /// ([`RemovalOutcome::Withdrawn`](crate::RemovalOutcome::Withdrawn)):
    /// the server then holds no counts and no centroids.
    ///
    /// # Example
    ///
    /// See [`Withdrawal`].
    pub fn withdrawal(&self) -> Option<&Withdrawal> {
        self.parties.withdrawal()
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
        self.parties.history()
    }

    /// The number of requests applied, by every round since training
    /// (those of reports a store no longer keeps included).
    pub fn applied_requests(&self) -> u64 {
        let pending = self.pending().len() as u64;
        self.parties.requests().saturating_sub(pending)
    }

    /// The number of aggregation rounds started (training included, and
    /// failed rounds too; none in plain mode). A round consumes its number
    /// before any mask exists, so no round number is ever run twice by one
    /// federation; the counter is saved with it.
    pub fn rounds(&self) -> u64 {
        self.parties.server().masked_rounds()
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
    pub fn last_involvement(&self) -> Option<&Involvement> {
        self.involvement.as_ref()
    }

    /// The groups and the tree above them (`None` for a flat federation,
    /// [`Topology::Flat`](crate::Topology::Flat)).
    pub fn layout(&self) -> Option<&Layout> {
        self.layout.as_ref()
    }

    /// The model of `node` of the layout: a group's (of its clients'
    /// data), an inner node's (of its subtree's), or the root's, which is
    /// [`Self::server`]. A flat federation has one node, the root,
    /// `NodeId(0)`. `None` for a node out of range.
    pub fn node(&self, node: NodeId) -> Option<&Server> {
        self.parties.server().node(node)
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
        self.history()
            .last()
            .map_or(&self.fit_report.included, |r| &r.included)
    }

    /// The masked messages of the last round or rounds run, by sender,
    /// when the configuration records them
    /// ([`RunOptions::record_messages`](crate::RunOptions::record_messages)):
    /// each client's wire frame with pairwise or dealt masks, its
    /// masked-input message with SecAgg. With dealt masks the dealer's
    /// correction is among them, as the frame of the pseudo-client
    /// `u64::MAX` (one per group's round with groups): the server's view
    /// of a round includes it. Every message the server received, the
    /// protocol's other steps included, is in each round's
    /// [`DrivenRound::received`](crate::remote::DrivenRound::received).
    pub fn last_messages(&self) -> Option<&[(ClientId, Vec<u8>)]> {
        self.messages.as_deref()
    }

    /// The removal requests accepted but not applied yet, in order (see
    /// [`Self::remove`]); saved with the federation.
    pub fn pending(&self) -> &[PendingRequest] {
        self.parties.pending()
    }

    /// The clients the pending removals and additions name, in id order.
    pub fn pending_clients(&self) -> Vec<ClientId> {
        let removals = self.pending().iter().flat_map(|p| p.request.named());
        let additions = (self.pending_additions().iter()).flat_map(PendingAddition::named);
        let set: BTreeSet<ClientId> = removals.chain(additions).collect();
        set.into_iter().collect()
    }
}
