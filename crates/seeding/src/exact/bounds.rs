//! Certified bounds on Euclidean distances from floating-point squared
//! distances, for the skip test of the incremental Lloyd replay.
//!
//! # The error model
//!
//! Let `u = 2^-53`. A cost `f = SqEuclidean.cost(x, c)` is a sum of `d`
//! rounded squares of rounded differences, added in four lanes and then
//! pairwise; each term passes through at most `d + 5` roundings, all terms
//! are non-negative, so `|f - D^2| <= gamma_{d+5} D^2` where `D = |x - c|`
//! (the real distance between the `f64` values) and
//! `gamma_m = m u / (1 - m u)`. No term underflows: model coordinates are
//! multiples of 2^-32 below 2^16 and centroids are 0 or at least 2^-97 in
//! magnitude, so a non-zero difference is at least 2^-149 and its square
//! far above the subnormals; nothing overflows (squares below `d 2^34`).
//! We take `rho = 1.01 (d + 8) u >= gamma_{d+5}` and `e = rho + 8u`.
//!
//! # The certificate
//!
//! The float argmin over the new centroids `C'` is certainly `a` (whatever
//! the tie-breaking) when `f'_a < f'_j` for every `j != a`, which holds
//! when `(1 + rho) D'_a^2 < (1 - rho) D'_j^2`, i.e. `D'_j > kappa D'_a`
//! with `kappa = sqrt((1 + rho) / (1 - rho)) <= 1 + 2 rho`. We use the
//! constant [`Bounds::kappa`] `= 1 + 4e >= kappa` and define the margin
//! `M = min_{j != a} D_j - kappa D_a` against the old centroids `C`. With
//! the shifts `delta_j = |C'_j - C_j|`, the triangle inequality gives
//! `D'_j - kappa D'_a >= M - delta_j - kappa delta_a`, so `a` stays the
//! float argmin when `M > max_{j != a} delta_j + kappa delta_a`.
//!
//! Every quantity computed here is rounded in the safe direction with room
//! to spare: lower bounds on `M`, upper bounds on the shifts.

/// `2^-53`, the unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;

/// The constants of the error model for one dimension.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Bounds {
    /// A factor with `fl(sqrt(f) * down) <= D`.
    down: f64,
    /// A factor with `fl(sqrt(f) * up) >= D`.
    up: f64,
    /// The constant `kappa` of the margin.
    kappa: f64,
    /// A factor with `fl(sqrt(f) * kappa_up) >= kappa D`.
    kappa_up: f64,
}

impl Bounds {
    /// The bounds for dimension `dim` (at most [`super::fixed::MAX_DIM`]).
    pub(crate) fn new(dim: usize) -> Self {
        let rho = 1.01 * (dim as f64 + 8.0) * U;
        let e = rho + 8.0 * U;
        // D >= sqrt(f) (1 - u) / sqrt(1 + rho) >= sqrt(f) (1 - e), and the
        // product rounds up by at most u: 1 - 2e leaves room for both (and
        // for the rounding of these constants, below u each).
        Self {
            down: 1.0 - 2.0 * e,
            up: 1.0 + 2.0 * e,
            kappa: 1.0 + 4.0 * e,
            // kappa D <= (1 + 4e)(1 + e) sqrt(f) <= (1 + 5.1e) sqrt(f).
            kappa_up: 1.0 + 8.0 * e,
        }
    }

    /// The constant `kappa` of the margin.
    #[cfg(test)]
    pub(crate) fn kappa(&self) -> f64 {
        self.kappa
    }

    /// An upper bound on the distance whose float cost is `f`.
    #[inline]
    pub(crate) fn dist_up(&self, f: f64) -> f64 {
        f.sqrt() * self.up
    }

    /// A lower bound on `min_{j != a} D_j - kappa D_a + debt`, from the
    /// float costs `fa` (to the nearest centroid `a`) and `f2` (the least
    /// to any other centroid, `+inf` with one centroid), rounded down to
    /// an `f32`.
    #[inline]
    pub(crate) fn margin_plus(&self, fa: f64, f2: f64, debt: f64) -> f32 {
        if f2 == f64::INFINITY {
            return f32::INFINITY;
        }
        let a = f2.sqrt() * self.down;
        let b = fa.sqrt() * self.kappa_up;
        // The two operations below round by at most u of a + b + debt
        // each; the slack of 8u of it covers them and its own rounding.
        let slack = (a + b + debt) * (8.0 * U);
        f32_down(a - b + debt - slack)
    }

    /// An upper bound on `debt + max_other + kappa * delta_a` (all
    /// non-negative upper bounds themselves).
    #[inline]
    pub(crate) fn bar(&self, debt: f64, max_other: f64, delta_a: f64) -> f64 {
        // Three roundings of non-negative terms: below 3.01u relatively;
        // the factor and its own rounding add more than that.
        (debt + max_other + self.kappa * delta_a) * (1.0 + 8.0 * U)
    }
}

/// The largest `f32` not above `v` (`-inf` below the range, NaN stays).
#[inline]
pub(crate) fn f32_down(v: f64) -> f32 {
    // `as` rounds to nearest (and saturates to infinities).
    #[allow(clippy::cast_possible_truncation)]
    let g = v as f32;
    if f64::from(g) > v { g.next_down() } else { g }
}

/// The least `f32` not below `v` (`+inf` above the range, NaN stays).
#[inline]
pub(crate) fn f32_up(v: f64) -> f32 {
    // `as` rounds to nearest (and saturates to infinities).
    #[allow(clippy::cast_possible_truncation)]
    let g = v as f32;
    if f64::from(g) < v { g.next_up() } else { g }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Metric, SqEuclidean};

    #[test]
    fn rounding_to_f32_goes_the_safe_way() {
        for v in [
            0.1,
            -0.1,
            1.0,
            1e-40,
            -1e-40,
            3.4e38,
            1e39,
            -1e39,
            0.0,
            16_777_217.0,
        ] {
            let g = f32_down(v);
            assert!(f64::from(g) <= v, "{v} -> {g}");
            let h = f32_up(v);
            assert!(f64::from(h) >= v, "{v} -> {h}");
            if v.abs() < 3.0e38 {
                assert!(f64::from(g.next_up()) > v, "{v} -> {g} is not the largest");
                assert!(f64::from(h.next_down()) < v, "{v} -> {h} is not the least");
            }
        }
    }

    #[test]
    fn bounds_bracket_the_true_distance() {
        // Exact rationals are out of reach here, but distances whose
        // squares are exact (Pythagorean triples scaled by powers of two)
        // give the true value to compare with.
        let b = Bounds::new(2);
        for (x, y, d) in [(3.0, 4.0, 5.0), (0.375, 0.5, 0.625), (5.0, 12.0, 13.0)] {
            let f = SqEuclidean.cost(&[0.0, 0.0], &[x, y]);
            assert!(b.dist_up(f) >= d);
            assert!(f.sqrt() * b.down <= d);
        }
        // The margin of a point exactly between two centres is negative.
        let m = b.margin_plus(1.0, 1.0, 0.0);
        assert!(m < 0.0);
        // With a debt, the stored value is the margin plus the debt.
        let m = b.margin_plus(1.0, 4.0, 0.5);
        assert!(f64::from(m) <= 1.5 && f64::from(m) > 1.499_999);
        assert!(b.margin_plus(1.0, f64::INFINITY, 0.0).is_infinite());
        assert!(b.bar(0.5, 0.25, 0.125) >= 0.5 + 0.25 + 0.125 * b.kappa());
    }
}
