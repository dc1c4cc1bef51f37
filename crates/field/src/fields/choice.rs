//! The cheapest field for a bound: the choice every party derives the same
//! way from public parameters.

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive};

use crate::fields::primes::next_prime;
use crate::{BigPrime, FiniteField, Fp64, Mersenne127, P_PROTH, P127};

/// The cheapest field whose characteristic exceeds a bound, as chosen by
/// [`cheapest_field`].
///
/// Generic code is monomorphized per field, so the choice is an enum and
/// [`visit`](Self::visit) hands the concrete field to a [`FieldVisitor`].
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum FieldChoice {
    /// GF(27 * 2^59 + 1) ([`Fp64::proth`]): one word, products by
    /// transforms in the field, roots by tangent Graeffe transforms.
    Proth(Fp64),
    /// GF(2^127 - 1).
    Mersenne127(Mersenne127),
    /// GF(p) for the smallest prime `p` above the bound.
    Big(BigPrime),
}

/// Code to run with whichever field a [`FieldChoice`] holds.
///
/// # Example
///
/// ```
/// use field::primes::{FieldVisitor, cheapest_field};
/// use field::FiniteField;
/// use num_bigint::BigUint;
///
/// struct Bits;
/// impl FieldVisitor for Bits {
///     type Output = u64;
///     fn visit<F: FiniteField>(self, f: F) -> u64 {
///         f.modulus_bits()
///     }
/// }
/// assert_eq!(cheapest_field(&BigUint::from(1000u32)).visit(Bits), 64);
/// assert_eq!(cheapest_field(&(BigUint::from(1u8) << 100u32)).visit(Bits), 127);
/// assert_eq!(cheapest_field(&(BigUint::from(1u8) << 200u32)).visit(Bits), 201);
/// ```
pub trait FieldVisitor {
    /// What the visit returns.
    type Output;
    /// Runs with the concrete field.
    fn visit<F: FiniteField>(self, f: F) -> Self::Output;
}

impl FieldChoice {
    /// Runs `v` with the concrete field.
    pub fn visit<V: FieldVisitor>(self, v: V) -> V::Output {
        match self {
            Self::Proth(f) => v.visit(f),
            Self::Mersenne127(f) => v.visit(f),
            Self::Big(f) => v.visit(f),
        }
    }

    /// The characteristic of the chosen field.
    pub fn characteristic(&self) -> BigUint {
        match self {
            Self::Proth(f) => f.characteristic(),
            Self::Mersenne127(f) => f.characteristic(),
            Self::Big(f) => f.characteristic(),
        }
    }
}

/// The cheapest field in which the integers `0..=bound` are distinct:
/// GF(27 * 2^59 + 1) if `bound < 27 * 2^59 + 1` (about `2^63.75`), else
/// GF(2^127 - 1) if `bound < 2^127 - 1`, else GF(p) for the smallest prime
/// `p > bound` (deterministic, so every party derives the same field).
///
/// "Cheapest" is the decoder's cost, which the root finding dominates:
/// the word-size Proth field finds roots by tangent Graeffe transforms in
/// `O(M(t) log p)` where the Mersenne fields need Cantor-Zassenhaus
/// splitting, `O(M(t) log p log t)`. Measured with the `decode_scale`
/// example at `t = 1000` (docs/benchmarks.md): the whole decode takes
/// 17 ms in this field against 210 to 220 ms in GF(2^61 - 1), the roots
/// 5 ms against 189 ms. The Proth field replaced `GF(2^61 - 1)` here;
/// both have 8-byte elements.
///
/// See [`FieldVisitor`] for an example.
pub fn cheapest_field(bound: &BigUint) -> FieldChoice {
    match cheapest_field_kind(bound) {
        FieldKind::Proth => FieldChoice::Proth(Fp64::proth()),
        FieldKind::Mersenne127 => FieldChoice::Mersenne127(Mersenne127),
        FieldKind::Big => {
            let p = next_prime(&(bound + BigUint::one()));
            FieldChoice::Big(BigPrime::new_prime_unchecked(p))
        }
    }
}

/// Which field [`cheapest_field`] picks for `bound`, without searching
/// for a prime (a cost model asks this of many bounds).
///
/// # Example
///
/// ```
/// use field::primes::{FieldKind, cheapest_field_kind};
/// use num_bigint::BigUint;
///
/// assert_eq!(cheapest_field_kind(&BigUint::from(1u64 << 62)), FieldKind::Proth);
/// assert_eq!(cheapest_field_kind(&BigUint::from(u64::MAX)), FieldKind::Mersenne127);
/// assert_eq!(cheapest_field_kind(&(BigUint::from(1u8) << 200u32)), FieldKind::Big);
/// ```
pub fn cheapest_field_kind(bound: &BigUint) -> FieldKind {
    if *bound < BigUint::from(P_PROTH) {
        FieldKind::Proth
    } else if *bound < BigUint::from(P127) {
        FieldKind::Mersenne127
    } else {
        FieldKind::Big
    }
}

/// The kinds of field [`cheapest_field`] chooses from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// GF(27 * 2^59 + 1), one word.
    Proth,
    /// GF(2^127 - 1).
    Mersenne127,
    /// GF(p), `p` the smallest prime above the bound.
    Big,
}

impl FieldKind {
    /// The bits of the modulus for `bound`: exact for the two fixed
    /// fields; for [`FieldKind::Big`] the bound's bits plus one, an upper
    /// bound (the prime above the bound may have as many bits as it).
    pub fn modulus_bits_at_most(self, bound: &BigUint) -> u64 {
        match self {
            Self::Proth => 64,
            Self::Mersenne127 => 127,
            Self::Big => bound.bits() + 1,
        }
    }
}

/// A [`Fp64`] field for the smallest prime above `bound`, if that prime is
/// below `2^64`; handy for small test fields and for moduli chosen from the
/// data.
///
/// # Example
///
/// ```
/// use field::primes::fp64_above;
/// assert_eq!(fp64_above(100).unwrap().modulus(), 101);
/// assert!(fp64_above(u64::MAX).is_none());
/// ```
pub fn fp64_above(bound: u64) -> Option<Fp64> {
    let p = next_prime(&(BigUint::from(bound) + 1u32));
    let p = p.to_u64()?;
    (p >= 3).then(|| Fp64::new_prime_unchecked(p))
}
