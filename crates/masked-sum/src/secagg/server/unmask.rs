//! The end of the protocol: the server gathers the revealed shares of every
//! needed secret, reconstructs and checks each one (correcting bad shares
//! when it holds spares, docs/threat-model.md S4), then removes the
//! self-masks of the survivors and the pairwise masks the dropped clients
//! left behind to give the sum.

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

use super::super::session::{AggregationOutput, ct_eq, seed_commitment, self_mask};
use super::super::shamir::{
    SecretShare, decode_secret_with_errors, lagrange_at_zero, reconstruct_secret_with,
};
use super::subsets::Subsets;
use super::{MAX_SUBSETS, Server};
use crate::context::ClientId;
use crate::error::{ProtocolError, SumError, SumResult};
use crate::masking::pairwise::{MaskKeyPair, MaskPublicKey, combine_terms, peer_mask_terms};
use crate::step::Step;

/// The shares gathered for each owner's secret.
type SharesByOwner = Vec<(ClientId, Vec<SecretShare>)>;

impl<F: FiniteField> Server<F> {
    /// Gathers the shares of each needed secret (seeds of survivors, keys
    /// of the dropped); an error if some secret has fewer than `t`.
    fn gather(&self) -> SumResult<(SharesByOwner, SharesByOwner)> {
        let t = self.config.threshold();
        let mut seeds = Vec::new();
        let mut keys = Vec::new();
        let mut short: Option<usize> = None;
        for u in &self.u3 {
            let shares: Vec<SecretShare> = self
                .responses
                .values()
                .filter_map(|r| r.seeds.get(u).cloned())
                .collect();
            if shares.len() < t {
                short = Some(short.map_or(shares.len(), |s| s.min(shares.len())));
            }
            seeds.push((*u, shares));
        }
        for v in self.u2.difference(&self.u3) {
            let shares: Vec<SecretShare> = self
                .responses
                .values()
                .filter_map(|r| r.keys.get(v).cloned())
                .collect();
            if shares.len() < t {
                short = Some(short.map_or(shares.len(), |s| s.min(shares.len())));
            }
            keys.push((*v, shares));
        }
        if let Some(have) = short {
            return Err(SumError::Protocol(ProtocolError::NotEnoughClients {
                step: Step::Unmasking,
                have,
                need: t,
            }));
        }
        Ok((seeds, keys))
    }

    fn reconstruct(
        &self,
        cache: &mut BTreeMap<Vec<u64>, Vec<u128>>,
        shares: &[SecretShare],
        check: impl Fn(&[u8; 32]) -> bool,
    ) -> SumResult<Option<zeroize::Zeroizing<[u8; 32]>>> {
        let t = self.config.threshold();
        let first = shares.get(..t).unwrap_or(shares);
        let ids: Vec<u64> = first.iter().map(|s| s.id).collect();
        let lagrange = match cache.get(&ids) {
            Some(l) => l.clone(),
            None => {
                let l = lagrange_at_zero(&field::Mersenne127, &ids)?;
                cache.insert(ids, l.clone());
                l
            }
        };
        if let Ok(s) = reconstruct_secret_with(&lagrange, first)
            && check(&s)
        {
            return Ok(Some(s));
        }
        if shares.len() <= t {
            return Ok(None);
        }
        // docs/threat-model.md S4: a wrong share; correct it with the
        // spare shares. Gao's decoder corrects up to (n - t) / 2 of n; with
        // fewer spares (t + 1 shares and one bad among them) the check
        // itself picks out a good t-subset.
        if let Ok(s) = decode_secret_with_errors(shares, t)
            && check(&s)
        {
            return Ok(Some(s));
        }
        let mut tried = 0usize;
        let mut subset = Subsets::new(shares.len(), t);
        // The first subset is the first t shares, already tried above.
        let _ = subset.next_subset();
        while let Some(picked) = subset.next_subset() {
            if tried >= MAX_SUBSETS {
                break;
            }
            tried = tried.saturating_add(1);
            let chosen: Vec<SecretShare> = picked
                .iter()
                .filter_map(|i| shares.get(*i).cloned())
                .collect();
            let ids: Vec<u64> = chosen.iter().map(|s| s.id).collect();
            let Ok(lagrange) = lagrange_at_zero(&field::Mersenne127, &ids) else {
                continue;
            };
            if let Ok(s) = reconstruct_secret_with(&lagrange, &chosen)
                && check(&s)
            {
                return Ok(Some(s));
            }
        }
        Ok(None)
    }

    pub(super) fn finish(&mut self) -> SumResult<AggregationOutput<F::Elem>> {
        let (seeds, keys) = self.gather()?;
        let f = self.config.field().clone();
        let len = self.config.vector_len();
        let ctx = *self.config.context();
        let graph = self.config.graph().clone();
        let mut cache = BTreeMap::new();
        // Reconstruct and check every secret before using any.
        let mut seed_values = Vec::with_capacity(seeds.len());
        for (u, shares) in &seeds {
            let commitment = self
                .u1
                .get(u)
                .map(|k| k.seed_commitment)
                .unwrap_or_default();
            let check = |s: &[u8; 32]| ct_eq(&seed_commitment(&ctx, *u, s), &commitment);
            match self.reconstruct(&mut cache, shares, check)? {
                Some(s) => seed_values.push((*u, s)),
                None => {
                    return Err(SumError::Protocol(ProtocolError::BadShares {
                        client: *u,
                        secret: "self-mask seed",
                        check: "commitment",
                    }));
                }
            }
        }
        let mut key_values = Vec::with_capacity(keys.len());
        for (v, shares) in &keys {
            let public = self.u1.get(v).map(|k| k.mask_key).unwrap_or_default();
            let check =
                |s: &[u8; 32]| ct_eq(&MaskKeyPair::from_secret_bytes(*s).public_key().0, &public);
            match self.reconstruct(&mut cache, shares, check)? {
                Some(s) => key_values.push((*v, MaskKeyPair::from_secret_bytes(*s))),
                None => {
                    return Err(SumError::Protocol(ProtocolError::BadShares {
                        client: *v,
                        secret: "mask secret key",
                        check: "public key",
                    }));
                }
            }
        }
        let mut sum = core::mem::take(&mut self.sum);
        for (u, seed) in &seed_values {
            let m = self_mask(&f, len, seed, &ctx, *u)?;
            for (a, b) in sum.iter_mut().zip(&m.0) {
                f.sub_assign(a, b);
            }
        }
        for (v, key) in &key_values {
            // The survivors that masked with v still carry their term with
            // v; adding v's own terms cancels them.
            let peers: Vec<(ClientId, MaskPublicKey)> = graph
                .neighbours(*v)?
                .into_iter()
                .filter(|u| self.u3.contains(u))
                .filter_map(|u| self.u1.get(&u).map(|k| (u, MaskPublicKey(k.mask_key))))
                .collect();
            let terms = peer_mask_terms(&f, len, key, *v, &peers, &ctx)?;
            let m = combine_terms(&f, len, &terms);
            for (a, b) in sum.iter_mut().zip(&m.0) {
                f.add_assign(a, b);
            }
        }
        Ok(AggregationOutput {
            sum,
            included: self.u3.clone(),
            dropped: self.dropped.clone(),
        })
    }
}
