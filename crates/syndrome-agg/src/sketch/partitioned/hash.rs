//! The public keyed hash that sends a key to its bucket.

use hmac::{Hmac, KeyInit, Mac};
use num_bigint::BigUint;
use sha2::Sha256;

/// The HMAC message prefix of the bucket hash (its domain separator: the
/// wide-key hash uses `syndrome-agg/v1/key`).
pub(crate) const BUCKET_HASH_PREFIX: &[u8] = b"syndrome-agg/v1/bucket";

/// The bucket hash under one hash key, its HMAC state prepared once (so a
/// batch of keys costs one HMAC finalization each).
#[derive(Clone)]
pub(crate) struct BucketHasher {
    mac: Hmac<Sha256>,
    buckets: u64,
}

impl BucketHasher {
    /// The hasher of `buckets >= 1` buckets under `hash_key`.
    pub(crate) fn new(hash_key: &[u8; 32], buckets: usize) -> Self {
        // HMAC takes keys of any length: this never fails; the fallback
        // keeps the function total.
        let mut mac = Hmac::<Sha256>::new_from_slice(hash_key)
            .unwrap_or_else(|_| Hmac::<Sha256>::new(&Default::default()));
        mac.update(BUCKET_HASH_PREFIX);
        Self {
            mac,
            buckets: u64::try_from(buckets.max(1)).unwrap_or(u64::MAX),
        }
    }

    /// `floor(v * G / 2^64)`, where `v` is the first 8 bytes, read little
    /// endian, of `HMAC-SHA256(hash_key, "syndrome-agg/v1/bucket" ||
    /// len (u64 LE) || key)`, and `key` is the key's minimal little-endian
    /// bytes (`len` of them).
    pub(crate) fn bucket(&self, key: &BigUint) -> usize {
        let bytes = key.to_bytes_le();
        let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
        let mut mac = self.mac.clone();
        mac.update(&len.to_le_bytes());
        mac.update(&bytes);
        let out = mac.finalize().into_bytes();
        let mut word = [0u8; 8];
        for (d, s) in word.iter_mut().zip(out.iter()) {
            *d = *s;
        }
        let v = u128::from(u64::from_le_bytes(word));
        let b = v.wrapping_mul(u128::from(self.buckets)).wrapping_shr(64);
        // b < G <= usize::MAX.
        usize::try_from(b).unwrap_or(0)
    }
}
