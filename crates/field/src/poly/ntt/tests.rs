//! The two engines against each other and Karatsuba, and the timing
//! that chose `Fp64`'s multi-modular threshold.

use super::*;
use crate::{BigPrime, FiniteField, Fp64, Mersenne61, Mersenne127};
use rand::SeedableRng;

/// Products by both engines, and squares, over lengths on both sides
/// of the vectorised plans' smallest (16 points) and of powers of two,
/// must be the same elements, and the same as Karatsuba's.
fn engines_agree<F: FiniteField>(
    f: &F,
    mul: impl Fn(Engine, &[F::Elem], &[F::Elem]) -> Vec<F::Elem>,
) {
    let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let sizes = [
        (1, 1),
        (3, 5),
        (8, 9),
        (16, 17),
        (33, 31),
        (100, 1),
        (257, 256),
        (1000, 3000),
    ];
    for &(la, lb) in &sizes {
        let a: Vec<F::Elem> = (0..la).map(|_| f.random(rng)).collect();
        let b: Vec<F::Elem> = (0..lb).map(|_| f.random(rng)).collect();
        let fast = mul(Engine::Vectorised, &a, &b);
        assert_eq!(fast, mul(Engine::Portable, &a, &b), "{la} x {lb}");
        if la * lb <= 300_000 {
            assert_eq!(fast, crate::poly::karatsuba(f, &a, &b), "{la} x {lb}");
        }
        // The square path (one transform) against the product path.
        let sq = mul(Engine::Vectorised, &a, &a);
        assert_eq!(sq, mul(Engine::Portable, &a, &a), "{la} squared");
        assert_eq!(sq, mul(Engine::Vectorised, &a, &a.clone()), "{la} squared");
    }
}

#[test]
fn vectorised_and_portable_engines_give_the_same_products() {
    for f in [
        Fp64::proth(),
        Fp64::new(7).unwrap(),
        Fp64::new(65_537).unwrap(),
        Fp64::new(u64::MAX - 58).unwrap(),
    ] {
        let plan = f.crt_plan().unwrap();
        engines_agree(&f, |e, a, b| {
            plan.mul_words_in(e, a, b, |v| v.0, |x| f.reduce_wide(x))
        });
    }
    let m61 = Mersenne61;
    let plan = Plan::new(&m61, &num_bigint::BigUint::from(crate::P61)).unwrap();
    engines_agree(&m61, |e, a, b| {
        plan.mul_words_in(e, a, b, |v| *v, Mersenne61::reduce128)
    });
    let m127 = Mersenne127;
    let plan = Plan::new(&m127, &num_bigint::BigUint::from(crate::P127)).unwrap();
    engines_agree(&m127, |e, a, b| {
        plan.mul_dot_in(e, &m127, a, b, |v, out| {
            #[allow(clippy::cast_possible_truncation)] // the two words
            out.extend([*v as u64, (*v >> 64) as u64]);
        })
    });
    let big = BigPrime::new(testdata::known_primes::p256()).unwrap();
    let plan = Plan::new(&big, big.p()).unwrap();
    engines_agree(&big, |e, a, b| {
        plan.mul_limbs_in(
            e,
            a,
            b,
            |v, out| out.extend(v.iter_u64_digits()),
            |limbs| crate::poly::kronecker::from_limbs(limbs) % big.p(),
        )
    });
}

/// Timing, not tests.
mod timing {

    use crate::{Field, FiniteField, Fp64};
    use rand::SeedableRng;

    /// The median of `samples` seconds, in microseconds.
    fn median_us(samples: &mut [f64]) -> f64 {
        samples.sort_by(f64::total_cmp);
        samples[samples.len() / 2] * 1e6
    }

    /// The multi-modular product against the transforms in the field and
    /// Karatsuba's over [`Fp64::proth`], two factors of `n` terms, medians
    /// of 15 alternated rounds: for `Fp64`'s `MULTIMODULAR_THRESHOLD`.
    /// Timing, not a test; the figures are in docs/benchmarks.md.
    #[test]
    #[ignore = "timing: cargo test -p field --release --lib -- --ignored --nocapture timing_"]
    fn timing_multimodular_threshold() {
        let f = Fp64::proth();
        let plan = f.crt_plan().unwrap();
        let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for n in [
            16usize, 32, 48, 64, 96, 128, 256, 512, 1024, 2048, 4096, 10_000,
        ] {
            let a: Vec<_> = (0..n).map(|_| f.random(rng)).collect();
            let b: Vec<_> = (0..n).map(|_| f.random(rng)).collect();
            let reps = (1 << 16) / n;
            let mut t = [Vec::new(), Vec::new(), Vec::new()];
            for round in 0..15 {
                for k in 0..3 {
                    let which = (k + round) % 3;
                    let start = std::time::Instant::now();
                    for _ in 0..reps {
                        std::hint::black_box(match which {
                            0 => plan.mul_words(&a, &b, |v| v.0, |x| f.reduce_wide(x)),
                            1 => crate::poly::transform::products::ntt_mul(&f, &a, &b).unwrap(),
                            _ => crate::poly::karatsuba(&f, &a, &b),
                        });
                    }
                    t[which].push(start.elapsed().as_secs_f64() / reps as f64);
                }
            }
            let [mm, field, kara] = t.map(|mut v| median_us(&mut v));
            println!(
                "n={n}: multimodular {mm:.2} us, in-field {field:.2} us, karatsuba {kara:.2} us, in-field/multimodular {:.2}",
                field / mm
            );
            let _ = f.zero();
        }
    }
}
