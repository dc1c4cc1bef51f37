//! The one error type of this crate.

use field::FieldError;
use thiserror::Error;

/// Everything that can go wrong in `syndrome-agg`: invalid parameters,
/// mismatched sketches, decoder rejections, masking and wire-format errors.
///
/// The decoder variants follow the decoder contract of the threat model
/// (`WrongLength`, `NonCanonical`, `TooManyKeys`, `LocatorDoesNotSplit`,
/// `RepeatedRoot`, `KeyOutOfRange`, `CountOutOfRange`, `CheckMismatch`):
/// a decoder returns the exact vector or one of these, never a wrong vector.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::{SketchError, SketchParams};
///
/// // Key 0 is invisible in the power sums, so the key domain starts at 1;
/// // a domain of size 0 is refused.
/// let err = SketchParams::new(4, 0u32).validate(Mersenne61).unwrap_err();
/// assert!(matches!(err, SketchError::InvalidParams { .. }));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum SketchError {
    /// Parameters that cannot work (empty key domain, zero capacity, a
    /// field too small for the key domain or the count bound, ...).
    #[error("invalid parameters: {reason}")]
    InvalidParams {
        /// What is wrong, in words.
        reason: String,
    },
    /// A field that cannot hold the key domain: keys `1..=N` need `p > N`.
    #[error(
        "field too small: modulus of {modulus_bits} bits, key domain needs more than {needed_bits} bits"
    )]
    FieldTooSmall {
        /// Bits of the field's modulus.
        modulus_bits: u64,
        /// Bits of the bound the modulus must exceed.
        needed_bits: u64,
    },
    /// Key 0, or a key above the key domain `N`, given to an encoder.
    #[error("key {key} outside the key domain [1, {domain}]")]
    KeyOutOfDomain {
        /// The key, in decimal.
        key: String,
        /// The key domain `N`, in decimal.
        domain: String,
    },
    /// A count outside what the count policy allows, given to an encoder
    /// or helper.
    #[error("count {count} not allowed by the count policy: {reason}")]
    InvalidCount {
        /// The count, in decimal.
        count: String,
        /// The policy's rule.
        reason: &'static str,
    },
    /// Two sketches (or a sketch and a message) with different fields or
    /// parameters cannot be added (minisketch's merge rule).
    #[error("sketch parameters or fields differ: {what}")]
    ParamsMismatch {
        /// Which parameter differs.
        what: &'static str,
    },
    /// Decoder: a syndrome vector or frame of the wrong length.
    #[error("wrong length: expected {expected}, found {found}")]
    WrongLength {
        /// The length the parameters require.
        expected: usize,
        /// The length that was given.
        found: usize,
    },
    /// Decoder or parser: an element encoding that is not canonical (not
    /// below the modulus).
    #[error("non-canonical element encoding")]
    NonCanonical,
    /// Decoder: the syndromes need more than `capacity` keys (over
    /// capacity).
    #[error("too many keys: capacity {capacity}, the syndromes need at least {needed}")]
    TooManyKeys {
        /// The capacity t.
        capacity: usize,
        /// A lower bound on the number of keys the syndromes need.
        needed: usize,
    },
    /// Decoder: the locator polynomial does not split into linear factors
    /// over the field (the syndromes are not those of at most t keys).
    #[error("locator polynomial does not split into distinct linear factors")]
    LocatorDoesNotSplit,
    /// Decoder: the locator polynomial has a repeated root.
    #[error("locator polynomial has a repeated root")]
    RepeatedRoot,
    /// Decoder: a located key lies outside `[1, N]`.
    #[error("decoded key {key} outside the key domain [1, {domain}]")]
    KeyOutOfRange {
        /// The decoded key, in decimal.
        key: String,
        /// The key domain `N`, in decimal.
        domain: String,
    },
    /// Decoder: a decoded count is zero, or outside what the count policy
    /// allows.
    #[error("decoded count {count} for key {key} is not allowed: {reason}")]
    CountOutOfRange {
        /// The key, in decimal.
        key: String,
        /// The count (canonical or centered representative), in decimal.
        count: String,
        /// Why it is refused.
        reason: &'static str,
    },
    /// Decoder: the candidate vector does not re-encode to the received
    /// syndromes (the first mismatching index is given, 1-based).
    #[error("re-encoded syndromes differ from the received ones at index {index}")]
    CheckMismatch {
        /// The first syndrome index (1-based) that differs.
        index: usize,
    },
    /// Decoder: randomized root finding gave up after its fixed budget.
    #[error("root finding exhausted its budget of {attempts} attempts")]
    Timeout {
        /// The attempt budget.
        attempts: u32,
    },
    /// Wide keys: a key longer than the configured maximum.
    #[error("key of {len} bytes exceeds the maximum of {max} bytes")]
    KeyTooLong {
        /// The key's length.
        len: usize,
        /// The maximum.
        max: usize,
    },
    /// Wide keys: two different keys given to one encoder hash to the same
    /// field element, or a decoded payload does not hash back to its
    /// locator (a collision of the keyed hash, or inconsistent syndromes).
    #[error("wide-key checksum failed: {reason}")]
    HashMismatch {
        /// Which check failed.
        reason: &'static str,
    },
    /// Masking: a peer public key that gives a non-contributory X25519
    /// shared secret (all-zero or low-order point).
    #[error("peer {peer} sent a non-contributory X25519 public key")]
    NonContributoryKey {
        /// The peer's client id.
        peer: u64,
    },
    /// Masking: a client named itself, or a peer twice.
    #[error("invalid peer set: {reason}")]
    InvalidPeers {
        /// What is wrong.
        reason: &'static str,
    },
    /// Aggregation: a message from the wrong session or round, a duplicate
    /// client, or too few clients.
    #[error("message rejected: {reason}")]
    MessageRejected {
        /// Why.
        reason: String,
    },
    /// Wire format: a frame larger than the configured cap (checked before
    /// decoding anything).
    #[error("frame of {len} bytes exceeds the cap of {max} bytes")]
    FrameTooLarge {
        /// The frame's length.
        len: usize,
        /// The cap.
        max: usize,
    },
    /// Wire format: the bytes are not a valid frame.
    #[error("malformed frame: {reason}")]
    Malformed {
        /// What the parser found.
        reason: String,
    },
    /// Wire format: an unsupported format version.
    #[error("unsupported wire version {found} (this build reads {supported})")]
    UnsupportedVersion {
        /// The version in the frame.
        found: u16,
        /// The version this build reads.
        supported: u16,
    },
    /// Shamir: a share id that is zero modulo the field's characteristic
    /// (the share would be the secret itself; cf. cloudflare/circl#644).
    #[error("share id {id} is zero modulo the field's characteristic")]
    ShareIdZero {
        /// The id, in decimal.
        id: String,
    },
    /// Shamir: two shares (or share holders) with the same id modulo the
    /// characteristic (TOB-BSV-2).
    #[error(
        "share id {id} is the same point as share id {earlier} (equal modulo the field's characteristic)"
    )]
    DuplicateShareId {
        /// The later id, in decimal, as given.
        id: String,
        /// The earlier id it collides with, in decimal, as given.
        earlier: String,
    },
    /// Shamir: fewer shares than the threshold; nothing is reconstructed.
    #[error("too few shares: {have}, the threshold is {need}")]
    TooFewShares {
        /// The number of shares given.
        have: usize,
        /// The threshold.
        need: usize,
    },
    /// Secure aggregation: the shares of a client's secret do not
    /// reconstruct a value that matches its public key or commitment, even
    /// after error correction (docs/threat-model.md S4).
    #[error("the shares of client {client}'s {secret} are inconsistent with its {check}")]
    BadShares {
        /// The client whose secret was reconstructed.
        client: u64,
        /// Which secret (`"self-mask seed"` or `"mask secret key"`).
        secret: &'static str,
        /// What it was checked against.
        check: &'static str,
    },
    /// Secure aggregation: too few clients are left at some step; the
    /// server aborts and releases nothing (docs/threat-model.md D4, D5).
    #[error("not enough clients at {step}: {have}, at least {need} needed")]
    NotEnoughClients {
        /// The step at which the count fell short.
        step: crate::secagg::Step,
        /// How many clients (or shares) were there.
        have: usize,
        /// How many are needed.
        need: usize,
    },
    /// Secure aggregation: a client refuses a server message that breaks
    /// the protocol (both shares asked for one peer, tampered key list,
    /// ...) and aborts without revealing anything (docs/threat-model.md S1, S2).
    #[error("client {client} aborts at {step}: {reason}")]
    ProtocolAbort {
        /// The aborting client.
        client: u64,
        /// The step it was in.
        step: crate::secagg::Step,
        /// Why.
        reason: String,
    },
    /// Secure aggregation: an encrypted share failed authentication (a
    /// flipped bit, swapped sender and receiver, another session or round:
    /// docs/threat-model.md S3). No plaintext is used.
    #[error("encrypted share from {from} to {to} failed authentication")]
    AeadFailure {
        /// The claimed sender.
        from: u64,
        /// The receiver.
        to: u64,
    },
    /// Secure aggregation: a message of the wrong step for the receiver's
    /// state (a replay, a duplicate, or a message after the state moved on).
    #[error("unexpected message: the receiver is {state}, the message is for {found}")]
    UnexpectedMessage {
        /// The receiver's state.
        state: &'static str,
        /// The step of the message.
        found: crate::secagg::Step,
    },
    /// An error of the field algorithms that has no more specific meaning
    /// here.
    #[error(transparent)]
    Field(#[from] FieldError),
}

/// [`SketchError::WrongLength`] unless `found == expected`: every vector
/// from outside is checked against the length its parameters require.
pub(crate) fn check_len(expected: usize, found: usize) -> crate::SketchResult<()> {
    if found == expected {
        Ok(())
    } else {
        Err(SketchError::WrongLength { expected, found })
    }
}

pub(crate) fn invalid(reason: impl Into<String>) -> SketchError {
    SketchError::InvalidParams {
        reason: reason.into(),
    }
}
