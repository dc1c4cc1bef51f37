//! [`FiniteField`]: a [`Field`] with an order, random elements, a byte
//! encoding and, where it has them, roots of unity of power-of-two order.

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Zero};
use rand::Rng;

use crate::{Field, FieldError};

/// A finite field: a [`Field`] with finitely many elements, so it has an
/// order, a characteristic, uniform random elements and a fixed-width
/// canonical byte encoding.
///
/// Every implementation in this crate is a prime field `Z/pZ`, so
/// [`order`](Self::order) equals [`characteristic`](Self::characteristic) and
/// elements correspond one-to-one to the integers `0..p`
/// ([`to_biguint`](Self::to_biguint)). The trait keeps both numbers so that an
/// extension field can join later without changing callers that only need
/// one of them.
///
/// # Encoding
///
/// An element encodes to exactly [`byte_len`](Self::byte_len) little-endian
/// bytes of its canonical representative. Decoding rejects input of another
/// length and values that are not below the modulus: an encoding is never
/// reduced silently, so every element has exactly one encoding.
///
/// # Example
///
/// ```
/// use field::{FiniteField, Mersenne127};
/// use rand::SeedableRng;
///
/// let f = Mersenne127;
/// let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
/// let x = f.random(&mut rng);
/// let bytes = f.to_bytes(&x);
/// assert_eq!(bytes.len(), f.byte_len());
/// assert_eq!(f.from_bytes(&bytes)?, x);
/// assert_eq!(f.order(), f.characteristic());
/// # Ok::<(), field::FieldError>(())
/// ```
pub trait FiniteField: Field {
    /// The characteristic `p`.
    fn characteristic(&self) -> BigUint;
    /// The number of elements (`p` for the prime fields of this crate).
    fn order(&self) -> BigUint {
        self.characteristic()
    }
    /// The number of bits of the characteristic.
    fn modulus_bits(&self) -> u64 {
        self.characteristic().bits()
    }
    /// The canonical representative of `a`, in `0..p`.
    fn to_biguint(&self, a: &Self::Elem) -> BigUint;
    /// The canonical representative of `a` if it fits in a `u64`.
    fn to_u64(&self, a: &Self::Elem) -> Option<u64> {
        u64::try_from(self.to_biguint(a)).ok()
    }
    /// The centered representative of `a`: the integer congruent to `a` in
    /// `(-p/2, p/2]`, for signed values stored in the field.
    fn to_centered(&self, a: &Self::Elem) -> BigInt {
        let p = self.characteristic();
        let v = self.to_biguint(a);
        if v.clone() << 1u32 > p {
            BigInt::from_biguint(Sign::Minus, p - v)
        } else {
            BigInt::from(v)
        }
    }
    /// A uniformly random element, by rejection sampling (no modulo bias).
    fn random<R: Rng + ?Sized>(&self, rng: &mut R) -> Self::Elem {
        let p = self.characteristic();
        let bits = p.bits();
        let nbytes = usize::try_from(bits.div_ceil(8)).unwrap_or(usize::MAX);
        let top_mask = if bits.is_multiple_of(8) {
            0xff
        } else {
            (1u8 << (bits % 8)) - 1
        };
        let mut buf = vec![0u8; nbytes];
        loop {
            rng.fill_bytes(&mut buf);
            if let Some(last) = buf.last_mut() {
                *last &= top_mask;
            }
            let v = BigUint::from_bytes_le(&buf);
            // Each draw succeeds with probability p / 2^bits > 1/2.
            if v < p {
                return self.from_biguint(&v);
            }
        }
    }
    /// The fixed width, in bytes, of the canonical encoding.
    fn byte_len(&self) -> usize {
        usize::try_from(self.modulus_bits().div_ceil(8)).unwrap_or(usize::MAX)
    }
    /// Appends the canonical little-endian encoding of `a`, exactly
    /// [`byte_len`](Self::byte_len) bytes, to `out`.
    fn write_bytes(&self, a: &Self::Elem, out: &mut Vec<u8>) {
        let len = self.byte_len();
        let mut bytes = self.to_biguint(a).to_bytes_le();
        bytes.resize(len, 0);
        out.extend_from_slice(&bytes);
    }
    /// The canonical little-endian encoding of `a`.
    fn to_bytes(&self, a: &Self::Elem) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.byte_len());
        self.write_bytes(a, &mut out);
        out
    }
    /// Decodes a canonical encoding.
    ///
    /// # Errors
    ///
    /// [`FieldError::WrongLength`] unless `bytes` has exactly
    /// [`byte_len`](Self::byte_len) bytes, and [`FieldError::NonCanonical`]
    /// if the value is not below the modulus.
    fn from_bytes(&self, bytes: &[u8]) -> Result<Self::Elem, FieldError> {
        let expected = self.byte_len();
        if bytes.len() != expected {
            return Err(FieldError::WrongLength {
                expected,
                found: bytes.len(),
            });
        }
        self.from_canonical(&BigUint::from_bytes_le(bytes))
    }
    /// The element whose canonical representative is `v`.
    ///
    /// # Errors
    ///
    /// [`FieldError::NonCanonical`] if `v` is not below the modulus.
    fn from_canonical(&self, v: &BigUint) -> Result<Self::Elem, FieldError> {
        if *v >= self.characteristic() {
            return Err(FieldError::NonCanonical);
        }
        Ok(self.from_biguint(v))
    }
    /// `(p - 1) / 2` as a big integer, the exponent of Euler's criterion
    /// used by equal-degree splitting.
    fn half_order_minus_one(&self) -> BigUint {
        (self.order() - BigUint::one()) >> 1u32
    }
    /// The largest `k` for which [`two_adic_root`](Self::two_adic_root)
    /// gives primitive `2^k`-th roots of unity (at most the number of
    /// factors of two in `q - 1`): transforms of length up to `2^k` run in
    /// the field. The default, 0, offers none.
    fn two_adicity(&self) -> u32 {
        0
    }
    /// A primitive `2^log`-th root of unity, for `log <= two_adicity()`,
    /// else `None`. The roots are consistent: the `2^log`-th root is the
    /// square of the `2^(log+1)`-th one. Polynomial products by transforms
    /// in the field and the tangent Graeffe root finder of
    /// [`find_roots`](crate::find_roots) use them; the default offers none.
    ///
    /// # Example
    ///
    /// ```
    /// use field::{Field, FiniteField, Fp64, Mersenne61};
    ///
    /// let f = Fp64::proth(); // p - 1 = 27 * 2^59
    /// assert_eq!(f.two_adicity(), 59);
    /// let w = f.two_adic_root(10).unwrap();
    /// assert_eq!(f.pow_u64(&w, 1 << 10), f.one());
    /// assert_ne!(f.pow_u64(&w, 1 << 9), f.one());
    /// assert_eq!(f.two_adic_root(11).map(|r| f.square(&r)), Some(w));
    /// assert_eq!(Mersenne61.two_adic_root(1), None);
    /// ```
    fn two_adic_root(&self, log: u32) -> Option<Self::Elem> {
        let _ = log;
        None
    }
    /// Whether the field has at least `n + 1` elements, so that `0..=n`
    /// map to distinct elements.
    fn holds(&self, n: &BigUint) -> bool {
        *n < self.characteristic() && !self.characteristic().is_zero()
    }
}
