//! The generic field suites, run for every implementation.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use std::sync::LazyLock;

use field::{BigPrime, FfMersenne61, FfMersenne127, Fp64, Goldilocks, Mersenne61, Mersenne127};
use testdata::known_primes;

static BIG256: LazyLock<BigPrime> = LazyLock::new(|| BigPrime::new(known_primes::p256()).unwrap());
static BIG4096: LazyLock<BigPrime> =
    LazyLock::new(|| BigPrime::new(known_primes::p4096()).unwrap());
static BIG8192: LazyLock<BigPrime> =
    LazyLock::new(|| BigPrime::new(known_primes::p8192()).unwrap());

field_testkit::field_suite!(mersenne61, Mersenne61);
field_testkit::field_suite!(goldilocks, Goldilocks);
field_testkit::field_suite!(mersenne127, Mersenne127);
field_testkit::field_suite!(ff_mersenne61, FfMersenne61::new());
field_testkit::field_suite!(ff_mersenne127, FfMersenne127::new());
field_testkit::field_suite!(fp64_small, Fp64::new(65_537).unwrap());
field_testkit::field_suite!(fp64_tiny, Fp64::new(3).unwrap());
// The largest prime below 2^64: exercises every carry in Montgomery form.
field_testkit::field_suite!(fp64_top, Fp64::new(u64::MAX - 58).unwrap());
field_testkit::field_suite!(fp64_proth, Fp64::proth());
field_testkit::field_suite!(big256, *BIG256);
field_testkit::field_suite!(big4096, *BIG4096, 64);
field_testkit::field_suite!(big8192, *BIG8192, 16);

mod differential {
    use super::*;
    use field::{P61, P127};
    use field_testkit::fields::differential;
    use num_bigint::BigUint;

    fn big(p: impl Into<BigUint>) -> BigPrime {
        BigPrime::new(p.into()).unwrap()
    }

    #[test]
    fn mersenne61_against_bigprime() {
        differential(&Mersenne61, &big(P61), 512);
    }
    #[test]
    fn ff_mersenne61_against_bigprime() {
        differential(&FfMersenne61::new(), &big(P61), 512);
    }
    #[test]
    fn fp64_against_bigprime() {
        differential(&Fp64::new(P61).unwrap(), &big(P61), 512);
        let top = u64::MAX - 58;
        differential(&Fp64::new(top).unwrap(), &big(top), 512);
    }
    #[test]
    fn mersenne127_against_bigprime() {
        differential(&Mersenne127, &big(P127), 512);
    }
    #[test]
    fn ff_mersenne127_against_bigprime() {
        differential(&FfMersenne127::new(), &big(P127), 512);
    }
}

#[test]
fn fp64_rejects_composites_and_tiny_moduli() {
    assert_eq!(
        Fp64::new(1),
        Err(field::FieldError::ModulusOutOfRange {
            reason: "Fp64 needs an odd prime p >= 3"
        })
    );
    assert!(Fp64::new(2).is_err());
    assert_eq!(Fp64::new(91), Err(field::FieldError::NotPrime));
    assert_eq!(Fp64::new(u64::MAX), Err(field::FieldError::NotPrime));
}

#[test]
fn bigprime_rejects_composites() {
    let composite = known_primes::p256() * 3u32;
    assert_eq!(BigPrime::new(composite), Err(field::FieldError::NotPrime));
}

#[test]
fn contexts_serialize_and_revalidate() {
    let f = Fp64::new(65_537).unwrap();
    let json = serde_json::to_string(&f).unwrap();
    assert_eq!(json, "65537");
    assert_eq!(serde_json::from_str::<Fp64>(&json).unwrap(), f);
    assert!(
        serde_json::from_str::<Fp64>("65535").is_err(),
        "composite must be refused"
    );
    let b = BigPrime::new(known_primes::p256()).unwrap();
    let json = serde_json::to_string(&b).unwrap();
    assert_eq!(serde_json::from_str::<BigPrime>(&json).unwrap(), b);
}
