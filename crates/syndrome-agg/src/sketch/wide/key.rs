//! The wide-key locator hash and the payload layout: a key's field
//! element and the chunks its bytes travel in.

// The payload parser takes input from outside: no panicking index or
// unwrap here (docs/threat-model.md §8).
#![deny(clippy::indexing_slicing, clippy::unwrap_used, clippy::expect_used)]

use field::FiniteField;
use hmac::{Hmac, KeyInit, Mac};
use num_bigint::BigUint;
use sha2::Sha256;

use crate::error::{DecodeError, SketchError, SketchResult};

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

/// Chunk `k` (little-endian integer of `b` bytes) of the padded payload
/// `len (u16 LE) || key || zeros`.
pub(super) fn payload_chunk(key: &[u8], k: usize, b: usize) -> BigUint {
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
pub(super) fn parse_payload(payload: &[u8], max_key_len: usize) -> SketchResult<Vec<u8>> {
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
