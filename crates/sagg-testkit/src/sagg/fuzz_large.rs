//! The fuzz body that reaches the decoders' fast paths
//! (docs/threat-model.md M6): a sketch large enough for the half-GCD
//! locator ([`Field::half_gcd_threshold`] syndromes and more), the
//! remainder-tree Vandermonde solve (above
//! [`Field::remainder_tree_threshold`] keys) and Graeffe root finding,
//! built from a few fuzz bytes and then corrupted by the rest.
//!
//! The small bodies of [`super::fuzz`] draw every syndrome from the input,
//! so their sketches stay below those thresholds; here the input chooses
//! the shape, a seed for the keys and counts, and where to corrupt. The
//! shapes follow the decoder field's thresholds ([`shapes`]), so a
//! threshold that moves moves the sketches with it: each is just large
//! enough for its path, which keeps an execution as cheap as the paths
//! allow.

use field::{Field, Fp64, Mont64};
use num_bigint::BigUint;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
use syndrome_agg::{CountPolicy, LinearSketch, RawSketch, Sketch, SketchParams, SparseVector};

use super::fuzz::Bytes;

/// One sketch shape of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The capacity `t` (of the whole aggregate when partitioned).
    pub capacity: usize,
    /// `Some(G)`: a partitioned sketch of `G` buckets.
    pub buckets: Option<usize>,
}

/// The target's shapes over `f`, from its thresholds: `h` =
/// [`Field::half_gcd_threshold`] syndromes, `k` =
/// [`Field::remainder_tree_threshold`] keys.
///
/// 1. capacity `h / 2`: `2t + r >= h`, so the half-GCD locator, with the
///    solve by Horner's rule while at most `k` keys are present;
/// 2. capacity `max(h / 2, k) + 64`: the half-GCD with the remainder-tree
///    solve when more than `k` keys are present;
/// 3. a partitioned sketch of two buckets and capacity `h`: each bucket's
///    capacity is above `h / 2`, so each bucket is on the half-GCD.
pub fn shapes(f: &Fp64) -> [Shape; 3] {
    let h = f.half_gcd_threshold();
    let k = f.remainder_tree_threshold();
    [
        Shape {
            capacity: h / 2,
            buckets: None,
        },
        Shape {
            capacity: (h / 2).max(k) + 64,
            buckets: None,
        },
        Shape {
            capacity: h,
            buckets: Some(2),
        },
    ]
}

/// At most this many corrupted elements.
const MAX_CORRUPT: usize = 8;

/// The body: byte 0 picks the shape and `r`, byte 1 how many keys
/// relative to `t` (under, exactly `t`, or up to `r + 1` over), 8 bytes
/// seed the keys and counts, and each further 10 bytes corrupt one element
/// (a 2-byte index, an 8-byte addend). Checks: an uncorrupted sum of at
/// most `t` keys decodes to exactly itself; one of `t < m <= t + r` keys
/// is an error; whatever decodes re-encodes to exactly the received
/// elements.
pub fn large_decode(data: &[u8]) {
    let mut b = Bytes(data);
    let head = b.byte();
    let f = Fp64::proth();
    let shapes = shapes(&f);
    let shape = shapes[usize::from(head) % shapes.len()];
    let t = shape.capacity;
    let r = usize::from(head / 4 % 3);
    let over = b.byte();
    let m = match over % 4 {
        0 => t - usize::from(over / 4) % (t / 2),
        1 | 2 => t,
        _ => t + 1 + usize::from(over / 4) % (r + 1),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(b.u64());
    let domain = BigUint::from(1u64 << 40);
    let mut keys = std::collections::BTreeSet::new();
    while keys.len() < m {
        keys.insert(rng.random_range(1..=1u64 << 40));
    }
    let entries: Vec<(BigUint, u64)> = keys
        .into_iter()
        .map(|k| (BigUint::from(k), rng.random_range(1..=100u64)))
        .collect();
    let mut corrupt = Vec::new();
    while !b.is_empty() && corrupt.len() < MAX_CORRUPT {
        let i = usize::from(b.byte()) | usize::from(b.byte()) << 8;
        corrupt.push((i, f.from_u64(b.u64())));
    }
    let counts = CountPolicy::unsigned(100 * m as u64);
    if let Some(buckets) = shape.buckets {
        let Ok(params) = PartitionParams::new(t, domain, [head; 32])
            .with_buckets(buckets)
            .with_extra(r)
            .with_counts(counts)
            .validate(f)
        else {
            return;
        };
        let mut s = PartitionedSketch::from_unsigned(&params, entries.clone()).unwrap();
        let fits = {
            let mut loads = vec![0usize; params.buckets()];
            for (k, _) in &entries {
                loads[params.bucket_of(k).unwrap()] += 1;
            }
            loads.iter().all(|&l| l <= params.bucket_capacity())
        };
        let changed = apply(&f, &mut s, &corrupt, |p, e| {
            PartitionedSketch::from_elements(p, e)
        });
        let reencode = |v: SparseVector<BigUint, _>| {
            let mut re = PartitionedSketch::new(&params);
            re.insert_many(&v.into_entries()).unwrap();
            re
        };
        check(&f, &s, &entries, !changed && fits, reencode);
    } else {
        let Ok(params) = SketchParams::new(t, domain)
            .with_extra(r)
            .with_counts(counts)
            .validate(f)
        else {
            return;
        };
        let mut s = Sketch::from_unsigned(&params, entries.clone()).unwrap();
        let changed = apply(&f, &mut s, &corrupt, Sketch::from_elements);
        let reencode = |v: SparseVector<BigUint, _>| {
            let mut re = Sketch::new(&params);
            re.insert_many(&v.into_entries()).unwrap();
            re
        };
        if !changed && t < m {
            assert!(m <= t + r + 1);
            if m <= t + r {
                assert!(s.decode().is_err(), "t < m <= t + r keys must be refused");
            }
        }
        check(&f, &s, &entries, !changed && m <= t, reencode);
    }
}

/// Adds the corruptions (indices modulo the length) and rebuilds the
/// sketch; whether any element changed.
fn apply<S: RawSketch<Elem = Mont64>>(
    f: &Fp64,
    s: &mut S,
    corrupt: &[(usize, Mont64)],
    rebuild: impl Fn(&S::Params, Vec<Mont64>) -> syndrome_agg::SketchResult<S>,
) -> bool {
    if corrupt.is_empty() {
        return false;
    }
    let mut e = s.elements().to_vec();
    let before = e.clone();
    for (i, d) in corrupt {
        let n = e.len();
        f.add_assign(&mut e[i % n], d);
    }
    let changed = e != before;
    *s = rebuild(s.params(), e).unwrap();
    changed
}

/// The contract on one sketch: `exact` (uncorrupted, within capacity)
/// decodes to the entries; anything accepted re-encodes to the received
/// elements.
fn check<S>(
    f: &Fp64,
    s: &S,
    entries: &[(BigUint, u64)],
    exact: bool,
    reencode: impl Fn(SparseVector<BigUint, Mont64>) -> S,
) where
    S: RawSketch<Key = BigUint, Count = Mont64, Elem = Mont64>,
{
    match s.decode() {
        Ok(v) => {
            if exact {
                let want: Vec<(BigUint, Mont64)> = entries
                    .iter()
                    .map(|(k, c)| (k.clone(), f.from_u64(*c)))
                    .collect();
                assert_eq!(v.clone().into_entries(), want, "the exact sum");
            }
            assert_eq!(
                reencode(v).elements(),
                s.elements(),
                "an accepted decode must re-encode"
            );
        }
        Err(e) => assert!(!exact, "a sum within capacity failed: {e}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each shape reaches the path its doc names, at the thresholds the
    /// decoder's field has now (a threshold that moves past a shape fails
    /// here, not silently in the campaign).
    #[test]
    fn shapes_reach_the_fast_paths() {
        let f = Fp64::proth();
        let (h, k) = (f.half_gcd_threshold(), f.remainder_tree_threshold());
        let [horner, tree, parts] = shapes(&f);
        assert!(2 * horner.capacity >= h && horner.capacity <= k);
        assert!(2 * tree.capacity >= h && tree.capacity > k);
        let params = PartitionParams::new(parts.capacity, 1u64 << 40, [0; 32])
            .with_buckets(parts.buckets.unwrap())
            .with_extra(0)
            .validate(f)
            .unwrap();
        assert_eq!(params.buckets(), 2);
        assert!(2 * params.bucket_capacity() >= h);
    }
}
