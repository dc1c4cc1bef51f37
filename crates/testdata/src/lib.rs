//! Test data shared by every crate's tests, with no workspace dependency
//! (so that a crate's tests build nothing of the workspace but that crate):
//! the labelled deterministic RNG every suite draws from, the number of
//! property cases, and known primes of exact sizes. Not published.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// FNV-1a over little-endian words and bytes: the hash of the digest
/// tests (a committed `u64` that pins results bit for bit) and of
/// [`rng`]'s labels.
///
/// # Example
///
/// ```
/// let mut h = testdata::Fnv::new();
/// h.add(7);
/// h.add_f64s(&[0.5, -1.0]);
/// assert_ne!(h.finish(), testdata::Fnv::new().finish());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Fnv(u64);

impl Fnv {
    /// The FNV-1a offset basis.
    pub fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    /// Hashes the bytes.
    pub fn add_bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }

    /// Hashes the little-endian bytes of `v`.
    pub fn add(&mut self, v: u64) {
        self.add_bytes(&v.to_le_bytes());
    }

    /// Hashes the bits of every float.
    pub fn add_f64s<'a>(&mut self, xs: impl IntoIterator<Item = &'a f64>) {
        xs.into_iter().for_each(|x| self.add(x.to_bits()));
    }

    /// The hash so far.
    pub fn finish(&self) -> u64 {
        self.0
    }
}

impl Default for Fnv {
    fn default() -> Self {
        Self::new()
    }
}

/// A deterministic RNG for a named test: the same label gives the same
/// stream on every machine and every run (unlike `StdRng`, whose algorithm
/// may change between `rand` releases).
pub fn rng(label: &str) -> ChaCha8Rng {
    // FNV-1a of the label, so that labels map to unrelated seeds.
    let mut h = Fnv::new();
    h.add_bytes(label.as_bytes());
    ChaCha8Rng::seed_from_u64(h.finish())
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
/// re-checked by `field::primes::is_prime` when a field is built).
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

/// The workspace crates a manifest names (as dependencies of any kind,
/// or as the package itself: `name = ...` lines are not read), in the
/// order it names them: what a layer's tests may build, checked on the
/// manifests (`crates/*/tests/deps.rs`).
///
/// # Panics
///
/// If the manifest cannot be read.
pub fn workspace_deps(manifest: &std::path::Path) -> Vec<String> {
    const MEMBERS: [&str; 17] = [
        "field",
        "field-testkit",
        "masked-sum",
        "sum-testkit",
        "sagg-testkit",
        "seeding-testkit",
        "testdata",
        "mufc-testkit",
        "app-testkit",
        "syndrome-agg",
        "seeding",
        "mufc",
        "mufc-store",
        "mufc-cli",
        "mufc-net",
        "baselines",
        "mufc-tests",
    ];
    let text =
        std::fs::read_to_string(manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let mut found: Vec<String> = Vec::new();
    for line in text.lines() {
        let name = line
            .split(['=', '.', ' '])
            .next()
            .unwrap_or_default()
            .trim();
        if MEMBERS.contains(&name) && !found.iter().any(|f| f == name) {
            found.push(name.to_string());
        }
    }
    found
}
