//! A client's half: its own points and seeding, which never leave it, and
//! the rounds it joins.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use seeding::{Dataset, PointId, Quantizer};
use syndrome_agg::masking::dealer::SealKey;
use syndrome_agg::masking::pairwise::{MaskKeyPair, MaskPublicKey};

use num_bigint::BigUint;

use super::plain::PlainClient;
use super::{Agreement, Announcement, Registration, RemoteSetup};
use crate::aggregation::{Aggregation, ClientHalf, RoundProtocol, RoundSpec, Sends, Sent};
use crate::client::message::Encoded;
use crate::ids::{first_missing, in_order};
use crate::state::setup::check_data;
use crate::{Channel, Client, ClientId, MufcError, MufcResult};

/// A client of a federation run across processes: its points, its local
/// clustering once the first round set the federation up, and the
/// sessions it joined (it joins none twice). See the [module
/// docs](super) for a round.
#[derive(Clone, Debug)]
pub struct RemoteClient {
    id: ClientId,
    state: State,
    sessions: BTreeSet<[u8; 32]>,
    /// What the client agreed on out of band: it joins no round whose
    /// setup lies outside it.
    agreement: Option<Agreement>,
    /// The clients of the last sum the client took part in (the server
    /// may hold it): every later ring must name each of them (issue 28,
    /// item 5).
    last_sum: Vec<ClientId>,
    /// The key the client agreed with the federation's dealer, with dealt
    /// masks ([`Self::pair_with_dealer`]).
    dealer: Option<SealKey>,
    /// What the client sent in the last committed round that included it
    /// ([`Self::commit`]): the base of a change round.
    sent: Option<SentRound>,
    /// Whether the client's operator allowed the plain mode
    /// ([`Self::allowing_plain`]).
    plain: bool,
    /// Whether the client's operator allowed masks derived from the
    /// federation seed ([`Self::allowing_deterministic_masks`]).
    deterministic: bool,
}

/// What a client sent in the last committed round that included it: the
/// round's number and the histogram its message encoded, the base a
/// change round's change is taken against
/// ([`Sends::Changes`](super::Sends::Changes)). Opaque: a client's store
/// keeps it ([`RemoteClient::sent`]) and gives it back on restore
/// ([`RemoteClient::with_sent`]), so that a restarted client joins change
/// rounds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SentRound {
    round: u64,
    histogram: Vec<(BigUint, u64)>,
}

impl SentRound {
    /// What a client sent in `round`: `histogram`.
    pub(crate) fn new(round: u64, histogram: Vec<(BigUint, u64)>) -> Self {
        Self { round, histogram }
    }

    /// The committed round.
    pub fn round(&self) -> u64 {
        self.round
    }

    /// The histogram the message encoded.
    pub(crate) fn histogram(&self) -> &[(BigUint, u64)] {
        &self.histogram
    }
}

#[derive(Clone, Debug)]
enum State {
    /// Registered, not yet trained.
    Waiting(Dataset),
    /// Trained in the federation of `setup`.
    Trained(Box<Trained>),
}

#[derive(Clone, Debug)]
struct Trained {
    setup: RemoteSetup,
    quantizer: Option<Quantizer>,
    /// The masked sums' state; `None` in the plain mode.
    aggregation: Option<Aggregation>,
    local: Local,
}

/// A client's points and clustering after forgetting some, staged
/// ([`RemoteClient::forgetting`]).
#[derive(Debug)]
pub(crate) enum Forgetting {
    Waiting(Dataset),
    Trained(Local),
}

impl Forgetting {
    /// The points left.
    pub(crate) fn data(&self) -> &Dataset {
        match self {
            Self::Waiting(d) | Self::Trained(Local::Empty(d)) => d,
            Self::Trained(Local::Active(c)) => c.data(),
        }
    }
}

#[derive(Clone, Debug)]
pub(crate) enum Local {
    /// The client's clustering (it holds the points).
    Active(Box<Client>),
    /// Every point forgotten: the client sends an empty histogram.
    Empty(Dataset),
}

/// A client's half of one round in progress.
pub struct ClientRound {
    half: Box<dyn ClientHalf>,
    round: u64,
    /// The sketch the round carries (none in a change round, which sends
    /// a change): the client keeps it once the round commits.
    sketch: Option<syndrome_agg::AnySketch>,
    /// The client's histogram at the join (a removal may come before the
    /// commit): what the sketch encodes, and the base of the next change
    /// round once this one commits.
    histogram: Vec<(BigUint, u64)>,
    /// The client's training in this round (its first; zero after).
    training: Duration,
}

impl std::fmt::Debug for ClientRound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRound")
            .field("round", &self.round)
            .field("done", &self.half.is_done())
            .finish_non_exhaustive()
    }
}

impl ClientRound {
    /// The client's training in this round, part of its join (its first
    /// round; zero after), for the in-process driver's reports.
    pub(crate) fn training(&self) -> Duration {
        self.training
    }

    /// The round number.
    pub fn round(&self) -> u64 {
        self.round
    }

    /// The client's answer to the server's next message of the round.
    ///
    /// # Errors
    ///
    /// The protocol's refusals: a message of another round, step or
    /// client is refused and the round goes on; a key directory, masking
    /// or unmasking request that breaks the protocol's checks (a lying
    /// server) aborts the client for this round.
    pub fn handle(&mut self, bytes: &[u8]) -> MufcResult<Vec<u8>> {
        self.half.handle(bytes)
    }

    /// Whether the client answered the unmasking request (its part of the
    /// round is over).
    pub fn is_done(&self) -> bool {
        self.half.is_done()
    }

    /// Checks the server's answer to the round's first step, the key
    /// directory, against the first messages of the ring's clients as
    /// each signed it (`firsts`, by client; the caller checked every
    /// signature against its client's certificate): every client the
    /// directory names must be given the keys its own first message
    /// carries, for this session and round (issue 28, item 8: a server
    /// that substitutes keys could otherwise play every peer of the
    /// client inside SecAgg). Call it before [`Self::handle`] on that
    /// message.
    ///
    /// # Errors
    ///
    /// [`MufcError::RoundRefused`] naming the first client whose key the
    /// directory changed (or named without a signed message); a protocol
    /// error for bytes that are no directory.
    pub fn check_directory(
        &self,
        bytes: &[u8],
        firsts: &std::collections::BTreeMap<ClientId, Vec<u8>>,
    ) -> MufcResult<()> {
        self.half.check_directory(bytes, firsts)
    }

    /// The clients whose inputs the server can sum with this client's
    /// part, once the client knows them (with SecAgg, the round's alive
    /// set, which the client attested; with pairwise masks, the ring once
    /// the client's masked input left), in id order; `None` before. See
    /// [`RemoteClient::took_part`].
    pub fn summed(&self) -> Option<Vec<ClientId>> {
        self.half.summed()
    }

    /// The steps of the round's protocol, in the order the client answers
    /// them: SecAgg's five ([`SecAggStep::ALL`](crate::SecAggStep::ALL)),
    /// or pairwise masks' two (keys, masked input).
    pub fn steps(&self) -> &'static [crate::SecAggStep] {
        self.half.steps()
    }
}

impl RemoteClient {
    /// Client `id` holding `data` (coordinates in `[-1/2, 1/2]`, as for
    /// [`Federation`](crate::Federation)).
    ///
    /// # Errors
    ///
    /// [`MufcError::EmptyClient`] for no points.
    pub fn new(id: ClientId, data: Dataset) -> MufcResult<Self> {
        if data.is_empty() {
            return Err(MufcError::EmptyClient(id));
        }
        Ok(Self::in_state(id, State::Waiting(data), BTreeSet::new()))
    }

    /// A client restored from what its store kept: its points (after
    /// every removal), the setup it trained in (none before its first
    /// round) and the sessions it joined. Its clustering is rebuilt from
    /// its points, as [`Federation::load`](crate::Federation::load) does,
    /// and checked against the `seeds` it had.
    ///
    /// # Errors
    ///
    /// As training; [`MufcError::Remote`] if the rebuilt seeds differ.
    pub fn restore(
        id: ClientId,
        data: Dataset,
        setup: Option<RemoteSetup>,
        seeds: &[PointId],
        sessions: BTreeSet<[u8; 32]>,
    ) -> MufcResult<Self> {
        let state = match setup {
            None => State::Waiting(data),
            Some(setup) => {
                let trained = train(id, data, setup, None)?;
                if trained.seeds() != seeds {
                    return Err(MufcError::Remote(format!(
                        "client {id}'s stored state does not rebuild: its seeds differ"
                    )));
                }
                State::Trained(Box::new(trained))
            }
        };
        Ok(Self::in_state(id, state, sessions))
    }

    /// The client `client` of a federation loaded in one process, trained
    /// in the federation of `setup` (its clustering is taken as loaded,
    /// not fitted again); `None` for a client that left (an empty one).
    pub(crate) fn from_loaded(
        id: ClientId,
        client: Option<Client>,
        setup: RemoteSetup,
    ) -> MufcResult<Self> {
        let parts = setup.parts()?;
        let aggregation = setup.aggregation(&parts)?;
        let local = match client {
            Some(c) => Local::Active(Box::new(c)),
            None => Local::Empty(Dataset::empty(setup.dim)?),
        };
        let trained = Trained {
            setup,
            quantizer: parts.quantizer,
            aggregation,
            local,
        };
        let state = State::Trained(Box::new(trained));
        Ok(Self::in_state(id, state, BTreeSet::new()))
    }

    /// Client `id` in `state`, having joined `sessions`: no agreement, no
    /// round summed or sent, no dealer key, the plain mode refused.
    fn in_state(id: ClientId, state: State, sessions: BTreeSet<[u8; 32]>) -> Self {
        Self {
            id,
            state,
            sessions,
            agreement: None,
            last_sum: Vec::new(),
            dealer: None,
            sent: None,
            plain: false,
            deterministic: false,
        }
    }

    /// The histogram the client's next message encodes (empty before
    /// training, and once it forgot every point).
    pub(crate) fn histogram(&self) -> &[(BigUint, u64)] {
        match &self.state {
            State::Trained(t) => match &t.local {
                Local::Active(c) => c.histogram(),
                Local::Empty(_) => &[],
            },
            State::Waiting(_) => &[],
        }
    }

    /// Allows the plain mode ([`Channel::Plain`], Algorithm 5): the client
    /// then joins a plain round, sending its exact centroids and cluster
    /// sizes in the clear. Without it the client refuses any round of the
    /// plain mode, so that a server cannot make it send them by announcing
    /// it. For a federation whose operators chose the plain mode (as the
    /// in-process driver does when its configuration says so).
    #[must_use]
    pub fn allowing_plain(mut self) -> Self {
        self.plain = true;
        self
    }

    /// Allows masks derived from the federation seed and the round
    /// ([`FederationConfig::insecure_deterministic_masks`](crate::FederationConfig::insecure_deterministic_masks)):
    /// anyone who knows the seed can then unmask the client's messages.
    /// Without it the client refuses a setup that asks for them, so that
    /// a server cannot make its masks predictable by announcing one. For
    /// tests and reproductions whose operator chose the mode (as the
    /// in-process driver does when its configuration says so).
    #[must_use]
    pub fn allowing_deterministic_masks(mut self) -> Self {
        self.deterministic = true;
        self
    }

    /// Holds the client to `agreement`: from now on it refuses to join a
    /// round whose setup lies outside it (a finer grid step, more points,
    /// another number of clients or dimension), before it trains or sends
    /// anything (issue 28, item 6). A store keeps no agreement: the
    /// client's operator gives it at every start.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{Agreement, RemoteClient};
    /// use mufc::ClientId;
    ///
    /// let points = nalgebra::DMatrix::from_column_slice(2, 2, &[0.1, 0.2, -0.3, 0.4]);
    /// let data = seeding::Dataset::new(points)?;
    /// let mut client = RemoteClient::new(ClientId(0), data)?;
    /// client.agree(Agreement::new(3).dim(2));
    /// assert_eq!(client.agreement().map(|a| a.clients), Some(3));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn agree(&mut self, agreement: Agreement) {
        self.agreement = Some(agreement);
    }

    /// The clients of the last sum the client took part in, in id order
    /// (empty before its first): see [`Self::took_part`].
    pub fn last_sum(&self) -> &[ClientId] {
        &self.last_sum
    }

    /// Notes that the client took part in `round`'s sum, once it knows
    /// whose inputs that sum holds ([`ClientRound::summed`]; nothing
    /// before). From then on the client joins only rings that name every
    /// client of that sum still in its roster and group (issue 28, item
    /// 5): a server holding S(all) and S(all but v) would hold v's
    /// histogram. A client the protocol dropped inside a ring that named
    /// it is not in the sum, and may be left out of the next ring. Returns
    /// whether the set changed (the caller saves it).
    pub fn took_part(&mut self, round: &ClientRound) -> bool {
        match round.summed() {
            Some(s) if s != self.last_sum => {
                self.last_sum = s;
                true
            }
            _ => false,
        }
    }

    /// The client restored with `last_sum` ([`Self::last_sum`] as it was
    /// saved).
    #[must_use]
    pub fn with_last_sum(mut self, mut last_sum: Vec<ClientId>) -> Self {
        last_sum.sort_unstable();
        last_sum.dedup();
        self.last_sum = last_sum;
        self
    }

    /// What the client sent in the last committed round that included it
    /// (none before its first, or after a restore without it): for its
    /// store to keep.
    pub fn sent(&self) -> Option<&SentRound> {
        self.sent.as_ref()
    }

    /// The client restored with `sent` ([`Self::sent`] as it was saved).
    /// A base that is not the server's makes the client refuse the next
    /// change round, and the server runs a whole one: a wrong base costs
    /// a round, never a wrong model.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::RemoteClient;
    /// use mufc::ClientId;
    ///
    /// let data = seeding::Dataset::new(nalgebra::DMatrix::from_column_slice(2, 2, &[0.1, 0.2, -0.3, 0.4]))?;
    /// let client = RemoteClient::new(ClientId(0), data)?;
    /// let kept = client.sent().cloned(); // none: no round committed yet
    /// let restored = client.clone().with_sent(kept);
    /// assert_eq!(restored.sent(), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_sent(mut self, sent: Option<SentRound>) -> Self {
        self.sent = sent;
        self
    }

    /// Pairs the client with the federation's dealer, for dealt masks
    /// ([`Masks::Dealer`](crate::Masks::Dealer)): the key the two share
    /// is agreed once from the client's long-term key pair `own` and the
    /// dealer's public key `dealer`, which the client pinned out of band
    /// (X25519 and HKDF-SHA256, `SealKey::agree`); the dealer agrees the
    /// same key from the client's public key ([`RemoteDealer`](super::RemoteDealer)).
    /// Without it the client refuses dealt rounds. Like an agreement, the
    /// pairing is not kept by a store: the client's operator gives it at
    /// every start.
    ///
    /// # Errors
    ///
    /// [`MufcError::Sketch`] for a low-order dealer key (one whose
    /// agreement contributes nothing secret).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::RemoteClient;
    /// use mufc::ClientId;
    /// use syndrome_agg::masking::pairwise::MaskKeyPair;
    ///
    /// let data = seeding::Dataset::new(nalgebra::DMatrix::from_column_slice(2, 2, &[0.1, 0.2, -0.3, 0.4]))?;
    /// let mut client = RemoteClient::new(ClientId(0), data)?;
    /// let own = MaskKeyPair::generate(&mut rand::rng());
    /// let dealer = MaskKeyPair::generate(&mut rand::rng());
    /// client.pair_with_dealer(&own, &dealer.public_key())?;
    /// assert!(client.is_paired_with_dealer());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pair_with_dealer(
        &mut self,
        own: &MaskKeyPair,
        dealer: &MaskPublicKey,
    ) -> MufcResult<()> {
        self.pair_with_dealer_key(SealKey::agree(own, self.id.0, dealer)?);
        Ok(())
    }

    /// Pairs the client with a dealer under `key`, a key the two share
    /// already (the in-process driver's: it plays both operators).
    pub(crate) fn pair_with_dealer_key(&mut self, key: SealKey) {
        self.dealer = Some(key);
    }

    /// Whether the client holds a key shared with a dealer
    /// ([`Self::pair_with_dealer`]).
    pub fn is_paired_with_dealer(&self) -> bool {
        self.dealer.is_some()
    }

    /// The agreement the client holds to, if any.
    pub fn agreement(&self) -> Option<&Agreement> {
        self.agreement.as_ref()
    }

    /// The client's id.
    pub fn id(&self) -> ClientId {
        self.id
    }

    /// The points the client holds (forgotten ones are gone).
    pub fn data(&self) -> &Dataset {
        match &self.state {
            State::Waiting(d) => d,
            State::Trained(t) => t.data(),
        }
    }

    /// What the client registers with (its survey scale is computed
    /// here: a few K-means runs on at most 1000 of its points).
    pub fn registration(&self) -> Registration {
        self.registration_with(true)
    }

    /// [`Self::registration`], with the survey of the client's data (a
    /// short K-means) only when `survey` says the rule needs it: the
    /// scale is `1`, which tells nothing, otherwise.
    pub(crate) fn registration_with(&self, survey: bool) -> Registration {
        let d = self.data();
        Registration {
            id: self.id,
            points: d.len() as u64,
            dim: d.dim(),
            scale: if survey { crate::survey_scale(d) } else { 1 },
        }
    }

    /// The setup of the federation, once the first round trained the
    /// client.
    pub fn setup(&self) -> Option<&RemoteSetup> {
        match &self.state {
            State::Waiting(_) => None,
            State::Trained(t) => Some(&t.setup),
        }
    }

    /// The client's local clustering, once trained and while it holds
    /// points.
    pub(crate) fn clustering(&self) -> Option<&Client> {
        match &self.state {
            State::Trained(t) => match &t.local {
                Local::Active(c) => Some(c),
                Local::Empty(_) => None,
            },
            State::Waiting(_) => None,
        }
    }

    /// Drops the client's kept sketch: its next message encodes every bin
    /// afresh (tests).
    #[cfg(test)]
    pub(crate) fn forget_encoded(&mut self) {
        if let State::Trained(t) = &mut self.state
            && let Local::Active(c) = &mut t.local
        {
            c.forget_encoded();
        }
    }

    /// The ids of the client's seeds (empty before training).
    pub fn seeds(&self) -> &[PointId] {
        match &self.state {
            State::Waiting(_) => &[],
            State::Trained(t) => t.seeds(),
        }
    }

    /// The sessions the client joined.
    pub fn sessions(&self) -> &BTreeSet<[u8; 32]> {
        &self.sessions
    }

    /// Joins the round `announcement` describes: checks it (the client is
    /// in the ring once; the ring names only clients of the roster, and
    /// with groups only clients of the client's own group; the
    /// protocol parameters are those the setup's configuration gives; the
    /// setup is the one it trained in; the session is new to it), trains
    /// on the first round, encodes its histogram and starts its part of
    /// the protocol. Returns its half of the round and its first message.
    ///
    /// # Errors
    ///
    /// [`MufcError::RoundRefused`] for a round the client must not join;
    /// the training errors on the first round
    /// ([`MufcError::OutsideBox`], [`MufcError::DimensionMismatch`], ...).
    pub fn join(&mut self, announcement: &Announcement) -> MufcResult<(ClientRound, Vec<u8>)> {
        let spec = &announcement.spec;
        let refuse = |reason: &str| MufcError::RoundRefused {
            round: spec.round,
            reason: reason.into(),
        };
        if self.sessions.contains(&spec.session) {
            return Err(refuse("the client already joined this session (a replay)"));
        }
        // Nor may a server make the client send its centroids in the
        // clear: only the client's operator chooses the plain mode.
        let plain = spec.protocol == RoundProtocol::Plain
            || announcement.setup.config.channel() == &Channel::Plain;
        if plain && !self.plain {
            return Err(refuse(
                "the plain mode would send the client's centroids in the clear, and its \
                 operator did not allow it",
            ));
        }
        if announcement.setup.config.insecure_deterministic_masks() && !self.deterministic {
            return Err(refuse(
                "the setup derives every mask from the federation seed, which would let anyone \
                 who knows it unmask the client's messages, and its operator did not allow it",
            ));
        }
        // Before anything else: the grid step decides how finely the
        // server sees the client's centroids, which are records.
        if let Some(a) = &self.agreement {
            a.check_setup(&announcement.setup)
                .map_err(|why| refuse(&format!("outside the agreement: {why}")))?;
        }
        self.check_ring(announcement)?;
        let training = self.train_on_first(announcement)?;
        let State::Trained(t) = &mut self.state else {
            return Err(refuse("the client is not trained"));
        };
        let Trained {
            setup,
            aggregation,
            local,
            ..
        } = &mut **t;
        if *setup != announcement.setup {
            return Err(refuse(
                "the federation's setup is not the one the client trained in",
            ));
        }
        let Some(aggregation) = aggregation else {
            let (mut round, first) = join_plain(spec, self.id, local)?;
            round.training = training;
            self.sessions.insert(spec.session);
            return Ok((round, first));
        };
        let (histogram, last) = match local {
            Local::Active(c) => (c.histogram(), c.encoded()),
            Local::Empty(_) => (&[][..], None),
        };
        let sent = self.sent.as_ref().map(|s| Sent {
            round: s.round,
            histogram: &s.histogram,
        });
        let (half, first, sketch) =
            aggregation.join_remote(spec, self.id, histogram, last, sent, self.dealer.clone())?;
        let histogram = histogram.to_vec();
        self.sessions.insert(spec.session);
        Ok((
            ClientRound {
                half,
                round: spec.round,
                sketch,
                histogram,
                training,
            },
            first,
        ))
    }

    /// Trains the client on the first round it joins (Algorithm 1, line
    /// 2), in the federation the announcement sets up; the time it took
    /// (zero once trained).
    fn train_on_first(&mut self, announcement: &Announcement) -> MufcResult<Duration> {
        let State::Waiting(data) = &self.state else {
            return Ok(Duration::ZERO);
        };
        let start = Instant::now();
        let trained = train(
            self.id,
            data.clone(),
            announcement.setup.clone(),
            Some(&announcement.spec),
        )?;
        self.state = State::Trained(Box::new(trained));
        Ok(start.elapsed())
    }

    /// The membership checks of a round: the client is in the roster;
    /// the ring names only clients of the roster, and with groups only
    /// clients of the client's own group; it leaves out no client of the
    /// last sum this client took part in (issue 28, item 5).
    fn check_ring(&self, announcement: &Announcement) -> MufcResult<()> {
        let spec = &announcement.spec;
        let refuse = |reason: &str| MufcError::RoundRefused {
            round: spec.round,
            reason: reason.into(),
        };
        if !announcement.setup.roster.contains(&self.id) {
            return Err(refuse("the client is not in the federation's roster"));
        }
        // A ring beyond the roster would let a server add parties of its
        // own, enough of them to hold a threshold of every client's shares;
        // a ring across groups, or inside another, overlapping sums.
        (announcement.setup).check_members(spec, self.id)?;
        let layout = announcement.setup.layout();
        // A ring that leaves out a client of the last sum this client
        // took part in would let the server difference the two sums.
        let mine = layout.and_then(|l| l.group_of(self.id));
        // Searched in order, not in the lists' order: the server chose it.
        let roster = in_order(&announcement.setup.roster);
        let last_sum = in_order(&self.last_sum);
        // Both in order: one walk of the roster for all of them.
        let mut on_roster = roster.iter().peekable();
        let summed = last_sum.iter().filter(|c| {
            while on_roster.next_if(|r| r < c).is_some() {}
            on_roster.peek() == Some(c) && layout.is_none_or(|l| l.group_of(**c) == mine)
        });
        if let Some(c) = first_missing(summed, &in_order(&spec.ring)) {
            return Err(refuse(&format!(
                "the ring omits client {c}, whose input was in the last sum this client took \
                 part in (the server could learn that client's histogram from the two sums)"
            )));
        }
        Ok(())
    }

    /// Keeps the sketch of a round that committed with this client
    /// included (the next round updates it rather than encoding afresh),
    /// and the histogram the client sent in it, which the next change
    /// round takes its change against ([`Sends::Changes`](super::Sends::Changes)).
    /// The sketch is kept with the histogram it encoded: points forgotten
    /// after the join are still to be sent, and the next round sends
    /// them.
    pub fn commit(&mut self, round: ClientRound) {
        if let (State::Trained(t), Some(sketch)) = (&mut self.state, round.sketch)
            && let Local::Active(c) = &mut t.local
        {
            c.keep_encoded_of(Encoded {
                histogram: round.histogram.clone(),
                sketch,
            });
        }
        self.sent = Some(SentRound {
            round: round.round,
            histogram: round.histogram,
        });
    }

    /// Forgets the points `ids` (Algorithm 4, lines 1-6): the client's
    /// clustering is updated at once (reseeded from the first removed
    /// seed, if one is); the next round carries its new histogram. Returns
    /// whether it reseeded. On error nothing changes.
    ///
    /// # Errors
    ///
    /// [`MufcError::Seeding`] for an id the client does not hold, or one
    /// named twice; [`MufcError::EmptyRequest`] for no id.
    pub fn forget(&mut self, ids: &[PointId]) -> MufcResult<bool> {
        let (forgetting, reseeded) = self.forgetting(ids)?;
        self.take(forgetting);
        Ok(reseeded)
    }

    /// What forgetting `ids` makes of the client's points and clustering,
    /// computed without changing it ([`Self::take`] then changes it), and
    /// whether it reseeded: a driver stages every client of a request
    /// before any changes.
    ///
    /// # Errors
    ///
    /// As [`Self::forget`].
    pub(crate) fn forgetting(&self, ids: &[PointId]) -> MufcResult<(Forgetting, bool)> {
        if ids.is_empty() {
            return Err(MufcError::EmptyRequest);
        }
        match &self.state {
            State::Waiting(data) => Ok((Forgetting::Waiting(data.without(ids)?), false)),
            State::Trained(t) => {
                let data = t.data();
                data.positions_of(ids)?;
                if ids.len() == data.len() {
                    return Ok((Forgetting::Trained(Local::Empty(data.without(ids)?)), true));
                }
                let Local::Active(c) = &t.local else {
                    return Err(MufcError::EmptyRequest);
                };
                let (next, reseeded) = c.unlearned(ids, t.quantizer.as_ref())?;
                Ok((Forgetting::Trained(Local::Active(Box::new(next))), reseeded))
            }
        }
    }

    /// Takes what [`Self::forgetting`] computed.
    pub(crate) fn take(&mut self, forgetting: Forgetting) {
        match (&mut self.state, forgetting) {
            (State::Trained(t), Forgetting::Trained(local)) => t.local = local,
            (State::Waiting(d), Forgetting::Waiting(data)) => *d = data,
            // Computed in another state: a client never goes back to
            // waiting, and one that trains since computes again.
            (State::Trained(_), Forgetting::Waiting(_))
            | (State::Waiting(_), Forgetting::Trained(_)) => {}
        }
    }
}

impl Trained {
    fn data(&self) -> &Dataset {
        match &self.local {
            Local::Active(c) => c.data(),
            Local::Empty(d) => d,
        }
    }

    fn seeds(&self) -> &[PointId] {
        match &self.local {
            Local::Active(c) => c.seed_ids(),
            Local::Empty(_) => &[],
        }
    }
}

/// Trains client `id` on `data` in the federation of `setup`, exactly as
/// [`Federation::new`](crate::Federation::new) trains it (the same seed,
/// grid and parameters). With `first`, the round that asks for it is
/// checked before any training (a refused round costs no training).
fn train(
    id: ClientId,
    data: Dataset,
    setup: RemoteSetup,
    first: Option<&RoundSpec>,
) -> MufcResult<Trained> {
    if data.dim() != setup.dim {
        return Err(MufcError::DimensionMismatch {
            client: id,
            expected: setup.dim,
            found: data.dim(),
        });
    }
    let mut parts = setup.parts()?;
    let aggregation = setup.aggregation(&parts)?;
    if let (Some(spec), Some(a)) = (first, &aggregation) {
        a.check_round(spec, id)?;
    }
    if data.is_empty() {
        return Ok(Trained {
            setup,
            quantizer: parts.quantizer,
            aggregation,
            local: Local::Empty(data),
        });
    }
    parts.clients = vec![(id, data)];
    check_data(
        parts.clients.iter().map(|(c, d)| (*c, d)),
        &parts.config,
        parts.quantizer.as_ref(),
    )?;
    let client = parts
        .fit_clients()?
        .into_iter()
        .next()
        .map(|(c, _)| c)
        .ok_or(MufcError::NoClients)?;
    Ok(Trained {
        setup,
        quantizer: parts.quantizer,
        aggregation,
        local: Local::Active(Box::new(client)),
    })
}

/// Client `id`'s half and message of the plain round of `spec`: its
/// centroids and cluster sizes (none once it forgot every point). The
/// round must be a plain one of whole messages that names the client.
fn join_plain(spec: &RoundSpec, id: ClientId, local: &Local) -> MufcResult<(ClientRound, Vec<u8>)> {
    let refuse = |reason: String| MufcError::RoundRefused {
        round: spec.round,
        reason,
    };
    if spec.protocol != RoundProtocol::Plain || spec.sends != Sends::Histograms {
        return Err(refuse(format!(
            "the federation's setup is the plain mode, and the round is {:?} of {:?}",
            spec.protocol, spec.sends
        )));
    }
    if !spec.ring.contains(&id) {
        return Err(refuse(format!("client {id} is not in the ring")));
    }
    let (centroids, sizes) = match local {
        Local::Active(c) => c.plain_message(),
        Local::Empty(data) => (nalgebra::DMatrix::zeros(data.dim(), 0), Vec::new()),
    };
    let (half, first) = PlainClient::join(spec, id, &centroids, &sizes)?;
    let round = ClientRound {
        half,
        round: spec.round,
        sketch: None,
        histogram: Vec::new(),
        training: Duration::ZERO,
    };
    Ok((round, first))
}
