//! The client's state machine: one [`Client`] per client and aggregation
//! round, fed the server's messages in order.
//!
//! A client aborts (and says nothing more) on any server message that
//! breaks the protocol; see [`Client::handle`] for the checks. Its secrets
//! (two X25519 secret keys, the self-mask seed, the shares it holds) are
//! wiped on drop and never printed by `Debug`. Its input is a vector of
//! generic field elements, which cannot all be wiped (big-integer
//! elements have no `Zeroize`); it is dropped as soon as it is masked.

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

use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use field::FiniteField;
use rand::CryptoRng;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use super::messages::{
    AdvertiseKeys, Attestation, Attestations, ClientBody, ClientEnvelope, ConsistencyRequest,
    EncryptedShare, KeyDirectory, MaskedInput, MaskingRequest, RevealedShare, ServerBody,
    ServerEnvelope, ShareKeys, UnmaskingRequest, UnmaskingResponse,
};
use super::session::{
    SessionConfig, abort, attest_key, attestation_tag, seed_commitment, self_mask, share_aad,
    share_id, share_key, share_nonce,
};
use super::shamir::{SECRET_SHARE_BYTES, SecretShare, split_secret};
use crate::context::ClientId;
use crate::context::RoundContext;
use crate::error::{ProtocolError, SketchError, SketchResult, check_len};
use crate::masking::pairwise::{MaskKeyPair, MaskPublicKey, combine_terms, peer_mask_terms};
use crate::step::Step;
use crate::wire::field_bytes;

/// The plaintext of one encrypted pair of shares: sender, receiver, the
/// share of the mask secret key, the share of the self-mask seed.
pub const SHARE_PLAINTEXT_BYTES: usize = 16 + 2 * SECRET_SHARE_BYTES;
/// The ciphertext of one pair of shares (plaintext plus 16-byte tag).
pub const SHARE_CIPHERTEXT_BYTES: usize = SHARE_PLAINTEXT_BYTES + 16;

/// The rounds a client has masked an input in, per session: a client
/// refuses to mask twice in one round, or in a round not after the last
/// (docs/threat-model.md R3: two masked inputs under the same masks would reveal their
/// difference).
///
/// # Example
///
/// ```
/// use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
/// use syndrome_agg::secagg::client::RoundLedger;
///
/// let mut ledger = RoundLedger::default();
/// let ctx = RoundContext { session: SessionId([0; 32]), round: 4 };
/// assert!(ledger.claim(&ctx).is_ok());
/// assert!(ledger.claim(&ctx).is_err()); // the same round again
/// assert!(ledger.claim(&ctx.next()).is_ok());
/// ```
#[derive(Clone, Debug, Default)]
pub struct RoundLedger {
    last: BTreeMap<[u8; 32], u64>,
}

impl RoundLedger {
    /// Records that the client takes part in `ctx`.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::MessageRejected`] if the client already took part in
    /// this round of this session or a later one.
    pub fn claim(&mut self, ctx: &RoundContext) -> SketchResult<()> {
        if let Some(last) = self.last.get(&ctx.session.0)
            && ctx.round <= *last
        {
            return Err(SketchError::Protocol(ProtocolError::MessageRejected {
                reason: format!(
                    "round {} is not after round {last}, which this client already masked in",
                    ctx.round
                ),
            }));
        }
        self.last.insert(ctx.session.0, ctx.round);
        Ok(())
    }
}

/// The attestation key shared with each peer (docs/threat-model.md S7),
/// derived with the share-encryption key from one X25519 agreement.
type AttestKeys = BTreeMap<ClientId, Zeroizing<[u8; 32]>>;

/// A peer's keys as relayed by the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PeerKeys {
    enc: MaskPublicKey,
    mask: MaskPublicKey,
}

enum State<E> {
    AwaitingDirectory {
        input: Vec<E>,
    },
    AwaitingMaskingRequest {
        input: Vec<E>,
        peers: BTreeMap<ClientId, PeerKeys>,
        own_key_share: SecretShare,
        own_seed_share: SecretShare,
        attest: AttestKeys,
    },
    AwaitingConsistency {
        /// Shares held for each peer it masked with: (key share, seed
        /// share).
        held: BTreeMap<ClientId, (SecretShare, SecretShare)>,
        own_seed_share: SecretShare,
        attest: AttestKeys,
    },
    AwaitingUnmasking {
        held: BTreeMap<ClientId, (SecretShare, SecretShare)>,
        own_seed_share: SecretShare,
        attest: AttestKeys,
        /// The alive set this client attested.
        attested: Vec<ClientId>,
    },
    Done,
    Aborted,
}

impl<E> State<E> {
    fn name(&self) -> &'static str {
        match self {
            Self::AwaitingDirectory { .. } => "waiting for the key directory",
            Self::AwaitingMaskingRequest { .. } => "waiting for the masking request",
            Self::AwaitingConsistency { .. } => "waiting for the consistency request",
            Self::AwaitingUnmasking { .. } => "waiting for the unmasking request",
            Self::Done => "done",
            Self::Aborted => "aborted",
        }
    }
}

/// One client in one aggregation round.
///
/// # Example
///
/// See [`super::server::Server`] for a full run driven by hand.
pub struct Client<F: FiniteField> {
    config: Arc<SessionConfig<F>>,
    id: ClientId,
    enc: MaskKeyPair,
    mask: MaskKeyPair,
    seed: Zeroizing<[u8; 32]>,
    state: State<F::Elem>,
}

impl<F: FiniteField> fmt::Debug for Client<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("id", &self.id)
            .field("state", &self.state.name())
            .finish_non_exhaustive()
    }
}

/// The secrets a client draws at the start: exposed so that a test can
/// play a colluding client whose state the adversary knows (draw them
/// from the same seeded RNG).
pub struct ClientSecrets {
    /// The share-encryption key pair.
    pub enc: MaskKeyPair,
    /// The mask-agreement key pair.
    pub mask: MaskKeyPair,
    /// The self-mask seed.
    pub seed: Zeroizing<[u8; 32]>,
}

impl fmt::Debug for ClientSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSecrets")
            .field("enc", &self.enc)
            .field("mask", &self.mask)
            .finish_non_exhaustive()
    }
}

impl ClientSecrets {
    /// Draws the secrets (the first draws [`Client::new`] makes).
    pub fn generate<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let enc = MaskKeyPair::generate(rng);
        let mask = MaskKeyPair::generate(rng);
        let mut seed = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(seed.as_mut());
        Self { enc, mask, seed }
    }
}

impl<F: FiniteField> Client<F> {
    /// Client `id` with its `input`: draws its keys and seed and returns
    /// its AdvertiseKeys message. `ledger` is the client's record of the
    /// rounds it took part in (docs/threat-model.md R3).
    ///
    /// # Errors
    ///
    /// [`ProtocolError::InvalidPeers`] if `id` is not a client of the
    /// session, [`DecodeError::WrongLength`](crate::DecodeError::WrongLength) for an input of the wrong
    /// length, [`ProtocolError::MessageRejected`] from the ledger.
    pub fn new<R: CryptoRng + ?Sized>(
        config: Arc<SessionConfig<F>>,
        id: ClientId,
        input: Vec<F::Elem>,
        ledger: &mut RoundLedger,
        rng: &mut R,
    ) -> SketchResult<(Self, ClientEnvelope)> {
        if !config.graph().contains(id) {
            return Err(SketchError::Protocol(ProtocolError::InvalidPeers {
                reason: "not a client of this session",
            }));
        }
        check_len(config.vector_len(), input.len())?;
        ledger.claim(config.context())?;
        let ClientSecrets { enc, mask, seed } = ClientSecrets::generate(rng);
        let keys = AdvertiseKeys {
            enc_key: enc.public_key().0,
            mask_key: mask.public_key().0,
            seed_commitment: seed_commitment(config.context(), id, &seed),
        };
        let msg = ClientEnvelope::new(config.context(), id, ClientBody::AdvertiseKeys(keys));
        Ok((
            Self {
                config,
                id,
                enc,
                mask,
                seed,
                state: State::AwaitingDirectory { input },
            },
            msg,
        ))
    }

    /// The client's id.
    pub fn id(&self) -> ClientId {
        self.id
    }

    /// Whether the client has aborted.
    pub fn is_aborted(&self) -> bool {
        matches!(self.state, State::Aborted)
    }

    /// Whether the client has answered the unmasking request.
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Done)
    }

    /// Handles the server's next message and returns the reply.
    ///
    /// Checks, each of which aborts the client for good
    /// (docs/threat-model.md S1-S3, S6, S7):
    /// - key directory: its own keys unaltered and present, every id a
    ///   holder and listed once, no public key twice (its own included),
    ///   at least `t` entries, every peer key contributory in X25519;
    /// - masking request: senders are distinct peers of the directory, at
    ///   least `t - 1` of them, every ciphertext authentic for this
    ///   session, round, sender and receiver;
    /// - consistency request: the alive set names the client, is in
    ///   increasing order without repeats, holds at least `t` of its
    ///   holders (itself included), and every neighbour in it is a peer it
    ///   masked with; the client then attests that set, once;
    /// - unmasking request: the alive and dropped lists are disjoint, hold
    ///   no id twice, do not name the client itself, name only peers it
    ///   masked with, the alive list with the client itself has at least
    ///   `t` members (a smaller one is the consistent-lie attack, S6), the
    ///   lists are exactly those of the set it attested, and at least
    ///   `t - 1` alive peers attested the same set to it (S7).
    ///
    /// A message of the wrong step, session or round, or for another
    /// client, is refused without changing the state (a duplicate or a
    /// replay, docs/threat-model.md R1-R3).
    ///
    /// # Errors
    ///
    /// [`ProtocolError::ProtocolAbort`], [`ProtocolError::AeadFailure`],
    /// [`ProtocolError::NonContributoryKey`] (the client is then aborted);
    /// [`ProtocolError::UnexpectedMessage`] and
    /// [`ProtocolError::MessageRejected`] (it is not).
    pub fn handle<R: CryptoRng + ?Sized>(
        &mut self,
        msg: &ServerEnvelope,
        rng: &mut R,
    ) -> SketchResult<ClientEnvelope> {
        let ctx = *self.config.context();
        if msg.context() != ctx || msg.client != self.id {
            return Err(SketchError::Protocol(ProtocolError::MessageRejected {
                reason: "a message of another session, round or client".into(),
            }));
        }
        let step = msg.body.step();
        let state = core::mem::replace(&mut self.state, State::Aborted);
        let result = match (state, &msg.body) {
            (State::AwaitingDirectory { input }, ServerBody::KeyDirectory(dir)) => {
                self.share_keys(input, dir, rng)
            }
            (
                State::AwaitingMaskingRequest {
                    input,
                    peers,
                    own_key_share,
                    own_seed_share,
                    attest,
                },
                ServerBody::MaskingRequest(req),
            ) => {
                drop(own_key_share);
                self.masked_input(input, &peers, own_seed_share, attest, req)
            }
            (
                State::AwaitingConsistency {
                    held,
                    own_seed_share,
                    attest,
                },
                ServerBody::ConsistencyRequest(req),
            ) => self.attest(held, own_seed_share, attest, req),
            (
                State::AwaitingUnmasking {
                    held,
                    own_seed_share,
                    attest,
                    attested,
                },
                ServerBody::UnmaskingRequest(req),
            ) => self.unmask(&held, &own_seed_share, &attest, &attested, req),
            (state, _) => {
                let err = SketchError::Protocol(ProtocolError::UnexpectedMessage {
                    state: state.name(),
                    found: step,
                });
                self.state = state;
                return Err(err);
            }
        };
        match result {
            Ok((next, body)) => {
                self.state = next;
                Ok(ClientEnvelope::new(&ctx, self.id, body))
            }
            Err(e) => {
                self.state = State::Aborted;
                Err(e)
            }
        }
    }

    fn share_keys<R: CryptoRng + ?Sized>(
        &self,
        input: Vec<F::Elem>,
        dir: &KeyDirectory,
        rng: &mut R,
    ) -> SketchResult<(State<F::Elem>, ClientBody)> {
        let (me, step) = (self.id, Step::ShareKeys);
        let graph = self.config.graph();
        let mut peers = BTreeMap::new();
        let mut seen_keys = BTreeSet::new();
        let mut own_ok = false;
        for (id, keys) in &dir.entries {
            if *id != me && !graph.are_neighbours(me, *id) {
                return Err(abort(me, step, format!("client {id} is not a holder")));
            }
            if !seen_keys.insert(keys.enc_key) || !seen_keys.insert(keys.mask_key) {
                return Err(abort(me, step, "a public key appears twice"));
            }
            if *id == me {
                if own_ok {
                    return Err(abort(me, step, "own entry listed twice"));
                }
                let sent = AdvertiseKeys {
                    enc_key: self.enc.public_key().0,
                    mask_key: self.mask.public_key().0,
                    seed_commitment: seed_commitment(self.config.context(), me, &self.seed),
                };
                if *keys != sent {
                    return Err(abort(me, step, "own keys altered"));
                }
                own_ok = true;
                continue;
            }
            let entry = PeerKeys {
                enc: MaskPublicKey(keys.enc_key),
                mask: MaskPublicKey(keys.mask_key),
            };
            if peers.insert(*id, entry).is_some() {
                return Err(abort(me, step, format!("client {id} listed twice")));
            }
        }
        if !own_ok {
            return Err(abort(me, step, "own keys missing"));
        }
        let t = self.config.threshold();
        if peers.len().saturating_add(1) < t {
            return Err(abort(
                me,
                step,
                format!(
                    "{} holders left, the threshold is {t}",
                    peers.len().saturating_add(1)
                ),
            ));
        }
        // Holders in id order, the client itself among them.
        let mut holders: Vec<ClientId> = peers.keys().copied().collect();
        let at = holders.partition_point(|v| *v < me);
        holders.insert(at, me);
        let ids: Vec<u64> = holders.iter().map(|h| share_id(*h)).collect();
        let key_shares = split_secret(&self.mask.secret_bytes(), t, &ids, rng)?;
        let seed_shares = split_secret(&self.seed, t, &ids, rng)?;
        let ctx = self.config.context();
        let mut out = Vec::with_capacity(peers.len());
        let mut attest = AttestKeys::new();
        let mut own = None;
        for ((holder, ks), ss) in holders.iter().zip(key_shares).zip(seed_shares) {
            if *holder == me {
                own = Some((ks, ss));
                continue;
            }
            let Some(keys) = peers.get(holder) else {
                continue; // every holder but the client itself is a peer
            };
            let shared = self.enc.agree(*holder, &keys.enc).map_err(|_| {
                abort(
                    me,
                    step,
                    format!("client {holder}'s key is not contributory"),
                )
            })?;
            // Checked here, not only at masking, so that a low-order mask
            // key aborts before any share leaves (docs/threat-model.md S2).
            self.mask.agree(*holder, &keys.mask).map_err(|_| {
                abort(
                    me,
                    step,
                    format!("client {holder}'s key is not contributory"),
                )
            })?;
            // The attestation key comes from the same agreement, derived
            // now so that the consistency round needs no more X25519.
            attest.insert(*holder, attest_key(&shared, ctx, me, *holder));
            let key = share_key(&shared, ctx, me, *holder);
            let mut plain = Zeroizing::new(Vec::with_capacity(SHARE_PLAINTEXT_BYTES));
            plain.extend_from_slice(&me.to_le_bytes());
            plain.extend_from_slice(&holder.to_le_bytes());
            plain.extend_from_slice(&ks.to_bytes());
            plain.extend_from_slice(&ss.to_bytes());
            let cipher = ChaCha20Poly1305::new((&*key).into());
            let aad = share_aad(ctx, me, *holder);
            let ciphertext = cipher
                .encrypt(
                    &share_nonce(me, *holder).into(),
                    Payload {
                        msg: &plain,
                        aad: &aad,
                    },
                )
                .map_err(|_| abort(me, step, "encryption failed"))?;
            out.push(EncryptedShare {
                peer: *holder,
                ciphertext,
            });
        }
        let Some((own_key_share, own_seed_share)) = own else {
            return Err(abort(me, step, "own share missing"));
        };
        Ok((
            State::AwaitingMaskingRequest {
                input,
                peers,
                own_key_share,
                own_seed_share,
                attest,
            },
            ClientBody::ShareKeys(ShareKeys { shares: out }),
        ))
    }

    fn masked_input(
        &self,
        input: Vec<F::Elem>,
        peers: &BTreeMap<ClientId, PeerKeys>,
        own_seed_share: SecretShare,
        attest: AttestKeys,
        req: &MaskingRequest,
    ) -> SketchResult<(State<F::Elem>, ClientBody)> {
        let (me, step) = (self.id, Step::MaskedInput);
        let mut held = BTreeMap::new();
        for EncryptedShare { peer, ciphertext } in &req.shares {
            let Some(keys) = peers.get(peer) else {
                return Err(abort(
                    me,
                    step,
                    format!("client {peer} is not a peer of the directory"),
                ));
            };
            if held.contains_key(peer) {
                return Err(abort(me, step, format!("client {peer} listed twice")));
            }
            let pair = open_share(
                &self.enc,
                me,
                *peer,
                &keys.enc,
                self.config.context(),
                ciphertext,
            )?;
            held.insert(*peer, pair);
        }
        let t = self.config.threshold();
        if held.len().saturating_add(1) < t {
            return Err(abort(
                me,
                step,
                format!(
                    "{} peers left, the threshold is {t}",
                    held.len().saturating_add(1)
                ),
            ));
        }
        let f = self.config.field();
        let len = self.config.vector_len();
        let ctx = self.config.context();
        let maskers: Vec<(ClientId, MaskPublicKey)> = held
            .keys()
            .filter_map(|id| peers.get(id).map(|k| (*id, k.mask)))
            .collect();
        let terms = peer_mask_terms(f, len, &self.mask, me, &maskers, ctx)
            .map_err(|e| abort(me, step, e.to_string()))?;
        let pairwise = combine_terms(f, len, &terms);
        let own = self_mask(f, len, &self.seed, ctx, me)?;
        let masked: Vec<F::Elem> = input
            .iter()
            .zip(&pairwise.0)
            .zip(&own.0)
            .map(|((x, p), s)| f.add(&f.add(x, p), s))
            .collect();
        drop(input);
        let body = ClientBody::MaskedInput(MaskedInput {
            modulus: f.characteristic().to_bytes_le(),
            elements: field_bytes(f, &masked),
        });
        Ok((
            State::AwaitingConsistency {
                held,
                own_seed_share,
                attest,
            },
            body,
        ))
    }

    /// Round 3: attests the alive set, once, to every alive peer, after
    /// checking that the set names this client, is in increasing order
    /// without repeats, has at least `t` members among this client and its
    /// neighbours, and names no neighbour this client did not mask with
    /// (docs/threat-model.md S7: a server that shrank this client's
    /// masking set cannot then call its other peers alive).
    fn attest(
        &self,
        held: BTreeMap<ClientId, (SecretShare, SecretShare)>,
        own_seed_share: SecretShare,
        attest: AttestKeys,
        req: &ConsistencyRequest,
    ) -> SketchResult<(State<F::Elem>, ClientBody)> {
        let (me, step) = (self.id, Step::ConsistencyCheck);
        let graph = self.config.graph();
        let increasing = req.alive.windows(2).all(|w| matches!(w, [a, b] if a < b));
        if !increasing {
            return Err(abort(
                me,
                step,
                "the alive set is not in increasing order without repeats",
            ));
        }
        if req.alive.binary_search(&me).is_err() {
            return Err(abort(me, step, "the alive set does not name this client"));
        }
        if let Some(id) = req.alive.iter().find(|id| !graph.contains(**id)) {
            return Err(abort(
                me,
                step,
                format!("client {id} is not in this session"),
            ));
        }
        let mine: Vec<ClientId> = req
            .alive
            .iter()
            .copied()
            .filter(|w| *w != me && graph.are_neighbours(me, *w))
            .collect();
        if let Some(w) = mine.iter().find(|w| !held.contains_key(*w)) {
            return Err(abort(
                me,
                step,
                format!("client {w} is called alive but this client did not mask with it"),
            ));
        }
        let t = self.config.threshold();
        if mine.len().saturating_add(1) < t {
            return Err(abort(
                me,
                step,
                format!(
                    "{} clients alive with this one, the threshold is {t}",
                    mine.len().saturating_add(1)
                ),
            ));
        }
        let ctx = self.config.context();
        let mut tags = Vec::with_capacity(mine.len());
        for w in mine {
            let key = self.pair_attest_key(&attest, w, step)?;
            tags.push(Attestation {
                peer: w,
                tag: attestation_tag(key, ctx, me, w, &req.alive),
            });
        }
        Ok((
            State::AwaitingUnmasking {
                held,
                own_seed_share,
                attest,
                attested: req.alive.clone(),
            },
            ClientBody::Attestations(Attestations { tags }),
        ))
    }

    /// The attestation key this client shares with peer `w`.
    fn pair_attest_key<'k>(
        &self,
        attest: &'k AttestKeys,
        w: ClientId,
        step: Step,
    ) -> SketchResult<&'k [u8; 32]> {
        attest
            .get(&w)
            .map(|k| &**k)
            .ok_or_else(|| abort(self.id, step, format!("client {w} is not a peer")))
    }

    fn unmask(
        &self,
        held: &BTreeMap<ClientId, (SecretShare, SecretShare)>,
        own_seed_share: &SecretShare,
        attest: &AttestKeys,
        attested: &[ClientId],
        req: &UnmaskingRequest,
    ) -> SketchResult<(State<F::Elem>, ClientBody)> {
        let (me, step) = (self.id, Step::Unmasking);
        let mut named = BTreeSet::new();
        for id in req.alive.iter().chain(&req.dropped) {
            if *id == me {
                return Err(abort(me, step, "the request names this client"));
            }
            if !held.contains_key(id) {
                return Err(abort(
                    me,
                    step,
                    format!("client {id} is not a peer this client masked with"),
                ));
            }
            if !named.insert(*id) {
                return Err(abort(
                    me,
                    step,
                    format!("client {id} is named twice (or both alive and dropped)"),
                ));
            }
        }
        // The consistent-lie attack (docs/threat-model.md S6): a server
        // that calls almost everyone dropped collects the key shares of
        // every peer and the seed shares of the one it calls alive, and so
        // unmasks that one input. The server only ever needs the seeds of
        // at least `t` survivors (the sum is over at least `t` inputs), so
        // a request naming fewer is a lie, and answering it reveals more
        // than any honest round would. (The attested-set checks below imply
        // this one; it stays as the first, named refusal of the attack.)
        let t = self.config.threshold();
        if req.alive.len().saturating_add(1) < t {
            return Err(abort(
                me,
                step,
                format!(
                    "{} clients alive with this one, the threshold is {t}",
                    req.alive.len().saturating_add(1)
                ),
            ));
        }
        // docs/threat-model.md S7: the lists are those the attested set
        // implies, and at least t - 1 alive peers attested the same set to
        // this client. Honest clients attest one set each, so no two
        // honest responders answer for different sets.
        let graph = self.config.graph();
        let alive: BTreeSet<ClientId> = attested
            .iter()
            .copied()
            .filter(|w| *w != me && graph.are_neighbours(me, *w))
            .collect();
        let dropped: BTreeSet<ClientId> = held
            .keys()
            .copied()
            .filter(|w| attested.binary_search(w).is_err())
            .collect();
        let asked_alive: BTreeSet<ClientId> = req.alive.iter().copied().collect();
        let asked_dropped: BTreeSet<ClientId> = req.dropped.iter().copied().collect();
        if asked_alive != alive || asked_dropped != dropped {
            return Err(abort(
                me,
                step,
                "the alive and dropped lists are not those of the attested alive set",
            ));
        }
        let mut vouched = BTreeSet::new();
        for a in &req.attestations {
            if !alive.contains(&a.peer) {
                return Err(abort(
                    me,
                    step,
                    format!("an attestation from client {}, not an alive peer", a.peer),
                ));
            }
            if !vouched.insert(a.peer) {
                return Err(abort(
                    me,
                    step,
                    format!("two attestations from client {}", a.peer),
                ));
            }
            let key = self.pair_attest_key(attest, a.peer, step)?;
            let expected = attestation_tag(key, self.config.context(), a.peer, me, attested);
            if !ct_eq(&expected, &a.tag) {
                return Err(abort(
                    me,
                    step,
                    format!(
                        "client {}'s attestation is not of the alive set this client attested",
                        a.peer
                    ),
                ));
            }
        }
        if vouched.len().saturating_add(1) < t {
            return Err(abort(
                me,
                step,
                format!(
                    "{} attestations of the alive set with this client's own, the threshold is {t}",
                    vouched.len().saturating_add(1)
                ),
            ));
        }
        let reveal = |owner: ClientId, share: &SecretShare| RevealedShare {
            owner,
            share: share.to_bytes(),
        };
        let mut seed_shares = vec![reveal(me, own_seed_share)];
        seed_shares.extend(
            req.alive
                .iter()
                .filter_map(|id| held.get(id).map(|(_, s)| reveal(*id, s))),
        );
        let key_shares = req
            .dropped
            .iter()
            .filter_map(|id| held.get(id).map(|(k, _)| reveal(*id, k)))
            .collect();
        Ok((
            State::Done,
            ClientBody::UnmaskingResponse(UnmaskingResponse {
                seed_shares,
                key_shares,
            }),
        ))
    }
}

/// Opens the pair of shares `from` encrypted for `me`: derives the pair's
/// key from `me`'s encryption key pair and `from`'s public key, checks the
/// tag against the associated data of (`share_aad`) this session, round,
/// sender and receiver, and checks the sender, receiver and share ids
/// inside. Returns (share of the mask secret key, share of the self-mask
/// seed).
///
/// # Errors
///
/// [`ProtocolError::AeadFailure`] for any failure (no plaintext is
/// returned or kept), [`DecodeError::NonCanonical`](crate::DecodeError::NonCanonical) for share values out of
/// range.
pub fn open_share(
    own_enc: &MaskKeyPair,
    me: ClientId,
    from: ClientId,
    from_enc: &MaskPublicKey,
    ctx: &RoundContext,
    ciphertext: &[u8],
) -> SketchResult<(SecretShare, SecretShare)> {
    let failure = SketchError::Protocol(ProtocolError::AeadFailure { from, to: me });
    let shared = own_enc.agree(from, from_enc).map_err(|_| failure.clone())?;
    let key = share_key(&shared, ctx, from, me);
    let cipher = ChaCha20Poly1305::new((&*key).into());
    let aad = share_aad(ctx, from, me);
    let plain = Zeroizing::new(
        cipher
            .decrypt(
                &share_nonce(from, me).into(),
                Payload {
                    msg: ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| failure.clone())?,
    );
    if plain.len() != SHARE_PLAINTEXT_BYTES {
        return Err(failure);
    }
    let (ids, shares) = plain.split_at(16);
    let (src, dst) = ids.split_at(8);
    if src != from.to_le_bytes() || dst != me.to_le_bytes() {
        return Err(failure);
    }
    let (ks, ss) = shares.split_at(SECRET_SHARE_BYTES);
    let ks = SecretShare::from_bytes(ks)?;
    let ss = SecretShare::from_bytes(ss)?;
    if ks.id != share_id(me) || ss.id != share_id(me) {
        return Err(failure);
    }
    Ok((ks, ss))
}

/// Whether two 32-byte values are equal, in constant time.
pub(crate) fn ct_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.ct_eq(b).into()
}

/// The length of a [`RevealedShare`]'s bytes.
pub const REVEALED_SHARE_BYTES: usize = SECRET_SHARE_BYTES;
