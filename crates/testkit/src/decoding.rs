//! Generic property suites for the decoding algorithms of `field`:
//! Berlekamp-Massey and the transposed Vandermonde solve, instantiated
//! for every field with [`bm_suite!`](crate::bm_suite) and
//! [`vandermonde_suite!`](crate::vandermonde_suite).

use field::{
    Field, FieldError, FiniteField, Poly, berlekamp_massey, poly, solve_transposed_vandermonde,
};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::poly::{case_rng, distinct, nonzero};

/// Whether `c` (with `c[0] = 1`, zero beyond its length) is a connection
/// polynomial of length `length` for `s`:
/// `sum_{i=0..L} c_i s_(n-i) = 0` for every `n` in `L..s.len()`.
pub fn satisfies<F: Field>(f: &F, c: &Poly<F::Elem>, length: usize, s: &[F::Elem]) -> bool {
    if c.coeff(0).is_none_or(|c0| !f.is_one(c0)) || c.degree().unwrap_or(0) > length {
        return false;
    }
    (length..s.len()).all(|n| {
        let mut acc = f.zero();
        for (i, ci) in c.coeffs().iter().enumerate() {
            acc = f.add(&acc, &f.mul(ci, &s[n - i]));
        }
        f.is_zero(&acc)
    })
}

/// The linear complexity of `s` by exhaustive search over every connection
/// polynomial of every length (only for tiny fields and short sequences).
pub fn brute_force_complexity<F: FiniteField>(f: &F, s: &[F::Elem]) -> usize {
    let q = f.to_u64(&f.neg(&f.one())).unwrap() + 1;
    for length in 0..=s.len() {
        let total = q.pow(u32::try_from(length).unwrap());
        for code in 0..total {
            let mut c = vec![f.one()];
            let mut rest = code;
            for _ in 0..length {
                c.push(f.from_u64(rest % q));
                rest /= q;
            }
            if satisfies(f, &Poly::from_coeffs(f, c), length, s) {
                return length;
            }
        }
    }
    s.len()
}

/// Berlekamp-Massey against exhaustive search: every sequence of length up
/// to `max_len` over the tiny field `f` (order at most 7), then `random`
/// longer sequences. The length must be the brute-force minimum, the
/// connection polynomial must generate the sequence, and a bound one below
/// the length must fail with `DegreeExceeded`.
pub fn bm_brute_force<F: FiniteField>(f: &F, max_len: usize, random: usize) {
    let q = f.to_u64(&f.neg(&f.one())).unwrap() + 1;
    assert!(q <= 7, "exhaustive search needs a tiny field");
    let check = |s: &[F::Elem]| {
        let expect = brute_force_complexity(f, s);
        let rec = berlekamp_massey(f, s, s.len()).unwrap();
        assert_eq!(rec.length, expect, "sequence {s:?}");
        assert!(
            satisfies(f, &rec.connection, rec.length, s),
            "sequence {s:?}"
        );
        if expect > 0 {
            match berlekamp_massey(f, s, expect - 1) {
                Err(FieldError::DegreeExceeded { max, needed }) => {
                    assert_eq!(max, expect - 1);
                    assert!(needed >= expect, "sequence {s:?}: needed {needed}");
                }
                other => panic!("sequence {s:?}: expected DegreeExceeded, got {other:?}"),
            }
        }
    };
    for len in 0..=max_len {
        let total = q.pow(u32::try_from(len).unwrap());
        for code in 0..total {
            let mut rest = code;
            let s: Vec<F::Elem> = (0..len)
                .map(|_| {
                    let v = f.from_u64(rest % q);
                    rest /= q;
                    v
                })
                .collect();
            check(&s);
        }
    }
    let mut rng = crate::rng("bm/brute_force/random");
    for _ in 0..random {
        let len = rng.random_range(max_len + 1..=max_len + 3);
        let s: Vec<F::Elem> = (0..len).map(|_| f.random(&mut rng)).collect();
        check(&s);
    }
}

/// Power sums `s_i = sum_j v_j x_j^(i-1)`, `i = 1..count`.
pub fn power_sums<F: Field>(f: &F, x: &[F::Elem], v: &[F::Elem], count: usize) -> Vec<F::Elem> {
    let mut powers: Vec<F::Elem> = vec![f.one(); x.len()];
    (0..count)
        .map(|_| {
            let mut s = f.zero();
            for ((p, xj), vj) in powers.iter_mut().zip(x).zip(v) {
                s = f.add(&s, &f.mul(vj, p));
                *p = f.mul(p, xj);
            }
            s
        })
        .collect()
}

/// Berlekamp-Massey on the power sums of random sparse vectors (distinct
/// nonzero positions, nonzero values): the length is the number of terms
/// and the connection polynomial is the locator `prod_j (1 - x_j x)`, with
/// any number of extra syndromes; a bound below the number of terms fails.
pub fn bm_power_sums<F: Field, S>(f: &F, sample: S, cases: usize, max_terms: usize)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    for i in 0..crate::cases(u32::try_from(cases).unwrap()) as usize {
        let rng = &mut case_rng("bm/power_sums", i);
        let k = if i == 0 {
            0
        } else {
            rng.random_range(1..=max_terms)
        };
        let nonzero_sample = |f: &F, r: &mut ChaCha8Rng| nonzero(f, &sample, r);
        let x = distinct(f, &nonzero_sample, rng, k);
        let v: Vec<F::Elem> = (0..k).map(|_| nonzero(f, &sample, rng)).collect();
        let extra = rng.random_range(0..3);
        let s = power_sums(f, &x, &v, 2 * k + extra);
        let rec = berlekamp_massey(f, &s, k).unwrap();
        let locator = poly::reverse(f, &poly::from_roots(f, &x), k + 1);
        let ctx = format!("case {i}: {k} terms");
        assert_eq!(rec.length, k, "{ctx}");
        assert_eq!(rec.connection, locator, "{ctx}");
        if k > 0 {
            assert!(
                matches!(
                    berlekamp_massey(f, &s, k - 1),
                    Err(FieldError::DegreeExceeded { max, needed }) if max == k - 1 && needed >= k
                ),
                "{ctx}: bound k - 1 must fail"
            );
        }
    }
}

/// The transposed Vandermonde solve on random systems (distinct nodes, one
/// of them sometimes zero): the solution equals the planted vector, and
/// re-multiplying it gives back the right-hand side.
pub fn vandermonde_random<F: Field, S>(f: &F, sample: S, cases: usize, max_m: usize)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    let n = crate::cases(u32::try_from(cases).unwrap()) as usize;
    for i in 0..n {
        let rng = &mut case_rng("vandermonde/random", i);
        let m = if i + 1 == n {
            max_m
        } else {
            rng.random_range(0..=max_m)
        };
        let mut x = distinct(f, &sample, rng, m);
        if m > 0 && i % 3 == 0 && !x.contains(&f.zero()) {
            x[0] = f.zero();
        }
        let v: Vec<F::Elem> = (0..m).map(|_| sample(f, rng)).collect();
        let s = power_sums(f, &x, &v, m);
        let got = solve_transposed_vandermonde(f, &x, &s).unwrap();
        assert_eq!(got, v, "case {i}: m = {m}");
        assert_eq!(power_sums(f, &x, &got, m), s, "case {i}: re-multiplied");
    }
}

/// The solve rejects repeated nodes and mismatched lengths, and accepts the
/// empty system.
pub fn vandermonde_rejections<F: Field, S>(f: &F, sample: S)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    let mut rng = crate::rng("vandermonde/rejections");
    assert_eq!(solve_transposed_vandermonde(f, &[], &[]), Ok(vec![]));
    for m in 2..8 {
        let mut x = distinct(f, &sample, &mut rng, m);
        x[m - 1] = x[rng.random_range(0..m - 1)].clone();
        let s: Vec<F::Elem> = (0..m).map(|_| sample(f, &mut rng)).collect();
        assert_eq!(
            solve_transposed_vandermonde(f, &x, &s),
            Err(FieldError::RepeatedNodes),
            "m = {m}"
        );
        assert_eq!(
            solve_transposed_vandermonde(f, &x[..m - 1], &s),
            Err(FieldError::LengthMismatch {
                left: m - 1,
                right: m
            })
        );
    }
}

/// Stamps out the Berlekamp-Massey suite on power sums for one field (the
/// rationals included): module name, field expression, sampler, number of
/// cases, largest number of terms.
#[macro_export]
macro_rules! bm_suite {
    ($name:ident, $field:expr, $sample:expr, $cases:expr, $max_terms:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn bm_power_sums() {
                $crate::decoding::bm_power_sums(&$field, $sample, $cases, $max_terms);
            }
        }
    };
}

/// Stamps out the transposed Vandermonde suites for one field (the
/// rationals included): module name, field expression, sampler, number of
/// cases, largest number of unknowns.
#[macro_export]
macro_rules! vandermonde_suite {
    ($name:ident, $field:expr, $sample:expr, $cases:expr, $max_m:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn vandermonde_random() {
                $crate::decoding::vandermonde_random(&$field, $sample, $cases, $max_m);
            }
            #[test]
            fn vandermonde_rejections() {
                $crate::decoding::vandermonde_rejections(&$field, $sample);
            }
        }
    };
}
