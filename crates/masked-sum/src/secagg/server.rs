//! The server's state machine: it collects one step's messages
//! ([`Server::receive`]) until the transport calls [`Server::advance`]
//! (every client answered, or the deadline passed), then sends the next
//! step's messages, and after unmasking returns the sum.
//!
//! The server never asks one client for both shares of one peer, checks
//! every reconstructed secret (the self-mask seed against its commitment,
//! the mask secret key against its public key) and, when a check fails and
//! it holds more than `t` shares, corrects bad shares before giving up
//! (docs/threat-model.md S4). If any needed secret has fewer than `t` shares it aborts
//! before reconstructing anything (docs/threat-model.md D4).
//!
//! This file holds the server's state and its entry points: what it
//! expects and has received, and [`Server::receive`], which logs every
//! refusal. The work of each part of a step lives beside it: `collect`
//! (the checks of each client message and what is kept of it), `advance`
//! (closing a step and the next step's messages), `unmask` (reconstructing
//! and checking the secrets, and the final sum), `parse` (masked inputs
//! and unmasking responses read from their bytes) and `subsets` (the
//! `t`-subsets tried when shares disagree).

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use core::fmt;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use field::FiniteField;

use super::messages::{AdvertiseKeys, ClientEnvelope, EncryptedShare, ServerEnvelope};
use super::session::{AggregationOutput, SessionConfig};
use crate::context::ClientId;
use crate::error::{SumError, SumResult};
use crate::step::Step;

mod advance;
mod collect;
mod parse;
mod subsets;
mod unmask;

use parse::Revealed;

/// The most refusals [`Server::rejected`] keeps.
pub const MAX_LOGGED: usize = 4096;

/// The most `t`-subsets of one secret's shares the server tries when the
/// shares disagree and Gao's decoder cannot correct them: every subset
/// that leaves out one share (the `t + 1` case) and far more, with the
/// work bounded whatever a malicious peer sends.
pub const MAX_SUBSETS: usize = 4096;

/// What [`Server::advance`] produces.
#[derive(Debug)]
pub enum Advance<E> {
    /// The next step's messages, one per client still in.
    Send(Vec<ServerEnvelope>),
    /// The protocol is over.
    Finished(AggregationOutput<E>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Collecting(Step),
    Finished,
    Aborted,
}

/// The server of one aggregation round.
///
/// # Example
///
/// Driving the state machines by hand, without a transport:
///
/// ```
/// use std::sync::Arc;
/// use field::{Field, Mersenne61};
/// use masked_sum::masking::pairwise::{RoundContext, SessionId};
/// use masked_sum::secagg::client::{Client, RoundLedger};
/// use masked_sum::secagg::graph::Neighbourhoods;
/// use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel};
/// use masked_sum::secagg::server::{Advance, Server};
/// use masked_sum::secagg::SessionConfig;
///
/// let f = Mersenne61;
/// let mut rng = rand::rng();
/// let ctx = RoundContext { session: SessionId([2; 32]), round: 0 };
/// let params = SecAggParams::new(GraphChoice::Complete, 2, 0, ServerModel::SemiHonest);
/// let cfg = Arc::new(SessionConfig::new(f, ctx, Neighbourhoods::complete(1..=3)?, params, 2)?);
/// let mut server = Server::new(cfg.clone());
/// let mut clients = Vec::new();
/// for id in 1..=3u64 {
///     let (c, msg) = Client::new(cfg.clone(), id, vec![id, 10], &mut RoundLedger::default(), &mut rng)?;
///     server.receive(msg)?;
///     clients.push(c);
/// }
/// let out = loop {
///     match server.advance()? {
///         Advance::Send(msgs) => {
///             for m in msgs {
///                 let c = clients.iter_mut().find(|c| c.id() == m.client).unwrap();
///                 server.receive(c.handle(&m, &mut rng)?)?;
///             }
///         }
///         Advance::Finished(o) => break o,
///     }
/// };
/// assert_eq!(out.sum, vec![6, 30]);
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub struct Server<F: FiniteField> {
    config: Arc<SessionConfig<F>>,
    phase: Phase,
    u1: BTreeMap<ClientId, AdvertiseKeys>,
    shares: BTreeMap<ClientId, Vec<EncryptedShare>>,
    u2: BTreeSet<ClientId>,
    u3: BTreeSet<ClientId>,
    /// Each attester's tags, by receiver.
    attestations: BTreeMap<ClientId, BTreeMap<ClientId, [u8; 32]>>,
    /// The clients asked to unmask (those that attested).
    u4: BTreeSet<ClientId>,
    sum: Vec<F::Elem>,
    /// What each survivor was asked: (alive, dropped).
    asked: BTreeMap<ClientId, (BTreeSet<ClientId>, BTreeSet<ClientId>)>,
    responses: BTreeMap<ClientId, Revealed>,
    dropped: BTreeMap<ClientId, Step>,
    rejected: Vec<(ClientId, SumError)>,
}

impl<F: FiniteField> fmt::Debug for Server<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("phase", &self.phase)
            .field("dropped", &self.dropped)
            .finish_non_exhaustive()
    }
}

impl<F: FiniteField> Server<F> {
    /// A server waiting for AdvertiseKeys messages.
    pub fn new(config: Arc<SessionConfig<F>>) -> Self {
        let f = config.field();
        let sum = vec![f.zero(); config.vector_len()];
        Self {
            config,
            phase: Phase::Collecting(Step::AdvertiseKeys),
            u1: BTreeMap::new(),
            shares: BTreeMap::new(),
            u2: BTreeSet::new(),
            u3: BTreeSet::new(),
            attestations: BTreeMap::new(),
            u4: BTreeSet::new(),
            sum,
            asked: BTreeMap::new(),
            responses: BTreeMap::new(),
            dropped: BTreeMap::new(),
            rejected: Vec::new(),
        }
    }

    /// The step whose messages the server collects (`None` once finished
    /// or aborted).
    pub fn step(&self) -> Option<Step> {
        match self.phase {
            Phase::Collecting(s) => Some(s),
            Phase::Finished | Phase::Aborted => None,
        }
    }

    /// The clients expected to answer the current step (those still in).
    pub fn expected(&self) -> BTreeSet<ClientId> {
        match self.phase {
            Phase::Collecting(Step::AdvertiseKeys) => {
                self.config.graph().ring().iter().copied().collect()
            }
            Phase::Collecting(Step::ShareKeys) => self.u1.keys().copied().collect(),
            Phase::Collecting(Step::MaskedInput) => self.u2.clone(),
            Phase::Collecting(Step::ConsistencyCheck) => self.u3.clone(),
            Phase::Collecting(Step::Unmasking) => self.u4.clone(),
            Phase::Finished | Phase::Aborted => BTreeSet::new(),
        }
    }

    /// The clients that answered the current step so far.
    pub fn answered(&self) -> BTreeSet<ClientId> {
        match self.phase {
            Phase::Collecting(Step::AdvertiseKeys) => self.u1.keys().copied().collect(),
            Phase::Collecting(Step::ShareKeys) => self.shares.keys().copied().collect(),
            Phase::Collecting(Step::MaskedInput) => self.u3.clone(),
            Phase::Collecting(Step::ConsistencyCheck) => {
                self.attestations.keys().copied().collect()
            }
            Phase::Collecting(Step::Unmasking) => self.responses.keys().copied().collect(),
            Phase::Finished | Phase::Aborted => BTreeSet::new(),
        }
    }

    /// The messages refused so far and why (docs/threat-model.md R1: first write wins,
    /// plus an error log), the first [`MAX_LOGGED`] of them. Unparsable
    /// bytes are logged under `u64::MAX`.
    pub fn rejected(&self) -> &[(ClientId, SumError)] {
        &self.rejected
    }

    /// Accepts one client message of the current step.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::MessageRejected`](crate::ProtocolError::MessageRejected)
    /// for another session or round, an unknown client, a client that is
    /// out, a second message from one client (the first one counts), or
    /// shares and responses that do not fit what was asked;
    /// [`ProtocolError::UnexpectedMessage`](crate::ProtocolError::UnexpectedMessage)
    /// for another step (a late message after the deadline);
    /// [`SumError::WrongLength`],
    /// [`SumError::NonCanonical`] and
    /// [`SumError::Mismatch`]
    /// for bad elements. The state is unchanged and the refusal is logged
    /// in [`rejected`](Self::rejected).
    pub fn receive(&mut self, msg: ClientEnvelope) -> SumResult<()> {
        let client = msg.client;
        let r = self.receive_inner(msg);
        if let Err(e) = &r {
            self.log(client, e);
        }
        r
    }

    /// Logs a refusal; the log keeps the first [`MAX_LOGGED`] so that a
    /// flood of junk cannot grow it without bound.
    fn log(&mut self, client: ClientId, e: &SumError) {
        if self.rejected.len() < MAX_LOGGED {
            self.rejected.push((client, e.clone()));
        }
    }

    /// [`ClientEnvelope::parse`] (with the configured size cap) then
    /// [`receive`](Self::receive).
    ///
    /// # Errors
    ///
    /// As those two.
    pub fn receive_bytes(&mut self, bytes: &[u8]) -> SumResult<()> {
        match ClientEnvelope::parse(bytes, self.config.max_message()) {
            Ok(msg) => self.receive(msg),
            Err(e) => {
                self.log(ClientId::MAX, &e);
                Err(e)
            }
        }
    }
}
