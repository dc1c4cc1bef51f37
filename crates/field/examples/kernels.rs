//! Times the polynomial kernels under the decoder against FLINT's
//! (`benches/peers/flint_avx2/decode_kernels.c`, the `kernels` mode), on
//! the same inputs, and the forward transform of `2^log` points.
//!
//! ```text
//! cargo build --release -p field --example kernels
//! RAYON_NUM_THREADS=1 target/release/examples/kernels kernels --n 100000 [--repeat R] [--seed S]
//! RAYON_NUM_THREADS=1 target/release/examples/kernels transform --log 20 [--repeat R] [--seed S]
//! ```
//!
//! `RAYON_NUM_THREADS=1`: the `field` crate's default `parallel` feature
//! runs the remainder tree of `evaluate` on all cores; FLINT's driver
//! runs on one thread. `benches/peers/decode_kernels.sh` runs this and the
//! FLINT driver alternately.
//!
//! Every line that does not start with `#` is
//! `ours kernels n=N KERNEL SECONDS digest=D` (or
//! `ours transform log=L FIELD SECONDS digest=D`), `SECONDS` the median
//! wall-clock time of `R` runs (default 5), over `Fp64::proth()`
//! (`GF(27 * 2^59 + 1)`) for the kernels. The inputs come from the
//! generator that the C driver shares: value `i` of stream `k` is the
//! `i`-th output of splitmix64 started at `seed + k * 0x9E3779B97F4A7C15`,
//! reduced mod `p`; a polynomial whose top coefficient comes out zero gets
//! a one there. The digest of a result `c_0..c_(m-1)` is
//! `sum_i c_i z^i mod p` at `z = 1234567`, so equal digests mean the same
//! result as FLINT's. The kernels, each through the public API:
//!
//! * `mul`: `poly::mul(A, B)`, `A` = stream 1, `B` = stream 2, `n`
//!   coefficients each;
//! * `mullow`, `mulhigh`: the same full `poly::mul` (the API has no
//!   truncated product), then the digest of coefficients `0..n` (FLINT:
//!   `nmod_poly_mullow(A, B, n)`) or `n..2n-1` (`nmod_poly_mulhigh`);
//! * `divrem`: `poly::div_rem(D, B)`, `D` = stream 3 of `2n`
//!   coefficients; digest `Q:R`;
//! * `gcd`: `poly::gcd(G U, G V)`, `G` = stream 5 (10 coefficients, made
//!   monic), `U` = stream 6, `V` = stream 7 (`n - 9` coefficients each),
//!   the products formed outside the timing: inputs of `n` coefficients
//!   whose gcd is `G`;
//! * `evaluate`: `poly::evaluate_many(A, X)` at the `n` points of stream 4.
//!
//! `transform`: `Transform::forward` of `2^log` values (stream 8) over
//! `Goldilocks` and over `Fp64::proth()`, the tables built before the
//! timing and each run on a fresh copy of the input.
//!
//! A benchmark run by hand, never in CI.

use std::process::ExitCode;
use std::time::Instant;

use field::poly::Transform;
use field::{Field, FiniteField, Fp64, Goldilocks, Poly, poly};

const USAGE: &str = "usage: kernels kernels --n N [--repeat R] [--seed S]\n       \
kernels transform --log L [--repeat R] [--seed S]";

/// The point at which the digests evaluate a result.
const DIGEST_POINT: u64 = 1_234_567;
/// The distance between the generator's streams' starting states.
const GEN_STRIDE: u64 = 0x9E37_79B9_7F4A_7C15;

#[derive(Debug)]
struct Args {
    mode: String,
    n: usize,
    log: u32,
    repeat: usize,
    seed: u64,
}

fn parse_num<T: std::str::FromStr>(flag: &str, value: Option<String>) -> Result<T, String> {
    let v = value.ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse()
        .map_err(|_| format!("{flag}: `{v}` is not a non-negative integer"))
}

fn parse_args() -> Result<Args, String> {
    let mut it = std::env::args().skip(1);
    let mode = it.next().ok_or("a mode is required")?;
    if mode == "-h" || mode == "--help" {
        return Err(String::new());
    }
    let mut args = Args {
        mode,
        n: 0,
        log: 0,
        repeat: 5,
        seed: 1,
    };
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--n" => args.n = parse_num("--n", it.next())?,
            "--log" => args.log = parse_num("--log", it.next())?,
            "--repeat" => args.repeat = parse_num("--repeat", it.next())?,
            "--seed" => args.seed = parse_num("--seed", it.next())?,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    if args.repeat == 0 {
        return Err("--repeat must be at least 1".into());
    }
    match args.mode.as_str() {
        "kernels" if args.n < 16 => Err("--n must be at least 16".into()),
        "transform" if !(1..=30).contains(&args.log) => Err("--log must be in 1..=30".into()),
        "kernels" | "transform" => Ok(args),
        other => Err(format!("unknown mode `{other}`")),
    }
}

/// The median (the mean of the middle two for an even count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Runs `f` `repeat` times; its result of the last run, and the median
/// wall-clock seconds.
///
/// One untimed run first, as FLINT's driver does: the first large
/// allocations of a process are fresh pages from the system (glibc hands
/// out big blocks by `mmap` until its threshold adapts), which is the
/// process warming up, not the kernel.
fn timed<T>(repeat: usize, mut f: impl FnMut() -> T) -> (T, f64) {
    std::hint::black_box(f());
    let mut times = Vec::with_capacity(repeat);
    let mut out = None;
    for _ in 0..repeat {
        let start = Instant::now();
        out = Some(f());
        times.push(start.elapsed().as_secs_f64());
    }
    match out {
        Some(v) => (v, median(times)),
        None => unreachable!("repeat >= 1 was checked"),
    }
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The field's modulus as a word.
fn modulus<F: FiniteField>(f: &F) -> Result<u64, String> {
    u64::try_from(f.characteristic()).map_err(|_| "a modulus above 2^64".to_string())
}

/// `n` values of stream `stream`, each reduced mod `p` (the C driver's
/// `gen_vec`).
fn gen_vec<F: FiniteField>(
    f: &F,
    n: usize,
    seed: u64,
    stream: u64,
) -> Result<Vec<F::Elem>, String> {
    let p = modulus(f)?;
    let mut state = seed.wrapping_add(stream.wrapping_mul(GEN_STRIDE));
    Ok((0..n)
        .map(|_| f.from_u64(splitmix64(&mut state) % p))
        .collect())
}

/// A polynomial of exactly `n` coefficients from [`gen_vec`]: a zero top
/// coefficient becomes one.
fn gen_poly<F: FiniteField>(
    f: &F,
    n: usize,
    seed: u64,
    stream: u64,
) -> Result<Poly<F::Elem>, String> {
    let mut c = gen_vec(f, n, seed, stream)?;
    if let Some(top) = c.last_mut()
        && f.is_zero(top)
    {
        *top = f.one();
    }
    Ok(Poly::from_coeffs(f, c))
}

/// `sum_i c_i z^i` at `z = DIGEST_POINT`, as the canonical integer.
fn digest<F: FiniteField>(f: &F, c: &[F::Elem]) -> String {
    let z = f.from_u64(DIGEST_POINT);
    let acc = c
        .iter()
        .rev()
        .fold(f.zero(), |acc, x| f.add(&f.mul(&acc, &z), x));
    f.to_biguint(&acc).to_string()
}

fn report(n: usize, kernel: &str, secs: f64, digest: &str) {
    println!("ours kernels n={n} {kernel} {secs:.6} digest={digest}");
}

fn run_kernels(args: &Args) -> Result<(), String> {
    let f = Fp64::proth();
    let (n, seed, repeat) = (args.n, args.seed, args.repeat);
    println!(
        "# ours: field::Fp64::proth(), p = {}, n = {n}, seed = {seed}, {repeat} runs, \
         RAYON_NUM_THREADS={}",
        f.characteristic(),
        std::env::var("RAYON_NUM_THREADS").unwrap_or_else(|_| "(unset)".into())
    );
    let a = gen_poly(&f, n, seed, 1)?;
    let b = gen_poly(&f, n, seed, 2)?;
    let d = gen_poly(&f, 2 * n, seed, 3)?;
    let xs = gen_vec(&f, n, seed, 4)?;
    let mut g = gen_vec(&f, 10, seed, 5)?;
    g[9] = f.one();
    let g = Poly::from_coeffs(&f, g);
    let ga = poly::mul(&f, &g, &gen_poly(&f, n - 9, seed, 6)?);
    let gb = poly::mul(&f, &g, &gen_poly(&f, n - 9, seed, 7)?);

    let (prod, secs) = timed(repeat, || poly::mul(&f, &a, &b));
    report(n, "mul", secs, &digest(&f, prod.coeffs()));
    // No truncated products in the API: the full product, truncated.
    let (low, secs) = timed(repeat, || {
        let mut c = poly::mul(&f, &a, &b).into_coeffs();
        c.truncate(n);
        Poly::from_coeffs(&f, c)
    });
    report(n, "mullow", secs, &digest(&f, low.coeffs()));
    let (high, secs) = timed(repeat, || poly::mul(&f, &a, &b));
    let high = high.coeffs().get(n..).unwrap_or_default();
    report(n, "mulhigh", secs, &digest(&f, high));

    let (qr, secs) = timed(repeat, || poly::div_rem(&f, &d, &b));
    let (q, r) = qr.map_err(|e| format!("div_rem: {e}"))?;
    report(
        n,
        "divrem",
        secs,
        &format!("{}:{}", digest(&f, q.coeffs()), digest(&f, r.coeffs())),
    );

    let (gcd, secs) = timed(repeat, || poly::gcd(&f, &ga, &gb));
    report(n, "gcd", secs, &digest(&f, gcd.coeffs()));
    if gcd != g {
        println!("# warning: the gcd is not the planted factor of degree 9");
    }

    let (values, secs) = timed(repeat, || poly::evaluate_many(&f, &a, &xs));
    report(n, "evaluate", secs, &digest(&f, &values));
    Ok(())
}

/// One field's forward transform of `2^log` points.
fn transform<F: FiniteField>(f: &F, name: &str, args: &Args) -> Result<(), String> {
    let t = Transform::new(f, args.log)
        .ok_or_else(|| format!("{name} has no root of unity of order 2^{}", args.log))?;
    let input = gen_vec(f, t.len(), args.seed, 8)?;
    let mut times = Vec::with_capacity(args.repeat);
    let mut v = input.clone();
    for _ in 0..args.repeat {
        v.clone_from(&input);
        let start = Instant::now();
        t.forward(f, &mut v);
        times.push(start.elapsed().as_secs_f64());
    }
    println!(
        "ours transform log={} {name} {:.6} digest={}",
        args.log,
        median(times),
        digest(f, &v)
    );
    Ok(())
}

fn run_transforms(args: &Args) -> Result<(), String> {
    println!(
        "# ours: Transform::forward of 2^{} points, seed = {}, {} runs",
        args.log, args.seed, args.repeat
    );
    transform(&Goldilocks, "goldilocks", args)?;
    transform(&Fp64::proth(), "proth", args)
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("error: {e}");
            }
            eprintln!("{USAGE}");
            return if e.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            };
        }
    };
    let result = match args.mode.as_str() {
        "kernels" => run_kernels(&args),
        _ => run_transforms(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
