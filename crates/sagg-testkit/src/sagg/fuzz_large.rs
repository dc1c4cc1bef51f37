//! The fuzz body that reaches the decoders' fast paths
//! (docs/threat-model.md M6): a sketch large enough for the half-GCD
//! locator (above 2048 syndromes), the remainder-tree Vandermonde solve
//! (above `FAST_SOLVE_THRESHOLD` keys) and Graeffe root finding, built
//! from a few fuzz bytes and then corrupted by the rest.
//!
//! The small bodies of [`super::fuzz`] draw every syndrome from the input,
//! so their sketches stay below those thresholds; here the input chooses
//! the shape, a seed for the keys and counts, and where to corrupt.

use field::{Field, Fp64, Mont64};
use num_bigint::BigUint;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
use syndrome_agg::{CountPolicy, LinearSketch, RawSketch, Sketch, SketchParams, SparseVector};

use super::fuzz::Bytes;

/// Capacities: the half-GCD with Horner's solve, the half-GCD with the
/// remainder tree, and a partitioned sketch of two buckets of about 2300
/// (each bucket on the half-GCD).
const SHAPES: [(usize, bool); 3] = [(1100, false), (1600, false), (4000, true)];

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
    let (t, partitioned) = SHAPES[usize::from(head) % SHAPES.len()];
    let r = usize::from(head / 4 % 3);
    let over = b.byte();
    let m = match over % 4 {
        0 => t - usize::from(over / 4) % (t / 2),
        1 | 2 => t,
        _ => t + 1 + usize::from(over / 4) % (r + 1),
    };
    let mut rng = ChaCha8Rng::seed_from_u64(b.u64());
    let f = Fp64::proth();
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
    if partitioned {
        let Ok(params) = PartitionParams::new(t, domain, [head; 32])
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
