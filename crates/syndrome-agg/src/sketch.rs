//! The syndrome sketch of a sparse vector (Algorithm 2 of the paper, line
//! 2, without the mask) and the sparse vectors it decodes to.

use std::borrow::Borrow;

use field::{Field, FiniteField};
use num_bigint::{BigInt, BigUint};

use crate::error::check_len;
use crate::{SketchResult, ValidSketchParams};

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
/// use syndrome_agg::{CountPolicy, Sketch, SketchParams};
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
    /// The sketch of the zero vector.
    pub fn new(params: &ValidSketchParams<F>) -> Self {
        let f = params.field();
        Self {
            params: params.clone(),
            syndromes: vec![f.zero(); params.num_syndromes()],
        }
    }

    /// A sketch from its syndromes (for instance an aggregate received from
    /// elsewhere).
    ///
    /// # Errors
    ///
    /// [`SketchError::WrongLength`](crate::SketchError::WrongLength) unless there are exactly `2t + r`.
    pub fn from_syndromes(
        params: &ValidSketchParams<F>,
        syndromes: Vec<F::Elem>,
    ) -> SketchResult<Self> {
        let expected = params.num_syndromes();
        check_len(expected, syndromes.len())?;
        Ok(Self {
            params: params.clone(),
            syndromes,
        })
    }

    /// The sketch of the sparse vector with the given `(key, count)`
    /// entries (repeated keys add up), in `O((2t + r) * entries)` field
    /// operations.
    ///
    /// # Errors
    ///
    /// [`SketchError::KeyOutOfDomain`](crate::SketchError::KeyOutOfDomain) for a key outside `[1, N]`.
    pub fn encode<K, I>(params: &ValidSketchParams<F>, entries: I) -> SketchResult<Self>
    where
        K: Borrow<BigUint>,
        I: IntoIterator<Item = (K, F::Elem)>,
    {
        let mut s = Self::new(params);
        for (k, c) in entries {
            s.insert(k.borrow(), &c)?;
        }
        Ok(s)
    }

    /// The sketch of a histogram of unsigned counts.
    ///
    /// # Errors
    ///
    /// As [`insert_unsigned`](Self::insert_unsigned).
    pub fn from_unsigned<K, I>(params: &ValidSketchParams<F>, entries: I) -> SketchResult<Self>
    where
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, u64)>,
    {
        let mut s = Self::new(params);
        for (k, c) in entries {
            s.insert_unsigned(k, c)?;
        }
        Ok(s)
    }

    /// The sketch of a sparse vector of signed values.
    ///
    /// # Errors
    ///
    /// As [`insert_signed`](Self::insert_signed).
    pub fn from_signed<K, I>(params: &ValidSketchParams<F>, entries: I) -> SketchResult<Self>
    where
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, i64)>,
    {
        let mut s = Self::new(params);
        for (k, c) in entries {
            s.insert_signed(k, c)?;
        }
        Ok(s)
    }

    /// Adds `count` at `key`: `S_i += count * key^(i-1)` with running
    /// powers, `2(2t + r)` field operations.
    ///
    /// # Errors
    ///
    /// [`SketchError::KeyOutOfDomain`](crate::SketchError::KeyOutOfDomain) for a key outside `[1, N]`.
    pub fn insert(&mut self, key: &BigUint, count: &F::Elem) -> SketchResult<()> {
        let x = self.params.key_ref(key)?;
        add_power_sums(self.params.field(), &mut self.syndromes, &x, count);
        Ok(())
    }

    /// Adds an unsigned count at `key`.
    ///
    /// # Errors
    ///
    /// [`SketchError::KeyOutOfDomain`](crate::SketchError::KeyOutOfDomain), or [`SketchError::InvalidCount`](crate::SketchError::InvalidCount)
    /// as [`ValidSketchParams::unsigned_count`].
    pub fn insert_unsigned(&mut self, key: impl Into<BigUint>, count: u64) -> SketchResult<()> {
        let c = self.params.unsigned_count(count)?;
        self.insert(&key.into(), &c)
    }

    /// Adds a signed value at `key` (centered representation).
    ///
    /// # Errors
    ///
    /// [`SketchError::KeyOutOfDomain`](crate::SketchError::KeyOutOfDomain), or [`SketchError::InvalidCount`](crate::SketchError::InvalidCount)
    /// as [`ValidSketchParams::signed_count`].
    pub fn insert_signed(&mut self, key: impl Into<BigUint>, count: i64) -> SketchResult<()> {
        let c = self.params.signed_count(count)?;
        self.insert(&key.into(), &c)
    }

    /// `self += other`: the sketch of the sum of the two vectors.
    ///
    /// # Errors
    ///
    /// [`SketchError::ParamsMismatch`](crate::SketchError::ParamsMismatch) if the fields or parameters differ.
    pub fn add(&mut self, other: &Self) -> SketchResult<()> {
        self.params.check_same(&other.params)?;
        let f = self.params.field();
        for (a, b) in self.syndromes.iter_mut().zip(&other.syndromes) {
            f.add_assign(a, b);
        }
        Ok(())
    }

    /// `self -= other`: the sketch of the difference of the two vectors.
    ///
    /// # Errors
    ///
    /// [`SketchError::ParamsMismatch`](crate::SketchError::ParamsMismatch) if the fields or parameters differ.
    pub fn subtract(&mut self, other: &Self) -> SketchResult<()> {
        self.params.check_same(&other.params)?;
        let f = self.params.field();
        for (a, b) in self.syndromes.iter_mut().zip(&other.syndromes) {
            f.sub_assign(a, b);
        }
        Ok(())
    }

    /// The syndromes `S_1, ..., S_{2t+r}`.
    pub fn syndromes(&self) -> &[F::Elem] {
        &self.syndromes
    }

    /// The syndromes, consumed.
    pub fn into_syndromes(self) -> Vec<F::Elem> {
        self.syndromes
    }

    /// The validated parameters.
    pub fn params(&self) -> &ValidSketchParams<F> {
        &self.params
    }

    /// The field.
    pub fn field(&self) -> &F {
        self.params.field()
    }

    /// Whether every syndrome is zero (the sketch of the zero vector, as far
    /// as the decoder can tell).
    pub fn is_zero(&self) -> bool {
        let f = self.params.field();
        self.syndromes.iter().all(|s| f.is_zero(s))
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
/// key, no zero counts. What the decoders return, and the plaintext oracle
/// in tests.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61};
/// use syndrome_agg::SparseVector;
///
/// let f = Mersenne61;
/// let v = SparseVector::from_sum(&f, [(5u32, f.from_u64(2)), (3, f.from_u64(1)), (5, f.from_i64(-2))]);
/// assert_eq!(v.len(), 1); // key 5 cancels
/// assert_eq!(v.to_signed(&f), vec![(3u32.into(), 1.into())]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SparseVector<E> {
    entries: Vec<(BigUint, E)>,
}

impl<E> Default for SparseVector<E> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<E: Clone + PartialEq> SparseVector<E> {
    /// The sum of possibly repeated entries: counts of equal keys add up,
    /// zero sums are dropped.
    pub fn from_sum<F, K, I>(f: &F, entries: I) -> Self
    where
        F: Field<Elem = E>,
        K: Into<BigUint>,
        I: IntoIterator<Item = (K, E)>,
    {
        let mut map = std::collections::BTreeMap::<BigUint, E>::new();
        for (k, c) in entries {
            let slot = map.entry(k.into()).or_insert_with(|| f.zero());
            f.add_assign(slot, &c);
        }
        Self {
            entries: map.into_iter().filter(|(_, c)| !f.is_zero(c)).collect(),
        }
    }

    /// Builds from entries already sorted by distinct key with nonzero
    /// counts (the decoders' output).
    pub(crate) fn from_sorted(entries: Vec<(BigUint, E)>) -> Self {
        Self { entries }
    }

    /// The entries, sorted by key.
    pub fn entries(&self) -> &[(BigUint, E)] {
        &self.entries
    }

    /// The entries, consumed.
    pub fn into_entries(self) -> Vec<(BigUint, E)> {
        self.entries
    }

    /// The number of nonzero entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the vector is zero.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The counts as unsigned integers (canonical representatives).
    pub fn to_unsigned<F: FiniteField<Elem = E>>(&self, f: &F) -> Vec<(BigUint, BigUint)> {
        self.entries
            .iter()
            .map(|(k, c)| (k.clone(), f.to_biguint(c)))
            .collect()
    }

    /// The counts as signed integers (centered representatives).
    pub fn to_signed<F: FiniteField<Elem = E>>(&self, f: &F) -> Vec<(BigUint, BigInt)> {
        self.entries
            .iter()
            .map(|(k, c)| (k.clone(), f.to_centered(c)))
            .collect()
    }
}
