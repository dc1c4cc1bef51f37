//! The Appendix K integer root finder: random root sets over small,
//! negative and huge ranges, and every kind of broken promise.
#![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

use field::{FieldError, Poly, Rational, Rationals, integer_roots, poly};
use num_bigint::{BigInt, BigRng010};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

const Q: Rationals = Rationals;

fn int(v: i64) -> BigInt {
    BigInt::from(v)
}

fn rat(v: &BigInt) -> Rational {
    Rational::from_integer(v.clone())
}

/// `count` distinct integers in `[low, high]`, sometimes including the
/// ends of the range.
fn root_set(rng: &mut ChaCha8Rng, low: &BigInt, high: &BigInt, count: usize) -> Vec<BigInt> {
    let mut out: Vec<BigInt> = Vec::new();
    if count > 0 && rng.random_range(0..3) == 0 {
        out.push(low.clone());
    }
    if count > out.len() && high != low && rng.random_range(0..3) == 0 {
        out.push(high.clone());
    }
    let upper = high + 1u32;
    while out.len() < count {
        let r = rng.random_bigint_range(low, &upper);
        if !out.contains(&r) {
            out.push(r);
        }
    }
    out
}

/// `prod (x - r)` scaled by a random nonzero rational.
fn planted(rng: &mut ChaCha8Rng, roots: &[BigInt]) -> Poly<Rational> {
    let rs: Vec<Rational> = roots.iter().map(rat).collect();
    let mut num: i64 = rng.random_range(-9..=9);
    if num == 0 {
        num = 1;
    }
    let den: i64 = rng.random_range(1..=7);
    poly::scale(
        &Q,
        &poly::from_roots(&Q, &rs),
        &Rational::new(num, den).unwrap(),
    )
}

fn ranges() -> Vec<(BigInt, BigInt, usize)> {
    let two = BigInt::from(2);
    vec![
        (int(0), int(10), 8),
        (int(-50), int(50), 12),
        (int(-1000), int(-900), 10),
        (int(1), int(1_000_000), 12),
        (int(1), two.pow(200), 8),
        (-two.pow(100), two.pow(100), 8),
        (int(7), int(7), 1),
    ]
}

#[test]
fn random_root_sets() {
    for (k, (low, high, max_n)) in ranges().into_iter().enumerate() {
        for case in 0..8 {
            let rng = &mut field_testkit::poly::case_rng(&format!("introots/{k}"), case);
            let n = rng.random_range(0..=max_n);
            let mut roots = root_set(rng, &low, &high, n);
            let p = planted(rng, &roots);
            let got = integer_roots(&p, &low, &high);
            roots.sort();
            assert_eq!(got, Ok(roots), "range {k}, case {case}, {n} roots");
        }
    }
}

#[test]
fn degenerate_inputs() {
    let (low, high) = (int(-5), int(5));
    assert_eq!(
        integer_roots(&Poly::zero(), &low, &high),
        Err(FieldError::ZeroPolynomial)
    );
    let constant = Poly::constant(&Q, Rational::new(3, 7).unwrap());
    assert_eq!(integer_roots(&constant, &low, &high), Ok(vec![]));
    // An empty range can hold no root.
    let p = poly::from_roots(&Q, &[rat(&int(1))]);
    assert!(matches!(
        integer_roots(&p, &high, &low),
        Err(FieldError::RootsOutOfRange { .. })
    ));
    assert_eq!(integer_roots(&constant, &high, &low), Ok(vec![]));
}

#[test]
fn rejects_broken_promises() {
    for (k, (low, high, max_n)) in ranges().into_iter().enumerate() {
        for case in 0..6 {
            let rng = &mut field_testkit::poly::case_rng(&format!("introots/reject/{k}"), case);
            let n = rng.random_range(1..=max_n);
            let roots = root_set(rng, &low, &high, n);
            let base = planted(rng, &roots);
            let ctx = format!("range {k}, case {case}, {n} roots");
            let times = |extra: Vec<Rational>| poly::mul(&Q, &base, &Poly::from_coeffs(&Q, extra));
            let r = |v: i64| Rational::from_integer(v);
            // A root 1/2: the monic polynomial is not integral.
            let half = times(vec![r(-1), r(2)]);
            assert_eq!(
                integer_roots(&half, &low, &high),
                Err(FieldError::NotIntegral),
                "{ctx}"
            );
            // Irrational real roots (+-sqrt 2) and no real roots (+-i).
            for extra in [vec![r(-2), r(0), r(1)], vec![r(1), r(0), r(1)]] {
                let p = times(extra);
                assert!(
                    matches!(
                        integer_roots(&p, &low, &high),
                        Err(FieldError::RootsOutOfRange { .. })
                    ),
                    "{ctx}"
                );
            }
            // One root just outside the range, on either side.
            for outside in [&low - 1u32, &high + 1u32] {
                let p = poly::mul(&Q, &base, &poly::from_roots(&Q, &[rat(&outside)]));
                assert!(
                    matches!(
                        integer_roots(&p, &low, &high),
                        Err(FieldError::RootsOutOfRange { .. })
                    ),
                    "{ctx}: root {outside}"
                );
            }
            // A repeated root (twice or three times).
            let i = rng.random_range(0..n);
            let double = poly::mul(&Q, &base, &poly::from_roots(&Q, &[rat(&roots[i])]));
            assert_eq!(
                integer_roots(&double, &low, &high),
                Err(FieldError::RepeatedRoot),
                "{ctx}"
            );
            let triple = poly::mul(&Q, &double, &poly::from_roots(&Q, &[rat(&roots[i])]));
            assert_eq!(
                integer_roots(&triple, &low, &high),
                Err(FieldError::RepeatedRoot),
                "{ctx}"
            );
        }
    }
}
