//! The parameters of a wide-key sketch.

use core::fmt;

use field::FiniteField;
use num_bigint::BigUint;

use super::key::MAX_WIDE_KEY_LEN;
use crate::error::{ParamsError, SketchError, SketchResult, invalid};
use crate::params::{
    CountPolicy, DEFAULT_EXTRA, DEFAULT_MAX_SYNDROMES, SketchParams, ValidSketchParams,
};
use crate::sketch::{LinearParams, RawParams};
use crate::wire::{Frame, FrameKind, field_bytes};
use masked_sum::RoundContext;

/// Parameters of a wide-key sketch: capacity `t`, `r` extra check
/// syndromes, the longest key `L` in bytes, the count policy, and the
/// public 32-byte hash key of the session.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::LinearParams;
/// use syndrome_agg::wide::WideKeyParams;
///
/// let p = WideKeyParams::new(10, 64, [0; 32]).validate(Mersenne61)?;
/// assert_eq!(p.chunk_bytes(), 7);
/// assert_eq!(p.channels(), 10); // ceil((2 + 64) / 7)
/// assert_eq!(p.num_elements(), 21 + 10 * 10);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct WideKeyParams {
    capacity: usize,
    extra: usize,
    max_key_len: usize,
    counts: CountPolicy,
    hash_key: [u8; 32],
}

impl fmt::Debug for WideKeyParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WideKeyParams")
            .field("capacity", &self.capacity)
            .field("extra", &self.extra)
            .field("max_key_len", &self.max_key_len)
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl WideKeyParams {
    /// Capacity `t`, keys of at most `max_key_len` bytes, hash key of the
    /// session (public; it separates the hashes of different sessions).
    pub fn new(capacity: usize, max_key_len: usize, hash_key: [u8; 32]) -> Self {
        Self {
            capacity,
            extra: DEFAULT_EXTRA,
            max_key_len,
            counts: CountPolicy::FieldElements,
            hash_key,
        }
    }

    /// Sets `r`.
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

    /// Checks the parameters against `field`.
    ///
    /// # Errors
    ///
    /// [`ParamsError::InvalidParams`] for a key cap above
    /// [`MAX_WIDE_KEY_LEN`], a field under 9 bits, or the conditions of
    /// [`SketchParams::validate`](crate::SketchParams::validate) (with key domain `[1, p-1]`).
    pub fn validate<F: FiniteField>(self, field: F) -> SketchResult<ValidWideKeyParams<F>> {
        if self.max_key_len > MAX_WIDE_KEY_LEN {
            return Err(invalid(format!(
                "wide keys of {} bytes exceed the cap of {MAX_WIDE_KEY_LEN}",
                self.max_key_len
            )));
        }
        let bits = field.modulus_bits();
        if bits < 9 {
            return Err(invalid("wide keys need a field of at least 9 bits"));
        }
        let chunk_bytes = usize::try_from((bits - 1) / 8).unwrap_or(usize::MAX);
        let channels = (2 + self.max_key_len).div_ceil(chunk_bytes);
        let domain = field.characteristic() - 1u32;
        let sketch = SketchParams::new(self.capacity, domain)
            .with_extra(self.extra)
            .with_counts(self.counts.clone());
        let total = channels
            .checked_mul(self.capacity)
            .and_then(|v| v.checked_add(sketch.num_syndromes()))
            .ok_or_else(|| invalid("wide-key sketch size overflows"))?;
        let sketch = sketch.validate(field)?;
        if total > DEFAULT_MAX_SYNDROMES {
            return Err(invalid(format!(
                "wide-key sketch of {total} elements exceeds {}",
                DEFAULT_MAX_SYNDROMES
            )));
        }
        Ok(ValidWideKeyParams {
            sketch,
            max_key_len: self.max_key_len,
            hash_key: self.hash_key,
            chunk_bytes,
            channels,
        })
    }
}

/// [`WideKeyParams`] checked against a field.
#[derive(Clone, PartialEq)]
pub struct ValidWideKeyParams<F> {
    pub(super) sketch: ValidSketchParams<F>,
    pub(super) max_key_len: usize,
    pub(super) hash_key: [u8; 32],
    pub(super) chunk_bytes: usize,
    pub(super) channels: usize,
}

impl<F: FiniteField> fmt::Debug for ValidWideKeyParams<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ValidWideKeyParams")
            .field("sketch", &self.sketch)
            .field("max_key_len", &self.max_key_len)
            .field("chunk_bytes", &self.chunk_bytes)
            .field("channels", &self.channels)
            .finish_non_exhaustive()
    }
}

impl<F: FiniteField> ValidWideKeyParams<F> {
    /// The locator sketch's parameters (key domain `[1, p-1]`).
    pub fn sketch_params(&self) -> &ValidSketchParams<F> {
        &self.sketch
    }
    /// The field.
    pub fn field(&self) -> &F {
        self.sketch.field()
    }
    /// Bytes per payload chunk, `floor((bits(p) - 1) / 8)`.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }
    /// Payload channels `c = ceil((2 + L) / b)`.
    pub fn channels(&self) -> usize {
        self.channels
    }
    /// The longest key in bytes.
    pub fn max_key_len(&self) -> usize {
        self.max_key_len
    }
}

impl<F: FiniteField> LinearParams for ValidWideKeyParams<F> {
    type Elem = F::Elem;
    type Domain = F;

    fn mask_domain(&self) -> F {
        self.field().clone()
    }

    fn num_elements(&self) -> usize {
        self.sketch.num_syndromes() + self.channels * self.sketch.capacity()
    }

    fn check_same(&self, other: &Self) -> SketchResult<()> {
        if self != other {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "wide-key parameters",
            }));
        }
        Ok(())
    }
}

impl<F: FiniteField> RawParams for ValidWideKeyParams<F> {
    /// Kind [`FrameKind::WideKey`], masked or not; its `key_domain` field
    /// holds the key-length cap `L`.
    fn frame(
        &self,
        _masked: bool,
        elements: &[F::Elem],
        client_id: u64,
        ctx: &RoundContext,
    ) -> Frame {
        let f = self.field();
        Frame::build(
            FrameKind::WideKey,
            &f.characteristic(),
            self.sketch.capacity(),
            self.sketch.extra(),
            &BigUint::from(u64::try_from(self.max_key_len).unwrap_or(u64::MAX)),
            self.channels,
            client_id,
            ctx,
            field_bytes(f, elements),
        )
    }

    fn parse_frame(&self, _masked: bool, frame: &Frame) -> SketchResult<Vec<F::Elem>> {
        frame.expect_kind(FrameKind::WideKey)?;
        let f = self.field();
        frame.expect_shape(
            &f.characteristic(),
            self.sketch.capacity(),
            self.sketch.extra(),
            &BigUint::from(u64::try_from(self.max_key_len).unwrap_or(u64::MAX)),
            self.channels,
        )?;
        frame.field_elements(f, self.num_elements())
    }
}
