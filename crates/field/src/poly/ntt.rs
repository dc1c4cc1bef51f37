//! Multi-modular NTT multiplication with an explicit CRT modulo the field's
//! prime: the polynomial product for every field whose own group has no
//! large power-of-two subgroup, and for [`Fp64`](crate::Fp64) whatever its
//! prime.
//!
//! The integer product of two polynomials with coefficients in `0..p` has
//! coefficients below `n p^2`. It is computed modulo `K` primes
//! `q_i = c_i 2^24 + 1` below `2^50` (each has `2^24`-th roots of unity, so
//! each product is three number-theoretic transforms and a pointwise
//! product), and each coefficient is reconstructed *directly modulo p* by
//! the explicit Chinese remainder theorem: with `M = prod q_i` and
//! `c_i = x_i (M/q_i)^-1 mod q_i`, the integer is
//! `sum_i c_i (M/q_i) - t M` for `t = floor(sum_i c_i / q_i)`, which a
//! double-precision sum gives exactly as long as the integer is below `M/2`.
//! So the result modulo `p` is one lazy dot product of the `c_i` with the
//! precomputed `(M/q_i) mod p`: `O(K)` word-by-element products per
//! coefficient, no big-integer division.
//!
//! The transforms modulo each `q_i` run in one of two engines, which give
//! the same residues (the tests compare them on every field):
//!
//! - **vectorised**: the `tfhe-ntt` crate's negacyclic transforms (a
//!   product of fewer than `N` terms never wraps around `x^N + 1`), which
//!   detect at run time what the CPU has: AVX-512 IFMA multiplies the
//!   50-bit residues in 52-bit lanes, AVX2 and AVX-512 run Shoup
//!   butterflies four or eight lanes at a time, and a portable path runs
//!   elsewhere. Primes below `2^50` are what the IFMA path takes, which is
//!   why the primes are that small (three of them still hold a product of
//!   `2^21` terms of a 64-bit field).
//! - **portable**: the transforms below, scalar Shoup butterflies with
//!   Harvey's lazy reduction, for lengths beyond the plans kept and as the
//!   reference the vectorised engine is tested against.
//!
//! For a 1024-bit prime and degree 1000 this is several times faster than
//! Kronecker substitution through `num-bigint`, whose largest algorithm is
//! Toom-3; for a 64-bit prime it is the product FLINT's `nmod_poly_mul`
//! runs (small-prime transforms and a CRT), and docs/benchmarks.md
//! compares the two.

mod primes;

use primes::{MAX_LOG, PRIME_BITS, Prime, primes, tables};

use crate::Field;

/// What one field needs to multiply by NTT: the number of transform primes
/// for its modulus, and the explicit-CRT constants as field elements.
#[derive(Debug)]
pub(crate) struct Plan<E> {
    /// How many primes (the first `k` of [`primes`]).
    k: usize,
    /// Limbs per element.
    limbs: usize,
    /// `(M/q_i)^-1 mod q_i`, normal form.
    crt_inv: Vec<u64>,
    /// `1 / q_i`, for the quotient estimate.
    recip: Vec<f64>,
    /// `(M/q_i) mod p` and, last, `-(M mod p)`.
    crt_mod_p: Vec<E>,
    /// The same constants as little-endian limbs (`p - (M mod p)` last),
    /// `limbs` each, for fields that accumulate the CRT sum in integers.
    crt_limbs: Vec<u64>,
}

impl<E: Clone> Plan<E> {
    /// The plan for a field whose elements are below `2^elem_bits` (so
    /// every product coefficient of polynomials of fewer than
    /// `2^MAX_LOG` terms is below `2^(2 elem_bits + MAX_LOG)`), or `None` if
    /// that needs more primes than are kept.
    pub(crate) fn new<F: Field<Elem = E>>(f: &F, modulus: &num_bigint::BigUint) -> Option<Self> {
        use num_bigint::BigUint;
        let elem_bits = modulus.bits();
        // Below M/2 with M > 2^((PRIME_BITS - 1) k):
        // (PRIME_BITS - 1) k > 2 bits + MAX_LOG + 1.
        let need = 2 * elem_bits + u64::from(MAX_LOG) + 2;
        let k = usize::try_from(need.div_ceil(u64::from(PRIME_BITS - 1))).ok()?;
        let limbs = usize::try_from(elem_bits.div_ceil(64)).ok()?;
        let ps = primes();
        if k > ps.len() {
            return None;
        }
        let ps = &ps[..k];
        let m: BigUint = ps.iter().map(|p| BigUint::from(p.q)).product();
        let mut crt_inv = Vec::with_capacity(k);
        let mut consts = Vec::with_capacity(k + 1);
        for p in ps {
            let mi = &m / p.q;
            let mi_mod_q = u64::try_from(&mi % p.q).ok()?;
            // Montgomery inverse, then back to normal form.
            let inv_m = p.inv(p.to_mont(mi_mod_q));
            crt_inv.push(p.redc(u128::from(inv_m)));
            consts.push(mi % modulus);
        }
        consts.push((modulus - (&m % modulus)) % modulus);
        let mut crt_limbs = Vec::with_capacity((k + 1) * limbs);
        for c in &consts {
            let mut l = c.to_u64_digits();
            l.resize(limbs, 0);
            crt_limbs.extend_from_slice(&l);
        }
        Some(Self {
            k,
            limbs,
            crt_inv,
            recip: ps.iter().map(|p| 1.0 / p.q as f64).collect(),
            crt_mod_p: consts.iter().map(|c| f.from_biguint(c)).collect(),
            crt_limbs,
        })
    }

    /// `a * b` with the CRT sum taken as a field dot product: for fields
    /// with cheap small products (the word-sized ones).
    pub(crate) fn mul_dot<F: Field<Elem = E>>(
        &self,
        f: &F,
        a: &[E],
        b: &[E],
        write: impl Fn(&E, &mut Vec<u64>),
    ) -> Vec<E> {
        self.mul_dot_in(Engine::Vectorised, f, a, b, write)
    }

    /// [`mul_dot`](Self::mul_dot) with the residues from `engine`.
    pub(crate) fn mul_dot_in<F: Field<Elem = E>>(
        &self,
        engine: Engine,
        f: &F,
        a: &[E],
        b: &[E],
        write: impl Fn(&E, &mut Vec<u64>),
    ) -> Vec<E> {
        let mut c = vec![f.zero(); self.k + 1];
        self.mul_with(engine, a, b, write, |cs| {
            for (e, &v) in c.iter_mut().zip(cs) {
                *e = f.from_u64(v);
            }
            f.dot(&c, &self.crt_mod_p)
        })
    }

    /// `a * b` for fields of one-word elements (`write` gives the word):
    /// the CRT sum `sum_i c_i (M/q_i mod p) + t (p - M mod p)` accumulated
    /// in a `u128` (below `(k + 1) 2^(64 + PRIME_BITS)`, so for any `k`
    /// kept) and handed to `reduce`, which takes any `u128` to its element:
    /// one reduction per coefficient, no conversions.
    pub(crate) fn mul_words(
        &self,
        a: &[E],
        b: &[E],
        word: impl Fn(&E) -> u64,
        reduce: impl Fn(u128) -> E,
    ) -> Vec<E> {
        self.mul_words_in(Engine::Vectorised, a, b, word, reduce)
    }

    /// [`mul_words`](Self::mul_words) with the residues from `engine`.
    pub(crate) fn mul_words_in(
        &self,
        engine: Engine,
        a: &[E],
        b: &[E],
        word: impl Fn(&E) -> u64,
        reduce: impl Fn(u128) -> E,
    ) -> Vec<E> {
        debug_assert_eq!(self.limbs, 1, "mul_words is for one-word fields");
        let write = |e: &E, out: &mut Vec<u64>| out.push(word(e));
        self.mul_with(engine, a, b, write, |cs| {
            let sum = cs
                .iter()
                .zip(&self.crt_limbs)
                .fold(0u128, |acc, (&c, &e)| acc + u128::from(c) * u128::from(e));
            reduce(sum)
        })
    }

    /// `a * b` with the CRT sum accumulated in integer limbs (below
    /// `(k + 1) 2^PRIME_BITS p`) and handed to `reduce`: for multi-word fields,
    /// one reduction per coefficient instead of `k` element products.
    pub(crate) fn mul_limbs(
        &self,
        a: &[E],
        b: &[E],
        write: impl Fn(&E, &mut Vec<u64>),
        reduce: impl Fn(&[u64]) -> E,
    ) -> Vec<E> {
        self.mul_limbs_in(Engine::Vectorised, a, b, write, reduce)
    }

    /// [`mul_limbs`](Self::mul_limbs) with the residues from `engine`.
    pub(crate) fn mul_limbs_in(
        &self,
        engine: Engine,
        a: &[E],
        b: &[E],
        write: impl Fn(&E, &mut Vec<u64>),
        reduce: impl Fn(&[u64]) -> E,
    ) -> Vec<E> {
        let mut acc = vec![0u64; self.limbs + 2];
        self.mul_with(engine, a, b, write, |cs| {
            acc.fill(0);
            for (&c, e) in cs.iter().zip(self.crt_limbs.chunks_exact(self.limbs)) {
                mac(&mut acc, e, c);
            }
            reduce(&acc)
        })
    }

    /// `a * b` (both nonempty, fewer than `2^MAX_LOG` terms in all);
    /// `write` appends the little-endian limbs of an element (at most
    /// `limbs`), `finish` turns the CRT coefficients `c_0..c_(k-1)` and the
    /// quotient `t` of one output coefficient into the element.
    fn mul_with(
        &self,
        engine: Engine,
        a: &[E],
        b: &[E],
        write: impl Fn(&E, &mut Vec<u64>),
        mut finish: impl FnMut(&[u64]) -> E,
    ) -> Vec<E> {
        let out_len = a.len() + b.len() - 1;
        let square = core::ptr::eq(a, b);
        let la = limbs_of(a, self.limbs, &write);
        let lb = if square {
            Vec::new()
        } else {
            limbs_of(b, self.limbs, &write)
        };
        // residues[i][j]: coefficient j of the product modulo q_i, times
        // the constant consts[i] gives c_i (see `residues`).
        let indices: Vec<usize> = (0..self.k).collect();
        let limbs = self.limbs;
        let per_prime = crate::par::map(&indices, out_len * self.k, |&i| {
            residues(engine, i, out_len, &la, (!square).then_some(&lb[..]), limbs)
        });
        // Per prime, the normal-form constant s^-1 (M/q_i)^-1 that takes a
        // residue (x_i times its scale s) to c_i, with its Shoup quotient.
        let consts: Vec<(u64, u64)> = per_prime
            .iter()
            .zip(primes())
            .zip(&self.crt_inv)
            .map(|((r, p), &ci)| p.shoup(p.redc(u128::from(p.mul(r.1, p.to_mont(ci))))))
            .collect();
        let mut c = vec![0u64; self.k + 1];
        (0..out_len)
            .map(|j| {
                let mut frac = 0.0f64;
                for (i, p) in primes()[..self.k].iter().enumerate() {
                    let (k, k_quot) = consts[i];
                    let ci = p.mul_shoup(per_prime[i].0[j], k, k_quot);
                    let ci = if ci >= p.q { ci - p.q } else { ci };
                    // Through i64: ci < 2^50, and the signed conversion is
                    // one instruction where the unsigned one is several.
                    #[allow(clippy::cast_possible_wrap)]
                    let ci_f = ci as i64 as f64;
                    frac += ci_f * self.recip[i];
                    c[i] = ci;
                }
                // The integer is sum c_i M/q_i - t M with a fractional part
                // below 1/2, so the sum of the fractions is t plus less
                // than 1/2, up to rounding errors far below 1/4.
                // t = round(frac - 1/4) = floor(frac + 1/4), and the cast
                // floors a nonnegative value (no call to `round`, which is
                // not inlined: it was a tenth of a product's time).
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                // a small nonnegative count below k
                let t = (frac + 0.25) as i64 as u64;
                c[self.k] = t;
                finish(&c)
            })
            .collect()
    }
}

/// Which transforms compute the residues of a product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Engine {
    /// `tfhe-ntt`'s vectorised transforms where it has a plan for the
    /// length, the portable ones otherwise.
    Vectorised,
    /// The scalar transforms of this module (which the vectorised engine
    /// falls back to by itself), chosen by the tests that compare the two.
    #[cfg(test)]
    Portable,
}

/// The product modulo prime `i` of the polynomials given as `limbs` limbs
/// per coefficient (`b` `None` to square `a`), as the residues times a
/// scale `s`, in `[0, 2q)`, and the Montgomery form of `s^-1` (the
/// portable transforms leave `s = n R^-1`, from the Montgomery pointwise
/// products and the unscaled inverse; the vectorised ones leave `s = 1`).
fn residues(
    engine: Engine,
    i: usize,
    out_len: usize,
    a: &[u64],
    b: Option<&[u64]>,
    limbs: usize,
) -> (Vec<u64>, u64) {
    let p = &primes()[i];
    let weights = limb_weights(p, limbs);
    let log = usize::BITS - (out_len - 1).leading_zeros();
    if engine == Engine::Vectorised
        && let Some(plan) = vectorised_plan(i, log)
    {
        let n = plan.ntt_size();
        let mut fa = reduce_all(p, a, limbs, &weights, n);
        plan.fwd(&mut fa);
        match b {
            Some(b) => {
                let mut fb = reduce_all(p, b, limbs, &weights, n);
                plan.fwd(&mut fb);
                plan.mul_assign_normalize(&mut fa, &fb);
            }
            None => {
                let fb = fa.clone();
                plan.mul_assign_normalize(&mut fa, &fb);
            }
        }
        plan.inv(&mut fa);
        fa.truncate(out_len);
        // Plain residues: the scale is one, whose Montgomery form is R.
        return (fa, p.to_mont(1));
    }
    let n = 1usize << log;
    let t = tables(i, log);
    let (tw, itw) = (&t.0, &t.1);
    let mut fa = reduce_all(p, a, limbs, &weights, n);
    p.forward(&mut fa, tw);
    match b {
        Some(b) => {
            let mut fb = reduce_all(p, b, limbs, &weights, n);
            p.forward(&mut fb, tw);
            for (x, y) in fa.iter_mut().zip(&fb) {
                *x = p.mul(*x, *y);
            }
        }
        None => {
            for x in &mut fa {
                *x = p.mul(*x, *x);
            }
        }
    }
    p.inverse(&mut fa, itw);
    fa.truncate(out_len);
    // The scale is n R^-1; its inverse is n^-1 R, whose Montgomery form
    // is n^-1 R^2.
    (fa, p.to_mont(p.inv(p.to_mont(n as u64))))
}

/// A `tfhe-ntt` plan for the negacyclic transforms of `2^log` points
/// modulo prime `i`.
type VectorPlan = std::sync::Arc<tfhe_ntt::prime64::Plan>;

/// How many bytes of [`vectorised_plan`]s are kept: a plan of `N` points
/// holds four tables of `N` words (twiddles and their Shoup quotients, both
/// directions), and building one costs more than a transform of its
/// length, so they are kept, most recently used first, up to this bound
/// (the three primes of a 64-bit field's product of `2^20` terms take
/// 192 MiB).
const PLAN_CACHE_BYTES: usize = 256 << 20;

/// The vectorised engine's plan for the transforms of `2^log` points (at
/// least 16, its smallest) modulo prime `i`, or `None` if the length is
/// beyond what the primes' roots allow (negacyclic transforms of `N` points
/// need `2N` to divide `q - 1`).
fn vectorised_plan(i: usize, log: u32) -> Option<VectorPlan> {
    use std::sync::{Mutex, PoisonError};
    static CACHE: Mutex<Vec<(usize, u32, VectorPlan)>> = Mutex::new(Vec::new());
    let log = log.max(4);
    if log >= MAX_LOG {
        return None;
    }
    {
        let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(hit) = cache.iter().position(|e| e.0 == i && e.1 == log) {
            cache[..=hit].rotate_right(1);
            return Some(std::sync::Arc::clone(&cache[0].2));
        }
    }
    // Built outside the lock: another thread's lookups go on meanwhile.
    let plan = std::sync::Arc::new(tfhe_ntt::prime64::Plan::try_new(1 << log, primes()[i].q)?);
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    if !cache.iter().any(|e| e.0 == i && e.1 == log) {
        cache.insert(0, (i, log, std::sync::Arc::clone(&plan)));
        let mut bytes = 0usize;
        cache.retain(|e| {
            bytes += 32 << e.1;
            bytes <= PLAN_CACHE_BYTES
        });
    }
    Some(plan)
}

/// `acc += e * c` on little-endian limbs (`acc` one limb longer than
/// needed, so the carry always lands).
#[allow(clippy::cast_possible_truncation)] // low word of a 128-bit sum
fn mac(acc: &mut [u64], e: &[u64], c: u64) {
    let mut carry = 0u128;
    for (a, &x) in acc.iter_mut().zip(e) {
        let v = u128::from(*a) + u128::from(x) * u128::from(c) + carry;
        *a = v as u64;
        carry = v >> 64;
    }
    for a in acc.iter_mut().skip(e.len()) {
        if carry == 0 {
            break;
        }
        let v = u128::from(*a) + carry;
        *a = v as u64;
        carry = v >> 64;
    }
}

/// The limbs of every element, `limbs` per element (zero padded).
fn limbs_of<E>(v: &[E], limbs: usize, write: &impl Fn(&E, &mut Vec<u64>)) -> Vec<u64> {
    let mut out = Vec::with_capacity(v.len() * limbs);
    let mut buf = Vec::with_capacity(limbs);
    for e in v {
        buf.clear();
        write(e, &mut buf);
        buf.resize(limbs, 0);
        out.extend_from_slice(&buf[..limbs]);
    }
    out
}

/// `2^(32 k) R mod q` for each half-limb position `k`: a Montgomery
/// reduction of `sum_k half_k weight_k` is the value modulo `q`.
fn limb_weights(p: &Prime, limbs: usize) -> Vec<u64> {
    // R mod q is the Montgomery form of one; 2^32 R in Montgomery form
    // times it multiplies by 2^32.
    let step = p.to_mont(1 << 32);
    let mut w = p.to_mont(1);
    let mut out = Vec::with_capacity(2 * limbs);
    for _ in 0..2 * limbs {
        out.push(w);
        w = p.mul(w, step);
    }
    out
}

/// The residues modulo `q` of elements given as limbs, zero padded to
/// `n`. Each limb is split into 32-bit halves, so that the products with
/// the weights (below `2^94`) can be summed exactly in a `u128` and reduced
/// once per element (the sum stays below `q 2^64` for fewer than `2^31`
/// halves).
///
/// One-word elements take the shorter way: `x - floor(x floor(2^64/q) /
/// 2^64) q` is below `2q` (Barrett's estimate is short by at most one `q`
/// for `q < 2^63`), then one subtraction.
fn reduce_all(p: &Prime, limbs: &[u64], per: usize, weights: &[u64], n: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(n);
    if per == 1 {
        let m = u64::MAX / p.q;
        out.extend(limbs.iter().map(|&x| {
            #[allow(clippy::cast_possible_truncation)] // high word
            let est = ((u128::from(x) * u128::from(m)) >> 64) as u64;
            let r = x - est * p.q;
            if r >= p.q { r - p.q } else { r }
        }));
        out.resize(n, 0);
        return out;
    }
    for e in limbs.chunks_exact(per) {
        let mut acc = 0u128;
        for (&l, w) in e.iter().zip(weights.chunks_exact(2)) {
            acc += u128::from(l & 0xffff_ffff) * u128::from(w[0]);
            acc += u128::from(l >> 32) * u128::from(w[1]);
        }
        out.push(p.redc(acc));
    }
    out.resize(n, 0);
    out
}

#[cfg(test)]
mod tests;
