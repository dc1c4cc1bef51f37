//! One interface for every sketch: [`LinearSketch`], implemented by the
//! field sketch of Algorithm 2 ([`Sketch`]), the wide-key sketch
//! ([`WideSketch`](crate::wide::WideSketch)) and the integer sketch of
//! Appendix K ([`IntegerSketch`]), and the sparse vectors they decode to.
//!
//! Generic code (masking, the [`Aggregator`](crate::Aggregator), the wire
//! frames, the test suites) is written once against the trait, as
//! minisketch writes its algorithms once against an abstract sketch.

mod any;
mod field;
mod integer;
pub(crate) mod wide;

use std::collections::BTreeMap;
use std::fmt;

use ::field::{Field, FiniteField};
use num_bigint::{BigInt, BigUint};

pub use self::any::{AnyDomain, AnyParams, AnySketch, Scheme, ValidAnyParams};
pub use self::field::Sketch;
pub use self::integer::IntegerSketch;

use crate::masking::pairwise::{MaskKeyPair, MaskPublicKey, RoundContext, pairwise_mask};
use crate::masking::{MaskDomain, MaskVector};
use crate::wire::Frame;
use crate::{MaskedSketch, SketchResult};

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
    /// [`SketchError::ParamsMismatch`](crate::SketchError::ParamsMismatch)
    /// naming what differs.
    fn check_same(&self, other: &Self) -> SketchResult<()>;

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
    /// [`SketchError::Malformed`](crate::SketchError::Malformed) for
    /// another frame kind,
    /// [`SketchError::ParamsMismatch`](crate::SketchError::ParamsMismatch)
    /// for other parameters,
    /// [`SketchError::WrongLength`](crate::SketchError::WrongLength) and
    /// [`SketchError::NonCanonical`](crate::SketchError::NonCanonical) for
    /// bad elements.
    fn parse_frame(&self, masked: bool, frame: &Frame) -> SketchResult<Vec<Self::Elem>>;
}

/// A linear sketch of a sparse vector: the sketch of a sum is the sum of
/// the sketches, so a server that adds the clients' (masked) sketches holds
/// the sketch of the aggregate and decodes it.
///
/// Every sketch type of this crate has the same verbs: build
/// ([`new`](Self::new), [`insert`](Self::insert), [`encode`](Self::encode)),
/// combine ([`add`](Self::add), [`subtract`](Self::subtract)), read and
/// rebuild ([`elements`](Self::elements),
/// [`from_elements`](Self::from_elements)), [`decode`](Self::decode),
/// frames, and masks ([`mask`](Self::mask),
/// [`mask_pairwise`](Self::mask_pairwise)).
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
    /// [`SketchError::KeyOutOfDomain`](crate::SketchError::KeyOutOfDomain),
    /// [`SketchError::KeyTooLong`](crate::SketchError::KeyTooLong) or
    /// [`SketchError::InvalidCount`](crate::SketchError::InvalidCount) for
    /// a key or count the parameters do not allow.
    fn insert(&mut self, key: &Self::Key, count: &Self::Count) -> SketchResult<()>;

    /// `self += other`: the sketch of the sum of the two vectors.
    ///
    /// # Errors
    ///
    /// [`SketchError::ParamsMismatch`](crate::SketchError::ParamsMismatch)
    /// if the parameters differ.
    fn add(&mut self, other: &Self) -> SketchResult<()>;

    /// `self -= other`: the sketch of the difference of the two vectors.
    ///
    /// # Errors
    ///
    /// [`SketchError::ParamsMismatch`](crate::SketchError::ParamsMismatch)
    /// if the parameters differ.
    fn subtract(&mut self, other: &Self) -> SketchResult<()>;

    /// The elements, in wire order.
    fn elements(&self) -> &[Self::Elem];

    /// The elements, consumed.
    fn into_elements(self) -> Vec<Self::Elem>;

    /// A sketch from its elements (an aggregate received from elsewhere).
    ///
    /// # Errors
    ///
    /// [`SketchError::WrongLength`](crate::SketchError::WrongLength) unless
    /// there are [`LinearParams::num_elements`];
    /// [`SketchError::NonCanonical`](crate::SketchError::NonCanonical) for
    /// an element outside the mask domain.
    fn from_elements(params: &Self::Params, elements: Vec<Self::Elem>) -> SketchResult<Self>;

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
    fn is_zero(&self) -> bool {
        let zero = self.params().mask_domain().mask_zero();
        self.elements().iter().all(|e| *e == zero)
    }

    /// The unmasked sketch as a frame.
    fn to_frame(&self, client_id: u64, ctx: &RoundContext) -> Frame {
        self.params().frame(false, self.elements(), client_id, ctx)
    }

    /// The unmasked sketch a frame carries.
    ///
    /// # Errors
    ///
    /// As [`LinearParams::parse_frame`] and
    /// [`from_elements`](Self::from_elements).
    fn from_frame(frame: &Frame, params: &Self::Params) -> SketchResult<Self> {
        Self::from_elements(params, params.parse_frame(false, frame)?)
    }

    /// Adds `mask` to the elements: the message of client `client_id` in
    /// `context` (Algorithm 2 of the paper, line 2).
    ///
    /// # Errors
    ///
    /// [`SketchError::WrongLength`](crate::SketchError::WrongLength) unless
    /// the mask has as many elements as the sketch.
    fn mask(
        &self,
        mask: &MaskVector<Self::Elem>,
        client_id: u64,
        context: RoundContext,
    ) -> SketchResult<MaskedSketch<Self>> {
        let own = self.elements();
        crate::error::check_len(own.len(), mask.0.len())?;
        let d = self.params().mask_domain();
        let elements = own
            .iter()
            .zip(&mask.0)
            .map(|(s, z)| d.mask_add(s, z))
            .collect();
        MaskedSketch::from_parts(self.params(), client_id, context, elements)
    }

    /// Masks the sketch with client `own_id`'s pairwise masks against
    /// `peers` (see [`crate::masking::pairwise`]).
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

/// `s_i += c * x^(i-1)` for every `i`, with running powers.
pub(crate) fn add_power_sums<F: Field>(f: &F, s: &mut [F::Elem], x: &F::Elem, c: &F::Elem) {
    let mut pw = c.clone();
    let n = s.len();
    for (i, si) in s.iter_mut().enumerate() {
        f.add_assign(si, &pw);
        if i + 1 < n {
            pw = f.mul(&pw, x);
        }
    }
}

/// A sparse vector: `(key, count)` entries with distinct keys, sorted by
/// key, no zero counts. What every decoder returns, and the plaintext
/// oracle in tests.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use num_bigint::BigUint;
/// use syndrome_agg::SparseVector;
///
/// let f = Mersenne61;
/// let v: SparseVector<BigUint, u64> =
///     SparseVector::from_sum(&f, [(5u32, f.from_u64(2)), (3, f.from_u64(1)), (5, f.from_i64(-2))]);
/// assert_eq!(v.len(), 1); // key 5 cancels
/// assert_eq!(v.to_signed(&f), vec![(3u32.into(), 1.into())]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseVector<K, C> {
    entries: Vec<(K, C)>,
}

impl<K, C> Default for SparseVector<K, C> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<K, C> SparseVector<K, C> {
    /// Builds from entries already sorted by distinct key with nonzero
    /// counts (the decoders' output).
    pub(crate) fn from_sorted(entries: Vec<(K, C)>) -> Self {
        Self { entries }
    }

    /// The entries, sorted by key.
    pub fn entries(&self) -> &[(K, C)] {
        &self.entries
    }

    /// The entries, consumed.
    pub fn into_entries(self) -> Vec<(K, C)> {
        self.entries
    }

    /// The entries, sorted by key, by reference.
    pub fn iter(&self) -> std::slice::Iter<'_, (K, C)> {
        self.entries.iter()
    }

    /// The number of nonzero entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the vector is zero.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl<K, C> IntoIterator for SparseVector<K, C> {
    type Item = (K, C);
    type IntoIter = std::vec::IntoIter<(K, C)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a, K, C> IntoIterator for &'a SparseVector<K, C> {
    type Item = &'a (K, C);
    type IntoIter = std::slice::Iter<'a, (K, C)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

impl<K: Ord + Clone, E: Clone + PartialEq> SparseVector<K, E> {
    /// The sum of possibly repeated entries with field-element counts:
    /// counts of equal keys add up, zero sums are dropped.
    pub fn from_sum<F, Q, I>(f: &F, entries: I) -> Self
    where
        F: Field<Elem = E>,
        Q: Into<K>,
        I: IntoIterator<Item = (Q, E)>,
    {
        let mut map = BTreeMap::<K, E>::new();
        for (k, c) in entries {
            let slot = map.entry(k.into()).or_insert_with(|| f.zero());
            f.add_assign(slot, &c);
        }
        Self {
            entries: map.into_iter().filter(|(_, c)| !f.is_zero(c)).collect(),
        }
    }

    /// The field-element counts as unsigned integers (canonical
    /// representatives).
    pub fn to_unsigned<F: FiniteField<Elem = E>>(&self, f: &F) -> Vec<(K, BigUint)> {
        self.entries
            .iter()
            .map(|(k, c)| (k.clone(), f.to_biguint(c)))
            .collect()
    }

    /// The field-element counts as signed integers (centered
    /// representatives).
    pub fn to_signed<F: FiniteField<Elem = E>>(&self, f: &F) -> Vec<(K, BigInt)> {
        self.entries
            .iter()
            .map(|(k, c)| (k.clone(), f.to_centered(c)))
            .collect()
    }
}
