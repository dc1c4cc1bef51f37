//! Generic property suites for every [`Field`](field::Field) and [`FiniteField`]
//! implementation.
//!
//! Each function panics (through `prop_assert!` and `assert!`) on the first
//! counterexample; proptest shrinks the seeds that produced it. Instantiate
//! them for a field with [`field_suite!`](crate::field_suite).

use field::FiniteField;
use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, Zero};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Elements that break careless reductions: 0, 1, 2, -1, -2, (p-1)/2,
/// (p+1)/2, and small powers of two around the word boundaries that fit.
pub fn edge_elements<F: FiniteField>(f: &F) -> Vec<F::Elem> {
    let p = f.characteristic();
    let mut vals: Vec<BigUint> = vec![
        BigUint::zero(),
        BigUint::one(),
        BigUint::from(2u8),
        &p - 1u32,
        &p - 2u32,
        (&p - 1u32) >> 1u32,
        (&p + 1u32) >> 1u32,
    ];
    for k in [31u32, 32, 60, 63, 64, 126, 127, 128] {
        let v = BigUint::one() << k;
        if v < p {
            vals.push(&v - 1u32);
            vals.push(v);
        }
    }
    vals.iter().map(|v| f.from_biguint(v)).collect()
}

/// An element drawn from a seed: uniform most of the time, an edge element
/// otherwise, so that shrinking and edge coverage both work.
pub fn elem_from_seed<F: FiniteField>(f: &F, seed: u64) -> F::Elem {
    let edges = edge_elements(f);
    let n = edges.len() as u64;
    if seed.is_multiple_of(4) {
        let i = usize::try_from((seed / 4) % n).unwrap_or(0);
        edges[i].clone()
    } else {
        f.random(&mut ChaCha8Rng::seed_from_u64(seed))
    }
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases: crate::cases(cases),
        failure_persistence: None,
        ..Config::default()
    })
}

/// Ring and field laws on triples of elements: associativity,
/// commutativity, distributivity, identities, negation, subtraction,
/// inverses, division, squaring, doubling and `dot`.
pub fn field_laws<F: FiniteField>(f: &F, cases: u32) {
    let zero = f.zero();
    let one = f.one();
    assert!(f.is_zero(&zero));
    assert!(f.is_one(&one));
    assert!(!f.is_zero(&one), "0 = 1");
    assert_eq!(f.inv(&zero), None, "zero must not be invertible");
    runner(cases)
        .run(
            &(any::<u64>(), any::<u64>(), any::<u64>()),
            |(sa, sb, sc)| {
                let (a, b, c) = (
                    elem_from_seed(f, sa),
                    elem_from_seed(f, sb),
                    elem_from_seed(f, sc),
                );
                prop_assert_eq!(f.add(&a, &b), f.add(&b, &a));
                prop_assert_eq!(f.mul(&a, &b), f.mul(&b, &a));
                prop_assert_eq!(f.add(&f.add(&a, &b), &c), f.add(&a, &f.add(&b, &c)));
                prop_assert_eq!(f.mul(&f.mul(&a, &b), &c), f.mul(&a, &f.mul(&b, &c)));
                prop_assert_eq!(
                    f.mul(&a, &f.add(&b, &c)),
                    f.add(&f.mul(&a, &b), &f.mul(&a, &c))
                );
                prop_assert_eq!(&f.add(&a, &zero), &a);
                prop_assert_eq!(&f.mul(&a, &one), &a);
                prop_assert!(f.is_zero(&f.mul(&a, &zero)));
                prop_assert!(f.is_zero(&f.add(&a, &f.neg(&a))));
                prop_assert_eq!(f.sub(&a, &b), f.add(&a, &f.neg(&b)));
                prop_assert_eq!(&f.add(&f.sub(&a, &b), &b), &a);
                prop_assert_eq!(f.square(&a), f.mul(&a, &a));
                prop_assert_eq!(f.double(&a), f.add(&a, &a));
                match f.inv(&a) {
                    None => prop_assert!(f.is_zero(&a)),
                    Some(ai) => {
                        prop_assert!(!f.is_zero(&a));
                        prop_assert_eq!(&f.mul(&a, &ai), &one);
                        prop_assert_eq!(f.div(&b, &a), Some(f.mul(&b, &ai)));
                    }
                }
                let mut m = a.clone();
                f.mul_assign(&mut m, &b);
                prop_assert_eq!(m, f.mul(&a, &b));
                let mut s = a.clone();
                f.add_assign(&mut s, &b);
                prop_assert_eq!(s.clone(), f.add(&a, &b));
                f.sub_assign(&mut s, &b);
                prop_assert_eq!(&s, &a);
                let xs = [a.clone(), b.clone(), c.clone()];
                let ys = [c.clone(), a.clone(), b.clone()];
                let naive = f.add(&f.add(&f.mul(&a, &c), &f.mul(&b, &a)), &f.mul(&c, &b));
                prop_assert_eq!(f.dot(&xs, &ys), naive);
                Ok(())
            },
        )
        .unwrap();
}

/// Conversions: `from_u64`, `from_i64`, `from_biguint` and `to_biguint`
/// agree with integer arithmetic modulo `p`; `pow` agrees with repeated
/// multiplication and with Fermat's little theorem; the centered
/// representative lifts back.
pub fn conversions<F: FiniteField>(f: &F, cases: u32) {
    let p = f.characteristic();
    assert_eq!(f.order(), p, "prime fields have order = characteristic");
    assert_eq!(f.modulus_bits(), p.bits());
    runner(cases)
        .run(
            &(any::<u64>(), any::<u64>(), any::<i64>(), 0u64..200),
            |(s, v, w, e)| {
                let a = elem_from_seed(f, s);
                let big = f.to_biguint(&a);
                prop_assert!(big < p);
                prop_assert_eq!(&f.from_biguint(&big), &a);
                prop_assert_eq!(&f.from_biguint(&(&big + &p * 3u32)), &a);
                prop_assert_eq!(f.to_biguint(&f.from_u64(v)), BigUint::from(v) % &p);
                let wi = f.from_i64(w);
                let expect = if w >= 0 {
                    BigUint::from(w.unsigned_abs()) % &p
                } else {
                    (&p - BigUint::from(w.unsigned_abs()) % &p) % &p
                };
                prop_assert_eq!(f.to_biguint(&wi), expect);
                let mut naive = f.one();
                for _ in 0..e {
                    naive = f.mul(&naive, &a);
                }
                prop_assert_eq!(&f.pow_u64(&a, e), &naive);
                prop_assert_eq!(f.pow(&a, &BigUint::from(e)), naive);
                if !f.is_zero(&a) {
                    prop_assert_eq!(f.pow(&a, &(&p - 1u32)), f.one());
                }
                prop_assert_eq!(&f.from_bigint(&f.to_centered(&a)), &a);
                Ok(())
            },
        )
        .unwrap();
}

/// The canonical encoding: fixed width, round trip, one encoding per
/// element, and rejection of short, long and non-canonical input.
pub fn encoding<F: FiniteField>(f: &F, cases: u32) {
    let len = f.byte_len();
    assert_eq!(len as u64, f.modulus_bits().div_ceil(8));
    let p = f.characteristic();
    // p itself and the all-ones pattern of the width are not canonical.
    let mut p_bytes = p.to_bytes_le();
    p_bytes.resize(len, 0);
    assert_eq!(f.from_bytes(&p_bytes), Err(field::FieldError::NonCanonical));
    assert_eq!(
        f.from_bytes(&vec![0xff; len]),
        Err(field::FieldError::NonCanonical)
    );
    assert!(matches!(
        f.from_bytes(&[]),
        Err(field::FieldError::WrongLength { found: 0, .. })
    ));
    runner(cases)
        .run(&(any::<u64>(), any::<Vec<u8>>()), |(s, junk)| {
            let a = elem_from_seed(f, s);
            let bytes = f.to_bytes(&a);
            prop_assert_eq!(bytes.len(), len);
            prop_assert_eq!(f.from_bytes(&bytes), Ok(a.clone()));
            prop_assert_eq!(BigUint::from_bytes_le(&bytes), f.to_biguint(&a));
            let mut longer = bytes.clone();
            longer.push(0);
            prop_assert!(
                matches!(
                    f.from_bytes(&longer),
                    Err(field::FieldError::WrongLength { .. })
                ),
                "longer input must be rejected"
            );
            prop_assert!(
                matches!(
                    f.from_bytes(&bytes[..len - 1]),
                    Err(field::FieldError::WrongLength { .. })
                ),
                "short input must be rejected"
            );
            // Arbitrary bytes: Ok exactly when canonical, and then it
            // round-trips.
            match f.from_bytes(&junk) {
                Ok(e) => {
                    prop_assert_eq!(junk.len(), len);
                    prop_assert!(BigUint::from_bytes_le(&junk) < p);
                    prop_assert_eq!(f.to_bytes(&e), junk);
                }
                Err(_) => prop_assert!(junk.len() != len || BigUint::from_bytes_le(&junk) >= p),
            }
            Ok(())
        })
        .unwrap();
}

/// `random` is uniform: a chi-square test of the residues modulo a small
/// number of buckets, and no value outside `0..p`.
pub fn random_is_uniform<F: FiniteField>(f: &F) {
    let mut rng = crate::rng("random_is_uniform");
    let p = f.characteristic();
    // At most 16 buckets, fewer for tiny fields.
    let buckets = u32::try_from(p.clone()).map_or(16, |v| v.min(16));
    // Bucket by value * buckets / p so every bucket has (nearly) equal mass.
    let mut counts = vec![0u64; buckets as usize];
    let draws = 16_000u64;
    for _ in 0..draws {
        let v = f.to_biguint(&f.random(&mut rng));
        assert!(v < p);
        let b = (v * buckets) / &p;
        let i = usize::try_from(b).unwrap_or(0);
        counts[i] += 1;
    }
    // Bucket masses differ by at most one element in p; exact expectation:
    let expect: Vec<f64> = (0..buckets)
        .map(|i| {
            // #{v < p : v * buckets / p == i} = ceil((i+1) p / b) - ceil(i p / b)
            let hi: BigUint = (&p * (i + 1)).div_ceil(&BigUint::from(buckets));
            let lo: BigUint = (&p * i).div_ceil(&BigUint::from(buckets));
            let share = ratio(&(hi - lo), &p);
            share * draws as f64
        })
        .collect();
    let chi2: f64 = counts
        .iter()
        .zip(&expect)
        .map(|(&c, &e)| {
            let d = c as f64 - e;
            d * d / e
        })
        .sum();
    // Upper 0.001 quantiles of chi-square with 1..=15 degrees of freedom.
    const Q999: [f64; 15] = [
        10.83, 13.82, 16.27, 18.47, 20.52, 22.46, 24.32, 26.12, 27.88, 29.59, 31.26, 32.91, 34.53,
        36.12, 37.70,
    ];
    let limit = Q999[buckets as usize - 2];
    assert!(chi2 < limit, "chi-square {chi2} over {counts:?}");
}

/// `a / b` as an `f64`, for big integers of any size.
fn ratio(a: &BigUint, b: &BigUint) -> f64 {
    let shift = b.bits().saturating_sub(60);
    let (a, b) = (a >> shift, b >> shift);
    let (a, b): (u64, u64) = (a.try_into().unwrap_or(u64::MAX), b.try_into().unwrap_or(1));
    a as f64 / b as f64
}

/// `batch_inv` agrees with elementwise `inv`, and refuses a zero.
pub fn batch_inversion<F: FiniteField>(f: &F) {
    let mut rng = crate::rng("batch_inversion");
    let mut v: Vec<F::Elem> = (0..37)
        .map(|_| f.random(&mut rng))
        .filter(|x| !f.is_zero(x))
        .collect();
    let expect: Vec<F::Elem> = v.iter().map(|x| f.inv(x).unwrap()).collect();
    assert!(f.batch_inv(&mut v));
    assert_eq!(v, expect);
    let mut with_zero = vec![f.one(), f.zero()];
    assert!(!f.batch_inv(&mut with_zero));
    assert_eq!(with_zero, vec![f.one(), f.zero()]);
}

/// Stamps out the generic suites as `#[test]`s for one field, given a
/// module name and an expression that builds the field.
///
/// ```ignore
/// field_testkit::field_suite!(mersenne61, field::Mersenne61);
/// field_testkit::field_suite!(big256, field::BigPrime::new(p256()).unwrap());
/// ```
#[macro_export]
macro_rules! field_suite {
    ($name:ident, $field:expr) => {
        $crate::field_suite!($name, $field, 256);
    };
    ($name:ident, $field:expr, $cases:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn field_laws() {
                $crate::fields::field_laws(&$field, $cases);
            }
            #[test]
            fn conversions() {
                $crate::fields::conversions(&$field, $cases);
            }
            #[test]
            fn encoding() {
                $crate::fields::encoding(&$field, $cases);
            }
            #[test]
            fn random_is_uniform() {
                $crate::fields::random_is_uniform(&$field);
            }
            #[test]
            fn batch_inversion() {
                $crate::fields::batch_inversion(&$field);
            }
        }
    };
}

/// Differential check: two implementations of the same prime field agree
/// on every operation, compared through canonical integers. Run each fast
/// field against [`field::BigPrime`] of the same modulus.
pub fn differential<F: FiniteField, G: FiniteField>(f: &F, g: &G, cases: u32) {
    assert_eq!(f.characteristic(), g.characteristic(), "not the same field");
    let p = f.characteristic();
    runner(cases)
        .run(
            &(any::<u128>(), any::<u128>(), any::<bool>()),
            |(x, y, small)| {
                let (x, y) = if small {
                    (BigUint::from(x % 1000), BigUint::from(y % 1000))
                } else {
                    (BigUint::from(x) % &p, BigUint::from(y) % &p)
                };
                let (fa, fb) = (f.from_biguint(&x), f.from_biguint(&y));
                let (ga, gb) = (g.from_biguint(&x), g.from_biguint(&y));
                prop_assert_eq!(
                    f.to_biguint(&f.add(&fa, &fb)),
                    g.to_biguint(&g.add(&ga, &gb))
                );
                prop_assert_eq!(
                    f.to_biguint(&f.sub(&fa, &fb)),
                    g.to_biguint(&g.sub(&ga, &gb))
                );
                prop_assert_eq!(
                    f.to_biguint(&f.mul(&fa, &fb)),
                    g.to_biguint(&g.mul(&ga, &gb))
                );
                prop_assert_eq!(f.to_biguint(&f.neg(&fa)), g.to_biguint(&g.neg(&ga)));
                prop_assert_eq!(
                    f.inv(&fa).map(|v| f.to_biguint(&v)),
                    g.inv(&ga).map(|v| g.to_biguint(&v))
                );
                prop_assert_eq!(f.to_bytes(&fa), g.to_bytes(&ga));
                Ok(())
            },
        )
        .unwrap();
}
