//! The butterflies of the number-theoretic transforms (`poly/transform.rs`)
//! for [`Fp64`], on the Montgomery words themselves, vectorised where the CPU allows: AVX-512 (eight lanes)
//! or AVX2 (four), detected at run time through `pulp`, and a portable path
//! everywhere else. Every path computes the same butterflies on the same
//! words, so the results are identical (the tests run each path the CPU
//! has against the portable one, over several primes).
//!
//! A twiddle `w` (in Montgomery form) multiplies by Montgomery's method with
//! `m = a (w p^-1 mod 2^64)` computed from `a` directly rather than from
//! the low word of `a w`: the same `m`, without waiting for the first
//! product. Primes up to `2^64` leave no room for lazy reduction, so every
//! sum and difference is reduced at once.

use super::{Fp64, Mont64};

/// The prime and `p^-1 mod 2^64`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Word {
    p: u64,
    p_inv: u64,
}

impl Word {
    pub(crate) fn of(f: &Fp64) -> Self {
        let (p, p_inv) = f.montgomery();
        Self { p, p_inv }
    }

    #[inline(always)]
    fn add(self, a: u64, b: u64) -> u64 {
        crate::fields::word::add(a, b, self.p)
    }

    #[inline(always)]
    fn sub(self, a: u64, b: u64) -> u64 {
        crate::fields::word::sub(a, b, self.p)
    }

    /// `a w R^-1 mod p`, given `w_pre = w p^-1 mod 2^64`.
    #[inline(always)]
    #[allow(clippy::cast_possible_truncation)] // high words
    fn mul(self, a: u64, w: u64, w_pre: u64) -> u64 {
        let hi = ((u128::from(a) * u128::from(w)) >> 64) as u64;
        let m = a.wrapping_mul(w_pre);
        let mh = ((u128::from(m) * u128::from(self.p)) >> 64) as u64;
        // a w and m p agree in their low words: the difference is
        // (hi - mh) 2^64, with hi, mh < p.
        let (r, borrow) = hi.overflowing_sub(mh);
        if borrow { r.wrapping_add(self.p) } else { r }
    }
}

/// Which instructions run the butterflies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Path {
    /// Plain 64-bit arithmetic, on every CPU.
    Portable,
    /// AVX2, four lanes.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// AVX-512 (F and DQ), eight lanes.
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

impl Path {
    /// The widest path this CPU runs.
    pub(crate) fn best() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if pulp::x86::V4::try_new().is_some() {
                return Self::Avx512;
            }
            if pulp::x86::V3::try_new().is_some() {
                return Self::Avx2;
            }
        }
        Self::Portable
    }

    /// Every path this CPU runs, the portable one first.
    #[cfg(test)]
    pub(crate) fn available() -> Vec<Self> {
        let mut out = vec![Self::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if pulp::x86::V3::try_new().is_some() {
                out.push(Self::Avx2);
            }
            if pulp::x86::V4::try_new().is_some() {
                out.push(Self::Avx512);
            }
        }
        out
    }
}

/// What to run on the words `v`.
#[derive(Clone, Copy)]
pub(crate) enum Job<'a> {
    /// The forward transform (decimation in frequency, natural order in,
    /// bit-reversed out) with these stage tables (stage `h` reads
    /// `tw[h..2h]`).
    Forward(&'a [Mont64]),
    /// The inverse transform (decimation in time, bit-reversed order in,
    /// natural out), unscaled, with the inverse stage tables.
    Inverse(&'a [Mont64]),
    /// `v_i <- v_i b_i`.
    MulEach(&'a [Mont64]),
    /// `v_i <- v_i c`.
    Scale(Mont64),
}

/// Runs `job` on `v` along `path` (the portable one if the CPU lacks it).
pub(crate) fn run(path: Path, k: Word, v: &mut [Mont64], job: Job<'_>) {
    match path {
        Path::Portable => exec::<1, Scalar>(Scalar, k, v, job),
        #[cfg(target_arch = "x86_64")]
        Path::Avx2 => match pulp::x86::V3::try_new() {
            Some(simd) => simd.vectorize(Run::<4, x86::Avx2> {
                lanes: x86::Avx2(simd),
                k,
                v,
                job,
            }),
            None => exec::<1, Scalar>(Scalar, k, v, job),
        },
        #[cfg(target_arch = "x86_64")]
        Path::Avx512 => match pulp::x86::V4::try_new() {
            Some(simd) => simd.vectorize(Run::<8, x86::Avx512> {
                lanes: x86::Avx512(simd),
                k,
                v,
                job,
            }),
            None => exec::<1, Scalar>(Scalar, k, v, job),
        },
    }
}

/// `N` lanes of words and the butterflies' arithmetic on them.
trait Lanes<const N: usize>: Copy {
    type V: Copy;
    fn load(self, s: &[Mont64; N]) -> Self::V;
    fn store(self, s: &mut [Mont64; N], v: Self::V);
    fn add(self, k: Word, a: Self::V, b: Self::V) -> Self::V;
    fn sub(self, k: Word, a: Self::V, b: Self::V) -> Self::V;
    /// `a w R^-1 mod p` for the twiddles `w`.
    fn mul(self, k: Word, a: Self::V, w: Self::V) -> Self::V;
    /// One stage of half-span `h < N` over all of `v`, if these lanes have
    /// a way (lanes regrouped by shuffles); `false` leaves it to the scalar
    /// loop.
    #[inline(always)]
    fn small_stage(self, k: Word, v: &mut [Mont64], t: &[Mont64], h: usize, forward: bool) -> bool {
        let _ = (k, v, t, h, forward);
        false
    }
}

/// One lane: the portable path.
#[derive(Clone, Copy)]
struct Scalar;

impl Lanes<1> for Scalar {
    type V = u64;
    #[inline(always)]
    fn load(self, s: &[Mont64; 1]) -> u64 {
        s[0].0
    }
    #[inline(always)]
    fn store(self, s: &mut [Mont64; 1], v: u64) {
        s[0] = Mont64(v);
    }
    #[inline(always)]
    fn add(self, k: Word, a: u64, b: u64) -> u64 {
        k.add(a, b)
    }
    #[inline(always)]
    fn sub(self, k: Word, a: u64, b: u64) -> u64 {
        k.sub(a, b)
    }
    #[inline(always)]
    fn mul(self, k: Word, a: u64, w: u64) -> u64 {
        k.mul(a, w, w.wrapping_mul(k.p_inv))
    }
}

/// A job in the CPU features' context (`pulp` compiles the body with
/// them enabled).
struct Run<'a, const N: usize, L> {
    lanes: L,
    k: Word,
    v: &'a mut [Mont64],
    job: Job<'a>,
}

impl<const N: usize, L: Lanes<N>> pulp::NullaryFnOnce for Run<'_, N, L> {
    type Output = ();
    #[inline(always)]
    fn call(self) {
        exec::<N, L>(self.lanes, self.k, self.v, self.job);
    }
}

#[inline(always)]
fn exec<const N: usize, L: Lanes<N>>(lanes: L, k: Word, v: &mut [Mont64], job: Job<'_>) {
    match job {
        Job::Forward(tw) => stages::<N, L>(lanes, k, v, tw, true),
        Job::Inverse(itw) => stages::<N, L>(lanes, k, v, itw, false),
        Job::MulEach(b) => each::<N, L>(lanes, k, v, b, None),
        Job::Scale(c) => each::<N, L>(lanes, k, v, &[], Some(c)),
    }
}

/// `v_i <- v_i b_i`, or `v_i <- v_i c` when `c` is given.
#[inline(always)]
fn each<const N: usize, L: Lanes<N>>(
    lanes: L,
    k: Word,
    v: &mut [Mont64],
    b: &[Mont64],
    c: Option<Mont64>,
) {
    let (head, tail) = pulp::as_arrays_mut::<N, _>(v);
    match c {
        Some(c) => {
            let cv = lanes.load(&[c; N]);
            for x in head {
                let y = lanes.mul(k, lanes.load(x), cv);
                lanes.store(x, y);
            }
            for x in tail {
                *x = Mont64(Scalar.mul(k, x.0, c.0));
            }
        }
        None => {
            debug_assert_eq!(b.len(), head.len() * N + tail.len());
            let (b_head, b_tail) = pulp::as_arrays::<N, _>(b);
            for (x, y) in head.iter_mut().zip(b_head) {
                let z = lanes.mul(k, lanes.load(x), lanes.load(y));
                lanes.store(x, z);
            }
            for (x, y) in tail.iter_mut().zip(b_tail) {
                *x = Mont64(Scalar.mul(k, x.0, y.0));
            }
        }
    }
}

/// Spans up to this many words run all their stages while they sit in
/// the core's cache (256 KiB of L2 on the machines measured): a transform
/// of `2^21` points makes eight passes over its 16 MiB instead of 21.
const BLOCK: usize = 1 << 14;

/// All the stages: the spans longer than [`BLOCK`] one stage at a time over
/// all of `v` (first when forward, last when inverse), the rest block by
/// block, so that those stages run in cache.
#[inline(always)]
fn stages<const N: usize, L: Lanes<N>>(
    lanes: L,
    k: Word,
    v: &mut [Mont64],
    tw: &[Mont64],
    forward: bool,
) {
    let n = v.len();
    let block = BLOCK.min(n);
    if forward {
        let mut h = n / 2;
        while h >= block {
            stage(lanes, k, v, tw, h, true);
            h /= 2;
        }
        for chunk in v.chunks_exact_mut(block.max(1)) {
            let mut h = block / 2;
            while h >= 1 {
                stage(lanes, k, chunk, tw, h, true);
                h /= 2;
            }
        }
    } else {
        for chunk in v.chunks_exact_mut(block.max(1)) {
            let mut h = 1;
            while h < block {
                stage(lanes, k, chunk, tw, h, false);
                h *= 2;
            }
        }
        let mut h = block;
        while h < n {
            stage(lanes, k, v, tw, h, false);
            h *= 2;
        }
    }
}

/// One stage of half-span `h` over `v`: `N` butterflies at a time when
/// `h` holds at least `N` words, else the lanes' shuffles or one at a
/// time.
#[inline(always)]
fn stage<const N: usize, L: Lanes<N>>(
    lanes: L,
    k: Word,
    v: &mut [Mont64],
    tw: &[Mont64],
    h: usize,
    forward: bool,
) {
    let t = &tw[h..2 * h];
    if h < N && lanes.small_stage(k, v, t, h, forward) {
        return;
    }
    for chunk in v.chunks_exact_mut(2 * h) {
        let (lo, hi) = chunk.split_at_mut(h);
        if h >= N {
            let lo = pulp::as_arrays_mut::<N, _>(lo).0;
            let hi = pulp::as_arrays_mut::<N, _>(hi).0;
            let t = pulp::as_arrays::<N, _>(t).0;
            for ((a, b), w) in lo.iter_mut().zip(hi.iter_mut()).zip(t) {
                butterfly(lanes, k, a, b, w, forward);
            }
        } else {
            for ((a, b), w) in lo.iter_mut().zip(hi.iter_mut()).zip(t) {
                butterfly::<1, Scalar>(
                    Scalar,
                    k,
                    core::array::from_mut(a),
                    core::array::from_mut(b),
                    core::array::from_ref(w),
                    forward,
                );
            }
        }
    }
}

/// One butterfly on `N` lanes: `(a + b, (a - b) w)` forward (decimation in
/// frequency), `(a + b w, a - b w)` inverse (decimation in time).
#[inline(always)]
fn butterfly<const N: usize, L: Lanes<N>>(
    lanes: L,
    k: Word,
    a: &mut [Mont64; N],
    b: &mut [Mont64; N],
    w: &[Mont64; N],
    forward: bool,
) {
    let (x, y, w) = (lanes.load(a), lanes.load(b), lanes.load(w));
    let (s, d) = if forward {
        (lanes.add(k, x, y), lanes.mul(k, lanes.sub(k, x, y), w))
    } else {
        let u = lanes.mul(k, y, w);
        (lanes.add(k, x, u), lanes.sub(k, x, u))
    };
    lanes.store(a, s);
    lanes.store(b, d);
}

#[cfg(target_arch = "x86_64")]
mod x86;

#[cfg(test)]
mod tests;
