//! The protocol's messages and their wire format: versioned postcard
//! envelopes, parsed defensively (the conventions of [`crate::wire`]: a
//! size cap checked before decoding, no trailing bytes, typed errors).
//!
//! Every envelope names the wire version, the session, the aggregation
//! round, the step and the client it is from (client to server) or for
//! (server to client), so a receiver refuses a message of another session,
//! round or step before looking inside (docs/threat-model.md R2).

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use core::fmt;

use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use super::bounded;
use crate::context::ClientId;
use crate::context::RoundContext;
use crate::error::{SumError, SumResult, WireError};
use crate::step::Step;
use crate::wire::WIRE_VERSION;

/// A client's public keys and commitment (round 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdvertiseKeys {
    /// X25519 public key for the encryption of shares.
    pub enc_key: [u8; 32],
    /// X25519 public key for pairwise mask agreement.
    pub mask_key: [u8; 32],
    /// SHA-256 commitment to the self-mask seed, checked by the server
    /// after reconstruction (docs/threat-model.md S4).
    pub seed_commitment: [u8; 32],
}

/// One encrypted pair of shares: to `peer` (in [`ShareKeys`]) or from
/// `peer` (in [`MaskingRequest`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EncryptedShare {
    /// The other end.
    pub peer: ClientId,
    /// ChaCha20-Poly1305 ciphertext and tag.
    #[serde(deserialize_with = "bounded::vec")]
    pub ciphertext: Vec<u8>,
}

/// A client's encrypted shares for its holders (round 1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShareKeys {
    /// One entry per holder other than the sender.
    #[serde(deserialize_with = "bounded::vec")]
    pub shares: Vec<EncryptedShare>,
}

/// A client's masked input (round 2): fixed-width canonical little-endian
/// field elements, concatenated.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaskedInput {
    /// The field's modulus, little endian, no trailing zero bytes.
    #[serde(deserialize_with = "bounded::vec")]
    pub modulus: Vec<u8>,
    /// The masked vector.
    #[serde(deserialize_with = "bounded::vec")]
    pub elements: Vec<u8>,
}

/// One revealed share: the share (the fixed-width encoding of
/// `SecretShare`) of `owner`'s secret.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RevealedShare {
    /// Whose secret.
    pub owner: ClientId,
    /// The share's bytes, wiped on drop.
    #[serde(
        serialize_with = "bounded::serialize_secret",
        deserialize_with = "bounded::secret_vec"
    )]
    pub share: Zeroizing<Vec<u8>>,
}

impl fmt::Debug for RevealedShare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RevealedShare")
            .field("owner", &self.owner)
            .finish_non_exhaustive()
    }
}

/// One attestation: an HMAC tag (`attestation_tag`) by which
/// `peer` vouches, to the one client it is addressed to, for the alive set
/// both were sent. In [`Attestations`] `peer` is the receiver; in
/// [`UnmaskingRequest`] it is the sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestation {
    /// The other end.
    pub peer: ClientId,
    /// HMAC-SHA256 under the pair's attestation key.
    pub tag: [u8; 32],
}

/// A survivor's attestations of the alive set (round 3): one per alive
/// peer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attestations {
    /// `peer` is the receiver.
    #[serde(deserialize_with = "bounded::vec")]
    pub tags: Vec<Attestation>,
}

/// A survivor's answer to the unmasking request (round 4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnmaskingResponse {
    /// Shares of the self-mask seeds of clients the server called alive
    /// (and of the responder itself).
    #[serde(deserialize_with = "bounded::vec")]
    pub seed_shares: Vec<RevealedShare>,
    /// Shares of the mask secret keys of clients the server called
    /// dropped.
    #[serde(deserialize_with = "bounded::vec")]
    pub key_shares: Vec<RevealedShare>,
}

/// What a client sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ClientBody {
    /// Round 0.
    AdvertiseKeys(AdvertiseKeys),
    /// Round 1.
    ShareKeys(ShareKeys),
    /// Round 2.
    MaskedInput(MaskedInput),
    /// Round 3.
    Attestations(Attestations),
    /// Round 4.
    UnmaskingResponse(UnmaskingResponse),
}

impl ClientBody {
    /// The step of the message.
    pub fn step(&self) -> Step {
        match self {
            Self::AdvertiseKeys(_) => Step::AdvertiseKeys,
            Self::ShareKeys(_) => Step::ShareKeys,
            Self::MaskedInput(_) => Step::MaskedInput,
            Self::Attestations(_) => Step::ConsistencyCheck,
            Self::UnmaskingResponse(_) => Step::Unmasking,
        }
    }
}

/// The keys the server relays to a client: its holders that advertised,
/// itself included (round 0 to 1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyDirectory {
    /// `(client, its keys)`.
    #[serde(deserialize_with = "bounded::vec")]
    pub entries: Vec<(ClientId, AdvertiseKeys)>,
}

/// The encrypted shares addressed to a client from the peers that sent
/// theirs (round 1 to 2). The senders are the peers it masks with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MaskingRequest {
    /// `peer` is the sender.
    #[serde(deserialize_with = "bounded::vec")]
    pub shares: Vec<EncryptedShare>,
}

/// The round's alive set: every client whose masked input the server
/// received, the same list for every client (round 2 to 3).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConsistencyRequest {
    /// The alive set, in increasing id order.
    #[serde(deserialize_with = "bounded::vec")]
    pub alive: Vec<ClientId>,
}

/// Which of a client's peers the server says are alive (sent a masked
/// input) and which dropped (round 3 to 4), with the attestations of the
/// alive set addressed to the client.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnmaskingRequest {
    /// Peers whose self-mask seed share is asked for.
    #[serde(deserialize_with = "bounded::vec")]
    pub alive: Vec<ClientId>,
    /// Peers whose mask secret key share is asked for.
    #[serde(deserialize_with = "bounded::vec")]
    pub dropped: Vec<ClientId>,
    /// The attestations addressed to this client; `peer` is the sender.
    #[serde(deserialize_with = "bounded::vec")]
    pub attestations: Vec<Attestation>,
}

/// What the server sends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServerBody {
    /// Round 0 to 1.
    KeyDirectory(KeyDirectory),
    /// Round 1 to 2.
    MaskingRequest(MaskingRequest),
    /// Round 2 to 3.
    ConsistencyRequest(ConsistencyRequest),
    /// Round 3 to 4.
    UnmaskingRequest(UnmaskingRequest),
}

impl ServerBody {
    /// The step the message asks the client to perform.
    pub fn step(&self) -> Step {
        match self {
            Self::KeyDirectory(_) => Step::ShareKeys,
            Self::MaskingRequest(_) => Step::MaskedInput,
            Self::ConsistencyRequest(_) => Step::ConsistencyCheck,
            Self::UnmaskingRequest(_) => Step::Unmasking,
        }
    }
}

/// A protocol message with its header: a client's message
/// ([`ClientEnvelope`]) or the server's message to one client
/// ([`ServerEnvelope`]). One generic type so that both directions share the
/// header, its parser and its checks.
///
/// # Example
///
/// ```
/// use masked_sum::masking::pairwise::{RoundContext, SessionId};
/// use masked_sum::secagg::messages::*;
///
/// let ctx = RoundContext { session: SessionId([1; 32]), round: 0 };
/// let msg = ClientEnvelope::new(&ctx, 7, ClientBody::AdvertiseKeys(AdvertiseKeys {
///     enc_key: [1; 32], mask_key: [2; 32], seed_commitment: [3; 32],
/// }));
/// let bytes = msg.to_bytes()?;
/// assert_eq!(ClientEnvelope::parse(&bytes, 1 << 20)?, msg);
/// assert!(ClientEnvelope::parse(&bytes[1..], 1 << 20).is_err());
/// assert!(ClientEnvelope::parse(&bytes, 8).is_err()); // over the cap
/// # Ok::<(), masked_sum::SumError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Envelope<B> {
    /// [`WIRE_VERSION`].
    pub version: u16,
    /// The session.
    pub session: [u8; 32],
    /// The aggregation round.
    pub round: u64,
    /// The sender of a client's message, the receiver of the server's.
    pub client: ClientId,
    /// The message.
    pub body: B,
}

/// A client's message with its header.
pub type ClientEnvelope = Envelope<ClientBody>;

/// A server's message to one client, with its header.
pub type ServerEnvelope = Envelope<ServerBody>;

fn malformed(reason: impl Into<String>) -> SumError {
    SumError::Wire(WireError::Malformed {
        reason: reason.into(),
    })
}

fn parse<T: for<'de> Deserialize<'de>>(bytes: &[u8], max_len: usize) -> SumResult<T> {
    if bytes.len() > max_len {
        return Err(SumError::Wire(WireError::FrameTooLarge {
            len: bytes.len(),
            max: max_len,
        }));
    }
    // Every list is charged against a budget of the frame's size before it
    // is allocated (docs/threat-model.md O1).
    let _budget = bounded::scope(bytes.len());
    let (msg, rest): (T, &[u8]) =
        postcard::take_from_bytes(bytes).map_err(|e| malformed(e.to_string()))?;
    if !rest.is_empty() {
        return Err(malformed(format!("{} trailing bytes", rest.len())));
    }
    Ok(msg)
}

fn check_version(version: u16) -> SumResult<()> {
    if version == WIRE_VERSION {
        Ok(())
    } else {
        Err(SumError::Wire(WireError::UnsupportedVersion {
            found: version,
            supported: WIRE_VERSION,
        }))
    }
}

impl<B: Serialize + for<'de> Deserialize<'de>> Envelope<B> {
    /// A message in `ctx` from (or, for the server's, to) `client`.
    pub fn new(ctx: &RoundContext, client: ClientId, body: B) -> Self {
        Self {
            version: WIRE_VERSION,
            session: ctx.session.0,
            round: ctx.round,
            client,
            body,
        }
    }

    /// The session and round the header names.
    pub fn context(&self) -> RoundContext {
        RoundContext {
            session: crate::masking::pairwise::SessionId(self.session),
            round: self.round,
        }
    }

    /// Serializes with postcard.
    ///
    /// # Errors
    ///
    /// [`WireError::Malformed`] if postcard fails (it does not for these
    /// types).
    pub fn to_bytes(&self) -> SumResult<Vec<u8>> {
        postcard::to_allocvec(self).map_err(|e| malformed(e.to_string()))
    }

    /// Parses bytes from outside.
    ///
    /// # Errors
    ///
    /// [`WireError::FrameTooLarge`] above `max_len` (checked first),
    /// [`WireError::Malformed`] for anything but exactly one envelope,
    /// [`WireError::UnsupportedVersion`] for another version.
    pub fn parse(bytes: &[u8], max_len: usize) -> SumResult<Self> {
        let msg: Self = parse(bytes, max_len)?;
        check_version(msg.version)?;
        Ok(msg)
    }
}
