//! Measures the decode time of every exact sketch scheme over a grid of
//! capacities: the figures behind `syndrome_agg::cost` (the cost model
//! that picks the default scheme).
//!
//! ```text
//! cargo run --release -p syndrome-agg --example scheme_costs -- [--repeat N] [--max-t T]
//! ```
//!
//! For each capacity `t` of the grid (up to `--max-t`, default 10^5), an
//! aggregate of `t` distinct keys with counts in `1..=100` (ChaCha20, fixed
//! seed) is encoded and decoded, median of `--repeat` runs (default 3):
//!
//! * `word`: field keys in `GF(27 * 2^59 + 1)` (keys below `2^40`);
//! * `partitioned`: the same keys in a partitioned sketch with the default
//!   bucket count and overflow bound;
//! * `wide`: wide keys of 10 bytes (a key domain of `2^80`: two payload
//!   channels), up to `t = 4000` (the client-side encoder is per key);
//! * `m127`: field keys in `GF(2^127 - 1)` (keys below `2^100`), up to
//!   `t = 1000`;
//! * `big348`: field keys in the 348-bit prime `cheapest_field` picks for
//!   `2^347` (the `digits` data set's `B^d`), up to `t = 100`.
//!
//! Every decode is checked against the encoded vector. Prints a markdown
//! table (seconds). A benchmark run by hand, never in CI
//! (docs/benchmarks.md, "The cost model of the default scheme").

// A measurement run by hand on inputs it builds itself: a failure is a bug
// to see at once, as in a test.
#![allow(clippy::unwrap_used)]

use std::process::ExitCode;
use std::time::Instant;

use field::primes::{FieldChoice, cheapest_field};
use field::{FiniteField, Fp64, Mersenne127};
use num_bigint::BigUint;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;
use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
use syndrome_agg::wide::{WideKeyParams, WideSketch};
use syndrome_agg::{CountPolicy, LinearSketch, Sketch, SketchParams};

const GRID: [usize; 8] = [30, 100, 300, 1000, 3000, 10_000, 30_000, 100_000];
const WIDE_MAX: usize = 4000;
const M127_MAX: usize = 1000;
const BIG_MAX: usize = 100;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `t` distinct keys below `2^bits` and their counts.
fn entries(t: usize, bits: u32) -> Vec<(BigUint, u64)> {
    let mut rng = ChaCha20Rng::seed_from_u64(t as u64);
    let mut keys = std::collections::BTreeSet::new();
    let top = BigUint::from(1u8) << bits;
    while keys.len() < t {
        let mut bytes = vec![0u8; bits.div_ceil(8) as usize];
        rng.fill(&mut bytes[..]);
        let k = BigUint::from_bytes_le(&bytes) % &top;
        if k > BigUint::from(0u8) {
            keys.insert(k);
        }
    }
    keys.into_iter()
        .map(|k| (k, rng.random_range(1..=100u64)))
        .collect()
}

fn time<T>(repeat: usize, mut run: impl FnMut() -> T, check: impl Fn(&T)) -> f64 {
    median(
        (0..repeat)
            .map(|_| {
                let start = Instant::now();
                let out = run();
                let s = start.elapsed().as_secs_f64();
                check(&out);
                s
            })
            .collect(),
    )
}

fn field_keys<F: FiniteField>(f: F, t: usize, bits: u32, repeat: usize) -> f64 {
    let e = entries(t, bits);
    let top = BigUint::from(1u8) << bits;
    let params = SketchParams::new(t, top)
        .with_counts(CountPolicy::unsigned(100 * t as u64))
        .validate(f)
        .unwrap();
    let s = Sketch::from_unsigned(&params, e).unwrap();
    time(repeat, || s.decode().unwrap(), |d| assert_eq!(d.len(), t))
}

fn partitioned(t: usize, repeat: usize) -> (f64, usize) {
    let e = entries(t, 40);
    let params = PartitionParams::new(t, BigUint::from(1u64 << 40), [3; 32])
        .with_counts(CountPolicy::unsigned(100 * t as u64))
        .validate(Fp64::proth())
        .unwrap();
    let s = PartitionedSketch::from_unsigned(&params, e).unwrap();
    let secs = time(repeat, || s.decode().unwrap(), |d| assert_eq!(d.len(), t));
    (secs, params.buckets())
}

fn wide(t: usize, repeat: usize) -> f64 {
    let e = entries(t, 80);
    let params = WideKeyParams::new(t, 10, [5; 32])
        .with_counts(CountPolicy::unsigned(100 * t as u64))
        .validate(Fp64::proth())
        .unwrap();
    let bytes: Vec<(Vec<u8>, u64)> = e.iter().map(|(k, c)| (k.to_bytes_le(), *c)).collect();
    let s = WideSketch::from_unsigned(&params, bytes.iter().map(|(k, c)| (&k[..], *c))).unwrap();
    time(repeat, || s.decode().unwrap(), |d| assert_eq!(d.len(), t))
}

fn main() -> ExitCode {
    let mut repeat = 3usize;
    let mut max_t = 100_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let v = args.next().and_then(|v| v.parse().ok());
        match (a.as_str(), v) {
            ("--repeat", Some(v)) => repeat = v,
            ("--max-t", Some(v)) => max_t = v,
            _ => {
                eprintln!("usage: scheme_costs [--repeat N] [--max-t T]");
                return ExitCode::FAILURE;
            }
        }
    }
    let FieldChoice::Big(big) = cheapest_field(&(BigUint::from(1u8) << 347u32)) else {
        eprintln!("2^347 should need a big prime");
        return ExitCode::FAILURE;
    };
    println!("repeat {repeat}; seconds, medians");
    println!("| t | word | partitioned (G) | wide (c = 2) | m127 | big348 |");
    println!("|---:|---:|---:|---:|---:|---:|");
    let cell = |on: bool, f: &mut dyn FnMut() -> f64| {
        if on {
            format!("{:.6}", f())
        } else {
            "-".to_string()
        }
    };
    for t in GRID.into_iter().filter(|&t| t <= max_t) {
        let w = field_keys(Fp64::proth(), t, 40, repeat);
        let (p, g) = partitioned(t, repeat);
        let wk = cell(t <= WIDE_MAX, &mut || wide(t, repeat));
        let m = cell(t <= M127_MAX, &mut || {
            field_keys(Mersenne127, t, 100, repeat)
        });
        let b = cell(t <= BIG_MAX, &mut || {
            field_keys(big.clone(), t, 340, repeat)
        });
        println!("| {t} | {w:.6} | {p:.6} ({g}) | {wk} | {m} | {b} |");
    }
    ExitCode::SUCCESS
}
