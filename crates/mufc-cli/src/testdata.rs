//! Test data for the unit tests.

use nalgebra::DMatrix;

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
