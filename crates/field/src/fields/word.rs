//! Addition, subtraction and negation modulo a one-word prime `p < 2^64`,
//! shared by the one-word fields ([`Mersenne61`](crate::Mersenne61),
//! [`Goldilocks`](crate::Goldilocks) and [`Fp64`](crate::Fp64), whose
//! Montgomery forms add like plain residues).
//!
//! The conditional correction is a select, not a branch: with random
//! operands (polynomial products, transforms) either way is a coin flip,
//! and a mispredicted branch costs more than the correction. Measured:
//! the roots of 30 000 linear factors over `Fp64::proth()` took 0.44 s
//! with selects against 1.06 s with branches (docs/benchmarks.md).

/// `a + b mod p` for `a, b < p`. The sum is below `2p`, which may pass
/// `2^64` when `p > 2^63` (the carry then means it reached `p`).
#[inline(always)]
pub(crate) fn add(a: u64, b: u64, p: u64) -> u64 {
    let (s, carry) = a.overflowing_add(b);
    let (t, borrow) = s.overflowing_sub(p);
    // Keep s when it was below p and did not carry.
    core::hint::select_unpredictable(borrow & !carry, s, t)
}

/// `a - b mod p` for `a, b < p`.
#[inline(always)]
pub(crate) fn sub(a: u64, b: u64, p: u64) -> u64 {
    let (d, borrow) = a.overflowing_sub(b);
    core::hint::select_unpredictable(borrow, d.wrapping_add(p), d)
}

/// `-a mod p` for `a < p`.
#[inline(always)]
pub(crate) fn neg(a: u64, p: u64) -> u64 {
    if a == 0 { 0 } else { p - a }
}
