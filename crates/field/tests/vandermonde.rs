//! The transposed Vandermonde solve on random systems over every field and
//! the rationals, and its rejections.
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

field_testkit::vandermonde_suite!(mersenne61, Mersenne61, uniform, 24, 150);
field_testkit::vandermonde_suite!(goldilocks, Goldilocks, uniform, 24, 300);
field_testkit::vandermonde_suite!(mersenne127, Mersenne127, uniform, 24, 150);
field_testkit::vandermonde_suite!(ff_mersenne61, FfMersenne61::new(), uniform, 16, 100);
field_testkit::vandermonde_suite!(ff_mersenne127, FfMersenne127::new(), uniform, 16, 100);
field_testkit::vandermonde_suite!(fp64_small, Fp64::new(65_537).unwrap(), uniform, 24, 150);
field_testkit::vandermonde_suite!(fp64_tiny, Fp64::new(11).unwrap(), uniform, 24, 11);
field_testkit::vandermonde_suite!(
    fp64_top,
    Fp64::new(u64::MAX - 58).unwrap(),
    uniform,
    24,
    150
);
field_testkit::vandermonde_suite!(fp64_proth, Fp64::proth(), uniform, 24, 1600);
field_testkit::vandermonde_suite!(big256, *BIG256, uniform, 12, 80);
field_testkit::vandermonde_suite!(big4096, *BIG4096, uniform, 4, 30);
field_testkit::vandermonde_suite!(rationals, Rationals, small_rational, 12, 20);
