//! Shared test machinery for the MUFC workspace (not published).
//!
//! Test logic lives in ordinary generic functions that take a field *value*
//! (so run-time moduli join in); the macros only stamp out `#[test]`
//! wrappers. Fuzz harness bodies live in [`fuzz`] so that `fuzz/` targets
//! are one-liners and stable tests can replay them.

// Test code: these functions panic on a counterexample by design.
#![allow(clippy::missing_panics_doc, clippy::unwrap_used)]

pub mod decoding;
pub mod exact;
pub mod fields;
pub mod fuzz;
pub mod mufc;
pub mod poly;
pub mod sagg;
pub mod secagg;
pub mod seeding;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// A deterministic RNG for a named test: the same label gives the same
/// stream on every machine and every run (unlike `StdRng`, whose algorithm
/// may change between `rand` releases).
pub fn rng(label: &str) -> ChaCha8Rng {
    // FNV-1a of the label, so that labels map to unrelated seeds.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in label.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    ChaCha8Rng::seed_from_u64(h)
}

/// The number of random cases a property test runs: `default`, unless the
/// `PROPTEST_CASES` environment variable says otherwise.
pub fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Known primes of exact bit sizes, as `2^(bits-1) + offset` (the smallest
/// prime above `2^(bits-1)`; offsets found with GMP's `next_prime` and
/// re-checked by [`field::primes::is_prime`] when a field is built).
pub mod known_primes {
    use num_bigint::BigUint;

    fn above_power_of_two(bits: u32, offset: u32) -> BigUint {
        (BigUint::from(1u8) << (bits - 1)) + offset
    }

    /// The smallest prime above `2^255` (256 bits).
    pub fn p256() -> BigUint {
        above_power_of_two(256, 95)
    }
    /// The smallest prime above `2^1023` (1024 bits).
    pub fn p1024() -> BigUint {
        above_power_of_two(1024, 1155)
    }
    /// The smallest prime above `2^4095` (4096 bits).
    pub fn p4096() -> BigUint {
        above_power_of_two(4096, 579)
    }
    /// The smallest prime above `2^8191` (8192 bits).
    pub fn p8192() -> BigUint {
        above_power_of_two(8192, 1911)
    }
}
