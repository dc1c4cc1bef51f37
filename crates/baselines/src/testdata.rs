//! Test data shared by the unit tests of both baselines (the blobs are
//! `seeding_testkit::mixtures::blobs`).

pub(crate) use seeding_testkit::mixtures::blobs;

use std::collections::HashMap;

use nalgebra::DMatrix;
use seeding::{Dataset, KMeans, KMeansParams, PointId};

/// A non-i.i.d. split: client `l` holds the points of the clusters `l,
/// l + 1, ..., l + k_prime - 1` (mod the number of clusters), dealt in
/// turn; point ids are positions in `labels`.
pub(crate) fn non_iid(
    points: &DMatrix<f64>,
    labels: &[usize],
    clients: usize,
    k_prime: usize,
) -> Vec<Dataset> {
    let clusters = labels.iter().max().map_or(0, |&m| m + 1);
    let mut pools: Vec<Vec<usize>> = vec![Vec::new(); clusters];
    for (p, &l) in labels.iter().enumerate() {
        pools[l].push(p);
    }
    // The clients sharing each cluster take its points in turn.
    let mut owners: Vec<Vec<usize>> = vec![Vec::new(); clusters];
    for l in 0..clients {
        for j in 0..k_prime {
            owners[(l + j) % clusters].push(l);
        }
    }
    let mut held: Vec<Vec<usize>> = vec![Vec::new(); clients];
    for (c, pool) in pools.iter().enumerate() {
        for (i, &p) in pool.iter().enumerate() {
            held[owners[c][i % owners[c].len()]].push(p);
        }
    }
    held.iter()
        .map(|ps| {
            let cols: Vec<_> = ps.iter().map(|&p| points.column(p)).collect();
            let m = DMatrix::from_columns(&cols);
            let ids = ps.iter().map(|&p| PointId(p as u64)).collect();
            Dataset::with_ids(m, ids).unwrap()
        })
        .collect()
}

/// The best of 5 centralized K-means runs: the phi_c* of loss ratios.
pub(crate) fn star(all: &Dataset, k: usize) -> f64 {
    let km = KMeans::new(KMeansParams::new(k).restarts(5).validate().unwrap());
    km.fit_seeded(all, 1).unwrap().phi()
}

/// Whether an induced clustering (server cluster by client and position)
/// recovers the true clusters: one server cluster per label, distinct for
/// distinct labels. Point ids are positions in `labels`.
pub(crate) fn recovers(clients: &[Dataset], induced: &[Vec<u32>], labels: &[usize]) -> bool {
    let mut of_label: HashMap<usize, u32> = HashMap::new();
    for (data, server) in clients.iter().zip(induced) {
        for (pos, &s) in server.iter().enumerate() {
            let l = labels[usize::try_from(data.id(pos).0).unwrap_or(usize::MAX)];
            if *of_label.entry(l).or_insert(s) != s {
                return false;
            }
        }
    }
    let mut distinct: Vec<u32> = of_label.values().copied().collect();
    distinct.sort_unstable();
    distinct.dedup();
    distinct.len() == of_label.len()
}
