//! The wide-key sketch (beyond the paper): keys that are arbitrary byte
//! strings, decoded in a 64- or 128-bit field whatever their size; the
//! scheme is described on [`WideSketch`].

// The wide-key decoder takes input from outside: no panicking index or unwrap here
// (docs/threat-model.md §8). Field and big-integer arithmetic cannot overflow, so
// clippy's arithmetic_side_effects is not denied.
#![deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used)]

use core::fmt;

use field::{FiniteField, solve_transposed_vandermonde};
use hmac::{Hmac, KeyInit, Mac};
use num_bigint::BigUint;
use sha2::Sha256;

use super::{LinearParams, LinearSketch};
use crate::context::RoundContext;
use crate::decode::add_power_sums;
use crate::decode::{check_all, decode_field, power_sums};
use crate::error::{DecodeError, ParamsError, SketchError, SketchResult, check_len, invalid};
use crate::params::{CountPolicy, SketchParams, ValidSketchParams};
use crate::sparse::SparseVector;
use crate::wire::{Frame, FrameKind, field_bytes};

/// The documented cap on wide-key length: 4096 bytes (32768 bits). The
/// length prefix is two bytes, so the format could carry up to 65535.
pub const MAX_WIDE_KEY_LEN: usize = 4096;

hazmat! {
/// The HMAC message prefix of the key hash.
pub const KEY_HASH_PREFIX: &[u8] = b"syndrome-agg/v1/key";
}

/// Rejection-sampling attempts of `key_hash` before it gives up (each
/// fails with probability below one half).
const KEY_HASH_ATTEMPTS: u32 = 128;

hazmat! {
/// The field element of a wide key: for attempt `a = 0, 1, ...`, the
/// concatenation of the blocks
/// `HMAC-SHA256(hash_key, "syndrome-agg/v1/key" || a (u32 LE) || j (u32 LE)
/// || len(key) (u64 LE) || key)`, `j = 0, 1, ...`, truncated to
/// `byte_len` bytes, read little-endian, bits at and above the bit length
/// of `p - 1` cleared; the first candidate in `[1, p-1]` is the hash.
///
/// # Errors
///
/// [`DecodeError::HashMismatch`] if 128 attempts fail (probability below
/// `2^-128`).
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use syndrome_agg::wide::key_hash;
///
/// let f = Mersenne61;
/// let a = key_hash(&f, &[1; 32], b"https://example.org/a")?;
/// let b = key_hash(&f, &[1; 32], b"https://example.org/b")?;
/// assert_ne!(a, b);
/// assert!(!f.is_zero(&a));
/// assert_eq!(a, key_hash(&f, &[1; 32], b"https://example.org/a")?);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
pub fn key_hash<F: FiniteField>(f: &F, hash_key: &[u8; 32], key: &[u8]) -> SketchResult<F::Elem> {
    let p = f.characteristic();
    let b = (&p - 1u32).bits();
    let w = usize::try_from(b.div_ceil(8)).unwrap_or(usize::MAX);
    let top = if b.is_multiple_of(8) {
        0xff
    } else {
        (1u8 << (b % 8)) - 1
    };
    let len = u64::try_from(key.len()).unwrap_or(u64::MAX);
    let mut buf = Vec::with_capacity(w + 32);
    for a in 0..KEY_HASH_ATTEMPTS {
        buf.clear();
        let mut j = 0u32;
        while buf.len() < w {
            let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(hash_key) else {
                unreachable!("HMAC accepts keys of any length");
            };
            mac.update(KEY_HASH_PREFIX);
            mac.update(&a.to_le_bytes());
            mac.update(&j.to_le_bytes());
            mac.update(&len.to_le_bytes());
            mac.update(key);
            buf.extend_from_slice(&mac.finalize().into_bytes());
            j = j.wrapping_add(1);
        }
        buf.truncate(w);
        if let Some(last) = buf.last_mut() {
            *last &= top;
        }
        let v = BigUint::from_bytes_le(&buf);
        if v > BigUint::from(0u8) && v < p {
            return Ok(f.from_biguint(&v));
        }
    }
    Err(SketchError::Decode(DecodeError::HashMismatch {
        reason: "key hash rejection sampling exhausted",
    }))
}
}

/// Parameters of a wide-key sketch: capacity `t`, `r` extra check
/// syndromes, the longest key `L` in bytes, the count policy, and the
/// public 32-byte hash key of the session.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::LinearParams;
/// use syndrome_agg::wide::WideKeyParams;
///
/// let p = WideKeyParams::new(10, 64, [0; 32]).validate(Mersenne61)?;
/// assert_eq!(p.chunk_bytes(), 7);
/// assert_eq!(p.channels(), 10); // ceil((2 + 64) / 7)
/// assert_eq!(p.num_elements(), 21 + 10 * 10);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct WideKeyParams {
    capacity: usize,
    extra: usize,
    max_key_len: usize,
    counts: CountPolicy,
    hash_key: [u8; 32],
}

impl fmt::Debug for WideKeyParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WideKeyParams")
            .field("capacity", &self.capacity)
            .field("extra", &self.extra)
            .field("max_key_len", &self.max_key_len)
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl WideKeyParams {
    /// Capacity `t`, keys of at most `max_key_len` bytes, hash key of the
    /// session (public; it separates the hashes of different sessions).
    pub fn new(capacity: usize, max_key_len: usize, hash_key: [u8; 32]) -> Self {
        Self {
            capacity,
            extra: crate::params::DEFAULT_EXTRA,
            max_key_len,
            counts: CountPolicy::FieldElements,
            hash_key,
        }
    }

    /// Sets `r`.
    #[must_use]
    pub fn with_extra(mut self, extra: usize) -> Self {
        self.extra = extra;
        self
    }

    /// Sets the count policy.
    #[must_use]
    pub fn with_counts(mut self, counts: CountPolicy) -> Self {
        self.counts = counts;
        self
    }

    /// Checks the parameters against `field`.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidParams`] for a key cap above
    /// [`MAX_WIDE_KEY_LEN`], a field under 9 bits, or the conditions of
    /// [`SketchParams::validate`] (with key domain `[1, p-1]`).
    pub fn validate<F: FiniteField>(self, field: F) -> SketchResult<ValidWideKeyParams<F>> {
        if self.max_key_len > MAX_WIDE_KEY_LEN {
            return Err(invalid(format!(
                "wide keys of {} bytes exceed the cap of {MAX_WIDE_KEY_LEN}",
                self.max_key_len
            )));
        }
        let bits = field.modulus_bits();
        if bits < 9 {
            return Err(invalid("wide keys need a field of at least 9 bits"));
        }
        let chunk_bytes = usize::try_from((bits - 1) / 8).unwrap_or(usize::MAX);
        let channels = (2 + self.max_key_len).div_ceil(chunk_bytes);
        let domain = field.characteristic() - 1u32;
        let sketch = SketchParams::new(self.capacity, domain)
            .with_extra(self.extra)
            .with_counts(self.counts.clone());
        let total = channels
            .checked_mul(self.capacity)
            .and_then(|v| v.checked_add(sketch.num_syndromes()))
            .ok_or_else(|| invalid("wide-key sketch size overflows"))?;
        let sketch = sketch.validate(field)?;
        if total > crate::params::DEFAULT_MAX_SYNDROMES {
            return Err(invalid(format!(
                "wide-key sketch of {total} elements exceeds {}",
                crate::params::DEFAULT_MAX_SYNDROMES
            )));
        }
        Ok(ValidWideKeyParams {
            sketch,
            max_key_len: self.max_key_len,
            hash_key: self.hash_key,
            chunk_bytes,
            channels,
        })
    }
}

/// [`WideKeyParams`] checked against a field.
#[derive(Clone, PartialEq)]
pub struct ValidWideKeyParams<F> {
    sketch: ValidSketchParams<F>,
    max_key_len: usize,
    hash_key: [u8; 32],
    chunk_bytes: usize,
    channels: usize,
}

impl<F: FiniteField> fmt::Debug for ValidWideKeyParams<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidWideKeyParams")
            .field("sketch", &self.sketch)
            .field("max_key_len", &self.max_key_len)
            .field("chunk_bytes", &self.chunk_bytes)
            .field("channels", &self.channels)
            .finish_non_exhaustive()
    }
}

impl<F: FiniteField> ValidWideKeyParams<F> {
    /// The locator sketch's parameters (key domain `[1, p-1]`).
    pub fn sketch_params(&self) -> &ValidSketchParams<F> {
        &self.sketch
    }
    /// The field.
    pub fn field(&self) -> &F {
        self.sketch.field()
    }
    /// Bytes per payload chunk, `floor((bits(p) - 1) / 8)`.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }
    /// Payload channels `c = ceil((2 + L) / b)`.
    pub fn channels(&self) -> usize {
        self.channels
    }
    /// The longest key in bytes.
    pub fn max_key_len(&self) -> usize {
        self.max_key_len
    }
}

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
    /// [`ValidSketchParams::unsigned_count`].
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

    /// Locator syndromes, then the channels one after the other.
    fn elements(&self) -> &[F::Elem] {
        &self.elements
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
        let (nodes, counts) = decode_field(f, locator, t, |x| {
            if f.is_zero(x) {
                return Err(SketchError::Decode(DecodeError::KeyOutOfRange {
                    key: "0".into(),
                    domain: "nonzero key hashes".into(),
                }));
            }
            Ok(())
        })?;
        let mut total = BigUint::from(0u8);
        for (x, c) in nodes.iter().zip(&counts) {
            p.sketch
                .check_decoded_count(&f.to_biguint(x), c, &mut total)?;
        }
        let n = nodes.len();
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
        for (k, channel) in channels.chunks_exact(t).enumerate() {
            let values = if n == 0 {
                Vec::new()
            } else {
                let first =
                    channel
                        .get(..n)
                        .ok_or(SketchError::Decode(DecodeError::TooManyKeys {
                            capacity: t,
                            needed: n,
                        }))?;
                solve_transposed_vandermonde(f, &nodes, first)
                    .map_err(|_| SketchError::Decode(DecodeError::RepeatedRoot))?
            };
            if let Err(SketchError::Decode(DecodeError::CheckMismatch { index })) =
                check_all(channel, &power_sums(f, &nodes, &values, t))
            {
                return Err(SketchError::Decode(DecodeError::CheckMismatch {
                    index: m + k * t + index,
                }));
            }
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
        for ((payload, x), c) in payloads.into_iter().zip(&nodes).zip(counts) {
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

impl<F: FiniteField> LinearParams for ValidWideKeyParams<F> {
    type Elem = F::Elem;
    type Domain = F;

    fn mask_domain(&self) -> F {
        self.field().clone()
    }

    fn num_elements(&self) -> usize {
        self.sketch.num_syndromes() + self.channels * self.sketch.capacity()
    }

    fn check_same(&self, other: &Self) -> SketchResult<()> {
        if self != other {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "wide-key parameters",
            }));
        }
        Ok(())
    }

    /// Kind [`FrameKind::WideKey`], masked or not; its `key_domain` field
    /// holds the key-length cap `L`.
    fn frame(
        &self,
        _masked: bool,
        elements: &[F::Elem],
        client_id: u64,
        ctx: &RoundContext,
    ) -> Frame {
        let f = self.field();
        Frame::build(
            FrameKind::WideKey,
            &f.characteristic(),
            self.sketch.capacity(),
            self.sketch.extra(),
            &BigUint::from(u64::try_from(self.max_key_len).unwrap_or(u64::MAX)),
            self.channels,
            client_id,
            ctx,
            field_bytes(f, elements),
        )
    }

    fn parse_frame(&self, _masked: bool, frame: &Frame) -> SketchResult<Vec<F::Elem>> {
        frame.expect_kind(FrameKind::WideKey)?;
        let f = self.field();
        frame.expect_shape(
            &f.characteristic(),
            self.sketch.capacity(),
            self.sketch.extra(),
            &BigUint::from(u64::try_from(self.max_key_len).unwrap_or(u64::MAX)),
            self.channels,
        )?;
        frame.field_elements(f, self.num_elements())
    }
}

/// Chunk `k` (little-endian integer of `b` bytes) of the padded payload
/// `len (u16 LE) || key || zeros`.
fn payload_chunk(key: &[u8], k: usize, b: usize) -> BigUint {
    let len = u16::try_from(key.len()).unwrap_or(u16::MAX).to_le_bytes();
    let start = k * b;
    let bytes: Vec<u8> = (start..start + b)
        .map(|i| match i {
            0 | 1 => len.get(i).copied().unwrap_or(0),
            _ => key.get(i - 2).copied().unwrap_or(0),
        })
        .collect();
    BigUint::from_bytes_le(&bytes)
}

/// The key of a reassembled payload: length prefix within the cap, zero
/// padding after the key.
fn parse_payload(payload: &[u8], max_key_len: usize) -> SketchResult<Vec<u8>> {
    let bad = |reason| SketchError::Decode(DecodeError::HashMismatch { reason });
    let (len, rest) = payload
        .split_first_chunk::<2>()
        .ok_or(bad("payload shorter than its length prefix"))?;
    let len = usize::from(u16::from_le_bytes(*len));
    if len > max_key_len || len > rest.len() {
        return Err(bad("payload length prefix out of range"));
    }
    let (key, pad) = rest.split_at(len);
    if pad.iter().any(|&b| b != 0) {
        return Err(bad("payload padding is not zero"));
    }
    Ok(key.to_vec())
}
