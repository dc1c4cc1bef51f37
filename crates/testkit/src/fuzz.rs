//! Fuzz harness bodies. Each `fuzz/fuzz_targets/*.rs` file is one line that
//! calls a function here; [`replay`] runs the same bodies on stable Rust
//! over deterministic pseudo-random inputs, so CI exercises every target
//! without nightly.

use field::{BigPrime, FiniteField, Fp64, Mersenne61, Mersenne127};
use rand::Rng;

fn bytes_round_trip<F: FiniteField>(f: &F, data: &[u8]) {
    if let Ok(e) = f.from_bytes(data) {
        assert_eq!(
            f.to_bytes(&e),
            data,
            "an accepted encoding must be canonical"
        );
    }
}

/// Field element decoding: never panics; whatever is accepted re-encodes
/// to exactly the input.
pub fn field_bytes(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    match selector % 4 {
        0 => bytes_round_trip(&Mersenne61, rest),
        1 => bytes_round_trip(&Mersenne127, rest),
        2 => {
            let f = Fp64::new(65_537).unwrap_or_else(|_| unreachable!("65537 is prime"));
            bytes_round_trip(&f, rest);
        }
        _ => {
            // 2^89 - 1, a Mersenne prime: a BigPrime of 12 bytes.
            let p = (num_bigint::BigUint::from(1u8) << 89u32) - 1u32;
            let f = BigPrime::new(p).unwrap_or_else(|_| unreachable!("2^89 - 1 is prime"));
            bytes_round_trip(&f, rest);
        }
    }
}

/// Runs `body` over `n` pseudo-random inputs of lengths up to `max_len`,
/// mixing uniform bytes with mostly-zero and mostly-0xff inputs (which hit
/// canonicity boundaries far more often than uniform bytes).
pub fn replay(label: &str, n: usize, max_len: usize, body: impl Fn(&[u8])) {
    let mut rng = crate::rng(label);
    for i in 0..n {
        let len = usize::try_from(rng.next_u64() % (max_len as u64 + 1)).unwrap_or(0);
        let mut data = vec![0u8; len];
        rng.fill_bytes(&mut data);
        match i % 3 {
            1 => data.iter_mut().for_each(|b| *b &= 0x03),
            2 => data.iter_mut().for_each(|b| *b |= 0xfc),
            _ => {}
        }
        body(&data);
    }
}
