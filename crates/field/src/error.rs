//! The one error type of this crate.

use thiserror::Error;

/// Everything that can go wrong in `field`: bad encodings, bad moduli, and
/// algebraic inputs that do not have the promised shape.
///
/// Variants carry the numbers a caller needs to act on the failure.
///
/// # Example
///
/// ```
/// use field::{FieldError, FiniteField, Mersenne61};
///
/// let f = Mersenne61;
/// // 2^61 - 1 itself is not a canonical element.
/// let bytes = ((1u64 << 61) - 1).to_le_bytes();
/// assert_eq!(f.from_bytes(&bytes), Err(FieldError::NonCanonical));
/// assert_eq!(
///     f.from_bytes(&bytes[..3]),
///     Err(FieldError::WrongLength { expected: 8, found: 3 })
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum FieldError {
    /// An encoded element is not the canonical representative (it is at
    /// least the modulus).
    #[error("encoded value is not canonical (not below the modulus)")]
    NonCanonical,
    /// An encoding has the wrong number of bytes.
    #[error("wrong encoding length: expected {expected} bytes, found {found}")]
    WrongLength {
        /// The fixed width of the encoding.
        expected: usize,
        /// The width that was given.
        found: usize,
    },
    /// A proposed modulus is not prime.
    #[error("modulus is not prime")]
    NotPrime,
    /// A proposed modulus is outside what the implementation supports.
    #[error("modulus out of range: {reason}")]
    ModulusOutOfRange {
        /// What the implementation needs.
        reason: &'static str,
    },
    /// Two operands live in different fields.
    #[error("operands belong to different fields")]
    FieldMismatch,
    /// Division by zero or by the zero polynomial.
    #[error("division by zero")]
    DivisionByZero,
    /// An algorithm needed a polynomial of higher degree than the caller
    /// allowed (Berlekamp-Massey stops as soon as this is known, which
    /// bounds its work).
    #[error("degree bound exceeded: at most {max} allowed, at least {needed} needed")]
    DegreeExceeded {
        /// The bound the caller set.
        max: usize,
        /// A lower bound on the degree that would be needed.
        needed: usize,
    },
    /// The zero polynomial was given where a nonzero one is required.
    #[error("the zero polynomial has no roots to find")]
    ZeroPolynomial,
    /// The polynomial does not split into linear factors over the field
    /// (it has an irreducible factor of degree two or more).
    #[error("polynomial does not split into linear factors")]
    NotSplit,
    /// The polynomial splits, but some root is repeated.
    #[error("polynomial has a repeated root")]
    RepeatedRoot,
    /// The integer root finder found that the roots are not distinct
    /// integers inside the given range.
    #[error("roots are not distinct integers in the range [{low}, {high}]")]
    RootsOutOfRange {
        /// Lower end of the range (inclusive), in decimal.
        low: String,
        /// Upper end of the range (inclusive), in decimal.
        high: String,
    },
    /// A polynomial over the rationals was required to have integer
    /// coefficients.
    #[error("polynomial coefficients are not all integers")]
    NotIntegral,
    /// A Vandermonde system has repeated nodes, so it is singular.
    #[error("repeated Vandermonde nodes: the system is singular")]
    RepeatedNodes,
    /// A sequence is not the power sums of the solution found from its first
    /// terms ([`TransposedVandermonde::solve`](crate::TransposedVandermonde::solve)).
    #[error("term {index} of the sequence is not reproduced by the solution")]
    SequenceMismatch {
        /// The first term not reproduced, counted from 1.
        index: usize,
    },
    /// Slices that must have the same length do not.
    #[error("length mismatch: {left} and {right}")]
    LengthMismatch {
        /// First length.
        left: usize,
        /// Second length.
        right: usize,
    },
    /// A randomized algorithm used up its attempt budget without success
    /// (practically impossible for valid inputs: each attempt fails with
    /// probability at most one half).
    #[error("gave up after {attempts} randomized attempts")]
    AttemptsExhausted {
        /// How many attempts were made.
        attempts: u32,
    },
}

/// The element of a prime field `p < 2^64` whose canonical encoding is
/// `bytes`: exactly 8 little-endian bytes of a value below `p` (the
/// encoding of the one-word fields).
pub(crate) fn word_from_le_bytes(bytes: &[u8], p: u64) -> Result<u64, FieldError> {
    let arr: [u8; 8] = bytes.try_into().map_err(|_| FieldError::WrongLength {
        expected: 8,
        found: bytes.len(),
    })?;
    let v = u64::from_le_bytes(arr);
    if v < p {
        Ok(v)
    } else {
        Err(FieldError::NonCanonical)
    }
}
