//! The transforms' and their products' tests.
use super::products::{ntt_mul, product};
use super::*;
use crate::{Fp64, Goldilocks};

fn naive<F: Field>(f: &F, c: &[F::Elem], x: &F::Elem) -> F::Elem {
    c.iter()
        .rev()
        .fold(f.zero(), |acc, a| f.add(&f.mul(&acc, x), a))
}

fn check_values<F: FiniteField>(f: &F, log: u32) {
    let ntt = Ntt::new(f, log).unwrap();
    let n = ntt.len();
    let coeffs: Vec<F::Elem> = (0..n as u64).map(|i| f.from_u64(i * i + 3)).collect();
    let mut v = coeffs.clone();
    ntt.forward(f, &mut v);
    let w = f.two_adic_root(log).unwrap();
    for (i, value) in v.iter().enumerate() {
        let point = f.pow_u64(&w, bit_reverse(i, log) as u64);
        assert_eq!(*value, naive(f, &coeffs, &point), "log {log}, position {i}");
    }
    ntt.inverse(f, &mut v);
    assert_eq!(v, coeffs);
}

#[test]
fn forward_gives_values_at_bit_reversed_powers_and_inverse_undoes_it() {
    for log in 0..=6 {
        check_values(&Goldilocks, log);
        check_values(&Fp64::new(65_537).unwrap(), log);
        check_values(&Fp64::new(27 * (1 << 59) + 1).unwrap(), log);
    }
}

#[test]
fn cached_tables_are_the_fresh_ones_at_every_length() {
    fn check<F: FiniteField>(f: &F, logs: &[u32]) {
        for &log in logs {
            let cached = Ntt::new(f, log).unwrap();
            let fresh = Ntt::new_uncached(f, log).unwrap();
            let n = fresh.len();
            assert!(cached.forward.len() >= n && cached.inverse.len() >= n);
            // Entry 0 is unused (and a placeholder in both).
            assert_eq!(cached.forward[1..n], fresh.forward[1..n], "log {log}");
            assert_eq!(cached.inverse[1..n], fresh.inverse[1..n], "log {log}");
            assert_eq!(cached.n_inv, fresh.n_inv);
        }
    }
    // Growing, then shorter lengths read from the longest tables.
    let logs: Vec<u32> = (0..=12).chain((0..12).rev()).collect();
    check(&Goldilocks, &logs);
    check(&Fp64::proth(), &logs);
    check(&Fp64::new(65_537).unwrap(), &logs);
    // More fields than the cache holds, in turn: evicted and rebuilt.
    let primes = [7_340_033, 12_289, 40_961, 65_537, 786_433, 5_767_169];
    for p in primes.into_iter().chain(primes) {
        check(&Fp64::new(p).unwrap(), &[9, 3, 11, 2]);
    }
}

#[test]
fn products_match_karatsuba() {
    let f = Fp64::new(7681).unwrap(); // 15 * 2^9 + 1
    let a: Vec<_> = (0..37u64).map(|i| f.from_u64(i * 7 + 1)).collect();
    let b: Vec<_> = (0..100u64).map(|i| f.from_u64(i * i)).collect();
    assert_eq!(
        ntt_mul(&f, &a, &b).unwrap(),
        crate::poly::karatsuba::karatsuba(&f, &a, &b)
    );
    // 2^10 > 2^9 points: no root of unity of that order.
    let long: Vec<_> = (0..600u64).map(|i| f.from_u64(i)).collect();
    assert!(ntt_mul(&f, &long, &long).is_none());
}

/// The median of `samples` seconds, in microseconds.
fn median_us(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2] * 1e6
}

/// Runs `a` and `b` for `rounds` rounds of `reps` calls each,
/// alternating which goes first, and returns their medians per call
/// in microseconds.
fn alternate(rounds: usize, reps: usize, mut a: impl FnMut(), mut b: impl FnMut()) -> (f64, f64) {
    let time = |g: &mut dyn FnMut()| {
        let start = std::time::Instant::now();
        for _ in 0..reps {
            g();
        }
        start.elapsed().as_secs_f64() / reps as f64
    };
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            ta.push(time(&mut a));
            tb.push(time(&mut b));
        } else {
            tb.push(time(&mut b));
            ta.push(time(&mut a));
        }
    }
    (median_us(&mut ta), median_us(&mut tb))
}

fn random_coeffs<F: FiniteField>(f: &F, n: usize, seed: u64) -> Vec<F::Elem> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            f.from_u64(s)
        })
        .collect()
}

/// Products of two factors of `2^log / 2` terms (transforms of `2^log`
/// points), with the tables built on every product as before the
/// cache against [`ntt_mul`] with the cache. Timing, not a test; the
/// figures are in docs/benchmarks.md.
#[test]
#[ignore = "timing: cargo test -p field --release --lib -- --ignored --nocapture timing_"]
fn timing_twiddle_cache() {
    fn run<F: FiniteField>(name: &str, f: &F) {
        for log in [10u32, 13, 15] {
            let half = 1usize << (log - 1);
            let a = random_coeffs(f, half, 1);
            let b = random_coeffs(f, half, 2);
            let reps = (1usize << 16 >> log).max(2);
            let (fresh, cached) = alternate(
                31,
                reps,
                || {
                    let ntt = Ntt::new_uncached(f, log).unwrap();
                    std::hint::black_box(product(f, &ntt, &a, &b));
                },
                || {
                    std::hint::black_box(ntt_mul(f, &a, &b));
                },
            );
            println!(
                "{name} 2^{log} points: tables per product {fresh:.1} us, cached {cached:.1} us, ratio {:.3}",
                fresh / cached
            );
        }
    }
    run("fp64-proth", &Fp64::proth());
    run("goldilocks", &Goldilocks);
}

/// The transform product (tables cached) against Karatsuba's for two
/// factors of `n` terms, for the fields' `NTT_THRESHOLD`s. Timing, not
/// a test; the figures are in docs/benchmarks.md.
#[test]
#[ignore = "timing: cargo test -p field --release --lib -- --ignored --nocapture timing_"]
fn timing_ntt_threshold() {
    fn run<F: FiniteField>(name: &str, f: &F) {
        for n in [
            8usize, 12, 16, 24, 32, 40, 48, 56, 64, 96, 128, 192, 256, 384, 512,
        ] {
            let a = random_coeffs(f, n, 3);
            let b = random_coeffs(f, n, 4);
            let reps = (1 << 14) / n;
            let (ntt, kara) = alternate(
                31,
                reps,
                || {
                    std::hint::black_box(ntt_mul(f, &a, &b));
                },
                || {
                    std::hint::black_box(crate::poly::karatsuba::karatsuba(f, &a, &b));
                },
            );
            println!(
                "{name} n={n}: ntt {ntt:.2} us, karatsuba {kara:.2} us, karatsuba/ntt {:.3}",
                kara / ntt
            );
        }
    }
    run("fp64-proth", &Fp64::proth());
    run("goldilocks", &Goldilocks);
}
