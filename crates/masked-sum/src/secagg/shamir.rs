//! Shamir secret sharing (Shamir 1979) over any [`FiniteField`], and the
//! sharing of 32-byte secrets in `GF(2^127 - 1)` that the protocol uses.
//!
//! A secret `s` is the constant term of a random polynomial `f` of degree
//! `t - 1`; the share of holder `id` is `(id, f(id))`. Any `t` shares give
//! `f(0)` by Lagrange interpolation; any `t - 1` are jointly uniform and
//! independent of `s` (docs/threat-model.md P1 checks this exhaustively at a tiny
//! prime).
//!
//! Input validation follows the published failures of other libraries:
//! an id that is `0` modulo `p` would hand out `f(0) = s` itself
//! (cloudflare/circl#644), two ids equal modulo `p` break interpolation
//! (TOB-BSV-2), and fewer than `t` shares must be an error rather than a
//! "reconstructed" wrong value (RUSTSEC-2020-0160). All three are errors
//! here ([`ProtocolError::ShareIdZero`], [`ProtocolError::DuplicateShareId`],
//! [`ProtocolError::TooFewShares`]).
//!
//! [`decode_with_errors`] corrects up to `(n - t) / 2` wrong shares among
//! `n` (Gao's Reed-Solomon decoder), so that a server holding more than `t`
//! shares survives a peer that sends a bad one (docs/threat-model.md S4).

// Without `hazmat` the module is private: its items are crate-internal.
#![cfg_attr(not(feature = "hazmat"), allow(unreachable_pub, dead_code))]
// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use core::fmt;
use std::collections::BTreeMap;

use field::{Field, FiniteField, Poly, poly};
use num_bigint::BigUint;
use rand::Rng;
use zeroize::{Zeroize, ZeroizeOnDrop};

use crate::error::{ProtocolError, SumError, SumResult, check_len};

/// One share: the holder's id and the polynomial's value there. `Debug`
/// shows the id only; there is no `PartialEq` (a variable-time comparison
/// of secret values): compare [`id`](Self::id) and
/// [`value`](Self::value) explicitly where a test needs to.
#[derive(Clone)]
pub struct Share<E> {
    /// The holder's id (the evaluation point is `id mod p`).
    pub id: u64,
    /// `f(id)`.
    pub value: E,
}

impl<E: Zeroize> Zeroize for Share<E> {
    fn zeroize(&mut self) {
        self.id.zeroize();
        self.value.zeroize();
    }
}

impl<E> fmt::Debug for Share<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Share")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// The evaluation points of `ids`, checked: none is `0 mod p` and no two
/// are equal mod `p` (the error names both ids as given).
fn points<F: FiniteField>(f: &F, ids: impl Iterator<Item = u64>) -> SumResult<Vec<F::Elem>> {
    let p = f.characteristic();
    let small_p = u64::try_from(&p).ok();
    let mut seen: BTreeMap<u64, u64> = BTreeMap::new();
    let mut out = Vec::new();
    for id in ids {
        let r = small_p.and_then(|p| id.checked_rem(p)).unwrap_or(id);
        if r == 0 {
            return Err(SumError::Protocol(ProtocolError::ShareIdZero {
                id: id.to_string(),
            }));
        }
        if let Some(earlier) = seen.insert(r, id) {
            return Err(SumError::Protocol(ProtocolError::DuplicateShareId {
                id: id.to_string(),
                earlier: earlier.to_string(),
            }));
        }
        out.push(f.from_u64(id));
    }
    Ok(out)
}

/// Splits `secret` into shares for `ids` with threshold `t`: any `t`
/// shares reconstruct it, any `t - 1` reveal nothing.
///
/// # Errors
///
/// [`SumError::InvalidParams`] unless `1 <= t <= ids.len()`;
/// [`ProtocolError::ShareIdZero`] and [`ProtocolError::DuplicateShareId`] for
/// bad ids.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne127};
/// use masked_sum::secagg::shamir::{reconstruct, split};
///
/// let f = Mersenne127;
/// let secret = f.from_u64(42);
/// let shares = split(&f, &secret, 3, &[1, 2, 3, 4, 5], &mut rand::rng())?;
/// assert_eq!(reconstruct(&f, &shares[2..], 3)?, secret);
/// // Two shares are too few: an error, never a value.
/// assert!(reconstruct(&f, &shares[..2], 3).is_err());
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub fn split<F: FiniteField, R: Rng + ?Sized>(
    f: &F,
    secret: &F::Elem,
    threshold: usize,
    ids: &[u64],
    rng: &mut R,
) -> SumResult<Vec<Share<F::Elem>>> {
    // Generic elements (big integers among them) cannot all be wiped; the
    // byte-secret path, `split_secret`, wipes its coefficients.
    let mut coeffs = Vec::with_capacity(threshold);
    split_with(f, secret, threshold, ids, rng, &mut coeffs)
}

/// [`split`] with the caller's buffer for the polynomial's coefficients
/// (the secret and `t - 1` random values), so that a caller whose
/// elements can be wiped wipes them.
fn split_with<F: FiniteField, R: Rng + ?Sized>(
    f: &F,
    secret: &F::Elem,
    threshold: usize,
    ids: &[u64],
    rng: &mut R,
    coeffs: &mut Vec<F::Elem>,
) -> SumResult<Vec<Share<F::Elem>>> {
    if threshold == 0 || threshold > ids.len() {
        return Err(crate::error::invalid(format!(
            "threshold {threshold} must be in 1..={} (the number of holders)",
            ids.len()
        )));
    }
    let xs = points(f, ids.iter().copied())?;
    coeffs.clear();
    coeffs.push(secret.clone());
    for _ in 1..threshold {
        coeffs.push(f.random(rng));
    }
    Ok(ids
        .iter()
        .zip(&xs)
        .map(|(id, x)| Share {
            id: *id,
            value: horner(f, coeffs, x),
        })
        .collect())
}

fn horner<F: FiniteField>(f: &F, coeffs: &[F::Elem], x: &F::Elem) -> F::Elem {
    let mut acc = f.zero();
    for c in coeffs.iter().rev() {
        acc = f.add(&f.mul(&acc, x), c);
    }
    acc
}

/// The Lagrange coefficients `l_i = prod_{j != i} x_j / (x_j - x_i)` that
/// give `f(0) = sum_i l_i f(x_i)` for any polynomial of degree below
/// `ids.len()`.
///
/// The server of the protocol reuses them for every secret held by the same
/// responders (in the complete graph, all of them), so reconstruction costs
/// one dot product per secret.
///
/// # Errors
///
/// [`ProtocolError::ShareIdZero`] and [`ProtocolError::DuplicateShareId`].
pub fn lagrange_at_zero<F: FiniteField>(f: &F, ids: &[u64]) -> SumResult<Vec<F::Elem>> {
    let xs = points(f, ids.iter().copied())?;
    let mut num = f.one();
    for x in &xs {
        num = f.mul(&num, x);
    }
    let mut dens: Vec<F::Elem> = xs
        .iter()
        .enumerate()
        .map(|(i, xi)| {
            let mut d = xi.clone();
            for (j, xj) in xs.iter().enumerate() {
                if i != j {
                    d = f.mul(&d, &f.sub(xj, xi));
                }
            }
            d
        })
        .collect();
    // Distinct nonzero points make every denominator nonzero.
    if !f.batch_inv(&mut dens) {
        return Err(crate::error::invalid(
            "Lagrange denominators not invertible",
        ));
    }
    Ok(dens.iter().map(|d| f.mul(&num, d)).collect())
}

/// Reconstructs the secret from the first `threshold` of `shares` (all of
/// them are validated).
///
/// # Errors
///
/// [`ProtocolError::TooFewShares`] with fewer than `threshold` shares (or a
/// zero threshold), [`ProtocolError::ShareIdZero`] and
/// [`ProtocolError::DuplicateShareId`] for bad ids.
pub fn reconstruct<F: FiniteField>(
    f: &F,
    shares: &[Share<F::Elem>],
    threshold: usize,
) -> SumResult<F::Elem> {
    if threshold == 0 || shares.len() < threshold {
        return Err(SumError::Protocol(ProtocolError::TooFewShares {
            have: shares.len(),
            need: threshold.max(1),
        }));
    }
    points(f, shares.iter().map(|s| s.id))?;
    let used = shares.get(..threshold).unwrap_or(shares);
    let ids: Vec<u64> = used.iter().map(|s| s.id).collect();
    let l = lagrange_at_zero(f, &ids)?;
    let values: Vec<F::Elem> = used.iter().map(|s| s.value.clone()).collect();
    Ok(f.dot(&l, &values))
}

/// Reconstructs the secret from all `n` shares, correcting up to
/// `(n - threshold) / 2` wrong values (Gao's decoder for Reed-Solomon
/// codes: interpolate, run the extended Euclidean algorithm on
/// `prod (X - x_i)` and the interpolant until the remainder's degree drops
/// below `(n + threshold) / 2`, divide).
///
/// # Errors
///
/// [`ProtocolError::TooFewShares`], [`ProtocolError::ShareIdZero`],
/// [`ProtocolError::DuplicateShareId`]; [`ProtocolError::BadShares`] (with
/// client 0) when more shares are wrong than can be corrected and the
/// decoder sees it.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use masked_sum::secagg::shamir::{decode_with_errors, split};
///
/// let f = Mersenne61;
/// let mut shares = split(&f, &f.from_u64(7), 3, &[1, 2, 3, 4, 5], &mut rand::rng())?;
/// shares[1].value = f.add(&shares[1].value, &f.one()); // one bad share
/// assert_eq!(decode_with_errors(&f, &shares, 3)?, f.from_u64(7));
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub fn decode_with_errors<F: FiniteField>(
    f: &F,
    shares: &[Share<F::Elem>],
    threshold: usize,
) -> SumResult<F::Elem> {
    let n = shares.len();
    if threshold == 0 || n < threshold {
        return Err(SumError::Protocol(ProtocolError::TooFewShares {
            have: n,
            need: threshold.max(1),
        }));
    }
    let xs = points(f, shares.iter().map(|s| s.id))?;
    let ys: Vec<F::Elem> = shares.iter().map(|s| s.value.clone()).collect();
    let g0 = poly::from_roots(f, &xs);
    let g1 = interpolate(f, &xs, &ys, &g0)?;
    let bad = || {
        SumError::Protocol(ProtocolError::BadShares {
            client: 0,
            secret: "secret",
            check: "Reed-Solomon decoding",
        })
    };
    if g1.degree().is_none_or(|d| d < threshold) {
        return Ok(g1.coeff(0).cloned().unwrap_or_else(|| f.zero()));
    }
    // Partial extended Euclid on (g0, g1), tracking only the cofactor of g1.
    let stop = n.saturating_add(threshold).div_ceil(2);
    let (mut r_prev, mut r) = (g0, g1);
    let (mut v_prev, mut v) = (Poly::zero(), Poly::one(f));
    while r.degree().is_some_and(|d| d >= stop) {
        let (q, rem) = poly::div_rem(f, &r_prev, &r)?;
        let v_next = poly::sub(f, &v_prev, &poly::mul(f, &q, &v));
        r_prev = core::mem::replace(&mut r, rem);
        v_prev = core::mem::replace(&mut v, v_next);
    }
    let (quot, rem) = poly::div_rem(f, &r, &v).map_err(|_| bad())?;
    if !rem.is_zero() || quot.degree().is_some_and(|d| d >= threshold) {
        return Err(bad());
    }
    Ok(quot.coeff(0).cloned().unwrap_or_else(|| f.zero()))
}

/// The polynomial of degree below `n` through the `n` points, with
/// `g0 = prod (X - x_i)` given: `sum_i y_i (g0 / (X - x_i)) / g0'(x_i)`.
fn interpolate<F: FiniteField>(
    f: &F,
    xs: &[F::Elem],
    ys: &[F::Elem],
    g0: &Poly<F::Elem>,
) -> SumResult<Poly<F::Elem>> {
    let n = xs.len();
    let mut acc = vec![f.zero(); n];
    let dg0 = poly::derivative(f, g0);
    let mut weights: Vec<F::Elem> = xs.iter().map(|x| poly::evaluate(f, &dg0, x)).collect();
    if !f.batch_inv(&mut weights) {
        return Err(crate::error::invalid("interpolation points not distinct"));
    }
    let c = g0.coeffs();
    for ((x, y), w) in xs.iter().zip(ys).zip(&weights) {
        let scale = f.mul(y, w);
        if f.is_zero(&scale) {
            continue;
        }
        // Synthetic division of g0 by (X - x): quotient coefficients from
        // the top down.
        let mut carry = f.zero();
        // q_k = c_{k+1} + x q_{k+1}, for k = n - 1 down to 0 (g0 has
        // degree n, so c has n + 1 entries).
        for (a, c_next) in acc.iter_mut().zip(c.iter().skip(1)).rev() {
            carry = f.add(c_next, &f.mul(x, &carry));
            f.add_assign(a, &f.mul(&scale, &carry));
        }
    }
    Ok(Poly::from_coeffs(f, acc))
}

/// The number of `GF(2^127 - 1)` elements a 32-byte secret is cut into
/// (15 + 15 + 2 bytes; 15 bytes are below `2^120 < p`).
pub const SECRET_CHUNKS: usize = 3;

/// One holder's share of a 32-byte secret: a share of each of its
/// [`SECRET_CHUNKS`] chunks in `GF(2^127 - 1)`, at the same id. Wiped on
/// drop, redacted in `Debug`.
#[derive(Clone, Zeroize, ZeroizeOnDrop)]
pub struct SecretShare {
    /// The holder's id.
    pub id: u64,
    /// The chunk shares, canonical representatives below `2^127 - 1`.
    pub values: [u128; SECRET_CHUNKS],
}

/// Equality in constant time (no `PartialEq`: `==` on secret values may
/// return early).
impl subtle::ConstantTimeEq for SecretShare {
    fn ct_eq(&self, other: &Self) -> subtle::Choice {
        let mut eq = self.id.ct_eq(&other.id);
        for (a, b) in self.values.iter().zip(&other.values) {
            eq &= a.ct_eq(b);
        }
        eq
    }
}

impl fmt::Debug for SecretShare {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretShare")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// The encoding of a [`SecretShare`]: the id (8 bytes little endian) and
/// three 16-byte little-endian chunk values.
pub const SECRET_SHARE_BYTES: usize = 8 + 16 * SECRET_CHUNKS;

impl SecretShare {
    /// The fixed-width encoding ([`SECRET_SHARE_BYTES`] bytes).
    pub fn to_bytes(&self) -> zeroize::Zeroizing<Vec<u8>> {
        let mut out = zeroize::Zeroizing::new(Vec::with_capacity(SECRET_SHARE_BYTES));
        out.extend_from_slice(&self.id.to_le_bytes());
        for v in &self.values {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out
    }

    /// Decodes [`to_bytes`](Self::to_bytes).
    ///
    /// # Errors
    ///
    /// [`SumError::WrongLength`] for another length,
    /// [`SumError::NonCanonical`] for a value not below `2^127 - 1`.
    pub fn from_bytes(bytes: &[u8]) -> SumResult<Self> {
        check_len(SECRET_SHARE_BYTES, bytes.len())?;
        let (id, rest) = bytes.split_at(8);
        let mut id_bytes = [0u8; 8];
        id_bytes.copy_from_slice(id);
        let mut values = [0u128; SECRET_CHUNKS];
        for (v, chunk) in values.iter_mut().zip(rest.chunks_exact(16)) {
            let mut b = [0u8; 16];
            b.copy_from_slice(chunk);
            let x = u128::from_le_bytes(b);
            b.zeroize();
            if x >= field::P127 {
                return Err(SumError::NonCanonical);
            }
            *v = x;
        }
        Ok(Self {
            id: u64::from_le_bytes(id_bytes),
            values,
        })
    }
}

fn chunks(secret: &[u8; 32]) -> [u128; SECRET_CHUNKS] {
    let mut out = [0u128; SECRET_CHUNKS];
    for (o, c) in out.iter_mut().zip(secret.chunks(15)) {
        let mut b = [0u8; 16];
        for (dst, src) in b.iter_mut().zip(c) {
            *dst = *src;
        }
        *o = u128::from_le_bytes(b);
        b.zeroize();
    }
    out
}

fn unchunk(values: &[u128; SECRET_CHUNKS]) -> SumResult<zeroize::Zeroizing<[u8; 32]>> {
    let mut out = zeroize::Zeroizing::new([0u8; 32]);
    for (v, dst) in values.iter().zip(out.chunks_mut(15)) {
        // A chunk of `len` bytes (15, 15, then 2) is below 2^(8 len); a
        // larger value is not the encoding of any secret.
        let bits = u32::try_from(dst.len().saturating_mul(8)).unwrap_or(u32::MAX);
        if v.checked_shr(bits).is_some_and(|high| high != 0) {
            return Err(SumError::NonCanonical);
        }
        let mut b = v.to_le_bytes();
        for (d, s) in dst.iter_mut().zip(&b) {
            *d = *s;
        }
        b.zeroize();
    }
    Ok(out)
}

/// Splits a 32-byte secret for `ids` with threshold `t`, chunk by chunk in
/// `GF(2^127 - 1)`, all chunks at the same ids.
///
/// # Errors
///
/// As [`split`].
///
/// # Example
///
/// ```
/// use masked_sum::secagg::shamir::{reconstruct_secret, split_secret};
///
/// let secret = [9u8; 32];
/// let shares = split_secret(&secret, 2, &[10, 20, 30], &mut rand::rng())?;
/// assert_eq!(*reconstruct_secret(&shares[1..], 2)?, secret);
/// # Ok::<(), masked_sum::SumError>(())
/// ```
pub fn split_secret<R: Rng + ?Sized>(
    secret: &[u8; 32],
    threshold: usize,
    ids: &[u64],
    rng: &mut R,
) -> SumResult<Vec<SecretShare>> {
    let f = field::Mersenne127;
    let parts = zeroize::Zeroizing::new(chunks(secret));
    let mut out: Vec<SecretShare> = ids
        .iter()
        .map(|id| SecretShare {
            id: *id,
            values: [0; SECRET_CHUNKS],
        })
        .collect();
    // The coefficients (the secret's chunk and the random ones) and each
    // chunk's shares are wiped as soon as they are used.
    let mut coeffs = zeroize::Zeroizing::new(Vec::with_capacity(threshold));
    for (c, part) in parts.iter().enumerate() {
        let shares =
            zeroize::Zeroizing::new(split_with(&f, part, threshold, ids, rng, &mut coeffs)?);
        for (o, s) in out.iter_mut().zip(shares.iter()) {
            if let Some(slot) = o.values.get_mut(c) {
                *slot = s.value;
            }
        }
    }
    Ok(out)
}

/// Reconstructs a 32-byte secret from the first `threshold` shares.
///
/// # Errors
///
/// As [`reconstruct`], and [`SumError::NonCanonical`] if the chunks are
/// not those of any 32-byte secret (wrong shares).
pub fn reconstruct_secret(
    shares: &[SecretShare],
    threshold: usize,
) -> SumResult<zeroize::Zeroizing<[u8; 32]>> {
    let f = field::Mersenne127;
    if threshold == 0 || shares.len() < threshold {
        return Err(SumError::Protocol(ProtocolError::TooFewShares {
            have: shares.len(),
            need: threshold.max(1),
        }));
    }
    let ids: Vec<u64> = shares.iter().map(|s| s.id).collect();
    points(&f, ids.iter().copied())?;
    let l = lagrange_at_zero(&f, ids.get(..threshold).unwrap_or(&ids))?;
    reconstruct_secret_with(&l, shares.get(..threshold).unwrap_or(shares))
}

/// Reconstructs a 32-byte secret from shares whose Lagrange coefficients
/// ([`lagrange_at_zero`] of their ids, in order) are known.
///
/// # Errors
///
/// [`SumError::WrongLength`] if the counts differ,
/// [`SumError::NonCanonical`] as [`reconstruct_secret`].
pub fn reconstruct_secret_with(
    lagrange: &[u128],
    shares: &[SecretShare],
) -> SumResult<zeroize::Zeroizing<[u8; 32]>> {
    let f = field::Mersenne127;
    check_len(lagrange.len(), shares.len())?;
    let mut values = zeroize::Zeroizing::new([0u128; SECRET_CHUNKS]);
    for (c, v) in values.iter_mut().enumerate() {
        let mut acc = 0u128;
        for (l, s) in lagrange.iter().zip(shares) {
            let share = s.values.get(c).copied().unwrap_or(0);
            acc = f.add(&acc, &f.mul(l, &share));
        }
        *v = acc;
    }
    unchunk(&values)
}

/// Reconstructs a 32-byte secret from all shares, correcting up to
/// `(n - threshold) / 2` wrong ones chunk by chunk ([`decode_with_errors`]).
///
/// # Errors
///
/// As [`decode_with_errors`] and [`reconstruct_secret`].
pub fn decode_secret_with_errors(
    shares: &[SecretShare],
    threshold: usize,
) -> SumResult<zeroize::Zeroizing<[u8; 32]>> {
    let f = field::Mersenne127;
    let mut values = zeroize::Zeroizing::new([0u128; SECRET_CHUNKS]);
    for (c, v) in values.iter_mut().enumerate() {
        let chunk: zeroize::Zeroizing<Vec<Share<u128>>> = zeroize::Zeroizing::new(
            shares
                .iter()
                .map(|s| Share {
                    id: s.id,
                    value: s.values.get(c).copied().unwrap_or(0),
                })
                .collect(),
        );
        *v = decode_with_errors(&f, &chunk, threshold)?;
    }
    unchunk(&values)
}

/// The modulus the byte-secret shares live in, `2^127 - 1`.
pub fn secret_share_modulus() -> BigUint {
    BigUint::from(field::P127)
}
