//! The wide-key sketch (beyond the paper): keys that are arbitrary byte
//! strings, decoded in a 64- or 128-bit field whatever their size; the
//! scheme is described on [`WideSketch`].

// The wide-key decoder takes input from outside: no panicking index or unwrap here
// (docs/threat-model.md §8). Field and big-integer arithmetic cannot overflow, so
// clippy's arithmetic_side_effects is not denied.
#![deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used)]

pub(crate) mod key;
pub(crate) mod params;

use std::borrow::Cow;

use field::FiniteField;
use num_bigint::BigUint;

use self::key::{key_hash, parse_payload, payload_chunk};
use self::params::ValidWideKeyParams;
use super::{LinearParams, LinearSketch, RawSketch};
use crate::decode::{decode_field, solve_error};
use crate::error::{DecodeError, ParamsError, SketchError, SketchResult, check_len};
use crate::par::map_all;
use crate::sparse::SparseVector;
use field::poly::add_power_sums;

/// A wide-key sketch: `2t + r` locator syndromes and `c` payload channels
/// of `t` syndromes.
///
/// # Scheme
///
/// - **Locator.** Each key `w` maps to a nonzero field element `h(w)` by a
///   keyed hash (`key_hash`: HMAC-SHA256 under a public 32-byte session
///   key, domain-separated, rejection-sampled into `[1, p-1]`). The sketch
///   holds the `2t + r` power sums `S_i = sum_w q_w h(w)^(i-1)` exactly as a
///   plain [`Sketch`](crate::Sketch) over the key domain `[1, p-1]`.
/// - **Payload.** The key's bytes with a 2-byte little-endian length prefix,
///   zero-padded to `c * b` bytes, are cut into `c` chunks of
///   `b = floor((bits(p) - 1) / 8)` bytes (so a chunk, read little-endian,
///   is below `2^(8b) < p`). Channel `k` holds `t` syndromes
///   `P_{k,i} = sum_w q_w chunk_k(w) h(w)^(i-1)`, `i = 1..t`: linear in the
///   vector like the locator syndromes, so masked aggregation carries over
///   unchanged.
/// - **Decoding.** The locator syndromes are decoded as usual (every one of
///   the `2t + r` is checked) into nodes `h_j` and counts `q_j`. For each
///   channel the same transposed Vandermonde solve on its first `m` (number
///   of keys) syndromes gives `q_j chunk_k(w_j)`; all `t` syndromes of the
///   channel must re-encode; dividing by `q_j` gives the chunk, which must
///   be below `2^(8b)`. The bytes are reassembled, the length prefix and
///   the zero padding checked, and the **checksum**: re-hashing the
///   recovered key must give back `h_j`. Two different keys that collide
///   under the hash mix their payloads, fail this check, and produce an
///   error, never a wrong key.
///
/// # Communication
///
/// A plain sketch over the key domain `[1, N]` sends `2t + r` elements of a
/// field with `p > N`, about `(2t + r) log2 N` bits. A wide-key sketch sends
/// `(2t + r) + c t` elements of a fixed small field (`GF(2^61 - 1)`:
/// 8-byte elements, `b = 7`), `c = ceil((2 + L) / b)` for keys of at most
/// `L` bytes. For a 6000-bit key (`L = 750`) that is `(2t + r) + 108 t`
/// elements of 64 bits, about `110 t * 64 = 7040 t` bits, against
/// `2t * 6000 = 12000 t` bits for the plain scheme in a 6001-bit field;
/// and decoding runs in the 61-bit field instead of a 6000-bit one.
///
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::LinearSketch;
/// use syndrome_agg::wide::{WideKeyParams, WideSketch};
///
/// let params = WideKeyParams::new(4, 100, [3; 32]).validate(Mersenne61)?;
/// let mut a = WideSketch::from_unsigned(&params, [(&b"token-17"[..], 2u64)])?;
/// let b = WideSketch::from_unsigned(&params, [(&b"https://example.org/"[..], 1u64), (&b"token-17"[..], 5)])?;
/// a.add(&b)?;
/// let decoded = a.decode()?.to_unsigned(params.field());
/// assert_eq!(decoded, vec![
///     (b"https://example.org/".to_vec(), 1u32.into()),
///     (b"token-17".to_vec(), 7u32.into()),
/// ]);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct WideSketch<F: FiniteField> {
    params: ValidWideKeyParams<F>,
    elements: Vec<F::Elem>,
}

impl<F: FiniteField> WideSketch<F> {
    /// The sketch of `(key, unsigned count)` entries.
    ///
    /// # Errors
    ///
    /// As [`insert`](LinearSketch::insert) and
    /// [`ValidSketchParams::unsigned_count`](crate::ValidSketchParams::unsigned_count).
    pub fn from_unsigned<'a, I>(params: &ValidWideKeyParams<F>, entries: I) -> SketchResult<Self>
    where
        I: IntoIterator<Item = (&'a [u8], u64)>,
    {
        let mut s = Self::new(params);
        for (k, c) in entries {
            let c = params.sketch.unsigned_count(c)?;
            s.insert_bytes(k, &c)?;
        }
        Ok(s)
    }

    /// Adds `count` at the byte-string key `key` (what
    /// [`insert`](LinearSketch::insert) does, without owning the key).
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyTooLong`] above the key cap.
    pub fn insert_bytes(&mut self, key: &[u8], count: &F::Elem) -> SketchResult<()> {
        let p = &self.params;
        if key.len() > p.max_key_len {
            return Err(SketchError::Params(ParamsError::KeyTooLong {
                len: key.len(),
                max: p.max_key_len,
            }));
        }
        let f = p.field();
        let h = key_hash(f, &p.hash_key, key)?;
        let m = p.sketch.num_syndromes();
        let t = p.sketch.capacity();
        let (locator, channels) = self.elements.split_at_mut(m);
        add_power_sums(f, locator, &h, count);
        for (k, channel) in channels.chunks_exact_mut(t).enumerate() {
            let chunk = payload_chunk(key, k, p.chunk_bytes);
            if chunk.bits() == 0 {
                continue;
            }
            let c = f.mul(count, &f.from_biguint(&chunk));
            add_power_sums(f, channel, &h, &c);
        }
        Ok(())
    }

    /// `self op= other`, element by element, after the merge rule.
    fn combine(&mut self, other: &Self, op: fn(&F, &mut F::Elem, &F::Elem)) -> SketchResult<()> {
        self.params.check_same(&other.params)?;
        let f = self.params.field();
        for (a, b) in self.elements.iter_mut().zip(&other.elements) {
            op(f, a, b);
        }
        Ok(())
    }
}

impl<F: FiniteField> LinearSketch for WideSketch<F> {
    type Params = ValidWideKeyParams<F>;
    type Key = Vec<u8>;
    type Count = F::Elem;
    type Elem = F::Elem;

    fn new(params: &ValidWideKeyParams<F>) -> Self {
        Self {
            params: params.clone(),
            elements: vec![params.field().zero(); params.num_elements()],
        }
    }

    fn params(&self) -> &ValidWideKeyParams<F> {
        &self.params
    }

    /// As [`insert_bytes`](WideSketch::insert_bytes).
    fn insert(&mut self, key: &Vec<u8>, count: &F::Elem) -> SketchResult<()> {
        self.insert_bytes(key, count)
    }

    fn add(&mut self, other: &Self) -> SketchResult<()> {
        self.combine(other, |f, a, b| f.add_assign(a, b))
    }

    fn subtract(&mut self, other: &Self) -> SketchResult<()> {
        self.combine(other, |f, a, b| f.sub_assign(a, b))
    }

    crate::sketch::linear_via_raw!();

    fn is_zero(&self) -> bool {
        let f = self.params.field();
        self.elements.iter().all(|x| f.is_zero(x))
    }

    /// Decodes `(key bytes, count)` entries, sorted by key bytes (see
    /// [`WideSketch`]).
    ///
    /// # Errors
    ///
    /// Every error of the field sketch's decoder for the locator;
    /// [`DecodeError::CheckMismatch`] if a payload channel does not
    /// re-encode (index counted over all elements, 1-based);
    /// [`DecodeError::HashMismatch`] for a payload that is not a valid key
    /// or does not hash back to its locator.
    fn decode(&self) -> SketchResult<SparseVector<Vec<u8>, F::Elem>> {
        let p = &self.params;
        let f = p.field();
        let m = p.sketch.num_syndromes();
        let t = p.sketch.capacity();
        let (locator, channels) = self.elements.split_at(m);
        let (system, counts) = decode_field(f, locator, t, |x| {
            if f.is_zero(x) {
                return Err(SketchError::Decode(DecodeError::KeyOutOfRange {
                    key: "0".into(),
                    domain: "nonzero key hashes".into(),
                }));
            }
            Ok(())
        })?;
        let mut total = BigUint::from(0u8);
        for (x, c) in system.nodes().iter().zip(&counts) {
            p.sketch
                .check_decoded_count(&f.to_biguint(x), c, &mut total)?;
        }
        let n = system.len();
        let mut inv_counts = counts.clone();
        if !f.batch_inv(&mut inv_counts) {
            return Err(SketchError::Decode(DecodeError::CountOutOfRange {
                key: "(wide key)".into(),
                count: "0".into(),
                reason: "a located key has count zero",
            }));
        }
        let chunk_limit = BigUint::from(1u8) << (8 * p.chunk_bytes);
        let mut payloads = vec![Vec::with_capacity(p.channels * p.chunk_bytes); n];
        // Each payload channel is an independent solve and check over the
        // locator's nodes (one prepared system): on all cores with the
        // `parallel` feature; errors are taken in channel order either way,
        // so the result does not depend on it.
        let chans: Vec<(usize, &[F::Elem])> = channels.chunks_exact(t).enumerate().collect();
        let solve = |&(k, channel): &(usize, &[F::Elem])| -> SketchResult<Vec<F::Elem>> {
            let offset = m.saturating_add(k.saturating_mul(t));
            system
                .solve(f, channel)
                .map_err(|e| solve_error(e, t, offset))
        };
        for values in map_all(&chans, |_, c| solve(c)) {
            let values = values?;
            for ((v, inv), out) in values.iter().zip(&inv_counts).zip(payloads.iter_mut()) {
                let chunk = f.to_biguint(&f.mul(v, inv));
                if chunk >= chunk_limit {
                    return Err(SketchError::Decode(DecodeError::HashMismatch {
                        reason: "a payload chunk is out of range",
                    }));
                }
                let mut bytes = chunk.to_bytes_le();
                bytes.resize(p.chunk_bytes, 0);
                out.extend_from_slice(&bytes);
            }
        }
        let mut out = Vec::with_capacity(n);
        for ((payload, x), c) in payloads.into_iter().zip(system.nodes()).zip(counts) {
            let key = parse_payload(&payload, p.max_key_len)?;
            if key_hash(f, &p.hash_key, &key)? != *x {
                return Err(SketchError::Decode(DecodeError::HashMismatch {
                    reason: "a decoded key does not hash to its locator",
                }));
            }
            out.push((key, c));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(SparseVector::from_sorted(out))
    }
}

impl<F: FiniteField> RawSketch for WideSketch<F> {
    /// Locator syndromes, then the channels one after the other.
    fn elements(&self) -> Cow<'_, [F::Elem]> {
        Cow::Borrowed(&self.elements)
    }

    fn into_elements(self) -> Vec<F::Elem> {
        self.elements
    }

    fn from_elements(params: &ValidWideKeyParams<F>, elements: Vec<F::Elem>) -> SketchResult<Self> {
        check_len(params.num_elements(), elements.len())?;
        Ok(Self {
            params: params.clone(),
            elements,
        })
    }
}
