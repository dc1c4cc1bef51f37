//! Client encode, masking and server decode of syndrome sketches, the
//! Appendix K integer decoder, and the wide-key mode.
//!
//! `cargo bench -p syndrome-agg --bench syndrome_agg`
//!
//! Capacities are the paper's: t = 400 (K = 4, L = 100), t = 1000 and
//! t = 6200 (K = 62, L = 100). A client holds K = t / 100 keys; the server's
//! sum holds m = t keys, random in a large domain (2^60 for GF(2^61 - 1),
//! 2^126 for GF(2^127 - 1)).
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Duration;
use syndrome_agg::LinearSketch;

use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};
use field::{FiniteField, Mersenne61, Mersenne127};
use num_bigint::{BigRng010, BigUint};
use rand::RngExt;
use syndrome_agg::masking::pairwise::{MaskKeyPair, RoundContext, SessionId, peer_mask_terms};
use syndrome_agg::wide::{WideKeyParams, WideSketch};
use syndrome_agg::{IntegerParams, IntegerSketch, Sketch, SketchParams, ValidSketchParams};

const CAPACITIES: [usize; 3] = [400, 1000, 6200];

fn params<F: FiniteField>(f: F, t: usize, domain_bits: u32) -> ValidSketchParams<F> {
    SketchParams::new(t, BigUint::from(1u8) << domain_bits)
        .validate(f)
        .unwrap()
}

fn random_entries<F: FiniteField>(
    f: &F,
    n: usize,
    domain_bits: u32,
    label: &str,
) -> Vec<(BigUint, F::Elem)> {
    let mut rng = testdata::rng(label);
    (0..n)
        .map(|_| {
            let k = rng.random_biguint(u64::from(domain_bits)) + 1u32;
            (k, f.from_u64(rng.random_range(1..1000u64)))
        })
        .collect()
}

fn sketch_benches<F: FiniteField>(c: &mut Criterion, f: F, name: &str, domain_bits: u32) {
    let mut g = c.benchmark_group(format!("syndrome-agg/{name}"));
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    let ctx = RoundContext {
        session: SessionId([1; 32]),
        round: 0,
    };
    for t in CAPACITIES {
        let p = params(f.clone(), t, domain_bits);
        let client = random_entries(&f, t / 100, domain_bits, "client");
        g.bench_with_input(BenchmarkId::new("encode", t), &t, |b, _| {
            b.iter(|| Sketch::encode(&p, black_box(client.clone())).unwrap());
        });
        let mut rng = testdata::rng("keys");
        let me = MaskKeyPair::generate(&mut rng);
        let peer = [(2u64, MaskKeyPair::generate(&mut rng).public_key())];
        g.bench_with_input(BenchmarkId::new("mask-per-peer", t), &t, |b, _| {
            b.iter(|| {
                peer_mask_terms(&f, p.num_syndromes(), &me, 1, black_box(&peer), &ctx).unwrap()
            });
        });
        let sum = Sketch::encode(&p, random_entries(&f, t, domain_bits, "server")).unwrap();
        assert_eq!(sum.decode().unwrap().len(), t);
        let (samples, secs) = if t > 1000 { (10, 60) } else { (10, 5) };
        g.sample_size(samples)
            .measurement_time(Duration::from_secs(secs));
        g.bench_with_input(BenchmarkId::new("decode", t), &t, |b, _| {
            b.iter(|| black_box(&sum).decode().unwrap());
        });
        g.sample_size(10).measurement_time(Duration::from_secs(3));
    }
    g.finish();
}

fn field_sketches(c: &mut Criterion) {
    sketch_benches(c, Mersenne61, "mersenne61", 60);
    sketch_benches(c, Mersenne127, "mersenne127", 126);
}

fn integer_decoder(c: &mut Criterion) {
    let mut g = c.benchmark_group("syndrome-agg/integer");
    g.sample_size(10).measurement_time(Duration::from_secs(3));
    for t in [2usize, 4, 8, 16] {
        let p = IntegerParams::new(t, 1_000_000u32, 1_000_000u32)
            .validate()
            .unwrap();
        let mut rng = testdata::rng("integer");
        let entries: Vec<(u64, u64)> = (0..t)
            .map(|_| {
                (
                    rng.random_range(1..=1_000_000u64),
                    rng.random_range(1..100u64),
                )
            })
            .collect();
        let s = IntegerSketch::from_unsigned(&p, entries).unwrap();
        assert!(s.decode().is_ok());
        g.bench_with_input(BenchmarkId::new("decode", t), &t, |b, _| {
            b.iter(|| black_box(&s).decode().unwrap());
        });
    }
    g.finish();
}

fn wide_keys(c: &mut Criterion) {
    let mut g = c.benchmark_group("syndrome-agg/wide-mersenne61");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    // 64-byte keys (512-bit bins), t = 400: c = ceil(66 / 7) = 10 channels.
    let t = 400;
    let p = WideKeyParams::new(t, 64, [9; 32])
        .validate(Mersenne61)
        .unwrap();
    let mut rng = testdata::rng("wide");
    let keys: Vec<Vec<u8>> = (0..t)
        .map(|_| (0..64).map(|_| rng.random_range(0..=255u8)).collect())
        .collect();
    let client: Vec<(&[u8], u64)> = keys[..4].iter().map(|k| (&k[..], 3u64)).collect();
    g.bench_function(BenchmarkId::new("encode-4-keys", t), |b| {
        b.iter(|| WideSketch::from_unsigned(&p, black_box(client.clone())).unwrap());
    });
    let sum = WideSketch::from_unsigned(&p, keys.iter().map(|k| (&k[..], 1u64))).unwrap();
    assert_eq!(sum.decode().unwrap().len(), t);
    g.bench_function(BenchmarkId::new("decode", t), |b| {
        b.iter_batched(
            || sum.clone(),
            |s| s.decode().unwrap(),
            BatchSize::LargeInput,
        );
    });
    g.finish();
}

criterion_group!(benches, field_sketches, integer_decoder, wide_keys);
criterion_main!(benches);
