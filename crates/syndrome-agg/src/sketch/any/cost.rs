//! The cost model behind the default scheme: a predicted decode time for
//! every exact scheme, from decode times measured on this project's
//! reference machine, and the choice of the fastest
//! ([`fastest_scheme`]).
//!
//! # The model
//!
//! Each table below holds the median decode time, in seconds, of a full
//! aggregate of `t` distinct keys, measured by
//! `cargo run --release -p syndrome-agg --example scheme_costs` on the
//! reference machine (2 cores; 2026-11-24, docs/benchmarks.md, "The cost
//! model of the default scheme"). Between two capacities of a table the
//! time is interpolated linearly in `log t` and `log seconds` (a power
//! law between neighbours); beyond the ends the nearest segment's power
//! law is extended.
//!
//! - Field keys in the one-word field `GF(27 * 2^59 + 1)`: [`WORD`].
//! - Field keys in `GF(2^127 - 1)`: [`M127`]. In a bigger prime of `w`
//!   64-bit words: [`BIG348`] (a 348-bit prime, 6 words) times
//!   `(w / 6)^2`, as its multiplication is schoolbook.
//! - Wide keys with `c` payload channels: `WORD(t) + c * CHANNEL(t)`, where
//!   [`CHANNEL`] is half of what two channels added to `WORD` in the
//!   measurement (the channels' solves and checks).
//! - A partitioned sketch of `G` buckets of capacity `t_b`: `G *
//!   WORD(t_b) / min(G, 2)` (its buckets decode on both cores; within 15%
//!   of the measured partitioned decode at `t = 3000 .. 10^5`, a test
//!   checks it).
//!
//! The choice must be the same for every party that derives it from the
//! public parameters, so the model is a fixed function of them: it does not
//! look at the local machine. Its absolute times are the reference
//! machine's; what it decides on is their ratios, which were measured
//! side by side in one run.

use field::FiniteField;
use num_bigint::BigUint;

use super::params::{AnyParams, MAX_FIELD_KEY_BITS, ParamsInner, Scheme, ValidAnyParams};
use crate::error::SketchResult;
use crate::params::SketchParams;
use crate::sketch::LinearParams;
use crate::sketch::partitioned::{
    DEFAULT_OVERFLOW_EXPONENT, bucket_capacity as partition_capacity, default_buckets,
};

/// Measured: field keys in `GF(27 * 2^59 + 1)`, `(t, seconds)`.
pub const WORD: [(f64, f64); 8] = [
    (30.0, 0.000_151),
    (100.0, 0.000_587),
    (300.0, 0.003_071),
    (1000.0, 0.014_891),
    (3000.0, 0.054_746),
    (10_000.0, 0.194_734),
    (30_000.0, 0.631_371),
    (100_000.0, 2.263_131),
];

/// Measured: the time one payload channel adds to [`WORD`] (half of what
/// two added), `(t, seconds)`.
pub const CHANNEL: [(f64, f64); 5] = [
    (30.0, 0.000_016),
    (100.0, 0.000_117),
    (300.0, 0.000_261),
    (1000.0, 0.002_084),
    (3000.0, 0.005_664),
];

/// Measured: field keys in `GF(2^127 - 1)`, `(t, seconds)`.
pub const M127: [(f64, f64); 4] = [
    (30.0, 0.004_287),
    (100.0, 0.037_373),
    (300.0, 0.220_278),
    (1000.0, 1.035_355),
];

/// Measured: field keys in a 348-bit prime (6 words), `(t, seconds)`.
pub const BIG348: [(f64, f64); 2] = [(30.0, 0.206_993), (100.0, 1.006_844)];

/// The cores the reference machine shares partitioned buckets among.
const REFERENCE_CORES: f64 = 2.0;

/// Predictions within this factor of the fastest are ties, broken by
/// fewer bytes: the spread of repeated measurements on the shared
/// reference machine.
pub const TIE: f64 = 1.10;

/// A power law through the two neighbouring points of `table` (or the
/// nearest segment's, beyond its ends).
fn interpolate(table: &[(f64, f64)], t: f64) -> f64 {
    let t = t.max(1.0);
    let i = table
        .iter()
        .position(|&(x, _)| x >= t)
        .unwrap_or(table.len())
        .clamp(1, table.len().saturating_sub(1).max(1));
    match (table.get(i.saturating_sub(1)), table.get(i)) {
        (Some(&(x0, y0)), Some(&(x1, y1))) => {
            let slope = (y1 / y0).ln() / (x1 / x0).ln();
            y0 * (t / x0).powf(slope)
        }
        (Some(&(_, y)), None) | (None, Some(&(_, y))) => y,
        (None, None) => 0.0,
    }
}

/// 64-bit words of a modulus of `bits` bits.
fn words(bits: u64) -> f64 {
    bits.div_ceil(64) as f64
}

/// Field keys with capacity `t` in a field of `words` 64-bit words.
fn field_keys_seconds(t: f64, words: f64) -> f64 {
    if words <= 1.0 {
        interpolate(&WORD, t)
    } else if words <= 2.0 {
        interpolate(&M127, t)
    } else {
        interpolate(&BIG348, t) * (words / 6.0).powi(2)
    }
}

/// Bits of the modulus `cheapest_field` picks for `bound` (at most: the
/// prime above a large bound is not searched for).
fn cheapest_modulus_bits(bound: &BigUint) -> u64 {
    field::primes::cheapest_field_kind(bound).modulus_bits_at_most(bound)
}

fn partitioned_seconds(buckets: usize, bucket_capacity: usize) -> f64 {
    let g = buckets.max(1) as f64;
    g * interpolate(&WORD, bucket_capacity as f64) / g.min(REFERENCE_CORES)
}

impl ValidAnyParams {
    /// The model's decode time, in seconds on the reference machine, for a
    /// full aggregate of these parameters (see [`cost`](crate::cost));
    /// `None` for the integer scheme, which the model does not cover.
    ///
    /// # Example
    ///
    /// ```
    /// use num_bigint::BigUint;
    /// use syndrome_agg::{AnyParams, Scheme, SketchParams};
    ///
    /// let sketch = SketchParams::new(1000, BigUint::from(1u8) << 74u32);
    /// let wide = AnyParams::new(Scheme::WideKeys { hash_key: [1; 32] }, sketch.clone()).validate()?;
    /// let field = AnyParams::new(Scheme::FieldKeys, sketch).validate()?;
    /// // GF(2^127 - 1) against two payload channels in the one-word field.
    /// let (w, f) = (wide.predicted_decode_seconds().unwrap(), field.predicted_decode_seconds().unwrap());
    /// assert!(30.0 * w < f);
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    pub fn predicted_decode_seconds(&self) -> Option<f64> {
        let t = self.sketch_params().capacity() as f64;
        Some(match &self.inner {
            ParamsInner::Word(_) => interpolate(&WORD, t),
            ParamsInner::F127(_) => interpolate(&M127, t),
            ParamsInner::Big(p) => field_keys_seconds(t, words(p.field().modulus_bits())),
            ParamsInner::Wide(p) => {
                interpolate(&WORD, t) + p.channels() as f64 * interpolate(&CHANNEL, t)
            }
            ParamsInner::Partitioned(p) => partitioned_seconds(p.buckets(), p.bucket_capacity()),
            ParamsInner::Integer(_) => return None,
        })
    }

    /// Bytes of the elements one client sends: the element count times
    /// the modulus' bytes.
    pub fn element_bytes(&self) -> u64 {
        (self.num_elements() as u64).saturating_mul(self.modulus_bits().div_ceil(8))
    }
}

/// What the model predicts for one scheme ([`scheme_estimates`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SchemeEstimate {
    /// The scheme.
    pub scheme: Scheme,
    /// Predicted decode seconds on the reference machine.
    pub decode_seconds: f64,
    /// Bytes of one client's elements.
    pub bytes: u64,
}

/// The model's estimate for field keys, wide keys and a partitioned
/// sketch (where the bound fits its one-word field) of `sketch`, whose
/// field must also hold `field_bound`; wide and partitioned sketches hash
/// under `hash_key`. Field keys beyond [`MAX_FIELD_KEY_BITS`] are left
/// out, and field keys are not validated (that would search for a prime):
/// their estimate comes from the bound's size.
///
/// # Errors
///
/// As [`AnyParams::validate`] for wide keys (every sketch has them).
pub fn scheme_estimates(
    sketch: &SketchParams,
    field_bound: &BigUint,
    hash_key: [u8; 32],
) -> SketchResult<Vec<SchemeEstimate>> {
    let t = sketch.capacity();
    let bound = sketch.field_bound().max(field_bound.clone());
    let mut out = Vec::with_capacity(3);
    if bound.bits() <= MAX_FIELD_KEY_BITS {
        let bits = cheapest_modulus_bits(&bound);
        let m = (2 * t + sketch.extra()) as u64;
        out.push(SchemeEstimate {
            scheme: Scheme::FieldKeys,
            decode_seconds: field_keys_seconds(t as f64, words(bits)),
            bytes: m.saturating_mul(bits.div_ceil(8)),
        });
    }
    let mut validated = |scheme: Scheme| -> SketchResult<()> {
        let p = AnyParams::new(scheme.clone(), sketch.clone())
            .with_field_bound(bound.clone())
            .validate()?;
        if let Some(decode_seconds) = p.predicted_decode_seconds() {
            out.push(SchemeEstimate {
                scheme,
                decode_seconds,
                bytes: p.element_bytes(),
            });
        }
        Ok(())
    };
    validated(Scheme::WideKeys { hash_key })?;
    if super::params::fits_word_field(&bound) {
        validated(Scheme::Partitioned { hash_key })?;
    }
    Ok(out)
}

/// The fastest exact scheme for `sketch` (its field also holding
/// `field_bound`) by the cost model: the least predicted decode time among
/// [`scheme_estimates`], predictions within [`TIE`] of it counting as
/// ties, broken by fewer bytes (then by the order field keys, wide keys,
/// partitioned). A deterministic function of its arguments, so every party
/// derives the same scheme.
///
/// # Errors
///
/// As [`scheme_estimates`].
///
/// # Example
///
/// ```
/// use num_bigint::BigUint;
/// use syndrome_agg::{Scheme, SketchParams, fastest_scheme};
///
/// let key = [7; 32];
/// // Keys and counts in one word: field keys.
/// let small = SketchParams::new(1000, 1u64 << 40);
/// assert_eq!(fastest_scheme(&small, &BigUint::from(0u8), key)?, Scheme::FieldKeys);
/// // Beyond 2000 keys the buckets of a partitioned sketch decode faster.
/// let many = SketchParams::new(10_000, 1u64 << 40);
/// assert_eq!(fastest_scheme(&many, &BigUint::from(0u8), key)?, Scheme::Partitioned { hash_key: key });
/// // Keys of 74 bits: wide keys in the one-word field, not GF(2^127 - 1).
/// let wide = SketchParams::new(1000, BigUint::from(1u8) << 74u32);
/// assert_eq!(fastest_scheme(&wide, &BigUint::from(0u8), key)?, Scheme::WideKeys { hash_key: key });
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
pub fn fastest_scheme(
    sketch: &SketchParams,
    field_bound: &BigUint,
    hash_key: [u8; 32],
) -> SketchResult<Scheme> {
    let estimates = scheme_estimates(sketch, field_bound, hash_key)?;
    let best = estimates
        .iter()
        .map(|e| e.decode_seconds)
        .fold(f64::INFINITY, f64::min);
    let mut ties: Vec<&SchemeEstimate> = estimates
        .iter()
        .filter(|e| e.decode_seconds <= best * TIE)
        .collect();
    // A stable sort keeps the listed order among equal byte counts.
    ties.sort_by_key(|e| e.bytes);
    Ok(ties
        .first()
        .map_or(Scheme::WideKeys { hash_key }, |e| e.scheme.clone()))
}

/// The default bucket count and capacity of a partitioned sketch of
/// capacity `t`, as [`Scheme::Partitioned`] validates them.
pub fn default_partition(t: usize) -> (usize, usize) {
    let g = default_buckets(t);
    (g, partition_capacity(t, g, DEFAULT_OVERFLOW_EXPONENT))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolation_passes_through_the_measured_points_and_extends_the_ends() {
        for (t, s) in WORD {
            assert!((interpolate(&WORD, t) / s - 1.0).abs() < 1e-12);
        }
        // Monotone between and beyond the points.
        let mut last = 0.0;
        for t in [1.0, 10.0, 50.0, 500.0, 5000.0, 50_000.0, 1e6] {
            let s = interpolate(&WORD, t);
            assert!(s > last, "t = {t}");
            last = s;
        }
    }

    /// The scheme the measurements found fastest is the model's choice:
    /// the grid of `scheme_costs` (keys below 2^40: field keys until
    /// buckets split, then partitioned; keys of 80 bits: wide keys against
    /// GF(2^127 - 1)) and the data sets `benches/peers/real_data.py` ran
    /// `mufc` on (docs/benchmarks.md: t, log2 of the bound, fastest).
    #[test]
    fn the_model_picks_the_measured_fastest_scheme() {
        let key = [1; 32];
        let pick = |t: usize, bits: u32| {
            let sketch = SketchParams::new(t, BigUint::from(1u8) << bits);
            fastest_scheme(&sketch, &BigUint::from(0u8), key).unwrap()
        };
        for t in [30, 100, 300, 1000] {
            // One bucket: the same decode, so the tie goes to field keys.
            assert_eq!(pick(t, 40), Scheme::FieldKeys, "t = {t}");
        }
        for t in [3000, 10_000, 30_000, 100_000] {
            assert_eq!(
                pick(t, 40),
                Scheme::Partitioned { hash_key: key },
                "t = {t}"
            );
        }
        for t in [30, 100, 300, 1000, 3000] {
            assert_eq!(pick(t, 80), Scheme::WideKeys { hash_key: key }, "t = {t}");
        }
        // built-in Gaussian (t = 1000, B^d ~ 2^74), iris (30, 2^15),
        // wine (30, 2^49), breast_cancer (20, 2^138), digits (100, 2^347).
        let wide = Scheme::WideKeys { hash_key: key };
        for (t, bits, fastest) in [
            (1000, 74, wide.clone()),
            (30, 15, Scheme::FieldKeys),
            (30, 49, Scheme::FieldKeys),
            (20, 138, wide.clone()),
            (100, 347, wide),
        ] {
            assert_eq!(pick(t, bits), fastest, "t = {t}, 2^{bits}");
        }
    }

    #[test]
    fn the_model_agrees_with_the_measured_partitioned_decodes() {
        // Measured with the default buckets (scheme_costs, same run as
        // the tables): t, seconds.
        for (t, measured) in [(3000, 0.026_952), (10_000, 0.095_332), (100_000, 0.883_677)] {
            let (g, tb) = default_partition(t);
            let model = partitioned_seconds(g, tb);
            assert!(
                (model / measured - 1.0).abs() < 0.15,
                "t = {t}: model {model}, measured {measured}"
            );
        }
    }
}
