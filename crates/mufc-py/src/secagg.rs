//! SecAgg (Bonawitz et al. 2017, with SecAgg+'s sparse graphs left to the
//! Rust API) over a sketch, from Python: each client a `SecAggClient`, the
//! server a `SecAggServer`, every message bytes in and bytes out, so that
//! any transport carries them; a client that does not answer a step is
//! left out from it (a dropout), and the server decodes the sum of the
//! clients whose masked input it took.
//!
//! The protocol runs in the sketch's own field (`ValidAnyParams::mask_field`),
//! chosen at run time: the parties are typed by it inside (`FieldVisitor`)
//! and erased behind one object-safe trait each.

use std::sync::Arc;

use field::FiniteField;
use field::primes::{FieldChoice, FieldVisitor};
use masked_sum::secagg::client::{Client, RoundLedger};
use masked_sum::secagg::graph::Neighbourhoods;
use masked_sum::secagg::messages::ServerEnvelope;
use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel};
use masked_sum::secagg::server::{Advance, Server};
use masked_sum::secagg::{SessionConfig, Step};
use masked_sum::{RoundContext, SumError};
use num_bigint::BigUint;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rand_chacha::ChaCha20Rng;
use syndrome_agg::{AnySketch, LinearParams, LinearSketch, ValidAnyParams};

use crate::agg::{SketchParams, context, entries_of, generator};
use crate::errors::{self, ConfigError, ProtocolError};

/// Adds the SecAgg classes.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SecAggClient>()?;
    m.add_class::<SecAggServer>()?;
    Ok(())
}

fn sum_err(e: SumError) -> PyErr {
    errors::sketch(e.into())
}

/// The session every party of a round builds alike: the sketch's field,
/// the round, the complete graph over `ring`, threshold `threshold`.
fn session<F: FiniteField>(
    field: F,
    ctx: RoundContext,
    ring: &[u64],
    threshold: usize,
    len: usize,
) -> Result<Arc<SessionConfig<F>>, SumError> {
    let params = SecAggParams::new(
        GraphChoice::Complete,
        threshold,
        0,
        ServerModel::SemiMalicious,
    );
    let graph = Neighbourhoods::complete(ring.iter().copied())?;
    Ok(Arc::new(SessionConfig::new(
        field, ctx, graph, params, len,
    )?))
}

/// The field the sketches of `params` live in.
fn field_of(params: &ValidAnyParams) -> PyResult<FieldChoice> {
    params
        .mask_field()
        .ok_or_else(|| ConfigError::new_err("SecAgg needs a sketch over a field"))
}

/// A client's steps, its field erased.
trait ClientSteps: Send {
    fn handle(&mut self, bytes: &[u8]) -> Result<Vec<u8>, SumError>;
}

struct TypedClient<F: FiniteField> {
    client: Client<F>,
    rng: ChaCha20Rng,
    max: usize,
}

impl<F: FiniteField> ClientSteps for TypedClient<F> {
    fn handle(&mut self, bytes: &[u8]) -> Result<Vec<u8>, SumError> {
        let msg = ServerEnvelope::parse(bytes, self.max)?;
        self.client.handle(&msg, &mut self.rng)?.to_bytes()
    }
}

/// Builds a client and its first message.
struct NewClient<'a> {
    ctx: RoundContext,
    ring: &'a [u64],
    threshold: usize,
    id: u64,
    sketch: &'a AnySketch,
    rng: ChaCha20Rng,
}

impl FieldVisitor for NewClient<'_> {
    type Output = Result<(Box<dyn ClientSteps>, Vec<u8>), SumError>;

    fn visit<F: FiniteField>(self, field: F) -> Self::Output {
        let input: Vec<F::Elem> = self
            .sketch
            .to_dense()
            .iter()
            .map(|x| field.from_biguint(x))
            .collect();
        let config = session(field, self.ctx, self.ring, self.threshold, input.len())?;
        let max = config.max_message();
        let mut rng = self.rng;
        let (client, first) = Client::new(
            config,
            self.id,
            input,
            &mut RoundLedger::default(),
            &mut rng,
        )?;
        let typed = TypedClient { client, rng, max };
        Ok((Box::new(typed) as Box<dyn ClientSteps>, first.to_bytes()?))
    }
}

/// The server's steps, its field erased.
trait ServerSteps: Send {
    fn receive(&mut self, bytes: &[u8]) -> Result<(), SumError>;
    fn advance(&mut self) -> Result<Stepped, SumError>;
}

/// What a server's step gives: the next messages, or the unmasked sum
/// (canonical residues) with the clients it holds and those that dropped.
enum Stepped {
    Send(Vec<(u64, Vec<u8>)>),
    Sum(Unmasked),
}

/// An unmasked sum (canonical residues), the clients it holds, and those
/// that dropped with the step.
type Unmasked = (Vec<BigUint>, Vec<u64>, Vec<(u64, Step)>);

struct TypedServer<F: FiniteField> {
    field: F,
    server: Server<F>,
}

impl<F: FiniteField> ServerSteps for TypedServer<F> {
    fn receive(&mut self, bytes: &[u8]) -> Result<(), SumError> {
        self.server.receive_bytes(bytes)
    }

    fn advance(&mut self) -> Result<Stepped, SumError> {
        Ok(match self.server.advance()? {
            Advance::Send(msgs) => Stepped::Send(
                msgs.iter()
                    .map(|m| Ok((m.client, m.to_bytes()?)))
                    .collect::<Result<_, SumError>>()?,
            ),
            Advance::Finished(out) => Stepped::Sum((
                out.sum.iter().map(|x| self.field.to_biguint(x)).collect(),
                out.included.into_iter().collect(),
                out.dropped.into_iter().collect(),
            )),
        })
    }
}

/// Builds a server.
struct NewServer<'a> {
    ctx: RoundContext,
    ring: &'a [u64],
    threshold: usize,
    len: usize,
}

impl FieldVisitor for NewServer<'_> {
    type Output = Result<Box<dyn ServerSteps>, SumError>;

    fn visit<F: FiniteField>(self, field: F) -> Self::Output {
        let config = session(field.clone(), self.ctx, self.ring, self.threshold, self.len)?;
        Ok(Box::new(TypedServer {
            field,
            server: Server::new(config),
        }))
    }
}

/// One client of a SecAgg round over a sketch: built from its sketch, it
/// gives its first message; then it answers each of the server's messages
/// (bytes in, bytes out). Every client of the round is built with the same
/// `ring` (the ids of the round's clients) and `threshold` (the fewest
/// clients whose shares unmask; more dropouts than `len(ring) - threshold`
/// fail the round, never a wrong sum). `seed` (32 bytes) makes its
/// secrets reproducible, for tests; without it they are the operating
/// system's.
// `unsendable`: the protocol's state is Send, not Sync.
#[pyclass(module = "mufc._native", unsendable)]
pub(crate) struct SecAggClient {
    steps: Box<dyn ClientSteps>,
    first: Option<Vec<u8>>,
}

impl std::fmt::Debug for SecAggClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecAggClient(..)")
    }
}

#[pymethods]
impl SecAggClient {
    #[new]
    #[pyo3(signature = (sketch, client_id, ring, threshold, session, round, seed=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        sketch: &crate::agg::Sketch,
        client_id: u64,
        ring: Vec<u64>,
        threshold: usize,
        session: &[u8],
        round: u64,
        seed: Option<&[u8]>,
    ) -> PyResult<Self> {
        let params = sketch.inner().params().clone();
        let visitor = NewClient {
            ctx: context(session, round)?,
            ring: &ring,
            threshold,
            id: client_id,
            sketch: sketch.inner(),
            rng: generator(seed)?,
        };
        let (steps, first) = field_of(&params)?.visit(visitor).map_err(sum_err)?;
        Ok(Self {
            steps,
            first: Some(first),
        })
    }

    /// The client's first message (its keys), once.
    fn first_message<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let first = self
            .first
            .take()
            .ok_or_else(|| ProtocolError::new_err("the first message was taken already"))?;
        Ok(PyBytes::new(py, &first))
    }

    /// The client's answer to the server's message; a refusal (a message
    /// out of turn, of another round, a lying server) raises, and a client
    /// that aborted answers nothing more.
    fn handle<'py>(&mut self, py: Python<'py>, message: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let reply = self.steps.handle(message).map_err(sum_err)?;
        Ok(PyBytes::new(py, &reply))
    }
}

/// The server of a SecAgg round over sketches of `params`: takes the
/// clients' messages (`receive`), closes each step (`advance`: the next
/// messages, by client, or `None` once the sum is unmasked), and decodes
/// the sum of the clients it holds (`decode`).
#[pyclass(module = "mufc._native", unsendable)]
pub(crate) struct SecAggServer {
    params: ValidAnyParams,
    steps: Box<dyn ServerSteps>,
    sum: Option<Unmasked>,
}

impl std::fmt::Debug for SecAggServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecAggServer(..)")
    }
}

/// A step's messages, `(client id, bytes)`, or `None` once finished.
type Messages<'py> = Option<Vec<(u64, Bound<'py, PyBytes>)>>;

#[pymethods]
impl SecAggServer {
    #[new]
    fn new(
        params: &SketchParams,
        ring: Vec<u64>,
        threshold: usize,
        session: &[u8],
        round: u64,
    ) -> PyResult<Self> {
        let params = params.inner().clone();
        let visitor = NewServer {
            ctx: context(session, round)?,
            ring: &ring,
            threshold,
            len: params.num_elements(),
        };
        let steps = field_of(&params)?.visit(visitor).map_err(sum_err)?;
        Ok(Self {
            params,
            steps,
            sum: None,
        })
    }

    /// Takes a client's message of the current step (one that is refused
    /// raises and changes nothing).
    fn receive(&mut self, message: &[u8]) -> PyResult<()> {
        self.steps.receive(message).map_err(sum_err)
    }

    /// Closes the current step: the clients that did not answer are out.
    /// Returns the next step's messages, or `None` once the sum is
    /// unmasked.
    fn advance<'py>(&mut self, py: Python<'py>) -> PyResult<Messages<'py>> {
        match self.steps.advance().map_err(sum_err)? {
            Stepped::Send(msgs) => Ok(Some(
                msgs.into_iter()
                    .map(|(c, m)| (c, PyBytes::new(py, &m)))
                    .collect(),
            )),
            Stepped::Sum(unmasked) => {
                self.sum = Some(unmasked);
                Ok(None)
            }
        }
    }

    /// The clients the sum holds, once unmasked.
    #[getter]
    fn included(&self) -> PyResult<Vec<u64>> {
        Ok(self.finished()?.1.clone())
    }

    /// The clients left out, with the step each missed.
    #[getter]
    fn dropped(&self) -> PyResult<Vec<(u64, String)>> {
        Ok(self
            .finished()?
            .2
            .iter()
            .map(|(c, s)| (*c, s.to_string()))
            .collect())
    }

    /// The decoded sum of the included clients' sketches, `(key, count)`
    /// by key.
    fn decode<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        let sum = AnySketch::from_dense(&self.params, self.finished()?.0.clone())
            .map_err(errors::sketch)?;
        entries_of(py, &sum)
    }
}

impl SecAggServer {
    fn finished(&self) -> PyResult<&Unmasked> {
        self.sum.as_ref().ok_or_else(|| {
            ProtocolError::new_err("the sum is not unmasked yet: advance until None")
        })
    }
}
