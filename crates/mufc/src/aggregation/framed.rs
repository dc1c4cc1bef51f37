//! Rounds of masked frames: pairwise masks and the dealer's, the two
//! mask sources whose clients send one masked wire frame each (SecAgg's
//! run is `secagg_halves.rs`).
//!
//! **Pairwise masks**: the key directory is something the parties do. A
//! round has two steps, both messages a real network carries:
//!
//! 1. **Keys** ([`Step::AdvertiseKeys`]). Every client of the ring draws a
//!    fresh X25519 key pair for the round from its operating system and
//!    sends the public key.
//! 2. **Masked input** ([`Step::MaskedInput`]). The server relays the
//!    directory of the ring's keys to every client; each checks that it
//!    names exactly the ring, once each, with its own key unchanged, then
//!    masks its sketch against every other client of the ring (the masks
//!    of each pair cancel in the sum) and sends the masked frame. The
//!    server sums the frames.
//!
//! Pairwise masks tolerate no dropout: a client missing at either step
//! leaves masks that do not cancel, so the round fails
//! ([`MufcError::RingIncomplete`], naming the missing clients) and
//! nothing is decoded. The directory
//! is as honest as the server unless the caller checks it against the
//! keys each client signed (`ClientHalf::check_directory`; `mufc-net`
//! signs them with the clients' certificates: docs/threat-model.md §10,
//! N14); SecAgg's run is the choice for dropouts.
//!
//! **The dealer** ([`Mode::Dealer`], `syndrome_agg::masking::dealer`) is
//! a third party in place of the first step: the server asks the dealer
//! (`dealer.rs`) for the announced ring as soon as the round opens, and
//! the dealer seals a fresh seed to each client under the key the two
//! share and returns the correction that makes the masks sum to zero;
//! the server relays each client its sealed seed, and adds the
//! correction to the sum. A client's one message is its masked input:
//! nothing it could send before its seed tells the server more than the
//! frame does, and a missing client fails the round at that step as it
//! would at any other. The server holds no pair's key: it can neither
//! open a seal nor make one that opens.

mod client;
mod dealer;
mod server;
#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};
use syndrome_agg::masking::dealer::SealKey;
use syndrome_agg::masking::pairwise::{MaskKeyPair, MaskPublicKey};
use syndrome_agg::{ProtocolError, SketchError};

use crate::{ClientId, MufcError, MufcResult};

pub(super) use client::FramedClient;
#[cfg(test)]
pub(crate) use dealer::DealerKeys;
pub(crate) use dealer::{DealerParty, PairKeys};
pub(super) use server::FramedServer;

/// Which two-step round a client's half runs, with what it masks with.
#[derive(Debug)]
pub(super) enum Mode {
    /// Pairwise masks against the directory's keys, with the client's
    /// fresh key pair of the round.
    Pairwise(MaskKeyPair),
    /// The mask of a seed the dealer sealed under the key this client
    /// shares with the dealer.
    Dealer(SealKey),
}

/// The client id the correction's frame names, and under which it is
/// recorded with the masked inputs (no client has it: ids come from the
/// roster, and the server checks every client frame's id against its
/// sender).
pub(crate) const CORRECTION: u64 = u64::MAX;

/// The format version of the messages below (2: a dealt round's client
/// no longer says it is ready, and a masked input is its frame alone).
const VERSION: u8 = 2;

/// A client's message of the keys' step to the server. (Its message of
/// the masked-input step is its sketch's wire frame alone, which names
/// its client and round: an envelope would only repeat them.)
#[derive(Debug, Serialize, Deserialize)]
pub(super) enum ToServer {
    /// Step 1: the client's public key for this round.
    Key {
        client: u64,
        session: [u8; 32],
        round: u64,
        key: MaskPublicKey,
    },
}

/// The server's message to a client with pairwise masks: the ring's
/// keys.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Directory {
    session: [u8; 32],
    round: u64,
    keys: Vec<(u64, MaskPublicKey)>,
}

/// The server's request to the dealer: the clients of the round.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct DealRequest {
    session: [u8; 32],
    round: u64,
    ring: Vec<u64>,
}

/// The server's message to a client with dealt masks: its sealed seed.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct SealedSeed {
    session: [u8; 32],
    round: u64,
    #[serde(with = "serde_bytes")]
    sealed: Vec<u8>,
}

/// The dealer's answer to the server: every client's sealed seed, and the
/// correction as the wire frame of an empty sketch masked with it (from
/// the pseudo-client [`CORRECTION`]).
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct Dealt {
    session: [u8; 32],
    round: u64,
    sealed: Vec<(u64, SealedBytes)>,
    #[serde(with = "serde_bytes")]
    correction: Vec<u8>,
}

/// A sealed seed's bytes, in one piece.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub(super) struct SealedBytes(#[serde(with = "serde_bytes")] pub(super) Vec<u8>);

pub(super) fn to_bytes(value: &impl Serialize) -> MufcResult<Vec<u8>> {
    postcard::to_extend(value, vec![VERSION])
        .map_err(|e| MufcError::Remote(format!("encoding a round's message: {e}")))
}

pub(super) fn from_bytes<'a, T: Deserialize<'a>>(
    bytes: &'a [u8],
    max: usize,
    what: &str,
) -> MufcResult<T> {
    let refuse = |reason: String| -> MufcError {
        SketchError::Protocol(ProtocolError::MessageRejected {
            reason: format!("{what}: {reason}"),
        })
        .into()
    };
    if bytes.len() > max {
        return Err(refuse(format!("{} bytes, at most {max}", bytes.len())));
    }
    let (&version, body) = bytes
        .split_first()
        .ok_or_else(|| refuse("no bytes".into()))?;
    if version != VERSION {
        return Err(refuse(format!(
            "format version {version}, this build reads {VERSION}"
        )));
    }
    let (value, rest) = postcard::take_from_bytes(body).map_err(|e| refuse(e.to_string()))?;
    if !rest.is_empty() {
        return Err(refuse(format!("{} trailing bytes", rest.len())));
    }
    Ok(value)
}

pub(super) fn rejected(reason: String) -> MufcError {
    SketchError::Protocol(ProtocolError::MessageRejected { reason }).into()
}

/// The masked part of a message the server received from `from`, as the
/// server sums it: a client's sketch frame (pairwise or dealt masks), the
/// correction frame in the dealer's answer (the pseudo-client
/// `u64::MAX`), or a SecAgg client's masked-input message whole; `None`
/// for a message of another step (keys, shares, readiness). The sender
/// decides how the bytes are read: postcard carries no schema, so a
/// client's key message could parse as a dealer's answer.
pub(crate) fn masked_message(from: ClientId, bytes: &[u8]) -> Option<Vec<u8>> {
    use syndrome_agg::secagg::messages::{ClientBody, ClientEnvelope};
    use syndrome_agg::wire::Frame;
    let framed = |frame: &[u8]| Frame::parse(frame, usize::MAX).is_ok();
    if from.0 == u64::MAX {
        let dealt = from_bytes::<Dealt>(bytes, usize::MAX, "").ok()?;
        return framed(&dealt.correction).then_some(dealt.correction);
    }
    if framed(bytes) {
        return Some(bytes.to_vec());
    }
    match ClientEnvelope::parse(bytes, usize::MAX).ok()?.body {
        ClientBody::MaskedInput(_) => Some(bytes.to_vec()),
        _ => None,
    }
}

/// The masked elements of a masked message ([`masked_message`]'s), as
/// bytes: what the tests compare between rounds.
#[cfg(test)]
pub(crate) fn masked_elements(masked: &[u8]) -> Option<Vec<u8>> {
    use syndrome_agg::secagg::messages::{ClientBody, ClientEnvelope};
    use syndrome_agg::wire::Frame;
    if let Ok(f) = Frame::parse(masked, usize::MAX) {
        return Some(f.elements);
    }
    match ClientEnvelope::parse(masked, usize::MAX).ok()?.body {
        ClientBody::MaskedInput(m) => Some(m.elements),
        _ => None,
    }
}
