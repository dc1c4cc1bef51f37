//! The quasi-linear algorithms over the Proth field `27 * 2^59 + 1`
//! (`Fp64::proth()`), whose products are transforms in the field:
//!
//! - `fast/roots/d=<d>`: [`find_roots`] of a product of `d` distinct
//!   linear factors, which runs the tangent Graeffe root finder;
//! - `fast/recurrence/t=<t>`: [`minimal_recurrence`] on the `2t + 1`
//!   syndromes of `t` terms (Berlekamp-Massey below 2048 syndromes, the
//!   half-GCD above, so `t = 1000` runs the first and `t = 4000` the
//!   second);
//! - `fast/evaluate_many/n=<n>`: [`poly::evaluate_many`] of a polynomial
//!   of `n` coefficients at `n` points (the remainder tree);
//! - `fast/power_sums/n=<n>`: [`poly::power_sums`], the first `n`
//!   syndromes of `n` points (the product tree and a Newton inverse).
//!
//! Ten flat samples and a short measurement each, so that the group runs
//! in a couple of minutes: `cargo bench -p field --bench fast`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use field::{FiniteField, Fp64, find_roots, minimal_recurrence, poly};

/// `n` distinct nonzero elements.
fn distinct_points<F: FiniteField>(f: &F, n: usize, label: &str) -> Vec<F::Elem> {
    let mut rng = testdata::rng(&format!("bench-fast/{label}/{n}"));
    let mut seen = std::collections::HashSet::new();
    let mut points = Vec::with_capacity(n);
    while points.len() < n {
        let x = f.random(&mut rng);
        if !f.is_zero(&x) && seen.insert(f.to_bytes(&x)) {
            points.push(x);
        }
    }
    points
}

/// `n` random elements.
fn random_elems<F: FiniteField>(f: &F, n: usize, label: &str) -> Vec<F::Elem> {
    let mut rng = testdata::rng(&format!("bench-fast/{label}/{n}"));
    (0..n).map(|_| f.random(&mut rng)).collect()
}

/// Ten samples of equal iteration counts (flat sampling: the slowest
/// cases take tens of milliseconds a call) and a short budget.
fn group<'a>(
    c: &'a mut Criterion,
    name: &str,
) -> criterion::BenchmarkGroup<'a, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group(format!("fast/{name}"));
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_millis(300));
    g.measurement_time(Duration::from_secs(2));
    g
}

fn fast(c: &mut Criterion) {
    let f = Fp64::proth();

    let mut g = group(c, "roots");
    for d in [1000usize, 4000] {
        let split = poly::from_roots(&f, &distinct_points(&f, d, "roots"));
        let mut rng = testdata::rng("bench-fast/roots/rng");
        g.bench_function(BenchmarkId::from_parameter(format!("d={d}")), |b| {
            b.iter(|| black_box(find_roots(&f, black_box(&split), &mut rng)));
        });
    }
    g.finish();

    let mut g = group(c, "recurrence");
    for t in [1000usize, 4000] {
        let points = distinct_points(&f, t, "recurrence");
        let values = random_elems(&f, t, "recurrence/values");
        let syndromes = poly::power_sums(&f, &points, &values, 2 * t + 1).expect("equal lengths");
        g.bench_function(BenchmarkId::from_parameter(format!("t={t}")), |b| {
            b.iter(|| black_box(minimal_recurrence(&f, black_box(&syndromes), t)));
        });
    }
    g.finish();

    let mut g = group(c, "evaluate_many");
    for n in [2048usize, 8192] {
        let p = poly::Poly::from_coeffs(&f, random_elems(&f, n, "evaluate/coeffs"));
        let points = random_elems(&f, n, "evaluate/points");
        g.bench_function(BenchmarkId::from_parameter(format!("n={n}")), |b| {
            b.iter(|| black_box(poly::evaluate_many(&f, black_box(&p), black_box(&points))));
        });
    }
    g.finish();

    let mut g = group(c, "power_sums");
    for n in [2048usize, 8192] {
        let points = distinct_points(&f, n, "power_sums");
        let values = random_elems(&f, n, "power_sums/values");
        g.bench_function(BenchmarkId::from_parameter(format!("n={n}")), |b| {
            b.iter(|| {
                black_box(poly::power_sums(
                    &f,
                    black_box(&points),
                    black_box(&values),
                    n,
                ))
            });
        });
    }
    g.finish();
}

criterion_group!(benches, fast);
criterion_main!(benches);
