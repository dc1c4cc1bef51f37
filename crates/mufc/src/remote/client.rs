//! A client's half: its own points and seeding, which never leave it, and
//! the rounds it joins.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use seeding::{Dataset, PointId};
use syndrome_agg::masking::dealer::SealKey;

use num_bigint::BigUint;

mod admitted;
mod changes;
mod kept;
mod round;
mod trained;

use round::join_plain;
pub use round::{ClientRound, SentRound};
pub(crate) use trained::{Local, Staged};
use trained::{Trained, train};

use super::{Agreement, Announcement, Registration, RemoteSetup};
use crate::aggregation::{RoundProtocol, Sent};
use crate::client::message::Encoded;
use crate::ids::{first_missing, in_order};
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
    /// The key its round secrets derive from, if it keeps one
    /// ([`Self::with_round_key`]).
    round_key: Option<kept::RoundKey>,
}

#[derive(Clone, Debug)]
enum State {
    /// Registered, not yet trained.
    Waiting(Dataset),
    /// Trained in the federation of `setup`.
    Trained(Box<Trained>),
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
            round_key: None,
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
        if survey {
            return Registration::surveying(self.id, d);
        }
        Registration {
            id: self.id,
            points: d.len() as u64,
            dim: d.dim(),
            scale: 1,
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
                Local::Active(c) => Some(c.as_ref()),
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

    /// Refuses a round the client's operator did not allow, before
    /// anything else: a replayed session, the plain mode, masks derived
    /// from the federation seed, or a setup outside the agreement.
    fn check_announced(&self, announcement: &Announcement) -> MufcResult<()> {
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
        // server sees the client's centroids, which are records. A setup
        // the client holds was checked when it took it (the agreement at
        // its first round, then each change from its own, `adopt`): its
        // groups may have merged since, which the topology alone does not
        // draw.
        let held = self.setup() == Some(&announcement.setup);
        if let Some(a) = self.agreement.as_ref().filter(|_| !held) {
            a.check_setup(&announcement.setup)
                .map_err(|why| refuse(&format!("outside the agreement: {why}")))?;
        }
        Ok(())
    }

    /// Joins the round `announcement` describes: checks it (the client is
    /// in the ring once; the ring names only clients of the roster, and
    /// with groups only clients of the client's own group; the
    /// protocol parameters are those the setup's configuration gives; the
    /// setup is the one it trained in; the session is new to it), trains
    /// on the first round, encodes its histogram and starts its part of
    /// the protocol. Returns its half of the round and its first message
    /// for the server: none in a dealt round, whose one message is the
    /// answer ([`ClientRound::handle`]) to the client's sealed seed.
    ///
    /// # Errors
    ///
    /// [`MufcError::RoundRefused`] for a round the client must not join;
    /// the training errors on the first round
    /// ([`MufcError::OutsideBox`], [`MufcError::DimensionMismatch`], ...).
    pub fn join(
        &mut self,
        announcement: &Announcement,
    ) -> MufcResult<(ClientRound, Option<Vec<u8>>)> {
        let spec = &announcement.spec;
        let refuse = |reason: &str| MufcError::RoundRefused {
            round: spec.round,
            reason: reason.into(),
        };
        self.check_announced(announcement)?;
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
        if let Some(key) = &self.round_key {
            aggregation.keep_round_key(key.bytes());
        }
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
}
