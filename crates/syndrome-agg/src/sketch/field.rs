//! The syndrome sketch of a sparse vector over a finite field (Algorithm 2
//! of the paper, line 2, without the mask).

use std::borrow::Cow;

use field::FiniteField;
use num_bigint::BigUint;

use super::{LinearParams, LinearSketch, RawParams, RawSketch};
use crate::decode::power_sums;
use crate::error::{ParamsError, SketchError, SketchResult, check_len};
use crate::params::ValidSketchParams;
use crate::sparse::SparseVector;
use crate::wire::{Frame, FrameKind, field_bytes};
use field::poly::add_power_sums;
use masked_sum::RoundContext;

/// The `2t + r` syndromes `S_i = sum_j q_j j^(i-1) (mod p)`, `i = 1..2t+r`,
/// of a sparse vector `q` over the key domain `[1, N]` (Algorithm 2 of the
/// paper, line 2, without the mask `z_i`; `r = 0` is the paper's scheme).
///
/// The map from vectors to sketches is linear: the sketch of a sum is the
/// sum of the sketches, so a server that adds the clients' sketches holds
/// the sketch of the aggregate, and [`decode`](Self::decode) recovers it
/// exactly when it has at most `t` nonzero entries (Appendix J of the
/// paper: the `2t` first syndromes determine such a vector uniquely).
///
/// Sketches of different fields or parameters cannot be added
/// (minisketch's merge rule).
///
/// # Example
///
/// ```
/// use field::Mersenne61;
/// use syndrome_agg::{CountPolicy, LinearSketch, Sketch, SketchParams};
///
/// let params = SketchParams::new(3, 1000u32)
///     .with_counts(CountPolicy::unsigned(100u32))
///     .validate(Mersenne61)?;
/// let mut a = Sketch::from_unsigned(&params, [(7u64, 2u64), (500, 1)])?;
/// let b = Sketch::from_unsigned(&params, [(7u64, 1u64), (999, 4)])?;
/// a.add(&b)?;
/// let sum = a.decode()?;
/// assert_eq!(
///     sum.to_unsigned(params.field()),
///     vec![(7u32.into(), 3u32.into()), (500u32.into(), 1u32.into()), (999u32.into(), 4u32.into())]
/// );
/// # Ok::<(), syndrome_agg::SketchError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Sketch<F: FiniteField> {
    params: ValidSketchParams<F>,
    syndromes: Vec<F::Elem>,
}

impl<F: FiniteField> Sketch<F> {
    /// The sketch of a histogram of unsigned counts.
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`],
    /// or [`ParamsError::InvalidCount`]
    /// as [`ValidSketchParams::unsigned_count`].
    pub fn from_unsigned<K, I>(params: &ValidSketchParams<F>, entries: I) -> SketchResult<Self>
    where
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, u64)>,
    {
        let entries = params.unsigned_entries(entries)?;
        let mut s = Self::new(params);
        s.insert_many(&entries)?;
        Ok(s)
    }

    /// The sketch of a sparse vector of signed values (centered
    /// representation).
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`],
    /// or [`ParamsError::InvalidCount`]
    /// as [`ValidSketchParams::signed_count`].
    pub fn from_signed<K, I>(params: &ValidSketchParams<F>, entries: I) -> SketchResult<Self>
    where
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, i64)>,
    {
        let entries = params.signed_entries(entries)?;
        let mut s = Self::new(params);
        s.insert_many(&entries)?;
        Ok(s)
    }

    /// Inserts every `(key, count)`: the same syndromes as calling
    /// [`insert`](LinearSketch::insert) on each, computed together by a
    /// tree of fractions (`field::poly::power_sums`) in `O(M(n) log n +
    /// M(2t + r))` field operations for `n` entries, where one at a time
    /// costs `O(n (2t + r))`. Nothing changes if a key is out of the
    /// domain.
    ///
    /// # Errors
    ///
    /// [`ParamsError::KeyOutOfDomain`](crate::ParamsError::KeyOutOfDomain).
    ///
    /// # Example
    ///
    /// ```
    /// use field::{Field, Fp64};
    /// use num_bigint::BigUint;
    /// use syndrome_agg::{LinearSketch, Sketch, SketchParams};
    ///
    /// let f = Fp64::proth();
    /// let params = SketchParams::new(4, 100u32).validate(f)?;
    /// let entries: Vec<(BigUint, _)> =
    ///     (1..=4u32).map(|k| (k.into(), f.from_u64(u64::from(k) * 10))).collect();
    /// let mut batch = Sketch::new(&params);
    /// batch.insert_many(&entries)?;
    /// let mut one_by_one = Sketch::new(&params);
    /// for (k, c) in &entries {
    ///     one_by_one.insert(k, c)?;
    /// }
    /// assert_eq!(batch, one_by_one);
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    pub fn insert_many(&mut self, entries: &[(BigUint, F::Elem)]) -> SketchResult<()> {
        let mut nodes = Vec::with_capacity(entries.len());
        let mut counts = Vec::with_capacity(entries.len());
        for (k, c) in entries {
            nodes.push(self.params.key_ref(k)?);
            counts.push(c.clone());
        }
        let f = self.params.field();
        let sums = power_sums(f, &nodes, &counts, self.syndromes.len())?;
        for (s, d) in self.syndromes.iter_mut().zip(&sums) {
            f.add_assign(s, d);
        }
        Ok(())
    }

    /// The field.
    pub fn field(&self) -> &F {
        self.params.field()
    }

    /// The syndromes as the dense vector a secure sum adds element by
    /// element ([`secagg`](crate::secagg)): the sum of the vectors of a
    /// round's sketches is the vector of their sum. The README's SecAgg
    /// example runs one.
    pub fn to_dense(&self) -> Vec<F::Elem> {
        self.syndromes.clone()
    }

    /// The sketch whose dense vector is `vector` (the output of a secure
    /// sum).
    ///
    /// # Errors
    ///
    /// [`DecodeError::WrongLength`](crate::DecodeError::WrongLength) unless
    /// there are [`ValidSketchParams::num_syndromes`] elements.
    pub fn from_dense(params: &ValidSketchParams<F>, vector: Vec<F::Elem>) -> SketchResult<Self> {
        Self::from_elements(params, vector)
    }

    /// `self op= other`, element by element, after the merge rule.
    fn combine(&mut self, other: &Self, op: fn(&F, &mut F::Elem, &F::Elem)) -> SketchResult<()> {
        self.params.check_same(&other.params)?;
        let f = self.params.field();
        for (a, b) in self.syndromes.iter_mut().zip(&other.syndromes) {
            op(f, a, b);
        }
        Ok(())
    }
}

impl<F: FiniteField> LinearSketch for Sketch<F> {
    type Params = ValidSketchParams<F>;
    type Key = BigUint;
    type Count = F::Elem;
    type Elem = F::Elem;

    fn new(params: &ValidSketchParams<F>) -> Self {
        let f = params.field();
        Self {
            params: params.clone(),
            syndromes: vec![f.zero(); params.num_syndromes()],
        }
    }

    fn params(&self) -> &ValidSketchParams<F> {
        &self.params
    }

    /// `S_i += count * key^(i-1)` with running powers, `2(2t + r)` field
    /// operations.
    fn insert(&mut self, key: &BigUint, count: &F::Elem) -> SketchResult<()> {
        let x = self.params.key_ref(key)?;
        add_power_sums(self.params.field(), &mut self.syndromes, &x, count);
        Ok(())
    }

    fn add(&mut self, other: &Self) -> SketchResult<()> {
        self.combine(other, |f, a, b| f.add_assign(a, b))
    }

    fn subtract(&mut self, other: &Self) -> SketchResult<()> {
        self.combine(other, |f, a, b| f.sub_assign(a, b))
    }

    crate::sketch::linear_via_raw!();

    /// Decodes the sparse vector (Algorithm 2 of the paper, line 3):
    /// Berlekamp-Massey (on all `2t + r` syndromes, see below) for the
    /// locator
    /// `g(x) = prod_j (1 - j x)`, the roots of its reverse polynomial
    /// `prod_j (x - j)` by randomized equal-degree splitting, the domain
    /// check `1 <= j <= N`, the counts by the transposed Vandermonde solve,
    /// the count policy, and a re-encode compared with all `2t + r`
    /// syndromes. See the `decode` module docs (docs/threat-model.md §3) for the contract and the detection
    /// bound.
    ///
    /// # Errors
    ///
    /// [`DecodeError::TooManyKeys`](crate::DecodeError::TooManyKeys) when the syndromes need more than `t`
    /// keys, [`DecodeError::LocatorDoesNotSplit`](crate::DecodeError::LocatorDoesNotSplit),
    /// [`DecodeError::RepeatedRoot`](crate::DecodeError::RepeatedRoot), [`DecodeError::KeyOutOfRange`](crate::DecodeError::KeyOutOfRange),
    /// [`DecodeError::CountOutOfRange`](crate::DecodeError::CountOutOfRange) (a zero count, or one outside the
    /// policy), [`DecodeError::CheckMismatch`](crate::DecodeError::CheckMismatch), [`DecodeError::Timeout`](crate::DecodeError::Timeout).
    ///
    /// # Example
    ///
    /// ```
    /// use field::Mersenne61;
    /// use syndrome_agg::{LinearSketch, Sketch, SketchParams};
    ///
    /// let params = SketchParams::new(2, 1000u32).with_extra(1).validate(Mersenne61)?;
    /// // Three keys in a sketch of capacity 2 with one check syndrome:
    /// // always rejected (t < 3 <= t + r).
    /// let s = Sketch::from_unsigned(&params, [(1u32, 1u64), (2, 1), (3, 1)])?;
    /// assert!(s.decode().is_err());
    /// # Ok::<(), syndrome_agg::SketchError>(())
    /// ```
    fn decode(&self) -> SketchResult<SparseVector<BigUint, F::Elem>> {
        crate::decode::decode_sketch(&self.params, &self.syndromes)
    }

    fn is_zero(&self) -> bool {
        let f = self.params.field();
        self.syndromes.iter().all(|s| f.is_zero(s))
    }
}

impl<F: FiniteField> RawSketch for Sketch<F> {
    fn elements(&self) -> Cow<'_, [F::Elem]> {
        Cow::Borrowed(&self.syndromes)
    }

    fn into_elements(self) -> Vec<F::Elem> {
        self.syndromes
    }

    fn from_elements(params: &ValidSketchParams<F>, syndromes: Vec<F::Elem>) -> SketchResult<Self> {
        check_len(params.num_syndromes(), syndromes.len())?;
        Ok(Self {
            params: params.clone(),
            syndromes,
        })
    }
}

impl<F: FiniteField> LinearParams for ValidSketchParams<F> {
    type Elem = F::Elem;
    type Domain = F;

    fn mask_domain(&self) -> F {
        self.field().clone()
    }

    fn num_elements(&self) -> usize {
        self.num_syndromes()
    }

    fn check_same(&self, other: &Self) -> SketchResult<()> {
        if self.field() != other.field() {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "field",
            }));
        }
        if self.params() != other.params() {
            return Err(SketchError::Params(ParamsError::ParamsMismatch {
                what: "parameters",
            }));
        }
        Ok(())
    }
}

impl<F: FiniteField> RawParams for ValidSketchParams<F> {
    /// Kind [`FrameKind::Sketch`], or [`FrameKind::Masked`] for a message.
    fn frame(
        &self,
        masked: bool,
        elements: &[F::Elem],
        client_id: u64,
        ctx: &RoundContext,
    ) -> Frame {
        let f = self.field();
        Frame::build(
            kind(masked),
            &f.characteristic(),
            self.capacity(),
            self.extra(),
            self.key_domain(),
            0,
            client_id,
            ctx,
            field_bytes(f, elements),
        )
    }

    fn parse_frame(&self, masked: bool, frame: &Frame) -> SketchResult<Vec<F::Elem>> {
        frame.expect_kind(kind(masked))?;
        let f = self.field();
        frame.expect_shape(
            &f.characteristic(),
            self.capacity(),
            self.extra(),
            self.key_domain(),
            0,
        )?;
        frame.field_elements(f, self.num_syndromes())
    }
}

fn kind(masked: bool) -> FrameKind {
    if masked {
        FrameKind::Masked
    } else {
        FrameKind::Sketch
    }
}
