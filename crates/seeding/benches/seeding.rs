//! K-means++ seeding on the paper's Gaussian data set (Appendix M.1:
//! n = 30000, d = 10, k = 10), unlearning one random point against
//! reseeding from scratch, inserting one against refitting with it, Lloyd on a small weighted server data set, and
//! the exact K-means (`exact/...`): fits against updates after a removal,
//! a weight decrement and a client's reseeding, on the Gaussian set and on
//! the server data set.
//!
//! Side by side with scikit-learn: `benches/peers/sklearn_kmeanspp.py`
//! (see docs/benchmarks.md, "## seeding").

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use nalgebra::DMatrix;
use rand::Rng;
use seeding::{
    Changes, Dataset, ExactKMeans, ExpRace, KMeans, KMeansParams, KMeansPlusPlus, PointId,
    RngSampler, SeedingParams,
};

/// The paper's Gaussian set (n = 30000, d = 10, k = 10), the data of the
/// seeding, insertion and exact benches.
fn gaussian() -> Dataset {
    seeding_testkit::seeding::paper_gaussian(&mut testdata::rng("bench-gaussian"), 10, 10, 3000)
}

/// K-means++ with k = 10.
fn kpp_k10() -> KMeansPlusPlus {
    KMeansPlusPlus::new(SeedingParams::new(10).validate().expect("k > 0"))
}

fn seeding(c: &mut Criterion) {
    let data = gaussian();
    let kpp = kpp_k10();
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
        let mut rng = testdata::rng("bench-rng-sampler");
        b.iter_batched(
            || (data.clone(), rng.next_u64()),
            |(d, seed)| {
                let r = RngSampler::new(testdata::rng(&seed.to_string()));
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
    let mut pick = testdata::rng("bench-removal");
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

/// Inserting one point (issue 29) vs refitting with it: the seeding of
/// the Gaussian set without 256 random points, each of which arrives in
/// turn.
fn insertion(c: &mut Criterion) {
    let data = gaussian();
    let kpp = kpp_k10();
    let mut pick = testdata::rng("bench-insertion");
    // The fitted state is cloned outside the timed routine (its
    // storage then has no spare capacity: the timed insert copies the
    // points once, as the first insert into a loaded client does).
    let held = distinct(&mut pick, data.ids(), 256);
    let base = data.without(&held).expect("present");
    let fitted = kpp.fit(base.clone(), ExpRace::new(1));
    let mut g = c.benchmark_group("seeding/insertion");
    let arrivals: Vec<Dataset> = (held.iter())
        .map(|&h| data.only(&[h]).expect("present"))
        .collect();
    let (mut inserts, mut reseeded) = (0u64, 0u64);
    g.bench_function("insert-one-random", |b| {
        let mut i = 0;
        b.iter_batched(
            || {
                i = (i + 1) % arrivals.len();
                (fitted.clone(), &arrivals[i])
            },
            |(mut s, p)| {
                let r = s.insert(p).expect("new");
                inserts += 1;
                reseeded += u64::from(r.reseeded());
                black_box(s)
            },
            BatchSize::LargeInput,
        );
    });
    // The same into one seeding that lives on, as a running client's does:
    // each point is inserted (timed), then forgotten again (not timed), so
    // the storage grows once and the inserts are what is measured.
    g.bench_function("insert-one-random-into-a-live-seeding", |b| {
        let mut live = fitted.clone();
        let mut i = 0;
        b.iter_custom(|iters| {
            let mut spent = std::time::Duration::ZERO;
            for _ in 0..iters {
                i = (i + 1) % arrivals.len();
                let start = std::time::Instant::now();
                let r = live.insert(&arrivals[i]).expect("new");
                spent += start.elapsed();
                inserts += 1;
                reseeded += u64::from(r.reseeded());
                live.unlearn(&[held[i]]).expect("present");
            }
            spent
        });
    });
    g.bench_function("refit-with-one-random", |b| {
        let mut i = 0;
        b.iter_batched(
            || {
                i = (i + 1) % arrivals.len();
                let mut d = base.clone();
                d.append(&arrivals[i]).expect("new");
                d
            },
            |d| black_box(kpp.fit(d, ExpRace::new(1)).num_seeds()),
            BatchSize::LargeInput,
        );
    });
    g.finish();
    eprintln!(
        "seeding/insertion: {reseeded} of {inserts} timed insertions won a round (refit rate {:.2e})",
        reseeded as f64 / inserts.max(1) as f64
    );
}

fn lloyd(c: &mut Criterion) {
    // A server's data set: 100 clients x 10 weighted seeds.
    let data =
        seeding_testkit::seeding::paper_gaussian(&mut testdata::rng("bench-server"), 10, 10, 100);
    let weights: Vec<u64> = (0..data.len() as u64)
        .map(|i| 1 + (i * 7919) % 300)
        .collect();
    let server = Dataset::with_weights(data.points().clone(), data.ids().to_vec(), weights)
        .expect("valid weights");
    let km = KMeans::new(KMeansParams::new(10).validate().expect("valid parameters"));
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

/// `data` without `gone` and with `fresh` points appended (ids from
/// `next_id`): a client that reseeds.
fn reseeded(
    data: &Dataset,
    gone: &[PointId],
    fresh: &[f64],
    w: u64,
    next_id: u64,
) -> (Dataset, Changes) {
    let dim = data.dim();
    let kept = data.without(gone).expect("present");
    let added: Vec<PointId> = (0..(fresh.len() / dim) as u64)
        .map(|i| PointId(next_id + i))
        .collect();
    let mut coords = kept.coords().to_vec();
    coords.extend_from_slice(fresh);
    let mut ids = kept.ids().to_vec();
    ids.extend(&added);
    let mut weights = kept.weights().to_vec();
    weights.extend(added.iter().map(|_| w));
    let n = ids.len();
    let new =
        Dataset::with_weights(DMatrix::from_vec(dim, n, coords), ids, weights).expect("valid");
    (new, Changes::removing(gone.to_vec()).with_added(added))
}

/// `count` new points, each a random point of `data` moved by a uniform
/// offset in `[-r, r]` per axis (new data resembling the old).
fn near(rng: &mut impl Rng, data: &Dataset, count: usize, r: f64) -> Vec<f64> {
    let mut out = Vec::with_capacity(count * data.dim());
    for id in distinct(rng, data.ids(), count) {
        let x = data.point(data.position(id).expect("present"));
        out.extend(
            x.iter()
                .map(|&v| v + (2.0 * seeding_testkit::seeding::unit(rng) - 1.0) * r),
        );
    }
    out
}

fn distinct(rng: &mut impl Rng, ids: &[PointId], count: usize) -> Vec<PointId> {
    let mut out: Vec<PointId> = Vec::with_capacity(count);
    while out.len() < count {
        let id = ids[usize::try_from(rng.next_u64() % ids.len() as u64).unwrap_or(0)];
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

fn exact(c: &mut Criterion) {
    // The paper's Gaussian set, as the seeding benches.
    let data = gaussian();
    let km = ExactKMeans::new(KMeansParams::new(10).validate().expect("valid parameters"));
    let fitted = km.fit(&data, 1).expect("valid data");
    eprintln!(
        "exact/gaussian: {} iterations, trace {:.1} MB",
        fitted.iterations(),
        fitted.trace_bytes() as f64 / 1e6
    );
    let mut g = c.benchmark_group("exact/gaussian-n=30000,d=10,k=10");
    g.sample_size(10);
    g.bench_function("fit", |b| {
        b.iter(|| black_box(km.fit(&data, 1).expect("valid").phi()));
    });
    let plain = km.clone().accelerate(false);
    g.bench_function("fit-plain-lloyd", |b| {
        b.iter(|| black_box(plain.fit(&data, 1).expect("valid").phi()));
    });
    let float = KMeans::new(KMeansParams::new(10).validate().expect("valid parameters"));
    g.bench_function("float-kmeans-fit", |b| {
        b.iter(|| black_box(float.fit(&data, &mut ExpRace::new(1)).expect("valid").phi()));
    });
    let mut pick = testdata::rng("bench-exact-removal");
    let mut recomputed = (0usize, 0usize);
    g.bench_function("update-remove-one", |b| {
        b.iter_batched(
            || {
                let id = distinct(&mut pick, data.ids(), 1);
                (
                    fitted.clone(),
                    data.without(&id).expect("present"),
                    Changes::removing(id),
                )
            },
            |(mut m, new, ch)| {
                let r = m.update(&new, &ch).expect("consistent");
                recomputed.0 += r.points_recomputed();
                recomputed.1 += 1;
                black_box(m)
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function("update-reseed-client-150-out-150-in", |b| {
        b.iter_batched(
            || {
                let gone = distinct(&mut pick, data.ids(), 150);
                let fresh = near(&mut pick, &data, 150, 0.1);
                let (new, ch) = reseeded(&data, &gone, &fresh, 1, 1 << 40);
                (fitted.clone(), new, ch)
            },
            |(mut m, new, ch)| {
                black_box(m.update(&new, &ch).expect("consistent"));
                // Dropped after the timing.
                m
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();
    eprintln!(
        "exact/gaussian update-remove-one: {:.0} assignments recomputed per update (a fit: {} x {})",
        recomputed.0 as f64 / recomputed.1.max(1) as f64,
        data.len(),
        fitted.iterations()
    );

    // The server's data set of the Lloyd bench: 1000 weighted points
    // (total weight about 150000), where a removal at a client lowers one
    // weight by one.
    let pts =
        seeding_testkit::seeding::paper_gaussian(&mut testdata::rng("bench-server"), 10, 10, 100);
    let weights: Vec<u64> = (0..pts.len() as u64)
        .map(|i| 2 + (i * 7919) % 300)
        .collect();
    let server =
        Dataset::with_weights(pts.points().clone(), pts.ids().to_vec(), weights).expect("valid");
    let fitted = km.fit(&server, 1).expect("valid data");
    eprintln!("exact/server: {} iterations", fitted.iterations());
    let mut g = c.benchmark_group("exact/server-n=1000,d=10,k=10");
    g.bench_function("fit", |b| {
        b.iter(|| black_box(km.fit(&server, 1).expect("valid").phi()));
    });
    g.bench_function("fit-plain-lloyd", |b| {
        b.iter(|| black_box(plain.fit(&server, 1).expect("valid").phi()));
    });
    g.bench_function("update-decrement-one", |b| {
        b.iter_batched(
            || {
                let id = distinct(&mut pick, server.ids(), 1)[0];
                let mut w = server.weights().to_vec();
                let p = server.position(id).expect("present");
                w[p] -= 1;
                let new = Dataset::with_weights(server.points().clone(), server.ids().to_vec(), w)
                    .expect("valid");
                (
                    fitted.clone(),
                    new,
                    Changes::default().with_reweighted(vec![id]),
                )
            },
            |(mut m, new, ch)| {
                black_box(m.update(&new, &ch).expect("consistent"));
                // Dropped after the timing.
                m
            },
            BatchSize::LargeInput,
        );
    });
    g.bench_function("update-reseed-client-5-out-5-in", |b| {
        b.iter_batched(
            || {
                let gone = distinct(&mut pick, server.ids(), 5);
                let fresh = near(&mut pick, &server, 5, 0.1);
                let (new, ch) = reseeded(&server, &gone, &fresh, 150, 1 << 40);
                (fitted.clone(), new, ch)
            },
            |(mut m, new, ch)| {
                black_box(m.update(&new, &ch).expect("consistent"));
                // Dropped after the timing.
                m
            },
            BatchSize::LargeInput,
        );
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30);
    targets = seeding, insertion, lloyd, exact
}
criterion_main!(benches);
