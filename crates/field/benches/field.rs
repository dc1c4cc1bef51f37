//! Field arithmetic: the specialised Mersenne types against the same primes
//! derived by `ff`, the run-time `Fp64`, and `BigPrime`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use field::{BigPrime, FfMersenne61, FfMersenne127, FiniteField, Fp64, Mersenne61, Mersenne127};
use testdata::known_primes;

const N: usize = 1024;

fn bench_one<F: FiniteField>(c: &mut Criterion, name: &str, f: &F) {
    let mut rng = testdata::rng("bench-field");
    let a: Vec<F::Elem> = (0..N).map(|_| f.random(&mut rng)).collect();
    let b: Vec<F::Elem> = (0..N).map(|_| f.random(&mut rng)).collect();
    let mut g = c.benchmark_group("field");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_with_input(BenchmarkId::new("mul", name), &(), |bench, ()| {
        bench.iter(|| {
            let mut acc = f.one();
            for (x, y) in a.iter().zip(&b) {
                acc = f.add(&acc, &f.mul(x, y));
            }
            black_box(acc)
        });
    });
    g.bench_with_input(BenchmarkId::new("dot", name), &(), |bench, ()| {
        bench.iter(|| black_box(f.dot(black_box(&a), black_box(&b))));
    });
    g.throughput(Throughput::Elements(1));
    g.bench_with_input(BenchmarkId::new("inv", name), &(), |bench, ()| {
        bench.iter(|| black_box(f.inv(black_box(&a[7]))));
    });
    g.finish();
}

fn fields(c: &mut Criterion) {
    bench_one(c, "mersenne61", &Mersenne61);
    bench_one(c, "ff-mersenne61", &FfMersenne61::new());
    bench_one(
        c,
        "fp64-2^61-1",
        &Fp64::new(field::P61).expect("2^61 - 1 is prime"),
    );
    bench_one(c, "mersenne127", &Mersenne127);
    bench_one(c, "ff-mersenne127", &FfMersenne127::new());
    bench_one(
        c,
        "big-1024",
        &BigPrime::new(known_primes::p1024()).expect("known prime"),
    );
}

criterion_group!(benches, fields);
criterion_main!(benches);
