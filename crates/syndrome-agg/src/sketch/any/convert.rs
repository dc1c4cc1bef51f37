//! Keys and counts as integers, for each concrete sketch: how
//! [`AnySketch`](crate::AnySketch) and its changes (`change.rs`) insert an
//! integer key and count, and read a decoded vector back as integers. A
//! leaf, so that both use one definition.

use field::{FiniteField, Fp64};
use num_bigint::{BigInt, BigUint};
use num_traits::Signed;

use crate::error::{ParamsError, SketchError, SketchResult};
use crate::params::CountPolicy;
use crate::sketch::LinearSketch;
use crate::sketch::field::Sketch;
use crate::sketch::integer::IntegerSketch;
use crate::sketch::partitioned::PartitionedSketch;
use crate::sketch::wide::WideSketch;
use crate::sparse::SparseVector;

/// A decoded field count as an integer, by the count policy: signed
/// policies give the centered representative, the others the canonical one.
fn field_count<F: FiniteField>(f: &F, policy: &CountPolicy, c: &F::Elem) -> BigInt {
    match policy {
        CountPolicy::Signed { .. } => f.to_centered(c),
        _ => BigInt::from(f.to_biguint(c)),
    }
}

/// Adds `count` (through the policy) at `key` in a field sketch.
pub(super) fn insert_field<F: FiniteField>(
    s: &mut Sketch<F>,
    key: &BigUint,
    count: BigInt,
) -> SketchResult<()> {
    let c = s.params().signed_count(count)?;
    s.insert(key, &c)
}

/// Adds `count` (through the policy) at `key`, as its little-endian bytes,
/// in a wide-key sketch.
pub(super) fn insert_wide(
    s: &mut WideSketch<Fp64>,
    key: &BigUint,
    count: BigInt,
) -> SketchResult<()> {
    let c = s.params().sketch_params().signed_count(count)?;
    s.insert_bytes(&key.to_bytes_le(), &c)
}

/// Adds a positive `count` at `key` in an integer sketch.
pub(super) fn insert_partitioned(
    s: &mut PartitionedSketch<Fp64>,
    key: &BigUint,
    count: BigInt,
) -> SketchResult<()> {
    let c = s.params().bucket_params().signed_count(count)?;
    s.insert(key, &c)
}

pub(super) fn insert_integer(
    s: &mut IntegerSketch,
    key: &BigUint,
    count: BigInt,
) -> SketchResult<()> {
    let c = count
        .to_biguint()
        .filter(|_| count.is_positive())
        .ok_or_else(|| {
            SketchError::Params(ParamsError::InvalidCount {
                count: count.to_string(),
                reason: "integer sketch counts are in [1, max_total]",
            })
        })?;
    s.insert(key, &c)
}

/// A field sketch's decoded vector with integer counts.
pub(super) fn decode_field<F: FiniteField>(
    s: &Sketch<F>,
) -> SketchResult<SparseVector<BigUint, BigInt>> {
    let f = s.field();
    let policy = s.params().counts();
    let v = s.decode()?;
    Ok(SparseVector::from_sorted(
        v.into_iter()
            .map(|(k, c)| (k, field_count(f, policy, &c)))
            .collect(),
    ))
}

/// A wide-key sketch's decoded vector, keys read back as little-endian
/// integers and sorted.
pub(super) fn decode_wide(s: &WideSketch<Fp64>) -> SketchResult<SparseVector<BigUint, BigInt>> {
    let p = s.params();
    let policy = p.sketch_params().counts();
    let mut out: Vec<(BigUint, BigInt)> = s
        .decode()?
        .into_iter()
        .map(|(k, c)| {
            (
                BigUint::from_bytes_le(&k),
                field_count(p.field(), policy, &c),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(SparseVector::from_sorted(out))
}

/// An integer sketch's decoded vector with signed counts.
pub(super) fn decode_partitioned(
    s: &PartitionedSketch<Fp64>,
) -> SketchResult<SparseVector<BigUint, BigInt>> {
    let f = s.field();
    let policy = s.params().bucket_params().counts();
    Ok(SparseVector::from_sorted(
        s.decode()?
            .into_iter()
            .map(|(k, c)| (k, field_count(f, policy, &c)))
            .collect(),
    ))
}

pub(super) fn decode_integer(s: &IntegerSketch) -> SketchResult<SparseVector<BigUint, BigInt>> {
    Ok(SparseVector::from_sorted(
        s.decode()?
            .into_iter()
            .map(|(k, c)| (k, BigInt::from(c)))
            .collect(),
    ))
}
