//! K-means++ seeding on the paper's Gaussian data set (Appendix M.1:
//! n = 30000, d = 10, k = 10), unlearning one random point against
//! reseeding from scratch, and Lloyd on a small weighted server data set.
//!
//! Side by side with scikit-learn: `benches/peers/sklearn_kmeanspp.py`
//! (see docs/benchmarks.md, "## seeding").

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use nalgebra::DMatrix;
use rand::Rng;
use seeding::{Dataset, ExpRace, KMeansParams, KMeansPlusPlus, PointId, RngSampler};

fn unit(rng: &mut impl Rng) -> f64 {
    ((rng.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
}

/// The Gaussian set of Appendix M.1: `k` centres uniform in the unit
/// hypercube, `per` points around each, spherical with variance 0.5.
fn gaussian_mixture(rng: &mut impl Rng, dim: usize, k: usize, per: usize) -> Dataset {
    let centres: Vec<f64> = (0..k * dim).map(|_| unit(rng)).collect();
    let sd = 0.5f64.sqrt();
    let mut coords = Vec::with_capacity(k * per * dim);
    for c in centres.chunks_exact(dim) {
        for _ in 0..per {
            for &m in c {
                // Box-Muller.
                let (u, v) = (unit(rng), unit(rng));
                coords.push(m + sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos());
            }
        }
    }
    Dataset::new(DMatrix::from_vec(dim, k * per, coords)).expect("finite data")
}

fn seeding(c: &mut Criterion) {
    let data = gaussian_mixture(&mut testkit::rng("bench-gaussian"), 10, 10, 3000);
    let kpp = KMeansPlusPlus::new(10).expect("k > 0");
    let mut g = c.benchmark_group("seeding/kmeanspp");
    g.throughput(Throughput::Elements(data.len() as u64));
    g.bench_function(BenchmarkId::new("exp-race", "n=30000,d=10,k=10"), |b| {
        let mut s = 0u64;
        b.iter_batched(
            || data.clone(),
            |d| {
                s += 1;
                black_box(kpp.fit(d, ExpRace::new(s)).num_seeds())
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function(BenchmarkId::new("rng", "n=30000,d=10,k=10"), |b| {
        let mut rng = testkit::rng("bench-rng-sampler");
        b.iter_batched(
            || (data.clone(), rng.next_u64()),
            |(d, seed)| {
                let r = RngSampler::new(testkit::rng(&seed.to_string()));
                black_box(kpp.fit(d, r).num_seeds())
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();

    // Unlearning one random point vs retraining without it. The fitted
    // state is cloned outside the timed routine.
    let fitted = kpp.fit(data.clone(), ExpRace::new(1));
    let mut g = c.benchmark_group("seeding/removal");
    let mut pick = testkit::rng("bench-removal");
    let n = data.len() as u64;
    let (mut removals, mut reseeds) = (0u64, 0u64);
    g.bench_function("unlearn-one-random", |b| {
        b.iter_batched(
            || (fitted.clone(), PointId(pick.next_u64() % n)),
            |(mut s, id)| {
                let r = s.unlearn(&[id]).expect("present");
                removals += 1;
                reseeds += u64::from(r.reseeded());
                black_box(s)
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function("retrain-without-one-random", |b| {
        b.iter_batched(
            || {
                let id = PointId(pick.next_u64() % n);
                data.without(&[id]).expect("present")
            },
            |d| black_box(kpp.fit(d, ExpRace::new(1)).num_seeds()),
            BatchSize::LargeInput,
        );
    });
    g.finish();
    eprintln!(
        "seeding/removal: {reseeds} of {removals} timed removals hit a seed (retrain rate {:.2e})",
        reseeds as f64 / removals.max(1) as f64
    );
}

fn lloyd(c: &mut Criterion) {
    // A server's data set: 100 clients x 10 weighted seeds.
    let data = gaussian_mixture(&mut testkit::rng("bench-server"), 10, 10, 100);
    let weights: Vec<u64> = (0..data.len() as u64)
        .map(|i| 1 + (i * 7919) % 300)
        .collect();
    let server = Dataset::with_weights(data.points().clone(), data.ids().to_vec(), weights)
        .expect("valid weights");
    let km = KMeansParams::new(10).check().expect("valid parameters");
    c.bench_function("seeding/kmeans/server-n=1000,d=10,k=10", |b| {
        let mut s = 0;
        b.iter(|| {
            s += 1;
            black_box(
                km.fit(&server, &mut ExpRace::new(s))
                    .expect("non-empty")
                    .phi(),
            )
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = seeding, lloyd
}
criterion_main!(benches);
