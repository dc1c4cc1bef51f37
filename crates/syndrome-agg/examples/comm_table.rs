//! Prints the communication table of `docs/benchmarks.md` ("Bytes a client
//! sends"): the bytes one client sends under every sketch scheme, against
//! a dense masked vector of length `N = B^d`, for the paper's seven data
//! sets (Appendix M.1), and the scheme the cost model picks.
//!
//! `cargo run --release -p syndrome-agg --example comm_table`
//!
//! Conventions: `gamma = 1/sqrt(n)`, `B = ceil(1/gamma) = ceil(sqrt(n))`,
//! `N = B^d`, `t = K L` with `L = 10` for TCGA and TMI and `100` otherwise
//! (three more rows, whose `N` fits one word, say their own),
//! `r = 1`, and the field bound `max(N, 2n)` that `mufc` asks for (room for
//! signed differences). Sizes count elements only (a frame adds about 60
//! bytes), from the validated parameters where validating is cheap:
//!
//! - field keys: `2t + r` elements of `cheapest_field(max(N, 2n))`; above
//!   `MAX_FIELD_KEY_BITS` the scheme is refused (the prime search takes
//!   minutes) and the table gives the size that prime would have had;
//! - wide keys: `2t + r + c t` elements of `GF(27 * 2^59 + 1)`;
//! - partitioned: `G (2 t_b + r)` elements of `GF(27 * 2^59 + 1)`, only
//!   where the bound fits that field;
//! - integer (Appendix K): `2t + r` elements of `Z / 2^k`, `k` the bits of
//!   `n N^(2t + r - 1)`;
//! - dense: `N` counts masked in a 64-bit field.

use field::primes::{FieldChoice, cheapest_field};
use field::{FiniteField, P_PROTH};
use num_bigint::BigUint;
use num_integer::Roots;
use syndrome_agg::{
    AnyParams, LinearParams, MAX_FIELD_KEY_BITS, Scheme, SketchParams, fastest_scheme,
};

fn human(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / f64::from(1 << 20)),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}

/// Bytes of `elements` elements of `bits` bits each.
fn bytes(elements: usize, bits: u64) -> u64 {
    u64::try_from(elements)
        .unwrap_or(u64::MAX)
        .saturating_mul(bits.div_ceil(8))
}

/// A data set's shape: name, n, d, K, L, and B (`None`: `ceil(sqrt(n))`).
type Shape = (&'static str, u64, u32, u64, u64, Option<u64>);

fn main() -> Result<(), syndrome_agg::SketchError> {
    let sets: [Shape; 10] = [
        ("Celltype", 12_009, 10, 4, 100, None),
        ("Postures", 74_975, 15, 5, 100, None),
        ("Covtype", 15_120, 52, 7, 100, None),
        ("Gaussian", 30_000, 10, 10, 100, None),
        ("FEMNIST", 36_725, 784, 62, 100, None),
        ("TCGA", 1_904, 57, 4, 10, None),
        ("TMI", 1_126, 984, 4, 10, None),
        // Shapes whose N fits one word: two of scikit-learn's sets as
        // benches/peers/real_data.py runs them, and the Gaussian set at
        // gamma = 0.05 over 300 clients (`mufc run --gamma 0.05 --clients
        // 300`, where the default is a partitioned sketch).
        ("iris (L = 10)", 150, 4, 3, 10, None),
        ("wine (L = 10)", 178, 13, 3, 10, None),
        (
            "Gaussian, gamma = 0.05, L = 300",
            30_000,
            10,
            10,
            300,
            Some(20),
        ),
    ];
    println!(
        "| data set | n | d | K | L | t | B | log2 N | field keys (bits) | wide keys (c) | partitioned (G) | integer (k bits) | dense masked vector | default (cost model) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (name, n, d, k, l, b_given) in sets {
        let t = usize::try_from(k * l).unwrap_or(usize::MAX);
        let sqrt = n.sqrt();
        let b = b_given.unwrap_or(if sqrt * sqrt == n { sqrt } else { sqrt + 1 });
        let big_n = num_traits::pow::pow(BigUint::from(b), d as usize);
        let bound = big_n.clone().max(BigUint::from(2 * n));
        let sketch = SketchParams::new(t, big_n.clone());
        let m = 2 * t + 1;
        let validate = |scheme: Scheme| {
            AnyParams::new(scheme, sketch.clone())
                .with_field_bound(bound.clone())
                .validate()
        };

        let field = if bound.bits() > MAX_FIELD_KEY_BITS {
            let bits = bound.bits() + 1;
            format!("{} ({bits}, refused)", human(bytes(m, bits)))
        } else {
            let bits = match cheapest_field(&bound) {
                FieldChoice::Proth(f) => f.modulus_bits(),
                FieldChoice::Mersenne127(f) => f.modulus_bits(),
                FieldChoice::Big(f) => f.modulus_bits(),
            };
            format!("{} ({bits})", human(bytes(m, bits)))
        };
        let wide = validate(Scheme::WideKeys { hash_key: [0; 32] })?;
        let channels = (wide.num_elements() - m) / t;
        let wide = format!(
            "{} ({channels})",
            human(bytes(wide.num_elements(), wide.modulus_bits()))
        );
        let partitioned = if bound < BigUint::from(P_PROTH) {
            let p = validate(Scheme::Partitioned { hash_key: [0; 32] })?;
            let (g, _) = syndrome_agg::cost::default_partition(t);
            format!("{} ({g})", human(bytes(p.num_elements(), p.modulus_bits())))
        } else {
            "- (N beyond one word)".to_string()
        };
        // k = bits of n N^(2t + r - 1), as the integer scheme's modulus.
        let k_bits = (m as u64 - 1) * big_n.bits() + u64::from(64 - n.leading_zeros());
        let integer = format!("{} ({k_bits})", human(bytes(m, k_bits)));
        let log2_n = (b as f64).log2() * f64::from(d);
        let default = fastest_scheme(&sketch, &bound, [0; 32])?;
        println!(
            "| {name} | {n} | {d} | {k} | {l} | {t} | {b} | {log2_n:.1} | {field} | {wide} | {partitioned} | {integer} | 2^{:.1} B | {} |",
            log2_n + 3.0,
            default.name(),
        );
    }
    Ok(())
}
