//! Decoding a partitioned sketch bucket by bucket (the contract is in the
//! `partitioned` module docs).

use field::FiniteField;
use num_bigint::BigUint;

use super::PartitionedSketch;
use crate::decode::decode_sketch;
use crate::error::{DecodeError, SketchError, SketchResult};
use crate::sparse::SparseVector;

/// Names the bucket in a decoder rejection.
fn in_bucket(bucket: usize, e: SketchError) -> SketchError {
    match e {
        SketchError::Decode(error) => SketchError::Decode(DecodeError::Bucket {
            bucket,
            error: Box::new(error),
        }),
        other => other,
    }
}

impl<F: FiniteField> PartitionedSketch<F> {
    /// Decodes bucket `bucket` from its elements `s`: nothing for an
    /// all-zero bucket, else the field sketch's decoder and the bucket
    /// check of every key; errors name the bucket.
    pub(super) fn decode_bucket(
        &self,
        bucket: usize,
        s: &[F::Elem],
    ) -> SketchResult<Vec<(BigUint, F::Elem)>> {
        let f = self.params.field();
        if s.iter().all(|x| f.is_zero(x)) {
            return Ok(Vec::new());
        }
        let v = decode_sketch(self.params.bucket_params(), s).map_err(|e| in_bucket(bucket, e))?;
        for (k, _) in v.entries() {
            let hashed_to = self.params.hash_bucket(k);
            if hashed_to != bucket {
                return Err(in_bucket(
                    bucket,
                    SketchError::Decode(DecodeError::KeyInWrongBucket {
                        key: k.to_string(),
                        hashed_to,
                    }),
                ));
            }
        }
        Ok(v.into_entries())
    }

    /// Merges the buckets' entries (distinct keys: each key hashes to one
    /// bucket) sorted by key, and checks the counts against the policy over
    /// the whole aggregate.
    pub(super) fn merge(
        &self,
        buckets: Vec<Vec<(BigUint, F::Elem)>>,
    ) -> SketchResult<SparseVector<BigUint, F::Elem>> {
        let mut entries: Vec<(BigUint, F::Elem)> = buckets.into_iter().flatten().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut total = BigUint::from(0u8);
        for (k, v) in &entries {
            self.params
                .bucket_params()
                .check_decoded_count(k, v, &mut total)?;
        }
        Ok(SparseVector::from_sorted(entries))
    }

    /// [`decode`](crate::LinearSketch::decode) one bucket after the other,
    /// whatever the features (the field's own algorithms may still use
    /// all cores): the same result, for a caller that parallelizes
    /// elsewhere.
    ///
    /// # Errors
    ///
    /// As [`decode`](crate::LinearSketch::decode).
    ///
    /// # Example
    ///
    /// ```
    /// use field::Mersenne61;
    /// use syndrome_agg::LinearSketch;
    /// use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
    ///
    /// let params = PartitionParams::new(100, 1000u32, [3; 32]).with_buckets(5).validate(Mersenne61)?;
    /// let s = PartitionedSketch::from_unsigned(&params, (1..=60u32).map(|k| (k, 2u64)))?;
    /// assert_eq!(s.decode_sequential()?, s.decode()?);
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    pub fn decode_sequential(&self) -> SketchResult<SparseVector<BigUint, F::Elem>> {
        let decoded = self
            .buckets()
            .enumerate()
            .map(|(b, s)| self.decode_bucket(b, s))
            .collect::<SketchResult<Vec<_>>>()?;
        self.merge(decoded)
    }
}
