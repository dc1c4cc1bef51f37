//! The seed schedule of the baselines.

/// The inverse of [`seeding::derive_seed`]'s multiplier `G` mod 2^64.
const GOLDEN_INV: u64 = 0xF1DE_83E1_9937_733D;

/// The seed of part `index` (a client, a leaf, a restart) of stage `stage`
/// of a run seeded by `seed`: [`seeding::derive_seed`] with the stage and
/// the index mixed first, that is
/// `mix64(mix64(seed ^ mix64(stage)) + mix64(index))`.
///
/// This is the schedule the `mufc` command's experiments were recorded
/// with (it shares it for its own stages, such as data and splits), kept
/// bit for bit: `derive_seed(s, t, i) = mix64(mix64(s ^ t) + i * G)`
/// equals it for `t = mix64(stage)` and `i = mix64(index) * G^-1`.
///
/// # Example
///
/// ```
/// use baselines::stage_seed;
/// use seeding::mix64;
///
/// let (seed, stage, index) = (2023, 5, 3);
/// assert_eq!(
///     stage_seed(seed, stage, index),
///     mix64(mix64(seed ^ mix64(stage)).wrapping_add(mix64(index))),
/// );
/// ```
pub fn stage_seed(seed: u64, stage: u64, index: u64) -> u64 {
    seeding::derive_seed(
        seed,
        seeding::mix64(stage),
        seeding::mix64(index).wrapping_mul(GOLDEN_INV),
    )
}

/// The stages of the baselines (the `mufc` command numbers its own stages
/// around them).
pub(crate) mod stage {
    /// K-FED, per client.
    pub(crate) const KFED_CLIENT: u64 = 5;
    /// DC-KMeans, per leaf.
    pub(crate) const DC_LEAF: u64 = 7;
    /// DC-KMeans, the root restarts.
    pub(crate) const DC_ROOT: u64 = 8;
}

/// Maps `f` over `items` with their indices, in parallel under the
/// `parallel` feature; the results come back in order either way, and the
/// first error found wins (which one may depend on scheduling).
pub(crate) fn map_indexed<T: Sync, U: Send, E: Send>(
    items: &[T],
    f: impl Fn(usize, &T) -> Result<U, E> + Sync + Send,
) -> Result<Vec<U>, E> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        items.par_iter().enumerate().map(|(i, t)| f(i, t)).collect()
    }
    #[cfg(not(feature = "parallel"))]
    {
        items.iter().enumerate().map(|(i, t)| f(i, t)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seeding::mix64;

    #[test]
    fn stage_seed_is_the_recorded_formula() {
        assert_eq!(GOLDEN_INV.wrapping_mul(0x9E37_79B9_7F4A_7C15), 1);
        for (seed, stage, index) in [(0, 0, 0), (1, 2, 3), (u64::MAX, 9, 1 << 40), (42, 5, 7)] {
            let recorded = mix64(mix64(seed ^ mix64(stage)).wrapping_add(mix64(index)));
            assert_eq!(stage_seed(seed, stage, index), recorded);
        }
    }
}
