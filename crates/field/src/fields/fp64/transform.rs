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
mod x86 {
    use core::arch::x86_64::{__m256i, __m512i};

    use pulp::cast;

    use super::{Lanes, Mont64, Word};

    /// Eight lanes of AVX-512.
    #[derive(Clone, Copy)]
    pub(super) struct Avx512(pub(super) pulp::x86::V4);

    impl Avx512 {
        #[inline(always)]
        #[allow(clippy::cast_possible_wrap)] // the bits, not the value
        fn splat(self, x: u64) -> __m512i {
            self.0.avx512f._mm512_set1_epi64(x as i64)
        }

        /// The high words of the lane-wise 128-bit products, from four
        /// 32-bit products.
        #[inline(always)]
        fn mul_hi(self, x: __m512i, y: __m512i) -> __m512i {
            let s = self.0.avx512f;
            let x_hi = s._mm512_shuffle_epi32::<0b1011_0001>(x);
            let y_hi = s._mm512_shuffle_epi32::<0b1011_0001>(y);
            let ll = s._mm512_mul_epu32(x, y);
            let lh = s._mm512_mul_epu32(x, y_hi);
            let hl = s._mm512_mul_epu32(x_hi, y);
            let hh = s._mm512_mul_epu32(x_hi, y_hi);
            let mask = s._mm512_set1_epi64(0xffff_ffff);
            let t = s._mm512_add_epi64(lh, s._mm512_srli_epi64::<32>(ll));
            let t2 = s._mm512_add_epi64(hl, s._mm512_and_si512(t, mask));
            s._mm512_add_epi64(
                s._mm512_add_epi64(hh, s._mm512_srli_epi64::<32>(t)),
                s._mm512_srli_epi64::<32>(t2),
            )
        }

        /// `r + p` in the lanes where `borrow` holds.
        #[inline(always)]
        fn fix(self, k: Word, r: __m512i, borrow: u8) -> __m512i {
            let s = self.0.avx512f;
            s._mm512_mask_add_epi64(r, borrow, r, self.splat(k.p))
        }
    }

    /// For a stage of half-span `h` in `{1, 2, 4}` over 16 words `A | B`
    /// (`permutex2var` indices: `0..8` name `A`'s lanes, `8..16` `B`'s):
    /// the positions of the butterflies' first and second operands, and
    /// the inverse shuffles that put the results back into `A` and `B`.
    #[allow(
        clippy::cast_possible_wrap,
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss
    )] // lane indices below 16
    fn shuffles(h: usize) -> ([i64; 8], [i64; 8], [i64; 8], [i64; 8]) {
        let (mut lo, mut hi) = ([0i64; 8], [0i64; 8]);
        let mut lane = 0;
        for i in 0..16 {
            if i % (2 * h) < h {
                lo[lane] = i as i64;
                hi[lane] = (i + h) as i64;
                lane += 1;
            }
        }
        // Results: lane l of S (index l) went to lo[l]; of D (index 8 + l)
        // to hi[l].
        let (mut back_a, mut back_b) = ([0i64; 8], [0i64; 8]);
        for l in 0..8 {
            for (pos, src) in [(lo[l], l as i64), (hi[l], 8 + l as i64)] {
                if pos < 8 {
                    back_a[pos as usize] = src;
                } else {
                    back_b[(pos - 8) as usize] = src;
                }
            }
        }
        (lo, hi, back_a, back_b)
    }

    impl Lanes<8> for Avx512 {
        #[inline(always)]
        #[allow(
            clippy::cast_possible_wrap,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )] // lane indices below 16
        fn small_stage(
            self,
            k: Word,
            v: &mut [Mont64],
            t: &[Mont64],
            h: usize,
            forward: bool,
        ) -> bool {
            if !matches!(h, 1 | 2 | 4) || !v.len().is_multiple_of(16) {
                return false;
            }
            let s = self.0.avx512f;
            let (lo, hi, back_a, back_b) = shuffles(h);
            // Lane l's twiddle: that of the first operand's offset in its
            // span.
            let w = self.load(&core::array::from_fn(|l| t[lo[l] as usize % (2 * h)]));
            let [lo, hi, back_a, back_b]: [__m512i; 4] = [lo, hi, back_a, back_b].map(cast);
            for pair in pulp::as_arrays_mut::<16, _>(v).0 {
                let [a8, b8] = pulp::as_arrays_mut::<8, _>(pair).0 else {
                    unreachable!("16 words are two arrays of 8")
                };
                let (a, b) = (self.load(a8), self.load(b8));
                let x = s._mm512_permutex2var_epi64(a, lo, b);
                let y = s._mm512_permutex2var_epi64(a, hi, b);
                let (sum, dif) = if forward {
                    (self.add(k, x, y), self.mul(k, self.sub(k, x, y), w))
                } else {
                    let u = self.mul(k, y, w);
                    (self.add(k, x, u), self.sub(k, x, u))
                };
                self.store(a8, s._mm512_permutex2var_epi64(sum, back_a, dif));
                self.store(b8, s._mm512_permutex2var_epi64(sum, back_b, dif));
            }
            true
        }

        type V = __m512i;
        #[inline(always)]
        fn load(self, s: &[Mont64; 8]) -> __m512i {
            cast(core::array::from_fn::<u64, 8, _>(|i| s[i].0))
        }
        #[inline(always)]
        fn store(self, s: &mut [Mont64; 8], v: __m512i) {
            let w: [u64; 8] = cast(v);
            for (d, x) in s.iter_mut().zip(w) {
                *d = Mont64(x);
            }
        }
        #[inline(always)]
        fn add(self, k: Word, a: __m512i, b: __m512i) -> __m512i {
            // a + b - p, as a - (p - b): never above 2^64 for p near it.
            let s = self.0.avx512f;
            let t = s._mm512_sub_epi64(self.splat(k.p), b);
            let r = s._mm512_sub_epi64(a, t);
            self.fix(k, r, s._mm512_cmplt_epu64_mask(a, t))
        }
        #[inline(always)]
        fn sub(self, k: Word, a: __m512i, b: __m512i) -> __m512i {
            let s = self.0.avx512f;
            let r = s._mm512_sub_epi64(a, b);
            self.fix(k, r, s._mm512_cmplt_epu64_mask(a, b))
        }
        #[inline(always)]
        fn mul(self, k: Word, a: __m512i, w: __m512i) -> __m512i {
            let s = self.0.avx512f;
            let dq = self.0.avx512dq;
            let w_pre = dq._mm512_mullo_epi64(w, self.splat(k.p_inv));
            let hi = self.mul_hi(a, w);
            let m = dq._mm512_mullo_epi64(a, w_pre);
            let mh = self.mul_hi(m, self.splat(k.p));
            let r = s._mm512_sub_epi64(hi, mh);
            self.fix(k, r, s._mm512_cmplt_epu64_mask(hi, mh))
        }
    }

    /// Four lanes of AVX2.
    #[derive(Clone, Copy)]
    pub(super) struct Avx2(pub(super) pulp::x86::V3);

    impl Avx2 {
        #[inline(always)]
        #[allow(clippy::cast_possible_wrap)] // the bits, not the value
        fn splat(self, x: u64) -> __m256i {
            self.0.avx._mm256_set1_epi64x(x as i64)
        }

        #[inline(always)]
        fn mul_hi(self, x: __m256i, y: __m256i) -> __m256i {
            let s = self.0.avx2;
            let x_hi = s._mm256_shuffle_epi32::<0b1011_0001>(x);
            let y_hi = s._mm256_shuffle_epi32::<0b1011_0001>(y);
            let ll = s._mm256_mul_epu32(x, y);
            let lh = s._mm256_mul_epu32(x, y_hi);
            let hl = s._mm256_mul_epu32(x_hi, y);
            let hh = s._mm256_mul_epu32(x_hi, y_hi);
            let mask = self.splat(0xffff_ffff);
            let t = s._mm256_add_epi64(lh, s._mm256_srli_epi64::<32>(ll));
            let t2 = s._mm256_add_epi64(hl, s._mm256_and_si256(t, mask));
            s._mm256_add_epi64(
                s._mm256_add_epi64(hh, s._mm256_srli_epi64::<32>(t)),
                s._mm256_srli_epi64::<32>(t2),
            )
        }

        /// The low words of the lane-wise products, from three 32-bit
        /// products.
        #[inline(always)]
        fn mul_lo(self, x: __m256i, y: __m256i) -> __m256i {
            let s = self.0.avx2;
            let x_hi = s._mm256_shuffle_epi32::<0b1011_0001>(x);
            let y_hi = s._mm256_shuffle_epi32::<0b1011_0001>(y);
            let ll = s._mm256_mul_epu32(x, y);
            let cross =
                s._mm256_add_epi64(s._mm256_mul_epu32(x, y_hi), s._mm256_mul_epu32(x_hi, y));
            s._mm256_add_epi64(ll, s._mm256_slli_epi64::<32>(cross))
        }

        /// All ones in the lanes where `a < b`, unsigned.
        #[inline(always)]
        fn less(self, a: __m256i, b: __m256i) -> __m256i {
            let s = self.0.avx2;
            let bias = self.splat(1 << 63);
            s._mm256_cmpgt_epi64(s._mm256_xor_si256(b, bias), s._mm256_xor_si256(a, bias))
        }

        #[inline(always)]
        fn fix(self, k: Word, r: __m256i, borrow: __m256i) -> __m256i {
            let s = self.0.avx2;
            s._mm256_add_epi64(r, s._mm256_and_si256(borrow, self.splat(k.p)))
        }
    }

    impl Lanes<4> for Avx2 {
        type V = __m256i;
        #[inline(always)]
        fn load(self, s: &[Mont64; 4]) -> __m256i {
            cast(core::array::from_fn::<u64, 4, _>(|i| s[i].0))
        }
        #[inline(always)]
        fn store(self, s: &mut [Mont64; 4], v: __m256i) {
            let w: [u64; 4] = cast(v);
            for (d, x) in s.iter_mut().zip(w) {
                *d = Mont64(x);
            }
        }
        #[inline(always)]
        fn add(self, k: Word, a: __m256i, b: __m256i) -> __m256i {
            let s = self.0.avx2;
            let t = s._mm256_sub_epi64(self.splat(k.p), b);
            let r = s._mm256_sub_epi64(a, t);
            self.fix(k, r, self.less(a, t))
        }
        #[inline(always)]
        fn sub(self, k: Word, a: __m256i, b: __m256i) -> __m256i {
            let s = self.0.avx2;
            let r = s._mm256_sub_epi64(a, b);
            self.fix(k, r, self.less(a, b))
        }
        #[inline(always)]
        fn mul(self, k: Word, a: __m256i, w: __m256i) -> __m256i {
            let s = self.0.avx2;
            let w_pre = self.mul_lo(w, self.splat(k.p_inv));
            let hi = self.mul_hi(a, w);
            let m = self.mul_lo(a, w_pre);
            let mh = self.mul_hi(m, self.splat(k.p));
            let r = s._mm256_sub_epi64(hi, mh);
            self.fix(k, r, self.less(hi, mh))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Field, FiniteField};
    use rand::SeedableRng;

    /// Every path the CPU has gives the portable path's words, forward and
    /// inverse, at every length from 1 to 2^12 points, over primes near
    /// 2^64, near 2^63 and small.
    #[test]
    fn products_and_scaling_fill_the_tails() {
        let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(4);
        let f = Fp64::proth();
        let k = Word::of(&f);
        for len in 0..40 {
            let a: Vec<Mont64> = (0..len).map(|_| f.random(rng)).collect();
            let b: Vec<Mont64> = (0..len).map(|_| f.random(rng)).collect();
            for path in Path::available() {
                let mut got = a.clone();
                run(path, k, &mut got, Job::MulEach(&b));
                let want: Vec<Mont64> = a.iter().zip(&b).map(|(x, y)| f.mul(x, y)).collect();
                assert_eq!(got, want, "{path:?}, {len}");
            }
        }
    }

    #[test]
    fn every_path_gives_the_portable_words() {
        let rng = &mut rand_chacha::ChaCha8Rng::seed_from_u64(3);
        let paths = Path::available();
        for f in [
            Fp64::proth(),
            Fp64::new(0xffff_ffff_0000_0001).unwrap(),
            Fp64::new(3 * (1 << 30) + 1).unwrap(),
            Fp64::new(7_340_033).unwrap(),
        ] {
            let k = Word::of(&f);
            for log in (0..=12u32).chain([15, 16]) {
                let (tw, itw) = crate::poly::transform::stage_tables_for_tests(&f, log);
                let (tw, itw) = (&tw[..], &itw[..]);
                let v: Vec<Mont64> = (0..1usize << log).map(|_| f.random(rng)).collect();
                let mut want = v.clone();
                run(Path::Portable, k, &mut want, Job::Forward(tw));
                let mut back = want.clone();
                run(Path::Portable, k, &mut back, Job::Inverse(itw));
                let n = f.from_u64(1 << log);
                assert!(
                    back.iter().zip(&v).all(|(x, y)| *x == f.mul(y, &n)),
                    "log {log}"
                );
                for &path in &paths {
                    let mut got = v.clone();
                    run(path, k, &mut got, Job::Forward(tw));
                    assert_eq!(got, want, "{path:?}, log {log}, p {}", f.modulus());
                    let mut got_back = want.clone();
                    run(path, k, &mut got_back, Job::Inverse(itw));
                    assert_eq!(got_back, back, "{path:?} inverse, log {log}");
                    // Products and scaling, lane by lane and in the tails.
                    let mut prod = v.clone();
                    run(path, k, &mut prod, Job::MulEach(&want));
                    let expect: Vec<Mont64> =
                        v.iter().zip(&want).map(|(x, y)| f.mul(x, y)).collect();
                    assert_eq!(prod, expect, "{path:?} products, log {log}");
                    let c = f.random(rng);
                    let mut scaled = v.clone();
                    run(path, k, &mut scaled, Job::Scale(c));
                    assert!(
                        scaled.iter().zip(&v).all(|(x, y)| *x == f.mul(y, &c)),
                        "{path:?} scale"
                    );
                }
            }
        }
    }
}
