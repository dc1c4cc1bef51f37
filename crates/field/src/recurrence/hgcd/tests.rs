//! The half-GCD against the quadratic algorithms it replaces:
//! Berlekamp-Massey on sequences of known complexity (power sums and
//! random recurrences, over large and tiny fields, exhaustively over the
//! tiniest), and Euclid's gcd on polynomials with planted common factors.
//! Small `base` and `threshold` values force the recursion on small inputs.

use proptest::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::{minimal_recurrence, minimal_recurrence_with};
use crate::poly::euclid::gcd_euclid_slices;
use crate::poly::half_gcd::{Matrix, fast_gcd, hgcd, hgcd_second_row};
use crate::poly::{div_rem_slices, mul_slices, trim};
use crate::traits::DEFAULT_HALF_GCD_THRESHOLD as MINIMAL_RECURRENCE_THRESHOLD;
use crate::{
    Field, FieldError, FiniteField, Fp64, Goldilocks, Mersenne61, Poly, Recurrence,
    berlekamp_massey,
};

/// Whether `rec` generates all of `s`: `C(0) = 1`, `deg C <= L`, and
/// `sum_i c_i s_(n-i) = 0` for every `n` in `L..s.len()`.
fn generates<F: Field>(f: &F, rec: &Recurrence<F::Elem>, s: &[F::Elem]) -> bool {
    let c = rec.connection.coeffs();
    if c.first().is_none_or(|c0| !f.is_one(c0)) || c.len() > rec.length + 1 {
        return false;
    }
    (rec.length..s.len()).all(|n| {
        let terms: Vec<F::Elem> = (0..c.len()).map(|i| s[n - i].clone()).collect();
        f.is_zero(&f.dot(c, &terms))
    })
}

/// `sum_j q_j x_j^i` for `i = 0..count`, with `t` random terms (nodes may
/// repeat or be zero, which only lowers the complexity or moves it into
/// the first terms).
fn power_sums<F: FiniteField>(f: &F, rng: &mut ChaCha8Rng, t: usize, count: usize) -> Vec<F::Elem> {
    let q: Vec<F::Elem> = (0..t).map(|_| f.random(rng)).collect();
    let x: Vec<F::Elem> = (0..t).map(|_| f.random(rng)).collect();
    let mut powers: Vec<F::Elem> = (0..t).map(|_| f.one()).collect();
    (0..count)
        .map(|_| {
            let term = f.dot(&q, &powers);
            for (pj, xj) in powers.iter_mut().zip(&x) {
                f.mul_assign(pj, xj);
            }
            term
        })
        .collect()
}

/// `count` terms of a random recurrence of length `l` (its last
/// coefficient may be zero) from random initial terms.
fn recurrence_terms<F: FiniteField>(
    f: &F,
    rng: &mut ChaCha8Rng,
    l: usize,
    count: usize,
) -> Vec<F::Elem> {
    let c: Vec<F::Elem> = (0..l).map(|_| f.random(rng)).collect();
    let mut s: Vec<F::Elem> = (0..l.min(count)).map(|_| f.random(rng)).collect();
    while s.len() < count {
        let n = s.len();
        let prev: Vec<F::Elem> = (1..=l).map(|i| s[n - i].clone()).collect();
        s.push(f.neg(&f.dot(&c, &prev)));
    }
    s
}

/// The contract against Berlekamp-Massey for every bound around the
/// complexity: equal results when `2L <= N`; otherwise a recurrence that
/// generates `s` within the bound, or an error whose `needed` exceeds the
/// bound without exceeding the true complexity.
fn check_against_bm<F: Field>(f: &F, s: &[F::Elem], threshold: usize, base: usize) {
    let n = s.len();
    let Ok(full) = berlekamp_massey(f, s, n) else {
        panic!("a sequence of N terms has complexity at most N");
    };
    let l = full.length;
    let mut bounds = vec![0, l.saturating_sub(1), l, l + 1, n / 2, n / 2 + 1, n];
    bounds.dedup();
    for max in bounds {
        let got = minimal_recurrence_with(f, s, max, threshold, base);
        if 2 * l <= n {
            let want = berlekamp_massey(f, s, max);
            match (&got, &want) {
                (Ok(g), Ok(w)) => assert_eq!(g, w, "max {max}, s {s:?}"),
                (
                    Err(FieldError::DegreeExceeded { max: m, needed }),
                    Err(FieldError::DegreeExceeded { .. }),
                ) => assert!(*m == max && *needed > max && *needed <= l, "{got:?}"),
                _ => panic!("max {max}: {got:?} but BM gives {want:?} for {s:?}"),
            }
        } else {
            match &got {
                Ok(rec) => assert!(rec.length <= max && generates(f, rec, s), "{rec:?} {s:?}"),
                Err(FieldError::DegreeExceeded { max: m, needed }) => {
                    assert!(*m == max && *needed > max && *needed <= l, "{got:?} {s:?}");
                }
                Err(e) => panic!("unexpected {e:?}"),
            }
        }
    }
}

/// The Euclidean remainder sequence, for the half-GCD's contract.
fn remainders<F: Field>(f: &F, a: &[F::Elem], b: &[F::Elem]) -> Vec<Vec<F::Elem>> {
    let mut seq = vec![a.to_vec(), b.to_vec()];
    while let Some(last) = seq.last().filter(|r| !r.is_empty()) {
        let (_, mut r) = div_rem_slices(f, &seq[seq.len() - 2], last);
        trim(f, &mut r);
        seq.push(r);
    }
    seq
}

/// `hgcd(a, b)` maps `(a, b)` to the consecutive Euclidean remainders that
/// straddle `ceil(deg a / 2)`.
fn check_hgcd<F: Field>(f: &F, a: &[F::Elem], b: &[F::Elem], base: usize) {
    let m: Matrix<F::Elem> = hgcd(f, a, b, base);
    let row = |x: &[F::Elem], y: &[F::Elem]| {
        let mut p = mul_slices(f, x, a);
        let q = mul_slices(f, y, b);
        if p.len() < q.len() {
            p.resize(q.len(), f.zero());
        }
        for (pi, qi) in p.iter_mut().zip(&q) {
            f.add_assign(pi, qi);
        }
        trim(f, &mut p);
        p
    };
    assert_eq!(hgcd_second_row(f, a, b, base), (m.c.clone(), m.d.clone()));
    let (r0, r1) = (row(&m.a, &m.b), row(&m.c, &m.d));
    let half = (a.len() - 1).div_ceil(2);
    let seq = remainders(f, a, b);
    let j = seq
        .iter()
        .position(|r| r.len() <= half)
        .unwrap_or(seq.len() - 1);
    assert_eq!(
        (r0, r1),
        (seq[j - 1].clone(), seq[j].clone()),
        "base {base}"
    );
}

fn random_poly<F: FiniteField>(f: &F, rng: &mut ChaCha8Rng, len: usize) -> Vec<F::Elem> {
    let mut v: Vec<F::Elem> = (0..len).map(|_| f.random(rng)).collect();
    trim(f, &mut v);
    v
}

const BASES: [usize; 5] = [0, 1, 3, 8, super::HGCD_BASE];

fn power_sum_case<F: FiniteField>(f: &F, seed: u64, t: usize, extra: usize) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let s = power_sums(f, &mut rng, t, 2 * t + extra);
    let base = BASES[rng.random_range(0..BASES.len())];
    check_against_bm(f, &s, 0, base);
    let s = recurrence_terms(f, &mut rng, t, 2 * t + extra);
    check_against_bm(f, &s, 0, base);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn power_sums_match_bm_goldilocks(seed: u64, t in 0usize..80, extra in 0usize..4) {
        power_sum_case(&Goldilocks, seed, t, extra);
    }

    #[test]
    fn power_sums_match_bm_mersenne61(seed: u64, t in 0usize..80, extra in 0usize..4) {
        power_sum_case(&Mersenne61, seed, t, extra);
    }

    #[test]
    fn power_sums_match_bm_small_primes(
        seed: u64,
        t in 0usize..40,
        extra in 0usize..4,
        p in prop::sample::select(vec![3u64, 5, 7, 13, 257, 65_537]),
    ) {
        let Ok(f) = Fp64::new(p) else { panic!("{p} is prime") };
        power_sum_case(&f, seed, t, extra);
    }

    /// Arbitrary sequences, mostly of complexity above N/2.
    #[test]
    fn random_sequences_keep_the_contract(seed: u64, n in 0usize..60, p in prop::sample::select(vec![3u64, 7, 65_537])) {
        let Ok(f) = Fp64::new(p) else { panic!("{p} is prime") };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let s: Vec<_> = (0..n).map(|_| f.random(&mut rng)).collect();
        check_against_bm(&f, &s, 0, BASES[rng.random_range(0..BASES.len())]);
    }

    #[test]
    fn hgcd_stops_at_the_half(seed: u64, n in 1usize..120, gap in 1usize..40, p in prop::sample::select(vec![3u64, 65_537])) {
        let Ok(f) = Fp64::new(p) else { panic!("{p} is prime") };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        // deg a = n exactly (not trimmed below the leading one).
        let mut a: Vec<_> = (0..n).map(|_| f.random(&mut rng)).collect();
        a.push(f.one());
        let b = random_poly(&f, &mut rng, (n + 1).saturating_sub(gap));
        for base in BASES {
            check_hgcd(&f, &a, &b, base);
        }
    }

    #[test]
    fn fast_gcd_matches_euclid(
        seed: u64,
        common in 0usize..40,
        la in 0usize..80,
        lb in 0usize..80,
        p in prop::sample::select(vec![3u64, 7, 65_537]),
    ) {
        let Ok(f) = Fp64::new(p) else { panic!("{p} is prime") };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let g = random_poly(&f, &mut rng, common);
        let a = mul_slices(&f, &g, &random_poly(&f, &mut rng, la));
        let b = mul_slices(&f, &g, &random_poly(&f, &mut rng, lb));
        let (mut a, mut b) = (a, b);
        trim(&f, &mut a);
        trim(&f, &mut b);
        let want = gcd_euclid_slices(&f, a.clone(), b.clone());
        for base in BASES {
            prop_assert_eq!(&fast_gcd(&f, a.clone(), b.clone(), base), &want);
            prop_assert_eq!(&fast_gcd(&f, b.clone(), a.clone(), base), &want);
        }
    }
}

/// Every sequence of up to 8 terms over GF(3) and up to 6 over GF(5),
/// with the recursion forced all the way down.
#[test]
fn exhaustive_tiny_fields() {
    for (p, max_n) in [(3u64, 8u32), (5, 6)] {
        let Ok(f) = Fp64::new(p) else {
            panic!("{p} is prime")
        };
        for n in 0..=max_n {
            for code in 0..p.pow(n) {
                let mut rest = code;
                let s: Vec<_> = (0..n)
                    .map(|_| {
                        let v = f.from_u64(rest % p);
                        rest /= p;
                        v
                    })
                    .collect();
                check_against_bm(&f, &s, 0, 0);
                check_against_bm(&f, &s, 0, 2);
            }
        }
    }
}

#[test]
fn degenerate_inputs() {
    let f = Goldilocks;
    let one = Recurrence {
        connection: Poly::one(&f),
        length: 0,
    };
    for threshold in [0, MINIMAL_RECURRENCE_THRESHOLD] {
        for max in [0, 1, 5] {
            assert_eq!(
                minimal_recurrence_with(&f, &[], max, threshold, 0),
                Ok(one.clone())
            );
            let zeros = vec![0u64; 300];
            assert_eq!(
                minimal_recurrence_with(&f, &zeros, max, threshold, 0),
                Ok(one.clone())
            );
        }
        // 0, ..., 0, 1 has complexity N, far above N/2.
        let mut s = vec![0u64; 299];
        s.push(1);
        assert!(matches!(
            minimal_recurrence_with(&f, &s, 0, threshold, 8),
            Err(FieldError::DegreeExceeded { max: 0, needed }) if needed > 0 && needed <= 300
        ));
        let rec = minimal_recurrence_with(&f, &s, 300, threshold, 8);
        assert!(rec.is_ok_and(|r| generates(&f, &r, &s)));
    }
}

/// The default thresholds, on both sides of the switch and far above it.
#[test]
fn across_the_threshold() {
    let f = Goldilocks;
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let th = MINIMAL_RECURRENCE_THRESHOLD;
    for n in [th - 2, th - 1, th, th + 1, th + 3, 2 * th + 1] {
        for t in [n / 2, n / 2 - 1, n / 3, 5] {
            let s = power_sums(&f, &mut rng, t, n);
            let want = berlekamp_massey(&f, &s, n / 2);
            assert_eq!(minimal_recurrence(&f, &s, n / 2), want, "n {n}, t {t}");
            assert_eq!(want.map(|r| r.length), Ok(t));
            assert!(minimal_recurrence(&f, &s, t - 1).is_err());
        }
    }
}

/// The gcd dispatch of `poly` above its threshold, with the default base.
#[test]
fn long_gcds_match_euclid() {
    let f = Goldilocks;
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for (common, la, lb) in [
        (1, 1500, 1500),
        (700, 1400, 1300),
        (1400, 1, 1500),
        (0, 2000, 1300),
    ] {
        let g = random_poly(&f, &mut rng, common);
        let mut a = mul_slices(&f, &g, &random_poly(&f, &mut rng, la));
        let mut b = mul_slices(&f, &g, &random_poly(&f, &mut rng, lb));
        trim(&f, &mut a);
        trim(&f, &mut b);
        let want = gcd_euclid_slices(&f, a.clone(), b.clone());
        assert_eq!(crate::poly::gcd::gcd_slices(&f, a, b), want);
    }
}

/// Berlekamp-Massey against the half-GCD (at two base degrees) on `2t`
/// power sums over [`Fp64::proth`], medians of 9 alternated rounds: for
/// the field's threshold. Timing, not a test; the figures are in
/// docs/benchmarks.md.
#[test]
#[ignore = "timing: cargo test -p field --release --lib -- --ignored --nocapture timing_"]
fn timing_locator_threshold() {
    let f = Fp64::proth();
    let rng = &mut ChaCha8Rng::seed_from_u64(9);
    for t in [128usize, 256, 384, 512, 768, 1024, 1536] {
        let s = power_sums(&f, rng, t, 2 * t);
        let mut times = [Vec::new(), Vec::new(), Vec::new()];
        for round in 0..9 {
            for k in 0..3 {
                let which = (k + round) % 3;
                let start = std::time::Instant::now();
                let rec = match which {
                    0 => minimal_recurrence_with(&f, &s, t, usize::MAX, 128),
                    1 => minimal_recurrence_with(&f, &s, t, 0, 128),
                    _ => minimal_recurrence_with(&f, &s, t, 0, 64),
                };
                times[which].push(start.elapsed().as_secs_f64());
                assert_eq!(rec.unwrap().length, t);
            }
        }
        let [bm, h128, h64] = times.map(|mut v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2] * 1e3
        });
        println!(
            "t={t}: berlekamp-massey {bm:.3} ms, half-gcd base 128 {h128:.3} ms, base 64 {h64:.3} ms"
        );
    }
}
