//! Prints the communication table of `docs/benchmarks.md` ("## syndrome-agg"):
//! the bytes one client sends with a syndrome sketch (plain and wide-key)
//! against a dense masked vector of length `N = B^d`, for the paper's seven
//! data sets (Appendix M.1).
//!
//! `cargo run --release -p syndrome-agg --example comm_table`
//!
//! Conventions: `gamma = 1/sqrt(n)`, `B = ceil(1/gamma) = ceil(sqrt(n))`,
//! `N = B^d`, `t = K L` with `L = 10` for TCGA and TMI and `100` otherwise,
//! `r = 1`. Plain sketch: `2t + r` elements of the field
//! `cheapest_field(max(n, N))`. Dense: `N` counts masked in `GF(2^61 - 1)`
//! (8 bytes each; `p > n` suffices for counts). Wide keys: `2t + r + c t`
//! elements of `GF(2^61 - 1)`, `c = ceil((2 + ceil(log2 N / 8)) / 7)`.
//! Sizes count field elements only (a frame adds about 60 bytes).

use field::primes::cheapest_field;
use field::{FiniteField, Mersenne61};
use num_bigint::BigUint;
use num_integer::Roots;
use syndrome_agg::LinearParams;
use syndrome_agg::wide::WideKeyParams;

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1 << 20)),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

fn main() -> Result<(), syndrome_agg::SketchError> {
    let sets: [(&str, u64, u32, u64); 7] = [
        ("Celltype", 12_009, 10, 4),
        ("Postures", 74_975, 15, 5),
        ("Covtype", 15_120, 52, 7),
        ("Gaussian", 30_000, 10, 10),
        ("FEMNIST", 36_725, 784, 62),
        ("TCGA", 1_904, 57, 4),
        ("TMI", 1_126, 984, 4),
    ];
    println!(
        "| data set | n | d | K | L | t | B | log2 N | field (bits) | plain sketch | wide-key sketch (c) | dense masked vector |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, n, d, k) in sets {
        let l = if matches!(name, "TCGA" | "TMI") {
            10
        } else {
            100
        };
        let t = k * l;
        let sqrt = n.sqrt();
        let b = if sqrt * sqrt == n { sqrt } else { sqrt + 1 };
        let big_n = num_traits::pow::pow(BigUint::from(b), d as usize);
        let bound = big_n.clone().max(BigUint::from(n));
        let field = cheapest_field(&bound);
        let p_bits = field.characteristic().bits();
        let elem_bytes = p_bits.div_ceil(8);
        let m = 2 * t + 1;
        let plain = m * elem_bytes;
        let key_bytes = usize::try_from(big_n.bits().div_ceil(8)).unwrap_or(usize::MAX);
        let wide = WideKeyParams::new(usize::try_from(t).unwrap_or(usize::MAX), key_bytes, [0; 32])
            .validate(Mersenne61)?;
        let wide_bytes = u64::try_from(wide.num_elements()).unwrap_or(u64::MAX)
            * u64::try_from(Mersenne61.byte_len()).unwrap_or(8);
        // log2(N * 8) = log2 N + 3, printed with two decimals.
        let log2_n = (b as f64).log2() * f64::from(d);
        println!(
            "| {name} | {n} | {d} | {k} | {l} | {t} | {b} | {log2_n:.1} | {p_bits} | {} | {} ({}) | 2^{:.1} B |",
            human(plain),
            human(wide_bytes),
            wide.channels(),
            log2_n + 3.0,
        );
    }
    Ok(())
}
