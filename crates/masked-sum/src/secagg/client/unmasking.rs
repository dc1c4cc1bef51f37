//! The client's answer to the unmasking request (the Unmasking step): it
//! checks the alive and dropped lists against the set it attested and the
//! attestations of its peers (docs/threat-model.md S6, S7), then reveals a
//! seed share of each live peer and a key share of each dropped one, never
//! both for one peer.

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

use super::super::messages::{ClientBody, RevealedShare, UnmaskingRequest, UnmaskingResponse};
use super::super::session::{abort, attestation_tag, ct_eq};
use super::super::shamir::SecretShare;
use super::{AttestKeys, Client, State};
use crate::context::ClientId;
use crate::error::SumResult;
use crate::step::Step;

impl<F: FiniteField> Client<F> {
    pub(super) fn unmask(
        &self,
        held: &BTreeMap<ClientId, (SecretShare, SecretShare)>,
        own_seed_share: &SecretShare,
        attest: &AttestKeys,
        attested: &[ClientId],
        req: &UnmaskingRequest,
    ) -> SumResult<(State<F::Elem>, ClientBody)> {
        let (me, step) = (self.id, Step::Unmasking);
        let mut named = BTreeSet::new();
        for id in req.alive.iter().chain(&req.dropped) {
            if *id == me {
                return Err(abort(me, step, "the request names this client"));
            }
            if !held.contains_key(id) {
                return Err(abort(
                    me,
                    step,
                    format!("client {id} is not a peer this client masked with"),
                ));
            }
            if !named.insert(*id) {
                return Err(abort(
                    me,
                    step,
                    format!("client {id} is named twice (or both alive and dropped)"),
                ));
            }
        }
        // The consistent-lie attack (docs/threat-model.md S6): a server
        // that calls almost everyone dropped collects the key shares of
        // every peer and the seed shares of the one it calls alive, and so
        // unmasks that one input. The server only ever needs the seeds of
        // at least `t` survivors (the sum is over at least `t` inputs), so
        // a request naming fewer is a lie, and answering it reveals more
        // than any honest round would. (The attested-set checks below imply
        // this one; it stays as the first, named refusal of the attack.)
        let t = self.config.threshold();
        if req.alive.len().saturating_add(1) < t {
            return Err(abort(
                me,
                step,
                format!(
                    "{} clients alive with this one, the threshold is {t}",
                    req.alive.len().saturating_add(1)
                ),
            ));
        }
        // docs/threat-model.md S7: the lists are those the attested set
        // implies, and at least t - 1 alive peers attested the same set to
        // this client. Honest clients attest one set each, so no two
        // honest responders answer for different sets.
        let graph = self.config.graph();
        let alive: BTreeSet<ClientId> = attested
            .iter()
            .copied()
            .filter(|w| *w != me && graph.are_neighbours(me, *w))
            .collect();
        let dropped: BTreeSet<ClientId> = held
            .keys()
            .copied()
            .filter(|w| attested.binary_search(w).is_err())
            .collect();
        let asked_alive: BTreeSet<ClientId> = req.alive.iter().copied().collect();
        let asked_dropped: BTreeSet<ClientId> = req.dropped.iter().copied().collect();
        if asked_alive != alive || asked_dropped != dropped {
            return Err(abort(
                me,
                step,
                "the alive and dropped lists are not those of the attested alive set",
            ));
        }
        let mut vouched = BTreeSet::new();
        for a in &req.attestations {
            if !alive.contains(&a.peer) {
                return Err(abort(
                    me,
                    step,
                    format!("an attestation from client {}, not an alive peer", a.peer),
                ));
            }
            if !vouched.insert(a.peer) {
                return Err(abort(
                    me,
                    step,
                    format!("two attestations from client {}", a.peer),
                ));
            }
            let key = self.pair_attest_key(attest, a.peer, step)?;
            let expected = attestation_tag(key, self.config.context(), a.peer, me, attested);
            if !ct_eq(&expected, &a.tag) {
                return Err(abort(
                    me,
                    step,
                    format!(
                        "client {}'s attestation is not of the alive set this client attested",
                        a.peer
                    ),
                ));
            }
        }
        if vouched.len().saturating_add(1) < t {
            return Err(abort(
                me,
                step,
                format!(
                    "{} attestations of the alive set with this client's own, the threshold is {t}",
                    vouched.len().saturating_add(1)
                ),
            ));
        }
        let reveal = |owner: ClientId, share: &SecretShare| RevealedShare {
            owner,
            share: share.to_bytes(),
        };
        let mut seed_shares = vec![reveal(me, own_seed_share)];
        seed_shares.extend(
            req.alive
                .iter()
                .filter_map(|id| held.get(id).map(|(_, s)| reveal(*id, s))),
        );
        let key_shares = req
            .dropped
            .iter()
            .filter_map(|id| held.get(id).map(|(k, _)| reveal(*id, k)))
            .collect();
        Ok((
            State::Done,
            ClientBody::UnmaskingResponse(UnmaskingResponse {
                seed_shares,
                key_shares,
            }),
        ))
    }
}
