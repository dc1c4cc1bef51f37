//! Generic property suites for the decoding algorithms of `field`:
//! Berlekamp-Massey, root finding and the transposed Vandermonde solve,
//! instantiated for every field with [`bm_suite!`](crate::bm_suite),
//! [`roots_suite!`](crate::roots_suite) and
//! [`vandermonde_suite!`](crate::vandermonde_suite).

use field::{
    Field, FieldError, FiniteField, Poly, TransposedVandermonde, berlekamp_massey, find_roots,
    poly, solve_transposed_vandermonde,
};
use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::poly::{case_rng, distinct, naive_eval, nonzero};

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

/// Roots of random products of distinct linear factors (times a random
/// nonzero constant), degrees up to `max_deg` (the last case has exactly
/// `max_deg`), come back exactly, sorted by canonical value.
pub fn roots_of_split_products<F: FiniteField>(f: &F, cases: usize, max_deg: usize) {
    let sample = |f: &F, r: &mut ChaCha8Rng| f.random(r);
    let n = crate::cases(u32::try_from(cases).unwrap()) as usize;
    for i in 0..n {
        let rng = &mut case_rng("roots/split_products", i);
        let deg = if i + 1 == n {
            max_deg
        } else {
            rng.random_range(0..=max_deg)
        };
        let mut roots = distinct(f, &sample, rng, deg);
        if deg > 0 && i % 3 == 0 && !roots.contains(&f.zero()) {
            roots[0] = f.zero();
        }
        let c = nonzero(f, &sample, rng);
        let p = poly::scale(f, &poly::from_roots(f, &roots), &c);
        let got = find_roots(f, &p, rng).unwrap_or_else(|e| panic!("case {i}: {e}"));
        let mut expect = roots.clone();
        expect.sort_by_key(|r| f.to_biguint(r));
        assert_eq!(got, expect, "case {i}: degree {}", roots.len());
    }
}

/// A quadratic non-residue, by Euler's criterion.
pub fn non_residue<F: FiniteField>(f: &F, rng: &mut ChaCha8Rng) -> F::Elem {
    let minus_one = f.neg(&f.one());
    let half = (f.order() - 1u32) >> 1u32;
    loop {
        let z = f.random(rng);
        if f.pow(&z, &half) == minus_one {
            return z;
        }
    }
}

/// Rejections: an irreducible quadratic factor gives `NotSplit` (also when
/// a root is repeated as well), a repeated linear factor `RepeatedRoot`;
/// the zero polynomial is an error and a constant has no roots.
pub fn roots_rejections<F: FiniteField>(f: &F, cases: usize, max_deg: usize) {
    let sample = |f: &F, r: &mut ChaCha8Rng| f.random(r);
    let mut rng = crate::rng("roots/rejections");
    assert_eq!(
        find_roots(f, &Poly::zero(), &mut rng),
        Err(FieldError::ZeroPolynomial)
    );
    let c = nonzero(f, &sample, &mut rng);
    assert_eq!(find_roots(f, &Poly::constant(f, c), &mut rng), Ok(vec![]));
    for i in 0..crate::cases(u32::try_from(cases).unwrap()) as usize {
        let rng = &mut case_rng("roots/rejections", i);
        let deg = rng.random_range(1..=max_deg.max(1));
        let roots = distinct(f, &sample, rng, deg);
        let split = poly::from_roots(f, &roots);
        let z = non_residue(f, rng);
        // x^2 - z is irreducible when z is not a square.
        let quad = Poly::from_coeffs(f, vec![f.neg(&z), f.zero(), f.one()]);
        let ctx = format!("case {i}: degree {deg}");
        let not_split = poly::mul(f, &split, &quad);
        assert_eq!(
            find_roots(f, &not_split, rng),
            Err(FieldError::NotSplit),
            "{ctx}"
        );
        let lin = poly::from_roots(f, &roots[..1]);
        let repeated = poly::mul(f, &split, &lin);
        assert_eq!(
            find_roots(f, &repeated, rng),
            Err(FieldError::RepeatedRoot),
            "{ctx}"
        );
        let both = poly::mul(f, &repeated, &quad);
        assert_eq!(
            find_roots(f, &both, rng),
            Err(FieldError::NotSplit),
            "{ctx}: precedence"
        );
        let cube = poly::mul(f, &poly::mul(f, &lin, &lin), &lin);
        assert_eq!(
            find_roots(f, &cube, rng),
            Err(FieldError::RepeatedRoot),
            "{ctx}: cube"
        );
    }
}

/// What `find_roots` must return for `p` over the tiny field `f`, found by
/// trying every element and dividing out each root as often as it goes:
/// the sorted roots if `p` is a product of distinct linear factors,
/// `RepeatedRoot` if it splits with multiplicities, `NotSplit` otherwise.
///
/// # Errors
///
/// The error `find_roots` must give: `ZeroPolynomial`, `RepeatedRoot` or
/// `NotSplit`.
pub fn roots_by_search<F: FiniteField>(
    f: &F,
    p: &Poly<F::Elem>,
) -> Result<Vec<F::Elem>, FieldError> {
    let q = f.to_u64(&f.neg(&f.one())).unwrap() + 1;
    let Some(deg) = p.degree() else {
        return Err(FieldError::ZeroPolynomial);
    };
    let mut mult_total = 0;
    let mut repeated = false;
    let mut roots = Vec::new();
    for v in 0..q {
        let e = f.from_u64(v);
        let lin = Poly::from_coeffs(f, vec![f.neg(&e), f.one()]);
        let mut rest = p.clone();
        let mut m = 0;
        while rest.degree() >= Some(1) {
            let (quot, r) = poly::div_rem(f, &rest, &lin).unwrap();
            if !r.is_zero() {
                break;
            }
            m += 1;
            rest = quot;
        }
        if m > 0 {
            assert!(f.is_zero(&naive_eval(f, p, &e)));
            roots.push(e);
        }
        mult_total += m;
        repeated |= m > 1;
    }
    let splits = mult_total == deg;
    if splits && !repeated {
        roots.sort_by_key(|r| f.to_biguint(r));
        Ok(roots)
    } else if splits {
        Err(FieldError::RepeatedRoot)
    } else {
        Err(FieldError::NotSplit)
    }
}

/// Every monic polynomial of degree at most `max_deg` over the tiny field
/// `f` (and twice each, to check non-monic input): `find_roots` succeeds
/// exactly when the polynomial is a product of distinct linear factors,
/// then returns exactly its roots; otherwise the error says whether it
/// splits with a repeated root or does not split ([`roots_by_search`]).
pub fn roots_exhaustive<F: FiniteField>(f: &F, max_deg: usize) {
    let q = f.to_u64(&f.neg(&f.one())).unwrap() + 1;
    assert!(q <= 13, "exhaustive search needs a tiny field");
    let mut rng = crate::rng("roots/exhaustive");
    let mut counts = [0usize; 3];
    for deg in 0..=max_deg {
        let total = q.pow(u32::try_from(deg).unwrap());
        for code in 0..total {
            let mut rest = code;
            let mut c: Vec<F::Elem> = (0..deg)
                .map(|_| {
                    let v = f.from_u64(rest % q);
                    rest /= q;
                    v
                })
                .collect();
            c.push(f.one());
            let p = Poly::from_coeffs(f, c);
            let expect = roots_by_search(f, &p);
            counts[match &expect {
                Ok(_) => 0,
                Err(FieldError::RepeatedRoot) => 1,
                Err(_) => 2,
            }] += 1;
            assert_eq!(find_roots(f, &p, &mut rng), expect, "{p:?}");
            let two = poly::scale(f, &p, &f.from_u64(2));
            assert_eq!(find_roots(f, &two, &mut rng), expect, "2 * {p:?}");
        }
    }
    // The number of monic products of d distinct linear factors is
    // C(q, d): the oracle itself is checked against the closed form.
    let binom = |n: u64, k: u64| {
        if k > n {
            0
        } else {
            (0..k).fold(1u64, |acc, i| acc * (n - i) / (i + 1))
        }
    };
    let expect_split: u64 = (0..=u64::try_from(max_deg).unwrap())
        .map(|d| binom(q, d))
        .sum();
    assert_eq!(
        counts[0] as u64, expect_split,
        "distinct-split count {counts:?}"
    );
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

/// The checked solve of a longer sequence against its oracle: solve the
/// first `m` terms, re-encode every term by running powers, and take the
/// first that differs. Sequences are power sums of a planted vector, the
/// same with one term changed (before or after the `m`-th), or garbage;
/// [`TransposedVandermonde::solve`] must give the oracle's answer and
/// name the oracle's index.
pub fn vandermonde_checked<F: Field, S>(f: &F, sample: S, cases: usize, max_m: usize)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    let n = crate::cases(u32::try_from(cases).unwrap()) as usize;
    for i in 0..n {
        let rng = &mut case_rng("vandermonde/checked", i);
        // The last case takes the largest system (the tree path above the
        // threshold, where the suite's bound reaches it).
        let m = if i + 1 == n {
            max_m
        } else {
            rng.random_range(0..=max_m)
        };
        let len = m + rng.random_range(0..=m + 3);
        let mut x = distinct(f, &sample, rng, m);
        if m > 0 && i % 3 == 0 && !x.contains(&f.zero()) {
            x[0] = f.zero();
        }
        let v: Vec<F::Elem> = (0..m).map(|_| sample(f, rng)).collect();
        let mut s = power_sums(f, &x, &v, len);
        match i % 3 {
            0 => {}
            1 if len > 0 => {
                let j = rng.random_range(0..len);
                s[j] = f.add(&s[j], &nonzero(f, &sample, rng));
            }
            _ => s = (0..len).map(|_| sample(f, rng)).collect(),
        }
        let oracle = solve_transposed_vandermonde(f, &x, &s[..m]).unwrap();
        let reencoded = power_sums(f, &x, &oracle, len);
        let expected = match s.iter().zip(&reencoded).position(|(a, b)| a != b) {
            Some(j) => Err(FieldError::SequenceMismatch { index: j + 1 }),
            None => Ok(oracle),
        };
        let system = TransposedVandermonde::new(f, &x).unwrap();
        assert_eq!(
            system.solve(f, &s),
            expected,
            "case {i}: m = {m}, len = {len}"
        );
        if m > 0 {
            assert_eq!(
                system.solve(f, &s[..m - 1]),
                Err(FieldError::LengthMismatch {
                    left: m,
                    right: m - 1
                })
            );
        }
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
            fn vandermonde_checked() {
                $crate::decoding::vandermonde_checked(&$field, $sample, $cases, $max_m);
            }
            #[test]
            fn vandermonde_rejections() {
                $crate::decoding::vandermonde_rejections(&$field, $sample);
            }
        }
    };
}

/// Stamps out the root-finding suites for a finite field: module name,
/// field expression, number of cases, largest degree (the rejection
/// suite, four root findings per case, stays at a quarter of it).
#[macro_export]
macro_rules! roots_suite {
    ($name:ident, $field:expr, $cases:expr, $max_deg:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn roots_of_split_products() {
                $crate::decoding::roots_of_split_products(&$field, $cases, $max_deg);
            }
            #[test]
            fn roots_rejections() {
                $crate::decoding::roots_rejections(&$field, $cases, $max_deg / 4 + 1);
            }
        }
    };
}
