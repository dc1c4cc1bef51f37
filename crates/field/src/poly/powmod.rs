//! Modular exponentiation of polynomials.

use num_bigint::BigUint;
use num_traits::Zero;

use super::{Modulus, Poly, div_rem_slices, monic_slice, mul_slices, normalized};
use crate::{Field, FieldError};

/// Bases with at most this many coefficients are multiplied in by the
/// schoolbook method and reduced classically: `O(n)` per step instead of a
/// full modular multiplication. Root finding raises `x` and `x + a` to
/// huge powers, so its multiply steps become almost free.
const SMALL_BASE: usize = 8;

/// `base^exp mod modulus`, by left-to-right square and multiply with the
/// modulus prepared once (a precomputed inverse of its reversal above
/// [`NEWTON_THRESHOLD`](super::NEWTON_THRESHOLD), so each reduction costs
/// two multiplications).
///
/// # Errors
///
/// [`FieldError::DivisionByZero`] when `modulus` is the zero polynomial.
///
/// # Example
///
/// ```
/// use field::{Field, FiniteField, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// // x^p = x modulo any product of distinct linear factors (Fermat).
/// let m = poly::from_roots(&f, &[3, 5, 7]);
/// let xp = poly::pow_mod(&f, &Poly::x(&f), &f.characteristic(), &m)?;
/// assert_eq!(xp, Poly::x(&f));
/// # Ok::<(), field::FieldError>(())
/// ```
pub fn pow_mod<F: Field>(
    f: &F,
    base: &Poly<F::Elem>,
    exp: &BigUint,
    modulus: &Poly<F::Elem>,
) -> Result<Poly<F::Elem>, FieldError> {
    if modulus.is_zero() {
        return Err(FieldError::DivisionByZero);
    }
    if modulus.coeffs().len() == 1 {
        // Everything is zero modulo a unit.
        return Ok(Poly::zero());
    }
    // A remainder modulo m equals the remainder modulo m / lead(m).
    let m = Modulus::new(f, monic_slice(f, modulus.coeffs().to_vec()));
    let (_, b) = div_rem_slices(f, base.coeffs(), m.coeffs());
    let b = normalized(f, b);
    Ok(normalized(f, m.pow(f, b.coeffs(), exp)))
}

impl<E: Clone> Modulus<E> {
    /// `base^exp mod m` for a reduced `base` (trailing zeros trimmed in the
    /// result).
    pub(crate) fn pow<F: Field<Elem = E>>(&self, f: &F, base: &[E], exp: &BigUint) -> Vec<E> {
        if exp.is_zero() {
            return vec![f.one()];
        }
        if base.is_empty() {
            return Vec::new();
        }
        let small = base.len() <= SMALL_BASE;
        let mut acc = base.to_vec();
        for i in (0..exp.bits() - 1).rev() {
            acc = self.mul(f, &acc, &acc);
            if exp.bit(i) {
                acc = if small {
                    // The quotient has fewer than SMALL_BASE terms, so the
                    // classical reduction inside `reduce` is linear in n.
                    self.reduce(f, mul_slices(f, &acc, base))
                } else {
                    self.mul(f, &acc, base)
                };
            }
        }
        acc
    }
}
