//! Partitioned sketches (beyond the paper): a public keyed hash sends each
//! key to one of `G` buckets, each bucket an independent field sketch of
//! capacity `t_b` with its own `r` check syndromes; buckets decode
//! independently (side by side with the `parallel` feature), and a delta
//! touches only the buckets of the keys it changes.
//!
//! # The bucket hash
//!
//! Key `k` in `[1, N]` goes to bucket
//! `floor(v * G / 2^64)`, where `v` is the first 8 bytes, read little
//! endian, of `HMAC-SHA256(hash_key, "syndrome-agg/v1/bucket" || len (u64
//! LE) || k)`, and `k` is written as its minimal little-endian bytes (`len`
//! of them). The 32-byte hash key is public, agreed per session like the
//! wide-key hash key, and the label separates the two hashes. The map is
//! uniform up to a relative bias below `G / 2^64`.
//!
//! # The overflow bound
//!
//! Let the aggregate have at most `t` distinct keys, placed by a uniform
//! hash (keys chosen without knowledge of the hash key). A bucket's load
//! `X` is then at most a `Binomial(t, 1/G)` variable, of mean
//! `mu = t / G`, and by the Chernoff bound, for every `k > mu`,
//!
//! ```text
//! P[X >= k] <= exp(-mu) (e mu / k)^k.
//! ```
//!
//! A union bound over the `G` buckets gives
//!
//! ```text
//! P[some bucket holds more than t_b keys] <= G exp(-mu) (e mu / k)^k,   k = t_b + 1,
//! ```
//!
//! and the per-bucket capacity `t_b` is the least value in `[1, t]` for
//! which this is at most `2^-lambda` ([`bucket_capacity`], its `log2`
//! [`overflow_log2`]; `t_b = t` always qualifies, as no bucket holds more
//! than `t` keys). This is the Chernoff bound, not the exact binomial
//! tail, and it is loose: at the default `G` and `lambda = 30` the exact
//! tail (summed in log space, outside this crate) would allow
//! `t_b = 2254, 2300, 2318` for `t = 10^4, 10^5, 10^6` where the Chernoff
//! bound takes `2306, 2322, 2337` (where `G` times the exact tail is
//! `2^-42.8, 2^-35.0, 2^-34.3`): up to 2.3% more elements, the price of a
//! closed form. It is evaluated
//! with IEEE basic operations only, so every platform derives the same
//! `t_b` from the same public parameters. The default `lambda` is
//! [`DEFAULT_OVERFLOW_EXPONENT`] (30), the default `G`
//! [`default_buckets`]`(t) = ceil(t / 2000)` ([`DEFAULT_KEYS_PER_BUCKET`]:
//! the bytes stay within 1.17 times one sketch's; smaller buckets decode
//! faster for more bytes, measured in docs/benchmarks.md).
//!
//! An adversary who knows the hash key can of course put more than `t_b`
//! keys in one bucket; like any over-capacity aggregate, that is a typed
//! error, never a wrong answer (below).
//!
//! # Bytes
//!
//! A partitioned sketch has `G (2 t_b + r)` elements, against `2t + r` for
//! one sketch of capacity `t` over the same field. With `lambda = 30`,
//! `r = 1` and the default `G`:
//!
//! | `t` | `G` | `t_b` | `G (2 t_b + 1)` | `2t + 1` | ratio |
//! |---|---|---|---|---|---|
//! | 10^4 | 5 | 2306 | 23 065 | 20 001 | 1.153 |
//! | 10^5 | 50 | 2322 | 232 250 | 200 001 | 1.161 |
//! | 10^6 | 500 | 2337 | 2 337 500 | 2 000 001 | 1.169 |
//!
//! Worked example, `t = 10^6`: `G = 500`, `mu = 2000`; the bound at
//! `t_b = 2337` is `2^-30.1` (at `2336` it is above `2^-30`), so a sketch
//! is 2 337 500 elements, 18.7 MB of 8-byte `GF(2^61 - 1)` elements against
//! 16.0 MB for one sketch of capacity `10^6`: 17% more bytes, for `G`
//! decodes of capacity 2337 instead of one of capacity `10^6`.
//!
//! # Decoding
//!
//! [`PartitionedSketch::decode`] decodes every bucket whose elements are
//! not all zero with the field sketch's decoder (the contract of
//! docs/threat-model.md §3, per bucket: an `Ok` re-encodes to every one of
//! the bucket's `2 t_b + r` elements), checks that every decoded key
//! hashes to the bucket it came from, merges the entries sorted by key and
//! checks the counts against the count policy over the whole aggregate. A
//! bucket that fails is
//! [`DecodeError::Bucket`](crate::DecodeError::Bucket) naming it; with
//! several, the lowest index, with or without the `parallel` feature. A
//! bucket with `t_b < s <= t_b + r` keys is always rejected; with more, it
//! is rejected except with the probability of the field sketch's contract
//! (about `p^-r` for garbage), and a false key must also hash to its
//! bucket.

// Decoding takes input from outside (docs/threat-model.md §8): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

mod bound;
mod decode;
mod hash;
mod params;

use std::borrow::Cow;

use field::FiniteField;
use num_bigint::BigUint;

pub use self::bound::{
    DEFAULT_KEYS_PER_BUCKET, DEFAULT_OVERFLOW_EXPONENT, bucket_capacity, default_buckets,
    overflow_log2,
};
pub use self::params::{
    DEFAULT_MAX_PARTITION_ELEMENTS, MAX_OVERFLOW_EXPONENT, PartitionParams, ValidPartitionParams,
};
use super::{LinearParams, LinearSketch, RawSketch};
use crate::decode::{NodesAndValues, power_sums};
use crate::error::{SketchError, SketchResult, check_len};
use crate::par::map_all;
use crate::sparse::SparseVector;
use field::poly::add_power_sums;

/// A partitioned sketch: `G` field sketches of capacity `t_b`, one per
/// bucket of the public bucket hash, stored one after the other (see the
/// `partitioned` module docs for the hash, the overflow bound and the
/// bytes).
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::LinearSketch;
/// use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
///
/// let params = PartitionParams::new(200, 1u64 << 40, [9; 32])
///     .with_buckets(4)
///     .validate(Mersenne61)?;
/// let mut a = PartitionedSketch::from_unsigned(&params, [(7u64, 2u64), (1 << 39, 1)])?;
/// let b = PartitionedSketch::from_unsigned(&params, [(7u64, 1u64), (12345, 4)])?;
/// a.add(&b)?;
/// assert_eq!(
///     a.decode()?.to_unsigned(params.field()),
///     vec![(7u32.into(), 3u32.into()), (12345u32.into(), 4u32.into()), ((1u64 << 39).into(), 1u32.into())]
/// );
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PartitionedSketch<F: FiniteField> {
    params: ValidPartitionParams<F>,
    elements: Vec<F::Elem>,
}

impl<F: FiniteField> PartitionedSketch<F> {
    /// The sketch of a histogram of unsigned counts.
    ///
    /// # Errors
    ///
    /// As [`insert_many`](Self::insert_many), and
    /// [`ParamsError::InvalidCount`](crate::ParamsError::InvalidCount) as
    /// [`ValidSketchParams::unsigned_count`](crate::ValidSketchParams::unsigned_count).
    pub fn from_unsigned<K, I>(params: &ValidPartitionParams<F>, entries: I) -> SketchResult<Self>
    where
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, u64)>,
    {
        let p = params.bucket_params();
        let entries = p.unsigned_entries(entries)?;
        let mut s = Self::new(params);
        s.insert_many(&entries)?;
        Ok(s)
    }

    /// The sketch of a sparse vector of signed values (centered
    /// representation).
    ///
    /// # Errors
    ///
    /// As [`insert_many`](Self::insert_many), and
    /// [`ParamsError::InvalidCount`](crate::ParamsError::InvalidCount) as
    /// [`ValidSketchParams::signed_count`](crate::ValidSketchParams::signed_count).
    pub fn from_signed<K, I>(params: &ValidPartitionParams<F>, entries: I) -> SketchResult<Self>
    where
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, i64)>,
    {
        let p = params.bucket_params();
        let entries = p.signed_entries(entries)?;
        let mut s = Self::new(params);
        s.insert_many(&entries)?;
        Ok(s)
    }

    /// The field.
    pub fn field(&self) -> &F {
        self.params.field()
    }

    /// The bucket of `key`
    /// ([`ValidPartitionParams::bucket_of`]).
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`](crate::ParamsError::KeyOutOfDomain)
    /// unless `1 <= key <= N`.
    pub fn bucket_of(&self, key: &BigUint) -> SketchResult<usize> {
        self.params.bucket_of(key)
    }

    /// The elements of bucket `bucket` (its `2 t_b + r` syndromes), or
    /// `None` for `bucket >= G`.
    ///
    /// # Example
    ///
    /// ```
    /// use field::{Field, Mersenne61};
    /// use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
    ///
    /// let params = PartitionParams::new(50, 1000u32, [2; 32]).with_buckets(3).validate(Mersenne61)?;
    /// let s = PartitionedSketch::from_unsigned(&params, [(10u32, 1u64)])?;
    /// let b = s.bucket_of(&10u32.into())?;
    /// assert_eq!(s.bucket_elements(b).map(|e| e[0]), Some(Mersenne61.one()));
    /// assert!(s.bucket_elements(3).is_none());
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    pub fn bucket_elements(&self, bucket: usize) -> Option<&[F::Elem]> {
        let len = self.params.bucket_len();
        let start = bucket.checked_mul(len)?;
        self.elements.get(start..start.checked_add(len)?)
    }

    /// The indices of the buckets with a nonzero element, increasing: the
    /// buckets a delta touches (the others are the sketch of zero).
    ///
    /// # Example
    ///
    /// ```
    /// use field::Mersenne61;
    /// use syndrome_agg::LinearSketch;
    /// use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
    ///
    /// let params = PartitionParams::new(1000, 1u32 << 30, [4; 32]).with_buckets(16).validate(Mersenne61)?;
    /// let before = PartitionedSketch::from_unsigned(&params, (1..=500u32).map(|k| (k, 1u64)))?;
    /// let mut after = before.clone();
    /// after.insert(&77u32.into(), &params.bucket_params().unsigned_count(3u32)?)?;
    /// let mut delta = after.clone();
    /// delta.subtract(&before)?;
    /// assert_eq!(delta.touched_buckets(), vec![params.bucket_of(&77u32.into())?]);
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    pub fn touched_buckets(&self) -> Vec<usize> {
        let f = self.params.field();
        self.buckets()
            .enumerate()
            .filter(|(_, s)| !s.iter().all(|x| f.is_zero(x)))
            .map(|(b, _)| b)
            .collect()
    }

    /// The buckets' element slices, in order.
    fn buckets(&self) -> core::slice::Chunks<'_, F::Elem> {
        self.elements.chunks(self.params.bucket_len().max(1))
    }

    /// Inserts every `(key, count)`: the same elements as calling
    /// [`insert`](LinearSketch::insert) on each, computed bucket by bucket
    /// by the field sketch's batch power sums (as
    /// [`Sketch::insert_many`](crate::Sketch::insert_many)), the keys
    /// hashed and the buckets summed on all cores with the `parallel`
    /// feature. Nothing changes if a key is out of the domain.
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`](crate::ParamsError::KeyOutOfDomain).
    ///
    /// # Example
    ///
    /// ```
    /// use field::{Field, Mersenne61};
    /// use num_bigint::BigUint;
    /// use syndrome_agg::LinearSketch;
    /// use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
    ///
    /// let f = Mersenne61;
    /// let params = PartitionParams::new(40, 100u32, [5; 32]).with_buckets(4).validate(f)?;
    /// let entries: Vec<(BigUint, _)> = (1..=30u32).map(|k| (k.into(), f.from_u64(k.into()))).collect();
    /// let mut batch = PartitionedSketch::new(&params);
    /// batch.insert_many(&entries)?;
    /// let mut one_by_one = PartitionedSketch::new(&params);
    /// for (k, c) in &entries {
    ///     one_by_one.insert(k, c)?;
    /// }
    /// assert_eq!(batch, one_by_one);
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    pub fn insert_many(&mut self, entries: &[(BigUint, F::Elem)]) -> SketchResult<()> {
        let p = &self.params;
        let bucket = p.bucket_params();
        let hasher = p.hasher();
        let placed = map_all(entries, |_, (k, _)| {
            Ok::<_, SketchError>((hasher.bucket(k), bucket.key_ref(k)?))
        });
        let mut groups: Vec<NodesAndValues<F::Elem>> = vec![(Vec::new(), Vec::new()); p.buckets()];
        for (r, (_, c)) in placed.into_iter().zip(entries) {
            let (b, x) = r?;
            if let Some((nodes, counts)) = groups.get_mut(b) {
                nodes.push(x);
                counts.push(c.clone());
            }
        }
        let f = p.field();
        let len = p.bucket_len();
        let sums = map_all(&groups, |_, (nodes, counts)| {
            if nodes.is_empty() {
                Ok(None)
            } else {
                power_sums(f, nodes, counts, len).map(Some)
            }
        });
        let sums = sums.into_iter().collect::<SketchResult<Vec<_>>>()?;
        for (chunk, sum) in self.elements.chunks_mut(len.max(1)).zip(sums) {
            if let Some(sum) = sum {
                for (s, d) in chunk.iter_mut().zip(&sum) {
                    f.add_assign(s, d);
                }
            }
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

impl<F: FiniteField> LinearSketch for PartitionedSketch<F> {
    type Params = ValidPartitionParams<F>;
    type Key = BigUint;
    type Count = F::Elem;
    type Elem = F::Elem;

    fn new(params: &ValidPartitionParams<F>) -> Self {
        Self {
            params: params.clone(),
            elements: vec![params.field().zero(); params.num_elements()],
        }
    }

    fn params(&self) -> &ValidPartitionParams<F> {
        &self.params
    }

    /// Adds `count * key^(i-1)` to syndrome `i` of the key's bucket only,
    /// `2(2 t_b + r)` field operations and one hash.
    fn insert(&mut self, key: &BigUint, count: &F::Elem) -> SketchResult<()> {
        let p = &self.params;
        let x = p.bucket_params().key_ref(key)?;
        let len = p.bucket_len();
        let start = p.hash_bucket(key).saturating_mul(len);
        let f = p.field();
        if let Some(chunk) = self.elements.get_mut(start..start.saturating_add(len)) {
            add_power_sums(f, chunk, &x, count);
        }
        Ok(())
    }

    fn add(&mut self, other: &Self) -> SketchResult<()> {
        self.combine(other, |f, a, b| f.add_assign(a, b))
    }

    fn subtract(&mut self, other: &Self) -> SketchResult<()> {
        self.combine(other, |f, a, b| f.sub_assign(a, b))
    }

    crate::sketch::linear_via_raw!();

    /// Decodes every bucket that is not all zero (side by side with the
    /// `parallel` feature), checks that each decoded key hashes to its
    /// bucket, and merges the entries sorted by key (see the `partitioned`
    /// module docs). Identical to
    /// [`decode_sequential`](PartitionedSketch::decode_sequential).
    ///
    /// # Errors
    ///
    /// [`DecodeError::Bucket`](crate::DecodeError::Bucket) naming the
    /// lowest failing bucket, with its field-sketch rejection
    /// ([`DecodeError::TooManyKeys`](crate::DecodeError::TooManyKeys) for
    /// a bucket over capacity by at most `r`, ...) or
    /// [`DecodeError::KeyInWrongBucket`](crate::DecodeError::KeyInWrongBucket);
    /// [`DecodeError::CountOutOfRange`](crate::DecodeError::CountOutOfRange)
    /// for counts the policy refuses over the whole aggregate.
    ///
    /// # Example
    ///
    /// ```
    /// use field::Mersenne61;
    /// use syndrome_agg::{DecodeError, LinearSketch, SketchError};
    /// use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
    ///
    /// let params = PartitionParams::new(20, 10_000u32, [8; 32]).with_buckets(2).validate(Mersenne61)?;
    /// // More keys than a bucket holds, all in bucket 1.
    /// let keys: Vec<u32> = (1..).filter(|k| params.bucket_of(&(*k).into()).ok() == Some(1))
    ///     .take(params.bucket_capacity() + 1).collect();
    /// let s = PartitionedSketch::from_unsigned(&params, keys.iter().map(|&k| (k, 1u64)))?;
    /// assert!(matches!(
    ///     s.decode(),
    ///     Err(SketchError::Decode(DecodeError::Bucket { bucket: 1, error }))
    ///         if matches!(*error, DecodeError::TooManyKeys { .. })
    /// ));
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    fn decode(&self) -> SketchResult<SparseVector<BigUint, F::Elem>> {
        let chunks: Vec<&[F::Elem]> = self.buckets().collect();
        let decoded = map_all(&chunks, |b, s| self.decode_bucket(b, s));
        // The lowest failing bucket, as decode_sequential.
        let decoded = decoded.into_iter().collect::<SketchResult<Vec<_>>>()?;
        self.merge(decoded)
    }

    fn is_zero(&self) -> bool {
        let f = self.params.field();
        self.elements.iter().all(|x| f.is_zero(x))
    }
}

impl<F: FiniteField> RawSketch for PartitionedSketch<F> {
    /// The buckets' syndromes, bucket 0 first.
    fn elements(&self) -> Cow<'_, [F::Elem]> {
        Cow::Borrowed(&self.elements)
    }

    fn into_elements(self) -> Vec<F::Elem> {
        self.elements
    }

    fn from_elements(
        params: &ValidPartitionParams<F>,
        elements: Vec<F::Elem>,
    ) -> SketchResult<Self> {
        check_len(params.num_elements(), elements.len())?;
        Ok(Self {
            params: params.clone(),
            elements,
        })
    }
}
