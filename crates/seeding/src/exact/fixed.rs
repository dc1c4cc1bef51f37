//! Fixed-point coordinates and exact, order-independent cluster moments.
//!
//! A coordinate `x` becomes the integer `round(x * 2^32)` (ties away from
//! zero), so the model clusters the data rounded to multiples of 2^-32.
//! With `|x| <= 2^16` the integer is below 2^48 in magnitude: it is exact
//! in an `f64`, so the rounded coordinate `x_fixed * 2^-32` is too.
//!
//! Cluster moments are sums over the members of `w`, `w * x_fixed` (per
//! axis) and `w * |x_fixed|^2`. They are kept in wrapping (modular)
//! integer arithmetic: addition modulo 2^128 or 2^256 is associative and
//! commutative, so a sum does not depend on the order in which points are
//! added or removed, nor on how a parallel pass splits them; and since
//! every true value lies well inside the range (bounds below), the wrapped
//! value *is* the true value.
//!
//! Bounds: the total weight is below 2^64 (checked by [`crate::Dataset`]),
//! so `|sum w x_fixed| < 2^112` fits an `i128`, and
//! `sum w |x_fixed|^2 < 2^64 * d * 2^96 < 2^192` (for `d < 2^32`) fits the
//! 256-bit [`U256`]. A point's own `|x_fixed|^2 < d * 2^96 < 2^128` fits a
//! `u128`.

use num_bigint::{BigInt, BigUint};
use num_traits::ToPrimitive;

/// The number of fractional bits of the fixed-point coordinates.
pub(crate) const FRAC_BITS: u32 = 32;
/// `2^FRAC_BITS`.
const SCALE: f64 = 4_294_967_296.0;
/// `2^-FRAC_BITS`.
pub(crate) const INV_SCALE: f64 = 1.0 / SCALE;
/// `2^-(2 FRAC_BITS)`: the scale of squared fixed-point quantities.
const INV_SCALE2: f64 = INV_SCALE * INV_SCALE;

/// The largest coordinate magnitude accepted: `2^16`.
pub(crate) const MAX_ABS_COORD: f64 = 65_536.0;

/// The largest dimension accepted (`|x_fixed|^2` must fit a `u128`).
pub(crate) const MAX_DIM: usize = (1 << 31) - 1;

/// `x` rounded to the fixed-point grid, or `None` when it is not finite or
/// exceeds [`MAX_ABS_COORD`].
pub(crate) fn to_fixed(x: f64) -> Option<i64> {
    if x.is_nan() || x.abs() > MAX_ABS_COORD {
        return None;
    }
    // Scaling by a power of two is exact, and |x * 2^32| <= 2^48 after
    // rounding: the conversion to i64 is exact.
    #[allow(clippy::cast_possible_truncation)]
    Some((x * SCALE).round() as i64)
}

/// The rounded coordinate as an `f64` (exact: `|v| < 2^53`).
pub(crate) fn from_fixed(v: i64) -> f64 {
    v as f64 * INV_SCALE
}

/// The fixed-point integer of a coordinate already on the grid (exact).
#[inline]
pub(crate) fn fixed_of(x: f64) -> i64 {
    // `x` is a multiple of 2^-32 below 2^16 in magnitude (an invariant of
    // the model's data): the product is an integer below 2^48.
    #[allow(clippy::cast_possible_truncation)]
    let v = (x * SCALE) as i64;
    v
}

/// A 256-bit integer with wrapping arithmetic (two's complement), enough
/// for sums of `w |x_fixed|^2`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct U256 {
    lo: u128,
    hi: u128,
}

impl U256 {
    /// `w * q` exactly (below 2^192).
    #[inline]
    pub(crate) fn mul_u64_u128(w: u64, q: u128) -> Self {
        let w = u128::from(w);
        // Splitting q into 64-bit halves keeps each product below 2^128.
        #[allow(clippy::cast_possible_truncation)]
        let (ql, qh) = (u128::from(q as u64), q >> 64);
        let a = w * ql;
        let b = w * qh;
        let (lo, carry) = a.overflowing_add(b << 64);
        Self {
            lo,
            hi: (b >> 64) + u128::from(carry),
        }
    }

    #[inline]
    pub(crate) fn wrapping_add(self, o: Self) -> Self {
        let (lo, carry) = self.lo.overflowing_add(o.lo);
        Self {
            lo,
            hi: self.hi.wrapping_add(o.hi).wrapping_add(u128::from(carry)),
        }
    }

    #[inline]
    pub(crate) fn wrapping_neg(self) -> Self {
        Self {
            lo: !self.lo,
            hi: !self.hi,
        }
        .wrapping_add(Self { lo: 1, hi: 0 })
    }

    pub(crate) fn to_biguint(self) -> BigUint {
        (BigUint::from(self.hi) << 128u32) + BigUint::from(self.lo)
    }
}

/// `|x_fixed|^2` of a point on the grid.
#[inline]
pub(crate) fn sq_norm_fixed(x: &[f64]) -> u128 {
    x.iter().fold(0u128, |acc, &xi| {
        let v = fixed_of(xi).unsigned_abs();
        acc.wrapping_add(u128::from(v) * u128::from(v))
    })
}

/// The moments of `m` clusters in dimension `dim`: per cluster the weight
/// `W`, the sums `S` (one per axis) and `Q = sum w |x_fixed|^2`, all exact
/// integers in wrapping arithmetic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Moments {
    dim: usize,
    w: Vec<u128>,
    s: Vec<i128>,
    q: Vec<U256>,
}

impl Moments {
    pub(crate) fn zeros(m: usize, dim: usize) -> Self {
        Self {
            dim,
            w: vec![0; m],
            s: vec![0; m * dim],
            q: vec![U256::default(); m],
        }
    }

    /// The dimension.
    pub(crate) fn dim(&self) -> usize {
        self.dim
    }

    /// The number of clusters.
    pub(crate) fn len(&self) -> usize {
        self.w.len()
    }

    /// Adds (`sign = true`) or removes a point of weight `w` at `x` (on
    /// the grid) to or from cluster `j`.
    #[inline]
    pub(crate) fn add_point(&mut self, j: usize, w: u64, x: &[f64], add: bool) {
        let d = self.dim;
        let ww = u128::from(w);
        let wi = i128::from(w);
        let q = U256::mul_u64_u128(w, sq_norm_fixed(x));
        if add {
            self.w[j] = self.w[j].wrapping_add(ww);
            self.q[j] = self.q[j].wrapping_add(q);
            for (s, &xi) in self.s[j * d..(j + 1) * d].iter_mut().zip(x) {
                *s = s.wrapping_add(wi * i128::from(fixed_of(xi)));
            }
        } else {
            self.w[j] = self.w[j].wrapping_sub(ww);
            self.q[j] = self.q[j].wrapping_add(q.wrapping_neg());
            for (s, &xi) in self.s[j * d..(j + 1) * d].iter_mut().zip(x) {
                *s = s.wrapping_sub(wi * i128::from(fixed_of(xi)));
            }
        }
    }

    /// Adds another set of moments (of the same shape) into this one.
    pub(crate) fn merge(&mut self, o: &Self) {
        for (a, b) in self.w.iter_mut().zip(&o.w) {
            *a = a.wrapping_add(*b);
        }
        for (a, b) in self.s.iter_mut().zip(&o.s) {
            *a = a.wrapping_add(*b);
        }
        for (a, b) in self.q.iter_mut().zip(&o.q) {
            *a = a.wrapping_add(*b);
        }
    }

    /// The weight of cluster `j`. Below 2^64 by the total-weight bound.
    pub(crate) fn weight(&self, j: usize) -> u64 {
        u64::try_from(self.w[j]).unwrap_or(u64::MAX)
    }

    /// The centroid of cluster `j` (which must be non-empty), written into
    /// `out`: per axis `fl(fl(fl(S) / fl(W)) * 2^-32)`, a function of the
    /// integers alone.
    pub(crate) fn centroid_into(&self, j: usize, out: &mut [f64]) {
        let d = self.dim;
        let w = self.w[j] as f64;
        for (c, &s) in out.iter_mut().zip(&self.s[j * d..(j + 1) * d]) {
            *c = s as f64 / w * INV_SCALE;
        }
    }

    /// The sum of squared distances from the members of cluster `j` to
    /// their exact mean, times `2^64`, as the exact rational
    /// `(Q W - |S|^2) / W`: returns its numerator and `W`.
    fn scatter(&self, j: usize) -> (BigInt, u128) {
        let d = self.dim;
        let w = self.w[j];
        let qw = BigInt::from(self.q[j].to_biguint() * BigUint::from(w));
        let ss: BigInt = self.s[j * d..(j + 1) * d]
            .iter()
            .map(|&s| BigInt::from(s) * BigInt::from(s))
            .sum();
        (qw - ss, w)
    }

    /// Cluster `j`'s term of the objective: the exact integer ratio
    /// `(Q W - |S|^2) / W` rounded through `f64` (numerator, denominator,
    /// quotient); 0 for an empty cluster. A function of the cluster's
    /// integers alone.
    pub(crate) fn phi_term(&self, j: usize) -> f64 {
        if self.w[j] == 0 {
            return 0.0;
        }
        let (num, w) = self.scatter(j);
        num.to_f64().unwrap_or(f64::INFINITY) / w as f64
    }

    /// The objective from the terms of [`Self::phi_term`]: added in
    /// cluster order from 0 and scaled by `2^-64`, the sum over clusters of
    /// `sum w |x - mean|^2`.
    pub(crate) fn phi_from_terms(terms: &[f64]) -> f64 {
        terms.iter().fold(0.0, |acc, &t| acc + t) * INV_SCALE2
    }

    /// Whether cluster `j` has the same integers here and in `o`.
    pub(crate) fn same_cluster(&self, o: &Self, j: usize) -> bool {
        let d = self.dim;
        self.dim == o.dim
            && self.w.get(j) == o.w.get(j)
            && self.q.get(j) == o.q.get(j)
            && self.s.get(j * d..(j + 1) * d) == o.s.get(j * d..(j + 1) * d)
    }

    /// The objective, [`Self::phi_from_terms`] of every cluster's term.
    #[cfg(test)]
    pub(crate) fn phi(&self) -> f64 {
        let terms: Vec<f64> = (0..self.len()).map(|j| self.phi_term(j)).collect();
        Self::phi_from_terms(&terms)
    }

    /// The mean over axes of the weighted variance, all clusters pooled
    /// (the scale of the relative tolerance), from the exact moments.
    pub(crate) fn pooled_mean_variance(&self) -> f64 {
        let mut all = Self::zeros(1, self.dim);
        for j in 0..self.len() {
            all.w[0] = all.w[0].wrapping_add(self.w[j]);
            all.q[0] = all.q[0].wrapping_add(self.q[j]);
            for i in 0..self.dim {
                all.s[i] = all.s[i].wrapping_add(self.s[j * self.dim + i]);
            }
        }
        if all.w[0] == 0 {
            return 0.0;
        }
        let (num, w) = all.scatter(0);
        num.to_f64().unwrap_or(f64::INFINITY) / w as f64 / w as f64 / self.dim as f64 * INV_SCALE2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_round_trips_and_rejects() {
        assert_eq!(to_fixed(1.0), Some(1 << 32));
        assert_eq!(to_fixed(-0.5), Some(-(1 << 31)));
        assert_eq!(to_fixed(MAX_ABS_COORD), Some(1 << 48));
        assert_eq!(to_fixed(MAX_ABS_COORD * 1.000_001), None);
        assert_eq!(to_fixed(f64::NAN), None);
        assert_eq!(to_fixed(f64::INFINITY), None);
        // Half a grid step rounds away from zero.
        assert_eq!(to_fixed(1.5 * INV_SCALE), Some(2));
        let v = to_fixed(0.123_456_789).unwrap();
        assert_eq!(fixed_of(from_fixed(v)), v);
    }

    #[test]
    fn wide_arithmetic_matches_bigints() {
        let cases = [
            (u64::MAX, u128::MAX),
            (3, 1u128 << 127),
            (
                0x1234_5678_9abc_def0,
                0xfedc_ba98_7654_3210_0123_4567_89ab_cdef,
            ),
            (0, 77),
        ];
        let mut acc = U256::default();
        let mut big = BigUint::from(0u8);
        for (w, q) in cases {
            let p = U256::mul_u64_u128(w, q);
            assert_eq!(p.to_biguint(), BigUint::from(w) * BigUint::from(q));
            acc = acc.wrapping_add(p);
            big += BigUint::from(w) * BigUint::from(q);
        }
        assert_eq!(acc.to_biguint(), big);
        // Removing what was added gives zero back, in any order.
        for (w, q) in cases.iter().rev() {
            acc = acc.wrapping_add(U256::mul_u64_u128(*w, *q).wrapping_neg());
        }
        assert_eq!(acc, U256::default());
    }

    #[test]
    fn moments_give_exact_centroids_and_scatter() {
        // Points 0, 1 and 3 (weight 2) on a line: mean 7/4, scatter
        // 49/16 + 9/16 + 2 * 25/16 = 108/16.
        let mut m = Moments::zeros(1, 1);
        m.add_point(0, 1, &[0.0], true);
        m.add_point(0, 1, &[1.0], true);
        m.add_point(0, 2, &[3.0], true);
        m.add_point(0, 5, &[-9.0], true);
        m.add_point(0, 5, &[-9.0], false);
        let mut c = [0.0];
        m.centroid_into(0, &mut c);
        assert_eq!(c[0].to_bits(), 1.75f64.to_bits());
        assert_eq!(m.phi().to_bits(), 6.75f64.to_bits());
        assert_eq!(m.weight(0), 4);
        // Pooled variance per axis: 6.75 / 4.
        assert_eq!(
            m.pooled_mean_variance().to_bits(),
            (6.75f64 / 4.0).to_bits()
        );
    }
}
