//! Berlekamp-Massey: exhaustive search over tiny fields, and power sums of
//! random sparse vectors over every field and the rationals.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::LazyLock;

use field::{
    BigPrime, FfMersenne61, FfMersenne127, Fp64, Goldilocks, Mersenne61, Mersenne127, Rationals,
};
use field_testkit::poly::{small_rational, uniform};
use testdata::known_primes;

static BIG256: LazyLock<BigPrime> = LazyLock::new(|| BigPrime::new(known_primes::p256()).unwrap());
static BIG4096: LazyLock<BigPrime> =
    LazyLock::new(|| BigPrime::new(known_primes::p4096()).unwrap());

#[test]
fn brute_force_gf5() {
    // Every sequence of length <= 5 over GF(5), then longer random ones.
    field_testkit::decoding::bm_brute_force(&Fp64::new(5).unwrap(), 5, 100);
}

#[test]
fn brute_force_gf7() {
    field_testkit::decoding::bm_brute_force(&Fp64::new(7).unwrap(), 4, 100);
}

field_testkit::bm_suite!(mersenne61, Mersenne61, uniform, 24, 60);
field_testkit::bm_suite!(goldilocks, Goldilocks, uniform, 24, 60);
field_testkit::bm_suite!(mersenne127, Mersenne127, uniform, 24, 60);
field_testkit::bm_suite!(ff_mersenne61, FfMersenne61::new(), uniform, 16, 40);
field_testkit::bm_suite!(ff_mersenne127, FfMersenne127::new(), uniform, 16, 40);
field_testkit::bm_suite!(fp64_small, Fp64::new(65_537).unwrap(), uniform, 24, 60);
field_testkit::bm_suite!(fp64_tiny, Fp64::new(7).unwrap(), uniform, 24, 6);
field_testkit::bm_suite!(fp64_top, Fp64::new(u64::MAX - 58).unwrap(), uniform, 24, 60);
field_testkit::bm_suite!(fp64_proth, Fp64::proth(), uniform, 24, 60);
field_testkit::bm_suite!(big256, *BIG256, uniform, 12, 40);
field_testkit::bm_suite!(big4096, *BIG4096, uniform, 4, 20);
field_testkit::bm_suite!(rationals, Rationals, small_rational, 12, 10);
