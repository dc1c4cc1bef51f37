//! Seed derivation: the mixer, the keyed `(seed, tag, index)` mix every
//! crate of the workspace derives its sub-seeds with, and the schedule of
//! restart seeds.
//!
//! These formulas are frozen: digests, recorded figures and persisted
//! states depend on every bit of them.

/// The golden-ratio increment of SplitMix64, odd (so multiplying by it is a
/// bijection of u64).
pub(crate) const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 finalizer (Steele, Lea and Flood 2014): a bijection of
/// u64 with full avalanche.
///
/// # Example
///
/// ```
/// // SplitMix64's first output from state 0.
/// assert_eq!(seeding::mix64(0x9E37_79B9_7F4A_7C15), 0xE220_A839_7B1D_CDAF);
/// ```
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed for part `index` of the stage named `tag` of a run seeded by
/// `seed`: a keyed mix of the three, so that every stage, client, restart
/// or trial draws from its own stream and changing one of them moves no
/// other. Version 1, frozen:
///
/// ```text
/// derive_seed(seed, tag, index) = mix64(mix64(seed ^ tag) + index * G)
/// G = 0x9E3779B97F4A7C15, arithmetic mod 2^64
/// ```
///
/// `tag` is a domain separator (an ASCII constant such as `b"mufc/str"`
/// read as a u64, or any fixed number); `index` is the part's name (a
/// restart number, a client id), never a position that removals move.
/// For a fixed `(seed, tag)` the map `index -> derive_seed` is a bijection,
/// so distinct parts never share a seed. [`crate::ExpRace`] keys its rounds
/// with it.
///
/// # Example
///
/// ```
/// use seeding::derive_seed;
///
/// const STAGE: u64 = u64::from_be_bytes(*b"example!");
/// let a = derive_seed(7, STAGE, 0);
/// assert_ne!(a, derive_seed(7, STAGE, 1));
/// assert_ne!(a, derive_seed(8, STAGE, 0));
/// assert_eq!(a, derive_seed(7, STAGE, 0)); // a function, not a stream
/// ```
#[inline]
pub fn derive_seed(seed: u64, tag: u64, index: u64) -> u64 {
    mix64(mix64(seed ^ tag).wrapping_add(index.wrapping_mul(GOLDEN)))
}

/// The seed of restart `restart` of a fit seeded by `seed` (the default
/// schedule of [`crate::KMeans::fit_seeded`] and [`crate::ExactKMeans`]):
/// the seed itself for restart 0, so that one restart is one run with the
/// given seed, then `mix64(seed ^ mix64(restart * G))`. Frozen, like
/// [`derive_seed`].
///
/// # Example
///
/// ```
/// use seeding::restart_seed;
///
/// assert_eq!(restart_seed(42, 0), 42);
/// assert_ne!(restart_seed(42, 1), restart_seed(42, 2));
/// ```
#[inline]
pub fn restart_seed(seed: u64, restart: usize) -> u64 {
    if restart == 0 {
        seed
    } else {
        mix64(seed ^ mix64((restart as u64).wrapping_mul(GOLDEN)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(mix64(0), 0);
        assert_eq!(mix64(GOLDEN), 0xE220_A839_7B1D_CDAF);
        // The formula, spelled out.
        let (s, t, i) = (0x1234_5678_9ABC_DEF0, 0x6D75_6663_2F73_7472, 3);
        assert_eq!(
            derive_seed(s, t, i),
            mix64(mix64(s ^ t).wrapping_add(i.wrapping_mul(GOLDEN)))
        );
        assert_eq!(restart_seed(s, 0), s);
        assert_eq!(restart_seed(s, 2), mix64(s ^ mix64(GOLDEN.wrapping_mul(2))));
    }
}
