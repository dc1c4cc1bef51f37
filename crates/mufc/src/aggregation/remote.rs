//! Rounds run across processes: the protocol of `secure.rs`, with each
//! party holding its own half. The server's half ([`ServerHalf`]) and a
//! client's ([`ClientHalf`]) are built here, on the concrete sketch and
//! field the parameters chose, and handed out behind byte-level traits, so
//! that the code that carries the bytes (`mufc-net`) never names a field.
//!
//! What differs from the in-process run: every party draws its own
//! randomness from the operating system (the server its session id and
//! the SecAgg+ ring, each client its key pairs and self-mask seed), the
//! server learns who dropped from the network rather than from simulated
//! faults, and each client checks the round it is asked to join against
//! its own copy of the configuration before it sends anything.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rand_chacha::ChaCha20Rng;
use syndrome_agg::field::FiniteField;
use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
use syndrome_agg::secagg::client::{Client as SecAggClient, RoundLedger};
use syndrome_agg::secagg::graph::Neighbourhoods;
use syndrome_agg::secagg::messages::{ClientEnvelope, ServerEnvelope};
use syndrome_agg::secagg::params::{GraphChoice, SecAggParams};
use syndrome_agg::secagg::server::{Advance, Server as SecAggServer};
use syndrome_agg::secagg::{AggregationOutput, SessionConfig, Step};
use syndrome_agg::{
    AnySketch, ConcreteSketch, ProtocolError, SketchError, SketchVisitor, ValidAnyParams,
};

use super::Aggregation;
use super::masks::MaskSource;
use super::round::Input;
use super::run::{Pending, conclude, inconsistent};
use super::secrets::{RoundSecrets, SecretSource};
use super::secure::{RoundFailure, SecAggSettings, clients_of};
use crate::client::message::Encoded;
use crate::error::config_error;
use crate::server::decode::{Decoded, DeltaCheck};
use crate::{ClientId, MufcError, MufcResult};

/// The public description of one round of the protocol, as the server
/// announces it: every client rebuilds the session from it and checks it
/// against its own configuration before it joins.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RoundSpec {
    /// The round number (every round started, failed ones included).
    pub round: u64,
    /// The session id, fresh for this round.
    pub session: [u8; 32],
    /// The clients of the round, in the order of the SecAgg+ ring.
    pub ring: Vec<ClientId>,
    /// The protocol's parameters (the neighbourhood graph over the ring,
    /// threshold, colluders, minimum).
    pub params: SecAggParams,
}

impl RoundSpec {
    fn context(&self) -> RoundContext {
        RoundContext {
            session: SessionId(self.session),
            round: self.round,
        }
    }

    fn graph(&self) -> MufcResult<Neighbourhoods> {
        let ring = self.ring.iter().map(|c| c.0);
        Ok(match self.params.graph {
            GraphChoice::Complete => Neighbourhoods::complete(ring)?,
            GraphChoice::Harary { degree } => {
                Neighbourhoods::harary_with_ring(ring.collect(), degree)?
            }
        })
    }

    /// The protocol session of this round over `field`, for vectors of
    /// `len` elements: what the server's half and every client's half
    /// are built on.
    fn session<F: FiniteField>(&self, field: &F, len: usize) -> MufcResult<Arc<SessionConfig<F>>> {
        Ok(Arc::new(SessionConfig::new(
            field.clone(),
            self.context(),
            self.graph()?,
            self.params,
            len,
        )?))
    }
}

/// What the server's half of a round gave once the protocol finished.
#[derive(Debug)]
pub(crate) struct RemoteOutcome {
    pub(crate) decoded: Decoded,
    pub(crate) pending: Pending,
    pub(crate) included: Vec<ClientId>,
    pub(crate) dropped: Vec<(ClientId, Step)>,
    /// The server's protocol time (every step, the unmasking included).
    pub(crate) protocol: Duration,
    pub(crate) decode: Duration,
}

/// The messages of the next step, each with its client.
pub(crate) type Outgoing = Vec<(ClientId, Vec<u8>)>;

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
    /// Closes the current step: the next step's messages, or `None` once
    /// the sum is unmasked.
    fn advance(&mut self) -> MufcResult<Option<Outgoing>>;
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
}

/// The decoding of a round's sum on the concrete sketch `S`, as a plain
/// function pointer: the server's half keeps it without naming `S` (whose
/// type need not be `'static`).
type Concluder<E> = for<'a, 'b> fn(
    Vec<E>,
    &'a Sums,
    &'b DeltaCheck<'b>,
) -> MufcResult<(Decoded, Pending, Duration)>;

/// The sketch parameters and the last committed sum a round decodes
/// against.
#[derive(Clone, Debug)]
pub(crate) struct Sums {
    params: ValidAnyParams,
    delta: Option<ValidAnyParams>,
    last: Option<AnySketch>,
}

fn conclude_elements<S: ConcreteSketch>(
    sum: Vec<S::Elem>,
    sums: &Sums,
    check: &DeltaCheck<'_>,
) -> MufcResult<(Decoded, Pending, Duration)> {
    let typed = S::params_of(&sums.params).ok_or_else(inconsistent)?;
    let sum = S::from_elements(typed, sum)?;
    conclude(
        sum,
        &sums.params,
        sums.delta.as_ref(),
        sums.last.as_ref(),
        check,
    )
}

struct TypedServer<F: FiniteField> {
    server: SecAggServer<F>,
    sums: Sums,
    concluder: Concluder<F::Elem>,
    max_message: usize,
    failure: RoundFailure,
    out: Option<AggregationOutput<F::Elem>>,
    time: Duration,
}

impl<F: FiniteField> ServerHalf for TypedServer<F> {
    fn step(&self) -> Option<Step> {
        self.server.step()
    }

    fn expected(&self) -> BTreeSet<ClientId> {
        self.server.expected().into_iter().map(ClientId).collect()
    }

    fn answered(&self) -> BTreeSet<ClientId> {
        self.server.answered().into_iter().map(ClientId).collect()
    }

    fn receive(&mut self, from: ClientId, bytes: &[u8]) -> MufcResult<()> {
        let start = Instant::now();
        let msg = ClientEnvelope::parse(bytes, self.max_message)?;
        // The transport authenticated `from`: a message in another
        // client's name is refused before the protocol sees it.
        if msg.client != from.0 {
            return Err(SketchError::Protocol(ProtocolError::MessageRejected {
                reason: format!("client {from} sent a message in the name of {}", msg.client),
            })
            .into());
        }
        let r = self.server.receive(msg);
        self.time += start.elapsed();
        Ok(r?)
    }

    fn advance(&mut self) -> MufcResult<Option<Outgoing>> {
        let start = Instant::now();
        // Every client of the ring that has not answered this step is out.
        let answered = self.server.answered().len();
        let advanced = self.server.advance();
        self.time += start.elapsed();
        match advanced {
            Err(e) => Err(self
                .failure
                .error(e, self.failure.clients.saturating_sub(answered))),
            Ok(Advance::Finished(out)) => {
                self.out = Some(out);
                Ok(None)
            }
            Ok(Advance::Send(msgs)) => msgs
                .into_iter()
                .map(|m| Ok((ClientId(m.client), m.to_bytes()?)))
                .collect::<MufcResult<Vec<_>>>()
                .map(Some),
        }
    }

    fn conclude(self: Box<Self>, check: &DeltaCheck<'_>) -> MufcResult<RemoteOutcome> {
        let out = self
            .out
            .ok_or_else(|| MufcError::Remote("the round is not over: nothing to decode".into()))?;
        let (included, dropped) = clients_of(&out);
        let (decoded, pending, decode) = (self.concluder)(out.sum, &self.sums, check)?;
        Ok(RemoteOutcome {
            decoded,
            pending,
            included,
            dropped,
            protocol: self.time,
            decode,
        })
    }
}

struct TypedClient<F: FiniteField> {
    client: SecAggClient<F>,
    rng: ChaCha20Rng,
    max_message: usize,
}

impl<F: FiniteField> ClientHalf for TypedClient<F> {
    fn handle(&mut self, bytes: &[u8]) -> MufcResult<Vec<u8>> {
        let msg = ServerEnvelope::parse(bytes, self.max_message)?;
        Ok(self.client.handle(&msg, &mut self.rng)?.to_bytes()?)
    }

    fn is_done(&self) -> bool {
        self.client.is_done()
    }
}

/// Builds the server's half on the concrete sketch.
struct OpenServer {
    spec: RoundSpec,
    sums: Sums,
    failure: RoundFailure,
}

impl SketchVisitor for OpenServer {
    type Output = MufcResult<Box<dyn ServerHalf>>;

    fn visit_field<S, F>(self, params: &S::Params, field: &F) -> Self::Output
    where
        S: ConcreteSketch,
        F: FiniteField<Elem = S::Elem>,
    {
        use syndrome_agg::LinearParams;
        let config = self.spec.session(field, params.num_elements())?;
        let max_message = config.max_message();
        Ok(Box::new(TypedServer {
            server: SecAggServer::new(config),
            sums: self.sums,
            concluder: conclude_elements::<S>,
            max_message,
            failure: self.failure,
            out: None,
            time: Duration::ZERO,
        }))
    }

    fn visit_ring<S: ConcreteSketch>(self, _: &S::Params) -> Self::Output {
        Err(needs_field())
    }
}

/// Builds a client's half on the concrete sketch: encodes the client's
/// histogram and starts its protocol run.
struct JoinRound<'a> {
    spec: &'a RoundSpec,
    input: Input<'a>,
    secrets: RoundSecrets,
    params: &'a ValidAnyParams,
}

/// A client's half, its first message and its new sketch.
pub(crate) type Joined = (Box<dyn ClientHalf>, Vec<u8>, Option<AnySketch>);

impl SketchVisitor for JoinRound<'_> {
    type Output = MufcResult<Joined>;

    fn visit_field<S, F>(self, params: &S::Params, field: &F) -> Self::Output
    where
        S: ConcreteSketch,
        F: FiniteField<Elem = S::Elem>,
    {
        use syndrome_agg::LinearParams;
        let (sketch, keep) = self.input.sketch::<S>(params)?;
        let vector = sketch.elements().to_vec();
        let new = match sketch {
            std::borrow::Cow::Owned(s) if keep => Some(s.into_any(self.params)?),
            _ => None,
        };
        let config = self.spec.session(field, params.num_elements())?;
        let max_message = config.max_message();
        let mut rng = self.secrets.rng("secagg-client", self.input.id.0);
        // Every round has a fresh session: a fresh ledger suffices here,
        // the client's own record of the sessions it joined is kept by
        // its caller (`remote::RemoteClient`).
        let (client, first) = SecAggClient::new(
            config,
            self.input.id.0,
            vector,
            &mut RoundLedger::default(),
            &mut rng,
        )?;
        Ok((
            Box::new(TypedClient {
                client,
                rng,
                max_message,
            }),
            first.to_bytes()?,
            new,
        ))
    }

    fn visit_ring<S: ConcreteSketch>(self, _: &S::Params) -> Self::Output {
        Err(needs_field())
    }
}

fn needs_field() -> MufcError {
    config_error(
        "masking",
        "a federation across processes needs secagg masks, which need a field; \
         the integer scheme works in a ring",
    )
}

impl Aggregation {
    /// The protocol settings of a federation run across processes: only
    /// SecAgg, whose every step is a message a real network carries (the
    /// dealer and the pairwise simulation have no party that may deal).
    fn remote_settings(&self) -> MufcResult<&SecAggSettings> {
        match &self.masking {
            MaskSource::SecAgg(s) => Ok(s),
            MaskSource::Dealer | MaskSource::Pairwise => Err(config_error(
                "masking",
                "a federation across processes runs secure aggregation: use secagg masks",
            )),
        }
    }

    /// Opens round number `next` across processes for `clients`: draws
    /// its session and SecAgg+ ring from the operating system, and
    /// returns its public description and the server's half. The round
    /// number is consumed first, as in process.
    pub(crate) fn open_remote(
        &mut self,
        clients: &[ClientId],
    ) -> MufcResult<(RoundSpec, Box<dyn ServerHalf>)> {
        let settings = *self.remote_settings()?;
        let number = self.round;
        self.round = number.saturating_add(1);
        let secrets = RoundSecrets::new(SecretSource::Fresh)?;
        let params = settings.params(clients.len())?;
        let mut rng = secrets.rng("secagg", number);
        let graph = params.graph_for(clients.iter().map(|c| c.0), &mut rng)?;
        let spec = RoundSpec {
            round: number,
            session: secrets.session().0,
            ring: graph.ring().iter().copied().map(ClientId).collect(),
            params,
        };
        let open = OpenServer {
            spec: spec.clone(),
            sums: Sums {
                params: self.scheme.params.clone(),
                delta: self.scheme.delta.clone(),
                last: self.scheme.last.clone(),
            },
            failure: RoundFailure {
                round: number,
                clients: clients.len(),
                threshold: params.threshold,
                min_clients: self.min_clients,
            },
        };
        let half = self.scheme.params.visit(open)?;
        Ok((spec, half))
    }

    /// Checks that `spec` is a round this client may join: it is named in
    /// the ring, once, and the protocol's parameters are those its own
    /// copy of the configuration gives for that many clients (a server
    /// cannot lower the threshold or change the graph).
    pub(crate) fn check_remote(&self, spec: &RoundSpec, me: ClientId) -> MufcResult<()> {
        let settings = self.remote_settings()?;
        let refuse = |reason: String| MufcError::RoundRefused {
            round: spec.round,
            reason,
        };
        let distinct: BTreeSet<ClientId> = spec.ring.iter().copied().collect();
        if distinct.len() != spec.ring.len() {
            return Err(refuse("the ring names a client twice".into()));
        }
        if !distinct.contains(&me) {
            return Err(refuse(format!("client {me} is not in the ring")));
        }
        let expected = settings.params(spec.ring.len())?;
        if expected != spec.params {
            return Err(refuse(format!(
                "the server announced {:?} where the configuration gives {expected:?} \
                 for {} clients",
                spec.params,
                spec.ring.len()
            )));
        }
        Ok(())
    }

    /// Client `me` joins the round of `spec` with its `histogram` (and the
    /// sketch of its last message, which it updates): the round is
    /// checked ([`Self::check_remote`]), then the client's half, its first
    /// message and its new sketch (to keep once the round commits).
    pub(crate) fn join_remote(
        &self,
        spec: &RoundSpec,
        me: ClientId,
        histogram: &[(num_bigint::BigUint, u64)],
        last: Option<&Encoded>,
    ) -> MufcResult<Joined> {
        self.check_remote(spec, me)?;
        let join = JoinRound {
            spec,
            input: Input {
                id: me,
                histogram,
                last,
                change: None,
            },
            secrets: RoundSecrets::new(SecretSource::Fresh)?,
            params: &self.scheme.params,
        };
        self.scheme.params.visit(join)
    }

    /// Keeps the aggregate of a round run across processes, and moves the
    /// round counter past it (a restarted server resumes after the
    /// rounds its store recorded).
    pub(crate) fn commit_remote(&mut self, pending: Pending, round: u64) {
        self.commit(pending);
        self.round = self.round.max(round.saturating_add(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_rebuilds_its_graph() {
        let spec = RoundSpec {
            round: 0,
            session: [1; 32],
            ring: vec![ClientId(2), ClientId(0), ClientId(1), ClientId(3)],
            params: SecAggParams::new(
                GraphChoice::Complete,
                3,
                0,
                syndrome_agg::secagg::params::ServerModel::SemiMalicious,
            ),
        };
        let g = spec.graph().unwrap();
        assert_eq!(g.len(), 4);
        assert!(g.are_neighbours(2, 3));
    }
}
