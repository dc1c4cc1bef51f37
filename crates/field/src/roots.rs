//! Root finding over finite fields: the factorization step of line 3 of
//! Algorithm 2 of the paper.

mod cz;
mod graeffe;
pub(crate) mod introots;

use rand::Rng;

use crate::poly::{Poly, monic_slice};
use crate::{FieldError, FiniteField};

/// All roots of `p`, sorted by canonical value, when `p` splits over the
/// field into distinct linear factors (as an error locator does).
///
/// # Method
///
/// 1. *Split test.* With `q` the field order, `x^q - x` is the product of
///    all `x - a`, so `p` (made monic, degree `n`) divides it, that is
///    `deg gcd(p, x^q - x) = n`, exactly when `p` splits into distinct
///    linear factors. The test is `x^q = x (mod p)`: `log2 q` modular
///    squarings (with a precomputed Newton inverse of the reversed `p`,
///    each costs three multiplications; the multiplications by `x` are
///    linear).
/// 2. *Equal-degree splitting* (Cantor and Zassenhaus): for random `a`,
///    the roots `r` with `(r + a)^((q-1)/2) = 1` are the roots of
///    `gcd(p, (x + a)^((q-1)/2) - 1)`, about half of them; recurse on that
///    factor and its cofactor with a fresh `a` each. A fresh `a` is needed
///    at every node (under the same `a` all roots of a factor share their
///    character), and recomputing a power modulo each factor is cheaper
///    than reducing a larger power: with multiplication in `O(n^1.6)`, the
///    two halves cost about two thirds of their parent. Degree one and two
///    are solved directly (a square root for the quadratic).
///
/// This replaces the Kedlaya-Umans factorization cited by the paper; it is
/// the standard choice in practice (FLINT and minisketch do the same).
///
/// 3. *Tangent Graeffe transforms* (`roots/graeffe.rs`) take the place of
///    both steps when `q - 1` is a power of two times primes below 64
///    and the field offers transforms of that length
///    ([`FiniteField::two_adic_root`]), as
///    [`Fp64::proth()`](crate::Fp64::proth) does: `O(M(n) log q)` where
///    the splitting tree costs `O(M(n) log q log n)`. What they cannot
///    finish (collisions, and polynomials that do not split) goes to the
///    two steps above, which also name the errors.
///
/// # Errors
///
/// - [`FieldError::ZeroPolynomial`] for the zero polynomial (a nonzero
///   constant has no roots and gives `Ok` with none).
/// - [`FieldError::NotSplit`] if `p` has an irreducible factor of degree two
///   or more, *whether or not it also has repeated roots*: the split test
///   comes first, and a polynomial that does not split cannot be blamed on
///   its multiplicities alone.
/// - [`FieldError::RepeatedRoot`] if `p` splits into linear factors but
///   some factor is repeated (decided by `p | (x^q - x)^n`).
/// - [`FieldError::AttemptsExhausted`] if one splitting step fails
///   64 times in a row (practically impossible with a
///   working random source; it bounds the work on any input).
///
/// # Example
///
/// ```
/// use field::{Field, FieldError, Mersenne61, Poly, find_roots, poly};
///
/// use rand::SeedableRng;
///
/// let f = Mersenne61;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
/// let p = poly::from_roots(&f, &[9, 4, 1 << 40]);
/// assert_eq!(find_roots(&f, &p, &mut rng)?, vec![4, 9, 1 << 40]);
///
/// // x^2 + 1 has no roots modulo 2^61 - 1 (which is 3 mod 4).
/// let irreducible = Poly::from_coeffs(&f, vec![1, 0, 1]);
/// assert_eq!(find_roots(&f, &irreducible, &mut rng), Err(FieldError::NotSplit));
/// let double = poly::from_roots(&f, &[3, 3, 5]);
/// assert_eq!(find_roots(&f, &double, &mut rng), Err(FieldError::RepeatedRoot));
/// # Ok::<(), FieldError>(())
/// ```
pub fn find_roots<F: FiniteField, R: Rng + ?Sized>(
    f: &F,
    p: &Poly<F::Elem>,
    rng: &mut R,
) -> Result<Vec<F::Elem>, FieldError> {
    if p.is_zero() {
        return Err(FieldError::ZeroPolynomial);
    }
    let g = monic_slice(f, p.coeffs().to_vec());
    let mut roots = match g.len() - 1 {
        0 => Vec::new(),
        1 => vec![f.neg(&g[0])],
        _ => graeffe::split_roots(f, &g, rng)?,
    };
    roots.sort_by_cached_key(|r| f.to_biguint(r));
    Ok(roots)
}
