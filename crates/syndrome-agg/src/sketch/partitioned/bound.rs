//! The overflow bound of a partitioned sketch and the per-bucket capacity
//! it chooses (the formulas are in the `partitioned` module docs).
//!
//! Every party must derive the same capacity from the same public
//! parameters, so the bound is evaluated with IEEE 754 basic operations
//! only (`+ - * /`, correctly rounded on every platform): the logarithm is
//! [`ln`] below, not the platform's `f64::ln`, whose last bit may differ
//! between math libraries.

/// The default number of keys per bucket, `t / G`: the default bucket
/// count is `G = ceil(t / DEFAULT_KEYS_PER_BUCKET)`. A bytes-first
/// choice: the sketch stays within 1.17 times the elements of one sketch
/// of capacity `t` (the Chernoff margin grows as buckets shrink), where
/// smaller buckets decode faster for more bytes (at `t = 10^4`: 5 buckets
/// decode in 98 ms for 1.15x the elements, 40 buckets in 51 ms for 1.47x;
/// docs/benchmarks.md, "The cost model of the default scheme").
pub const DEFAULT_KEYS_PER_BUCKET: usize = 2000;

/// The default overflow exponent `lambda`: some bucket of an aggregate of
/// `t` keys placed by a uniform hash overflows with probability at most
/// `2^-30`.
pub const DEFAULT_OVERFLOW_EXPONENT: u32 = 30;

/// The default bucket count for total capacity `t`:
/// `ceil(t / DEFAULT_KEYS_PER_BUCKET)`, at least 1.
///
/// # Example
///
/// ```
/// use syndrome_agg::partitioned::default_buckets;
///
/// assert_eq!(default_buckets(1000), 1);
/// assert_eq!(default_buckets(10_000), 5);
/// assert_eq!(default_buckets(1_000_000), 500);
/// ```
pub fn default_buckets(capacity: usize) -> usize {
    capacity.div_ceil(DEFAULT_KEYS_PER_BUCKET).max(1)
}

/// The per-bucket capacity `t_b`: the least value in `[1, t]` whose
/// Chernoff bound `G exp(-mu) (e mu / k)^k`, `mu = t / G`,
/// `k = t_b + 1`, on `P[some bucket overflows]` is at most `2^-lambda`
/// (see the `partitioned` module docs). Deterministic across platforms.
/// `t` and `buckets` below 1 count as 1.
///
/// # Example
///
/// ```
/// use syndrome_agg::partitioned::{bucket_capacity, overflow_log2};
///
/// let tb = bucket_capacity(1_000_000, 500, 30);
/// assert!(tb > 2000 && tb < 2400);
/// assert!(overflow_log2(1_000_000, 500, tb) <= -30.0);
/// assert!(overflow_log2(1_000_000, 500, tb - 1) > -30.0);
/// ```
pub fn bucket_capacity(capacity: usize, buckets: usize, lambda: u32) -> usize {
    least_capacity(capacity.max(1), buckets.max(1), lambda)
}

/// `log2` of the overflow bound for per-bucket capacity `t_b`: the
/// Chernoff bound on `log2 (G * P[Binomial(t, 1/G) > t_b])`, clipped at
/// `0` (probability 1) when `t_b + 1 <= t / G`, and `-inf` when
/// `t_b >= t`. `t` and `buckets` below 1 count as 1.
///
/// # Example
///
/// ```
/// use syndrome_agg::partitioned::overflow_log2;
///
/// assert_eq!(overflow_log2(100, 1, 100), f64::NEG_INFINITY);
/// assert_eq!(overflow_log2(100, 2, 40), 0.0);
/// assert!(overflow_log2(100, 2, 90) < -18.0); // 2^-18.5
/// ```
pub fn overflow_log2(capacity: usize, buckets: usize, bucket_capacity: usize) -> f64 {
    log2_bound(capacity.max(1), buckets.max(1), bucket_capacity)
}

/// `ln 2`, the nearest `f64`.
const LN_2: f64 = core::f64::consts::LN_2;

/// The natural logarithm of a finite `x > 0` by IEEE basic operations
/// only: `x = 2^e m` with `m` in `[sqrt(1/2), sqrt(2))`, then
/// `ln m = 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...)`, `s = (m-1)/(m+1)`,
/// `|s| < 0.172`, 24 terms (the next is below `2^-120`). Within a few
/// units in the last place of `f64::ln`. `NaN` for `x <= 0`, non-finite or
/// subnormal `x`.
pub(crate) fn ln(x: f64) -> f64 {
    if !(x.is_finite() && x.is_normal() && x > 0.0) {
        return f64::NAN;
    }
    let bits = x.to_bits();
    let biased = i64::try_from(bits.wrapping_shr(52) & 0x7ff).unwrap_or(0);
    let mut e = biased.wrapping_sub(1023);
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > core::f64::consts::SQRT_2 {
        m /= 2.0;
        e = e.wrapping_add(1);
    }
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let mut term = s;
    let mut acc = 0.0;
    let mut n = 1.0;
    for _ in 0..24 {
        acc += term / n;
        term *= s2;
        n += 2.0;
    }
    // |e| <= 1023: exact in f64.
    #[allow(clippy::cast_precision_loss)]
    let e = e as f64;
    2.0 * acc + e * LN_2
}

/// `usize` to `f64`, exact below `2^53` (every capacity and bucket count
/// that validation lets through).
#[allow(clippy::cast_precision_loss)]
fn float(v: usize) -> f64 {
    v as f64
}

/// `log2` of the overflow bound: `log2(G) + log2(exp(-mu) (e mu / k)^k)`
/// with `mu = t / G` and `k = t_b + 1`, the Chernoff bound on
/// `G * P[Binomial(t, 1/G) > t_b]`; `0.0` (the trivial bound 1 clipped)
/// when `k <= mu`, and `-inf` when `t_b >= t` (no bucket can hold more
/// than `t` keys).
///
/// `t` and `buckets` must be at least 1.
pub(crate) fn log2_bound(t: usize, buckets: usize, bucket_capacity: usize) -> f64 {
    if bucket_capacity >= t {
        return f64::NEG_INFINITY;
    }
    let g = float(buckets.max(1));
    let mu = float(t) / g;
    let k = float(bucket_capacity) + 1.0;
    if k <= mu {
        return 0.0;
    }
    // ln(exp(-mu) (e mu / k)^k) = k - mu + k ln(mu / k) = k - mu - k ln(k / mu).
    let nats = (k - mu) - k * ln(k / mu);
    (ln(g) + nats) / LN_2
}

/// The least `t_b` in `[1, t]` whose overflow bound ([`log2_bound`]) is
/// at most `-lambda`. The bound falls as `t_b` grows past `t / G`, so a
/// binary search finds it; `t_b = t` always qualifies.
pub(crate) fn least_capacity(t: usize, buckets: usize, lambda: u32) -> usize {
    let target = -f64::from(lambda);
    let ok = |tb: usize| log2_bound(t, buckets, tb) <= target;
    // Invariant: !ok(lo - 1) or lo == 1; ok(hi).
    let (mut lo, mut hi) = (1usize, t.max(1));
    while lo < hi {
        let mid = lo.saturating_add(hi.saturating_sub(lo) / 2);
        if ok(mid) {
            hi = mid;
        } else {
            lo = mid.saturating_add(1);
        }
    }
    hi
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ln_matches_the_platform_logarithm() {
        for &x in &[
            1.0,
            2.0,
            0.5,
            core::f64::consts::E,
            1e-300,
            1e300,
            core::f64::consts::SQRT_2,
            1.415,
            0.70,
            3.0,
            12345.678,
            2000.0,
            1.0 / 3.0,
        ] {
            let (a, b) = (ln(x), x.ln());
            assert!(
                (a - b).abs() <= 4.0 * f64::EPSILON * b.abs().max(1.0),
                "{x}: {a} vs {b}"
            );
        }
        assert!(ln(0.0).is_nan() && ln(-1.0).is_nan() && ln(f64::INFINITY).is_nan());
    }

    #[test]
    fn capacity_is_the_least_that_meets_the_bound() {
        for &(t, g, lambda) in &[
            (10_000, 5, 30),
            (100_000, 50, 30),
            (1_000_000, 500, 30),
            (7, 3, 20),
        ] {
            let tb = least_capacity(t, g, lambda);
            assert!(log2_bound(t, g, tb) <= -f64::from(lambda));
            assert!(tb == 1 || log2_bound(t, g, tb - 1) > -f64::from(lambda));
        }
        // One bucket holds everything: capacity t, bound -inf.
        assert_eq!(least_capacity(1234, 1, 30), 1234);
    }
}
