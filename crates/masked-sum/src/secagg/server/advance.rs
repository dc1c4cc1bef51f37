//! The close of each step ([`Server::advance`]): the clients that did not
//! answer are out, and the server builds the next step's messages from
//! what it collected, or, after unmasking, hands over to the final sum.

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use std::collections::{BTreeMap, BTreeSet};

use field::FiniteField;

use super::super::messages::{
    Attestation, ConsistencyRequest, EncryptedShare, KeyDirectory, MaskingRequest, ServerBody,
    ServerEnvelope, UnmaskingRequest,
};
use super::{Advance, Phase, Server};
use crate::context::ClientId;
use crate::error::{ProtocolError, SumError, SumResult};
use crate::step::Step;

impl<F: FiniteField> Server<F> {
    fn enough(&mut self, step: Step, have: usize) -> SumResult<()> {
        let need = self.config.min_clients();
        if have < need {
            self.phase = Phase::Aborted;
            return Err(SumError::Protocol(ProtocolError::NotEnoughClients {
                step,
                have,
                need,
            }));
        }
        Ok(())
    }

    fn mark_dropped(
        &mut self,
        step: Step,
        expected: &BTreeSet<ClientId>,
        answered: &BTreeSet<ClientId>,
    ) {
        for id in expected.difference(answered) {
            self.dropped.entry(*id).or_insert(step);
        }
    }

    /// Closes the current step (every client answered, or the deadline
    /// passed): the clients that did not answer are out, and the server
    /// sends the next step's messages or, after unmasking, the sum.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::NotEnoughClients`] when fewer than the threshold (or
    /// `min_clients`) answered, or some needed secret has fewer than `t`
    /// shares: nothing is reconstructed then. [`ProtocolError::BadShares`]
    /// when a secret's shares are inconsistent with its commitment beyond
    /// correction. After an error the server is aborted for good.
    pub fn advance(&mut self) -> SumResult<Advance<F::Elem>> {
        let Phase::Collecting(step) = self.phase else {
            return Err(SumError::Protocol(ProtocolError::MessageRejected {
                reason: "the protocol is over".into(),
            }));
        };
        let expected = self.expected();
        let answered = self.answered();
        self.mark_dropped(step, &expected, &answered);
        self.enough(step, answered.len())?;
        let ctx = *self.config.context();
        let graph = self.config.graph().clone();
        match step {
            Step::AdvertiseKeys => {
                let mut out = Vec::with_capacity(self.u1.len());
                for id in self.u1.keys() {
                    let entries = graph
                        .holders(*id)?
                        .into_iter()
                        .filter_map(|h| self.u1.get(&h).map(|k| (h, *k)))
                        .collect();
                    out.push(ServerEnvelope::new(
                        &ctx,
                        *id,
                        ServerBody::KeyDirectory(KeyDirectory { entries }),
                    ));
                }
                self.phase = Phase::Collecting(Step::ShareKeys);
                Ok(Advance::Send(out))
            }
            Step::ShareKeys => {
                self.u2 = answered;
                let mut requests: BTreeMap<ClientId, Vec<EncryptedShare>> =
                    self.u2.iter().map(|id| (*id, Vec::new())).collect();
                for (from, list) in core::mem::take(&mut self.shares) {
                    for EncryptedShare { peer, ciphertext } in list {
                        if let Some(r) = requests.get_mut(&peer) {
                            r.push(EncryptedShare {
                                peer: from,
                                ciphertext,
                            });
                        }
                    }
                }
                let out = requests
                    .into_iter()
                    .map(|(id, shares)| {
                        ServerEnvelope::new(
                            &ctx,
                            id,
                            ServerBody::MaskingRequest(MaskingRequest { shares }),
                        )
                    })
                    .collect();
                self.phase = Phase::Collecting(Step::MaskedInput);
                Ok(Advance::Send(out))
            }
            Step::MaskedInput => {
                // docs/threat-model.md S7: one alive set for everyone, which
                // each survivor attests to its alive peers.
                let alive: Vec<ClientId> = self.u3.iter().copied().collect();
                let out = self
                    .u3
                    .iter()
                    .map(|id| {
                        ServerEnvelope::new(
                            &ctx,
                            *id,
                            ServerBody::ConsistencyRequest(ConsistencyRequest {
                                alive: alive.clone(),
                            }),
                        )
                    })
                    .collect();
                self.phase = Phase::Collecting(Step::ConsistencyCheck);
                Ok(Advance::Send(out))
            }
            Step::ConsistencyCheck => {
                self.u4 = answered;
                let mut out = Vec::with_capacity(self.u4.len());
                for id in &self.u4 {
                    let neighbours = graph.neighbours(*id)?;
                    let alive: BTreeSet<ClientId> = neighbours
                        .iter()
                        .copied()
                        .filter(|v| self.u3.contains(v))
                        .collect();
                    let dropped: BTreeSet<ClientId> = neighbours
                        .iter()
                        .copied()
                        .filter(|v| self.u2.contains(v) && !self.u3.contains(v))
                        .collect();
                    let attestations = self
                        .attestations
                        .iter()
                        .filter_map(|(from, tags)| {
                            tags.get(id).map(|tag| Attestation {
                                peer: *from,
                                tag: *tag,
                            })
                        })
                        .collect();
                    out.push(ServerEnvelope::new(
                        &ctx,
                        *id,
                        ServerBody::UnmaskingRequest(UnmaskingRequest {
                            alive: alive.iter().copied().collect(),
                            dropped: dropped.iter().copied().collect(),
                            attestations,
                        }),
                    ));
                    self.asked.insert(*id, (alive, dropped));
                }
                self.phase = Phase::Collecting(Step::Unmasking);
                Ok(Advance::Send(out))
            }
            Step::Unmasking => match self.finish() {
                Ok(out) => {
                    self.phase = Phase::Finished;
                    Ok(Advance::Finished(out))
                }
                Err(e) => {
                    self.phase = Phase::Aborted;
                    Err(e)
                }
            },
        }
    }
}
