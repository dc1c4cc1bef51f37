//! Every path against the portable one.

use super::*;
use crate::{Field, FiniteField};
use rand::SeedableRng;

/// Every path the CPU has gives the portable path's words, forward and
/// inverse, at every length from 1 to 2^12 points, over primes near
/// 2^64, near 2^63 and small.
#[test]
fn products_and_scaling_fill_the_tails() {
    let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(4);
    let f = Fp64::proth();
    let k = Word::of(&f);
    for len in 0..40 {
        let a: Vec<Mont64> = (0..len).map(|_| f.random(rng)).collect();
        let b: Vec<Mont64> = (0..len).map(|_| f.random(rng)).collect();
        for path in Path::available() {
            let mut got = a.clone();
            run(path, k, &mut got, Job::MulEach(&b));
            let want: Vec<Mont64> = a.iter().zip(&b).map(|(x, y)| f.mul(x, y)).collect();
            assert_eq!(got, want, "{path:?}, {len}");
        }
    }
}

#[test]
fn every_path_gives_the_portable_words() {
    let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(3);
    let paths = Path::available();
    for f in [
        Fp64::proth(),
        Fp64::new(0xffff_ffff_0000_0001).unwrap(),
        Fp64::new(3 * (1 << 30) + 1).unwrap(),
        Fp64::new(7_340_033).unwrap(),
    ] {
        let k = Word::of(&f);
        for log in (0..=12u32).chain([15, 16]) {
            let (tw, itw) = crate::poly::transform::stage_tables_for_tests(&f, log);
            let (tw, itw) = (&tw[..], &itw[..]);
            let v: Vec<Mont64> = (0..1usize << log).map(|_| f.random(rng)).collect();
            let mut want = v.clone();
            run(Path::Portable, k, &mut want, Job::Forward(tw));
            let mut back = want.clone();
            run(Path::Portable, k, &mut back, Job::Inverse(itw));
            let n = f.from_u64(1 << log);
            assert!(
                back.iter().zip(&v).all(|(x, y)| *x == f.mul(y, &n)),
                "log {log}"
            );
            for &path in &paths {
                let mut got = v.clone();
                run(path, k, &mut got, Job::Forward(tw));
                assert_eq!(got, want, "{path:?}, log {log}, p {}", f.modulus());
                let mut got_back = want.clone();
                run(path, k, &mut got_back, Job::Inverse(itw));
                assert_eq!(got_back, back, "{path:?} inverse, log {log}");
                // Products and scaling, lane by lane and in the tails.
                let mut prod = v.clone();
                run(path, k, &mut prod, Job::MulEach(&want));
                let expect: Vec<Mont64> = v.iter().zip(&want).map(|(x, y)| f.mul(x, y)).collect();
                assert_eq!(prod, expect, "{path:?} products, log {log}");
                let c = f.random(rng);
                let mut scaled = v.clone();
                run(path, k, &mut scaled, Job::Scale(c));
                assert!(
                    scaled.iter().zip(&v).all(|(x, y)| *x == f.mul(y, &c)),
                    "{path:?} scale"
                );
            }
        }
    }
}
