//! Root finding over every finite field: random products of distinct
//! linear factors, rejections, and an exhaustive check over tiny fields.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::LazyLock;

use field::{BigPrime, FfMersenne61, FfMersenne127, Fp64, Goldilocks, Mersenne61, Mersenne127};
use testdata::known_primes;

static BIG256: LazyLock<BigPrime> = LazyLock::new(|| BigPrime::new(known_primes::p256()).unwrap());
static BIG4096: LazyLock<BigPrime> =
    LazyLock::new(|| BigPrime::new(known_primes::p4096()).unwrap());

field_testkit::roots_suite!(mersenne61, Mersenne61, 16, 200);
field_testkit::roots_suite!(goldilocks, Goldilocks, 16, 200);
field_testkit::roots_suite!(mersenne127, Mersenne127, 8, 200);
field_testkit::roots_suite!(ff_mersenne61, FfMersenne61::new(), 6, 120);
field_testkit::roots_suite!(ff_mersenne127, FfMersenne127::new(), 4, 120);
field_testkit::roots_suite!(fp64_small, Fp64::new(65_537).unwrap(), 16, 200);
// The tangent Graeffe path: a Proth prime, and small fields where
// collisions are the rule and rounds stall into Cantor-Zassenhaus.
field_testkit::roots_suite!(fp64_proth, Fp64::proth(), 12, 600);
field_testkit::roots_suite!(fp64_7681, Fp64::new(7681).unwrap(), 8, 1500);
field_testkit::roots_suite!(fp64_257, Fp64::new(257).unwrap(), 8, 200);
field_testkit::roots_suite!(fp64_top, Fp64::new(u64::MAX - 58).unwrap(), 12, 200);
field_testkit::roots_suite!(big256, *BIG256, 2, 200);
field_testkit::roots_suite!(big4096, *BIG4096, 1, 3);

#[test]
fn exhaustive_gf5() {
    // Every monic polynomial of degree <= 4 over GF(5) (5 = 1 mod 4: the
    // quadratic shortcut runs Tonelli-Shanks).
    field_testkit::decoding::roots_exhaustive(&Fp64::new(5).unwrap(), 4);
}

#[test]
fn exhaustive_gf7() {
    // 7 = 3 mod 4: the quadratic shortcut takes the (q+1)/4 power.
    field_testkit::decoding::roots_exhaustive(&Fp64::new(7).unwrap(), 3);
}

#[test]
fn exhaustive_gf3() {
    // (q-1)/2 = 1: Cantor-Zassenhaus with the smallest exponent.
    field_testkit::decoding::roots_exhaustive(&Fp64::new(3).unwrap(), 5);
}

#[test]
fn tiny_field_full_splits() {
    // x^q - x has every element as a root.
    use field::{Field, Poly, find_roots};
    for q in [3u64, 5, 7, 11, 13] {
        let f = Fp64::new(q).unwrap();
        let mut c = vec![f.zero(); usize::try_from(q).unwrap() + 1];
        c[1] = f.neg(&f.one());
        c[usize::try_from(q).unwrap()] = f.one();
        let p = Poly::from_coeffs(&f, c);
        let roots = find_roots(&f, &p, &mut testdata::rng("full splits")).unwrap();
        let expect: Vec<_> = (0..q).map(|v| f.from_u64(v)).collect();
        assert_eq!(roots, expect, "q = {q}");
    }
}
