//! The dealer as a party: the zero-sum masks of Algorithm 2 (line 2) dealt
//! over a network, through a server that learns none of them.
//!
//! The paper's dealer hands every client a mask vector so that the masks
//! sum to zero. Across processes the vectors would cross the server, so
//! the dealer here hands each client a 32-byte *seed*, sealed to it, and
//! the server the one vector that makes the sum zero:
//!
//! 0. Once, at setup: the dealer and each client share a key
//!    ([`SealKey::agree`]: HKDF-SHA256 of the X25519 secret of the
//!    dealer's static key and the client's long-term key; each side pins
//!    the other's public key out of band). No public-key operation runs
//!    in a round.
//! 1. The server tells the dealer the round's ring. The dealer draws a
//!    fresh seed `r_i` for each client `i` of the ring and seals it under
//!    the pair's key ([`seal_seed`]: ChaCha20-Poly1305 under a key derived
//!    for this session, round and client, with a fresh random nonce, and
//!    the ring as associated data). It
//!    returns the sealed seeds and the *correction* `c = -sum_i G(r_i)`,
//!    where `G` expands a seed into the client's mask ([`seeded_mask`]).
//! 2. The server relays each sealed seed; the client opens it
//!    ([`open_seed`]) with the ring it was told the round has, masks its
//!    vector with `G(r_i)` and sends it. The server adds the masked
//!    vectors and the correction: the masks cancel.
//!
//! What each party learns: the server sees `y_i = x_i + G(r_i)` and `c`;
//! the masks `G(r_i)` are independent and uniform (the seeds are secret to
//! the dealer and client `i`), so `(y_1 .. y_n, c)` is distributed as the
//! masked inputs of the paper's dealer plus their sum, which the server
//! learns anyway: nothing about one client beyond the sum. A client
//! learns its own mask. The server holds no pair's key, so it can neither
//! open a seal nor make one that opens: a client refuses a seal of another
//! client, of another round, or altered, instead of masking with a seed
//! the server could know. The seal binds the ring: a server that tells
//! the clients one ring and asks the dealer for a smaller one (whose
//! correction would unmask the smaller sum, and with an earlier sum of
//! the whole ring, the clients left out) gets seals that do not open.
//! Every deal draws fresh seeds, so the dealer
//! needs no memory of the rounds it dealt: a server that asks twice for
//! one round gets two unrelated deals, and the clients mask with one. The
//! dealer is trusted not to collude with the server, as in the paper.

use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use rand::CryptoRng;
use zeroize::Zeroizing;

use super::hkdf32;
use super::pairwise::{MaskKeyPair, MaskPublicKey};
use super::{MaskDomain, MaskStream, MaskVector};
use crate::context::RoundContext;
use crate::error::{ProtocolError, SumError, SumResult};

/// The bytes of a sealed seed: the 12-byte nonce, the 32-byte seed and
/// the 16-byte tag.
pub const SEALED_SEED_BYTES: usize = 12 + 32 + 16;

const PAIR_INFO: &[u8] = b"syndrome-agg/v1/dealer-pair";
const SEAL_INFO_PREFIX: &[u8] = b"syndrome-agg/v1/dealer-seal/";
const MASK_INFO_PREFIX: &[u8] = b"syndrome-agg/v1/dealt-mask/";
const RING_PREFIX: &[u8] = b"syndrome-agg/v1/dealer-ring/";

/// SHA-256 of the ring's clients in increasing order: a seal opens only
/// for the ring it was dealt for, in whatever order it is named.
fn ring_digest(ring: &[u64]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut ids = ring.to_vec();
    ids.sort_unstable();
    let mut h = Sha256::new();
    h.update(RING_PREFIX);
    h.update((ids.len() as u64).to_le_bytes());
    for id in ids {
        h.update(id.to_le_bytes());
    }
    h.finalize().into()
}

/// The seal's associated data: `prefix || session || round || client`,
/// then the ring's digest.
fn seal_aad(ctx: &RoundContext, client: u64, ring: &[u8; 32]) -> Vec<u8> {
    let mut aad = info(SEAL_INFO_PREFIX, ctx, client);
    aad.extend_from_slice(ring);
    aad
}

/// `prefix || session || round || client`: binds a key to one client of
/// one round.
fn info(prefix: &[u8], ctx: &RoundContext, client: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(prefix.len() + 32 + 16);
    out.extend_from_slice(prefix);
    out.extend_from_slice(&ctx.session.0);
    out.extend_from_slice(&ctx.round.to_le_bytes());
    out.extend_from_slice(&client.to_le_bytes());
    out
}

/// The key the dealer and one client share (step 0 of the module docs).
/// Wiped on drop, redacted in `Debug`.
#[derive(Clone)]
pub struct SealKey(Zeroizing<[u8; 32]>);

impl core::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("SealKey(..)")
    }
}

impl SealKey {
    /// The key of the pair of `own` and the peer's public key: the dealer
    /// calls it with its static key and client `client`'s long-term key,
    /// the client with its long-term key and the dealer's; both get the
    /// same key.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::NonContributoryKey`] for a low-order peer key.
    pub fn agree(own: &MaskKeyPair, client: u64, peer: &MaskPublicKey) -> SumResult<Self> {
        let shared = own.agree(client, peer)?;
        let mut info = PAIR_INFO.to_vec();
        info.extend_from_slice(&client.to_le_bytes());
        Ok(Self(hkdf32(shared.as_ref(), &info)))
    }

    /// A pair's key from 32 secret bytes that the dealer and the client
    /// already share (established by other means than [`Self::agree`]:
    /// a simulation that plays both, or a key agreed out of band).
    pub fn from_secret_bytes(bytes: [u8; 32]) -> Self {
        Self(Zeroizing::new(bytes))
    }

    /// The seal's cipher for `client` in `ctx`.
    fn cipher(&self, ctx: &RoundContext, client: u64) -> ChaCha20Poly1305 {
        let key = hkdf32(self.0.as_ref(), &info(SEAL_INFO_PREFIX, ctx, client));
        ChaCha20Poly1305::new((&*key).into())
    }
}

fn refused(client: u64) -> SumError {
    SumError::Protocol(ProtocolError::MessageRejected {
        reason: format!("the dealt seed of client {client} does not open"),
    })
}

/// The dealer seals `seed` to `client` of `ring` (the round's clients)
/// under their pair's `key`, with a fresh nonce from `rng`: nonce, then
/// ciphertext and tag.
///
/// # Errors
///
/// Only if the cipher refuses the plaintext, which a 32-byte seed never
/// is.
pub fn seal_seed<R: CryptoRng + ?Sized>(
    key: &SealKey,
    ctx: &RoundContext,
    client: u64,
    ring: &[u64],
    seed: &[u8; 32],
    rng: &mut R,
) -> SumResult<Vec<u8>> {
    seal_for(key, ctx, client, &ring_digest(ring), seed, rng)
}

/// [`seal_seed`] for the ring of digest `ring` (computed once per deal).
fn seal_for<R: CryptoRng + ?Sized>(
    key: &SealKey,
    ctx: &RoundContext,
    client: u64,
    ring: &[u8; 32],
    seed: &[u8; 32],
    rng: &mut R,
) -> SumResult<Vec<u8>> {
    let mut nonce = [0u8; 12];
    rng.fill_bytes(&mut nonce);
    seal_with_nonce(key, ctx, client, ring, seed, nonce)
}

/// [`seal_for`] with its `nonce` drawn.
fn seal_with_nonce(
    key: &SealKey,
    ctx: &RoundContext,
    client: u64,
    ring: &[u8; 32],
    seed: &[u8; 32],
    nonce: [u8; 12],
) -> SumResult<Vec<u8>> {
    let aad = seal_aad(ctx, client, ring);
    let sealed = key
        .cipher(ctx, client)
        .encrypt(
            &nonce.into(),
            Payload {
                msg: seed,
                aad: &aad,
            },
        )
        .map_err(|_| refused(client))?;
    let mut out = Vec::with_capacity(SEALED_SEED_BYTES);
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&sealed);
    Ok(out)
}

/// Client `client` opens its sealed seed under its pair's `key` with the
/// dealer, for the round's `ring` as the client was told it.
///
/// # Errors
///
/// [`ProtocolError::MessageRejected`] when the seal does not open: sealed
/// under another pair's key (by another dealer, or for another client),
/// for another round or another ring, or altered.
///
/// # Example
///
/// ```
/// use masked_sum::masking::dealer::{SealKey, open_seed, seal_seed};
/// use masked_sum::masking::pairwise::{MaskKeyPair, RoundContext, SessionId};
///
/// let ctx = RoundContext { session: SessionId([7; 32]), round: 3 };
/// let dealer = MaskKeyPair::from_secret_bytes([1; 32]);
/// let client = MaskKeyPair::from_secret_bytes([2; 32]);
/// // Once, at setup, on each side.
/// let at_dealer = SealKey::agree(&dealer, 5, &client.public_key())?;
/// let at_client = SealKey::agree(&client, 5, &dealer.public_key())?;
/// let ring = [4, 5, 6];
/// let sealed = seal_seed(&at_dealer, &ctx, 5, &ring, &[9; 32], &mut rand::rng())?;
/// assert_eq!(*open_seed(&at_client, &ctx, 5, &ring, &sealed)?, [9; 32]);
/// // Not for another client, in another round, or of another ring.
/// assert!(open_seed(&at_client, &ctx, 6, &ring, &sealed).is_err());
/// let later = RoundContext { round: 4, ..ctx };
/// assert!(open_seed(&at_client, &later, 5, &ring, &sealed).is_err());
/// assert!(open_seed(&at_client, &ctx, 5, &[4, 5, 6, 7], &sealed).is_err());
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub fn open_seed(
    key: &SealKey,
    ctx: &RoundContext,
    client: u64,
    ring: &[u64],
    sealed: &[u8],
) -> SumResult<Zeroizing<[u8; 32]>> {
    if sealed.len() != SEALED_SEED_BYTES {
        return Err(refused(client));
    }
    let (nonce, body) = sealed.split_at(12);
    let mut n = [0u8; 12];
    n.copy_from_slice(nonce);
    let aad = seal_aad(ctx, client, &ring_digest(ring));
    let plain = Zeroizing::new(
        key.cipher(ctx, client)
            .decrypt(
                &n.into(),
                Payload {
                    msg: body,
                    aad: &aad,
                },
            )
            .map_err(|_| refused(client))?,
    );
    let mut seed = Zeroizing::new([0u8; 32]);
    if plain.len() != seed.len() {
        return Err(refused(client));
    }
    seed.copy_from_slice(&plain);
    Ok(seed)
}

/// Client `client`'s mask of `len` elements in `ctx` from its dealt seed:
/// the seed's keystream (bound to the round and the client) sampled into
/// the domain as every mask is ([`MaskDomain::sample`]).
///
/// # Errors
///
/// Only if the keystream runs out (far beyond any configured length).
pub fn seeded_mask<D: MaskDomain>(
    domain: &D,
    seed: &[u8; 32],
    ctx: &RoundContext,
    client: u64,
    len: usize,
) -> SumResult<MaskVector<D::Elem>> {
    let key = hkdf32(seed, &info(MASK_INFO_PREFIX, ctx, client));
    let mut stream = MaskStream::new(&key);
    Ok(MaskVector(domain.sample(&mut stream, len)?))
}

/// What the dealer returns for one round: each client's sealed seed, in
/// the directory's order, and the correction the server adds to the sum.
#[derive(Clone, PartialEq)]
pub struct Deal<E> {
    /// `(client, sealed seed)`.
    pub sealed: Vec<(u64, Vec<u8>)>,
    /// Minus the sum of the clients' masks.
    pub correction: MaskVector<E>,
}

impl<E> core::fmt::Debug for Deal<E> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Deal")
            .field("clients", &self.sealed.len())
            .finish_non_exhaustive()
    }
}

/// A part of a deal: the sum of some clients' masks, and their seals.
type Partial<E> = (Vec<E>, Vec<(u64, Vec<u8>)>);

/// The dealer's work for one round (step 1 of the module docs): a fresh
/// seed for every client of `ring` (each with its pair's key), sealed to
/// it, and the correction `-sum G(r_i)` of masks of `len` elements in
/// `domain`. The seeds and nonces come from `rng`, which must be a
/// cryptographic generator: a seed the server could guess is a mask it
/// can remove.
///
/// # Errors
///
/// [`ProtocolError::InvalidPeers`] for a client named twice.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use masked_sum::masking::dealer::{SealKey, deal_seeds, open_seed, seeded_mask};
/// use masked_sum::masking::pairwise::{MaskKeyPair, RoundContext, SessionId};
///
/// let f = Mersenne61;
/// let ctx = RoundContext { session: SessionId([1; 32]), round: 0 };
/// let dealer = MaskKeyPair::from_secret_bytes([3; 32]);
/// let clients: Vec<MaskKeyPair> = (0..3u8).map(|i| MaskKeyPair::from_secret_bytes([10 + i; 32])).collect();
/// let keys: Vec<SealKey> = clients.iter().enumerate()
///     .map(|(i, k)| SealKey::agree(&dealer, i as u64, &k.public_key()))
///     .collect::<Result<_, _>>()?;
/// let ring: Vec<_> = keys.iter().enumerate().map(|(i, k)| (i as u64, k)).collect();
/// let deal = deal_seeds(&f, &ctx, &ring, 4, &mut rand::rng())?;
/// // The clients' masks and the correction sum to zero.
/// let mut sum = deal.correction.0.clone();
/// for ((id, sealed), keys) in deal.sealed.iter().zip(&clients) {
///     let key = SealKey::agree(keys, *id, &dealer.public_key())?;
///     let seed = open_seed(&key, &ctx, *id, &[0, 1, 2], sealed)?;
///     let mask = seeded_mask(&f, &seed, &ctx, *id, 4)?;
///     for (s, m) in sum.iter_mut().zip(&mask.0) {
///         *s = f.add(s, m);
///     }
/// }
/// assert!(sum.iter().all(|e| *e == f.zero()));
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub fn deal_seeds<D: MaskDomain, R: CryptoRng + ?Sized>(
    domain: &D,
    ctx: &RoundContext,
    ring: &[(u64, &SealKey)],
    len: usize,
    rng: &mut R,
) -> SumResult<Deal<D::Elem>> {
    let mut seen = std::collections::BTreeSet::new();
    let ids: Vec<u64> = ring.iter().map(|(c, _)| *c).collect();
    let digest = ring_digest(&ids);
    // Every draw first, client by client (its seed, then its seal's
    // nonce: the order of one client at a time), so that the work on
    // each client, its mask's expansion and its seal, can run on every
    // core and the deal stays a function of the generator's stream.
    let mut draws = Vec::with_capacity(ring.len());
    for (client, key) in ring {
        if !seen.insert(*client) {
            return Err(SumError::Protocol(ProtocolError::InvalidPeers {
                reason: "the ring names a client twice",
            }));
        }
        let mut seed = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(seed.as_mut());
        let mut nonce = [0u8; 12];
        rng.fill_bytes(&mut nonce);
        draws.push((*client, *key, seed, nonce));
    }
    let add = |mut total: Vec<D::Elem>, mask: &[D::Elem]| {
        for (t, m) in total.iter_mut().zip(mask) {
            *t = domain.mask_add(t, m);
        }
        total
    };
    let dealt = |(client, key, seed, nonce): &(u64, &SealKey, Zeroizing<[u8; 32]>, [u8; 12])| {
        let mask = seeded_mask(domain, seed, ctx, *client, len)?;
        let sealed = seal_with_nonce(key, ctx, *client, &digest, seed, *nonce)?;
        Ok::<_, SumError>((mask, (*client, sealed)))
    };
    let zero = || (vec![domain.mask_zero(); len], Vec::new());
    // Each worker sums its clients' masks as it goes (one running total
    // a worker, never every mask at once); the partial sums and seals
    // join in ring order.
    let fold = |(total, mut sealed): Partial<D::Elem>, d| {
        let (mask, seal) = dealt(d)?;
        sealed.push(seal);
        Ok::<_, SumError>((add(total, &mask.0), sealed))
    };
    #[cfg(feature = "parallel")]
    let (total, sealed) = {
        use rayon::prelude::*;
        draws
            .par_iter()
            .try_fold(zero, fold)
            .try_reduce(zero, |(a, mut sa), (b, sb)| {
                sa.extend(sb);
                Ok((add(a, &b), sa))
            })?
    };
    #[cfg(not(feature = "parallel"))]
    let (total, sealed) = draws.iter().try_fold(zero(), fold)?;
    let correction = total
        .iter()
        .map(|t| domain.mask_sub(&domain.mask_zero(), t))
        .collect();
    Ok(Deal {
        sealed,
        correction: MaskVector(correction),
    })
}
