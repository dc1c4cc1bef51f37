//! Partitioned sketches (issue 13, item 3) over GF(2^61 - 1) and
//! GF(27 * 2^59 + 1): round trips, agreement with the plain sketch, a
//! bucket over capacity named by a typed error, garbage never misdecoded
//! (docs/threat-model.md §3), a crafted key in the wrong bucket refused,
//! deltas touching only their buckets, and the parallel decode equal to the
//! sequential one. Also run without default features:
//! `cargo test -p syndrome-agg --no-default-features --test integration partitioned`.
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};

use field::{FiniteField, Fp64, Mersenne61};
use num_bigint::BigUint;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use syndrome_agg::RawSketch;
use syndrome_agg::masking::deal_zero_sum_masks;
use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
use syndrome_agg::partitioned::{
    PartitionParams, PartitionedSketch, ValidPartitionParams, bucket_capacity, default_buckets,
    overflow_log2,
};
use syndrome_agg::{
    Aggregator, CountPolicy, DecodeError, LinearParams, LinearSketch, ParamsError, Sketch,
    SketchError, SketchParams, SketchResult, SparseVector,
};

const DOMAIN: u64 = 1 << 40;

type Decoded<F> = SketchResult<SparseVector<BigUint, <F as field::Field>::Elem>>;

fn params<F: FiniteField>(f: &F, t: usize, g: usize, key: u8) -> ValidPartitionParams<F> {
    PartitionParams::new(t, DOMAIN, [key; 32])
        .with_buckets(g)
        .validate(f.clone())
        .unwrap()
}

/// `n` distinct random keys in `[1, DOMAIN]`.
fn random_keys(rng: &mut ChaCha8Rng, n: usize) -> Vec<u64> {
    let mut keys = BTreeSet::new();
    while keys.len() < n {
        keys.insert(rng.random_range(1..=DOMAIN));
    }
    keys.into_iter().collect()
}

/// The first `n` keys (from 1 up) that hash to `bucket`.
fn keys_in_bucket<F: FiniteField>(
    p: &ValidPartitionParams<F>,
    bucket: usize,
    n: usize,
) -> Vec<u64> {
    (1..)
        .filter(|k: &u64| p.bucket_of(&BigUint::from(*k)).unwrap() == bucket)
        .take(n)
        .collect()
}

/// Decodes both ways, checks they agree, returns the result.
fn decode_both<F: FiniteField>(s: &PartitionedSketch<F>) -> Decoded<F> {
    let a = s.decode();
    assert_eq!(
        a,
        s.decode_sequential(),
        "parallel and sequential decodes differ"
    );
    a
}

/// The bucket an error names, if it is a bucket error.
fn failing_bucket(e: &SketchError) -> Option<(usize, &DecodeError)> {
    match e {
        SketchError::Decode(DecodeError::Bucket { bucket, error }) => Some((*bucket, &**error)),
        _ => None,
    }
}

fn round_trips<F: FiniteField>(f: &F, label: &str, cases: u32) {
    let mut rng = testdata::rng(label);
    for _ in 0..testdata::cases(cases) {
        let t = rng.random_range(1..=160usize);
        let g = rng.random_range(1..=8usize);
        let p = params(f, t, g, rng.random_range(0..=255u8));
        let n = rng.random_range(0..=t);
        let keys = random_keys(&mut rng, n);
        let entries: Vec<(u64, u64)> = keys
            .iter()
            .map(|&k| (k, rng.random_range(1..=1000u64)))
            .collect();
        let s = PartitionedSketch::from_unsigned(&p, entries.iter().copied()).unwrap();
        // insert_many agrees with one insert at a time.
        let mut one = PartitionedSketch::new(&p);
        for &(k, c) in &entries {
            one.insert(&k.into(), &p.bucket_params().unsigned_count(c).unwrap())
                .unwrap();
        }
        assert_eq!(one, s);
        let expected: Vec<(BigUint, BigUint)> =
            entries.iter().map(|&(k, c)| (k.into(), c.into())).collect();
        let decoded = decode_both(&s).unwrap();
        assert_eq!(decoded.to_unsigned(f), expected);
        // The plain sketch of capacity t decodes the same vector.
        let plain_params = SketchParams::new(t, DOMAIN).validate(f.clone()).unwrap();
        let plain = Sketch::from_unsigned(&plain_params, entries.iter().copied()).unwrap();
        assert_eq!(plain.decode().unwrap(), decoded);
        // Touched buckets are those of the keys.
        let buckets: BTreeSet<usize> = keys
            .iter()
            .map(|&k| p.bucket_of(&k.into()).unwrap())
            .collect();
        assert_eq!(s.touched_buckets(), buckets.into_iter().collect::<Vec<_>>());
        // Elements round trip.
        let back = PartitionedSketch::from_elements(&p, s.elements().to_vec()).unwrap();
        assert_eq!(back, s);
    }
}

#[test]
fn round_trips_mersenne61() {
    round_trips(&Mersenne61, "partitioned/round-trip/m61", 24);
}

#[test]
fn round_trips_proth() {
    round_trips(&Fp64::proth(), "partitioned/round-trip/proth", 24);
}

fn sums_of_clients<F: FiniteField>(f: &F, label: &str) {
    let mut rng = testdata::rng(label);
    let p = params(f, 300, 6, 1);
    let ctx = RoundContext {
        session: SessionId([2; 32]),
        round: 0,
    };
    let clients = 3;
    let masks = deal_zero_sum_masks(f, clients, p.num_elements(), &mut rng);
    let mut server = Aggregator::new(&p, ctx, clients);
    let mut all = Vec::new();
    for (id, mask) in masks.iter().enumerate() {
        let entries: Vec<(u64, i64)> = random_keys(&mut rng, 60)
            .into_iter()
            .map(|k| (k % 200 + 1, rng.random_range(-50..=50i64)))
            .collect();
        let s = PartitionedSketch::from_signed(&p, entries.iter().copied()).unwrap();
        all.extend(entries.iter().map(|&(k, c)| (k, f.from_i64(c))));
        let id = u64::try_from(id).unwrap() + 1;
        server.accept(&s.mask(mask, id, ctx).unwrap()).unwrap();
    }
    let expected = SparseVector::<BigUint, _>::from_sum(f, all);
    assert_eq!(server.decode().unwrap(), expected);
}

#[test]
fn masked_sums_of_clients() {
    sums_of_clients(&Mersenne61, "partitioned/clients/m61");
    sums_of_clients(&Fp64::proth(), "partitioned/clients/proth");
}

fn overflowing_bucket<F: FiniteField>(f: &F) {
    let p = PartitionParams::new(60, DOMAIN, [3; 32])
        .with_buckets(3)
        .with_extra(2)
        .with_overflow_exponent(20)
        .validate(f.clone())
        .unwrap();
    let tb = p.bucket_capacity();
    assert!(tb < 60, "t_b = {tb}");
    for bucket in 0..3 {
        // A few keys in every other bucket, decodable on their own.
        let others: Vec<u64> = (0..3)
            .filter(|&b| b != bucket)
            .flat_map(|b| keys_in_bucket(&p, b, 5))
            .collect();
        let base = PartitionedSketch::from_unsigned(&p, others.iter().map(|&k| (k, 2u64))).unwrap();
        assert_eq!(decode_both(&base).unwrap().len(), 10);
        // t_b + 1 ..= t_b + r keys: always TooManyKeys; more: some
        // rejection, always naming the bucket.
        for over in 1..=6 {
            let keys = keys_in_bucket(&p, bucket, tb + over);
            let mut s = base.clone();
            s.add(&PartitionedSketch::from_unsigned(&p, keys.iter().map(|&k| (k, 1u64))).unwrap())
                .unwrap();
            let e = decode_both(&s).unwrap_err();
            let (b, inner) = failing_bucket(&e).unwrap_or_else(|| panic!("{e:?}"));
            assert_eq!(b, bucket, "{e}");
            if over <= 2 {
                assert!(matches!(inner, DecodeError::TooManyKeys { .. }), "{e}");
            }
            assert_eq!(s.touched_buckets(), vec![0, 1, 2]);
        }
    }
    // With two overflowing buckets the lowest is named.
    let mut s = PartitionedSketch::new(&p);
    for b in [2, 1] {
        let keys = keys_in_bucket(&p, b, tb + 1);
        s.add(&PartitionedSketch::from_unsigned(&p, keys.iter().map(|&k| (k, 1u64))).unwrap())
            .unwrap();
    }
    assert_eq!(failing_bucket(&decode_both(&s).unwrap_err()).unwrap().0, 1);
}

#[test]
fn an_overflowing_bucket_is_a_typed_error_naming_it() {
    overflowing_bucket(&Mersenne61);
    overflowing_bucket(&Fp64::proth());
}

/// `Ok` only for elements that re-encode exactly.
fn check_never_wrong<F: FiniteField>(p: &ValidPartitionParams<F>, elements: Vec<F::Elem>) -> bool {
    let s = PartitionedSketch::from_elements(p, elements).unwrap();
    match decode_both(&s) {
        Ok(v) => {
            let re = PartitionedSketch::encode(p, v.into_entries()).unwrap();
            assert_eq!(re.elements(), s.elements(), "an Ok that does not re-encode");
            true
        }
        Err(e) => {
            assert!(failing_bucket(&e).is_some(), "{e:?}");
            false
        }
    }
}

fn garbage<F: FiniteField>(f: &F, label: &str, cases: u32) {
    let mut rng = testdata::rng(label);
    for _ in 0..testdata::cases(cases) {
        let t = rng.random_range(1..=40usize);
        let g = rng.random_range(1..=5usize);
        let p = params(f, t, g, 7);
        // All random.
        let all: Vec<F::Elem> = (0..p.num_elements()).map(|_| f.random(&mut rng)).collect();
        assert!(!check_never_wrong(&p, all));
        // A valid sketch with one bucket replaced by garbage.
        let keys = random_keys(&mut rng, t / 2);
        let s = PartitionedSketch::from_unsigned(&p, keys.iter().map(|&k| (k, 1u64))).unwrap();
        let bad = rng.random_range(0..g);
        let len = p.bucket_len();
        let mut elements = s.into_elements();
        for e in &mut elements[bad * len..(bad + 1) * len] {
            *e = f.random(&mut rng);
        }
        let s = PartitionedSketch::from_elements(&p, elements.clone()).unwrap();
        let e = decode_both(&s).unwrap_err();
        assert_eq!(failing_bucket(&e).unwrap().0, bad, "{e}");
        // Small perturbations of a valid sketch: one element changed.
        let keys = random_keys(&mut rng, t);
        let s = PartitionedSketch::from_unsigned(&p, keys.iter().map(|&k| (k, 3u64))).unwrap();
        let mut elements = s.into_elements();
        let i = rng.random_range(0..elements.len());
        elements[i] = f.add(&elements[i], &f.one());
        check_never_wrong(&p, elements);
    }
}

#[test]
fn garbage_never_misdecodes_mersenne61() {
    garbage(&Mersenne61, "partitioned/garbage/m61", 32);
}

#[test]
fn garbage_never_misdecodes_proth() {
    garbage(&Fp64::proth(), "partitioned/garbage/proth", 32);
}

fn wrong_bucket<F: FiniteField>(f: &F) {
    let p = params(f, 40, 4, 11);
    let key = keys_in_bucket(&p, 2, 1)[0];
    // A valid bucket sketch of `key`, placed in bucket 0.
    let plain = Sketch::from_unsigned(p.bucket_params(), [(key, 5u64)]).unwrap();
    let mut elements = vec![f.zero(); p.num_elements()];
    elements[..p.bucket_len()].clone_from_slice(&plain.elements());
    let s = PartitionedSketch::from_elements(&p, elements).unwrap();
    let e = decode_both(&s).unwrap_err();
    assert!(
        matches!(
            failing_bucket(&e),
            Some((0, DecodeError::KeyInWrongBucket { hashed_to: 2, .. }))
        ),
        "{e:?}"
    );
    // In its own bucket it decodes.
    let mut elements = vec![f.zero(); p.num_elements()];
    elements[2 * p.bucket_len()..3 * p.bucket_len()].clone_from_slice(&plain.elements());
    let s = PartitionedSketch::from_elements(&p, elements).unwrap();
    assert_eq!(
        decode_both(&s).unwrap().to_unsigned(f),
        vec![(key.into(), 5u32.into())]
    );
}

#[test]
fn a_key_in_the_wrong_bucket_is_refused() {
    wrong_bucket(&Mersenne61);
    wrong_bucket(&Fp64::proth());
}

fn deltas<F: FiniteField>(f: &F, label: &str, cases: u32) {
    let mut rng = testdata::rng(label);
    for _ in 0..testdata::cases(cases) {
        let p = params(f, 400, 16, 5);
        let keys = random_keys(&mut rng, 300);
        let before: BTreeMap<u64, u64> = keys.iter().map(|&k| (k, 10)).collect();
        let old =
            PartitionedSketch::from_unsigned(&p, before.iter().map(|(&k, &c)| (k, c))).unwrap();
        // Change a few keys: remove some, add some, change some counts.
        let mut after = before.clone();
        let mut changed = BTreeSet::new();
        for _ in 0..rng.random_range(1..=4) {
            let k = keys[rng.random_range(0..keys.len())];
            after.remove(&k);
            changed.insert(k);
        }
        for _ in 0..rng.random_range(0..=3) {
            let k = rng.random_range(1..=DOMAIN);
            *after.entry(k).or_insert(0) += 7;
            changed.insert(k);
        }
        let new =
            PartitionedSketch::from_unsigned(&p, after.iter().map(|(&k, &c)| (k, c))).unwrap();
        let mut delta = new.clone();
        delta.subtract(&old).unwrap();
        let buckets: BTreeSet<usize> = changed
            .iter()
            .map(|&k| p.bucket_of(&k.into()).unwrap())
            .collect();
        assert_eq!(
            delta.touched_buckets(),
            buckets.iter().copied().collect::<Vec<_>>()
        );
        for b in 0..p.buckets() {
            let zero = delta
                .bucket_elements(b)
                .unwrap()
                .iter()
                .all(|x| f.is_zero(x));
            assert_eq!(zero, !buckets.contains(&b));
        }
        // The delta decodes to the change, and old + delta is new.
        let change = SparseVector::<BigUint, _>::from_sum(
            f,
            after.iter().map(|(&k, &c)| (k, f.from_u64(c))).chain(
                before
                    .iter()
                    .map(|(&k, &c)| (k, f.from_i64(-i64::try_from(c).unwrap()))),
            ),
        );
        assert_eq!(decode_both(&delta).unwrap(), change);
        let mut sum = old.clone();
        sum.add(&delta).unwrap();
        assert_eq!(sum, new);
    }
}

#[test]
fn a_delta_touches_only_its_buckets() {
    deltas(&Mersenne61, "partitioned/delta/m61", 12);
    deltas(&Fp64::proth(), "partitioned/delta/proth", 12);
}

#[test]
fn the_bound_and_its_numbers() {
    // The table of the module docs (lambda = 30, r = 1, default G).
    for (t, g, tb) in [
        (10_000, 5, 2306),
        (100_000, 50, 2322),
        (1_000_000, 500, 2337),
    ] {
        assert_eq!(default_buckets(t), g);
        assert_eq!(bucket_capacity(t, g, 30), tb, "t = {t}");
        assert!(overflow_log2(t, g, tb) <= -30.0);
        assert!(overflow_log2(t, g, tb - 1) > -30.0);
        let p = PartitionParams::new(t, DOMAIN, [0; 32])
            .validate(Mersenne61)
            .unwrap();
        assert_eq!((p.buckets(), p.bucket_capacity()), (g, tb));
        assert_eq!(p.num_elements(), g * (2 * tb + 1));
        println!(
            "t = {t}: G = {g}, t_b = {tb}, G (2 t_b + 1) = {}, 2t + 1 = {}, ratio {:.4}, bound 2^{:.2}",
            p.num_elements(),
            2 * t + 1,
            p.num_elements() as f64 / (2 * t + 1) as f64,
            p.overflow_log2()
        );
    }
    // The bound holds empirically where it is weak: lambda = 4 at
    // mu = 20 (G = 10, t = 200); overflows must be rarer than 1/16.
    let (t, g) = (200, 10);
    let tb = bucket_capacity(t, g, 4);
    let mut rng = testdata::rng("partitioned/bound");
    let trials = 2000;
    let overflows = (0..trials)
        .filter(|_| {
            let mut load = vec![0usize; g];
            for _ in 0..t {
                load[rng.random_range(0..g)] += 1;
            }
            load.into_iter().any(|l| l > tb)
        })
        .count();
    assert!(
        overflows * 16 <= trials,
        "{overflows} of {trials} overflow t_b = {tb}"
    );
}

#[test]
fn parameters_are_checked() {
    let f = Mersenne61;
    let invalid = |p: PartitionParams| {
        matches!(
            p.validate(f).unwrap_err(),
            SketchError::Params(ParamsError::InvalidParams { .. })
        )
    };
    assert!(invalid(PartitionParams::new(0, DOMAIN, [0; 32])));
    assert!(invalid(
        PartitionParams::new(10, DOMAIN, [0; 32]).with_buckets(0)
    ));
    assert!(invalid(PartitionParams::new(10, 0u32, [0; 32])));
    assert!(invalid(
        PartitionParams::new(10, DOMAIN, [0; 32]).with_overflow_exponent(0)
    ));
    assert!(invalid(
        PartitionParams::new(10, DOMAIN, [0; 32]).with_overflow_exponent(257)
    ));
    assert!(invalid(
        PartitionParams::new(10_000, DOMAIN, [0; 32]).with_max_elements(20_000)
    ));
    assert!(matches!(
        PartitionParams::new(10, BigUint::from(1u8) << 62u32, [0; 32]).validate(f),
        Err(SketchError::Params(ParamsError::FieldTooSmall { .. }))
    ));
    // Parameters that differ only in the hash key do not mix.
    let a = params(&f, 100, 4, 1);
    let b = params(&f, 100, 4, 2);
    let mut s = PartitionedSketch::new(&a);
    assert!(s.add(&PartitionedSketch::new(&b)).is_err());
    assert!(PartitionedSketch::from_elements(&a, vec![0; a.num_elements() - 1]).is_err());
    assert!(a.bucket_of(&BigUint::from(DOMAIN + 1)).is_err());
    // A key out of the domain changes nothing.
    let mut s = PartitionedSketch::from_unsigned(&a, [(5u64, 1u64)]).unwrap();
    let before = s.clone();
    assert!(
        s.insert_many(&[(3u32.into(), 1), (0u32.into(), 1)])
            .is_err()
    );
    assert_eq!(s, before);
    // One bucket: the plain sketch's capacity.
    let one = PartitionParams::new(1000, DOMAIN, [0; 32])
        .validate(f)
        .unwrap();
    assert_eq!((one.buckets(), one.bucket_capacity()), (1, 1000));
}

#[test]
fn frames_round_trip_and_are_not_plain_sketch_frames() {
    let f = Mersenne61;
    let p = params(&f, 100, 4, 1);
    let ctx = RoundContext {
        session: SessionId([1; 32]),
        round: 2,
    };
    let s = PartitionedSketch::from_unsigned(&p, [(9u64, 4u64), (1 << 30, 1)]).unwrap();
    let frame = s.to_frame(3, &ctx);
    assert_eq!(PartitionedSketch::from_frame(&frame, &p).unwrap(), s);
    // A plain sketch of capacity t_b does not read it, nor it a plain frame.
    let plain = SketchParams::new(p.bucket_capacity(), DOMAIN)
        .validate(f)
        .unwrap();
    assert!(Sketch::from_frame(&frame, &plain).is_err());
    let plain_frame = Sketch::new(&plain).to_frame(3, &ctx);
    assert!(PartitionedSketch::from_frame(&plain_frame, &p).is_err());
    // Other bucket counts do not read it either.
    assert!(PartitionedSketch::from_frame(&frame, &params(&f, 100, 5, 1)).is_err());
}

#[test]
fn the_count_policy_holds_over_the_whole_aggregate() {
    let p = PartitionParams::new(40, DOMAIN, [6; 32])
        .with_buckets(2)
        .with_counts(CountPolicy::unsigned(10u32))
        .validate(Mersenne61)
        .unwrap();
    let a = keys_in_bucket(&p, 0, 1)[0];
    let b = keys_in_bucket(&p, 1, 1)[0];
    let s = PartitionedSketch::from_unsigned(&p, [(a, 5), (b, 5)]).unwrap();
    assert_eq!(decode_both(&s).unwrap().len(), 2);
    // Each bucket's total (6) is within the policy, the aggregate's (12)
    // is not.
    let s = PartitionedSketch::from_unsigned(&p, [(a, 6), (b, 6)]).unwrap();
    assert!(matches!(
        decode_both(&s),
        Err(SketchError::Decode(DecodeError::CountOutOfRange { .. }))
    ));
}
