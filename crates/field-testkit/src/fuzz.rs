//! Fuzz harness bodies. Each `fuzz/fuzz_targets/*.rs` file is one line that
//! calls a function here; [`replay`] runs the same bodies on stable Rust
//! over deterministic pseudo-random inputs, so CI exercises every target
//! without nightly.

use field::{BigPrime, Field, FiniteField, Fp64, Mersenne61, Mersenne127};
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

/// Checks one Berlekamp-Massey run: an `Ok` result is a recurrence of the
/// sequence within the bound, an error is `DegreeExceeded` above it.
fn bm_check<F: Field>(f: &F, s: &[F::Elem], max_length: usize) {
    match field::berlekamp_massey(f, s, max_length) {
        Ok(rec) => {
            assert!(rec.length <= max_length, "length above the bound");
            assert!(
                crate::decoding::satisfies(f, &rec.connection, rec.length, s),
                "not a recurrence of the sequence"
            );
        }
        Err(field::FieldError::DegreeExceeded { max, needed }) => {
            assert_eq!(max, max_length);
            assert!(needed > max, "DegreeExceeded below the bound");
        }
        Err(e) => panic!("unexpected error {e}"),
    }
}

/// Berlekamp-Massey on arbitrary sequences over GF(7), GF(2^61 - 1),
/// GF(2^127 - 1) and the rationals, with a bound from the input: never
/// panics, and every answer is checked against the sequence.
pub fn bm(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let max_length = usize::from(selector >> 2);
    match selector % 4 {
        0 => {
            let f = Fp64::new(7).unwrap_or_else(|_| unreachable!("7 is prime"));
            let s: Vec<_> = rest.iter().map(|&b| f.from_u64(u64::from(b))).collect();
            bm_check(&f, &s, max_length);
        }
        1 => {
            let f = Mersenne61;
            let s: Vec<u64> = rest
                .chunks(8)
                .map(|c| f.from_u64(u64::from_le_bytes(pad(c))))
                .collect();
            bm_check(&f, &s, max_length);
        }
        2 => {
            let f = Mersenne127;
            let s: Vec<u128> = rest
                .chunks(16)
                .map(|c| f.from_biguint(&num_bigint::BigUint::from_bytes_le(c)))
                .collect();
            bm_check(&f, &s, max_length);
        }
        _ => {
            // Small signed integers keep the rational arithmetic cheap.
            let q = field::Rationals;
            let s: Vec<_> = rest
                .iter()
                .take(32)
                .map(|&b| q.from_i64(i64::from(i8::from_le_bytes([b])) % 5))
                .collect();
            bm_check(&q, &s, max_length);
        }
    }
}

fn pad(c: &[u8]) -> [u8; 8] {
    let mut a = [0u8; 8];
    a[..c.len()].copy_from_slice(c);
    a
}

/// Root finding on arbitrary input: over tiny fields against exhaustive
/// search; over GF(2^61 - 1) on arbitrary coefficients (an `Ok` must be a
/// full set of distinct roots) and on products of given roots (`Ok` exactly
/// when they are distinct, then those roots).
pub fn find_roots(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let mut rng = crate::rng("fuzz/find_roots");
    match selector % 3 {
        0 => {
            let q = [3u64, 5, 7, 11, 13][usize::from(selector >> 2) % 5];
            let f = Fp64::new(q).unwrap_or_else(|_| unreachable!("small primes"));
            let c: Vec<_> = rest
                .iter()
                .take(40)
                .map(|&b| f.from_u64(u64::from(b)))
                .collect();
            let p = field::Poly::from_coeffs(&f, c);
            let expect = crate::decoding::roots_by_search(&f, &p);
            assert_eq!(field::find_roots(&f, &p, &mut rng), expect);
        }
        1 => {
            let f = Mersenne61;
            let c: Vec<u64> = rest
                .chunks(8)
                .take(64)
                .map(|c| f.from_u64(u64::from_le_bytes(pad(c))))
                .collect();
            let p = field::Poly::from_coeffs(&f, c);
            match field::find_roots(&f, &p, &mut rng) {
                Ok(roots) => {
                    assert_eq!(roots.len(), p.degree().unwrap_or(0));
                    assert!(roots.windows(2).all(|w| w[0] < w[1]), "sorted, distinct");
                    for r in &roots {
                        assert_eq!(field::poly::evaluate(&f, &p, r), 0);
                    }
                }
                Err(field::FieldError::ZeroPolynomial) => assert!(p.is_zero()),
                Err(field::FieldError::NotSplit | field::FieldError::RepeatedRoot) => {}
                Err(e) => panic!("unexpected error {e}"),
            }
        }
        _ => {
            // A few distinct byte values make repeated roots common.
            let f = Mersenne61;
            let roots: Vec<u64> = rest
                .iter()
                .take(100)
                .map(|&b| f.from_u64(u64::from(b) * 0x9e37_79b9))
                .collect();
            let p = field::poly::from_roots(&f, &roots);
            let mut sorted = roots.clone();
            sorted.sort_unstable();
            sorted.dedup();
            let expect = if sorted.len() == roots.len() {
                Ok(sorted)
            } else {
                Err(field::FieldError::RepeatedRoot)
            };
            assert_eq!(field::find_roots(&f, &p, &mut rng), expect);
        }
    }
}

/// The polynomial product kernels on arbitrary input: the first byte picks
/// the field (GF(27 * 2^59 + 1), whose products run on its vectorised
/// transforms; GF(10^9 + 7) and GF(2^64 - 59), whose primes lack the
/// roots, so their products run through the multi-modular engine; and
/// GF(2^61 - 1)), the next four the two lengths (up to 1200 terms, which
/// crosses every threshold of these fields), and the rest seeds the
/// coefficients (so short inputs reach long products). Every product must
/// equal Karatsuba's, and over the transform field a transform and its
/// inverse give the input back, with the values of the forward transform
/// those of the polynomial at the powers of the root.
pub fn poly_kernels(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let len = |i: usize| {
        usize::from(u16::from_le_bytes([
            rest.get(i).copied().unwrap_or(0),
            rest.get(i + 1).copied().unwrap_or(0),
        ])) % 1201
    };
    let (la, lb) = (len(0), len(2));
    let seed = rest.iter().skip(4).fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    match selector % 4 {
        0 => products(&Fp64::proth(), la, lb, seed, true),
        1 => products(&prime(1_000_000_007), la, lb, seed, false),
        2 => products(&prime(u64::MAX - 58), la, lb, seed, false),
        _ => products(&Mersenne61, la, lb, seed, false),
    }
}

fn prime(p: u64) -> Fp64 {
    Fp64::new(p).unwrap_or_else(|_| unreachable!("{p} is prime"))
}

fn products<F: FiniteField>(f: &F, la: usize, lb: usize, seed: u64, transform: bool) {
    use rand::SeedableRng;
    let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let a: Vec<F::Elem> = (0..la).map(|_| f.random(rng)).collect();
    let b: Vec<F::Elem> = (0..lb).map(|_| f.random(rng)).collect();
    let (pa, pb) = (
        field::Poly::from_coeffs(f, a.clone()),
        field::Poly::from_coeffs(f, b),
    );
    assert_eq!(
        field::poly::mul(f, &pa, &pb),
        field::poly::mul_karatsuba(f, &pa, &pb),
        "{la} x {lb} terms"
    );
    if !transform || a.is_empty() {
        return;
    }
    let log = a.len().next_power_of_two().trailing_zeros();
    let Some(t) = field::poly::Transform::new(f, log) else {
        return;
    };
    let mut v = a;
    v.resize(t.len(), f.zero());
    let coeffs = v.clone();
    t.forward(f, &mut v);
    // Position i holds the value at w^bitrev(i): check two positions.
    let w = f
        .two_adic_root(log)
        .unwrap_or_else(|| unreachable!("the transform exists"));
    for i in [0, t.len() - 1] {
        let rev = if log == 0 {
            0
        } else {
            i.reverse_bits() >> (usize::BITS - log)
        };
        let x = f.pow_u64(&w, rev as u64);
        assert_eq!(
            v[i],
            field::poly::evaluate(f, &field::Poly::from_coeffs(f, coeffs.clone()), &x)
        );
    }
    t.inverse(f, &mut v);
    assert_eq!(v, coeffs, "inverse of forward, 2^{log} points");
}
