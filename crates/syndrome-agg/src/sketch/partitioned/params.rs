//! The parameters of a partitioned sketch: the bucket count `G` and the
//! per-bucket capacity `t_b` chosen by the overflow bound.

use field::FiniteField;
use num_bigint::BigUint;
use serde::{Deserialize, Serialize};

use super::bound::{self, DEFAULT_OVERFLOW_EXPONENT, default_buckets};
use super::hash::BucketHasher;
use crate::error::{ParamsError, SketchError, SketchResult, invalid};
use crate::params::{CountPolicy, DEFAULT_EXTRA, SketchParams, ValidSketchParams};
use crate::sketch::{LinearParams, RawParams};
use crate::wire::{Frame, FrameKind, field_bytes};
use masked_sum::RoundContext;

/// The largest overflow exponent [`PartitionParams::validate`] accepts.
pub const MAX_OVERFLOW_EXPONENT: u32 = 256;

/// The default cap on the total number of elements `G (2 t_b + r)` of a
/// partitioned sketch (`2^24`: 128 MiB of 8-byte elements), a bound on
/// the memory and work that parameters read from outside can ask for.
pub const DEFAULT_MAX_PARTITION_ELEMENTS: usize = 1 << 24;

/// The public parameters of a partitioned sketch: total capacity `t`, key
/// domain `[1, N]`, bucket count `G`, `r` check syndromes per bucket, the
/// count policy, the public 32-byte hash key of the session, the overflow
/// exponent `lambda`, and a cap on the sketch's size.
///
/// [`validate`](Self::validate) derives the per-bucket capacity `t_b`
/// ([`bucket_capacity`](crate::partitioned::bucket_capacity)); a sketch
/// has `G (2 t_b + r)` elements.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::LinearParams;
/// use syndrome_agg::partitioned::PartitionParams;
///
/// let p = PartitionParams::new(10_000, 1u64 << 40, [7; 32]).validate(Mersenne61)?;
/// assert_eq!(p.buckets(), 5); // t / G = 2000 keys per bucket
/// assert!(p.bucket_capacity() > 2000);
/// assert_eq!(p.num_elements(), 5 * (2 * p.bucket_capacity() + 1));
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionParams {
    capacity: usize,
    key_domain: BigUint,
    buckets: Option<usize>,
    extra: usize,
    counts: CountPolicy,
    hash_key: [u8; 32],
    overflow_exponent: u32,
    max_elements: usize,
}

impl PartitionParams {
    /// Total capacity `t` over the key domain `[1, key_domain]`, bucket
    /// hash key `hash_key` (public; it separates the partitions of
    /// different sessions), with [`default_buckets`], [`DEFAULT_EXTRA`]
    /// check syndromes per bucket, [`CountPolicy::FieldElements`],
    /// [`DEFAULT_OVERFLOW_EXPONENT`] and
    /// [`DEFAULT_MAX_PARTITION_ELEMENTS`].
    pub fn new(capacity: usize, key_domain: impl Into<BigUint>, hash_key: [u8; 32]) -> Self {
        Self {
            capacity,
            key_domain: key_domain.into(),
            buckets: None,
            extra: DEFAULT_EXTRA,
            counts: CountPolicy::FieldElements,
            hash_key,
            overflow_exponent: DEFAULT_OVERFLOW_EXPONENT,
            max_elements: DEFAULT_MAX_PARTITION_ELEMENTS,
        }
    }

    /// Sets the bucket count `G` (in place of [`default_buckets`]).
    #[must_use]
    pub fn with_buckets(mut self, buckets: usize) -> Self {
        self.buckets = Some(buckets);
        self
    }

    /// Sets `r`, the check syndromes of each bucket.
    #[must_use]
    pub fn with_extra(mut self, extra: usize) -> Self {
        self.extra = extra;
        self
    }

    /// Sets the count policy (of the whole aggregate).
    #[must_use]
    pub fn with_counts(mut self, counts: CountPolicy) -> Self {
        self.counts = counts;
        self
    }

    /// Sets the overflow exponent `lambda`: `P[some bucket overflows] <=
    /// 2^-lambda` for `t` keys placed by a uniform hash.
    #[must_use]
    pub fn with_overflow_exponent(mut self, lambda: u32) -> Self {
        self.overflow_exponent = lambda;
        self
    }

    /// Sets the cap on `G (2 t_b + r)` that [`validate`](Self::validate)
    /// enforces.
    #[must_use]
    pub fn with_max_elements(mut self, max: usize) -> Self {
        self.max_elements = max;
        self
    }

    /// The total capacity `t`.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    /// The key domain `N`: keys are `1..=N`.
    pub fn key_domain(&self) -> &BigUint {
        &self.key_domain
    }
    /// The bucket count `G`: the one set, or [`default_buckets`].
    pub fn buckets(&self) -> usize {
        self.buckets
            .unwrap_or_else(|| default_buckets(self.capacity))
    }
    /// The check syndromes `r` of each bucket.
    pub fn extra(&self) -> usize {
        self.extra
    }
    /// The count policy.
    pub fn counts(&self) -> &CountPolicy {
        &self.counts
    }
    /// The public hash key of the bucket hash.
    pub fn hash_key(&self) -> &[u8; 32] {
        &self.hash_key
    }
    /// The overflow exponent `lambda`.
    pub fn overflow_exponent(&self) -> u32 {
        self.overflow_exponent
    }

    /// Derives `t_b` and checks the parameters against `field`.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidParams`] for `t = 0`, `N = 0`, `G = 0`,
    /// `lambda` outside `[1, MAX_OVERFLOW_EXPONENT]`, `t` or `G` at or
    /// above `2^53`, or `G (2 t_b + r)` above the configured maximum;
    /// [`ParamsError::FieldTooSmall`] as
    /// [`SketchParams::validate`](crate::SketchParams::validate) (for the
    /// buckets' sketch parameters: capacity `t_b`, key domain `N`).
    pub fn validate<F: FiniteField>(self, field: F) -> SketchResult<ValidPartitionParams<F>> {
        const EXACT: usize = 1 << 53;
        if self.capacity == 0 {
            return Err(invalid("capacity t must be at least 1"));
        }
        let buckets = self.buckets();
        if buckets == 0 {
            return Err(invalid("a partitioned sketch needs at least one bucket"));
        }
        if self.capacity >= EXACT || buckets >= EXACT {
            return Err(invalid("capacity and bucket count must be below 2^53"));
        }
        if self.overflow_exponent == 0 || self.overflow_exponent > MAX_OVERFLOW_EXPONENT {
            return Err(invalid(format!(
                "overflow exponent {} outside [1, {MAX_OVERFLOW_EXPONENT}]",
                self.overflow_exponent
            )));
        }
        let bucket_capacity = bound::least_capacity(self.capacity, buckets, self.overflow_exponent);
        let per_bucket = bucket_capacity
            .checked_mul(2)
            .and_then(|v| v.checked_add(self.extra))
            .ok_or_else(|| invalid("2 t_b + r overflows"))?;
        let total = per_bucket
            .checked_mul(buckets)
            .ok_or_else(|| invalid("G (2 t_b + r) overflows"))?;
        if total > self.max_elements {
            return Err(invalid(format!(
                "G (2 t_b + r) = {total} exceeds the configured maximum {}",
                self.max_elements
            )));
        }
        let bucket = SketchParams::new(bucket_capacity, self.key_domain.clone())
            .with_extra(self.extra)
            .with_counts(self.counts.clone())
            .with_max_syndromes(per_bucket)
            .validate(field)?;
        Ok(ValidPartitionParams {
            hasher: BucketHasher::new(&self.hash_key, buckets),
            bucket,
            buckets,
            params: self,
        })
    }
}

/// [`PartitionParams`] checked against a field, with the derived bucket
/// count `G` and per-bucket capacity `t_b`. Partitioned sketches are built
/// only from these.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::partitioned::PartitionParams;
///
/// let p = PartitionParams::new(100, 1000u32, [1; 32])
///     .with_buckets(4)
///     .with_overflow_exponent(20)
///     .validate(Mersenne61)?;
/// assert_eq!(p.buckets(), 4);
/// let b = p.bucket_of(&17u32.into())?;
/// assert!(b < 4);
/// assert!(p.bucket_of(&0u32.into()).is_err()); // key 0 is refused
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone)]
pub struct ValidPartitionParams<F> {
    params: PartitionParams,
    buckets: usize,
    bucket: ValidSketchParams<F>,
    hasher: BucketHasher,
}

impl<F: PartialEq> PartialEq for ValidPartitionParams<F> {
    fn eq(&self, other: &Self) -> bool {
        // The hasher is a function of the parameters.
        self.params == other.params && self.bucket == other.bucket
    }
}

impl<F: FiniteField> core::fmt::Debug for ValidPartitionParams<F> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ValidPartitionParams")
            .field("params", &self.params)
            .field("buckets", &self.buckets)
            .field("bucket", &self.bucket)
            .finish_non_exhaustive()
    }
}

impl<F: FiniteField> ValidPartitionParams<F> {
    /// The field.
    pub fn field(&self) -> &F {
        self.bucket.field()
    }
    /// The unchecked parameters these were validated from.
    pub fn params(&self) -> &PartitionParams {
        &self.params
    }
    /// The total capacity `t`.
    pub fn capacity(&self) -> usize {
        self.params.capacity
    }
    /// The bucket count `G`.
    pub fn buckets(&self) -> usize {
        self.buckets
    }
    /// The per-bucket capacity `t_b`.
    pub fn bucket_capacity(&self) -> usize {
        self.bucket.capacity()
    }
    /// The sketch parameters of every bucket (capacity `t_b`, key domain
    /// `N`, `r` check syndromes, the count policy).
    pub fn bucket_params(&self) -> &ValidSketchParams<F> {
        &self.bucket
    }
    /// `2 t_b + r`, the elements of one bucket.
    pub fn bucket_len(&self) -> usize {
        self.bucket.num_syndromes()
    }
    /// The key domain `N`.
    pub fn key_domain(&self) -> &BigUint {
        self.bucket.key_domain()
    }
    /// `log2` of the overflow bound these parameters meet
    /// ([`overflow_log2`](crate::partitioned::overflow_log2)): at most
    /// `-lambda`.
    pub fn overflow_log2(&self) -> f64 {
        bound::log2_bound(self.capacity(), self.buckets, self.bucket_capacity())
    }

    /// The bucket of `key` (see the `partitioned` module docs).
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`] unless `1 <= key <= N`.
    pub fn bucket_of(&self, key: &BigUint) -> SketchResult<usize> {
        self.bucket.key_ref(key)?;
        Ok(self.hasher.bucket(key))
    }

    /// The bucket of a key known to be in the domain.
    pub(super) fn hash_bucket(&self, key: &BigUint) -> usize {
        self.hasher.bucket(key)
    }

    /// The hasher, for batches.
    pub(super) fn hasher(&self) -> &BucketHasher {
        &self.hasher
    }
}

impl<F: FiniteField> LinearParams for ValidPartitionParams<F> {
    type Elem = F::Elem;
    type Domain = F;

    fn mask_domain(&self) -> F {
        self.field().clone()
    }

    /// `G (2 t_b + r)`.
    fn num_elements(&self) -> usize {
        // Checked at validation.
        self.buckets.saturating_mul(self.bucket_len())
    }

    fn check_same(&self, other: &Self) -> SketchResult<()> {
        if self.field() != other.field() {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "field",
            }));
        }
        if self != other {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "partition parameters",
            }));
        }
        Ok(())
    }
}

impl<F: FiniteField> RawParams for ValidPartitionParams<F> {
    /// Kind [`FrameKind::Partitioned`], masked or not (as the wide-key and
    /// integer sketches; the message layer says which), with capacity `t_b`
    /// and the bucket count `G >= 1` in the `channels` field. The hash key
    /// is not on the wire: it is agreed with the rest of the parameters.
    fn frame(
        &self,
        _masked: bool,
        elements: &[F::Elem],
        client_id: u64,
        ctx: &RoundContext,
    ) -> Frame {
        let f = self.field();
        Frame::build(
            FrameKind::Partitioned,
            &f.characteristic(),
            self.bucket_capacity(),
            self.bucket.extra(),
            self.key_domain(),
            self.buckets,
            client_id,
            ctx,
            field_bytes(f, elements),
        )
    }

    fn parse_frame(&self, _masked: bool, frame: &Frame) -> SketchResult<Vec<F::Elem>> {
        frame.expect_kind(FrameKind::Partitioned)?;
        let f = self.field();
        frame.expect_shape(
            &f.characteristic(),
            self.bucket_capacity(),
            self.bucket.extra(),
            self.key_domain(),
            self.buckets,
        )?;
        frame.field_elements(f, self.num_elements())
    }
}
