//! The halves of a round across processes, as the drivers see them: the
//! round's public description ([`RoundSpec`], [`RoundProtocol`]) and the
//! byte-level traits of the server's half ([`ServerHalf`]) and a client's
//! ([`ClientHalf`]). Each mask source implements them (SecAgg in
//! `secagg_halves.rs`, pairwise and dealt masks in `framed/`); `parties.rs` opens
//! and joins rounds through them, and `mufc-net` carries their bytes
//! without naming a field.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use syndrome_agg::field::FiniteField;
use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
use syndrome_agg::secagg::graph::Neighbourhoods;
use syndrome_agg::secagg::params::{GraphChoice, SecAggParams};
use syndrome_agg::secagg::{SessionConfig, Step};
use syndrome_agg::{AnySketch, ValidAnyParams};

use super::run::Pending;
use crate::server::decode::{Decoded, DeltaCheck};
use crate::{ClientId, MufcError, MufcResult};

/// The public description of one round, as the server announces it:
/// every client rebuilds the session from it and checks it against its
/// own configuration before it joins.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RoundSpec {
    /// The round number (every round started, failed ones included).
    pub round: u64,
    /// The session id, fresh for this round.
    pub session: [u8; 32],
    /// The clients of the round (in the order of the SecAgg+ ring; in id
    /// order with pairwise masks).
    pub ring: Vec<ClientId>,
    /// How the round masks: the protocol it runs.
    pub protocol: RoundProtocol,
    /// What every client of the ring sends.
    pub sends: Sends,
}

/// What every client of a round sends, masked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Sends {
    /// The sketch of its whole histogram.
    Histograms,
    /// A change round: the sketch of its histogram's change since the
    /// committed round `base` (empty if it did not change), under signed
    /// parameters of this capacity, so that a removal's messages, masks,
    /// sum and decode are small whatever the federation's capacity. Only
    /// with masks that need every client of the ring (a SecAgg dropout
    /// would lose its change).
    Changes {
        /// The capacity of the signed parameters: at least the number of
        /// bins the changes touch in all, below the federation's.
        capacity: u64,
        /// The round whose committed sum the server decodes the changes
        /// against: every client of the ring took part in it, and sends
        /// its change since the histogram it sent then. Across processes
        /// a client joins only if `base` is the last committed round that
        /// included it; in process the driver gives each client its
        /// change.
        base: u64,
    },
}

/// The masking protocol of a round across processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RoundProtocol {
    /// The dropout-tolerant protocol ([`Masks::SecAgg`](crate::Masks::SecAgg))
    /// with these parameters (the neighbourhood graph over the ring,
    /// threshold, colluders, minimum).
    SecAgg(SecAggParams),
    /// Pairwise masks ([`Masks::Pairwise`](crate::Masks::Pairwise)): every
    /// client of the ring sends a fresh public key, the server relays the
    /// directory, every client masks against every other and sends its
    /// masked sketch. No dropout is tolerated.
    Pairwise,
    /// The dealer as a party ([`Masks::Dealer`](crate::Masks::Dealer),
    /// `syndrome_agg::masking::dealer`): every client of the ring sends a
    /// fresh public key, the server forwards the directory to the dealer
    /// and relays the seed the dealer sealed to each client (under the
    /// dealer's key, which every client holds), every client masks with
    /// its seed's expansion and sends its masked sketch, and the server
    /// adds the dealer's correction to the sum. No dropout is tolerated.
    Dealer,
    /// The plain mode ([`Channel::Plain`](crate::Channel::Plain),
    /// Algorithm 5): every client of the ring sends its centroids and
    /// cluster sizes in the clear, in one message. A client joins only if
    /// its operator allowed it
    /// ([`RemoteClient::allowing_plain`](crate::remote::RemoteClient::allowing_plain)).
    Plain,
}

impl RoundSpec {
    pub(super) fn context(&self) -> RoundContext {
        RoundContext {
            session: SessionId(self.session),
            round: self.round,
        }
    }

    /// The SecAgg parameters of a SecAgg round.
    fn secagg(&self) -> MufcResult<SecAggParams> {
        match self.protocol {
            RoundProtocol::SecAgg(p) => Ok(p),
            RoundProtocol::Pairwise | RoundProtocol::Dealer | RoundProtocol::Plain => Err(
                MufcError::Remote("only a SecAgg round has a SecAgg session".into()),
            ),
        }
    }

    fn graph(&self) -> MufcResult<Neighbourhoods> {
        let ring = self.ring.iter().map(|c| c.0);
        Ok(match self.secagg()?.graph {
            GraphChoice::Complete => Neighbourhoods::complete(ring)?,
            GraphChoice::Harary { degree } => {
                Neighbourhoods::harary_with_ring(ring.collect(), degree)?
            }
        })
    }

    /// The protocol session of this round over `field`, for vectors of
    /// `len` elements: what the server's half and every client's half
    /// are built on.
    pub(super) fn session<F: FiniteField>(
        &self,
        field: &F,
        len: usize,
    ) -> MufcResult<Arc<SessionConfig<F>>> {
        Ok(Arc::new(SessionConfig::new(
            field.clone(),
            self.context(),
            self.graph()?,
            self.secagg()?,
            len,
        )?))
    }
}

/// What the server's half of a round gave once the protocol finished.
#[derive(Debug)]
pub(crate) struct RemoteOutcome {
    /// The decoded aggregate or difference; `None` when the sum of a
    /// change round does not decode to counts the check accepts (the
    /// caller then runs a whole round).
    pub(crate) decoded: Option<Decoded>,
    pub(crate) pending: Pending,
    pub(crate) included: Vec<ClientId>,
    pub(crate) dropped: Vec<(ClientId, Step)>,
    /// The server's protocol time (every step, the unmasking included).
    pub(crate) protocol: Duration,
    pub(crate) decode: Duration,
}

/// The messages of the next step, each with its client.
pub(crate) type Outgoing = Vec<(ClientId, Vec<u8>)>;

/// What the server's half does once a step closes.
#[derive(Debug)]
pub(crate) enum Advanced {
    /// The next step's messages, to the clients.
    Clients(Outgoing),
    /// A request to the round's dealer, whose answer the server's half
    /// takes ([`ServerHalf::receive_dealer`]) before it advances again.
    Dealer(Vec<u8>),
    /// The sum is unmasked: the round is over.
    Finished,
}

/// The server's half of one round, over bytes.
pub(crate) trait ServerHalf: Send {
    /// The step whose messages the server collects (`None` once over).
    fn step(&self) -> Option<Step>;
    /// The clients expected to answer the current step.
    fn expected(&self) -> BTreeSet<ClientId>;
    /// The clients that answered the current step so far.
    fn answered(&self) -> BTreeSet<ClientId>;
    /// One message from the authenticated client `from`.
    fn receive(&mut self, from: ClientId, bytes: &[u8]) -> MufcResult<()>;
    /// Closes the current step: the next step's messages, a request to
    /// the dealer, or the end of the round once the sum is unmasked.
    fn advance(&mut self) -> MufcResult<Advanced>;
    /// The dealer's answer to the request of [`Advanced::Dealer`].
    fn receive_dealer(&mut self, _bytes: &[u8]) -> MufcResult<()> {
        Err(MufcError::Remote("this round has no dealer".into()))
    }
    /// Decodes the unmasked sum (its difference against the last one,
    /// checked by `check`, when that decodes).
    fn conclude(self: Box<Self>, check: &DeltaCheck<'_>) -> MufcResult<RemoteOutcome>;
}

/// A client's half of one round, over bytes.
pub(crate) trait ClientHalf: Send {
    /// The client's answer to the server's next message.
    fn handle(&mut self, bytes: &[u8]) -> MufcResult<Vec<u8>>;
    /// Whether the client answered the unmasking request.
    fn is_done(&self) -> bool;
    /// The protocol's steps, in the order the client answers them (its
    /// first message, at join, answers the first).
    fn steps(&self) -> &'static [Step] {
        &Step::ALL
    }
    /// Checks that the server's answer to the first step (the key
    /// directory) gives every client it names the key of the first
    /// message that client signed (`firsts`, by client: the message
    /// bytes each client sent, whose signatures the caller checked), and
    /// names no client without one. A round without a directory (dealt
    /// masks) has nothing to check.
    fn check_directory(
        &self,
        bytes: &[u8],
        firsts: &std::collections::BTreeMap<ClientId, Vec<u8>>,
    ) -> MufcResult<()>;
    /// The clients whose inputs the server can sum with this client's
    /// part, once the client knows them (SecAgg: the alive set it
    /// attested; pairwise masks: the ring, once its masked input left),
    /// in id order; `None` before. Borrowed where the half holds them in
    /// order: every client asks after every round.
    fn summed(&self) -> Option<std::borrow::Cow<'_, [ClientId]>>;
}

/// The dealer's half of one round, over bytes: the server's request in,
/// the sealed seeds and the correction out.
pub(crate) trait DealerHalf: Send {
    /// The dealer's answer to the server's request.
    fn handle(&mut self, bytes: &[u8]) -> MufcResult<Vec<u8>>;
}

/// The sketch parameters and the last committed sum a round decodes
/// against.
#[derive(Clone, Debug)]
pub(crate) struct Sums {
    /// The clients' histograms' parameters (unsigned counts).
    pub(super) params: ValidAnyParams,
    /// The same with signed counts, for differences of two sums.
    pub(super) delta: Option<ValidAnyParams>,
    /// The last committed sum, of `params`.
    pub(super) last: Option<AnySketch>,
    /// In a change round, the small signed parameters the clients send
    /// their changes under.
    pub(super) change: Option<ValidAnyParams>,
}

impl Sums {
    /// The parameters the clients' messages are made under.
    pub(super) fn sent(&self) -> &ValidAnyParams {
        self.change.as_ref().unwrap_or(&self.params)
    }
}

/// A client's half, its first message (none in a dealt round: the
/// client's first message is its masked input, once its sealed seed
/// came) and its new sketch.
pub(crate) type Joined = (Box<dyn ClientHalf>, Option<Vec<u8>>, Option<AnySketch>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_rebuilds_its_graph() {
        let spec = RoundSpec {
            round: 0,
            session: [1; 32],
            ring: vec![ClientId(2), ClientId(0), ClientId(1), ClientId(3)],
            protocol: RoundProtocol::SecAgg(SecAggParams::new(
                GraphChoice::Complete,
                3,
                0,
                syndrome_agg::secagg::params::ServerModel::SemiMalicious,
            )),
            sends: Sends::Histograms,
        };
        let g = spec.graph().unwrap();
        assert_eq!(g.len(), 4);
        assert!(g.are_neighbours(2, 3));
    }
}
