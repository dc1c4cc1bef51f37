//! The AVX-512 and AVX2 lanes of the butterflies, through `pulp`'s
//! safe intrinsics.

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
    fn small_stage(self, k: Word, v: &mut [Mont64], t: &[Mont64], h: usize, forward: bool) -> bool {
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
        let cross = s._mm256_add_epi64(s._mm256_mul_epu32(x, y_hi), s._mm256_mul_epu32(x_hi, y));
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
