//! Masks `z_i` of Algorithm 2 of the paper (line 2): vectors that hide one
//! client's vector (in the paper, its sketch) and cancel in the sum over
//! clients.
//!
//! Two sources:
//! - an offline dealer ([`deal_zero_sum_masks`]) that issues per-client
//!   uniform vectors summing to zero, as the paper assumes; across a
//!   network, the dealer as a party ([`dealer`]) seals each client a seed
//!   of its mask and hands the server the correction that makes the sum
//!   zero;
//! - pairwise masks ([`pairwise`]): each pair of clients agrees a 32-byte
//!   seed by X25519 and HKDF-SHA256, expands it with the raw ChaCha20
//!   keystream ([`MaskStream`]) into uniform elements, and one of the pair
//!   adds the expansion while the other subtracts it.
//!
//! Masks live in a [`MaskDomain`]: any finite field, or another additive
//! group `Z / M` a crate built on this one implements it for (the
//! `syndrome-agg` crate's ring `Z / 2^k` of its integer sketches).

pub mod dealer;
pub mod pairwise;
mod stream;

use core::fmt;

use field::FiniteField;
use hkdf::Hkdf;
use num_bigint::BigUint;
use num_traits::One;
use rand::Rng;
use serde::{Deserialize, Serialize};
use sha2::Sha256;
use zeroize::Zeroizing;

pub use stream::MaskStream;

use crate::error::SumResult;

/// 32 bytes of HKDF-SHA256 (no salt) of `ikm` for `info`: every key
/// this crate derives from a secret (SecAgg's pair keys, the dealer's seal
/// keys and mask seeds).
pub(crate) fn hkdf32(ikm: &[u8], info: &[u8]) -> Zeroizing<[u8; 32]> {
    let hk = Hkdf::<Sha256>::new(None, ikm);
    let mut okm = Zeroizing::new([0u8; 32]);
    // 32 bytes is far below HKDF-SHA256's limit of 255 * 32.
    if hk.expand(info, okm.as_mut()).is_err() {
        unreachable!("HKDF-SHA256 can expand 32 bytes");
    }
    okm
}

/// Where masks live: an additive group `Z / M` with a canonical
/// representation `0..M`, uniform sampling and the documented stream
/// sampling of [`sample`](Self::sample).
///
/// Implemented for every [`FiniteField`] (`M = p`); other crates
/// implement it for their own groups (`syndrome-agg`'s `IntegerRing`,
/// `M = 2^k`). Method names carry a
/// `mask_` prefix so that they never clash with [`field::Field`]'s.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use masked_sum::masking::MaskDomain;
///
/// let f = Mersenne61;
/// let a = f.mask_from_canonical(&5u32.into());
/// let b = f.mask_sub(&f.mask_zero(), &a);
/// assert_eq!(f.mask_add(&a, &b), f.mask_zero());
/// ```
pub trait MaskDomain: Clone + fmt::Debug + PartialEq + Send + Sync + 'static {
    /// An element.
    type Elem: Clone + PartialEq + fmt::Debug + Send + Sync + 'static;
    /// The modulus `M`.
    fn mask_modulus(&self) -> BigUint;
    /// Zero.
    fn mask_zero(&self) -> Self::Elem;
    /// `a + b (mod M)`.
    fn mask_add(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem;
    /// `a - b (mod M)`.
    fn mask_sub(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem;
    /// The element of the canonical representative `v < M`.
    fn mask_from_canonical(&self, v: &BigUint) -> Self::Elem;
    /// The element of the canonical representative `v < M` (fast path).
    fn mask_from_u64(&self, v: u64) -> Self::Elem {
        self.mask_from_canonical(&BigUint::from(v))
    }
    /// The element of the canonical representative `v < M` (fast path).
    fn mask_from_u128(&self, v: u128) -> Self::Elem {
        self.mask_from_canonical(&BigUint::from(v))
    }
    /// A uniformly random element (for the dealer and tests; protocol masks
    /// come from [`sample`](Self::sample)).
    fn mask_random<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Elem {
        let mut buf = vec![0u8; sample_width(&self.mask_modulus()).0];
        loop {
            rng.fill_bytes(&mut buf);
            if let Some(v) = accept_candidate(&self.mask_modulus(), &mut buf) {
                return self.mask_from_canonical(&v);
            }
        }
    }

    /// Expands a keystream into `len` uniform elements by rejection
    /// sampling. This is the protocol's mask expansion and is fixed by
    /// known-answer tests (`scripts/ref/mask_kat.py`):
    ///
    /// 1. Let `b` be the bit length of `M - 1` and `w = ceil(b / 8)`.
    /// 2. Take the next `w` bytes of the stream and read them as a
    ///    little-endian integer `v`.
    /// 3. Clear every bit of `v` at position `b` or above (only the last
    ///    byte is affected).
    /// 4. If `v < M`, `v` is the next element; otherwise discard it. The `w`
    ///    bytes are consumed either way. Repeat until `len` elements.
    ///
    /// Every candidate is uniform on `[0, 2^b)` and `M > 2^(b-1)`, so each
    /// is accepted with probability above one half; for `M = 2^k` none is
    /// ever rejected.
    ///
    /// # Errors
    ///
    /// Only if the ChaCha20 keystream (256 GiB) runs out, which needs
    /// parameters far beyond any configured cap.
    fn sample(&self, stream: &mut MaskStream, len: usize) -> SumResult<Vec<Self::Elem>> {
        let modulus = self.mask_modulus();
        let (w, top_mask) = sample_width(&modulus);
        let mut out = Vec::with_capacity(len);
        let mut buf = vec![0u8; w];
        if w <= 8 {
            let m = u64::try_from(&modulus).ok();
            while out.len() < len {
                stream.fill(&mut buf)?;
                if let Some(last) = buf.last_mut() {
                    *last &= top_mask;
                }
                let mut word = [0u8; 8];
                word[..w].copy_from_slice(&buf);
                let v = u64::from_le_bytes(word);
                // M <= 2^64 here; M = 2^64 itself does not fit a u64 and
                // accepts everything.
                if m.is_none_or(|m| v < m) {
                    out.push(self.mask_from_u64(v));
                }
            }
        } else if w <= 16 {
            let m = u128::try_from(&modulus).ok();
            while out.len() < len {
                stream.fill(&mut buf)?;
                if let Some(last) = buf.last_mut() {
                    *last &= top_mask;
                }
                let mut word = [0u8; 16];
                word[..w].copy_from_slice(&buf);
                let v = u128::from_le_bytes(word);
                if m.is_none_or(|m| v < m) {
                    out.push(self.mask_from_u128(v));
                }
            }
        } else {
            while out.len() < len {
                stream.fill(&mut buf)?;
                if let Some(v) = accept_candidate_masked(&modulus, &mut buf, top_mask) {
                    out.push(self.mask_from_canonical(&v));
                }
            }
        }
        Ok(out)
    }
}

/// `(w, top_mask)`: the candidate width in bytes and the mask for its last
/// byte, for modulus `M` (step 1 and 3 of [`MaskDomain::sample`]).
fn sample_width(modulus: &BigUint) -> (usize, u8) {
    let b = if *modulus <= BigUint::one() {
        0
    } else {
        (modulus - 1u32).bits()
    };
    let w = usize::try_from(b.div_ceil(8)).unwrap_or(usize::MAX);
    let top_mask = if b.is_multiple_of(8) {
        0xff
    } else {
        (1u8 << (b % 8)) - 1
    };
    (w, top_mask)
}

fn accept_candidate(modulus: &BigUint, buf: &mut [u8]) -> Option<BigUint> {
    let (_, top_mask) = sample_width(modulus);
    accept_candidate_masked(modulus, buf, top_mask)
}

fn accept_candidate_masked(modulus: &BigUint, buf: &mut [u8], top_mask: u8) -> Option<BigUint> {
    if let Some(last) = buf.last_mut() {
        *last &= top_mask;
    }
    let v = BigUint::from_bytes_le(buf);
    (v < *modulus).then_some(v)
}

impl<F: FiniteField> MaskDomain for F {
    type Elem = F::Elem;
    fn mask_modulus(&self) -> BigUint {
        self.characteristic()
    }
    fn mask_zero(&self) -> F::Elem {
        self.zero()
    }
    fn mask_add(&self, a: &F::Elem, b: &F::Elem) -> F::Elem {
        self.add(a, b)
    }
    fn mask_sub(&self, a: &F::Elem, b: &F::Elem) -> F::Elem {
        self.sub(a, b)
    }
    fn mask_from_canonical(&self, v: &BigUint) -> F::Elem {
        self.from_biguint(v)
    }
    fn mask_from_u64(&self, v: u64) -> F::Elem {
        self.from_u64(v)
    }
    #[allow(clippy::cast_possible_truncation)] // the two 64-bit halves
    fn mask_from_u128(&self, v: u128) -> F::Elem {
        // hi * 2^64 + lo, without a big-integer allocation.
        let two32 = self.from_u64(1 << 32);
        let two64 = self.square(&two32);
        let hi = self.from_u64((v >> 64) as u64);
        self.add(&self.mul(&hi, &two64), &self.from_u64(v as u64))
    }
    fn mask_random<R: Rng + ?Sized>(&self, rng: &mut R) -> F::Elem {
        self.random(rng)
    }
}

/// One client's mask vector. Its `Debug` output is redacted.
///
/// Elements of word-sized fields could be wiped on drop, but big-integer
/// elements (`BigUint`) have no `Zeroize`; the seeds and keys that masks
/// derive from are zeroized instead (see [`pairwise`]).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct MaskVector<E>(pub Vec<E>);

impl<E> fmt::Debug for MaskVector<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MaskVector")
            .field("len", &self.0.len())
            .finish_non_exhaustive()
    }
}

/// The offline dealer of Algorithm 2 (line 2: "keys generated offline ...
/// so that `sum_l z_i^(l) = 0`"): `clients` mask vectors of length `len`
/// that sum to zero. The first `clients - 1` are uniform and independent,
/// the last is minus their sum, so any `clients - 1` of them are jointly
/// uniform and one vector alone reveals nothing — as long as `rng` is a
/// cryptographic generator, which the bound demands: masks drawn from a
/// predictable generator (a small-state PRNG, a seed a party can guess)
/// hide nothing.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use masked_sum::masking::deal_zero_sum_masks;
///
/// let f = Mersenne61;
/// let masks = deal_zero_sum_masks(&f, 3, 5, &mut rand::rng());
/// for i in 0..5 {
///     let s = masks.iter().fold(f.zero(), |acc, m| f.add(&acc, &m.0[i]));
///     assert_eq!(s, f.zero());
/// }
/// ```
pub fn deal_zero_sum_masks<D: MaskDomain, R: rand::CryptoRng + ?Sized>(
    domain: &D,
    clients: usize,
    len: usize,
    rng: &mut R,
) -> Vec<MaskVector<D::Elem>> {
    let mut out = Vec::with_capacity(clients);
    if clients == 0 {
        return out;
    }
    let mut total = vec![domain.mask_zero(); len];
    for _ in 1..clients {
        let m: Vec<D::Elem> = (0..len).map(|_| domain.mask_random(rng)).collect();
        for (t, v) in total.iter_mut().zip(&m) {
            *t = domain.mask_add(t, v);
        }
        out.push(MaskVector(m));
    }
    let last = total
        .iter()
        .map(|t| domain.mask_sub(&domain.mask_zero(), t))
        .collect();
    out.push(MaskVector(last));
    out
}
