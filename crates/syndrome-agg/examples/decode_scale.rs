//! Times building and decoding one large sparse sketch, and writes its
//! syndromes for the FLINT peer (`benches/peers/flint_decode.py`).
//!
//! ```text
//! cargo run --release -p syndrome-agg --example decode_scale -- \
//!     --field goldilocks --t 10000 [--extra R] [--seed S] [--repeat N] \
//!     [--write FILE] [--no-decode] [--no-breakdown]
//! python3 benches/peers/flint_decode.py FILE --repeat N
//! ```
//!
//! Builds a sketch of capacity `t` with `R` extra check syndromes (default
//! [`DEFAULT_EXTRA`]) over the chosen field (`m61` = `GF(2^61 - 1)`,
//! `goldilocks` = `GF(2^64 - 2^32 + 1)`, `proth` = `GF(27 * 2^59 + 1)`), holding `t` distinct keys uniform
//! in `[1, 2^40]` with counts uniform in `1..=100` (ChaCha20 seeded by
//! `--seed`, so the input is the same on every run). Then, with the median
//! over `--repeat` runs, one line per stage, in seconds:
//!
//! * `build`: `Sketch::new` and one `insert_many` of the `t` entries;
//! * `decode`: the full public decoder, `Sketch::decode` (checked against
//!   the inserted vector);
//! * unless `--no-breakdown`, the same decoder's steps one by one through
//!   the `field` crate's public functions: `locator` (`minimal_recurrence`
//!   on all `2t + r` syndromes: Berlekamp-Massey, half-GCD above 2048),
//!   `roots` (of the reversed locator), `counts` (the transposed
//!   Vandermonde solve on the first `t` syndromes) and `counts+check`
//!   (what the decoder runs: `TransposedVandermonde::solve` on all
//!   `2t + r` syndromes, the counts and the check by one product), then
//!   `loc+roots+counts` (the stages the FLINT peer times) and
//!   `loc+roots+checked` (the decoder's steps). `Sketch::decode` also
//!   converts, sorts and checks the counts against the policy, and seeds
//!   its root-finding RNG from a hash of the syndromes (the breakdown from
//!   `--seed`), so its time is about, not exactly, the last sum.
//!
//! `--write FILE` writes a plain text file: the prime `p`, then `t`, then
//! the first `2t` syndromes `s_1..s_2t`, then the `t` keys (ascending) and
//! their `t` counts, as decimal integers, one per line. `--no-decode` stops
//! after the build (and the write): for sizes our decoder takes too long on.
//!
//! `--buckets G` builds and decodes a partitioned sketch of the same
//! inputs instead (`syndrome_agg::partitioned`; `G = 0` takes the default
//! number of buckets for `t`), with the per-bucket capacity from the
//! default overflow bound.
//!
//! A benchmark run by hand, never in CI (docs/benchmarks.md).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Instant;

use field::{
    FiniteField, Fp64, Goldilocks, Mersenne61, TransposedVandermonde, find_roots,
    minimal_recurrence, poly, solve_transposed_vandermonde,
};
use num_bigint::BigUint;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;
use syndrome_agg::RawSketch;
use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
use syndrome_agg::{CountPolicy, DEFAULT_EXTRA, LinearParams, LinearSketch, Sketch, SketchParams};

const USAGE: &str = "usage: decode_scale --field m61|goldilocks|proth --t T [--extra R] [--seed S] \
[--repeat N] [--write FILE] [--no-decode] [--no-breakdown] [--buckets G]";

/// Keys are uniform in `[1, KEY_DOMAIN]`.
const KEY_DOMAIN: u64 = 1 << 40;
/// Counts are uniform in `1..=MAX_COUNT`.
const MAX_COUNT: u64 = 100;

#[derive(Debug)]
struct Args {
    field: String,
    t: usize,
    extra: usize,
    seed: u64,
    repeat: usize,
    write: Option<String>,
    decode: bool,
    breakdown: bool,
    /// `Some(G)`: a partitioned sketch of `G` buckets (`0`: the default
    /// for `t`) instead of one sketch.
    buckets: Option<usize>,
}

fn parse_num<T: std::str::FromStr>(flag: &str, value: Option<String>) -> Result<T, String> {
    let v = value.ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse()
        .map_err(|_| format!("{flag}: `{v}` is not a non-negative integer"))
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        field: "goldilocks".into(),
        t: 0,
        extra: DEFAULT_EXTRA,
        seed: 0,
        repeat: 1,
        write: None,
        decode: true,
        breakdown: true,
        buckets: None,
    };
    let mut t = None;
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        match flag.as_str() {
            "--field" => args.field = it.next().ok_or("--field needs a value")?,
            "--t" => t = Some(parse_num("--t", it.next())?),
            "--extra" => args.extra = parse_num("--extra", it.next())?,
            "--seed" => args.seed = parse_num("--seed", it.next())?,
            "--repeat" => args.repeat = parse_num("--repeat", it.next())?,
            "--write" => args.write = Some(it.next().ok_or("--write needs a file name")?),
            "--no-decode" => args.decode = false,
            "--no-breakdown" => args.breakdown = false,
            "--buckets" => args.buckets = Some(parse_num("--buckets", it.next())?),
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    args.t = t.ok_or("--t is required")?;
    if args.t == 0 {
        return Err("--t must be at least 1".into());
    }
    // Rejection sampling of distinct keys needs room in the domain.
    if u64::try_from(args.t).map_or(true, |t| t > KEY_DOMAIN / 2) {
        return Err(format!("--t must be at most {}", KEY_DOMAIN / 2));
    }
    if args.repeat == 0 {
        return Err("--repeat must be at least 1".into());
    }
    Ok(args)
}

/// The median of the samples (the mean of the middle two for an even
/// count).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Runs `f` `repeat` times; its result of the last run, and the median of
/// the wall-clock seconds.
fn timed<T>(repeat: usize, mut f: impl FnMut() -> T) -> (T, f64) {
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

fn report(stage: &str, seconds: f64, repeat: usize) {
    println!("{stage:<16} {seconds:>12.6} s   (median of {repeat})");
}

/// `t` distinct keys uniform in `[1, 2^40]`, each with a count uniform in
/// `1..=100`, sorted by key.
fn inputs(t: usize, seed: u64) -> Vec<(u64, u64)> {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut entries = BTreeMap::new();
    while entries.len() < t {
        let key = rng.random_range(1..=KEY_DOMAIN);
        let count = rng.random_range(1..=MAX_COUNT);
        entries.entry(key).or_insert(count);
    }
    entries.into_iter().collect()
}

/// A partitioned sketch of the same inputs: build and decode, timed.
fn run_partitioned<F: FiniteField>(f: F, args: &Args, buckets: usize) -> Result<(), String> {
    let t = args.t;
    let max_total = u64::try_from(t)
        .ok()
        .and_then(|t| t.checked_mul(MAX_COUNT))
        .ok_or("t * 100 overflows")?;
    let mut pp = PartitionParams::new(t, KEY_DOMAIN, [7; 32])
        .with_extra(args.extra)
        .with_counts(CountPolicy::unsigned(max_total))
        .with_max_elements(usize::MAX);
    if buckets > 0 {
        pp = pp.with_buckets(buckets);
    }
    let params = pp
        .validate(f.clone())
        .map_err(|e| format!("parameters: {e}"))?;
    println!(
        "field p = {}, t = {t}, partitioned: G = {} buckets of capacity {} (r = {}), {} elements, overflow bound 2^{:.1}, seed = {}",
        f.characteristic(),
        params.buckets(),
        params.bucket_capacity(),
        args.extra,
        params.num_elements(),
        params.overflow_log2(),
        args.seed
    );
    let entries = inputs(t, args.seed);
    let entries: Vec<(BigUint, F::Elem)> = entries
        .iter()
        .map(|&(k, c)| (BigUint::from(k), f.from_u64(c)))
        .collect();
    let (sketch, secs) = timed(args.repeat, || {
        let mut s = PartitionedSketch::new(&params);
        s.insert_many(&entries).map(|()| s)
    });
    let sketch = sketch.map_err(|e| format!("insert_many: {e}"))?;
    report("build", secs, args.repeat);
    if !args.decode {
        return Ok(());
    }
    let (decoded, secs) = timed(args.repeat, || sketch.decode());
    let decoded = decoded.map_err(|e| format!("decode failed: {e}"))?;
    if decoded.entries() != entries.as_slice() {
        return Err(format!(
            "decode returned {} entries that differ from the {t} inserted",
            decoded.len()
        ));
    }
    report("decode", secs, args.repeat);
    Ok(())
}

/// The whole run over one field.
fn run<F: FiniteField>(f: F, args: &Args) -> Result<(), String> {
    if let Some(buckets) = args.buckets {
        return run_partitioned(f, args, buckets);
    }
    let t = args.t;
    let max_total = u64::try_from(t)
        .ok()
        .and_then(|t| t.checked_mul(MAX_COUNT))
        .ok_or("t * 100 overflows")?;
    let params = SketchParams::new(t, KEY_DOMAIN)
        .with_extra(args.extra)
        .with_counts(CountPolicy::unsigned(max_total))
        .with_max_syndromes(usize::MAX)
        .validate(f.clone())
        .map_err(|e| format!("parameters: {e}"))?;
    let m = params.num_syndromes();
    println!(
        "field p = {}, t = {t}, r = {}, 2t + r = {m}, seed = {}",
        f.characteristic(),
        args.extra,
        args.seed
    );
    let entries = inputs(t, args.seed);
    let keys: Vec<BigUint> = entries.iter().map(|&(k, _)| BigUint::from(k)).collect();
    let counts: Vec<F::Elem> = entries.iter().map(|&(_, c)| f.from_u64(c)).collect();

    let (sketch, secs) = timed(args.repeat, || -> Result<_, String> {
        let mut s = Sketch::new(&params);
        let entries: Vec<(BigUint, F::Elem)> =
            keys.iter().cloned().zip(counts.iter().cloned()).collect();
        s.insert_many(&entries)
            .map_err(|e| format!("insert_many: {e}"))?;
        Ok(s)
    });
    let sketch = sketch?;
    report("build", secs, args.repeat);

    if let Some(path) = &args.write {
        write_file(&f, path, t, &sketch.elements(), &entries)?;
        println!("wrote {path}");
    }
    if !args.decode {
        return Ok(());
    }

    let (decoded, secs) = timed(args.repeat, || sketch.decode());
    let decoded = decoded.map_err(|e| format!("decode failed: {e}"))?;
    let expected: Vec<(BigUint, F::Elem)> = keys.iter().cloned().zip(counts).collect();
    if decoded.entries() != expected.as_slice() {
        return Err(format!(
            "decode returned {} entries that differ from the {t} inserted",
            decoded.len()
        ));
    }
    report("decode", secs, args.repeat);

    if args.breakdown {
        breakdown(&f, &sketch.elements(), t, args)?;
    }
    Ok(())
}

/// The steps of `Sketch::decode`, timed one by one through the `field`
/// crate's public functions.
fn breakdown<F: FiniteField>(f: &F, s: &[F::Elem], t: usize, args: &Args) -> Result<(), String> {
    let (rec, bm) = timed(args.repeat, || minimal_recurrence(f, s, t));
    let rec = rec.map_err(|e| format!("minimal_recurrence: {e}"))?;
    let rev = poly::reverse(f, &rec.connection, rec.length + 1);

    let mut rng = ChaCha20Rng::seed_from_u64(args.seed);
    let (roots, secs_roots) = timed(args.repeat, || find_roots(f, &rev, &mut rng));
    let roots = roots.map_err(|e| format!("find_roots: {e}"))?;
    if roots.len() != t {
        return Err(format!("find_roots found {} roots, not {t}", roots.len()));
    }

    let first = &s[..t];
    let (values, secs_counts) = timed(args.repeat, || {
        solve_transposed_vandermonde(f, &roots, first)
    });
    let values = values.map_err(|e| format!("solve_transposed_vandermonde: {e}"))?;

    // What the decoder does after the roots: one prepared system, solved
    // on all 2t + r syndromes (the counts and the check by one product).
    let (checked, secs_checked) = timed(args.repeat, || {
        TransposedVandermonde::new(f, &roots).and_then(|v| v.solve(f, s))
    });
    if checked.map_err(|e| format!("TransposedVandermonde::solve: {e}"))? != values {
        return Err("the checked solve differs from the solve".into());
    }
    let n = args.repeat;
    report("locator", bm, n);
    report("roots", secs_roots, n);
    report("counts", secs_counts, n);
    report("counts+check", secs_checked, n);
    // The first sum is what FLINT's peer times (it has no check stage),
    // the second the decoder's steps.
    report("loc+roots+counts", bm + secs_roots + secs_counts, n);
    report("loc+roots+checked", bm + secs_roots + secs_checked, n);
    Ok(())
}

/// The peer's input file (see the module docs).
fn write_file<F: FiniteField>(
    f: &F,
    path: &str,
    t: usize,
    s: &[F::Elem],
    entries: &[(u64, u64)],
) -> Result<(), String> {
    let mut out = String::new();
    let lines = std::iter::once(f.characteristic())
        .chain(std::iter::once(BigUint::from(t)))
        .chain(s[..2 * t].iter().map(|x| f.to_biguint(x)))
        .chain(entries.iter().map(|&(k, _)| BigUint::from(k)))
        .chain(entries.iter().map(|&(_, c)| BigUint::from(c)));
    for v in lines {
        // Writing to a String cannot fail.
        let _ = writeln!(out, "{v}");
    }
    std::fs::write(path, out).map_err(|e| format!("writing {path}: {e}"))
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
    // One arm per field: a third field is one more arm.
    let result = match args.field.as_str() {
        "m61" => run(Mersenne61, &args),
        "goldilocks" => run(Goldilocks, &args),
        "proth" => run(Fp64::proth(), &args),
        other => Err(format!(
            "unknown field `{other}` (expected m61, goldilocks or proth)\n{USAGE}"
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
