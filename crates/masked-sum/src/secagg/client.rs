//! The client's state machine: one [`Client`] per client and aggregation
//! round, fed the server's messages in order.
//!
//! A client aborts (and says nothing more) on any server message that
//! breaks the protocol; see [`Client::handle`] for the checks. Its secrets
//! (two X25519 secret keys, the self-mask seed, the shares it holds) are
//! wiped on drop and never printed by `Debug`. Its input is a vector of
//! generic field elements, which cannot all be wiped (big-integer
//! elements have no `Zeroize`); it is dropped as soon as it is masked.
//!
//! This file holds the state machine itself: the client, its states and
//! [`Client::handle`], which checks that a message is for this client,
//! session, round and step and hands it to the step's handler. Each handler
//! lives in its own module, with the checks of the server's request it
//! answers: `directory` (ShareKeys), `masking` (MaskedInput),
//! `consistency` (ConsistencyCheck) and `unmasking` (Unmasking). The leaves
//! beside them: `ledger` ([`RoundLedger`]), `secrets` ([`ClientSecrets`])
//! and `shares` ([`open_share`] and the sizes of the encrypted shares).

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use core::fmt;
use std::collections::BTreeMap;
use std::sync::Arc;

use field::FiniteField;
use rand::CryptoRng;
use zeroize::Zeroizing;

use super::messages::{AdvertiseKeys, ClientBody, ClientEnvelope, ServerBody, ServerEnvelope};
use super::session::{SessionConfig, seed_commitment};
use super::shamir::SecretShare;
use crate::context::ClientId;
use crate::error::{ProtocolError, SumError, SumResult, check_len};
use crate::masking::pairwise::{MaskKeyPair, MaskPublicKey};

mod consistency;
mod directory;
mod ledger;
mod masking;
mod secrets;
mod shares;
mod unmasking;

pub use ledger::RoundLedger;
pub use secrets::ClientSecrets;
pub use shares::{REVEALED_SHARE_BYTES, SHARE_CIPHERTEXT_BYTES, SHARE_PLAINTEXT_BYTES, open_share};

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
    /// The alive set of the consistency request, once the client attested
    /// it: the clients whose inputs the server can sum.
    summed: Option<Vec<ClientId>>,
}

impl<F: FiniteField> fmt::Debug for Client<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("id", &self.id)
            .field("state", &self.state.name())
            .finish_non_exhaustive()
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
    /// session, [`SumError::WrongLength`] for an input of the wrong
    /// length, [`ProtocolError::MessageRejected`] from the ledger.
    pub fn new<R: CryptoRng + ?Sized>(
        config: Arc<SessionConfig<F>>,
        id: ClientId,
        input: Vec<F::Elem>,
        ledger: &mut RoundLedger,
        rng: &mut R,
    ) -> SumResult<(Self, ClientEnvelope)> {
        if !config.graph().contains(id) {
            return Err(SumError::Protocol(ProtocolError::InvalidPeers {
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
                summed: None,
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

    /// The clients whose inputs the server can sum, once this client
    /// attested the round's alive set (the consistency step): that set,
    /// in increasing id order. The unmasking request must match it, so
    /// the only sum the server can take with this client's help is of
    /// these clients. `None` before.
    pub fn summed(&self) -> Option<&[ClientId]> {
        self.summed.as_deref()
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
    ) -> SumResult<ClientEnvelope> {
        let ctx = *self.config.context();
        if msg.context() != ctx || msg.client != self.id {
            return Err(SumError::Protocol(ProtocolError::MessageRejected {
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
                let err = SumError::Protocol(ProtocolError::UnexpectedMessage {
                    state: state.name(),
                    found: step,
                });
                self.state = state;
                return Err(err);
            }
        };
        match result {
            Ok((next, body)) => {
                if let State::AwaitingUnmasking { attested, .. } = &next {
                    self.summed = Some(attested.clone());
                }
                self.state = next;
                Ok(ClientEnvelope::new(&ctx, self.id, body))
            }
            Err(e) => {
                self.state = State::Aborted;
                Err(e)
            }
        }
    }
}
