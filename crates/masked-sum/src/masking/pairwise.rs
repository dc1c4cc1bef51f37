//! Pairwise masks (Bonawitz et al. 2017, without dropouts yet): X25519 key
//! agreement, HKDF-SHA256, and the ChaCha20 expansion of
//! [`MaskDomain::sample`].
//!
//! For clients `u != v` in round `round` of session `session`:
//!
//! 1. `ss = X25519(sk_u, pk_v) = X25519(sk_v, pk_u)`; a non-contributory
//!    result (all-zero or low-order peer key) is refused.
//! 2. `seed = HKDF-SHA256(salt = none, ikm = ss, info, L = 32)` with
//!    `info = "syndrome-agg/v1/mask" || session (32 bytes) || round (u64 LE)
//!    || min(u, v) (u64 LE) || max(u, v) (u64 LE)`, so the same pair gets
//!    unrelated seeds in every round and session.
//! 3. `m_uv = sample(ChaCha20(seed, nonce 0, counter 0), len)`.
//! 4. Client `u` adds `m_uv` if `u < v` and subtracts it if `u > v`; the two
//!    terms cancel in the sum over clients.
//!
//! Every client's mask is a sum of per-peer terms (`PeerMaskTerm`), so
//! that the next issue (dropouts) can recompute the terms of a dropped
//! client with a subset of peers from a reconstructed key.

use core::fmt;
use std::collections::BTreeSet;

use hkdf::Hkdf;
use rand::CryptoRng;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::Zeroizing;

pub use crate::context::{RoundContext, SessionId};

use super::{MaskDomain, MaskStream, MaskVector};
use crate::error::{ProtocolError, SumError, SumResult};

hazmat! {
/// The HKDF `info` prefix of mask seeds.
pub const MASK_INFO_PREFIX: &[u8] = b"syndrome-agg/v1/mask";
}

/// A client's X25519 public key for mask agreement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MaskPublicKey(pub [u8; 32]);

/// A client's X25519 key pair for mask agreement. The secret is wiped on
/// drop and never printed.
///
/// It is a *static* secret (x25519-dalek's `static_secrets` feature) so that
/// the dropout protocol can Shamir-share it
/// ([`secret_bytes`](Self::secret_bytes), [`from_secret_bytes`](Self::from_secret_bytes)).
///
/// # Example
///
/// ```
/// use masked_sum::masking::pairwise::MaskKeyPair;
///
/// let kp = MaskKeyPair::generate(&mut rand::rng());
/// let again = MaskKeyPair::from_secret_bytes(*kp.secret_bytes());
/// assert_eq!(kp.public_key(), again.public_key());
/// assert!(!format!("{kp:?}").contains(&format!("{:?}", *kp.secret_bytes())));
/// ```
pub struct MaskKeyPair {
    secret: StaticSecret,
    public: PublicKey,
}

impl MaskKeyPair {
    /// A fresh key pair from a cryptographic RNG.
    pub fn generate<R: CryptoRng + ?Sized>(rng: &mut R) -> Self {
        let mut bytes = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(bytes.as_mut());
        Self::from_secret_bytes(*bytes)
    }

    /// The key pair of a known secret (X25519 clamps it).
    pub fn from_secret_bytes(bytes: [u8; 32]) -> Self {
        let secret = StaticSecret::from(bytes);
        let public = PublicKey::from(&secret);
        Self { secret, public }
    }

    /// The secret's bytes, wiped when the returned value is dropped.
    pub fn secret_bytes(&self) -> Zeroizing<[u8; 32]> {
        Zeroizing::new(self.secret.to_bytes())
    }

    /// The public key.
    pub fn public_key(&self) -> MaskPublicKey {
        MaskPublicKey(self.public.to_bytes())
    }

    /// The raw X25519 shared secret with `peer_key` (for keys derived
    /// under another HKDF purpose than masks, such as the share encryption
    /// of the dropout protocol).
    ///
    /// # Errors
    ///
    /// [`ProtocolError::NonContributoryKey`] (naming `peer_id`) for an
    /// all-zero or low-order peer key.
    pub fn agree(&self, peer_id: u64, peer_key: &MaskPublicKey) -> SumResult<Zeroizing<[u8; 32]>> {
        let shared = self.secret.diffie_hellman(&PublicKey::from(peer_key.0));
        if !shared.was_contributory() {
            return Err(SumError::Protocol(ProtocolError::NonContributoryKey {
                peer: peer_id,
            }));
        }
        Ok(Zeroizing::new(*shared.as_bytes()))
    }
}

impl fmt::Debug for MaskKeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaskKeyPair")
            .field("public", &self.public_key())
            .finish_non_exhaustive()
    }
}

hazmat! {
/// The 32-byte seed a pair of clients shares for one context. Wiped on
/// drop, redacted in `Debug`.
pub struct PairSeed(Zeroizing<[u8; 32]>);
}

// Methods of a `hazmat` type: crate-internal without the feature.
#[cfg_attr(not(feature = "hazmat"), allow(dead_code, unreachable_pub))]
impl PairSeed {
    /// The seed's bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The keystream that expands this seed.
    pub fn stream(&self) -> MaskStream {
        MaskStream::new(&self.0)
    }
}

impl fmt::Debug for PairSeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PairSeed").finish_non_exhaustive()
    }
}

hazmat! {
/// The HKDF `info` string of the pair `{u, v}` in `ctx` (step 2 of the
/// module docs).
pub fn mask_info(ctx: &RoundContext, u: u64, v: u64) -> Vec<u8> {
    let (lo, hi) = if u < v { (u, v) } else { (v, u) };
    let mut info = Vec::with_capacity(MASK_INFO_PREFIX.len() + 32 + 24);
    info.extend_from_slice(MASK_INFO_PREFIX);
    info.extend_from_slice(&ctx.session.0);
    info.extend_from_slice(&ctx.round.to_le_bytes());
    info.extend_from_slice(&lo.to_le_bytes());
    info.extend_from_slice(&hi.to_le_bytes());
    info
}
}

hazmat! {
/// The seed of the pair `{u, v}` from their X25519 shared secret (step 2).
pub fn seed_from_shared_secret(shared: &[u8; 32], ctx: &RoundContext, u: u64, v: u64) -> PairSeed {
    let hk = Hkdf::<Sha256>::new(None, shared);
    let mut okm = Zeroizing::new([0u8; 32]);
    // 32 bytes is far below HKDF-SHA256's limit of 255 * 32.
    if hk.expand(&mask_info(ctx, u, v), okm.as_mut()).is_err() {
        unreachable!("HKDF-SHA256 can expand 32 bytes");
    }
    PairSeed(okm)
}
}

hazmat! {
/// The seed client `own_id` shares with `peer_id` in `ctx` (steps 1-2).
///
/// # Errors
///
/// [`ProtocolError::InvalidPeers`] if `peer_id == own_id`;
/// [`ProtocolError::NonContributoryKey`] if the peer's key gives a
/// non-contributory shared secret (all-zero or low-order point).
///
/// # Example
///
/// ```
/// use masked_sum::masking::pairwise::*;
///
/// let ctx = RoundContext { session: SessionId([0; 32]), round: 5 };
/// let (a, b) = (MaskKeyPair::from_secret_bytes([1; 32]), MaskKeyPair::from_secret_bytes([2; 32]));
/// let ab = derive_pair_seed(&a, 1, 2, &b.public_key(), &ctx)?;
/// let ba = derive_pair_seed(&b, 2, 1, &a.public_key(), &ctx)?;
/// assert_eq!(ab.as_bytes(), ba.as_bytes());
/// // The all-zero public key is refused.
/// assert!(derive_pair_seed(&a, 1, 2, &MaskPublicKey([0; 32]), &ctx).is_err());
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub fn derive_pair_seed(
    own: &MaskKeyPair,
    own_id: u64,
    peer_id: u64,
    peer_key: &MaskPublicKey,
    ctx: &RoundContext,
) -> SumResult<PairSeed> {
    if own_id == peer_id {
        return Err(SumError::Protocol(ProtocolError::InvalidPeers {
            reason: "a client cannot mask with itself",
        }));
    }
    let shared = own.secret.diffie_hellman(&PublicKey::from(peer_key.0));
    if !shared.was_contributory() {
        return Err(SumError::Protocol(ProtocolError::NonContributoryKey {
            peer: peer_id,
        }));
    }
    Ok(seed_from_shared_secret(
        shared.as_bytes(),
        ctx,
        own_id,
        peer_id,
    ))
}
}

hazmat! {
/// Whether a pairwise term is added or subtracted (step 4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum MaskSign {
    /// The client's id is the smaller of the pair.
    Add,
    /// The client's id is the larger of the pair.
    Subtract,
}
}

// Methods of a `hazmat` type: crate-internal without the feature.
#[cfg_attr(not(feature = "hazmat"), allow(dead_code, unreachable_pub))]
impl MaskSign {
    /// The sign client `own` uses with `peer`.
    pub fn of(own: u64, peer: u64) -> Self {
        if own < peer {
            Self::Add
        } else {
            Self::Subtract
        }
    }
}

hazmat! {
/// One peer's contribution to a client's mask: the expansion of their pair
/// seed and whether it is added or subtracted.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerMaskTerm<E> {
    /// The peer's client id.
    pub peer: u64,
    /// The sign this client applies.
    pub sign: MaskSign,
    /// The expansion `m_uv`.
    pub values: MaskVector<E>,
}
}

hazmat! {
/// The per-peer mask terms of client `own_id` against `peers`, each of
/// length `len` (steps 1-4, before summing).
///
/// # Errors
///
/// [`ProtocolError::InvalidPeers`] if `peers` names `own_id` or a peer twice,
/// or if two parties (the client included) share a public key;
/// [`ProtocolError::NonContributoryKey`] as `derive_pair_seed`.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use masked_sum::masking::pairwise::*;
///
/// let f = Mersenne61;
/// let ctx = RoundContext { session: SessionId([1; 32]), round: 0 };
/// let mut rng = rand::rng();
/// let a = MaskKeyPair::generate(&mut rng);
/// let b = MaskKeyPair::generate(&mut rng);
/// let ta = peer_mask_terms(&f, 4, &a, 10, &[(20, b.public_key())], &ctx)?;
/// let tb = peer_mask_terms(&f, 4, &b, 20, &[(10, a.public_key())], &ctx)?;
/// assert_eq!(ta[0].values, tb[0].values); // the same expansion m_uv
/// assert_eq!((ta[0].sign, tb[0].sign), (MaskSign::Add, MaskSign::Subtract));
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub fn peer_mask_terms<D: MaskDomain>(
    domain: &D,
    len: usize,
    own: &MaskKeyPair,
    own_id: u64,
    peers: &[(u64, MaskPublicKey)],
    ctx: &RoundContext,
) -> SumResult<Vec<PeerMaskTerm<D::Elem>>> {
    let mut seen = BTreeSet::new();
    let mut keys = BTreeSet::from([own.public_key().0]);
    let mut out = Vec::with_capacity(peers.len());
    for (peer, key) in peers {
        if !seen.insert(*peer) {
            return Err(SumError::Protocol(ProtocolError::InvalidPeers {
                reason: "a peer is listed twice",
            }));
        }
        // docs/threat-model.md S2: a server that hands out copies of one key (or the
        // client's own) could make masks cancel against its own secret.
        if !keys.insert(key.0) {
            return Err(SumError::Protocol(ProtocolError::InvalidPeers {
                reason: "two parties share a public key",
            }));
        }
        let seed = derive_pair_seed(own, own_id, *peer, key, ctx)?;
        let values = domain.sample(&mut seed.stream(), len)?;
        out.push(PeerMaskTerm {
            peer: *peer,
            sign: MaskSign::of(own_id, *peer),
            values: MaskVector(values),
        });
    }
    Ok(out)
}
}

hazmat! {
/// The signed sum of mask terms: the client's mask.
pub fn combine_terms<D: MaskDomain>(
    domain: &D,
    len: usize,
    terms: &[PeerMaskTerm<D::Elem>],
) -> MaskVector<D::Elem> {
    let mut acc = vec![domain.mask_zero(); len];
    for term in terms {
        for (a, v) in acc.iter_mut().zip(&term.values.0) {
            *a = match term.sign {
                MaskSign::Add => domain.mask_add(a, v),
                MaskSign::Subtract => domain.mask_sub(a, v),
            };
        }
    }
    MaskVector(acc)
}
}

/// Client `own_id`'s pairwise mask of length `len` against `peers`: the
/// sum of its `peer_mask_terms`. The masks of a set of clients that all
/// list each other cancel exactly in their sum.
///
/// # Errors
///
/// As `peer_mask_terms`.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne127};
/// use masked_sum::masking::pairwise::*;
///
/// let f = Mersenne127;
/// let ctx = RoundContext { session: SessionId([3; 32]), round: 0 };
/// let keys: Vec<MaskKeyPair> = (1..=3u8).map(|i| MaskKeyPair::from_secret_bytes([i; 32])).collect();
/// let dir: Vec<(u64, MaskPublicKey)> = (0..3).map(|i| (i as u64, keys[i].public_key())).collect();
/// let mut total = vec![f.zero(); 4];
/// for i in 0..3 {
///     let peers: Vec<_> = dir.iter().filter(|(id, _)| *id != i as u64).copied().collect();
///     let m = pairwise_mask(&f, 4, &keys[i], i as u64, &peers, &ctx)?;
///     for (t, v) in total.iter_mut().zip(&m.0) {
///         *t = f.add(t, v);
///     }
/// }
/// assert_eq!(total, vec![f.zero(); 4]); // the masks cancel
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub fn pairwise_mask<D: MaskDomain>(
    domain: &D,
    len: usize,
    own: &MaskKeyPair,
    own_id: u64,
    peers: &[(u64, MaskPublicKey)],
    ctx: &RoundContext,
) -> SumResult<MaskVector<D::Elem>> {
    let terms = peer_mask_terms(domain, len, own, own_id, peers, ctx)?;
    Ok(combine_terms(domain, len, &terms))
}
