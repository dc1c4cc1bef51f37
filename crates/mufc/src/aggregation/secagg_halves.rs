//! The SecAgg halves of a round across processes: the server's and a
//! client's protocol run (`syndrome_agg::secagg`) in the field the
//! parameters chose ([`ValidAnyParams::mask_field`]), on the sketch's
//! dense vector, behind the byte-level traits of `halves.rs`.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use rand_chacha::ChaCha20Rng;
use syndrome_agg::field::FiniteField;
use syndrome_agg::field::primes::FieldVisitor;
use syndrome_agg::secagg::client::{Client as SecAggClient, RoundLedger};
use syndrome_agg::secagg::messages::{ClientBody, ClientEnvelope, ServerBody, ServerEnvelope};
use syndrome_agg::secagg::server::{Advance, Server as SecAggServer};
use syndrome_agg::secagg::{AggregationOutput, Step};
use syndrome_agg::{AnySketch, LinearParams, ProtocolError, SketchError, ValidAnyParams};

use super::halves::{Advanced, ClientHalf, Joined, RemoteOutcome, RoundSpec, ServerHalf, Sums};
use super::round::Input;
use super::run::conclude;
use super::secrets::RoundSecrets;
use super::secure::{RoundFailure, clients_of};
use crate::error::config_error;
use crate::server::decode::DeltaCheck;
use crate::{ClientId, MufcError, MufcResult};

struct TypedServer<F: FiniteField> {
    field: F,
    server: SecAggServer<F>,
    sums: Sums,
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

    fn advance(&mut self) -> MufcResult<Advanced> {
        let start = Instant::now();
        // Every client of the ring that has not answered this step is out.
        let answered = self.server.answered().len();
        let advanced = self.server.advance();
        self.time += start.elapsed();
        match advanced {
            Err(e) => Err(self
                .failure
                .error(e.into(), self.failure.clients.saturating_sub(answered))),
            Ok(Advance::Finished(out)) => {
                self.out = Some(out);
                Ok(Advanced::Finished)
            }
            Ok(Advance::Send(msgs)) => msgs
                .into_iter()
                .map(|m| Ok((ClientId(m.client), m.to_bytes()?)))
                .collect::<MufcResult<Vec<_>>>()
                .map(Advanced::Clients),
        }
    }

    fn conclude(self: Box<Self>, check: &DeltaCheck<'_>) -> MufcResult<RemoteOutcome> {
        let out = self
            .out
            .ok_or_else(|| MufcError::Remote("the round is not over: nothing to decode".into()))?;
        let (included, dropped) = clients_of(&out);
        // The sum of the dense vectors is the dense vector of the sum.
        let dense = out.sum.iter().map(|e| self.field.to_biguint(e)).collect();
        let sum = AnySketch::from_dense(&self.sums.params, dense)?;
        let (decoded, pending, decode) = conclude(
            sum,
            self.sums.delta.as_ref(),
            self.sums.last.as_ref(),
            check,
        )?;
        Ok(RemoteOutcome {
            decoded: Some(decoded),
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
    session: [u8; 32],
    round: u64,
}

impl<F: FiniteField> ClientHalf for TypedClient<F> {
    fn handle(&mut self, bytes: &[u8]) -> MufcResult<Vec<u8>> {
        let msg = ServerEnvelope::parse(bytes, self.max_message)?;
        Ok(self.client.handle(&msg, &mut self.rng)?.to_bytes()?)
    }

    fn is_done(&self) -> bool {
        self.client.is_done()
    }

    fn summed(&self) -> Option<std::borrow::Cow<'_, [ClientId]>> {
        (self.client.summed()).map(|s| s.iter().copied().map(ClientId).collect())
    }

    fn check_directory(
        &self,
        bytes: &[u8],
        firsts: &BTreeMap<ClientId, Vec<u8>>,
    ) -> MufcResult<()> {
        let refuse = |reason: String| MufcError::RoundRefused {
            round: self.round,
            reason,
        };
        let msg = ServerEnvelope::parse(bytes, self.max_message)?;
        let ServerBody::KeyDirectory(d) = msg.body else {
            return Err(refuse(
                "the server's first message is not a key directory".into(),
            ));
        };
        for (id, keys) in &d.entries {
            let signed = (firsts.get(&ClientId(*id)))
                .and_then(|b| ClientEnvelope::parse(b, self.max_message).ok())
                .filter(|e| e.session == self.session && e.round == self.round && e.client == *id);
            match signed.map(|e| e.body) {
                Some(ClientBody::AdvertiseKeys(k)) if k == *keys => {}
                _ => {
                    return Err(refuse(format!(
                        "the key directory gives client {id} keys it did not sign for this round"
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Builds the server's half in the field of the sketch's elements.
pub(super) struct OpenServer {
    pub(super) spec: RoundSpec,
    pub(super) sums: Sums,
    pub(super) failure: RoundFailure,
}

impl OpenServer {
    /// The server's half, in the field the parameters chose.
    ///
    /// # Errors
    ///
    /// The integer scheme (no field), or a session the spec does not
    /// allow.
    pub(super) fn open(self, params: &ValidAnyParams) -> MufcResult<Box<dyn ServerHalf>> {
        params.mask_field().ok_or_else(needs_field)?.visit(self)
    }
}

impl FieldVisitor for OpenServer {
    type Output = MufcResult<Box<dyn ServerHalf>>;

    fn visit<F: FiniteField>(self, field: F) -> Self::Output {
        let config = self.spec.session(&field, self.sums.params.num_elements())?;
        let max_message = config.max_message();
        Ok(Box::new(TypedServer {
            field,
            server: SecAggServer::new(config),
            sums: self.sums,
            max_message,
            failure: self.failure,
            out: None,
            time: Duration::ZERO,
        }))
    }
}

/// Builds a client's half in the field of the sketch's elements: encodes
/// the client's histogram and starts its protocol run on the sketch's
/// dense vector.
pub(super) struct JoinRound<'a> {
    pub(super) spec: &'a RoundSpec,
    pub(super) input: Input<'a>,
    pub(super) secrets: &'a RoundSecrets,
    pub(super) params: &'a ValidAnyParams,
}

impl JoinRound<'_> {
    /// The client's half, in the field the parameters chose.
    ///
    /// # Errors
    ///
    /// The integer scheme (no field); a histogram the parameters refuse.
    pub(super) fn join(self) -> MufcResult<Joined> {
        self.params
            .mask_field()
            .ok_or_else(needs_field)?
            .visit(self)
    }
}

impl FieldVisitor for JoinRound<'_> {
    type Output = MufcResult<Joined>;

    fn visit<F: FiniteField>(self, field: F) -> Self::Output {
        let (sketch, keep) = self.input.sketch(self.params)?;
        let vector = sketch
            .to_dense()
            .iter()
            .map(|x| field.from_biguint(x))
            .collect();
        let new = match sketch {
            std::borrow::Cow::Owned(s) if keep => Some(s),
            _ => None,
        };
        let config = self.spec.session(&field, self.params.num_elements())?;
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
                session: self.spec.session,
                round: self.spec.round,
            }),
            Some(first.to_bytes()?),
            new,
        ))
    }
}

fn needs_field() -> MufcError {
    config_error(
        crate::ConfigParam::Masking,
        "a federation across processes needs secagg masks, which need a field; \
         the integer scheme works in a ring",
    )
}
