//! The server's state machine: it collects one step's messages
//! ([`Server::receive`]) until the transport calls [`Server::advance`]
//! (every client answered, or the deadline passed), then sends the next
//! step's messages, and after unmasking returns the sum.
//!
//! The server never asks one client for both shares of one peer, checks
//! every reconstructed secret (the self-mask seed against its commitment,
//! the mask secret key against its public key) and, when a check fails and
//! it holds more than `t` shares, corrects bad shares before giving up
//! (docs/threat-model.md S4). If any needed secret has fewer than `t` shares it aborts
//! before reconstructing anything (docs/threat-model.md D4).

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use core::fmt;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use field::FiniteField;

use super::messages::{
    AdvertiseKeys, Attestation, ClientBody, ClientEnvelope, ConsistencyRequest, EncryptedShare,
    KeyDirectory, MaskingRequest, ServerBody, ServerEnvelope, UnmaskingRequest, UnmaskingResponse,
};
use super::session::{
    AggregationOutput, SessionConfig, ct_eq, seed_commitment, self_mask, share_id,
};
use super::shamir::{
    SecretShare, decode_secret_with_errors, lagrange_at_zero, reconstruct_secret_with,
};
use crate::context::ClientId;
use crate::error::{DecodeError, ParamsError, ProtocolError, SketchError, SketchResult, check_len};
use crate::masking::pairwise::{MaskKeyPair, MaskPublicKey, combine_terms, peer_mask_terms};
use crate::step::Step;

mod subsets;
use subsets::Subsets;

/// The most refusals [`Server::rejected`] keeps.
pub const MAX_LOGGED: usize = 4096;

/// The most `t`-subsets of one secret's shares the server tries when the
/// shares disagree and Gao's decoder cannot correct them: every subset
/// that leaves out one share (the `t + 1` case) and far more, with the
/// work bounded whatever a malicious peer sends.
pub const MAX_SUBSETS: usize = 4096;

/// What [`Server::advance`] produces.
#[derive(Debug)]
pub enum Advance<E> {
    /// The next step's messages, one per client still in.
    Send(Vec<ServerEnvelope>),
    /// The protocol is over.
    Finished(AggregationOutput<E>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Collecting(Step),
    Finished,
    Aborted,
}

/// The shares gathered for each owner's secret.
type SharesByOwner = Vec<(ClientId, Vec<SecretShare>)>;

/// A parsed unmasking response.
struct Revealed {
    seeds: BTreeMap<ClientId, SecretShare>,
    keys: BTreeMap<ClientId, SecretShare>,
}

/// The server of one aggregation round.
///
/// # Example
///
/// Driving the state machines by hand, without a transport:
///
/// ```
/// use std::sync::Arc;
/// use field::{Field, Mersenne61};
/// use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
/// use syndrome_agg::secagg::client::{Client, RoundLedger};
/// use syndrome_agg::secagg::graph::Neighbourhoods;
/// use syndrome_agg::secagg::params::{GraphChoice, SecAggParams, ServerModel};
/// use syndrome_agg::secagg::server::{Advance, Server};
/// use syndrome_agg::secagg::SessionConfig;
///
/// let f = Mersenne61;
/// let mut rng = testkit::rng("server-doc");
/// let ctx = RoundContext { session: SessionId([2; 32]), round: 0 };
/// let params = SecAggParams::new(GraphChoice::Complete, 2, 0, ServerModel::SemiHonest);
/// let cfg = Arc::new(SessionConfig::new(f, ctx, Neighbourhoods::complete(1..=3)?, params, 2)?);
/// let mut server = Server::new(cfg.clone());
/// let mut clients = Vec::new();
/// for id in 1..=3u64 {
///     let (c, msg) = Client::new(cfg.clone(), id, vec![id, 10], &mut RoundLedger::default(), &mut rng)?;
///     server.receive(msg)?;
///     clients.push(c);
/// }
/// let out = loop {
///     match server.advance()? {
///         Advance::Send(msgs) => {
///             for m in msgs {
///                 let c = clients.iter_mut().find(|c| c.id() == m.client).unwrap();
///                 server.receive(c.handle(&m, &mut rng)?)?;
///             }
///         }
///         Advance::Finished(o) => break o,
///     }
/// };
/// assert_eq!(out.sum, vec![6, 30]);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
pub struct Server<F: FiniteField> {
    config: Arc<SessionConfig<F>>,
    phase: Phase,
    u1: BTreeMap<ClientId, AdvertiseKeys>,
    shares: BTreeMap<ClientId, Vec<EncryptedShare>>,
    u2: BTreeSet<ClientId>,
    u3: BTreeSet<ClientId>,
    /// Each attester's tags, by receiver.
    attestations: BTreeMap<ClientId, BTreeMap<ClientId, [u8; 32]>>,
    /// The clients asked to unmask (those that attested).
    u4: BTreeSet<ClientId>,
    sum: Vec<F::Elem>,
    /// What each survivor was asked: (alive, dropped).
    asked: BTreeMap<ClientId, (BTreeSet<ClientId>, BTreeSet<ClientId>)>,
    responses: BTreeMap<ClientId, Revealed>,
    dropped: BTreeMap<ClientId, Step>,
    rejected: Vec<(ClientId, SketchError)>,
}

impl<F: FiniteField> fmt::Debug for Server<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("phase", &self.phase)
            .field("dropped", &self.dropped)
            .finish_non_exhaustive()
    }
}

fn rejected<T>(reason: String) -> SketchResult<T> {
    Err(SketchError::Protocol(ProtocolError::MessageRejected {
        reason,
    }))
}

impl<F: FiniteField> Server<F> {
    /// A server waiting for AdvertiseKeys messages.
    pub fn new(config: Arc<SessionConfig<F>>) -> Self {
        let f = config.field();
        let sum = vec![f.zero(); config.vector_len()];
        Self {
            config,
            phase: Phase::Collecting(Step::AdvertiseKeys),
            u1: BTreeMap::new(),
            shares: BTreeMap::new(),
            u2: BTreeSet::new(),
            u3: BTreeSet::new(),
            attestations: BTreeMap::new(),
            u4: BTreeSet::new(),
            sum,
            asked: BTreeMap::new(),
            responses: BTreeMap::new(),
            dropped: BTreeMap::new(),
            rejected: Vec::new(),
        }
    }

    /// The step whose messages the server collects (`None` once finished
    /// or aborted).
    pub fn step(&self) -> Option<Step> {
        match self.phase {
            Phase::Collecting(s) => Some(s),
            Phase::Finished | Phase::Aborted => None,
        }
    }

    /// The clients expected to answer the current step (those still in).
    pub fn expected(&self) -> BTreeSet<ClientId> {
        match self.phase {
            Phase::Collecting(Step::AdvertiseKeys) => {
                self.config.graph().ring().iter().copied().collect()
            }
            Phase::Collecting(Step::ShareKeys) => self.u1.keys().copied().collect(),
            Phase::Collecting(Step::MaskedInput) => self.u2.clone(),
            Phase::Collecting(Step::ConsistencyCheck) => self.u3.clone(),
            Phase::Collecting(Step::Unmasking) => self.u4.clone(),
            Phase::Finished | Phase::Aborted => BTreeSet::new(),
        }
    }

    /// The clients that answered the current step so far.
    pub fn answered(&self) -> BTreeSet<ClientId> {
        match self.phase {
            Phase::Collecting(Step::AdvertiseKeys) => self.u1.keys().copied().collect(),
            Phase::Collecting(Step::ShareKeys) => self.shares.keys().copied().collect(),
            Phase::Collecting(Step::MaskedInput) => self.u3.clone(),
            Phase::Collecting(Step::ConsistencyCheck) => {
                self.attestations.keys().copied().collect()
            }
            Phase::Collecting(Step::Unmasking) => self.responses.keys().copied().collect(),
            Phase::Finished | Phase::Aborted => BTreeSet::new(),
        }
    }

    /// The messages refused so far and why (docs/threat-model.md R1: first write wins,
    /// plus an error log), the first [`MAX_LOGGED`] of them. Unparsable
    /// bytes are logged under `u64::MAX`.
    pub fn rejected(&self) -> &[(ClientId, SketchError)] {
        &self.rejected
    }

    /// Accepts one client message of the current step.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::MessageRejected`] for another session or round, an
    /// unknown client, a client that is out, a second message from one
    /// client (the first one counts), or shares and responses that do not
    /// fit what was asked; [`ProtocolError::UnexpectedMessage`] for another
    /// step (a late message after the deadline);
    /// [`DecodeError::WrongLength`], [`DecodeError::NonCanonical`] and
    /// [`ParamsError::ParamsMismatch`] for bad elements. The state is
    /// unchanged and the refusal is logged in [`rejected`](Self::rejected).
    pub fn receive(&mut self, msg: ClientEnvelope) -> SketchResult<()> {
        let client = msg.client;
        let r = self.receive_inner(msg);
        if let Err(e) = &r {
            self.log(client, e);
        }
        r
    }

    /// Logs a refusal; the log keeps the first [`MAX_LOGGED`] so that a
    /// flood of junk cannot grow it without bound.
    fn log(&mut self, client: ClientId, e: &SketchError) {
        if self.rejected.len() < MAX_LOGGED {
            self.rejected.push((client, e.clone()));
        }
    }

    /// [`ClientEnvelope::parse`] (with the configured size cap) then
    /// [`receive`](Self::receive).
    ///
    /// # Errors
    ///
    /// As those two.
    pub fn receive_bytes(&mut self, bytes: &[u8]) -> SketchResult<()> {
        match ClientEnvelope::parse(bytes, self.config.max_message()) {
            Ok(msg) => self.receive(msg),
            Err(e) => {
                self.log(ClientId::MAX, &e);
                Err(e)
            }
        }
    }

    fn receive_inner(&mut self, msg: ClientEnvelope) -> SketchResult<()> {
        if msg.context() != *self.config.context() {
            return rejected(format!(
                "message of client {} for another session or round",
                msg.client
            ));
        }
        let id = msg.client;
        if !self.config.graph().contains(id) {
            return rejected(format!("client {id} is not in this session"));
        }
        let found = msg.body.step();
        let Phase::Collecting(step) = self.phase else {
            return Err(SketchError::Protocol(ProtocolError::UnexpectedMessage {
                state: "finished",
                found,
            }));
        };
        if step != found {
            return Err(SketchError::Protocol(ProtocolError::UnexpectedMessage {
                state: "collecting another step",
                found,
            }));
        }
        let dup = |id: ClientId| {
            rejected(format!(
                "duplicate message from client {id} (the first one counts)"
            ))
        };
        let out = |id: ClientId| rejected(format!("client {id} is no longer in the protocol"));
        match msg.body {
            ClientBody::AdvertiseKeys(keys) => {
                if self.u1.contains_key(&id) {
                    return dup(id);
                }
                check_advertised(id, &keys, &self.u1)?;
                self.u1.insert(id, keys);
            }
            ClientBody::ShareKeys(sk) => {
                if !self.u1.contains_key(&id) {
                    return out(id);
                }
                if self.shares.contains_key(&id) {
                    return dup(id);
                }
                let graph = self.config.graph();
                let mut to = BTreeSet::new();
                for EncryptedShare { peer, ciphertext } in &sk.shares {
                    if !graph.are_neighbours(id, *peer) || !self.u1.contains_key(peer) {
                        return rejected(format!("share from {id} to {peer}, not a holder"));
                    }
                    if !to.insert(*peer) {
                        return rejected(format!("two shares from {id} to {peer}"));
                    }
                    check_len(super::client::SHARE_CIPHERTEXT_BYTES, ciphertext.len())?;
                }
                // Every holder that advertised gets a share, or none does:
                // a peer left out would not mask with this client while
                // this client masks with it, and their pairwise masks would
                // not cancel (a wrong sum, found by fuzzing; docs/fuzzing.md).
                let holders = graph
                    .neighbours(id)?
                    .into_iter()
                    .filter(|h| self.u1.contains_key(h))
                    .count();
                if to.len() != holders {
                    return rejected(format!(
                        "client {id} sent shares to {} of its {holders} holders",
                        to.len()
                    ));
                }
                self.shares.insert(id, sk.shares);
            }
            ClientBody::MaskedInput(mi) => {
                if !self.u2.contains(&id) {
                    return out(id);
                }
                if self.u3.contains(&id) {
                    return dup(id);
                }
                let f = self.config.field();
                if mi.modulus != f.characteristic().to_bytes_le() {
                    return Err(SketchError::Params(ParamsError::ParamsMismatch {
                        what: "field modulus",
                    }));
                }
                let y = parse_elements(f, &mi.elements, self.config.vector_len())?;
                for (a, b) in self.sum.iter_mut().zip(&y) {
                    f.add_assign(a, b);
                }
                self.u3.insert(id);
            }
            ClientBody::Attestations(att) => {
                if !self.u3.contains(&id) {
                    return out(id);
                }
                if self.attestations.contains_key(&id) {
                    return dup(id);
                }
                let graph = self.config.graph();
                let mut tags = BTreeMap::new();
                for a in &att.tags {
                    if !self.u3.contains(&a.peer) || !graph.are_neighbours(id, a.peer) {
                        return rejected(format!(
                            "attestation from {id} to {}, not an alive peer",
                            a.peer
                        ));
                    }
                    if tags.insert(a.peer, a.tag).is_some() {
                        return rejected(format!("two attestations from {id} to {}", a.peer));
                    }
                }
                self.attestations.insert(id, tags);
            }
            ClientBody::UnmaskingResponse(resp) => {
                let Some((alive, dropped)) = self.asked.get(&id) else {
                    return out(id);
                };
                if self.responses.contains_key(&id) {
                    return dup(id);
                }
                let parsed = parse_response(id, &resp, alive, dropped)?;
                self.responses.insert(id, parsed);
            }
        }
        Ok(())
    }

    fn enough(&mut self, step: Step, have: usize) -> SketchResult<()> {
        let need = self.config.min_clients();
        if have < need {
            self.phase = Phase::Aborted;
            return Err(SketchError::Protocol(ProtocolError::NotEnoughClients {
                step,
                have,
                need,
            }));
        }
        Ok(())
    }

    fn mark_dropped(
        &mut self,
        step: Step,
        expected: &BTreeSet<ClientId>,
        answered: &BTreeSet<ClientId>,
    ) {
        for id in expected.difference(answered) {
            self.dropped.entry(*id).or_insert(step);
        }
    }

    /// Closes the current step (every client answered, or the deadline
    /// passed): the clients that did not answer are out, and the server
    /// sends the next step's messages or, after unmasking, the sum.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::NotEnoughClients`] when fewer than the threshold (or
    /// `min_clients`) answered, or some needed secret has fewer than `t`
    /// shares: nothing is reconstructed then. [`ProtocolError::BadShares`]
    /// when a secret's shares are inconsistent with its commitment beyond
    /// correction. After an error the server is aborted for good.
    pub fn advance(&mut self) -> SketchResult<Advance<F::Elem>> {
        let Phase::Collecting(step) = self.phase else {
            return Err(SketchError::Protocol(ProtocolError::MessageRejected {
                reason: "the protocol is over".into(),
            }));
        };
        let expected = self.expected();
        let answered = self.answered();
        self.mark_dropped(step, &expected, &answered);
        self.enough(step, answered.len())?;
        let ctx = *self.config.context();
        let graph = self.config.graph().clone();
        match step {
            Step::AdvertiseKeys => {
                let mut out = Vec::with_capacity(self.u1.len());
                for id in self.u1.keys() {
                    let entries = graph
                        .holders(*id)?
                        .into_iter()
                        .filter_map(|h| self.u1.get(&h).map(|k| (h, *k)))
                        .collect();
                    out.push(ServerEnvelope::new(
                        &ctx,
                        *id,
                        ServerBody::KeyDirectory(KeyDirectory { entries }),
                    ));
                }
                self.phase = Phase::Collecting(Step::ShareKeys);
                Ok(Advance::Send(out))
            }
            Step::ShareKeys => {
                self.u2 = answered;
                let mut requests: BTreeMap<ClientId, Vec<EncryptedShare>> =
                    self.u2.iter().map(|id| (*id, Vec::new())).collect();
                for (from, list) in core::mem::take(&mut self.shares) {
                    for EncryptedShare { peer, ciphertext } in list {
                        if let Some(r) = requests.get_mut(&peer) {
                            r.push(EncryptedShare {
                                peer: from,
                                ciphertext,
                            });
                        }
                    }
                }
                let out = requests
                    .into_iter()
                    .map(|(id, shares)| {
                        ServerEnvelope::new(
                            &ctx,
                            id,
                            ServerBody::MaskingRequest(MaskingRequest { shares }),
                        )
                    })
                    .collect();
                self.phase = Phase::Collecting(Step::MaskedInput);
                Ok(Advance::Send(out))
            }
            Step::MaskedInput => {
                // docs/threat-model.md S7: one alive set for everyone, which
                // each survivor attests to its alive peers.
                let alive: Vec<ClientId> = self.u3.iter().copied().collect();
                let out = self
                    .u3
                    .iter()
                    .map(|id| {
                        ServerEnvelope::new(
                            &ctx,
                            *id,
                            ServerBody::ConsistencyRequest(ConsistencyRequest {
                                alive: alive.clone(),
                            }),
                        )
                    })
                    .collect();
                self.phase = Phase::Collecting(Step::ConsistencyCheck);
                Ok(Advance::Send(out))
            }
            Step::ConsistencyCheck => {
                self.u4 = answered;
                let mut out = Vec::with_capacity(self.u4.len());
                for id in &self.u4 {
                    let neighbours = graph.neighbours(*id)?;
                    let alive: BTreeSet<ClientId> = neighbours
                        .iter()
                        .copied()
                        .filter(|v| self.u3.contains(v))
                        .collect();
                    let dropped: BTreeSet<ClientId> = neighbours
                        .iter()
                        .copied()
                        .filter(|v| self.u2.contains(v) && !self.u3.contains(v))
                        .collect();
                    let attestations = self
                        .attestations
                        .iter()
                        .filter_map(|(from, tags)| {
                            tags.get(id).map(|tag| Attestation {
                                peer: *from,
                                tag: *tag,
                            })
                        })
                        .collect();
                    out.push(ServerEnvelope::new(
                        &ctx,
                        *id,
                        ServerBody::UnmaskingRequest(UnmaskingRequest {
                            alive: alive.iter().copied().collect(),
                            dropped: dropped.iter().copied().collect(),
                            attestations,
                        }),
                    ));
                    self.asked.insert(*id, (alive, dropped));
                }
                self.phase = Phase::Collecting(Step::Unmasking);
                Ok(Advance::Send(out))
            }
            Step::Unmasking => match self.finish() {
                Ok(out) => {
                    self.phase = Phase::Finished;
                    Ok(Advance::Finished(out))
                }
                Err(e) => {
                    self.phase = Phase::Aborted;
                    Err(e)
                }
            },
        }
    }

    /// Gathers the shares of each needed secret (seeds of survivors, keys
    /// of the dropped); an error if some secret has fewer than `t`.
    fn gather(&self) -> SketchResult<(SharesByOwner, SharesByOwner)> {
        let t = self.config.threshold();
        let mut seeds = Vec::new();
        let mut keys = Vec::new();
        let mut short: Option<usize> = None;
        for u in &self.u3 {
            let shares: Vec<SecretShare> = self
                .responses
                .values()
                .filter_map(|r| r.seeds.get(u).cloned())
                .collect();
            if shares.len() < t {
                short = Some(short.map_or(shares.len(), |s| s.min(shares.len())));
            }
            seeds.push((*u, shares));
        }
        for v in self.u2.difference(&self.u3) {
            let shares: Vec<SecretShare> = self
                .responses
                .values()
                .filter_map(|r| r.keys.get(v).cloned())
                .collect();
            if shares.len() < t {
                short = Some(short.map_or(shares.len(), |s| s.min(shares.len())));
            }
            keys.push((*v, shares));
        }
        if let Some(have) = short {
            return Err(SketchError::Protocol(ProtocolError::NotEnoughClients {
                step: Step::Unmasking,
                have,
                need: t,
            }));
        }
        Ok((seeds, keys))
    }

    fn reconstruct(
        &self,
        cache: &mut BTreeMap<Vec<u64>, Vec<u128>>,
        shares: &[SecretShare],
        check: impl Fn(&[u8; 32]) -> bool,
    ) -> SketchResult<Option<zeroize::Zeroizing<[u8; 32]>>> {
        let t = self.config.threshold();
        let first = shares.get(..t).unwrap_or(shares);
        let ids: Vec<u64> = first.iter().map(|s| s.id).collect();
        let lagrange = match cache.get(&ids) {
            Some(l) => l.clone(),
            None => {
                let l = lagrange_at_zero(&field::Mersenne127, &ids)?;
                cache.insert(ids, l.clone());
                l
            }
        };
        if let Ok(s) = reconstruct_secret_with(&lagrange, first)
            && check(&s)
        {
            return Ok(Some(s));
        }
        if shares.len() <= t {
            return Ok(None);
        }
        // docs/threat-model.md S4: a wrong share; correct it with the
        // spare shares. Gao's decoder corrects up to (n - t) / 2 of n; with
        // fewer spares (t + 1 shares and one bad among them) the check
        // itself picks out a good t-subset.
        if let Ok(s) = decode_secret_with_errors(shares, t)
            && check(&s)
        {
            return Ok(Some(s));
        }
        let mut tried = 0usize;
        let mut subset = Subsets::new(shares.len(), t);
        // The first subset is the first t shares, already tried above.
        let _ = subset.next_subset();
        while let Some(picked) = subset.next_subset() {
            if tried >= MAX_SUBSETS {
                break;
            }
            tried = tried.saturating_add(1);
            let chosen: Vec<SecretShare> = picked
                .iter()
                .filter_map(|i| shares.get(*i).cloned())
                .collect();
            let ids: Vec<u64> = chosen.iter().map(|s| s.id).collect();
            let Ok(lagrange) = lagrange_at_zero(&field::Mersenne127, &ids) else {
                continue;
            };
            if let Ok(s) = reconstruct_secret_with(&lagrange, &chosen)
                && check(&s)
            {
                return Ok(Some(s));
            }
        }
        Ok(None)
    }

    fn finish(&mut self) -> SketchResult<AggregationOutput<F::Elem>> {
        let (seeds, keys) = self.gather()?;
        let f = self.config.field().clone();
        let len = self.config.vector_len();
        let ctx = *self.config.context();
        let graph = self.config.graph().clone();
        let mut cache = BTreeMap::new();
        // Reconstruct and check every secret before using any.
        let mut seed_values = Vec::with_capacity(seeds.len());
        for (u, shares) in &seeds {
            let commitment = self
                .u1
                .get(u)
                .map(|k| k.seed_commitment)
                .unwrap_or_default();
            let check = |s: &[u8; 32]| ct_eq(&seed_commitment(&ctx, *u, s), &commitment);
            match self.reconstruct(&mut cache, shares, check)? {
                Some(s) => seed_values.push((*u, s)),
                None => {
                    return Err(SketchError::Protocol(ProtocolError::BadShares {
                        client: *u,
                        secret: "self-mask seed",
                        check: "commitment",
                    }));
                }
            }
        }
        let mut key_values = Vec::with_capacity(keys.len());
        for (v, shares) in &keys {
            let public = self.u1.get(v).map(|k| k.mask_key).unwrap_or_default();
            let check =
                |s: &[u8; 32]| ct_eq(&MaskKeyPair::from_secret_bytes(*s).public_key().0, &public);
            match self.reconstruct(&mut cache, shares, check)? {
                Some(s) => key_values.push((*v, MaskKeyPair::from_secret_bytes(*s))),
                None => {
                    return Err(SketchError::Protocol(ProtocolError::BadShares {
                        client: *v,
                        secret: "mask secret key",
                        check: "public key",
                    }));
                }
            }
        }
        let mut sum = core::mem::take(&mut self.sum);
        for (u, seed) in &seed_values {
            let m = self_mask(&f, len, seed, &ctx, *u)?;
            for (a, b) in sum.iter_mut().zip(&m.0) {
                f.sub_assign(a, b);
            }
        }
        for (v, key) in &key_values {
            // The survivors that masked with v still carry their term with
            // v; adding v's own terms cancels them.
            let peers: Vec<(ClientId, MaskPublicKey)> = graph
                .neighbours(*v)?
                .into_iter()
                .filter(|u| self.u3.contains(u))
                .filter_map(|u| self.u1.get(&u).map(|k| (u, MaskPublicKey(k.mask_key))))
                .collect();
            let terms = peer_mask_terms(&f, len, key, *v, &peers, &ctx)?;
            let m = combine_terms(&f, len, &terms);
            for (a, b) in sum.iter_mut().zip(&m.0) {
                f.add_assign(a, b);
            }
        }
        Ok(AggregationOutput {
            sum,
            included: self.u3.clone(),
            dropped: self.dropped.clone(),
        })
    }
}

/// docs/threat-model.md S2 at the server: a client whose two keys are
/// equal, equal to a key another client advertised, or of low order in
/// X25519 is refused here, and so drops out at this step, instead of being
/// relayed to its peers, every one of which would then abort. (Keys are
/// fresh for each session and nobody sees another's before the directory
/// goes out, so the first to advertise a key is its owner.)
fn check_advertised(
    id: ClientId,
    keys: &AdvertiseKeys,
    earlier: &BTreeMap<ClientId, AdvertiseKeys>,
) -> SketchResult<()> {
    if ct_eq(&keys.enc_key, &keys.mask_key) {
        return rejected(format!("client {id} advertised one key twice"));
    }
    let taken = earlier.iter().find(|(_, k)| {
        [k.enc_key, k.mask_key]
            .iter()
            .any(|x| ct_eq(x, &keys.enc_key) || ct_eq(x, &keys.mask_key))
    });
    if let Some((owner, _)) = taken {
        return rejected(format!("client {id} advertised a key of client {owner}"));
    }
    // A fixed probe secret: agreement with a low-order point gives the
    // all-zero output whatever the secret, which `agree` refuses.
    let probe = MaskKeyPair::from_secret_bytes([0x5a; 32]);
    for key in [keys.enc_key, keys.mask_key] {
        probe.agree(id, &MaskPublicKey(key))?;
    }
    Ok(())
}

fn parse_elements<F: FiniteField>(f: &F, bytes: &[u8], count: usize) -> SketchResult<Vec<F::Elem>> {
    let w = f.byte_len();
    let expected = count.saturating_mul(w);
    if bytes.len() != expected || w == 0 {
        return Err(SketchError::Decode(DecodeError::WrongLength {
            expected,
            found: bytes.len(),
        }));
    }
    bytes
        .chunks_exact(w)
        .map(|c| {
            f.from_bytes(c)
                .map_err(|_| SketchError::Decode(DecodeError::NonCanonical))
        })
        .collect()
}

fn parse_response(
    responder: ClientId,
    resp: &UnmaskingResponse,
    alive: &BTreeSet<ClientId>,
    dropped: &BTreeSet<ClientId>,
) -> SketchResult<Revealed> {
    let mut seeds = BTreeMap::new();
    let mut keys = BTreeMap::new();
    for (list, out, allowed, own_ok) in [
        (&resp.seed_shares, &mut seeds, alive, true),
        (&resp.key_shares, &mut keys, dropped, false),
    ] {
        for r in list {
            let asked = allowed.contains(&r.owner) || (own_ok && r.owner == responder);
            if !asked {
                return rejected(format!(
                    "client {responder} revealed a share of {} that was not asked for",
                    r.owner
                ));
            }
            let share = SecretShare::from_bytes(&r.share)?;
            if share.id != share_id(responder) {
                return rejected(format!("client {responder} sent a share with another id"));
            }
            if out.insert(r.owner, share).is_some() {
                return rejected(format!(
                    "client {responder} revealed two shares of {}",
                    r.owner
                ));
            }
        }
    }
    Ok(Revealed { seeds, keys })
}
