//! Sketch parameters, and their validation against a field (STYLE B2:
//! params -> valid params).

use field::FiniteField;
use field::primes::{FieldChoice, cheapest_field};
use num_bigint::{BigInt, BigUint};
use num_traits::{One, Signed, Zero};
use serde::{Deserialize, Serialize};

use crate::error::{DecodeError, ParamsError, SketchError, SketchResult, invalid};

/// The default number of extra check syndromes `r` beyond `2t`.
///
/// One check syndrome makes every sum with exactly `t + 1` non-zeros a
/// certain error and any other over-capacity garbage an error except with
/// probability about `1/p` (docs/threat-model.md §3). The paper's
/// Algorithm 2 is `r = 0`: set it with [`SketchParams::with_extra`].
pub const DEFAULT_EXTRA: usize = 1;

/// The default cap on `2t + r`, the number of syndromes (a bound on the
/// memory and work that parameters read from outside can ask for).
pub const DEFAULT_MAX_SYNDROMES: usize = 1 << 20;

/// What the counts of a sketch may be, and so what a decoded count is
/// checked against.
///
/// Counts are field elements. Unsigned counts (histograms) are stored as
/// themselves; signed values (sparse gradients) in the centered
/// representation, `-v` as `p - v`. The field must be large enough that the
/// aggregate never wraps: `p > max_total` for unsigned counts,
/// `p > 2 * max_abs` for signed ones.
///
/// # Example
///
/// ```
/// use syndrome_agg::CountPolicy;
///
/// let histogram = CountPolicy::unsigned(10_000u32);
/// let gradient = CountPolicy::signed(1u64 << 40);
/// assert_ne!(histogram, gradient);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum CountPolicy {
    /// Any nonzero field element (no range check beyond "not zero").
    FieldElements,
    /// Non-negative integers whose total over all keys of the aggregate is
    /// at most `max_total`.
    Unsigned {
        /// The largest total count of an aggregate.
        max_total: BigUint,
    },
    /// Signed integers of absolute value at most `max_abs` in the
    /// aggregate.
    Signed {
        /// The largest absolute value of an aggregated count.
        max_abs: BigUint,
    },
}

impl CountPolicy {
    /// Unsigned counts whose aggregate total is at most `max_total`.
    pub fn unsigned(max_total: impl Into<BigUint>) -> Self {
        Self::Unsigned {
            max_total: max_total.into(),
        }
    }

    /// Signed counts of absolute value at most `max_abs` in the aggregate.
    pub fn signed(max_abs: impl Into<BigUint>) -> Self {
        Self::Signed {
            max_abs: max_abs.into(),
        }
    }

    /// The largest integer the field must hold (`p > bound`).
    pub fn field_bound(&self) -> BigUint {
        match self {
            Self::FieldElements => BigUint::one(),
            Self::Unsigned { max_total } => max_total.clone(),
            Self::Signed { max_abs } => max_abs << 1u32,
        }
    }
}

/// The public parameters of a sketch: capacity `t`, key domain `[1, N]`,
/// `r` extra check syndromes and the count policy; a sketch has `2t + r`
/// syndromes.
///
/// Validate them against a field with [`validate`](Self::validate), or let
/// [`cheapest_field`](Self::cheapest_field) pick the cheapest field that
/// holds them.
///
/// # Example
///
/// ```
/// use field::{FiniteField, Mersenne61};
/// use syndrome_agg::{CountPolicy, SketchParams};
///
/// // Histograms over 10^6 diagnosis codes, at most 30 distinct codes in the
/// // sum of all clients, at most 10^9 patients in total.
/// let params = SketchParams::new(30, 1_000_000u32)
///     .with_counts(CountPolicy::unsigned(1_000_000_000u64));
/// assert_eq!(params.num_syndromes(), 61); // 2t + r with r = 1
/// let valid = params.validate(Mersenne61)?;
/// assert_eq!(valid.field().modulus_bits(), 61);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SketchParams {
    capacity: usize,
    key_domain: BigUint,
    extra: usize,
    counts: CountPolicy,
    max_syndromes: usize,
}

impl SketchParams {
    /// Capacity `t` (at most `t` nonzero keys in a decodable aggregate) over
    /// the key domain `[1, key_domain]`, with [`DEFAULT_EXTRA`] check
    /// syndromes and [`CountPolicy::FieldElements`].
    pub fn new(capacity: usize, key_domain: impl Into<BigUint>) -> Self {
        Self {
            capacity,
            key_domain: key_domain.into(),
            extra: DEFAULT_EXTRA,
            counts: CountPolicy::FieldElements,
            max_syndromes: DEFAULT_MAX_SYNDROMES,
        }
    }

    /// Sets `r`, the number of check syndromes beyond `2t` (`0` is the
    /// paper's Algorithm 2).
    #[must_use]
    pub fn with_extra(mut self, extra: usize) -> Self {
        self.extra = extra;
        self
    }

    /// Sets the count policy.
    #[must_use]
    pub fn with_counts(mut self, counts: CountPolicy) -> Self {
        self.counts = counts;
        self
    }

    /// Sets the cap on `2t + r` that [`validate`](Self::validate) enforces.
    #[must_use]
    pub fn with_max_syndromes(mut self, max: usize) -> Self {
        self.max_syndromes = max;
        self
    }

    /// The capacity `t`.
    pub fn capacity(&self) -> usize {
        self.capacity
    }
    /// The key domain `N`: keys are `1..=N`.
    pub fn key_domain(&self) -> &BigUint {
        &self.key_domain
    }
    /// The number `r` of extra check syndromes.
    pub fn extra(&self) -> usize {
        self.extra
    }
    /// The count policy.
    pub fn counts(&self) -> &CountPolicy {
        &self.counts
    }
    /// `2t + r` (saturating; [`validate`](Self::validate) rejects overflow).
    pub fn num_syndromes(&self) -> usize {
        self.capacity.saturating_mul(2).saturating_add(self.extra)
    }

    /// The largest integer the field must hold: `max(N, count bound)`.
    pub fn field_bound(&self) -> BigUint {
        self.key_domain.clone().max(self.counts.field_bound())
    }

    /// The cheapest field that holds these parameters (`GF(27 * 2^59 + 1)`,
    /// `GF(2^127 - 1)` or the smallest prime above the bound), via
    /// [`field::primes::cheapest_field`]. Deterministic, so every client and
    /// the server agree on it from the public parameters.
    ///
    /// # Example
    ///
    /// ```
    /// use field::primes::FieldChoice;
    /// use num_bigint::BigUint;
    /// use syndrome_agg::SketchParams;
    ///
    /// let small = SketchParams::new(8, 1u32 << 20);
    /// assert!(matches!(small.cheapest_field(), FieldChoice::Proth(_)));
    /// let wide = SketchParams::new(8, BigUint::from(1u8) << 300u32);
    /// assert_eq!(wide.cheapest_field().characteristic().bits(), 301);
    /// ```
    pub fn cheapest_field(&self) -> FieldChoice {
        cheapest_field(&self.field_bound())
    }

    fn check_shape(&self) -> SketchResult<()> {
        let m = syndrome_count(self.capacity, &self.key_domain, self.extra)?;
        if m > self.max_syndromes {
            return Err(invalid(format!(
                "2t + r = {m} exceeds the configured maximum {}",
                self.max_syndromes
            )));
        }
        Ok(())
    }

    /// Checks the parameters against `field`.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidParams`] for `t = 0`, `N = 0` or
    /// `2t + r` above the configured maximum;
    /// [`ParamsError::FieldTooSmall`] unless `p > N` (keys `1..=N` must be
    /// distinct nonzero elements) and `p` exceeds the count bound
    /// (`max_total` for unsigned counts, `2 * max_abs` for signed ones).
    pub fn validate<F: FiniteField>(self, field: F) -> SketchResult<ValidSketchParams<F>> {
        self.check_shape()?;
        let bound = self.field_bound();
        if !field.holds(&bound) {
            return Err(SketchError::Params(ParamsError::FieldTooSmall {
                modulus_bits: field.modulus_bits(),
                needed_bits: bound.bits(),
            }));
        }
        Ok(ValidSketchParams {
            field,
            params: self,
        })
    }
}

/// [`SketchParams`] checked against a field: the field holds the key domain
/// and the count bound. Sketches are built only from these.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use syndrome_agg::{CountPolicy, SketchParams};
///
/// let p = SketchParams::new(4, 100u32)
///     .with_counts(CountPolicy::signed(1000u32))
///     .validate(Mersenne61)?;
/// let minus_five = p.signed_count(-5)?;
/// assert_eq!(minus_five, Mersenne61.from_i64(-5));
/// assert!(p.signed_count(-1001).is_err());
/// assert!(p.key(0u32).is_err()); // key 0 is refused
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct ValidSketchParams<F> {
    field: F,
    params: SketchParams,
}

impl<F: FiniteField> ValidSketchParams<F> {
    /// The field.
    pub fn field(&self) -> &F {
        &self.field
    }
    /// The unchecked parameters these were validated from.
    pub fn params(&self) -> &SketchParams {
        &self.params
    }
    /// The capacity `t`.
    pub fn capacity(&self) -> usize {
        self.params.capacity
    }
    /// The key domain `N`.
    pub fn key_domain(&self) -> &BigUint {
        &self.params.key_domain
    }
    /// The number `r` of extra check syndromes.
    pub fn extra(&self) -> usize {
        self.params.extra
    }
    /// The count policy.
    pub fn counts(&self) -> &CountPolicy {
        &self.params.counts
    }
    /// `2t + r`, the length of a sketch.
    pub fn num_syndromes(&self) -> usize {
        self.params.num_syndromes()
    }

    /// The field element of `key`.
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`] unless `1 <= key <= N`.
    pub fn key(&self, key: impl Into<BigUint>) -> SketchResult<F::Elem> {
        self.key_ref(&key.into())
    }

    pub(crate) fn key_ref(&self, key: &BigUint) -> SketchResult<F::Elem> {
        if key.is_zero() || *key > self.params.key_domain {
            return Err(SketchError::Params(ParamsError::KeyOutOfDomain {
                key: key.to_string(),
                domain: self.params.key_domain.to_string(),
            }));
        }
        Ok(self.field.from_biguint(key))
    }

    /// `(key, count)` pairs of unsigned counts as field elements, for a
    /// batch insert (`from_unsigned` of the field and partitioned sketches).
    ///
    /// # Errors
    ///
    /// As [`unsigned_count`](Self::unsigned_count), for the first count
    /// that fails.
    pub(crate) fn unsigned_entries<K, I>(&self, entries: I) -> SketchResult<Vec<(BigUint, F::Elem)>>
    where
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, u64)>,
    {
        entries
            .into_iter()
            .map(|(k, c)| Ok((k.into(), self.unsigned_count(c)?)))
            .collect()
    }

    /// `(key, count)` pairs of signed counts as field elements, as
    /// [`unsigned_entries`](Self::unsigned_entries).
    ///
    /// # Errors
    ///
    /// As [`signed_count`](Self::signed_count).
    pub(crate) fn signed_entries<K, I>(&self, entries: I) -> SketchResult<Vec<(BigUint, F::Elem)>>
    where
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, i64)>,
    {
        entries
            .into_iter()
            .map(|(k, c)| Ok((k.into(), self.signed_count(BigInt::from(c))?)))
            .collect()
    }

    /// The field element of an unsigned count.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidCount`] if the policy is signed, or if the
    /// count alone exceeds the unsigned policy's `max_total`.
    pub fn unsigned_count(&self, count: impl Into<BigUint>) -> SketchResult<F::Elem> {
        let count = count.into();
        match &self.params.counts {
            CountPolicy::Signed { .. } => Err(SketchError::Params(ParamsError::InvalidCount {
                count: count.to_string(),
                reason: "the policy is signed: use signed_count",
            })),
            CountPolicy::Unsigned { max_total } if count > *max_total => {
                Err(SketchError::Params(ParamsError::InvalidCount {
                    count: count.to_string(),
                    reason: "exceeds the unsigned policy's max_total",
                }))
            }
            _ => Ok(self.field.from_biguint(&count)),
        }
    }

    /// The field element of a signed count, in the centered representation
    /// (`-v` is `p - v`).
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidCount`] if the policy is unsigned and `count`
    /// is negative or above `max_total`, or if `|count|` exceeds the signed
    /// policy's `max_abs`.
    pub fn signed_count(&self, count: impl Into<BigInt>) -> SketchResult<F::Elem> {
        let count = count.into();
        match &self.params.counts {
            CountPolicy::Signed { max_abs } if count.magnitude() > max_abs => {
                Err(SketchError::Params(ParamsError::InvalidCount {
                    count: count.to_string(),
                    reason: "absolute value exceeds the signed policy's max_abs",
                }))
            }
            CountPolicy::Unsigned { .. } => match count.to_biguint() {
                Some(c) => self.unsigned_count(c),
                None => Err(SketchError::Params(ParamsError::InvalidCount {
                    count: count.to_string(),
                    reason: "negative count under an unsigned policy",
                })),
            },
            _ => Ok(self.field.from_bigint(&count)),
        }
    }

    /// Checks a decoded count against the policy (nonzero, in range);
    /// `total` accumulates the unsigned total across keys.
    pub(crate) fn check_decoded_count(
        &self,
        key: &BigUint,
        count: &F::Elem,
        total: &mut BigUint,
    ) -> SketchResult<()> {
        let refuse = |count: String, reason| {
            SketchError::Decode(DecodeError::CountOutOfRange {
                key: key.to_string(),
                count,
                reason,
            })
        };
        if self.field.is_zero(count) {
            return Err(refuse("0".into(), "a located key has count zero"));
        }
        match &self.params.counts {
            CountPolicy::FieldElements => Ok(()),
            CountPolicy::Unsigned { max_total } => {
                let v = self.field.to_biguint(count);
                *total += &v;
                if *total > *max_total {
                    return Err(refuse(
                        v.to_string(),
                        "total count exceeds the policy's max_total",
                    ));
                }
                Ok(())
            }
            CountPolicy::Signed { max_abs } => {
                let v = self.field.to_centered(count);
                if v.abs().magnitude() > max_abs {
                    return Err(refuse(
                        v.to_string(),
                        "absolute value exceeds the policy's max_abs",
                    ));
                }
                Ok(())
            }
        }
    }
}

/// `2t + r` for capacity `t` over the key domain `[1, N]`, after the checks
/// every sketch shares: `t >= 1`, `N >= 1`, no overflow.
pub(crate) fn syndrome_count(
    capacity: usize,
    key_domain: &BigUint,
    extra: usize,
) -> SketchResult<usize> {
    if capacity == 0 {
        return Err(invalid("capacity t must be at least 1"));
    }
    if key_domain.is_zero() {
        return Err(invalid("key domain [1, N] must be non-empty (N >= 1)"));
    }
    capacity
        .checked_mul(2)
        .and_then(|v| v.checked_add(extra))
        .ok_or_else(|| invalid("2t + r overflows"))
}
