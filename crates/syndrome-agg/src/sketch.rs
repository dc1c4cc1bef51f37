//! One interface for every sketch: [`LinearSketch`], implemented by the
//! field sketch of Algorithm 2 ([`Sketch`](crate::Sketch)), the wide-key
//! sketch ([`WideSketch`](crate::wide::WideSketch)), the integer sketch of
//! Appendix K ([`IntegerSketch`](crate::IntegerSketch)) and the sketch
//! chosen at run time ([`AnySketch`](crate::AnySketch)).
//!
//! [`MaskedSketch`] is what a client sends. Generic code (masking, the
//! [`Aggregator`](crate::Aggregator), the wire frames, the test suites) is
//! written once against the trait, as minisketch writes its algorithms
//! once against an abstract sketch.

pub(crate) mod any;
pub(crate) mod field;
pub(crate) mod integer;

// Public as `crate::partitioned`.
pub mod partitioned;
pub(crate) mod wide;

use std::borrow::Cow;
use std::fmt;

use crate::error::SketchResult;
use crate::sparse::SparseVector;
use crate::wire::Frame;
use masked_sum::RoundContext;
use masked_sum::masking::pairwise::{MaskKeyPair, MaskPublicKey, pairwise_mask};
use masked_sum::masking::{MaskDomain, MaskVector};

/// Validated parameters of a [`LinearSketch`]: everything a client and the
/// server must agree on before a round, and what masking, aggregation and
/// the wire format need from them.
///
/// Implemented by [`ValidSketchParams`](crate::ValidSketchParams),
/// [`ValidWideKeyParams`](crate::wide::ValidWideKeyParams) and
/// [`ValidIntegerParams`](crate::ValidIntegerParams).
pub trait LinearParams: Clone + fmt::Debug + PartialEq + Send + Sync {
    /// One element of a sketch (a syndrome, or a payload syndrome).
    type Elem: Clone + PartialEq + fmt::Debug + Send + Sync + 'static;
    /// Where masks of these sketches live (the field, or `Z / 2^k`).
    type Domain: MaskDomain<Elem = Self::Elem>;

    /// The mask domain (a cheap clone of a field or ring context).
    fn mask_domain(&self) -> Self::Domain;

    /// The number of elements of a sketch (`2t + r`, plus the payload
    /// channels of wide keys).
    fn num_elements(&self) -> usize;

    /// `Ok` if `other` describes the same sketches (minisketch's merge
    /// rule).
    ///
    /// # Errors
    ///
    /// [`ParamsError::ParamsMismatch`](crate::ParamsError::ParamsMismatch)
    /// naming what differs.
    fn check_same(&self, other: &Self) -> SketchResult<()>;
}

/// A linear sketch of a sparse vector: the sketch of a sum is the sum of
/// the sketches, so a server that adds the clients' (masked) sketches holds
/// the sketch of the aggregate and decodes it.
///
/// Every sketch type of this crate has the same verbs: build
/// ([`new`](Self::new), [`insert`](Self::insert), [`encode`](Self::encode)),
/// combine ([`add`](Self::add), [`subtract`](Self::subtract)),
/// [`decode`](Self::decode), frames, and masks ([`mask`](Self::mask),
/// [`mask_pairwise`](Self::mask_pairwise)). The elements themselves are
/// opaque: no operation a consumer needs reads them, and
/// [`AnySketch`](crate::AnySketch) runs every operation on its concrete
/// sketch's own elements (the raw elements are a protocol internal, public
/// with the `hazmat` feature as `hazmat::RawSketch`).
///
/// # Example
///
/// The same generic function sums and decodes field and integer sketches:
///
/// ```
/// use field::Mersenne61;
/// use num_bigint::BigUint;
/// use syndrome_agg::{IntegerParams, IntegerSketch, LinearSketch, Sketch, SketchParams};
///
/// fn sum_and_decode<S: LinearSketch>(a: &S, b: &S) -> syndrome_agg::SketchResult<Vec<S::Key>> {
///     let mut sum = a.clone();
///     sum.add(b)?;
///     Ok(sum.decode()?.into_entries().into_iter().map(|(k, _)| k).collect())
/// }
///
/// let fp = SketchParams::new(2, 100u32).validate(Mersenne61)?;
/// let a = Sketch::from_unsigned(&fp, [(3u32, 1u64)])?;
/// let b = Sketch::from_unsigned(&fp, [(90u32, 2u64)])?;
/// assert_eq!(sum_and_decode(&a, &b)?, vec![BigUint::from(3u8), BigUint::from(90u8)]);
///
/// let ip = IntegerParams::new(2, 100u32, 10u32).validate()?;
/// let a = IntegerSketch::from_unsigned(&ip, [(3u32, 1u64)])?;
/// let b = IntegerSketch::from_unsigned(&ip, [(90u32, 2u64)])?;
/// assert_eq!(sum_and_decode(&a, &b)?, vec![BigUint::from(3u8), BigUint::from(90u8)]);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
pub trait LinearSketch: Clone + fmt::Debug + PartialEq + Send + Sync + Sized {
    /// The validated parameters.
    type Params: LinearParams<Elem = Self::Elem>;
    /// A key of the sparse vector.
    type Key: Clone + Ord + fmt::Debug;
    /// A count of the sparse vector.
    type Count: Clone + PartialEq + fmt::Debug;
    /// One element of the sketch.
    type Elem: Clone + PartialEq + fmt::Debug + Send + Sync + 'static;

    /// The sketch of the zero vector.
    fn new(params: &Self::Params) -> Self;

    /// The parameters.
    fn params(&self) -> &Self::Params;

    /// Adds `count` at `key`.
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`](crate::ParamsError::KeyOutOfDomain),
    /// [`ParamsError::KeyTooLong`](crate::ParamsError::KeyTooLong) or
    /// [`ParamsError::InvalidCount`](crate::ParamsError::InvalidCount) for
    /// a key or count the parameters do not allow.
    fn insert(&mut self, key: &Self::Key, count: &Self::Count) -> SketchResult<()>;

    /// `self += other`: the sketch of the sum of the two vectors.
    ///
    /// # Errors
    ///
    /// [`ParamsError::ParamsMismatch`](crate::ParamsError::ParamsMismatch)
    /// if the parameters differ.
    fn add(&mut self, other: &Self) -> SketchResult<()>;

    /// `self -= other`: the sketch of the difference of the two vectors.
    ///
    /// # Errors
    ///
    /// [`ParamsError::ParamsMismatch`](crate::ParamsError::ParamsMismatch)
    /// if the parameters differ.
    fn subtract(&mut self, other: &Self) -> SketchResult<()>;

    /// Decodes the sparse vector, or returns a typed error: never a wrong
    /// vector (the decoder contract, see the `decode` module docs).
    ///
    /// # Errors
    ///
    /// The decoder errors of [`SketchError`](crate::SketchError).
    fn decode(&self) -> SketchResult<SparseVector<Self::Key, Self::Count>>;

    /// The sketch of `(key, count)` entries (repeated keys add up).
    ///
    /// # Errors
    ///
    /// As [`insert`](Self::insert).
    fn encode<I>(params: &Self::Params, entries: I) -> SketchResult<Self>
    where
        I: IntoIterator<Item = (Self::Key, Self::Count)>,
    {
        let mut s = Self::new(params);
        for (k, c) in entries {
            s.insert(&k, &c)?;
        }
        Ok(s)
    }

    /// Whether every element is zero (the sketch of the zero vector, as far
    /// as the decoder can tell).
    fn is_zero(&self) -> bool;

    /// The unmasked sketch as a frame.
    fn to_frame(&self, client_id: u64, ctx: &RoundContext) -> Frame;

    /// The unmasked sketch a frame carries.
    ///
    /// # Errors
    ///
    /// [`WireError::Malformed`](crate::WireError::Malformed) for another
    /// frame kind, [`ParamsError::ParamsMismatch`](crate::ParamsError::ParamsMismatch)
    /// for other parameters, [`DecodeError::WrongLength`](crate::DecodeError::WrongLength)
    /// and [`DecodeError::NonCanonical`](crate::DecodeError::NonCanonical) for bad
    /// elements.
    fn from_frame(frame: &Frame, params: &Self::Params) -> SketchResult<Self>;

    /// Adds `mask` to the elements: the message of client `client_id` in
    /// `context` (Algorithm 2 of the paper, line 2).
    ///
    /// # Errors
    ///
    /// [`DecodeError::WrongLength`](crate::DecodeError::WrongLength) unless
    /// the mask has as many elements as the sketch;
    /// [`DecodeError::NonCanonical`](crate::DecodeError::NonCanonical) for
    /// a mask element outside the mask domain.
    fn mask(
        &self,
        mask: &MaskVector<Self::Elem>,
        client_id: u64,
        context: RoundContext,
    ) -> SketchResult<MaskedSketch<Self>>;

    /// Masks the sketch with client `own_id`'s pairwise masks against
    /// `peers` (see [`masked_sum::masking::pairwise`]).
    ///
    /// # Errors
    ///
    /// As [`pairwise_mask`].
    fn mask_pairwise(
        &self,
        keys: &MaskKeyPair,
        own_id: u64,
        peers: &[(u64, MaskPublicKey)],
        context: RoundContext,
    ) -> SketchResult<MaskedSketch<Self>> {
        let p = self.params();
        let mask = pairwise_mask(
            &p.mask_domain(),
            p.num_elements(),
            keys,
            own_id,
            peers,
            &context,
        )?;
        self.mask(&mask, own_id, context)
    }
}

/// The wire form of a sketch's raw elements under these parameters: a
/// protocol internal, public as `hazmat::RawParams` with the `hazmat`
/// feature, sealed without it. Every parameter type of this crate
/// implements it; [`LinearParams`] works without it.
pub trait RawParams: LinearParams {
    /// The frame of `elements` (of a masked message if `masked`) from
    /// `client_id` in `ctx`.
    fn frame(
        &self,
        masked: bool,
        elements: &[Self::Elem],
        client_id: u64,
        ctx: &RoundContext,
    ) -> Frame;

    /// The elements a frame carries, after checking its kind (masked or
    /// not) and shape against these parameters.
    ///
    /// # Errors
    ///
    /// [`WireError::Malformed`](crate::WireError::Malformed) for
    /// another frame kind,
    /// [`ParamsError::ParamsMismatch`](crate::ParamsError::ParamsMismatch)
    /// for other parameters,
    /// [`DecodeError::WrongLength`](crate::DecodeError::WrongLength) and
    /// [`DecodeError::NonCanonical`](crate::DecodeError::NonCanonical) for
    /// bad elements.
    fn parse_frame(&self, masked: bool, frame: &Frame) -> SketchResult<Vec<Self::Elem>>;
}

/// Raw access to a sketch's elements: a protocol internal, public as
/// `hazmat::RawSketch` with the `hazmat` feature (for tests, fuzzing and
/// independent implementations), sealed without it. Every sketch of this
/// crate implements it; [`LinearSketch`] works without it.
pub trait RawSketch: LinearSketch<Params: RawParams> {
    /// The elements, in wire order: borrowed from a concrete sketch, the
    /// canonical representatives computed for an
    /// [`AnySketch`](crate::AnySketch).
    fn elements(&self) -> Cow<'_, [Self::Elem]>;

    /// The elements, consumed.
    fn into_elements(self) -> Vec<Self::Elem>;

    /// A sketch from its elements.
    ///
    /// # Errors
    ///
    /// [`DecodeError::WrongLength`](crate::DecodeError::WrongLength) unless
    /// there are [`LinearParams::num_elements`];
    /// [`DecodeError::NonCanonical`](crate::DecodeError::NonCanonical) for
    /// an element outside the mask domain.
    fn from_elements(params: &Self::Params, elements: Vec<Self::Elem>) -> SketchResult<Self>;

    /// The frame of the elements, of a masked message if `masked`.
    fn frame_as(&self, masked: bool, client_id: u64, ctx: &RoundContext) -> Frame {
        self.params()
            .frame(masked, &self.elements(), client_id, ctx)
    }

    /// The sketch a frame of the given kind carries.
    ///
    /// # Errors
    ///
    /// As [`RawParams::parse_frame`] and [`from_elements`](Self::from_elements).
    fn parse_as(params: &Self::Params, masked: bool, frame: &Frame) -> SketchResult<Self> {
        Self::from_elements(params, params.parse_frame(masked, frame)?)
    }

    /// Adds `mask` element by element in the mask domain.
    ///
    /// # Errors
    ///
    /// [`DecodeError::WrongLength`](crate::DecodeError::WrongLength) unless
    /// the mask has as many elements as the sketch.
    fn add_mask(&mut self, mask: &MaskVector<Self::Elem>) -> SketchResult<()> {
        let own = self.elements();
        crate::error::check_len(own.len(), mask.0.len())?;
        let d = self.params().mask_domain();
        let elements = own
            .iter()
            .zip(&mask.0)
            .map(|(s, z)| d.mask_add(s, z))
            .collect();
        *self = Self::from_elements(self.params(), elements)?;
        Ok(())
    }
}

/// The [`LinearSketch`] methods that every concrete sketch writes the same
/// way through its [`RawSketch`] elements.
macro_rules! linear_via_raw {
    () => {
        fn to_frame(&self, client_id: u64, ctx: &masked_sum::RoundContext) -> crate::wire::Frame {
            crate::sketch::RawSketch::frame_as(self, false, client_id, ctx)
        }

        fn from_frame(
            frame: &crate::wire::Frame,
            params: &Self::Params,
        ) -> crate::error::SketchResult<Self> {
            crate::sketch::RawSketch::parse_as(params, false, frame)
        }

        fn mask(
            &self,
            mask: &masked_sum::masking::MaskVector<Self::Elem>,
            client_id: u64,
            context: masked_sum::RoundContext,
        ) -> crate::error::SketchResult<crate::sketch::MaskedSketch<Self>> {
            let mut masked = self.clone();
            crate::sketch::RawSketch::add_mask(&mut masked, mask)?;
            Ok(crate::sketch::MaskedSketch::new(masked, client_id, context))
        }
    };
}
pub(crate) use linear_via_raw;

/// A client's sketch plus its mask, `S_i + z_i`, with the sender's id and
/// the round it belongs to (Algorithm 2, line 2), for any [`LinearSketch`]
/// `S` (made by [`LinearSketch::mask`] and
/// [`LinearSketch::mask_pairwise`]). Alone it is uniformly
/// distributed whatever the sketch (the mask is uniform); only the sum over
/// all clients of a round reveals anything. Its elements are as opaque as
/// the sketch's: it is held as the masked sketch itself, so that a server
/// that sums an [`AnySketch`](crate::AnySketch)'s messages adds the
/// concrete field's elements.
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::masking::deal_zero_sum_masks;
/// use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
/// use syndrome_agg::{Aggregator, LinearSketch, Sketch, SketchParams};
///
/// let params = SketchParams::new(2, 100u32).validate(Mersenne61)?;
/// let ctx = RoundContext { session: SessionId([0; 32]), round: 0 };
/// let masks = deal_zero_sum_masks(params.field(), 2, params.num_syndromes(), &mut rand::rng());
/// let a = Sketch::from_unsigned(&params, [(3u32, 1u64)])?.mask(&masks[0], 1, ctx)?;
/// let b = Sketch::from_unsigned(&params, [(3u32, 2u64)])?.mask(&masks[1], 2, ctx)?;
/// let mut server = Aggregator::new(&params, ctx, 2);
/// server.accept(&a)?;
/// server.accept(&b)?;
/// assert_eq!(server.decode()?.to_unsigned(params.field()), vec![(3u32.into(), 3u32.into())]);
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MaskedSketch<S: LinearSketch> {
    masked: S,
    client_id: u64,
    context: RoundContext,
}

impl<S: LinearSketch> MaskedSketch<S> {
    /// The message of `masked` (a sketch with its mask added).
    pub(crate) fn new(masked: S, client_id: u64, context: RoundContext) -> Self {
        Self {
            masked,
            client_id,
            context,
        }
    }

    /// The masked sketch (for the server's sum).
    pub(crate) fn masked(&self) -> &S {
        &self.masked
    }

    /// The masked sketch, consumed.
    pub(crate) fn into_masked(self) -> S {
        self.masked
    }

    /// The sender.
    pub fn client_id(&self) -> u64 {
        self.client_id
    }
    /// The session and round.
    pub fn context(&self) -> &RoundContext {
        &self.context
    }
    /// The parameters.
    pub fn params(&self) -> &S::Params {
        self.masked.params()
    }
}

impl<S: RawSketch> MaskedSketch<S> {
    hazmat! {
        /// A masked sketch from its parts (as received).
        ///
        /// # Errors
        ///
        /// As [`RawSketch::from_elements`] (the length, and the canonical
        /// range of the elements).
        pub fn from_parts(
            params: &S::Params,
            client_id: u64,
            context: RoundContext,
            elements: Vec<S::Elem>,
        ) -> SketchResult<Self> {
            Ok(Self::new(S::from_elements(params, elements)?, client_id, context))
        }
    }

    hazmat! {
        /// The masked elements.
        pub fn elements(&self) -> Cow<'_, [S::Elem]> {
            self.masked.elements()
        }
    }

    /// The message as a frame.
    pub fn to_frame(&self) -> Frame {
        self.masked.frame_as(true, self.client_id, &self.context)
    }

    /// The message a frame carries, checked against the receiver's
    /// parameters.
    ///
    /// # Errors
    ///
    /// [`WireError::Malformed`](crate::WireError::Malformed) for another
    /// frame kind, [`ParamsError::ParamsMismatch`](crate::ParamsError::ParamsMismatch)
    /// for other parameters, [`DecodeError::WrongLength`](crate::DecodeError::WrongLength)
    /// and [`DecodeError::NonCanonical`](crate::DecodeError::NonCanonical) for bad
    /// elements.
    pub fn from_frame(frame: &Frame, params: &S::Params) -> SketchResult<Self> {
        let masked = S::parse_as(params, true, frame)?;
        Ok(Self::new(masked, frame.client_id, frame.context()))
    }

    /// [`Frame::parse`] then [`from_frame`](Self::from_frame).
    ///
    /// # Errors
    ///
    /// As those two.
    pub fn from_bytes(bytes: &[u8], params: &S::Params, max_len: usize) -> SketchResult<Self> {
        Self::from_frame(&Frame::parse(bytes, max_len)?, params)
    }
}
