//! The wire format: versioned postcard frames for sketches and masked
//! messages, parsed defensively.
//!
//! A [`Frame`] names everything a receiver needs to refuse a message that
//! does not belong to its round: the format version, the kind of sketch,
//! the field's identity (its modulus), the capacity `t`, `r`, the key domain
//! `N`, the payload channels of wide keys, the client id, the session and
//! the round. The syndromes travel as one byte string of fixed-width
//! canonical little-endian encodings.
//!
//! Reading bytes from outside ([`Frame::parse`]) caps the frame size before
//! decoding anything, rejects trailing bytes, and the conversions into
//! sketches check every length and every encoding's canonicity; every
//! failure is a typed error, never a panic (docs/threat-model.md M3, M6, O1, O2).

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use field::FiniteField;
use num_bigint::BigUint;
use serde::{Deserialize, Serialize};

pub(crate) use masked_sum::wire::field_bytes;
use masked_sum::{RoundContext, SessionId};

use crate::error::{DecodeError, ParamsError, SketchError, SketchResult, WireError};

/// The wire format version this build writes and reads (the one of
/// `masked-sum`'s protocol messages).
pub use masked_sum::wire::WIRE_VERSION;

/// The default cap on a frame's size, 4 MiB (tonic's default message
/// limit). Sketches over big fields with large capacities need more: pass a
/// larger cap to [`Frame::parse`].
pub const DEFAULT_MAX_FRAME: usize = 4 << 20;

/// What a frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum FrameKind {
    /// An unmasked [`Sketch`](crate::Sketch) (for tests, or a trusted
    /// aggregator).
    Sketch,
    /// A client's [`MaskedSketch`](crate::MaskedSketch) of a
    /// [`Sketch`](crate::Sketch).
    Masked,
    /// An [`IntegerSketch`](crate::IntegerSketch) of Appendix K (masked or
    /// not).
    Integer,
    /// A wide-key sketch (see [`crate::wide`]).
    WideKey,
    /// A partitioned sketch (see [`crate::partitioned`]), masked or not;
    /// its `channels` field holds the number of buckets.
    Partitioned,
}

/// One message on the wire.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
/// use syndrome_agg::masking::MaskVector;
/// use syndrome_agg::wire::{DEFAULT_MAX_FRAME, Frame};
/// use syndrome_agg::{LinearSketch, MaskedSketch, Sketch, SketchParams};
///
/// let params = SketchParams::new(2, 100u32).validate(Mersenne61)?;
/// let ctx = RoundContext { session: SessionId([5; 32]), round: 1 };
/// let zero_mask = MaskVector(vec![0; params.num_syndromes()]);
/// let msg = Sketch::from_unsigned(&params, [(3u32, 1u64)])?.mask(&zero_mask, 9, ctx)?;
/// let bytes = msg.to_frame().to_bytes()?;
/// let back: MaskedSketch<Sketch<_>> = MaskedSketch::from_frame(&Frame::parse(&bytes, DEFAULT_MAX_FRAME)?, &params)?;
/// assert_eq!(back, msg);
/// // A truncated frame is an error, not a panic.
/// assert!(Frame::parse(&bytes[..bytes.len() - 1], DEFAULT_MAX_FRAME).is_err());
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Frame {
    /// [`WIRE_VERSION`].
    pub version: u16,
    /// What the frame carries.
    pub kind: FrameKind,
    /// The field's modulus `p` (or `p' = 2^k` for integer sketches), little
    /// endian, no trailing zero bytes.
    #[serde(with = "serde_bytes")]
    pub modulus: Vec<u8>,
    /// The capacity `t`.
    pub capacity: u64,
    /// The number `r` of extra check syndromes.
    pub extra: u64,
    /// The key domain `N`, little endian, no trailing zero bytes.
    #[serde(with = "serde_bytes")]
    pub key_domain: Vec<u8>,
    /// Payload channels of a wide-key sketch, 0 otherwise.
    pub channels: u64,
    /// The sender.
    pub client_id: u64,
    /// The session.
    pub session: [u8; 32],
    /// The round.
    pub round: u64,
    /// The elements, each in its fixed-width canonical little-endian
    /// encoding, concatenated.
    #[serde(with = "serde_bytes")]
    pub elements: Vec<u8>,
}

fn malformed(reason: impl Into<String>) -> SketchError {
    SketchError::Wire(WireError::Malformed {
        reason: reason.into(),
    })
}

pub(crate) fn u64_of(v: usize) -> u64 {
    u64::try_from(v).unwrap_or(u64::MAX)
}

impl Frame {
    /// Serializes with postcard.
    ///
    /// # Errors
    ///
    /// [`WireError::Malformed`] if postcard fails (it does not for these
    /// types).
    pub fn to_bytes(&self) -> SketchResult<Vec<u8>> {
        postcard::to_allocvec(self).map_err(|e| malformed(e.to_string()))
    }

    /// Parses bytes from outside.
    ///
    /// # Errors
    ///
    /// [`WireError::FrameTooLarge`] above `max_len` bytes (checked
    /// first), [`WireError::Malformed`] for bytes that are not exactly
    /// one frame, [`WireError::UnsupportedVersion`] for another version.
    pub fn parse(bytes: &[u8], max_len: usize) -> SketchResult<Self> {
        if bytes.len() > max_len {
            return Err(SketchError::Wire(WireError::FrameTooLarge {
                len: bytes.len(),
                max: max_len,
            }));
        }
        let (frame, rest): (Self, &[u8]) =
            postcard::take_from_bytes(bytes).map_err(|e| malformed(e.to_string()))?;
        if !rest.is_empty() {
            return Err(malformed(format!("{} trailing bytes", rest.len())));
        }
        if frame.version != WIRE_VERSION {
            return Err(SketchError::Wire(WireError::UnsupportedVersion {
                found: frame.version,
                supported: WIRE_VERSION,
            }));
        }
        Ok(frame)
    }

    /// The round context the frame names.
    pub fn context(&self) -> RoundContext {
        RoundContext {
            session: SessionId(self.session),
            round: self.round,
        }
    }

    pub(crate) fn expect_kind(&self, kind: FrameKind) -> SketchResult<()> {
        if self.kind != kind {
            return Err(malformed(format!(
                "expected a {kind:?} frame, found {:?}",
                self.kind
            )));
        }
        Ok(())
    }

    /// Checks modulus, capacity, `r`, key domain and channels against the
    /// receiver's parameters.
    pub(crate) fn expect_shape(
        &self,
        modulus: &BigUint,
        capacity: usize,
        extra: usize,
        key_domain: &BigUint,
        channels: usize,
    ) -> SketchResult<()> {
        if self.modulus != modulus.to_bytes_le() {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "field modulus",
            }));
        }
        if self.capacity != u64_of(capacity) {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "capacity",
            }));
        }
        if self.extra != u64_of(extra) {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "extra syndromes",
            }));
        }
        if self.key_domain != key_domain.to_bytes_le() {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "key domain",
            }));
        }
        if self.channels != u64_of(channels) {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "payload channels",
            }));
        }
        Ok(())
    }

    /// Splits `elements` into `count` canonical field elements.
    pub(crate) fn field_elements<F: FiniteField>(
        &self,
        f: &F,
        count: usize,
    ) -> SketchResult<Vec<F::Elem>> {
        let w = f.byte_len();
        let expected = count.saturating_mul(w);
        if self.elements.len() != expected || w == 0 {
            return Err(SketchError::Decode(DecodeError::WrongLength {
                expected,
                found: self.elements.len(),
            }));
        }
        // Filled in place: collecting the fallible map would grow the
        // vector element by element (a server parses every client's frame
        // of every round).
        let mut out = Vec::with_capacity(count);
        for c in self.elements.chunks_exact(w) {
            out.push(
                f.from_bytes(c)
                    .map_err(|_| SketchError::Decode(DecodeError::NonCanonical))?,
            );
        }
        Ok(out)
    }

    #[allow(clippy::too_many_arguments)] // one frame has this many fields
    pub(crate) fn build(
        kind: FrameKind,
        modulus: &BigUint,
        capacity: usize,
        extra: usize,
        key_domain: &BigUint,
        channels: usize,
        client_id: u64,
        ctx: &RoundContext,
        elements: Vec<u8>,
    ) -> Self {
        Self {
            version: WIRE_VERSION,
            kind,
            modulus: modulus.to_bytes_le(),
            capacity: u64_of(capacity),
            extra: u64_of(extra),
            key_domain: key_domain.to_bytes_le(),
            channels: u64_of(channels),
            client_id,
            session: ctx.session.0,
            round: ctx.round,
            elements,
        }
    }
}
