//! The transform primes `c 2^24 + 1` below `2^50`, their Montgomery and
//! Shoup arithmetic, and the portable engine's scalar transforms with
//! their cached twiddle tables.

use std::sync::OnceLock;

/// Transform lengths up to `2^MAX_LOG` are supported.
pub(super) const MAX_LOG: u32 = 24;
/// The number of transform primes kept (enough for `p` of about 9700 bits:
/// `49 * 400 > 2 * 9700 + MAX_LOG + 2`).
const MAX_PRIMES: usize = 400;
/// The transform primes are below `2^PRIME_BITS` (and above
/// `2^(PRIME_BITS - 1)`).
pub(super) const PRIME_BITS: u32 = 50;

/// A transform prime with its Montgomery constants (`R = 2^64`).
#[derive(Clone, Debug)]
pub(super) struct Prime {
    pub(super) q: u64,
    /// `-q^-1 mod 2^64`.
    neg_inv: u64,
    /// `R^2 mod q`.
    r2: u64,
    /// A primitive `2^MAX_LOG`-th root of unity, in Montgomery form.
    root: u64,
}

impl Prime {
    pub(super) fn new(q: u64) -> Option<Self> {
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
    pub(super) fn redc(&self, t: u128) -> u64 {
        let m = (t as u64).wrapping_mul(self.neg_inv);
        // t + m q < 2^127 and is divisible by 2^64; the quotient is < 2q.
        let s = ((t + u128::from(m) * u128::from(self.q)) >> 64) as u64;
        if s >= self.q { s - self.q } else { s }
    }

    #[inline(always)]
    pub(super) fn mul(&self, a: u64, b: u64) -> u64 {
        self.redc(u128::from(a) * u128::from(b))
    }

    pub(super) fn to_mont(&self, a: u64) -> u64 {
        self.mul(a % self.q, self.r2)
    }

    pub(super) fn pow(&self, mut base: u64, mut e: u64) -> u64 {
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

    pub(super) fn inv(&self, a: u64) -> u64 {
        self.pow(a, self.q - 2)
    }

    /// `(w, floor(w 2^64 / q))` for Shoup's multiplication by the
    /// constant `w < q`.
    #[allow(clippy::cast_possible_truncation)] // the quotient is below 2^64
    pub(super) fn shoup(&self, w: u64) -> (u64, u64) {
        (w, ((u128::from(w) << 64) / u128::from(self.q)) as u64)
    }

    /// `x w mod q` up to one extra `q` (result in `[0, 2q)`), for any
    /// `x < 2^64`, by Shoup's method: one high and two low products.
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // high word
    pub(super) fn mul_shoup(&self, x: u64, w: u64, w_quot: u64) -> u64 {
        let hi = ((u128::from(x) * u128::from(w_quot)) >> 64) as u64;
        x.wrapping_mul(w).wrapping_sub(hi.wrapping_mul(self.q))
    }

    /// Twiddle tables (normal form, with Shoup quotients) for transforms
    /// of length up to `2^log`: entry `len + j` is `w^j` for a primitive
    /// `2 len`-th root `w` (inverse roots for `inverse`). A table for a
    /// length contains the tables of all smaller lengths as its prefix.
    pub(super) fn twiddles(&self, log: u32, inverse: bool) -> Vec<(u64, u64)> {
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
    pub(super) fn forward(&self, a: &mut [u64], tw: &[(u64, u64)]) {
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
    pub(super) fn inverse(&self, a: &mut [u64], itw: &[(u64, u64)]) {
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
pub(super) type Tables = std::sync::Arc<(Vec<(u64, u64)>, Vec<(u64, u64)>)>;

/// The twiddle tables of prime `i` for length `2^log` (or longer).
pub(super) fn tables(i: usize, log: u32) -> Tables {
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

/// The largest primes `c 2^MAX_LOG + 1` below `2^PRIME_BITS`, found once.
pub(super) fn primes() -> &'static [Prime] {
    static PRIMES: OnceLock<Vec<Prime>> = OnceLock::new();
    PRIMES.get_or_init(|| {
        let mut out = Vec::with_capacity(MAX_PRIMES);
        let mut c = ((1u64 << PRIME_BITS) - 1) >> MAX_LOG;
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
