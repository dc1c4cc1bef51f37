//! Small random helpers defined here rather than borrowed from `rand`, so
//! that seeded runs give the same data, splits and seeds whatever `rand`
//! release is linked (`rand` documents its own algorithms as free to change
//! between releases).

use rand::Rng;

/// A uniform integer in `0..n` (`n > 0`) by rejection (no modulo bias).
pub(crate) fn below<R: Rng + ?Sized>(rng: &mut R, n: usize) -> usize {
    debug_assert!(n > 0);
    let n64 = n as u64;
    // The largest multiple of n that fits: draws at or above it are redrawn.
    let zone = u64::MAX - (u64::MAX % n64 + 1) % n64;
    loop {
        let v = rng.next_u64();
        if v <= zone {
            // The remainder is below n, which is a usize.
            return usize::try_from(v % n64).unwrap_or(0);
        }
    }
}

/// A uniform float in `(0, 1]` with 53 random bits.
pub(crate) fn unit<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    ((rng.next_u64() >> 11) + 1) as f64 / 9_007_199_254_740_992.0
}

/// A standard normal pair by the Box-Muller transform.
pub(crate) fn normal_pair<R: Rng + ?Sized>(rng: &mut R) -> (f64, f64) {
    let r = (-2.0 * unit(rng).ln()).sqrt();
    let theta = core::f64::consts::TAU * unit(rng);
    (r * theta.cos(), r * theta.sin())
}

/// Fisher-Yates shuffle.
pub(crate) fn shuffle<T, R: Rng + ?Sized>(v: &mut [T], rng: &mut R) {
    for i in (1..v.len()).rev() {
        let j = below(rng, i + 1);
        v.swap(i, j);
    }
}

/// A seed for part `index` of stage `tag` of a run seeded by `seed`, so
/// that every client, restart and trial draws from its own stream: the
/// schedule the baselines draw from too ([`baselines::stage_seed`], which
/// is [`seeding::derive_seed`] with the tag and index mixed first), so the
/// recorded figures stay what they were.
pub(crate) use baselines::stage_seed as derive_seed;

/// Stage tags for [`derive_seed`].
pub(crate) mod tag {
    /// The synthetic data.
    pub(crate) const DATA: u64 = 1;
    /// The split into clients.
    pub(crate) const SPLIT: u64 = 2;
    /// The centralized K-means runs (labels and phi_c*).
    pub(crate) const CENTRAL: u64 = 3;
    /// A trial of a method.
    pub(crate) const TRIAL: u64 = 4;
    // 5, 7 and 8 are the baselines' stages (K-FED's clients, DC-KMeans'
    // leaves and root restarts; `baselines::stage_seed`).
    /// The choice of removal requests.
    pub(crate) const REMOVALS: u64 = 9;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_is_uniform_and_in_range() {
        let mut rng = testdata::rng("below");
        let mut counts = [0usize; 6];
        for _ in 0..60_000 {
            counts[below(&mut rng, 6)] += 1;
        }
        for c in counts {
            assert!((9_500..10_500).contains(&c), "{counts:?}");
        }
    }

    #[test]
    fn normals_have_unit_variance() {
        let mut rng = testdata::rng("normal");
        let (mut s, mut s2) = (0.0, 0.0);
        let m = 50_000;
        for _ in 0..m {
            let (a, b) = normal_pair(&mut rng);
            s += a + b;
            s2 += a * a + b * b;
        }
        let n = 2.0 * f64::from(m);
        let mean = s / n;
        let var = s2 / n - mean * mean;
        assert!(mean.abs() < 0.02, "{mean}");
        assert!((var - 1.0).abs() < 0.03, "{var}");
    }

    #[test]
    fn shuffle_is_a_permutation_and_moves_things() {
        let mut rng = testdata::rng("shuffle");
        let mut v: Vec<usize> = (0..100).collect();
        shuffle(&mut v, &mut rng);
        let mut sorted = v.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
        assert_ne!(v, sorted);
        assert_ne!(derive_seed(1, 2, 3), derive_seed(1, 2, 4));
        assert_ne!(derive_seed(1, 2, 3), derive_seed(1, 3, 3));
    }
}
