//! A client's half of one round in progress ([`ClientRound`]), and what
//! it sent in the last committed round ([`SentRound`]).

use std::time::Duration;

use num_bigint::BigUint;

use crate::aggregation::{ClientHalf, RoundProtocol, RoundSpec, Sends};
use crate::remote::client::trained::Local;
use crate::remote::plain::PlainClient;
use crate::{ClientId, MufcError, MufcResult};

/// What a client sent in the last committed round that included it: the
/// round's number and the histogram its message encoded, the base a
/// change round's change is taken against
/// ([`Sends::Changes`](crate::remote::Sends::Changes)). Opaque: a client's store
/// keeps it ([`RemoteClient::sent`](crate::remote::RemoteClient::sent)) and gives it back on restore
/// ([`RemoteClient::with_sent`](crate::remote::RemoteClient::with_sent)), so that a restarted client joins change
/// rounds.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SentRound {
    pub(crate) round: u64,
    pub(crate) histogram: Vec<(BigUint, u64)>,
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

/// A client's half of one round in progress.
pub struct ClientRound {
    pub(crate) half: Box<dyn ClientHalf>,
    pub(crate) round: u64,
    /// The sketch the round carries (none in a change round, which sends
    /// a change): the client keeps it once the round commits.
    pub(crate) sketch: Option<syndrome_agg::AnySketch>,
    /// The client's histogram at the join (a removal may come before the
    /// commit): what the sketch encodes, and the base of the next change
    /// round once this one commits.
    pub(crate) histogram: Vec<(BigUint, u64)>,
    /// The client's training in this round (its first; zero after).
    pub(crate) training: Duration,
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
    /// [`MufcError::RoundRefused`](crate::MufcError::RoundRefused) naming the first client whose key the
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
    /// [`RemoteClient::took_part`](crate::remote::RemoteClient::took_part).
    pub fn summed(&self) -> Option<Vec<ClientId>> {
        self.half.summed().map(std::borrow::Cow::into_owned)
    }

    /// The steps of the round's protocol, in the order the client answers
    /// them: SecAgg's five ([`SecAggStep::ALL`](crate::SecAggStep::ALL)),
    /// pairwise masks' two (keys, masked input), or dealt masks' one
    /// (masked input, once the sealed seed came).
    pub fn steps(&self) -> &'static [crate::SecAggStep] {
        self.half.steps()
    }
}

/// Client `id`'s half and message of the plain round of `spec`: its
/// centroids and cluster sizes (none once it forgot every point). The
/// round must be a plain one of whole messages that names the client.
pub(crate) fn join_plain(
    spec: &RoundSpec,
    id: ClientId,
    local: &Local,
) -> MufcResult<(ClientRound, Option<Vec<u8>>)> {
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
    Ok((round, Some(first)))
}
