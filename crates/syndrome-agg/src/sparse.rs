//! Sparse vectors: what every decoder returns.

use std::collections::BTreeMap;

use field::{Field, FiniteField};
use num_bigint::{BigInt, BigUint};

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
