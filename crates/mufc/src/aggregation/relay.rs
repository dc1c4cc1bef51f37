//! The in-process driver of a round: the server's half, every client's
//! half and the dealer's are the parties a deployment runs (`halves.rs`:
//! SecAgg's five steps, pairwise masks' two, the dealer's two with its
//! request between them), and this driver only carries their bytes in
//! memory, as `mufc-net` carries them over the network. It
//! draws nothing and decides nothing: the round's secrets come from the
//! aggregation, the dropouts of a simulation from the configuration's
//! draws, and every check is the parties' own.
//!
//! What it adds is what a simulation reports: each party's time per
//! step, the bytes and messages the server received, and, when
//! recording, the masked inputs as the server saw them.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use syndrome_agg::ValidAnyParams;
use syndrome_agg::secagg::Step;

use super::Aggregation;
use super::framed::{CORRECTION, DealerParty, PairKeys};
use super::halves::{Advanced, ClientHalf, DealerHalf, RemoteOutcome, RoundSpec, ServerHalf};
use super::masks::MaskSource;
use super::round::{Input, MaskedInputs, RoundMetrics};
use super::run::RoundOutput;
use super::secrets::RoundSecrets;
use crate::server::decode::DeltaCheck;
use crate::{ClientId, MufcError, MufcResult, par};

/// What the driver saw of a round besides the server's outcome; filled
/// as the round runs, so that a failed round still tells what was sent.
#[derive(Debug, Default)]
pub(super) struct Traffic {
    /// Per step, the slowest client's time, added up.
    client_max: Duration,
    /// Every client's time in every step after joining.
    client_sum: Duration,
    /// The dealer's time (work that needs no client online).
    dealer: Duration,
    /// The bytes the server received.
    bytes_up: u64,
    /// The messages the server received.
    messages: usize,
    /// When recording: the masked inputs as the server received them.
    masked: Option<Vec<Recorded>>,
}

/// A masked input as the server received it: its sender, the bytes the
/// server sums and their elements.
type Recorded = (ClientId, Vec<u8>, Vec<Vec<u8>>);

impl Traffic {
    /// The recorded masked inputs, element by element (for the tests that
    /// compare the masks of two rounds).
    pub(super) fn masked_inputs(&self) -> Option<MaskedInputs> {
        self.masked.as_ref().map(|m| {
            m.iter()
                .map(|(c, _, elements)| (*c, elements.clone()))
                .collect()
        })
    }
}

/// A client's half as the driver holds it, with its first message.
struct Party {
    id: ClientId,
    half: Box<dyn ClientHalf>,
    first: Vec<u8>,
}

/// Carries one round's bytes between the server's half, the clients'
/// and the dealer's.
struct Relay<'a> {
    /// The first step each client misses (a simulation's dropouts).
    dropped_from: &'a (dyn Fn(ClientId) -> Option<Step> + Sync),
    parallel: bool,
    /// The round's dealer, with dealt masks.
    dealer: Option<Box<dyn DealerHalf>>,
}

impl Relay<'_> {
    fn offline(&self, id: ClientId, step: Step) -> bool {
        (self.dropped_from)(id).is_some_and(|from| step >= from)
    }

    /// Runs the round to the server's outcome: each step's messages go
    /// to the server (a client offline at that step sends nothing), the
    /// server's requests to the clients (one offline gets nothing), until
    /// the server has its sum.
    fn run(
        &mut self,
        mut server: Box<dyn ServerHalf>,
        parties: Vec<Party>,
        traffic: &mut Traffic,
        check: &DeltaCheck<'_>,
    ) -> MufcResult<RemoteOutcome> {
        let mut halves: BTreeMap<ClientId, Box<dyn ClientHalf>> = BTreeMap::new();
        let mut outgoing = Vec::with_capacity(parties.len());
        for p in parties {
            outgoing.push((p.id, p.first));
            halves.insert(p.id, p.half);
        }
        while let Some(step) = server.step() {
            for (id, bytes) in std::mem::take(&mut outgoing) {
                if self.offline(id, step) {
                    continue;
                }
                traffic.bytes_up += bytes.len() as u64;
                traffic.messages += 1;
                if let Some(sink) = traffic.masked.as_mut()
                    && let Some((masked, elements)) = server.masked_input(&bytes)
                {
                    sink.push((id, masked, elements));
                }
                server.receive(id, &bytes)?;
            }
            let requests = match server.advance()? {
                Advanced::Finished => break,
                Advanced::Clients(requests) => requests,
                Advanced::Dealer(request) => {
                    let dealer = self.dealer.as_mut().ok_or_else(|| {
                        MufcError::Remote("the round asked for a dealer it does not have".into())
                    })?;
                    let start = Instant::now();
                    let reply = dealer.handle(&request)?;
                    traffic.dealer += start.elapsed();
                    server.receive_dealer(&reply)?;
                    continue;
                }
            };
            let Some(next) = server.step() else {
                break;
            };
            let mut requests: BTreeMap<ClientId, Vec<u8>> = requests.into_iter().collect();
            let work: Vec<_> = halves
                .iter_mut()
                .filter_map(|(id, half)| {
                    let bytes = requests.remove(id)?;
                    (!self.offline(*id, next)).then_some((*id, half, bytes))
                })
                .collect();
            let replies = par::map_owned(self.parallel, work, |(id, half, bytes)| {
                let start = Instant::now();
                let reply = half.handle(&bytes)?;
                Ok::<_, MufcError>((id, reply, start.elapsed()))
            })?;
            let times = replies.iter().map(|(_, _, t)| *t);
            traffic.client_max += times.clone().max().unwrap_or_default();
            traffic.client_sum += times.sum::<Duration>();
            outgoing = replies.into_iter().map(|(id, r, _)| (id, r)).collect();
        }
        if let (Some(sink), Some((bytes, elements))) =
            (traffic.masked.as_mut(), server.correction())
        {
            sink.push((ClientId(CORRECTION), bytes, elements));
        }
        server.conclude(check)
    }
}

impl Aggregation {
    /// Round `number` over `inputs` (every current client, in id order)
    /// run by the parties: the server's half opened with the round's
    /// `secrets`, every client's half joined with them (each checks the
    /// announced round against its configuration, as across processes),
    /// the bytes relayed in memory, with the dropouts the configuration
    /// draws for a SecAgg round. What the server received goes to
    /// `traffic` as it arrives. `change`: a change round's small signed
    /// parameters (every input then carries its change); `None` when its
    /// sum does not decode to counts the check accepts.
    ///
    /// # Errors
    ///
    /// A party's error: a round a client refuses, too few clients, too
    /// many dropouts, a sum that does not decode.
    pub(super) fn relay_round(
        &self,
        number: u64,
        secrets: &RoundSecrets,
        inputs: &[Input<'_>],
        check: &DeltaCheck<'_>,
        traffic: &mut Traffic,
        change: Option<&ValidAnyParams>,
    ) -> MufcResult<Option<RoundOutput>> {
        let ids: Vec<ClientId> = inputs.iter().map(|i| i.id).collect();
        let (spec, server) = self.open_round(number, secrets, &ids, change)?;
        let joined = par::map(self.parallel, inputs, |_, input| {
            let start = Instant::now();
            let seal = match &self.masking {
                MaskSource::Dealer(keys) => Some(keys.pair(input.id)),
                _ => None,
            };
            self.check_round(&spec, input.id)?;
            let (half, first, new) = self.join_checked(&spec, *input, secrets, change, seal)?;
            let party = Party {
                id: input.id,
                half,
                first,
            };
            Ok::<_, MufcError>((party, new, start.elapsed()))
        })?;
        let faults = match &self.masking {
            MaskSource::SecAgg(settings) => Some(settings.faults(number, &ids)),
            MaskSource::Dealer(_) | MaskSource::Pairwise => None,
        };
        let dropped_from = |c: ClientId| faults.as_ref().and_then(|f| f.dropped_from(c.0));
        let mut parties = Vec::with_capacity(joined.len());
        let mut encoded = Vec::with_capacity(joined.len());
        let mut encode_mask = Vec::with_capacity(joined.len());
        for (party, new, time) in joined {
            parties.push(party);
            encoded.push(new);
            encode_mask.push(time);
        }
        if self.record {
            traffic.masked = Some(Vec::new());
        }
        let mut relay = Relay {
            dropped_from: &dropped_from,
            parallel: self.parallel,
            dealer: self.dealer_party(spec, secrets, number, change),
        };
        let outcome = relay.run(server, parties, traffic, check)?;
        let Some(decoded) = outcome.decoded else {
            return Ok(None);
        };
        let n = u64::try_from(ids.len().max(1)).unwrap_or(u64::MAX);
        Ok(Some(RoundOutput {
            decoded,
            pending: outcome.pending,
            metrics: RoundMetrics {
                encode_mask,
                protocol_client_max: traffic.client_max,
                protocol_client_sum: traffic.client_sum,
                sum: outcome.protocol,
                decode: outcome.decode,
                offline: traffic.dealer,
            },
            dropped: outcome.dropped,
            included: outcome.included,
            bytes_per_client: usize::try_from(traffic.bytes_up / n).unwrap_or(usize::MAX),
            client_messages: traffic.messages,
            messages: traffic
                .masked
                .as_ref()
                .map(|m| m.iter().map(|(c, bytes, _)| (*c, bytes.clone())).collect()),
            encoded,
        }))
    }

    /// The round's dealer, with dealt masks: the party the federation
    /// plays in process, under the round's parameters (`change`'s in a
    /// change round).
    fn dealer_party(
        &self,
        spec: RoundSpec,
        secrets: &RoundSecrets,
        number: u64,
        change: Option<&ValidAnyParams>,
    ) -> Option<Box<dyn DealerHalf>> {
        let MaskSource::Dealer(key) = &self.masking else {
            return None;
        };
        let params = change.unwrap_or(&self.scheme.params).clone();
        let rng = secrets.rng("dealer", number);
        let party = DealerParty::new(spec, PairKeys::Simulated(key.clone()), params, rng);
        Some(Box::new(party))
    }
}
