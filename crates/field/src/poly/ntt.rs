//! Multi-modular NTT multiplication with an explicit CRT modulo the field's
//! prime: the polynomial product for fields with wide elements.
//!
//! The integer product of two polynomials with coefficients in `0..p` has
//! coefficients below `n p^2`. It is computed modulo `K` word-sized primes
//! `q_i = c_i 2^24 + 1` (each has `2^24`-th roots of unity, so each product
//! is three number-theoretic transforms and a pointwise product), and each
//! coefficient is reconstructed *directly modulo p* by the explicit Chinese
//! remainder theorem: with `M = prod q_i` and
//! `c_i = x_i (M/q_i)^-1 mod q_i`, the integer is
//! `sum_i c_i (M/q_i) - t M` for `t = floor(sum_i c_i / q_i)`, which a
//! double-precision sum gives exactly as long as the integer is below `M/2`.
//! So the result modulo `p` is one lazy dot product of the `c_i` with the
//! precomputed `(M/q_i) mod p`: `O(K)` word-by-element products per
//! coefficient, no big-integer division. For a 1024-bit prime and degree
//! 1000 this is several times faster than Kronecker substitution through
//! `num-bigint`, whose largest algorithm is Toom-3.

use std::sync::OnceLock;

use crate::Field;

/// Transform lengths up to `2^MAX_LOG` are supported.
const MAX_LOG: u32 = 24;
/// The number of transform primes kept (enough for `p` of about 9000 bits).
const MAX_PRIMES: usize = 300;

/// A transform prime with its Montgomery constants (`R = 2^64`).
#[derive(Clone, Debug)]
struct Prime {
    q: u64,
    /// `-q^-1 mod 2^64`.
    neg_inv: u64,
    /// `R^2 mod q`.
    r2: u64,
    /// A primitive `2^MAX_LOG`-th root of unity, in Montgomery form.
    root: u64,
}

impl Prime {
    fn new(q: u64) -> Option<Self> {
        let mut inv = q;
        for _ in 0..6 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(q.wrapping_mul(inv)));
        }
        let r = (1u128 << 64) % u128::from(q);
        let r2 = u64::try_from((r * r) % u128::from(q)).ok()?;
        let mut p = Self {
            q,
            neg_inv: inv.wrapping_neg(),
            r2,
            root: 0,
        };
        // A generator candidate g gives g^((q-1)/2^MAX_LOG), of order 2^MAX_LOG
        // exactly when its 2^(MAX_LOG-1)-th power is not one.
        let one = p.to_mont(1);
        for g in 2..1000 {
            let w = p.pow(p.to_mont(g), (q - 1) >> MAX_LOG);
            if p.pow(w, 1 << (MAX_LOG - 1)) != one {
                p.root = w;
                return Some(p);
            }
        }
        None
    }

    /// `t R^-1 mod q` for `t < q 2^64`.
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // low word, high word
    fn redc(&self, t: u128) -> u64 {
        let m = (t as u64).wrapping_mul(self.neg_inv);
        // t + m q < 2^127 and is divisible by 2^64; the quotient is < 2q.
        let s = ((t + u128::from(m) * u128::from(self.q)) >> 64) as u64;
        if s >= self.q { s - self.q } else { s }
    }

    #[inline(always)]
    fn mul(&self, a: u64, b: u64) -> u64 {
        self.redc(u128::from(a) * u128::from(b))
    }

    fn to_mont(&self, a: u64) -> u64 {
        self.mul(a % self.q, self.r2)
    }

    fn pow(&self, mut base: u64, mut e: u64) -> u64 {
        let mut acc = self.to_mont(1);
        while e > 0 {
            if e & 1 == 1 {
                acc = self.mul(acc, base);
            }
            base = self.mul(base, base);
            e >>= 1;
        }
        acc
    }

    fn inv(&self, a: u64) -> u64 {
        self.pow(a, self.q - 2)
    }

    /// `(w, floor(w 2^64 / q))` for Shoup's multiplication by the
    /// constant `w < q`.
    #[allow(clippy::cast_possible_truncation)] // the quotient is below 2^64
    fn shoup(&self, w: u64) -> (u64, u64) {
        (w, ((u128::from(w) << 64) / u128::from(self.q)) as u64)
    }

    /// `x w mod q` up to one extra `q` (result in `[0, 2q)`), for any
    /// `x < 2^64`, by Shoup's method: one high and two low products.
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // high word
    fn mul_shoup(&self, x: u64, w: u64, w_quot: u64) -> u64 {
        let hi = ((u128::from(x) * u128::from(w_quot)) >> 64) as u64;
        x.wrapping_mul(w).wrapping_sub(hi.wrapping_mul(self.q))
    }

    /// Twiddle tables (normal form, with Shoup quotients) for transforms
    /// of length up to `2^log`: entry `len + j` is `w^j` for a primitive
    /// `2 len`-th root `w` (inverse roots for `inverse`). A table for a
    /// length contains the tables of all smaller lengths as its prefix.
    fn twiddles(&self, log: u32, inverse: bool) -> Vec<(u64, u64)> {
        let n = 1usize << log;
        let mut tw = vec![(0u64, 0u64); n.max(2)];
        let mut len = 1usize;
        let mut k = 0u32;
        while len < n {
            // A primitive 2^(k+1)-th root.
            let mut w = self.pow(self.root, 1u64 << (MAX_LOG - k - 1));
            if inverse {
                w = self.inv(w);
            }
            let mut x = self.to_mont(1);
            for j in 0..len {
                tw[len + j] = self.shoup(self.redc(u128::from(x)));
                x = self.mul(x, w);
            }
            len <<= 1;
            k += 1;
        }
        tw
    }

    /// Decimation in frequency: natural order in, bit-reversed order out.
    /// Values stay in `[0, 2q)` throughout (Harvey's lazy butterflies).
    fn forward(&self, a: &mut [u64], tw: &[(u64, u64)]) {
        let n = a.len();
        let two_q = 2 * self.q;
        let mut len = n >> 1;
        while len >= 1 {
            for block in a.chunks_exact_mut(2 * len) {
                let (lo, hi) = block.split_at_mut(len);
                for ((u, v), &(w, wq)) in lo.iter_mut().zip(hi.iter_mut()).zip(&tw[len..2 * len]) {
                    let (x, y) = (*u, *v);
                    let s = x + y;
                    *u = if s >= two_q { s - two_q } else { s };
                    *v = self.mul_shoup(x + two_q - y, w, wq);
                }
            }
            len >>= 1;
        }
    }

    /// Decimation in time with inverse twiddles: bit-reversed order in,
    /// natural order out, scaled by `n`; values in `[0, 2q)`.
    fn inverse(&self, a: &mut [u64], itw: &[(u64, u64)]) {
        let n = a.len();
        let two_q = 2 * self.q;
        let mut len = 1;
        while len < n {
            for block in a.chunks_exact_mut(2 * len) {
                let (lo, hi) = block.split_at_mut(len);
                for ((u, v), &(w, wq)) in lo.iter_mut().zip(hi.iter_mut()).zip(&itw[len..2 * len]) {
                    let x = *u;
                    let y = self.mul_shoup(*v, w, wq);
                    let s = x + y;
                    *u = if s >= two_q { s - two_q } else { s };
                    let d = x + two_q - y;
                    *v = if d >= two_q { d - two_q } else { d };
                }
            }
            len <<= 1;
        }
    }
}

/// The cached forward and inverse twiddle tables of one prime, grown to
/// the largest length asked for so far.
type Tables = std::sync::Arc<(Vec<(u64, u64)>, Vec<(u64, u64)>)>;

/// The twiddle tables of prime `i` for length `2^log` (or longer).
fn tables(i: usize, log: u32) -> Tables {
    use std::sync::RwLock;
    static CACHE: OnceLock<Vec<RwLock<Option<Tables>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| (0..MAX_PRIMES).map(|_| RwLock::new(None)).collect());
    let need = 1usize << log;
    if let Ok(guard) = cache[i].read()
        && let Some(t) = guard.as_ref()
        && t.0.len() >= need
    {
        return t.clone();
    }
    let p = &primes()[i];
    let t: Tables = std::sync::Arc::new((p.twiddles(log, false), p.twiddles(log, true)));
    if let Ok(mut guard) = cache[i].write()
        && guard.as_ref().is_none_or(|old| old.0.len() < need)
    {
        *guard = Some(t.clone());
    }
    t
}

/// The largest primes `c 2^MAX_LOG + 1` below `2^62`, found once.
fn primes() -> &'static [Prime] {
    static PRIMES: OnceLock<Vec<Prime>> = OnceLock::new();
    PRIMES.get_or_init(|| {
        let mut out = Vec::with_capacity(MAX_PRIMES);
        let mut c = ((1u64 << 62) - 1) >> MAX_LOG;
        while out.len() < MAX_PRIMES && c > 0 {
            let q = (c << MAX_LOG) + 1;
            if is_prime_u64(q)
                && let Some(p) = Prime::new(q)
            {
                out.push(p);
            }
            c -= 1;
        }
        out
    })
}

/// Deterministic Miller-Rabin for 64-bit integers (these seven bases are
/// known to decide every `n < 2^64`).
fn is_prime_u64(n: u64) -> bool {
    if n < 2 {
        return false;
    }
    for p in [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37] {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    let mulmod = |a: u64, b: u64| {
        u64::try_from((u128::from(a) * u128::from(b)) % u128::from(n)).unwrap_or(0)
    };
    let powmod = |mut b: u64, mut e: u64| {
        let mut acc = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                acc = mulmod(acc, b);
            }
            b = mulmod(b, b);
            e >>= 1;
        }
        acc
    };
    let s = (n - 1).trailing_zeros();
    let d = (n - 1) >> s;
    'bases: for a in [2u64, 325, 9375, 28178, 450_775, 9_780_504, 1_795_265_022] {
        let a = a % n;
        if a == 0 {
            continue;
        }
        let mut x = powmod(a, d);
        if x == 1 || x == n - 1 {
            continue;
        }
        for _ in 1..s {
            x = mulmod(x, x);
            if x == n - 1 {
                continue 'bases;
            }
        }
        return false;
    }
    true
}

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
        // Below M/2 with M > 2^(61 k): 61 k > 2 bits + MAX_LOG + 1.
        let need = 2 * elem_bits + u64::from(MAX_LOG) + 2;
        let k = usize::try_from(need.div_ceil(61)).ok()?;
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
        let mut c = vec![f.zero(); self.k + 1];
        self.mul_with(a, b, write, |cs| {
            for (e, &v) in c.iter_mut().zip(cs) {
                *e = f.from_u64(v);
            }
            f.dot(&c, &self.crt_mod_p)
        })
    }

    /// `a * b` with the CRT sum accumulated in integer limbs (below
    /// `(k + 1) 2^62 p`) and handed to `reduce`: for multi-word fields,
    /// one reduction per coefficient instead of `k` element products.
    pub(crate) fn mul_limbs(
        &self,
        a: &[E],
        b: &[E],
        write: impl Fn(&E, &mut Vec<u64>),
        reduce: impl Fn(&[u64]) -> E,
    ) -> Vec<E> {
        let mut acc = vec![0u64; self.limbs + 2];
        self.mul_with(a, b, write, |cs| {
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
        a: &[E],
        b: &[E],
        write: impl Fn(&E, &mut Vec<u64>),
        mut finish: impl FnMut(&[u64]) -> E,
    ) -> Vec<E> {
        let out_len = a.len() + b.len() - 1;
        let log = usize::BITS - (out_len - 1).leading_zeros();
        let n = 1usize << log;
        let square = core::ptr::eq(a, b);
        let la = limbs_of(a, self.limbs, &write);
        let lb = if square {
            Vec::new()
        } else {
            limbs_of(b, self.limbs, &write)
        };
        // residues[i][j]: coefficient j of the product modulo q_i, times
        // n R^-1 (the pointwise products are Montgomery products), in
        // [0, 2q).
        let mut residues: Vec<Vec<u64>> = Vec::with_capacity(self.k);
        for (i, p) in primes()[..self.k].iter().enumerate() {
            let t = tables(i, log);
            let (tw, itw) = (&t.0, &t.1);
            let weights = limb_weights(p, self.limbs);
            let mut fa = reduce_all(p, &la, self.limbs, &weights, n);
            p.forward(&mut fa, tw);
            if square {
                for x in &mut fa {
                    *x = p.mul(*x, *x);
                }
            } else {
                let mut fb = reduce_all(p, &lb, self.limbs, &weights, n);
                p.forward(&mut fb, tw);
                for (x, y) in fa.iter_mut().zip(&fb) {
                    *x = p.mul(*x, *y);
                }
            }
            p.inverse(&mut fa, itw);
            fa.truncate(out_len);
            residues.push(fa);
        }
        // The CRT constants absorb n^-1 and the R^-1 of the pointwise
        // products: one more Montgomery product with n^-1 (M/q_i)^-1 R^2
        // leaves c_i = x_i (M/q_i)^-1 mod q_i in normal form.
        let consts: Vec<u64> = primes()[..self.k]
            .iter()
            .zip(&self.crt_inv)
            .map(|(p, &ci)| {
                let n_inv = p.inv(p.to_mont(n as u64));
                // n_inv is n^-1 R; times ci R^2 (to_mont twice) over R.
                p.mul(n_inv, p.to_mont(p.to_mont(ci)))
            })
            .collect();
        let mut c = vec![0u64; self.k + 1];
        (0..out_len)
            .map(|j| {
                let mut frac = 0.0f64;
                for (i, p) in primes()[..self.k].iter().enumerate() {
                    let ci = p.mul(residues[i][j], consts[i]);
                    frac += ci as f64 * self.recip[i];
                    c[i] = ci;
                }
                // The integer is sum c_i M/q_i - t M with a fractional part
                // below 1/2, so the sum of the fractions is t plus less
                // than 1/2, up to rounding errors far below 1/4.
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                // a small nonnegative count below k
                let t = (frac - 0.25).round().max(0.0) as u64;
                c[self.k] = t;
                finish(&c)
            })
            .collect()
    }
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
fn reduce_all(p: &Prime, limbs: &[u64], per: usize, weights: &[u64], n: usize) -> Vec<u64> {
    let mut out = Vec::with_capacity(n);
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
