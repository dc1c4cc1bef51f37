//! The server's half of one round in progress ([`ServerRound`]), what to
//! do after each step ([`RoundStep`]), and what a committed round did
//! ([`RoundReport`]).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use crate::aggregation::{Advanced, RoundSpec, ServerHalf};
use crate::remote::plain::PlainServer;
use crate::{ClientId, DecodeKind, MufcError, MufcResult, SecAggStep, ServerUpdate};

/// What to do after [`ServerRound::advance`](crate::remote::ServerRound::advance).
#[derive(Debug)]
pub enum RoundStep {
    /// Send each message to its client and collect their answers.
    Send(Vec<(ClientId, Vec<u8>)>),
    /// With dealt masks: send this request to the dealer
    /// ([`RemoteDealer::deal`](crate::remote::RemoteDealer::deal), with the
    /// round's announcement) and give its answer to
    /// [`ServerRound::receive_deal`](crate::remote::ServerRound::receive_deal) before advancing again.
    Deal(Vec<u8>),
    /// The sum is unmasked: [`RemoteServer::finish_round`](crate::remote::RemoteServer::finish_round).
    Finished,
}

/// The server's half of one round in progress.
pub struct ServerRound {
    pub(crate) half: Half,
    pub(crate) spec: RoundSpec,
    pub(crate) started: Instant,
    /// The group the round runs in, with groups.
    pub(crate) group: Option<usize>,
}

/// A round's half by mode: a masked sum's protocol, or the plain mode's
/// messages.
pub(crate) enum Half {
    Masked(Box<dyn ServerHalf>),
    Plain(PlainServer),
}

impl std::fmt::Debug for ServerRound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerRound")
            .field("round", &self.spec.round)
            .field("step", &self.step())
            .finish_non_exhaustive()
    }
}

impl ServerRound {
    /// The round's public description.
    pub fn spec(&self) -> &RoundSpec {
        &self.spec
    }

    /// The group the round runs in (`None` when flat).
    pub fn group(&self) -> Option<usize> {
        self.group
    }

    /// The step whose messages the server collects (`None` once the sum
    /// is unmasked, and in a plain round, which has one message a client
    /// and no protocol).
    pub fn step(&self) -> Option<SecAggStep> {
        match &self.half {
            Half::Masked(half) => half.step(),
            Half::Plain(_) => None,
        }
    }

    /// The clients expected to answer the current step: those still in.
    pub fn expected(&self) -> BTreeSet<ClientId> {
        match &self.half {
            Half::Masked(half) => half.expected(),
            Half::Plain(half) => half.expected(),
        }
    }

    /// The clients that answered the current step so far.
    pub fn answered(&self) -> BTreeSet<ClientId> {
        match &self.half {
            Half::Masked(half) => half.answered(),
            Half::Plain(half) => half.answered(),
        }
    }

    /// One message of the current step from client `from`, whose identity
    /// the transport authenticated.
    ///
    /// # Errors
    ///
    /// The protocol's refusal (unparsable bytes, a message in another
    /// client's name, of another session, round or step, a second message
    /// from one client, ...). The round is unchanged by a refused message:
    /// the client may still answer, and the others are not disturbed.
    pub fn receive(&mut self, from: ClientId, bytes: &[u8]) -> MufcResult<()> {
        match &mut self.half {
            Half::Masked(half) => half.receive(from, bytes),
            Half::Plain(half) => half.receive(from, bytes),
        }
    }

    /// Closes the current step (its deadline has passed or every client
    /// answered): the clients that did not answer are out from here on.
    ///
    /// # Errors
    ///
    /// [`MufcError::TooManyDropouts`](crate::MufcError::TooManyDropouts) when fewer clients remain than the
    /// protocol's threshold or the federation's minimum aggregate: the
    /// round fails and nothing is unmasked.
    pub fn advance(&mut self) -> MufcResult<RoundStep> {
        // A plain round has one step: the clients' messages.
        let Half::Masked(half) = &mut self.half else {
            return Ok(RoundStep::Finished);
        };
        Ok(match half.advance()? {
            Advanced::Clients(msgs) => RoundStep::Send(msgs),
            Advanced::Finished => RoundStep::Finished,
            Advanced::Dealer(request) => RoundStep::Deal(request),
        })
    }

    /// Takes the dealer's answer to the request of [`RoundStep::Deal`]:
    /// the sealed seed of each client of the ring (relayed at the next
    /// [`Self::advance`]) and the correction that makes the masks sum to
    /// zero.
    ///
    /// # Errors
    ///
    /// The protocol's refusal: no deal asked for, bytes that are no deal,
    /// a deal of another round, or one that does not seal a seed to
    /// every client of the ring once. The round waits for a good answer.
    pub fn receive_deal(&mut self, bytes: &[u8]) -> MufcResult<()> {
        match &mut self.half {
            Half::Masked(half) => half.receive_dealer(bytes),
            Half::Plain(_) => Err(MufcError::Remote("a plain round has no dealer".into())),
        }
    }
}

/// What one round across processes did.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RoundReport {
    /// The round number (each group counts its own rounds).
    pub round: u64,
    /// The group the round ran in ([`RemoteServer::groups`](crate::remote::RemoteServer::groups); `None` when
    /// flat).
    pub group: Option<usize>,
    /// Whether this round trained its group (the group's first committed
    /// round; when flat, the model's). The model is trained once every
    /// group is ([`RemoteServer::is_trained`](crate::remote::RemoteServer::is_trained)).
    pub training: bool,
    /// The clients whose sketches the sum holds.
    pub included: Vec<ClientId>,
    /// The clients that dropped out, with the first step they missed.
    pub dropped: Vec<(ClientId, SecAggStep)>,
    /// How the server decoded.
    pub decode: DecodeKind,
    /// What the server's K-means did.
    pub update: ServerUpdate,
    /// The nonzero bins of the aggregate after the round.
    pub nonzero_bins: usize,
    /// The total count of the aggregate after the round.
    pub total_count: u64,
    /// The server's protocol time (every step, the unmasking included).
    pub protocol: Duration,
    /// The server's decoding time.
    pub decode_time: Duration,
    /// The server's clustering time.
    pub server_time: Duration,
    /// From [`RemoteServer::start_round`](crate::remote::RemoteServer::start_round) to the commit.
    pub wall: Duration,
}
