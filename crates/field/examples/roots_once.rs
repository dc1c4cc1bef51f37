//! Times one root finding of a product of `m` random distinct linear
//! factors, for the cases too slow for a criterion bench (the input is
//! built as in `benches/algorithms.rs`).
//!
//! `cargo run --release -p field --example roots_once -- big1024 1000`
//! (fields: `mersenne61`, `mersenne127`, `big1024`).

use std::time::Instant;

use field::{BigPrime, FiniteField, Mersenne61, Mersenne127, find_roots, poly};

fn run<F: FiniteField>(f: &F, m: usize) {
    let mut rng = testkit::rng("roots_once");
    let mut nodes: Vec<F::Elem> = Vec::with_capacity(m);
    while nodes.len() < m {
        let x = f.random(&mut rng);
        if !f.is_zero(&x) && !nodes.contains(&x) {
            nodes.push(x);
        }
    }
    let p = poly::from_roots(f, &nodes);
    let start = Instant::now();
    let roots = find_roots(f, &p, &mut rng).expect("a product of distinct linear factors");
    let secs = start.elapsed().as_secs_f64();
    assert_eq!(roots.len(), m);
    println!("one find_roots, m = {m}: {secs:.3} s");
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let field = args.get(1).map_or("mersenne61", String::as_str);
    let m: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    match field {
        "mersenne61" => run(&Mersenne61, m),
        "mersenne127" => run(&Mersenne127, m),
        "big1024" => run(
            &BigPrime::new(testkit::known_primes::p1024()).expect("known prime"),
            m,
        ),
        other => eprintln!("unknown field {other}: use mersenne61, mersenne127 or big1024"),
    }
}
