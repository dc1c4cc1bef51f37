//! The federation split by party, for running it across processes
//! (feature `serde`): the server's half ([`RemoteServer`]) and a client's
//! ([`RemoteClient`]), each a state machine over bytes with no I/O, as the
//! SecAgg protocol itself is. `mufc-net` carries the bytes over
//! authenticated TLS; any other transport may drive them the same way.
//!
//! # A round
//!
//! 1. The clients register ([`Registration`]: their id, number of points
//!    and dimension); the server resolves the configuration for the whole
//!    federation ([`RemoteSetup`]: the grid step and the bound on the
//!    points depend on the totals).
//! 2. [`RemoteServer::start_round`] draws a fresh session (and, with
//!    SecAgg, the SecAgg+ ring) and gives the [`Announcement`] to send to
//!    every client, and the server's half of the round
//!    ([`RoundProtocol`]: SecAgg's five steps, or pairwise masks' two:
//!    fresh public keys, then the masked sketches once the server has
//!    relayed the key directory).
//! 3. Each client [`RemoteClient::join`]s: it checks the announcement
//!    against its own copy of the configuration (its place in the ring,
//!    the protocol's threshold and graph), trains on its first round
//!    (Algorithm 1, line 2, seeded exactly as in [`Federation`]),
//!    encodes its histogram (lines 3-4) and answers with its first
//!    protocol message.
//! 4. The server relays the protocol's steps ([`ServerRound::receive`],
//!    [`ServerRound::advance`]); the clients answer
//!    ([`ClientRound::handle`]). A client that does not answer a step in
//!    time is left out by the server (the protocol tolerates it up to its
//!    threshold).
//! 5. [`RemoteServer::finish_round`] decodes the unmasked sum, updates
//!    the model (lines 5-6, or Algorithm 4, lines 8-13) and commits; each
//!    client the round included then [`RemoteClient::commit`]s.
//!
//! With groups ([`Topology::Groups`](crate::Topology::Groups),
//! [`Topology::Tree`](crate::Topology::Tree)) every party derives the
//! same layout from the roster ([`RemoteSetup::layout`]); a round runs
//! inside one group (its ring is a subset of the group, which the client
//! checks), is decoded against that group's last sum, and updates the
//! models on the group's path to the root ([`RemoteServer::node`]). The
//! model exists once every group has run a round.
//!
//! A removal ([`RemoteClient::forget`], Algorithm 4, lines 1-6) changes a
//! client's points and seeds at once; the next round carries its new
//! histogram. Every round carries every client's whole sketch, so a round
//! that fails changes nothing a later round does not repair, and the
//! model after any sequence of committed rounds with no dropout is the
//! model of [`Federation`] trained on the points that remain, bit for bit
//! (the masks cancel; the sum is the same).
//!
//! [`InProcess`] drives every party of a federation in one process,
//! moving only their bytes: training, and removal requests served by one
//! round per changed group.
//!
//! # Example
//!
//! Driving both halves by hand, in one process:
//!
//! ```
//! use mufc::remote::{Announcement, Registration, RemoteClient, RemoteServer, RemoteSetup, RoundStep};
//! use mufc::{Channel, ClientId, Federation, FederationConfig, Masks, SecAggOptions};
//! use nalgebra::DMatrix;
//! use seeding::{Dataset, PointId};
//!
//! let data: Vec<Dataset> = (0..3)
//!     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
//!     .collect::<Result<_, _>>()?;
//! let secagg = Channel::scma(Masks::SecAgg(SecAggOptions::new()));
//! let config = FederationConfig::new(2).channel(secagg).seed(5).validate()?;
//! let mut clients: Vec<RemoteClient> = data.iter().enumerate()
//!     .map(|(i, d)| RemoteClient::new(ClientId(i as u64), d.clone()))
//!     .collect::<Result<_, _>>()?;
//! let regs: Vec<Registration> = clients.iter().map(RemoteClient::registration).collect();
//! let mut server = RemoteServer::new(RemoteSetup::new(&config, &regs)?)?;
//!
//! let run = |server: &mut RemoteServer, clients: &mut Vec<RemoteClient>| -> Result<(), Box<dyn std::error::Error>> {
//!     let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
//!     let (announcement, mut round) = server.start_round(&ids)?;
//!     let bytes = announcement.to_bytes()?; // what goes on the wire
//!     let mut halves = Vec::new();
//!     for c in clients.iter_mut() {
//!         let (half, first) = c.join(&Announcement::from_bytes(&bytes)?)?;
//!         if let Some(first) = first { // none in a dealt round
//!             round.receive(c.id(), &first)?;
//!         }
//!         halves.push(half);
//!     }
//!     while let RoundStep::Send(msgs) = round.advance()? {
//!         for (to, msg) in msgs {
//!             let reply = halves[to.0 as usize].handle(&msg)?;
//!             round.receive(to, &reply)?;
//!         }
//!     }
//!     server.finish_round(round)?;
//!     for (c, half) in clients.iter_mut().zip(halves) {
//!         c.commit(half);
//!     }
//!     Ok(())
//! };
//! run(&mut server, &mut clients)?;
//! let fed = Federation::new(data.clone(), server.setup().config())?;
//! assert_eq!(server.server().centroids(), fed.server().centroids());
//!
//! // Client 1 forgets a point; the next round serves it, exactly.
//! clients[1].forget(&[PointId(4)])?;
//! run(&mut server, &mut clients)?;
//! let mut rest = data;
//! rest[1] = rest[1].without(&[PointId(4)])?;
//! let retrained = Federation::new(rest, server.setup().config())?;
//! assert_eq!(server.server().counts(), retrained.server().counts());
//! assert_eq!(server.server().centroids(), retrained.server().centroids());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Federation`]: crate::Federation

mod agreement;
mod client;
mod dealer;
pub(crate) mod in_process;
mod membership;
mod plain;
mod server;

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

pub use crate::aggregation::{RoundProtocol, RoundSpec, Sends};
pub use agreement::{Agreement, DEFAULT_MAX_CLIENT_POINTS, DEFAULT_MIN_GAMMA, Policy};
pub use client::{ClientRound, RemoteClient, SentRound};
pub use dealer::RemoteDealer;
pub use in_process::{DrivenRound, InProcess, PartiesSnapshot, PartyCosts};
pub use server::{RemoteServer, RoundReport, RoundStep, ServerRound};

use crate::aggregation::Aggregation;
use crate::ids::{first_missing, in_order};
use crate::state::Setup;
use crate::state::setup::{quantizer, resolve};
use crate::{ClientId, Layout, MufcError, MufcResult, ValidConfig};

/// What a client tells the server when it registers: its id (from its
/// authenticated identity), how many points it holds, their dimension and
/// its survey scale. The server learns these; the grid step and the field
/// depend on the total of the points, the clients' `k` under the adaptive
/// rule on the median scale ([`crate::ClientK::Adaptive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// The client.
    pub id: ClientId,
    /// Its number of points.
    pub points: u64,
    /// Their dimension.
    pub dim: usize,
    /// About how many well-separated clusters its points form
    /// ([`Self::surveying`]; `1` tells nothing).
    pub scale: u32,
}

impl Registration {
    /// The registration of client `id` holding `data`, with its survey
    /// scale: about how many well-separated clusters the points form (a
    /// few K-means runs with fixed seeds on at most 1000 of them), which
    /// the adaptive rule for the clients' `k` takes the median of
    /// ([`crate::ClientK::ADAPTIVE`]; docs/threat-model.md §6a: the
    /// server learns it). A function of the data alone, so that a client
    /// across processes, which learns its number and the federation's seed
    /// only after it registers, finds the same value as the same client in
    /// process.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::ClientId;
    /// use mufc::remote::Registration;
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// // A fixed scatter in [0, 1) (splitmix64's mixer of point and axis).
    /// let jitter = |i: usize, axis: usize| {
    ///     let mut h = ((8 * i + axis) as u64).wrapping_add(0x9E37_79B9_7F4A_7C15);
    ///     h = (h ^ (h >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    ///     h = (h ^ (h >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ///     ((h ^ (h >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    /// };
    /// // Eight tight clusters in 8 dimensions (at corners of the cube's
    /// // first three axes), 40 points each.
    /// let clustered = Dataset::new(DMatrix::from_fn(8, 320, |a, i| {
    ///     ((i / 40) >> a.min(3) & 1) as f64 * f64::from(u8::from(a < 3)) + 0.05 * jitter(i, a)
    /// }))?;
    /// // At least 8: a K-means run with 8 centres may merge two of the
    /// // clusters, and 16 then cost much less than 8.
    /// assert!(Registration::surveying(ClientId(0), &clustered).scale >= 8);
    /// // The same number of points scattered over the cube: no clusters.
    /// let smooth = Dataset::new(DMatrix::from_fn(8, 320, |a, i| jitter(i, a)))?;
    /// let r = Registration::surveying(ClientId(1), &smooth);
    /// assert_eq!((r.points, r.dim, r.scale), (320, 8, 1));
    /// # Ok::<(), seeding::SeedingError>(())
    /// ```
    pub fn surveying(id: ClientId, data: &seeding::Dataset) -> Self {
        Self {
            id,
            points: data.len() as u64,
            dim: data.dim(),
            scale: crate::config::survey_scale(data),
        }
    }
}

/// The federation as every party must see it: the configuration resolved
/// for the registered clients, the dimension and the roster (the clients
/// the sketch capacity `client_k * L` is sized for, in id order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RemoteSetup {
    config: ValidConfig,
    dim: usize,
    roster: Vec<ClientId>,
    /// The groups ([`Self::layout`]): the topology's of the roster, or
    /// one given ([`Self::with_layout`]).
    layout: Option<Layout>,
    /// The sketch capacity ([`Self::capacity`]): `client_k` bins per
    /// client of the roster, kept apart so that a federation restored
    /// after some clients left keeps the capacity it was trained with.
    capacity: usize,
}

impl RemoteSetup {
    /// Resolves `config` for the registered clients (`gamma` and
    /// `max_points` from the total of their points, as
    /// [`Federation::new`](crate::Federation::new) does).
    ///
    /// # Errors
    ///
    /// [`MufcError::NoClients`], [`MufcError::DuplicateClient`],
    /// [`MufcError::DimensionMismatch`], [`MufcError::TooFewClients`],
    /// [`MufcError::InvalidConfig`] (points beyond `max_points`).
    ///
    /// The plain mode ([`Channel::Plain`](crate::Channel::Plain)) sets up
    /// too: its clients send their centroids in the clear, so a client
    /// joins its rounds only when its operator allowed it
    /// ([`RemoteClient::allowing_plain`]), and `mufc-net`'s server refuses
    /// it.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{Registration, RemoteSetup};
    /// use mufc::{Channel, ClientId, FederationConfig, Masks, MufcError, SecAggOptions};
    ///
    /// let regs: Vec<Registration> = (0..3).map(|i| Registration { id: ClientId(i), points: 50, dim: 2, scale: 1 }).collect();
    /// let secagg = FederationConfig::new(2).channel(Channel::scma(Masks::SecAgg(SecAggOptions::new()))).validate()?;
    /// let setup = RemoteSetup::new(&secagg, &regs)?;
    /// assert_eq!(setup.config().max_points(), Some(150));
    /// // Pairwise masks: the key directory travels through the server.
    /// let pairwise = FederationConfig::new(2).channel(Channel::scma(Masks::Pairwise)).validate()?;
    /// assert!(RemoteSetup::new(&pairwise, &regs).is_ok());
    /// // Dealt masks: the dealer is a party of its own (`RemoteDealer`).
    /// let dealt = FederationConfig::new(2).validate()?;
    /// assert!(RemoteSetup::new(&dealt, &regs).is_ok());
    /// // The plain mode: no grid, every client's centroids in the clear.
    /// let plain = FederationConfig::new(2).channel(Channel::Plain).validate()?;
    /// assert_eq!(RemoteSetup::new(&plain, &regs)?.config().channel(), &Channel::Plain);
    /// # Ok::<(), MufcError>(())
    /// ```
    pub fn new(config: &ValidConfig, registrations: &[Registration]) -> MufcResult<Self> {
        let setup = Self::resolved(config, registrations)?;
        setup.check_policy()?;
        Ok(setup)
    }

    /// [`Self::new`] but for the privacy policy's minimum aggregate
    /// ([`Self::check_policy`]), which a driver holding the clients' points
    /// checks after their data (data errors are named first).
    pub(crate) fn resolved(
        config: &ValidConfig,
        registrations: &[Registration],
    ) -> MufcResult<Self> {
        let mut regs = registrations.to_vec();
        regs.sort_by_key(|r| r.id);
        let first = regs.first().ok_or(MufcError::NoClients)?;
        let dim = first.dim;
        let mut n: u64 = 0;
        for (i, r) in regs.iter().enumerate() {
            if i > 0 && regs.get(i - 1).is_some_and(|p| p.id == r.id) {
                return Err(MufcError::DuplicateClient(r.id));
            }
            if r.points == 0 {
                return Err(MufcError::EmptyClient(r.id));
            }
            if r.dim != dim {
                return Err(MufcError::DimensionMismatch {
                    client: r.id,
                    expected: dim,
                    found: r.dim,
                });
            }
            n = n.saturating_add(r.points);
        }
        let scale = crate::config::median_scale(regs.iter().map(|r| r.scale));
        let roster: Vec<ClientId> = regs.into_iter().map(|r| r.id).collect();
        let config = resolve(config, n, dim, roster.len(), || scale)?;
        Ok(Self::of_roster(config, dim, roster))
    }

    /// Refuses a roster, or a group, of fewer clients than the smallest
    /// aggregate ([`ValidConfig::min_clients`], docs/threat-model.md P4).
    pub(crate) fn check_policy(&self) -> MufcResult<()> {
        let min_clients = self.config.min_clients();
        if self.roster.len() < min_clients {
            return Err(MufcError::TooFewClients {
                clients: self.roster.len(),
                min_clients,
            });
        }
        match &self.layout {
            Some(layout) => layout.check_sizes(min_clients, &BTreeSet::new()),
            None => Ok(()),
        }
    }

    /// The setup of a stored federation: its resolved `config`, `dim`
    /// and `roster`, with the groups the topology gives the roster.
    pub(crate) fn of_roster(config: ValidConfig, dim: usize, roster: Vec<ClientId>) -> Self {
        let layout = match config.topology() {
            crate::Topology::Flat => None,
            t => Some(Layout::new(&roster, t)),
        };
        Self {
            capacity: config.client_k().saturating_mul(roster.len()),
            config,
            dim,
            roster,
            layout,
        }
    }

    /// The setup with the sketch capacity a stored federation was trained
    /// with (its roster may have lost the clients that left since).
    pub(crate) fn with_capacity(mut self, capacity: usize) -> Self {
        self.capacity = capacity;
        self
    }

    /// The setup with the groups `layout` in place of the topology's: a
    /// layout of its own ([`Federation::with_layout`](crate::Federation::with_layout)).
    /// Across processes a client joins only the layout the topology gives
    /// the roster, with the clients admitted since training in any group
    /// ([`Agreement::check_setup`]): another one would have to be agreed
    /// out of band, as the roster is.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidConfig`] in the plain mode (it sums nothing,
    /// so it has no groups); [`MufcError::InvalidLayout`] for a layout
    /// that does not name the roster exactly; [`MufcError::GroupTooSmall`]
    /// for a group below the smallest aggregate
    /// ([`ValidConfig::min_clients`]).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{Registration, RemoteSetup};
    /// use mufc::{ClientId, FederationConfig, Layout};
    ///
    /// let regs: Vec<Registration> = (0..6).map(|i| Registration { id: ClientId(i), points: 50, dim: 2, scale: 1 }).collect();
    /// let setup = RemoteSetup::new(&FederationConfig::new(2).validate()?, &regs)?;
    /// assert!(setup.layout().is_none());
    /// let odd_even = Layout::from_groups(vec![[0, 2, 4].map(ClientId).to_vec(), [1, 3, 5].map(ClientId).to_vec()], None)?;
    /// let grouped = setup.clone().with_layout(odd_even.clone())?;
    /// assert_eq!(grouped.layout(), Some(&odd_even));
    /// // Every client of the roster in a group, and no other.
    /// let short = Layout::from_groups(vec![(0..3).map(ClientId).collect()], None)?;
    /// assert!(setup.with_layout(short).is_err());
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn with_layout(self, layout: Layout) -> MufcResult<Self> {
        self.with_groups(layout, Layout::check_sizes)
    }

    /// [`Self::with_layout`] for the groups of a saved state: a group
    /// below the minimum is allowed when it can merge into another (its
    /// merge waits for its round, `Layout::check_mergeable`).
    pub(crate) fn with_saved_groups(self, layout: Layout) -> MufcResult<Self> {
        self.with_groups(layout, Layout::check_mergeable)
    }

    /// The setup with the groups `layout`, once it names the roster and
    /// `sizes` accepts its groups' sizes under the minimum aggregate.
    fn with_groups(
        mut self,
        layout: Layout,
        sizes: impl Fn(&Layout, usize, &BTreeSet<ClientId>) -> MufcResult<()>,
    ) -> MufcResult<Self> {
        if self.config.channel() == &crate::Channel::Plain {
            return Err(crate::config::groups_need_scma());
        }
        layout.check_clients(&self.roster)?;
        sizes(&layout, self.config.min_clients(), &BTreeSet::new())?;
        self.layout = Some(layout);
        Ok(self)
    }

    /// The groups: those given ([`Self::with_layout`]), else with
    /// [`Topology::Groups`](crate::Topology::Groups) or
    /// [`Topology::Tree`](crate::Topology::Tree) the layout the
    /// configuration's topology gives the roster (`None` when flat). A
    /// round runs inside one group, and a client joins only rounds whose
    /// ring lies inside its own.
    pub fn layout(&self) -> Option<&Layout> {
        self.layout.as_ref()
    }

    /// Whether the groups are those the configuration's topology gives the
    /// roster (not a layout of the setup's own, [`Self::with_layout`]),
    /// but for the clients `admitted` after training, each in one of the
    /// groups the topology gives the others (a join puts a new client in
    /// an existing group, [`Self::admitting`]), and for merges: the
    /// clients of a topology group that are not in it any more are all in
    /// one other group (a group below the minimum moves its clients left
    /// together). A client with no history of the federation checks a
    /// setup by this rule.
    pub(crate) fn has_topology_layout_admitting(&self, admitted: &[ClientId]) -> bool {
        let t = self.config.topology();
        if t == crate::Topology::Flat {
            return self.layout.is_none();
        }
        let joined = in_order(admitted);
        let trained: Vec<ClientId> = (self.roster.iter())
            .filter(|c| joined.binary_search(c).is_err())
            .copied()
            .collect();
        let joined: Vec<ClientId> = (joined.iter())
            .filter(|c| self.roster.contains(c))
            .copied()
            .collect();
        let before = (!trained.is_empty()).then(|| Layout::new(&trained, t));
        match (before, &self.layout) {
            (Some(b), Some(l)) => membership::check_merged_or_absorbed(l, &b, &joined).is_ok(),
            _ => false,
        }
    }

    /// Checks that the ring of `spec` names only clients of the roster,
    /// and with groups only clients of `anchor`'s group: a ring beyond the
    /// roster would let a server add parties of its own, and a ring across
    /// groups would let it difference overlapping sums
    /// (docs/threat-model.md §11). A client checks it with itself as the
    /// anchor, the dealer with the ring's first client.
    pub(crate) fn check_members(&self, spec: &RoundSpec, anchor: ClientId) -> MufcResult<()> {
        let refuse = |reason: String| MufcError::RoundRefused {
            round: spec.round,
            reason,
        };
        // Searched in order, whatever order the announcement's sender
        // chose for the list.
        if let Some(c) = first_missing(in_order(&spec.ring).iter(), &in_order(&self.roster)) {
            return Err(refuse(format!(
                "the ring names client {c}, outside the federation's roster"
            )));
        }
        if let Some(layout) = &self.layout {
            let group = layout.group_of(anchor);
            if let Some(c) = spec.ring.iter().find(|c| layout.group_of(**c) != group) {
                return Err(refuse(format!(
                    "the ring names client {c}, outside the group of client {anchor}"
                )));
            }
        }
        Ok(())
    }

    /// The resolved configuration (build a [`Federation`](crate::Federation)
    /// from it to compare).
    pub fn config(&self) -> &ValidConfig {
        &self.config
    }

    /// The dimension of the points.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The clients of the federation, in id order.
    pub fn roster(&self) -> &[ClientId] {
        &self.roster
    }

    /// The sketch capacity: `client_k` bins per client of the roster the
    /// federation was trained with.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The federation's parts every party derives alike (the grid), with
    /// no client's points.
    pub(crate) fn parts(&self) -> MufcResult<Setup> {
        Ok(Setup {
            quantizer: quantizer(&self.config, self.dim)?,
            config: self.config.clone(),
            dim: self.dim,
            clients: Vec::new(),
        })
    }

    /// The aggregation of the roster over `parts` (the same parameters on
    /// every party).
    /// `None` in the plain mode, which sums nothing.
    pub(crate) fn aggregation(&self, parts: &Setup) -> MufcResult<Option<Aggregation>> {
        parts.aggregation_for(&self.roster, Some(self.capacity))
    }
}

/// The format version of an [`Announcement`]'s bytes. Version 2: the
/// configuration carries its topology; version 3: the round names its
/// protocol ([`RoundProtocol`]: SecAgg or pairwise masks); version 4: and
/// what the clients send ([`Sends`]: histograms, or changes); version 5:
/// a change round names its base round.
const ANNOUNCEMENT_VERSION: u8 = 5;

/// The largest announcement accepted: the configuration and a ring of a
/// million clients fit far below it.
pub(crate) const MAX_ANNOUNCEMENT: usize = 64 << 20;

/// What the server sends every client to start a round: the federation's
/// setup and the round's public description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Announcement {
    /// The federation.
    pub setup: RemoteSetup,
    /// The round.
    pub spec: RoundSpec,
}

impl Announcement {
    /// The announcement's bytes: a version byte, then postcard.
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`] if serialization fails.
    pub fn to_bytes(&self) -> MufcResult<Vec<u8>> {
        let mut out = vec![ANNOUNCEMENT_VERSION];
        let body = postcard::to_allocvec(self)
            .map_err(|e| MufcError::Persistence(format!("encoding an announcement: {e}")))?;
        out.extend_from_slice(&body);
        Ok(out)
    }

    /// Parses bytes from [`Self::to_bytes`], checking the version, the
    /// size and the configuration (which validates as it parses).
    ///
    /// # Errors
    ///
    /// [`MufcError::Remote`] for bytes that are not an announcement of
    /// this version, too long, or trailing bytes.
    pub fn from_bytes(bytes: &[u8]) -> MufcResult<Self> {
        let bad = |why: String| MufcError::Remote(format!("not a round announcement: {why}"));
        if bytes.len() > MAX_ANNOUNCEMENT {
            return Err(bad(format!("{} bytes", bytes.len())));
        }
        let (&version, body) = bytes.split_first().ok_or_else(|| bad("no bytes".into()))?;
        if version != ANNOUNCEMENT_VERSION {
            return Err(bad(format!(
                "format version {version}, this build reads {ANNOUNCEMENT_VERSION}"
            )));
        }
        let (a, rest): (Self, &[u8]) =
            postcard::take_from_bytes(body).map_err(|e| bad(e.to_string()))?;
        if !rest.is_empty() {
            return Err(bad(format!("{} trailing bytes", rest.len())));
        }
        Ok(a)
    }
}
