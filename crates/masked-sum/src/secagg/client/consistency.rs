//! The client's answer to the consistency request (the ConsistencyCheck
//! step, docs/threat-model.md S7): it checks the alive set the server
//! announced and attests it, once, to each alive peer.

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use std::collections::BTreeMap;

use field::FiniteField;

use super::super::messages::{Attestation, Attestations, ClientBody, ConsistencyRequest};
use super::super::session::{abort, attestation_tag};
use super::super::shamir::SecretShare;
use super::{AttestKeys, Client, State};
use crate::context::ClientId;
use crate::error::SumResult;
use crate::step::Step;

impl<F: FiniteField> Client<F> {
    /// Round 3: attests the alive set, once, to every alive peer, after
    /// checking that the set names this client, is in increasing order
    /// without repeats, has at least `t` members among this client and its
    /// neighbours, and names no neighbour this client did not mask with
    /// (docs/threat-model.md S7: a server that shrank this client's
    /// masking set cannot then call its other peers alive).
    pub(super) fn attest(
        &self,
        held: BTreeMap<ClientId, (SecretShare, SecretShare)>,
        own_seed_share: SecretShare,
        attest: AttestKeys,
        req: &ConsistencyRequest,
    ) -> SumResult<(State<F::Elem>, ClientBody)> {
        let (me, step) = (self.id, Step::ConsistencyCheck);
        let graph = self.config.graph();
        let increasing = req.alive.windows(2).all(|w| matches!(w, [a, b] if a < b));
        if !increasing {
            return Err(abort(
                me,
                step,
                "the alive set is not in increasing order without repeats",
            ));
        }
        if req.alive.binary_search(&me).is_err() {
            return Err(abort(me, step, "the alive set does not name this client"));
        }
        if let Some(id) = req.alive.iter().find(|id| !graph.contains(**id)) {
            return Err(abort(
                me,
                step,
                format!("client {id} is not in this session"),
            ));
        }
        let mine: Vec<ClientId> = req
            .alive
            .iter()
            .copied()
            .filter(|w| *w != me && graph.are_neighbours(me, *w))
            .collect();
        if let Some(w) = mine.iter().find(|w| !held.contains_key(*w)) {
            return Err(abort(
                me,
                step,
                format!("client {w} is called alive but this client did not mask with it"),
            ));
        }
        let t = self.config.threshold();
        if mine.len().saturating_add(1) < t {
            return Err(abort(
                me,
                step,
                format!(
                    "{} clients alive with this one, the threshold is {t}",
                    mine.len().saturating_add(1)
                ),
            ));
        }
        let ctx = self.config.context();
        let mut tags = Vec::with_capacity(mine.len());
        for w in mine {
            let key = self.pair_attest_key(&attest, w, step)?;
            tags.push(Attestation {
                peer: w,
                tag: attestation_tag(key, ctx, me, w, &req.alive),
            });
        }
        Ok((
            State::AwaitingUnmasking {
                held,
                own_seed_share,
                attest,
                attested: req.alive.clone(),
            },
            ClientBody::Attestations(Attestations { tags }),
        ))
    }

    /// The attestation key this client shares with peer `w`.
    pub(super) fn pair_attest_key<'k>(
        &self,
        attest: &'k AttestKeys,
        w: ClientId,
        step: Step,
    ) -> SumResult<&'k [u8; 32]> {
        attest
            .get(&w)
            .map(|k| &**k)
            .ok_or_else(|| abort(self.id, step, format!("client {w} is not a peer")))
    }
}
