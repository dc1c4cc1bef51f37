//! Test data shared by the unit tests of several modules.

use std::collections::HashMap;

use nalgebra::DMatrix;
use seeding::Dataset;

use crate::random::normal_pair;

/// `k` spherical blobs of `per` points in `dim` dimensions, centre `c` at
/// `5 c` on the first axis, with the given per-coordinate variance: far
/// apart when the variance is small. Returns the points and true labels.
pub(crate) fn blobs(
    k: usize,
    per: usize,
    dim: usize,
    variance: f64,
    label: &str,
) -> (DMatrix<f64>, Vec<usize>) {
    let mut rng = testkit::rng(label);
    let sd = variance.sqrt();
    let mut coords = Vec::with_capacity(k * per * dim);
    let mut labels = Vec::with_capacity(k * per);
    for c in 0..k {
        for _ in 0..per {
            for a in 0..dim {
                let centre = if a == 0 { 5.0 * c as f64 } else { 0.0 };
                coords.push(centre + sd * normal_pair(&mut rng).0);
            }
            labels.push(c);
        }
    }
    (DMatrix::from_vec(dim, k * per, coords), labels)
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
