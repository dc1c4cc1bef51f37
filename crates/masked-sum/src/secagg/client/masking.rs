//! The client's answer to the masking request (the MaskedInput step): it
//! opens the shares its peers sent and masks its input with the self-mask
//! and the pairwise masks of the peers that sent them.

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

use super::super::messages::{ClientBody, EncryptedShare, MaskedInput, MaskingRequest};
use super::super::session::{abort, self_mask};
use super::super::shamir::SecretShare;
use super::shares::open_share;
use super::{AttestKeys, Client, PeerKeys, State};
use crate::context::ClientId;
use crate::error::SumResult;
use crate::masking::pairwise::{MaskPublicKey, combine_terms, peer_mask_terms};
use crate::step::Step;
use crate::wire::field_bytes;

impl<F: FiniteField> Client<F> {
    pub(super) fn masked_input(
        &self,
        input: Vec<F::Elem>,
        peers: &BTreeMap<ClientId, PeerKeys>,
        own_seed_share: SecretShare,
        attest: AttestKeys,
        req: &MaskingRequest,
    ) -> SumResult<(State<F::Elem>, ClientBody)> {
        let (me, step) = (self.id, Step::MaskedInput);
        let mut held = BTreeMap::new();
        for EncryptedShare { peer, ciphertext } in &req.shares {
            let Some(keys) = peers.get(peer) else {
                return Err(abort(
                    me,
                    step,
                    format!("client {peer} is not a peer of the directory"),
                ));
            };
            if held.contains_key(peer) {
                return Err(abort(me, step, format!("client {peer} listed twice")));
            }
            let pair = open_share(
                &self.enc,
                me,
                *peer,
                &keys.enc,
                self.config.context(),
                ciphertext,
            )?;
            held.insert(*peer, pair);
        }
        let t = self.config.threshold();
        if held.len().saturating_add(1) < t {
            return Err(abort(
                me,
                step,
                format!(
                    "{} peers left, the threshold is {t}",
                    held.len().saturating_add(1)
                ),
            ));
        }
        let f = self.config.field();
        let len = self.config.vector_len();
        let ctx = self.config.context();
        let maskers: Vec<(ClientId, MaskPublicKey)> = held
            .keys()
            .filter_map(|id| peers.get(id).map(|k| (*id, k.mask)))
            .collect();
        let terms = peer_mask_terms(f, len, &self.mask, me, &maskers, ctx)
            .map_err(|e| abort(me, step, e.to_string()))?;
        let pairwise = combine_terms(f, len, &terms);
        let own = self_mask(f, len, &self.seed, ctx, me)?;
        let masked: Vec<F::Elem> = input
            .iter()
            .zip(&pairwise.0)
            .zip(&own.0)
            .map(|((x, p), s)| f.add(&f.add(x, p), s))
            .collect();
        drop(input);
        let body = ClientBody::MaskedInput(MaskedInput {
            modulus: f.characteristic().to_bytes_le(),
            elements: field_bytes(f, &masked),
        });
        Ok((
            State::AwaitingConsistency {
                held,
                own_seed_share,
                attest,
            },
            body,
        ))
    }
}
