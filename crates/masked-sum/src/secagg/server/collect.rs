//! The server's collection of one step's messages: the checks each client
//! message passes before it counts ([`Server::receive`] hands every message
//! here), and what the server keeps of it.

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

use super::super::messages::{AdvertiseKeys, ClientBody, ClientEnvelope, EncryptedShare};
use super::super::session::ct_eq;
use super::parse::{parse_elements, parse_response, rejected};
use super::{Phase, Server};
use crate::context::ClientId;
use crate::error::{ProtocolError, SumError, SumResult, check_len};
use crate::masking::pairwise::{MaskKeyPair, MaskPublicKey};

impl<F: FiniteField> Server<F> {
    pub(super) fn receive_inner(&mut self, msg: ClientEnvelope) -> SumResult<()> {
        if msg.context() != *self.config.context() {
            return rejected(format!(
                "message of client {} for another session or round",
                msg.client
            ));
        }
        let id = msg.client;
        if !self.config.graph().contains(id) {
            return rejected(format!("client {id} is not in this session"));
        }
        let found = msg.body.step();
        let Phase::Collecting(step) = self.phase else {
            return Err(SumError::Protocol(ProtocolError::UnexpectedMessage {
                state: "finished",
                found,
            }));
        };
        if step != found {
            return Err(SumError::Protocol(ProtocolError::UnexpectedMessage {
                state: "collecting another step",
                found,
            }));
        }
        let dup = |id: ClientId| {
            rejected(format!(
                "duplicate message from client {id} (the first one counts)"
            ))
        };
        let out = |id: ClientId| rejected(format!("client {id} is no longer in the protocol"));
        match msg.body {
            ClientBody::AdvertiseKeys(keys) => {
                if self.u1.contains_key(&id) {
                    return dup(id);
                }
                check_advertised(id, &keys, &self.u1)?;
                self.u1.insert(id, keys);
            }
            ClientBody::ShareKeys(sk) => {
                if !self.u1.contains_key(&id) {
                    return out(id);
                }
                if self.shares.contains_key(&id) {
                    return dup(id);
                }
                let graph = self.config.graph();
                let mut to = BTreeSet::new();
                for EncryptedShare { peer, ciphertext } in &sk.shares {
                    if !graph.are_neighbours(id, *peer) || !self.u1.contains_key(peer) {
                        return rejected(format!("share from {id} to {peer}, not a holder"));
                    }
                    if !to.insert(*peer) {
                        return rejected(format!("two shares from {id} to {peer}"));
                    }
                    check_len(
                        super::super::client::SHARE_CIPHERTEXT_BYTES,
                        ciphertext.len(),
                    )?;
                }
                // Every holder that advertised gets a share, or none does:
                // a peer left out would not mask with this client while
                // this client masks with it, and their pairwise masks would
                // not cancel (a wrong sum, found by fuzzing; docs/fuzzing.md).
                let holders = graph
                    .neighbours(id)?
                    .into_iter()
                    .filter(|h| self.u1.contains_key(h))
                    .count();
                if to.len() != holders {
                    return rejected(format!(
                        "client {id} sent shares to {} of its {holders} holders",
                        to.len()
                    ));
                }
                self.shares.insert(id, sk.shares);
            }
            ClientBody::MaskedInput(mi) => {
                if !self.u2.contains(&id) {
                    return out(id);
                }
                if self.u3.contains(&id) {
                    return dup(id);
                }
                let f = self.config.field();
                if mi.modulus != f.characteristic().to_bytes_le() {
                    return Err(SumError::Mismatch {
                        what: "field modulus",
                    });
                }
                let y = parse_elements(f, &mi.elements, self.config.vector_len())?;
                for (a, b) in self.sum.iter_mut().zip(&y) {
                    f.add_assign(a, b);
                }
                self.u3.insert(id);
            }
            ClientBody::Attestations(att) => {
                if !self.u3.contains(&id) {
                    return out(id);
                }
                if self.attestations.contains_key(&id) {
                    return dup(id);
                }
                let graph = self.config.graph();
                let mut tags = BTreeMap::new();
                for a in &att.tags {
                    if !self.u3.contains(&a.peer) || !graph.are_neighbours(id, a.peer) {
                        return rejected(format!(
                            "attestation from {id} to {}, not an alive peer",
                            a.peer
                        ));
                    }
                    if tags.insert(a.peer, a.tag).is_some() {
                        return rejected(format!("two attestations from {id} to {}", a.peer));
                    }
                }
                self.attestations.insert(id, tags);
            }
            ClientBody::UnmaskingResponse(resp) => {
                let Some((alive, dropped)) = self.asked.get(&id) else {
                    return out(id);
                };
                if self.responses.contains_key(&id) {
                    return dup(id);
                }
                let parsed = parse_response(id, &resp, alive, dropped)?;
                self.responses.insert(id, parsed);
            }
        }
        Ok(())
    }
}

/// docs/threat-model.md S2 at the server: a client whose two keys are
/// equal, equal to a key another client advertised, or of low order in
/// X25519 is refused here, and so drops out at this step, instead of being
/// relayed to its peers, every one of which would then abort. (Keys are
/// fresh for each session and nobody sees another's before the directory
/// goes out, so the first to advertise a key is its owner.)
fn check_advertised(
    id: ClientId,
    keys: &AdvertiseKeys,
    earlier: &BTreeMap<ClientId, AdvertiseKeys>,
) -> SumResult<()> {
    if ct_eq(&keys.enc_key, &keys.mask_key) {
        return rejected(format!("client {id} advertised one key twice"));
    }
    let taken = earlier.iter().find(|(_, k)| {
        [k.enc_key, k.mask_key]
            .iter()
            .any(|x| ct_eq(x, &keys.enc_key) || ct_eq(x, &keys.mask_key))
    });
    if let Some((owner, _)) = taken {
        return rejected(format!("client {id} advertised a key of client {owner}"));
    }
    // A fixed probe secret: agreement with a low-order point gives the
    // all-zero output whatever the secret, which `agree` refuses.
    let probe = MaskKeyPair::from_secret_bytes([0x5a; 32]);
    for key in [keys.enc_key, keys.mask_key] {
        probe.agree(id, &MaskPublicKey(key))?;
    }
    Ok(())
}
