//! The dealer as a party: the zero-sum masks of Algorithm 2 (line 2) dealt
//! over a network, through a server that learns none of them.
//!
//! The paper's dealer hands every client a mask vector so that the masks
//! sum to zero. Across processes the vectors would cross the server, so
//! the dealer here hands each client a 32-byte *seed*, sealed to it, and
//! the server the one vector that makes the sum zero:
//!
//! 1. Every client of the round draws a fresh X25519 key pair and sends
//!    its public key; the server forwards the directory to the dealer.
//! 2. The dealer, whose static X25519 key every client holds (pinned out of
//!    band), draws a fresh seed `r_i` for each client `i` of the directory
//!    and seals it to the client's key ([`seal_seed`]: ChaCha20-Poly1305
//!    under HKDF-SHA256 of the X25519 secret of its static key and the
//!    client's fresh key, bound to the session, round and client). It
//!    returns the sealed seeds and the *correction* `c = -sum_i G(r_i)`,
//!    where `G` expands a seed into the client's mask ([`seeded_mask`]).
//! 3. The server relays each sealed seed; the client opens it with its
//!    fresh secret key and the dealer's pinned public key ([`open_seed`]),
//!    masks its sketch with `G(r_i)` and sends it. The server adds the
//!    masked sketches and the correction: the masks cancel.
//!
//! What each party learns: the server sees `y_i = x_i + G(r_i)` and `c`;
//! the masks `G(r_i)` are independent and uniform (the seeds are secret to
//! the dealer and client `i`), so `(y_1 .. y_n, c)` is distributed as the
//! masked inputs of the paper's dealer plus their sum, which the server
//! learns anyway: nothing about one client beyond the sum. A client
//! learns its own mask. A server that substitutes a client's key gets a
//! seed sealed to its own key, which the client can then not open (the
//! seal authenticates the dealer's static key, which the server does not
//! hold), so the client refuses the round instead of masking with a seed
//! the server knows. The dealer is trusted not to collude with the
//! server, as in the paper.

use chacha20poly1305::ChaCha20Poly1305;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use hkdf::Hkdf;
use rand::CryptoRng;
use sha2::Sha256;
use zeroize::Zeroizing;

use super::pairwise::{MaskKeyPair, MaskPublicKey};
use super::{MaskDomain, MaskStream, MaskVector};
use crate::context::RoundContext;
use crate::error::{ProtocolError, SketchError, SketchResult};

/// The bytes of a sealed seed: the 32-byte seed and the 16-byte tag.
pub const SEALED_SEED_BYTES: usize = 32 + 16;

const SEAL_INFO_PREFIX: &[u8] = b"syndrome-agg/v1/dealer-seal/";
const MASK_INFO_PREFIX: &[u8] = b"syndrome-agg/v1/dealt-mask/";

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

fn hkdf32(ikm: &[u8], info: &[u8]) -> Zeroizing<[u8; 32]> {
    let hk = Hkdf::<Sha256>::new(None, ikm);
    let mut okm = Zeroizing::new([0u8; 32]);
    // 32 bytes is far below HKDF-SHA256's limit of 255 * 32.
    if hk.expand(info, okm.as_mut()).is_err() {
        unreachable!("HKDF-SHA256 can expand 32 bytes");
    }
    okm
}

/// The seal's cipher for `client` in `ctx`, from the X25519 secret of
/// the dealer's static key and the client's fresh key. The key is used
/// once (one client, one round, one fresh client key), so the nonce is
/// constant.
fn cipher(shared: &[u8; 32], ctx: &RoundContext, client: u64) -> ChaCha20Poly1305 {
    let key = hkdf32(shared, &info(SEAL_INFO_PREFIX, ctx, client));
    ChaCha20Poly1305::new((&*key).into())
}

fn refused(client: u64) -> SketchError {
    SketchError::Protocol(ProtocolError::MessageRejected {
        reason: format!("the dealt seed of client {client} does not open"),
    })
}

/// The dealer seals `seed` to `client`, whose fresh public key for the
/// round is `client_key`.
///
/// # Errors
///
/// [`ProtocolError::NonContributoryKey`] for a low-order client key.
pub fn seal_seed(
    dealer: &MaskKeyPair,
    client: u64,
    client_key: &MaskPublicKey,
    ctx: &RoundContext,
    seed: &[u8; 32],
) -> SketchResult<Vec<u8>> {
    let shared = dealer.agree(client, client_key)?;
    let aad = info(SEAL_INFO_PREFIX, ctx, client);
    cipher(&shared, ctx, client)
        .encrypt(
            &[0u8; 12].into(),
            Payload {
                msg: seed,
                aad: &aad,
            },
        )
        .map_err(|_| refused(client))
}

/// Client `client` opens its sealed seed with its fresh key pair of the
/// round and the dealer's pinned public key.
///
/// # Errors
///
/// [`ProtocolError::MessageRejected`] when the seal does not open: sealed
/// to another key (a server substituted the client's key), by another
/// dealer, for another client or round, or altered.
///
/// # Example
///
/// ```
/// use syndrome_agg::masking::dealer::{open_seed, seal_seed};
/// use syndrome_agg::masking::pairwise::{MaskKeyPair, RoundContext, SessionId};
///
/// let ctx = RoundContext { session: SessionId([7; 32]), round: 3 };
/// let dealer = MaskKeyPair::from_secret_bytes([1; 32]);
/// let client = MaskKeyPair::from_secret_bytes([2; 32]);
/// let sealed = seal_seed(&dealer, 5, &client.public_key(), &ctx, &[9; 32])?;
/// assert_eq!(*open_seed(&client, 5, &dealer.public_key(), &ctx, &sealed)?, [9; 32]);
/// // Not for another client, nor in another round.
/// assert!(open_seed(&client, 6, &dealer.public_key(), &ctx, &sealed).is_err());
/// let later = RoundContext { round: 4, ..ctx };
/// assert!(open_seed(&client, 5, &dealer.public_key(), &later, &sealed).is_err());
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
pub fn open_seed(
    own: &MaskKeyPair,
    client: u64,
    dealer_key: &MaskPublicKey,
    ctx: &RoundContext,
    sealed: &[u8],
) -> SketchResult<Zeroizing<[u8; 32]>> {
    if sealed.len() != SEALED_SEED_BYTES {
        return Err(refused(client));
    }
    let shared = own.agree(client, dealer_key).map_err(|_| refused(client))?;
    let aad = info(SEAL_INFO_PREFIX, ctx, client);
    let plain = Zeroizing::new(
        cipher(&shared, ctx, client)
            .decrypt(
                &[0u8; 12].into(),
                Payload {
                    msg: sealed,
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
) -> SketchResult<MaskVector<D::Elem>> {
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

/// The dealer's work for one round (step 2 of the module docs): a fresh
/// seed for every client of `directory` (its fresh public key for the
/// round), sealed to it, and the correction `-sum G(r_i)` of masks of
/// `len` elements in `domain`. The seeds come from `rng`, which must be a
/// cryptographic generator: a seed the server could guess is a mask it
/// can remove.
///
/// # Errors
///
/// [`ProtocolError::InvalidPeers`] for a client named twice;
/// [`ProtocolError::NonContributoryKey`] for a low-order key.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use syndrome_agg::masking::dealer::{deal_seeds, open_seed, seeded_mask};
/// use syndrome_agg::masking::pairwise::{MaskKeyPair, RoundContext, SessionId};
///
/// let f = Mersenne61;
/// let ctx = RoundContext { session: SessionId([1; 32]), round: 0 };
/// let dealer = MaskKeyPair::from_secret_bytes([3; 32]);
/// let clients: Vec<MaskKeyPair> = (0..3u8).map(|i| MaskKeyPair::from_secret_bytes([10 + i; 32])).collect();
/// let directory: Vec<_> = clients.iter().enumerate().map(|(i, k)| (i as u64, k.public_key())).collect();
/// let deal = deal_seeds(&f, &ctx, &dealer, &directory, 4, &mut testkit::rng("dealer-doc"))?;
/// // The clients' masks and the correction sum to zero.
/// let mut sum = deal.correction.0.clone();
/// for ((id, sealed), keys) in deal.sealed.iter().zip(&clients) {
///     let seed = open_seed(keys, *id, &dealer.public_key(), &ctx, sealed)?;
///     let mask = seeded_mask(&f, &seed, &ctx, *id, 4)?;
///     for (s, m) in sum.iter_mut().zip(&mask.0) {
///         *s = f.add(s, m);
///     }
/// }
/// assert!(sum.iter().all(|e| *e == f.zero()));
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
pub fn deal_seeds<D: MaskDomain, R: CryptoRng + ?Sized>(
    domain: &D,
    ctx: &RoundContext,
    dealer: &MaskKeyPair,
    directory: &[(u64, MaskPublicKey)],
    len: usize,
    rng: &mut R,
) -> SketchResult<Deal<D::Elem>> {
    let mut seen = std::collections::BTreeSet::new();
    let mut total = vec![domain.mask_zero(); len];
    let mut sealed = Vec::with_capacity(directory.len());
    for (client, key) in directory {
        if !seen.insert(*client) {
            return Err(SketchError::Protocol(ProtocolError::InvalidPeers {
                reason: "the directory names a client twice",
            }));
        }
        let mut seed = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(seed.as_mut());
        let mask = seeded_mask(domain, &seed, ctx, *client, len)?;
        for (t, m) in total.iter_mut().zip(&mask.0) {
            *t = domain.mask_add(t, m);
        }
        sealed.push((*client, seal_seed(dealer, *client, key, ctx, &seed)?));
    }
    let correction = total
        .iter()
        .map(|t| domain.mask_sub(&domain.mask_zero(), t))
        .collect();
    Ok(Deal {
        sealed,
        correction: MaskVector(correction),
    })
}
