//! An in-process transport that drives a [`Server`] and its [`Client`]s
//! through serialized messages, with fault injection: clients that drop
//! from a given step on, duplicated messages, injected (replayed) bytes,
//! corrupted bytes in either direction, and messages that arrive after the
//! deadline. Every protocol test runs over it, deterministically.
//!
//! Time is simulated: the server closes each step (its deadline) once
//! every message that will arrive in time has been delivered; a late
//! message is delivered after that and refused. Nothing ever waits, so a
//! client that never answers cannot hang a round (docs/threat-model.md D6).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use field::FiniteField;
use rand::{CryptoRng, Rng, RngExt};

use super::client::{Client, RoundLedger};
use super::messages::ServerEnvelope;
use super::params::SecAggParams;
use super::server::{Advance, Server};
use super::session::{AggregationOutput, SessionConfig};
use crate::context::ClientId;
use crate::context::{RoundContext, SessionId};
use crate::error::{ProtocolError, SumError, SumResult, invalid};
use crate::step::Step;

/// One injected fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The client goes offline: it sends nothing, and receives nothing,
    /// from step `from` on (it "drops after" the step before).
    Drop {
        /// The client.
        client: ClientId,
        /// The first step it misses.
        from: Step,
    },
    /// The client's message of `step` is delivered twice.
    Duplicate {
        /// The client.
        client: ClientId,
        /// The step.
        step: Step,
    },
    /// Extra bytes reach the server during `step` (a replayed or forged
    /// message), after the clients' own.
    Inject {
        /// The step during which they arrive.
        step: Step,
        /// The bytes.
        bytes: Vec<u8>,
    },
    /// Byte `index` (modulo the length) of the client's message of `step`
    /// has its lowest bit flipped on the way to the server.
    CorruptFromClient {
        /// The client.
        client: ClientId,
        /// The step.
        step: Step,
        /// The byte.
        index: usize,
    },
    /// Byte `index` (modulo the length) of the server's message that asks
    /// the client to perform `step` has its lowest bit flipped.
    CorruptToClient {
        /// The client.
        client: ClientId,
        /// The step.
        step: Step,
        /// The byte.
        index: usize,
    },
    /// The client's message of `step` arrives after the server's deadline;
    /// the client is out from then on.
    Late {
        /// The client.
        client: ClientId,
        /// The step.
        step: Step,
    },
}

/// A set of faults.
///
/// # Example
///
/// ```
/// use masked_sum::secagg::Step;
/// use masked_sum::secagg::transport::Faults;
///
/// let faults = Faults::new()
///     .drop_from(3, Step::MaskedInput)
///     .duplicate(1, Step::MaskedInput)
///     .late(2, Step::ShareKeys);
/// assert_eq!(faults.dropped_from(3), Some(Step::MaskedInput));
/// assert_eq!(faults.dropped_from(1), None);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Faults(pub Vec<Fault>);

impl Faults {
    /// No faults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a fault.
    #[must_use]
    pub fn with(mut self, fault: Fault) -> Self {
        self.0.push(fault);
        self
    }

    /// [`Fault::Drop`].
    #[must_use]
    pub fn drop_from(self, client: ClientId, from: Step) -> Self {
        self.with(Fault::Drop { client, from })
    }

    /// [`Fault::Duplicate`].
    #[must_use]
    pub fn duplicate(self, client: ClientId, step: Step) -> Self {
        self.with(Fault::Duplicate { client, step })
    }

    /// [`Fault::Inject`].
    #[must_use]
    pub fn inject(self, step: Step, bytes: Vec<u8>) -> Self {
        self.with(Fault::Inject { step, bytes })
    }

    /// [`Fault::Late`].
    #[must_use]
    pub fn late(self, client: ClientId, step: Step) -> Self {
        self.with(Fault::Late { client, step })
    }

    /// Each client drops with probability `rate`, from a step drawn
    /// uniformly among the four.
    pub fn random_dropouts<R: Rng + ?Sized>(
        clients: impl IntoIterator<Item = ClientId>,
        rate: f64,
        rng: &mut R,
    ) -> Self {
        let mut out = Self::new();
        for c in clients {
            if rng.random_bool(rate.clamp(0.0, 1.0)) {
                let from = Step::ALL[rng.random_range(0..Step::ALL.len())];
                out = out.drop_from(c, from);
            }
        }
        out
    }

    /// The first step client `c` misses, if it drops.
    pub fn dropped_from(&self, c: ClientId) -> Option<Step> {
        self.0
            .iter()
            .filter_map(|f| match f {
                Fault::Drop { client, from } if *client == c => Some(*from),
                _ => None,
            })
            .min()
    }

    fn is_offline(&self, c: ClientId, step: Step) -> bool {
        self.dropped_from(c).is_some_and(|from| step >= from)
    }

    fn has(&self, pred: impl Fn(&Fault) -> bool) -> bool {
        self.0.iter().any(pred)
    }

    /// Flips the bytes that the faults corrupt in the message of `step`
    /// from client `id` (`to_server`) or to it.
    fn corrupt(&self, bytes: &mut [u8], id: ClientId, step: Step, to_server: bool) {
        for f in &self.0 {
            let index = match *f {
                Fault::CorruptFromClient {
                    client,
                    step: s,
                    index,
                } if to_server && client == id && s == step => index,
                Fault::CorruptToClient {
                    client,
                    step: s,
                    index,
                } if !to_server && client == id && s == step => index,
                _ => continue,
            };
            if !bytes.is_empty() {
                let i = index % bytes.len();
                if let Some(b) = bytes.get_mut(i) {
                    *b ^= 1;
                }
            }
        }
    }
}

/// Sizes and times of one step.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StepStats {
    /// Bytes of all client messages of the step (to the server).
    pub bytes_up: u64,
    /// Bytes of all server messages that asked for the step (to clients).
    pub bytes_down: u64,
    /// Clients that computed a message for the step.
    pub clients: u64,
    /// Total client time of the step.
    pub client_time: Duration,
    /// The slowest client's time.
    pub client_max: Duration,
    /// Server time closing the step (producing the next messages, or the
    /// sum after unmasking).
    pub server_time: Duration,
}

/// Every message of a run, as bytes on the wire (for transcript tests,
/// docs/threat-model.md P3).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Transcript {
    /// What the server received: (step, sender, bytes).
    pub to_server: Vec<(Step, ClientId, Vec<u8>)>,
    /// What the server sent: (step asked for, receiver, bytes).
    pub to_clients: Vec<(Step, ClientId, Vec<u8>)>,
}

/// What a run produced.
#[derive(Debug)]
pub struct RunReport<E> {
    /// The server's result.
    pub output: SumResult<AggregationOutput<E>>,
    /// Per step, in order.
    pub stats: BTreeMap<Step, StepStats>,
    /// Errors clients returned (aborts, refused messages).
    pub client_errors: Vec<(ClientId, Step, SumError)>,
    /// Messages the server refused.
    pub server_rejections: Vec<(ClientId, SumError)>,
    /// Every message, if recording was asked for.
    pub transcript: Option<Transcript>,
}

/// A hook that may rewrite each server message before it is serialized
/// (a malicious server in tests).
pub type ServerTamper = Box<dyn FnMut(&mut ServerEnvelope)>;

/// The in-process transport.
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use field::{Field, Mersenne61};
/// use masked_sum::masking::pairwise::{RoundContext, SessionId};
/// use masked_sum::secagg::graph::Neighbourhoods;
/// use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel};
/// use masked_sum::secagg::transport::{Faults, InProcess};
/// use masked_sum::secagg::{SessionConfig, Step};
///
/// let ctx = RoundContext { session: SessionId([4; 32]), round: 0 };
/// let params = SecAggParams::new(GraphChoice::Complete, 3, 0, ServerModel::SemiHonest);
/// let cfg = Arc::new(SessionConfig::new(Mersenne61, ctx, Neighbourhoods::complete(1..=4)?, params, 1)?);
/// let inputs = (1..=4u64).map(|id| (id, vec![id])).collect();
/// let report = InProcess::new(cfg)
///     .with_faults(Faults::new().drop_from(4, Step::ShareKeys))
///     .run(inputs, &mut rand::rng())?;
/// let out = report.output?;
/// assert_eq!(out.sum, vec![6]); // client 4 dropped before sharing its keys
/// assert_eq!(out.dropped.get(&4), Some(&Step::ShareKeys));
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub struct InProcess<F: FiniteField> {
    config: Arc<SessionConfig<F>>,
    faults: Faults,
    record: bool,
    tamper: Option<ServerTamper>,
}

impl<F: FiniteField> core::fmt::Debug for InProcess<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("InProcess")
            .field("faults", &self.faults)
            .field("record", &self.record)
            .finish_non_exhaustive()
    }
}

impl<F: FiniteField> InProcess<F> {
    /// A transport for one session, without faults.
    pub fn new(config: Arc<SessionConfig<F>>) -> Self {
        Self {
            config,
            faults: Faults::new(),
            record: false,
            tamper: None,
        }
    }

    /// Sets the faults.
    #[must_use]
    pub fn with_faults(mut self, faults: Faults) -> Self {
        self.faults = faults;
        self
    }

    /// Records every message in the report's transcript.
    #[must_use]
    pub fn recording(mut self) -> Self {
        self.record = true;
        self
    }

    /// Rewrites each server message with `tamper` before sending it.
    #[must_use]
    pub fn with_server_tamper(mut self, tamper: ServerTamper) -> Self {
        self.tamper = Some(tamper);
        self
    }

    /// Runs the protocol: every client of `inputs` (each with its own fresh
    /// [`RoundLedger`]) and the server.
    ///
    /// # Errors
    ///
    /// Only for inputs no client can start with (an id outside the
    /// session, a wrong length); protocol failures are in the report's
    /// `output`.
    pub fn run<R: CryptoRng + ?Sized>(
        mut self,
        inputs: Vec<(ClientId, Vec<F::Elem>)>,
        rng: &mut R,
    ) -> SumResult<RunReport<F::Elem>> {
        let mut server = Server::new(self.config.clone());
        let mut clients: BTreeMap<ClientId, Client<F>> = BTreeMap::new();
        let mut stats: BTreeMap<Step, StepStats> = Step::ALL
            .iter()
            .map(|s| (*s, StepStats::default()))
            .collect();
        let mut transcript = Transcript::default();
        let mut client_errors = Vec::new();
        let mut out_of_time: BTreeSet<ClientId> = BTreeSet::new();

        // Round 0: every client starts and advertises its keys.
        let mut outgoing: Vec<(ClientId, Vec<u8>)> = Vec::new();
        for (id, input) in inputs {
            let start = Instant::now();
            let (client, msg) = Client::new(
                self.config.clone(),
                id,
                input,
                &mut RoundLedger::default(),
                rng,
            )?;
            let bytes = msg.to_bytes()?;
            let st = stats.entry(Step::AdvertiseKeys).or_default();
            add_client_time(st, start.elapsed());
            clients.insert(id, client);
            outgoing.push((id, bytes));
        }
        let mut step = Step::AdvertiseKeys;
        loop {
            // Deliver this step's client messages, then close the step.
            let mut late = Vec::new();
            for (id, mut bytes) in core::mem::take(&mut outgoing) {
                if self.faults.is_offline(id, step) {
                    continue;
                }
                self.faults.corrupt(&mut bytes, id, step, true);
                let st = stats.entry(step).or_default();
                st.bytes_up += bytes.len() as u64;
                if self.record {
                    transcript.to_server.push((step, id, bytes.clone()));
                }
                if self.faults.has(
                    |f| matches!(f, Fault::Late { client, step: s } if *client == id && *s == step),
                ) {
                    late.push(bytes);
                    out_of_time.insert(id);
                    continue;
                }
                let _ = server.receive_bytes(&bytes);
                if self.faults.has(|f| matches!(f, Fault::Duplicate { client, step: s } if *client == id && *s == step)) {
                    let _ = server.receive_bytes(&bytes);
                }
            }
            for f in &self.faults.0 {
                if let Fault::Inject { step: s, bytes } = f
                    && *s == step
                {
                    let _ = server.receive_bytes(bytes);
                }
            }
            let start = Instant::now();
            let advanced = server.advance();
            stats.entry(step).or_default().server_time += start.elapsed();
            // The deadline has passed: late messages are refused now.
            for bytes in late {
                let _ = server.receive_bytes(&bytes);
            }
            let msgs = match advanced {
                Err(e) => {
                    return Ok(self.report(Err(e), stats, client_errors, &server, transcript));
                }
                Ok(Advance::Finished(out)) => {
                    return Ok(self.report(Ok(out), stats, client_errors, &server, transcript));
                }
                Ok(Advance::Send(msgs)) => msgs,
            };
            let Some(next) = msgs.first().map(|m| m.body.step()) else {
                return Ok(self.report(
                    Err(SumError::Protocol(ProtocolError::NotEnoughClients {
                        step,
                        have: 0,
                        need: self.config.min_clients(),
                    })),
                    stats,
                    client_errors,
                    &server,
                    transcript,
                ));
            };
            step = next;
            for mut msg in msgs {
                let id = msg.client;
                if let Some(t) = self.tamper.as_mut() {
                    t(&mut msg);
                }
                let mut bytes = msg.to_bytes()?;
                self.faults.corrupt(&mut bytes, id, step, false);
                stats.entry(step).or_default().bytes_down += bytes.len() as u64;
                if self.record {
                    transcript.to_clients.push((step, id, bytes.clone()));
                }
                if self.faults.is_offline(id, step) || out_of_time.contains(&id) {
                    continue;
                }
                let Some(client) = clients.get_mut(&id) else {
                    continue;
                };
                let start = Instant::now();
                let reply = ServerEnvelope::parse(&bytes, self.config.max_message())
                    .and_then(|m| client.handle(&m, rng))
                    .and_then(|r| r.to_bytes());
                add_client_time(stats.entry(step).or_default(), start.elapsed());
                match reply {
                    Ok(b) => outgoing.push((id, b)),
                    Err(e) => client_errors.push((id, step, e)),
                }
            }
        }
    }

    fn report(
        &self,
        output: SumResult<AggregationOutput<F::Elem>>,
        stats: BTreeMap<Step, StepStats>,
        client_errors: Vec<(ClientId, Step, SumError)>,
        server: &Server<F>,
        transcript: Transcript,
    ) -> RunReport<F::Elem> {
        RunReport {
            output,
            stats,
            client_errors,
            server_rejections: server.rejected().to_vec(),
            transcript: self.record.then_some(transcript),
        }
    }
}

fn add_client_time(st: &mut StepStats, d: Duration) {
    st.clients += 1;
    st.client_time += d;
    st.client_max = st.client_max.max(d);
}

/// Runs one secure aggregation in process: builds the graph the
/// parameters name (a random ring for SecAgg+) and a random session, runs
/// every client and the server over [`InProcess`] with the
/// given faults, and returns the sum and the clients it includes.
///
/// # Errors
///
/// [`SumError::InvalidParams`] for invalid parameters or vectors of
/// different lengths, [`ProtocolError::NotEnoughClients`] when too many
/// clients drop (nothing is unmasked then), and the server's other errors.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel};
/// use masked_sum::secagg::run_secure_aggregation;
/// use masked_sum::secagg::transport::Faults;
/// use masked_sum::secagg::Step;
///
/// let f = Mersenne61;
/// let vectors: Vec<(u64, Vec<u64>)> = (1..=5).map(|id| (id, vec![id, 2 * id])).collect();
/// let params = SecAggParams::new(GraphChoice::Complete, 4, 1, ServerModel::SemiMalicious);
/// // Client 5 goes silent before sending its masked input.
/// let faults = Faults::new().drop_from(5, Step::MaskedInput);
/// let (sum, included) = run_secure_aggregation(f, vectors, &params, &faults, &mut rand::rng())?;
/// assert_eq!(sum, vec![f.from_u64(10), f.from_u64(20)]);
/// assert_eq!(included.len(), 4);
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub fn run_secure_aggregation<F: FiniteField, R: CryptoRng + ?Sized>(
    field: F,
    vectors: Vec<(ClientId, Vec<F::Elem>)>,
    params: &SecAggParams,
    faults: &Faults,
    rng: &mut R,
) -> SumResult<(Vec<F::Elem>, BTreeSet<ClientId>)> {
    let len = vectors.first().map_or(0, |(_, v)| v.len());
    if vectors.iter().any(|(_, v)| v.len() != len) {
        return Err(invalid("all input vectors must have the same length"));
    }
    let graph = params.graph_for(vectors.iter().map(|(id, _)| *id), rng)?;
    let mut session = [0u8; 32];
    rng.fill_bytes(&mut session);
    let ctx = RoundContext {
        session: SessionId(session),
        round: 0,
    };
    let config = Arc::new(SessionConfig::new(field, ctx, graph, *params, len)?);
    let run = InProcess::new(config)
        .with_faults(faults.clone())
        .run(vectors, rng)?;
    let out = run.output?;
    Ok((out.sum, out.included))
}
