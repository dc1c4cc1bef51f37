//! What the server and every client of a session agree on, and the key
//! derivations they share: the leaf of the protocol's modules.

use std::collections::BTreeSet;

use field::FiniteField;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use super::graph::Neighbourhoods;
use super::params::SecAggParams;
use crate::context::{ClientId, RoundContext};
use crate::error::{ProtocolError, SumError, SumResult, invalid};
use crate::masking::{MaskDomain, MaskStream, MaskVector, hkdf32};
use crate::step::Step;

// The prefixes name `syndrome-agg`, the crate the protocol was first
// written in: they are part of every key and commitment, so the
// known-answer tests pin them, and renaming them would change the protocol.
hazmat! {
/// The HKDF `info` prefix of the share-encryption keys.
pub const SHARE_INFO_PREFIX: &[u8] = b"syndrome-agg/v1/share";
}
hazmat! {
/// The HKDF `info` prefix of self-mask seeds.
pub const SELF_MASK_INFO_PREFIX: &[u8] = b"syndrome-agg/v1/self-mask";
}
hazmat! {
/// The hash prefix of self-mask seed commitments.
pub const COMMITMENT_PREFIX: &[u8] = b"syndrome-agg/v1/seed-commitment";
}
hazmat! {
/// The HKDF `info` prefix of the attestation keys, and the prefix of the
/// attested message.
pub const ATTEST_INFO_PREFIX: &[u8] = b"syndrome-agg/v1/attest";
}

/// The default cap on a protocol message, 4 MiB (tonic's default).
pub const DEFAULT_MAX_MESSAGE: usize = 4 << 20;

/// The longest input vector a session takes, `2^20` elements.
pub const MAX_VECTOR_LEN: usize = 1 << 20;

/// Everything the server and every client agree on before a session: the
/// field, the session and round, the neighbourhood graph, the parameters
/// and the input length.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use masked_sum::masking::pairwise::{RoundContext, SessionId};
/// use masked_sum::secagg::SessionConfig;
/// use masked_sum::secagg::graph::Neighbourhoods;
/// use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel};
///
/// let ctx = RoundContext { session: SessionId([1; 32]), round: 0 };
/// let params = SecAggParams::new(GraphChoice::Complete, 3, 0, ServerModel::SemiHonest);
/// let cfg = SessionConfig::new(Mersenne61, ctx, Neighbourhoods::complete(1..=4)?, params, 5)?;
/// assert_eq!(cfg.threshold(), 3);
/// // A threshold above the number of holders is refused.
/// let bad = SecAggParams::new(GraphChoice::Complete, 5, 0, ServerModel::SemiHonest);
/// assert!(SessionConfig::new(Mersenne61, ctx, Neighbourhoods::complete(1..=4)?, bad, 5).is_err());
/// # Ok::<(), masked_sum::SumError>(())
/// ```
#[derive(Clone, Debug)]
pub struct SessionConfig<F: FiniteField> {
    field: F,
    context: RoundContext,
    graph: Neighbourhoods,
    params: SecAggParams,
    vector_len: usize,
    max_message: usize,
}

impl<F: FiniteField> SessionConfig<F> {
    /// A validated configuration.
    ///
    /// # Errors
    ///
    /// [`SumError::InvalidParams`] if the parameters fail
    /// [`SecAggParams::validate`] for this graph, the graph does not have
    /// the shape the parameters name, or the vector length is zero or
    /// above [`MAX_VECTOR_LEN`].
    pub fn new(
        field: F,
        context: RoundContext,
        graph: Neighbourhoods,
        params: SecAggParams,
        vector_len: usize,
    ) -> SumResult<Self> {
        params.validate(graph.len())?;
        if !params.matches(&graph) {
            return Err(invalid(
                "the graph does not have the shape the parameters name",
            ));
        }
        if vector_len == 0 || vector_len > MAX_VECTOR_LEN {
            return Err(invalid(format!(
                "vector length {vector_len} outside 1..={}",
                MAX_VECTOR_LEN
            )));
        }
        Ok(Self {
            field,
            context,
            graph,
            params,
            vector_len,
            max_message: DEFAULT_MAX_MESSAGE,
        })
    }

    /// Sets the cap on one message's size (checked before parsing).
    #[must_use]
    pub fn with_max_message(mut self, max: usize) -> Self {
        self.max_message = max;
        self
    }

    /// The field.
    pub fn field(&self) -> &F {
        &self.field
    }
    /// The session and round.
    pub fn context(&self) -> &RoundContext {
        &self.context
    }
    /// The neighbourhood graph.
    pub fn graph(&self) -> &Neighbourhoods {
        &self.graph
    }
    /// The parameters.
    pub fn params(&self) -> &SecAggParams {
        &self.params
    }
    /// The Shamir threshold `t`.
    pub fn threshold(&self) -> usize {
        self.params.threshold
    }
    /// The fewest clients whose inputs the server may release a sum of
    /// (at least the threshold).
    pub fn min_clients(&self) -> usize {
        self.params.min_clients.max(self.params.threshold)
    }
    /// The input length.
    pub fn vector_len(&self) -> usize {
        self.vector_len
    }
    /// The message size cap.
    pub fn max_message(&self) -> usize {
        self.max_message
    }
}

/// Whether two 32-byte values are equal, in constant time.
pub(crate) fn ct_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.ct_eq(b).into()
}

/// The Shamir evaluation point of a holder.
pub(crate) fn share_id(holder: ClientId) -> u64 {
    holder.saturating_add(1)
}

/// The HKDF `info` of a purpose for the pair `{u, v}` (docs/crates.md §3:
/// `"syndrome-agg/v1/" || purpose || session || round || min || max`).
fn pair_info(prefix: &[u8], ctx: &RoundContext, u: ClientId, v: ClientId) -> Vec<u8> {
    let (lo, hi) = if u < v { (u, v) } else { (v, u) };
    let mut info = Vec::with_capacity(prefix.len() + 32 + 24);
    info.extend_from_slice(prefix);
    info.extend_from_slice(&ctx.session.0);
    info.extend_from_slice(&ctx.round.to_le_bytes());
    info.extend_from_slice(&lo.to_le_bytes());
    info.extend_from_slice(&hi.to_le_bytes());
    info
}

hazmat! {
/// The ChaCha20-Poly1305 key of the pair `{u, v}` from their X25519 shared
/// secret.
pub fn share_key(
    shared: &[u8; 32],
    ctx: &RoundContext,
    u: ClientId,
    v: ClientId,
) -> Zeroizing<[u8; 32]> {
    hkdf32(shared, &pair_info(SHARE_INFO_PREFIX, ctx, u, v))
}
}

hazmat! {
/// The HMAC-SHA256 key of the pair `{u, v}` for attestations, from their
/// X25519 shared secret (the same agreement as `share_key`, another
/// HKDF `info`): the server relays the tags but cannot forge them.
pub fn attest_key(
    shared: &[u8; 32],
    ctx: &RoundContext,
    u: ClientId,
    v: ClientId,
) -> Zeroizing<[u8; 32]> {
    hkdf32(shared, &pair_info(ATTEST_INFO_PREFIX, ctx, u, v))
}
}

hazmat! {
/// The tag by which `from` attests the alive set `alive` to `to`:
/// `HMAC-SHA256(key, "syndrome-agg/v1/attest" || session || round || from
/// || to || |alive| || alive...)`, every integer little endian.
///
/// # Example
///
/// ```
/// use masked_sum::masking::pairwise::{RoundContext, SessionId};
/// use masked_sum::secagg::attestation_tag;
///
/// let ctx = RoundContext { session: SessionId([1; 32]), round: 0 };
/// let t = attestation_tag(&[7; 32], &ctx, 1, 2, &[1, 2, 3]);
/// assert_ne!(t, attestation_tag(&[7; 32], &ctx, 1, 2, &[1, 2]));
/// assert_ne!(t, attestation_tag(&[7; 32], &ctx, 2, 1, &[1, 2, 3]));
/// ```
pub fn attestation_tag(
    key: &[u8; 32],
    ctx: &RoundContext,
    from: ClientId,
    to: ClientId,
    alive: &[ClientId],
) -> [u8; 32] {
    // HMAC accepts keys of any length: the error branch is unreachable.
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(key) else {
        return [0; 32];
    };
    mac.update(ATTEST_INFO_PREFIX);
    mac.update(&ctx.session.0);
    mac.update(&ctx.round.to_le_bytes());
    mac.update(&from.to_le_bytes());
    mac.update(&to.to_le_bytes());
    mac.update(&(alive.len() as u64).to_le_bytes());
    for id in alive {
        mac.update(&id.to_le_bytes());
    }
    mac.finalize().into_bytes().into()
}
}

hazmat! {
/// The associated data of the share ciphertext from `src` to `dst`:
/// `"syndrome-agg/v1/share" || session || round || step || src || dst`.
pub fn share_aad(ctx: &RoundContext, src: ClientId, dst: ClientId) -> Vec<u8> {
    let mut aad = Vec::with_capacity(SHARE_INFO_PREFIX.len() + 32 + 8 + 1 + 16);
    aad.extend_from_slice(SHARE_INFO_PREFIX);
    aad.extend_from_slice(&ctx.session.0);
    aad.extend_from_slice(&ctx.round.to_le_bytes());
    aad.push(Step::ShareKeys.index());
    aad.extend_from_slice(&src.to_le_bytes());
    aad.extend_from_slice(&dst.to_le_bytes());
    aad
}
}

hazmat! {
/// The nonce of the share ciphertext from `src` to `dst`. The key is the
/// pair's, so the two directions need different nonces; each direction
/// carries one message per session and round.
pub fn share_nonce(src: ClientId, dst: ClientId) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[0] = u8::from(src > dst);
    n
}
}

hazmat! {
/// The commitment `SHA-256("syndrome-agg/v1/seed-commitment" || session ||
/// round || u || b_u)` to client `u`'s self-mask seed.
pub fn seed_commitment(ctx: &RoundContext, u: ClientId, seed: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(COMMITMENT_PREFIX);
    h.update(ctx.session.0);
    h.update(ctx.round.to_le_bytes());
    h.update(u.to_le_bytes());
    h.update(seed);
    h.finalize().into()
}
}

hazmat! {
/// Client `u`'s self-mask `PRG(b_u)` of length `len`: the expansion
/// ([`MaskDomain::sample`]) of the ChaCha20 keystream under
/// `HKDF-SHA256(b_u, "syndrome-agg/v1/self-mask" || session || round || u ||
/// u)`.
///
/// # Errors
///
/// As [`MaskDomain::sample`].
pub fn self_mask<D: MaskDomain>(
    domain: &D,
    len: usize,
    seed: &[u8; 32],
    ctx: &RoundContext,
    u: ClientId,
) -> SumResult<MaskVector<D::Elem>> {
    let key = hkdf32(seed, &pair_info(SELF_MASK_INFO_PREFIX, ctx, u, u));
    Ok(MaskVector(domain.sample(&mut MaskStream::new(&key), len)?))
}
}

/// The result of a secure aggregation: the sum and whose inputs it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct AggregationOutput<E> {
    /// The sum of the included clients' inputs.
    pub sum: Vec<E>,
    /// The clients whose inputs are in the sum: those whose masked input
    /// the server received (docs/threat-model.md D3: a client that dropped during
    /// unmasking is included).
    pub included: BTreeSet<ClientId>,
    /// The clients left out, with the step at which each went missing.
    pub dropped: std::collections::BTreeMap<ClientId, Step>,
}

pub(crate) fn abort(client: ClientId, step: Step, reason: impl Into<String>) -> SumError {
    SumError::Protocol(ProtocolError::ProtocolAbort {
        client,
        step,
        reason: reason.into(),
    })
}
