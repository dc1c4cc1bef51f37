//! The integer sketch of Appendix K of the paper: exact integer syndromes
//! under the power-of-two modulus of [`IntegerParams`](crate::IntegerParams).

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use std::borrow::Cow;

use core::fmt;
use num_bigint::BigUint;
use num_traits::Zero;

use super::{LinearParams, LinearSketch, RawParams, RawSketch};
use crate::error::{DecodeError, ParamsError, SketchError, SketchResult, check_len};
use crate::integer::big_mul;
use crate::integer::{IntegerRing, ValidIntegerParams};
use crate::sparse::SparseVector;
use crate::wire::{Frame, FrameKind};
use masked_sum::RoundContext;
use masked_sum::masking::MaskDomain;

/// The integer sketch of Appendix K: `S_i = sum_j q_j j^(i-1) mod 2^k`,
/// `i = 1..2t+r`, exact for honest aggregates (see
/// [`IntegerParams`](crate::IntegerParams)).
/// Linear like [`Sketch`](crate::Sketch), and masked with
/// [`IntegerRing`] masks.
///
/// # Example
///
/// ```
/// use syndrome_agg::masking::deal_zero_sum_masks;
/// use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
/// use syndrome_agg::{Aggregator, IntegerParams, IntegerSketch, LinearSketch};
///
/// let params = IntegerParams::new(2, 1000u32, 100u32).validate()?;
/// let ctx = RoundContext { session: SessionId([1; 32]), round: 0 };
/// let masks = deal_zero_sum_masks(params.ring(), 2, params.num_syndromes(), &mut rand::rng());
/// let mut server = Aggregator::new(&params, ctx, 2);
/// server.accept(&IntegerSketch::from_unsigned(&params, [(10u32, 3u64)])?.mask(&masks[0], 1, ctx)?)?;
/// server.accept(&IntegerSketch::from_unsigned(&params, [(900u32, 4u64)])?.mask(&masks[1], 2, ctx)?)?;
/// let decoded = server.decode()?;
/// assert_eq!(decoded.into_entries(), vec![(10u32.into(), 3u32.into()), (900u32.into(), 4u32.into())]);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct IntegerSketch {
    params: ValidIntegerParams,
    syndromes: Vec<BigUint>,
}

impl fmt::Debug for IntegerSketch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntegerSketch")
            .field("params", &self.params)
            .field("syndromes", &self.syndromes.len())
            .finish()
    }
}

impl IntegerSketch {
    /// The sketch of `(key, count)` entries with positive counts.
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`] for a key outside `[1, N]`,
    /// [`ParamsError::InvalidCount`] for a zero count or one above `T`.
    pub fn from_unsigned<K, I>(params: &ValidIntegerParams, entries: I) -> SketchResult<Self>
    where
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, u64)>,
    {
        let mut s = Self::new(params);
        for (k, c) in entries {
            s.insert(&k.into(), &BigUint::from(c))?;
        }
        Ok(s)
    }

    /// `self op= other (mod 2^k)`, element by element, after the merge
    /// rule.
    fn combine(
        &mut self,
        other: &Self,
        op: fn(&IntegerRing, &BigUint, &BigUint) -> BigUint,
    ) -> SketchResult<()> {
        self.params.check_same(&other.params)?;
        let ring = self.params.ring();
        for (a, b) in self.syndromes.iter_mut().zip(&other.syndromes) {
            *a = op(ring, a, b);
        }
        Ok(())
    }
}

impl LinearSketch for IntegerSketch {
    type Params = ValidIntegerParams;
    type Key = BigUint;
    type Count = BigUint;
    type Elem = BigUint;

    fn new(params: &ValidIntegerParams) -> Self {
        Self {
            params: params.clone(),
            syndromes: vec![BigUint::zero(); params.num_syndromes()],
        }
    }

    fn params(&self) -> &ValidIntegerParams {
        &self.params
    }

    /// Adds a count in `[1, T]` at a key in `[1, N]`.
    fn insert(&mut self, key: &BigUint, count: &BigUint) -> SketchResult<()> {
        let p = &self.params;
        if key.is_zero() || key > p.key_domain() {
            return Err(SketchError::Params(ParamsError::KeyOutOfDomain {
                key: key.to_string(),
                domain: p.key_domain().to_string(),
            }));
        }
        if count.is_zero() || count > p.max_total() {
            return Err(SketchError::Params(ParamsError::InvalidCount {
                count: count.to_string(),
                reason: "integer sketch counts are in [1, max_total]",
            }));
        }
        let ring = p.ring();
        let mut pw = count.clone();
        let n = self.syndromes.len();
        for (i, s) in self.syndromes.iter_mut().enumerate() {
            *s = ring.mask_add(s, &pw);
            if i.saturating_add(1) < n {
                pw = ring.reduce(&big_mul(&pw, key));
            }
        }
        Ok(())
    }

    fn add(&mut self, other: &Self) -> SketchResult<()> {
        self.combine(other, IntegerRing::mask_add)
    }

    /// `self -= other (mod 2^k)`: the ring allows it, and the difference
    /// decodes when it is itself a vector of positive counts (a client's
    /// update that only adds), else the decoder refuses it.
    fn subtract(&mut self, other: &Self) -> SketchResult<()> {
        self.combine(other, IntegerRing::mask_sub)
    }

    crate::sketch::linear_via_raw!();

    fn is_zero(&self) -> bool {
        self.syndromes.iter().all(Zero::is_zero)
    }

    /// The deterministic decoder of Appendix K of the paper: the summed
    /// syndromes are the exact integers `S_i` (see
    /// [`IntegerParams`](crate::IntegerParams) for why), so the server
    /// works over the rationals: Berlekamp-Massey for the locator, the
    /// integer root finder on `[1, N]` (bisection guided by the derivative,
    /// no randomness), the counts by the transposed Vandermonde solve over
    /// the rationals (they must be positive integers with total at most
    /// `T`), and the same re-encode check of all `2t + r` syndromes.
    ///
    /// Returns `(key, count)` sorted by key.
    ///
    /// # Errors
    ///
    /// As the field sketch's decoder ([`LinearSketch::decode`] of [`Sketch`](crate::Sketch)); [`DecodeError::CountOutOfRange`] also for a
    /// count that is not a positive integer.
    fn decode(&self) -> SketchResult<SparseVector<BigUint, BigUint>> {
        crate::decode::decode_integer(&self.params, &self.syndromes).map(SparseVector::from_sorted)
    }
}

impl RawSketch for IntegerSketch {
    fn elements(&self) -> Cow<'_, [BigUint]> {
        Cow::Borrowed(&self.syndromes)
    }

    fn into_elements(self) -> Vec<BigUint> {
        self.syndromes
    }

    /// Also [`DecodeError::NonCanonical`] for a value `>= 2^k`.
    fn from_elements(params: &ValidIntegerParams, syndromes: Vec<BigUint>) -> SketchResult<Self> {
        check_len(params.num_syndromes(), syndromes.len())?;
        if syndromes.iter().any(|s| s.bits() > params.ring().bits()) {
            return Err(SketchError::Decode(DecodeError::NonCanonical));
        }
        Ok(Self {
            params: params.clone(),
            syndromes,
        })
    }
}

impl LinearParams for ValidIntegerParams {
    type Elem = BigUint;
    type Domain = IntegerRing;

    fn mask_domain(&self) -> IntegerRing {
        self.ring().clone()
    }

    fn num_elements(&self) -> usize {
        self.num_syndromes()
    }

    fn check_same(&self, other: &Self) -> SketchResult<()> {
        if self != other {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "integer parameters",
            }));
        }
        Ok(())
    }
}

impl RawParams for ValidIntegerParams {
    /// Kind [`FrameKind::Integer`], masked or not; elements of
    /// `ceil(k / 8)` bytes.
    fn frame(
        &self,
        _masked: bool,
        elements: &[BigUint],
        client_id: u64,
        ctx: &RoundContext,
    ) -> Frame {
        let k = self.ring().bits();
        let w = usize::try_from(k.div_ceil(8)).unwrap_or(usize::MAX);
        let mut bytes = Vec::with_capacity(w.saturating_mul(elements.len()));
        for s in elements {
            let mut b = s.to_bytes_le();
            b.resize(w, 0);
            bytes.extend_from_slice(&b);
        }
        Frame::build(
            FrameKind::Integer,
            &self.ring().mask_modulus(),
            self.capacity(),
            self.extra(),
            self.key_domain(),
            0,
            client_id,
            ctx,
            bytes,
        )
    }

    fn parse_frame(&self, _masked: bool, frame: &Frame) -> SketchResult<Vec<BigUint>> {
        frame.expect_kind(FrameKind::Integer)?;
        let k = self.ring().bits();
        frame.expect_shape(
            &self.ring().mask_modulus(),
            self.capacity(),
            self.extra(),
            self.key_domain(),
            0,
        )?;
        let w = usize::try_from(k.div_ceil(8)).unwrap_or(usize::MAX);
        let expected = w.saturating_mul(self.num_syndromes());
        if frame.elements.len() != expected || w == 0 {
            return Err(SketchError::Decode(DecodeError::WrongLength {
                expected,
                found: frame.elements.len(),
            }));
        }
        Ok(frame
            .elements
            .chunks_exact(w)
            .map(BigUint::from_bytes_le)
            .collect())
    }
}
