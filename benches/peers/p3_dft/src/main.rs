//! Plonky3's DFTs (p3-dft 0.8.0) against our `field::poly::Transform`:
//! the forward transform of one column of `2^log` (default `2^20`)
//! elements, single thread, alternated in one run.
//!
//! ```text
//! CARGO_TARGET_DIR=/work/main/target/peers/p3 nice -n 10 cargo run --release \
//!     --manifest-path benches/peers/p3_dft/Cargo.toml -- [--log 20] [--rounds 11]
//! ```
//!
//! Engines, each timed on a fresh copy of the same input (the copy and
//! the matrix wrapper made outside the timing, the output dropped after
//! it):
//!
//! * `p3-bowers`: `Radix2Bowers.dft_batch` of a `RowMajorMatrix` of width 1
//!   (natural order out: bit-reverses its input first);
//! * `p3-dit`: `Radix2Dit::default().dft_batch` (natural order out);
//! * `p3-dit-parallel`: `Radix2DitParallel::default().dft_batch` on one
//!   thread (p3-maybe-rayon without `parallel`); returns a
//!   `BitReversedMatrixView`, i.e. the values in bit-reversed order, as
//!   ours; the permutation back is not timed;
//! * `p3-small-batch`: `Radix2DFTSmallBatch::new(n).dft_batch` (natural
//!   order out);
//! * `ours-goldilocks`: `Transform::forward` over `field::Goldilocks`
//!   (values in bit-reversed order);
//! * `ours-proth`: `Transform::forward` over `Fp64::proth()`.
//!
//! Twiddle tables are built by one untimed warm-up round, which also
//! checks the results: the Plonky3 engines against each other, ours
//! against them (position `i` of ours is position `bitrev(i)` of theirs
//! when the two roots of unity are the same; otherwise, and for the Proth
//! field, against Horner's rule at a few points). Then `--rounds` rounds,
//! each running every engine once, starting at a rotating engine; the
//! medians (and minima) and the ratios `ours-goldilocks / engine`.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use field::poly::Transform;
use field::{Field, FiniteField, Fp64};
use p3_dft::{Radix2Bowers, Radix2DFTSmallBatch, Radix2Dit, Radix2DitParallel, TwoAdicSubgroupDft};
use p3_field::{PrimeField64, TwoAdicField};
use p3_goldilocks::Goldilocks as P3Goldilocks;
use p3_matrix::Matrix;
use p3_matrix::dense::RowMajorMatrix;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `n` values below `p` (the generator of `crates/field/examples/kernels.rs`,
/// stream 8).
fn gen_values(n: usize, seed: u64, p: u64) -> Vec<u64> {
    let mut state = seed.wrapping_add(8u64.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    (0..n).map(|_| splitmix64(&mut state) % p).collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn bitrev(i: usize, log: u32) -> usize {
    i.reverse_bits() >> (usize::BITS - log)
}

/// Horner's rule for the polynomial with coefficients `c` at `x`.
fn horner<F: Field>(f: &F, c: &[F::Elem], x: &F::Elem) -> F::Elem {
    c.iter()
        .rev()
        .fold(f.zero(), |acc, a| f.add(&f.mul(&acc, x), a))
}

/// Checks that `out` (bit-reversed order) holds the values of `coeffs` at
/// `w^bitrev(i)` for a few `i`, `w` the field's primitive `2^log`-th root.
fn check_ours<F: FiniteField>(f: &F, log: u32, coeffs: &[F::Elem], out: &[F::Elem]) -> bool {
    let Some(w) = f.two_adic_root(log) else {
        return false;
    };
    let n = out.len();
    [0, 1, 2, 3, n / 2, n - 1].iter().all(|&i| {
        let x = f.pow_u64(&w, bitrev(i, log) as u64);
        horner(f, coeffs, &x) == out[i]
    })
}

struct Args {
    log: u32,
    rounds: usize,
    seed: u64,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        log: 20,
        rounds: 11,
        seed: 1,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = |name: &str| -> Result<u64, String> {
            let v = it.next().ok_or_else(|| format!("{name} needs a value"))?;
            v.parse()
                .map_err(|_| format!("{name}: `{v}` is not a number"))
        };
        match flag.as_str() {
            "--log" => args.log = u32::try_from(value("--log")?).map_err(|e| e.to_string())?,
            "--rounds" => {
                args.rounds = usize::try_from(value("--rounds")?).map_err(|e| e.to_string())?;
            }
            "--seed" => args.seed = value("--seed")?,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if !(2..=30).contains(&args.log) || args.rounds == 0 {
        return Err("--log must be in 2..=30 and --rounds at least 1".into());
    }
    Ok(args)
}

type Engine = (&'static str, Box<dyn FnMut() -> f64>);

fn run() -> Result<(), String> {
    let args = parse_args()?;
    let log = args.log;
    let n = 1usize << log;
    let gl = field::Goldilocks;
    let proth = Fp64::proth();
    let raw_g = gen_values(n, args.seed, field::P64);
    let raw_p = gen_values(n, args.seed, field::P_PROTH);
    let p3_in: Vec<P3Goldilocks> = raw_g.iter().map(|&x| P3Goldilocks::new(x)).collect();
    let ours_g: Vec<u64> = raw_g.iter().map(|&x| gl.from_u64(x)).collect();
    let ours_p: Vec<_> = raw_p.iter().map(|&x| proth.from_u64(x)).collect();
    let t_g = Transform::new(&gl, log).ok_or("no Goldilocks transform of that length")?;
    let t_p = Transform::new(&proth, log).ok_or("no Proth transform of that length")?;

    println!(
        "# p3-dft 0.8.0 vs field::poly::Transform, 2^{log} = {n} points, one column, \
         one thread, {} rounds after one warm-up, seed {}",
        args.rounds, args.seed
    );
    println!(
        "# target features: avx2 {}, avx512f {} (Plonky3's packed Goldilocks needs them at compile time)",
        cfg!(target_feature = "avx2"),
        cfg!(target_feature = "avx512f")
    );

    // The warm-up round, which also checks every result.
    let reference = Radix2Bowers
        .dft_batch(RowMajorMatrix::new_col(p3_in.clone()))
        .values;
    let dit = Radix2Dit::<P3Goldilocks>::default();
    let ditp = Radix2DitParallel::<P3Goldilocks>::default();
    let small = Radix2DFTSmallBatch::<P3Goldilocks>::new(n);
    let check = |name: &str, v: &[P3Goldilocks]| -> Result<(), String> {
        if v == reference.as_slice() {
            Ok(())
        } else {
            Err(format!("{name} differs from Radix2Bowers"))
        }
    };
    check(
        "Radix2Dit",
        &dit.dft_batch(RowMajorMatrix::new_col(p3_in.clone())).values,
    )?;
    check(
        "Radix2DitParallel",
        &ditp
            .dft_batch(RowMajorMatrix::new_col(p3_in.clone()))
            .to_row_major_matrix()
            .values,
    )?;
    check(
        "Radix2DFTSmallBatch",
        &small
            .dft_batch(RowMajorMatrix::new_col(p3_in.clone()))
            .values,
    )?;
    let mut v = ours_g.clone();
    t_g.forward(&gl, &mut v);
    let same_root = gl.two_adic_root(log).map(|w| gl.to_u64(&w))
        == Some(Some(
            P3Goldilocks::two_adic_generator(log as usize).as_canonical_u64(),
        ));
    if same_root {
        let ok =
            (0..n).all(|i| gl.to_u64(&v[i]) == Some(reference[bitrev(i, log)].as_canonical_u64()));
        if !ok {
            return Err("our Goldilocks transform differs from Plonky3's (same root)".into());
        }
        println!(
            "# checked: all Plonky3 engines agree; ours (Goldilocks) equals theirs, bit-reversed"
        );
    } else {
        if !check_ours(&gl, log, &ours_g, &v) {
            return Err("our Goldilocks transform fails the Horner check".into());
        }
        println!(
            "# checked: all Plonky3 engines agree; ours (Goldilocks) uses another root of unity, \
             checked by Horner's rule at 6 points"
        );
    }
    let mut v = ours_p.clone();
    t_p.forward(&proth, &mut v);
    if !check_ours(&proth, log, &ours_p, &v) {
        return Err("our Proth transform fails the Horner check".into());
    }
    println!("# checked: ours (Proth) by Horner's rule at 6 points");

    let mut engines: Vec<Engine> = vec![
        ("p3-bowers", {
            let input = p3_in.clone();
            Box::new(move || {
                let m = RowMajorMatrix::new_col(input.clone());
                let start = Instant::now();
                let out = black_box(Radix2Bowers.dft_batch(m));
                let secs = start.elapsed().as_secs_f64();
                drop(out);
                secs
            })
        }),
        ("p3-dit", {
            let input = p3_in.clone();
            Box::new(move || {
                let m = RowMajorMatrix::new_col(input.clone());
                let start = Instant::now();
                let out = black_box(dit.dft_batch(m));
                let secs = start.elapsed().as_secs_f64();
                drop(out);
                secs
            })
        }),
        ("p3-dit-parallel", {
            let input = p3_in.clone();
            Box::new(move || {
                let m = RowMajorMatrix::new_col(input.clone());
                let start = Instant::now();
                let out = black_box(ditp.dft_batch(m));
                let secs = start.elapsed().as_secs_f64();
                drop(out);
                secs
            })
        }),
        ("p3-small-batch", {
            let input = p3_in.clone();
            Box::new(move || {
                let m = RowMajorMatrix::new_col(input.clone());
                let start = Instant::now();
                let out = black_box(small.dft_batch(m));
                let secs = start.elapsed().as_secs_f64();
                drop(out);
                secs
            })
        }),
        ("ours-goldilocks", {
            let input = ours_g.clone();
            Box::new(move || {
                let mut v = input.clone();
                let start = Instant::now();
                t_g.forward(&gl, black_box(&mut v));
                let secs = start.elapsed().as_secs_f64();
                black_box(&v);
                secs
            })
        }),
        ("ours-proth", {
            let input = ours_p.clone();
            Box::new(move || {
                let mut v = input.clone();
                let start = Instant::now();
                t_p.forward(&proth, black_box(&mut v));
                let secs = start.elapsed().as_secs_f64();
                black_box(&v);
                secs
            })
        }),
    ];
    let k = engines.len();
    let mut times = vec![Vec::with_capacity(args.rounds); k];
    for round in 0..args.rounds {
        for j in 0..k {
            let e = (round + j) % k;
            times[e].push((engines[e].1)());
        }
    }
    let mut summary = Vec::with_capacity(k);
    for (e, t) in times.iter_mut().enumerate() {
        let min = t.iter().copied().fold(f64::INFINITY, f64::min);
        summary.push((engines[e].0, median(t), min));
    }
    let ours = summary
        .iter()
        .find(|s| s.0 == "ours-goldilocks")
        .map_or(f64::NAN, |s| s.1);
    println!(
        "{:<18} {:>12} {:>12} {:>22}",
        "engine", "median s", "min s", "ours-goldilocks/engine"
    );
    for (name, med, min) in &summary {
        println!("{name:<18} {med:>12.6} {min:>12.6} {:>22.3}", ours / med);
    }
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
