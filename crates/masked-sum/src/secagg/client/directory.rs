//! The client's answer to the key directory (the ShareKeys step): it
//! checks the directory the server relayed, Shamir-shares its mask secret
//! key and self-mask seed, and encrypts each holder's pair of shares.

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use std::collections::{BTreeMap, BTreeSet};

use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use field::FiniteField;
use rand::CryptoRng;
use zeroize::Zeroizing;

use super::super::messages::{AdvertiseKeys, ClientBody, EncryptedShare, KeyDirectory, ShareKeys};
use super::super::session::{
    abort, attest_key, seed_commitment, share_aad, share_id, share_key, share_nonce,
};
use super::super::shamir::split_secret;
use super::shares::SHARE_PLAINTEXT_BYTES;
use super::{AttestKeys, Client, PeerKeys, State};
use crate::context::ClientId;
use crate::error::SumResult;
use crate::masking::pairwise::MaskPublicKey;
use crate::step::Step;

impl<F: FiniteField> Client<F> {
    pub(super) fn share_keys<R: CryptoRng + ?Sized>(
        &self,
        input: Vec<F::Elem>,
        dir: &KeyDirectory,
        rng: &mut R,
    ) -> SumResult<(State<F::Elem>, ClientBody)> {
        let (me, step) = (self.id, Step::ShareKeys);
        let graph = self.config.graph();
        let mut peers = BTreeMap::new();
        let mut seen_keys = BTreeSet::new();
        let mut own_ok = false;
        for (id, keys) in &dir.entries {
            if *id != me && !graph.are_neighbours(me, *id) {
                return Err(abort(me, step, format!("client {id} is not a holder")));
            }
            if !seen_keys.insert(keys.enc_key) || !seen_keys.insert(keys.mask_key) {
                return Err(abort(me, step, "a public key appears twice"));
            }
            if *id == me {
                if own_ok {
                    return Err(abort(me, step, "own entry listed twice"));
                }
                let sent = AdvertiseKeys {
                    enc_key: self.enc.public_key().0,
                    mask_key: self.mask.public_key().0,
                    seed_commitment: seed_commitment(self.config.context(), me, &self.seed),
                };
                if *keys != sent {
                    return Err(abort(me, step, "own keys altered"));
                }
                own_ok = true;
                continue;
            }
            let entry = PeerKeys {
                enc: MaskPublicKey(keys.enc_key),
                mask: MaskPublicKey(keys.mask_key),
            };
            if peers.insert(*id, entry).is_some() {
                return Err(abort(me, step, format!("client {id} listed twice")));
            }
        }
        if !own_ok {
            return Err(abort(me, step, "own keys missing"));
        }
        let t = self.config.threshold();
        if peers.len().saturating_add(1) < t {
            return Err(abort(
                me,
                step,
                format!(
                    "{} holders left, the threshold is {t}",
                    peers.len().saturating_add(1)
                ),
            ));
        }
        // Holders in id order, the client itself among them.
        let mut holders: Vec<ClientId> = peers.keys().copied().collect();
        let at = holders.partition_point(|v| *v < me);
        holders.insert(at, me);
        let ids: Vec<u64> = holders.iter().map(|h| share_id(*h)).collect();
        let key_shares = split_secret(&self.mask.secret_bytes(), t, &ids, rng)?;
        let seed_shares = split_secret(&self.seed, t, &ids, rng)?;
        let ctx = self.config.context();
        let mut out = Vec::with_capacity(peers.len());
        let mut attest = AttestKeys::new();
        let mut own = None;
        for ((holder, ks), ss) in holders.iter().zip(key_shares).zip(seed_shares) {
            if *holder == me {
                own = Some((ks, ss));
                continue;
            }
            let Some(keys) = peers.get(holder) else {
                continue; // every holder but the client itself is a peer
            };
            let shared = self.enc.agree(*holder, &keys.enc).map_err(|_| {
                abort(
                    me,
                    step,
                    format!("client {holder}'s key is not contributory"),
                )
            })?;
            // Checked here, not only at masking, so that a low-order mask
            // key aborts before any share leaves (docs/threat-model.md S2).
            self.mask.agree(*holder, &keys.mask).map_err(|_| {
                abort(
                    me,
                    step,
                    format!("client {holder}'s key is not contributory"),
                )
            })?;
            // The attestation key comes from the same agreement, derived
            // now so that the consistency round needs no more X25519.
            attest.insert(*holder, attest_key(&shared, ctx, me, *holder));
            let key = share_key(&shared, ctx, me, *holder);
            let mut plain = Zeroizing::new(Vec::with_capacity(SHARE_PLAINTEXT_BYTES));
            plain.extend_from_slice(&me.to_le_bytes());
            plain.extend_from_slice(&holder.to_le_bytes());
            plain.extend_from_slice(&ks.to_bytes());
            plain.extend_from_slice(&ss.to_bytes());
            let cipher = ChaCha20Poly1305::new((&*key).into());
            let aad = share_aad(ctx, me, *holder);
            let ciphertext = cipher
                .encrypt(
                    &share_nonce(me, *holder).into(),
                    Payload {
                        msg: &plain,
                        aad: &aad,
                    },
                )
                .map_err(|_| abort(me, step, "encryption failed"))?;
            out.push(EncryptedShare {
                peer: *holder,
                ciphertext,
            });
        }
        let Some((own_key_share, own_seed_share)) = own else {
            return Err(abort(me, step, "own share missing"));
        };
        Ok((
            State::AwaitingMaskingRequest {
                input,
                peers,
                own_key_share,
                own_seed_share,
                attest,
            },
            ClientBody::ShareKeys(ShareKeys { shares: out }),
        ))
    }
}
