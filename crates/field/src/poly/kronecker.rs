//! Kronecker substitution: a polynomial product as one big-integer
//! product.
//!
//! Coefficients are written into fixed-width bit slots of one integer (the
//! polynomial evaluated at `2^w`), the two integers are multiplied by
//! `num-bigint` (Karatsuba and Toom-3, with no reduction inside), and the
//! slots of the product are the coefficients of the polynomial product, as
//! long as `w` is wide enough that slots never carry into each other. For
//! multi-word coefficients this replaces `n^1.58` modular multiplications
//! by one integer multiplication of `O(n^1.47)` word operations and `2n`
//! reductions.

use num_bigint::BigUint;

/// The slot width for products of `min_len`-term sums of products of two
/// values below `2^elem_bits`: every product coefficient is below
/// `min_len * 2^(2 elem_bits)`.
pub(crate) fn slot_bits(elem_bits: u64, min_len: usize) -> usize {
    let log = usize::BITS - min_len.saturating_sub(1).leading_zeros();
    usize::try_from(2 * elem_bits).unwrap_or(usize::MAX) + log as usize
}

/// Packs `values` into slots of `w` bits; `write` appends the little-endian
/// 64-bit limbs of one value (which must be below `2^w`).
pub(crate) fn pack<E>(values: &[E], w: usize, write: impl Fn(&E, &mut Vec<u64>)) -> BigUint {
    let total = values.len() * w;
    // Two spare words absorb the (zero) spill of the last value's limbs.
    let mut out = vec![0u64; total.div_ceil(64) + 2];
    let mut limbs = Vec::new();
    for (i, v) in values.iter().enumerate() {
        limbs.clear();
        write(v, &mut limbs);
        let mut bit = i * w;
        for &l in &limbs {
            let (word, shift) = (bit / 64, bit % 64);
            if word >= out.len() {
                break;
            }
            out[word] |= l << shift;
            if shift > 0 && word + 1 < out.len() {
                out[word + 1] |= l >> (64 - shift);
            }
            bit += 64;
        }
    }
    from_limbs(&out)
}

/// The big integer with the given little-endian 64-bit limbs.
pub(crate) fn from_limbs(limbs: &[u64]) -> BigUint {
    #[allow(clippy::cast_possible_truncation)] // splitting each limb into its two halves
    let halves: Vec<u32> = limbs
        .iter()
        .flat_map(|&l| [l as u32, (l >> 32) as u32])
        .collect();
    BigUint::new(halves)
}

/// Reads slot `i` (of `w` bits) of `digits` into `out` as
/// `w.div_ceil(64)` limbs.
pub(crate) fn read_slot(digits: &[u64], i: usize, w: usize, out: &mut Vec<u64>) {
    out.clear();
    let start = i * w;
    let nlimbs = w.div_ceil(64);
    let word = |k: usize| digits.get(k).copied().unwrap_or(0);
    for j in 0..nlimbs {
        let bit = start + 64 * j;
        let (k, shift) = (bit / 64, bit % 64);
        let mut l = word(k) >> shift;
        if shift > 0 {
            l |= word(k + 1) << (64 - shift);
        }
        out.push(l);
    }
    let spare = nlimbs * 64 - w;
    if spare > 0
        && let Some(last) = out.last_mut()
    {
        *last &= u64::MAX >> spare;
    }
}

/// The product of two polynomials through Kronecker substitution, for
/// coefficients below `2^elem_bits`; `write` gives the limbs of a
/// coefficient and `read` reduces a slot (given as limbs) to a coefficient.
pub(crate) fn mul<E>(
    a: &[E],
    b: &[E],
    elem_bits: u64,
    write: impl Fn(&E, &mut Vec<u64>),
    read: impl Fn(&[u64]) -> E,
) -> Vec<E> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let w = slot_bits(elem_bits, a.len().min(b.len()));
    let pa = pack(a, w, &write);
    let prod = if core::ptr::eq(a, b) {
        &pa * &pa
    } else {
        &pa * &pack(b, w, &write)
    };
    let digits = prod.to_u64_digits();
    let mut limbs = Vec::with_capacity(w.div_ceil(64));
    (0..a.len() + b.len() - 1)
        .map(|i| {
            read_slot(&digits, i, w, &mut limbs);
            read(&limbs)
        })
        .collect()
}
