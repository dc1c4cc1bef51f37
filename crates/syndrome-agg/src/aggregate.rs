//! The server's aggregation state (Algorithm 2 of the paper, line 3), as
//! a plain value and pure state transitions: no I/O, messages in and out.

use std::collections::BTreeSet;

use crate::error::{ProtocolError, SketchError, SketchResult};
use crate::sketch::{LinearParams, LinearSketch, MaskedSketch};
use crate::sparse::SparseVector;
use masked_sum::RoundContext;

/// The server's state for one round: it accepts each client's masked
/// sketch once and adds it to a running sum (Algorithm 2, line 3), for any
/// [`LinearSketch`].
///
/// Rejected messages leave the state unchanged: a different field or
/// parameters, another session or round (replay, docs/threat-model.md R2), or a client
/// already counted (first write wins, docs/threat-model.md R1).
///
/// See [`MaskedSketch`] for an example.
#[derive(Clone, Debug)]
pub struct Aggregator<S: LinearSketch> {
    context: RoundContext,
    min_clients: usize,
    sum: S,
    clients: BTreeSet<u64>,
}

impl<S: LinearSketch> Aggregator<S> {
    /// An empty round that will release an aggregate of at least
    /// `min_clients` clients (docs/threat-model.md §2.1: with too few clients the output
    /// reveals individual inputs).
    pub fn new(params: &S::Params, context: RoundContext, min_clients: usize) -> Self {
        Self {
            context,
            min_clients,
            sum: S::new(params),
            clients: BTreeSet::new(),
        }
    }

    /// Adds one client's message.
    ///
    /// # Errors
    ///
    /// [`ParamsError::ParamsMismatch`](crate::ParamsError::ParamsMismatch) for other parameters,
    /// [`ProtocolError::MessageRejected`] for another session or round or a
    /// duplicate client.
    pub fn accept(&mut self, msg: &MaskedSketch<S>) -> SketchResult<()> {
        self.sum.params().check_same(msg.params())?;
        if *msg.context() != self.context {
            return Err(SketchError::Protocol(ProtocolError::MessageRejected {
                reason: format!(
                    "message of round {} in another session or round (expected round {})",
                    msg.context().round,
                    self.context.round
                ),
            }));
        }
        if self.clients.contains(&msg.client_id()) {
            return Err(SketchError::Protocol(ProtocolError::MessageRejected {
                reason: format!("duplicate message from client {}", msg.client_id()),
            }));
        }
        // The masked sketches add as sketches do, on the sketch's own
        // elements (an `AnySketch` adds its concrete field's).
        self.sum.add(msg.masked())?;
        self.clients.insert(msg.client_id());
        Ok(())
    }

    /// The clients counted so far.
    pub fn clients(&self) -> &BTreeSet<u64> {
        &self.clients
    }

    /// The summed sketch (the masks cancel once every client of the round
    /// is in).
    ///
    /// # Errors
    ///
    /// [`ProtocolError::MessageRejected`] with fewer than `min_clients`
    /// clients.
    pub fn finish(self) -> SketchResult<S> {
        if self.clients.len() < self.min_clients {
            return Err(SketchError::Protocol(ProtocolError::MessageRejected {
                reason: format!(
                    "only {} clients, at least {} required",
                    self.clients.len(),
                    self.min_clients
                ),
            }));
        }
        Ok(self.sum)
    }

    /// [`finish`](Self::finish), then [`LinearSketch::decode`].
    ///
    /// # Errors
    ///
    /// As [`finish`](Self::finish) and [`LinearSketch::decode`].
    pub fn decode(self) -> SketchResult<SparseVector<S::Key, S::Count>> {
        self.finish()?.decode()
    }
}
