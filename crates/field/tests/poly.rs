//! The generic polynomial suites, run for every field implementation and
//! the rationals.
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

field_testkit::poly_suite!(mersenne61, Mersenne61, uniform, 200);
field_testkit::poly_suite!(goldilocks, Goldilocks, uniform, 200);
field_testkit::poly_suite!(mersenne127, Mersenne127, uniform, 200);
field_testkit::poly_suite!(ff_mersenne61, FfMersenne61::new(), uniform, 150);
field_testkit::poly_suite!(ff_mersenne127, FfMersenne127::new(), uniform, 150);
field_testkit::poly_suite!(fp64_small, Fp64::new(65_537).unwrap(), uniform, 200);
field_testkit::poly_suite!(fp64_tiny, Fp64::new(7).unwrap(), uniform, 120);
field_testkit::poly_suite!(fp64_top, Fp64::new(u64::MAX - 58).unwrap(), uniform, 200);
field_testkit::poly_suite!(fp64_proth, Fp64::proth(), uniform, 400);
field_testkit::poly_suite!(big256, *BIG256, uniform, 150, 12);
field_testkit::poly_suite!(big4096, *BIG4096, uniform, 60, 4, 24);
/// The rationals: the same suites with smaller sizes where coefficient
/// growth makes the reference computations expensive (every squaring in
/// `pow_mod` doubles the size of the coefficients).
mod rationals {
    use super::*;
    use field_testkit::poly;

    #[test]
    fn ring_laws() {
        poly::ring_laws(&Rationals, small_rational, 8, 20);
    }
    #[test]
    fn mul_matches_naive() {
        poly::mul_matches_naive(&Rationals, small_rational, 70);
    }
    #[test]
    fn div_rem_roundtrip() {
        poly::div_rem_roundtrip(&Rationals, small_rational, 8, 110);
    }
    #[test]
    fn gcd_properties() {
        poly::gcd_properties(&Rationals, small_rational, 6, 30);
    }
    #[test]
    fn pow_mod_matches_naive() {
        poly::pow_mod_matches_naive(&Rationals, small_rational, 8, 8, 5);
    }
    #[test]
    fn from_roots_and_evaluate() {
        poly::from_roots_and_evaluate(&Rationals, small_rational, 8, 40);
    }
    #[test]
    fn derivative_and_reverse() {
        poly::derivative_and_reverse(&Rationals, small_rational, 8, 30);
    }
}
