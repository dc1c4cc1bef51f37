//! Masking, aggregation and secure-aggregation protocol errors: one group of [`SumError`](crate::SumError).

use crate::step::Step;
use thiserror::Error;

/// Masking, aggregation and secure-aggregation protocol errors.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ProtocolError {
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
        step: Step,
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
        step: Step,
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
        found: Step,
    },
}
