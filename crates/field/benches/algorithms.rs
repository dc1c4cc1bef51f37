//! The decoding algorithms at the sizes of issue 2: Berlekamp-Massey on
//! `2m` syndromes, root finding of a product of `m` distinct linear
//! factors, and the transposed Vandermonde solve with `m` unknowns, for
//! `m = 100, 400, 1000, 4000` over 2^61 - 1, 2^127 - 1 and a 1024-bit
//! prime. Group names are `<algorithm>/<field>/m=<m>`; FLINT's root
//! finding on the same kind of input is `benches/peers/flint_roots.py`.
//!
//! Root finding over the 1024-bit prime is skipped at `m = 1000` and
//! `m = 4000`: each call takes minutes (about a thousand modular squarings
//! of a degree-`m` polynomial with 1024-bit coefficients; FLINT needs about
//! a minute already at `m = 400`). Set `FIELD_BENCH_SLOW=1` to include
//! them, or time one call with
//! `cargo run --release -p field --example roots_once -- big1024 1000`.
//!
//! `locator/goldilocks` compares Berlekamp-Massey with the half-GCD's
//! `minimal_recurrence` on 256 to 16384 syndromes, for its threshold.
//!
//! Select a subset with criterion's filter, e.g.
//! `cargo bench -p field --bench algorithms -- roots/mersenne61`.

use std::cell::OnceCell;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use field::{
    BigPrime, FiniteField, Goldilocks, Mersenne61, Mersenne127, berlekamp_massey, find_roots,
    minimal_recurrence, poly, solve_transposed_vandermonde,
};
use testdata::known_primes;

const SIZES: [usize; 4] = [100, 400, 1000, 4000];

/// Distinct nonzero nodes, and a sequence of `2m` syndromes with exactly
/// these locator roots: the first `m` terms are random and the rest follow
/// the recurrence of `prod_j (1 - x_j y)`, so the sequence is
/// `s_i = sum_j v_j x_j^(i-1)` for some nonzero-ish `v` (the general
/// solution of that recurrence), without the `O(m^2)` power sums.
struct Input<E> {
    nodes: Vec<E>,
    syndromes: Vec<E>,
}

fn input<F: FiniteField>(f: &F, m: usize, label: &str) -> Input<F::Elem> {
    let mut rng = testdata::rng(&format!("bench-algorithms/{label}/{m}"));
    let mut nodes: Vec<F::Elem> = Vec::with_capacity(m);
    let mut seen = std::collections::HashSet::new();
    while nodes.len() < m {
        let x = f.random(&mut rng);
        if !f.is_zero(&x) && seen.insert(f.to_bytes(&x)) {
            nodes.push(x);
        }
    }
    // C(y) = prod (1 - x_j y) = 1 + c_1 y + ... + c_m y^m.
    let c = poly::reverse(f, &poly::from_roots(f, &nodes), m + 1).into_coeffs();
    // s_n = -sum_{i=1..m} c_i s_(n-i): with the connection coefficients
    // reversed, each term is one dot product of contiguous slices.
    let c_rev: Vec<F::Elem> = c[1..].iter().rev().cloned().collect();
    let mut s: Vec<F::Elem> = (0..m).map(|_| f.random(&mut rng)).collect();
    for n in m..2 * m {
        let v = f.dot(&c_rev, &s[n - m..n]);
        s.push(f.neg(&v));
    }
    Input {
        nodes,
        syndromes: s,
    }
}

fn bench_field<F: FiniteField>(
    c: &mut Criterion,
    name: &str,
    f: &F,
    sizes: &[usize],
    root_sizes: &[usize],
) {
    for &m in sizes {
        // Built on first use only, so that a filtered run does not pay for
        // the inputs of the benchmarks it skips.
        let inp: OnceCell<Input<F::Elem>> = OnceCell::new();
        let inp = || inp.get_or_init(|| input(f, m, name));
        let locator = OnceCell::new();
        let locator = || locator.get_or_init(|| poly::from_roots(f, &inp().nodes));
        let id = BenchmarkId::from_parameter(format!("m={m}"));

        let mut g = c.benchmark_group(format!("bm/{name}"));
        configure(&mut g, m, f.modulus_bits());
        g.bench_function(id.clone(), |b| {
            let s = &inp().syndromes;
            b.iter(|| black_box(berlekamp_massey(f, black_box(s), m)));
        });
        g.finish();

        if root_sizes.contains(&m) {
            let mut g = c.benchmark_group(format!("roots/{name}"));
            configure(&mut g, m, f.modulus_bits());
            let mut rng = testdata::rng("bench-algorithms/split");
            g.bench_function(id.clone(), |b| {
                let p = locator();
                b.iter(|| black_box(find_roots(f, black_box(p), &mut rng)));
            });
            g.finish();
        }

        let mut g = c.benchmark_group(format!("vandermonde/{name}"));
        configure(&mut g, m, f.modulus_bits());
        g.bench_function(id, |b| {
            let inp = inp();
            b.iter(|| {
                black_box(solve_transposed_vandermonde(
                    f,
                    black_box(&inp.nodes),
                    black_box(&inp.syndromes[..m]),
                ))
            });
        });
        g.finish();
    }
}

/// Ten samples of equal iteration counts (flat sampling: with criterion's
/// default linear sampling ten samples of a slow case cost 55 iterations),
/// a short warm-up, and a measurement budget that grows with the size.
fn configure(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    m: usize,
    bits: u64,
) {
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_millis(500));
    let secs = if m >= 1000 || bits > 200 { 10 } else { 3 };
    g.measurement_time(Duration::from_secs(secs));
}

/// Polynomial products (the kernel of root finding): the field's own
/// product against plain Karatsuba, for tuning the NTT thresholds.
fn bench_mul<F: FiniteField>(c: &mut Criterion, name: &str, f: &F) {
    let mut g = c.benchmark_group(format!("polymul/{name}"));
    g.sample_size(20);
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_secs(2));
    let mut rng = testdata::rng("bench-algorithms/polymul");
    for n in [16usize, 32, 64, 128, 256, 512, 1000, 2000] {
        let a: Vec<F::Elem> = (0..n).map(|_| f.random(&mut rng)).collect();
        let b: Vec<F::Elem> = (0..n).map(|_| f.random(&mut rng)).collect();
        let (pa, pb) = (poly::Poly::from_coeffs(f, a), poly::Poly::from_coeffs(f, b));
        g.bench_function(BenchmarkId::new("fast", format!("n={n}")), |bench| {
            bench.iter(|| black_box(poly::mul(f, black_box(&pa), black_box(&pb))));
        });
        g.bench_function(BenchmarkId::new("karatsuba", format!("n={n}")), |bench| {
            bench.iter(|| black_box(poly::mul_karatsuba(f, black_box(&pa), black_box(&pb))));
        });
    }
    g.finish();
}

/// The locator step on `n` syndromes of `n / 2` terms: Berlekamp-Massey
/// against [`minimal_recurrence`] (the half-GCD; it runs Berlekamp-Massey
/// itself below its threshold of 2048 terms), for choosing that threshold.
/// Berlekamp-Massey at 16384 syndromes takes about a second per call, so
/// it runs only with `FIELD_BENCH_SLOW=1`.
fn bench_locator<F: FiniteField>(c: &mut Criterion, name: &str, f: &F) {
    let slow = std::env::var_os("FIELD_BENCH_SLOW").is_some();
    let mut g = c.benchmark_group(format!("locator/{name}"));
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    for n in [256usize, 1024, 2048, 4096, 16384] {
        let inp: OnceCell<Input<F::Elem>> = OnceCell::new();
        let s = || &inp.get_or_init(|| input(f, n / 2, name)).syndromes;
        let param = format!("n={n}");
        if n < 16384 || slow {
            g.bench_function(BenchmarkId::new("bm", &param), |b| {
                let s = s();
                b.iter(|| black_box(berlekamp_massey(f, black_box(s), n / 2)));
            });
        }
        g.bench_function(BenchmarkId::new("hgcd", &param), |b| {
            let s = s();
            b.iter(|| black_box(minimal_recurrence(f, black_box(s), n / 2)));
        });
    }
    g.finish();
}

/// The gcd of two random polynomials of degree `n` (coprime with
/// probability `1 - 1/p`): Euclid's algorithm below `poly`'s threshold,
/// the half-GCD above it.
fn bench_gcd<F: FiniteField>(c: &mut Criterion, name: &str, f: &F) {
    let mut g = c.benchmark_group(format!("gcd/{name}"));
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(3));
    let mut rng = testdata::rng("bench-algorithms/gcd");
    for n in [256usize, 1024, 2048, 4096] {
        let mut random = || {
            let mut v: Vec<F::Elem> = (0..n).map(|_| f.random(&mut rng)).collect();
            v.push(f.one());
            poly::Poly::from_coeffs(f, v)
        };
        let (a, b) = (random(), random());
        g.bench_function(BenchmarkId::from_parameter(format!("n={n}")), |bench| {
            bench.iter(|| black_box(poly::gcd(f, black_box(&a), black_box(&b))));
        });
    }
    g.finish();
}

fn algorithms(c: &mut Criterion) {
    bench_gcd(c, "goldilocks", &Goldilocks);
    bench_locator(c, "goldilocks", &Goldilocks);
    bench_mul(c, "mersenne61", &Mersenne61);
    bench_mul(c, "goldilocks", &Goldilocks);
    bench_mul(c, "mersenne127", &Mersenne127);
    bench_mul(
        c,
        "big1024",
        &BigPrime::new(known_primes::p1024()).expect("known prime"),
    );
    bench_field(c, "mersenne61", &Mersenne61, &SIZES, &SIZES);
    bench_field(c, "mersenne127", &Mersenne127, &SIZES, &SIZES);
    let big = BigPrime::new(known_primes::p1024()).expect("known prime");
    let slow = std::env::var_os("FIELD_BENCH_SLOW").is_some();
    let big_roots: &[usize] = if slow { &SIZES } else { &SIZES[..2] };
    bench_field(c, "big1024", &big, &SIZES, big_roots);
}

criterion_group!(benches, algorithms);
criterion_main!(benches);
