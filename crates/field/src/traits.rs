//! The field traits: a field is a *context* object, elements are plain data.

use core::fmt::Debug;

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{One, Zero};
use rand::Rng;

use crate::FieldError;
use crate::poly::karatsuba::RingOps;

/// A field, as a context object that knows its modulus; elements are plain
/// values that carry nothing.
///
/// # Trait design
///
/// The same generic code (polynomials, Berlekamp-Massey, sketches) must run
/// over a prime fixed at compile time, a prime chosen at run time from the
/// data, and the rationals. A type-level modulus (as in `ff` or arkworks)
/// cannot express the second, and an element that carries its modulus (as in
/// `crypto-bigint`'s `BoxedMontyForm`) would make every syndrome carry the
/// parameters. So every operation takes the context `&self`, as in
/// minisketch. A zero-sized context (such as [`Mersenne61`](crate::Mersenne61))
/// compiles to the same code as a type-level modulus.
///
/// Operations take their operands by reference so that big-integer elements
/// are not cloned; for word-sized elements this is free after inlining.
/// Elements must be *reduced* (produced by this context): feeding an element
/// of one context into another is a logic error that may give wrong results,
/// never undefined behaviour.
///
/// # Example
///
/// Generic code sees only the trait:
///
/// ```
/// use field::{Field, Fp64, Mersenne61};
///
/// fn sum_of_squares<F: Field>(f: &F, xs: &[u64]) -> F::Elem {
///     let mut acc = f.zero();
///     for &x in xs {
///         let e = f.from_u64(x);
///         f.add_assign(&mut acc, &f.square(&e));
///     }
///     acc
/// }
///
/// let small = Fp64::new(17)?;
/// assert_eq!(sum_of_squares(&small, &[3, 4]), small.from_u64(8)); // 25 mod 17
/// let big = Mersenne61;
/// assert_eq!(sum_of_squares(&big, &[3, 4]), big.from_u64(25));
/// # Ok::<(), field::FieldError>(())
/// ```
pub trait Field: Clone + Debug + PartialEq + Send + Sync + 'static {
    /// The element type: a bare value, meaningful only with its context.
    type Elem: Clone + PartialEq + Eq + Debug + Send + Sync + 'static;

    /// The additive identity.
    fn zero(&self) -> Self::Elem;
    /// The multiplicative identity.
    fn one(&self) -> Self::Elem;
    /// `a + b`.
    fn add(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem;
    /// `a - b`.
    fn sub(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem;
    /// `-a`.
    fn neg(&self, a: &Self::Elem) -> Self::Elem;
    /// `a * b`.
    fn mul(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem;
    /// The multiplicative inverse of `a`, or `None` when `a` is zero.
    fn inv(&self, a: &Self::Elem) -> Option<Self::Elem>;
    /// The image of the integer `v` in the field.
    fn from_u64(&self, v: u64) -> Self::Elem;
    /// The image of the integer `v` in the field (reduced modulo the
    /// characteristic in a finite field, exact in the rationals).
    fn from_biguint(&self, v: &BigUint) -> Self::Elem;

    /// Whether `a` is zero.
    fn is_zero(&self, a: &Self::Elem) -> bool {
        *a == self.zero()
    }
    /// Whether `a` is one.
    fn is_one(&self, a: &Self::Elem) -> bool {
        *a == self.one()
    }
    /// The image of the signed integer `v`.
    fn from_i64(&self, v: i64) -> Self::Elem {
        let m = self.from_u64(v.unsigned_abs());
        if v < 0 { self.neg(&m) } else { m }
    }
    /// The image of the signed integer `v`.
    fn from_bigint(&self, v: &BigInt) -> Self::Elem {
        let m = self.from_biguint(v.magnitude());
        if v.sign() == Sign::Minus {
            self.neg(&m)
        } else {
            m
        }
    }
    /// `a + a`.
    fn double(&self, a: &Self::Elem) -> Self::Elem {
        self.add(a, a)
    }
    /// `a * a`.
    fn square(&self, a: &Self::Elem) -> Self::Elem {
        self.mul(a, a)
    }
    /// `a / b`, or `None` when `b` is zero.
    fn div(&self, a: &Self::Elem, b: &Self::Elem) -> Option<Self::Elem> {
        self.inv(b).map(|bi| self.mul(a, &bi))
    }
    /// `*a += b`.
    fn add_assign(&self, a: &mut Self::Elem, b: &Self::Elem) {
        *a = self.add(a, b);
    }
    /// `*a -= b`.
    fn sub_assign(&self, a: &mut Self::Elem, b: &Self::Elem) {
        *a = self.sub(a, b);
    }
    /// `*a *= b`.
    fn mul_assign(&self, a: &mut Self::Elem, b: &Self::Elem) {
        *a = self.mul(a, b);
    }
    /// `a^e` by square-and-multiply.
    fn pow_u64(&self, a: &Self::Elem, mut e: u64) -> Self::Elem {
        let mut base = a.clone();
        let mut acc = self.one();
        while e > 0 {
            if e & 1 == 1 {
                self.mul_assign(&mut acc, &base);
            }
            e >>= 1;
            if e > 0 {
                base = self.square(&base);
            }
        }
        acc
    }
    /// `a^e` for an arbitrary-size exponent.
    fn pow(&self, a: &Self::Elem, e: &BigUint) -> Self::Elem {
        let mut acc = self.one();
        for i in (0..e.bits()).rev() {
            acc = self.square(&acc);
            if e.bit(i) {
                self.mul_assign(&mut acc, a);
            }
        }
        acc
    }
    /// The sum of `a[i] * b[i]` over the shorter of the two slices.
    ///
    /// Fields override this to reduce lazily (one reduction per many
    /// products); polynomial multiplication spends its time here.
    fn dot(&self, a: &[Self::Elem], b: &[Self::Elem]) -> Self::Elem {
        let mut acc = self.zero();
        for (x, y) in a.iter().zip(b) {
            self.add_assign(&mut acc, &self.mul(x, y));
        }
        acc
    }
    /// The sum of the elements.
    fn sum<'a, I>(&self, items: I) -> Self::Elem
    where
        I: IntoIterator<Item = &'a Self::Elem>,
    {
        let mut acc = self.zero();
        for x in items {
            self.add_assign(&mut acc, x);
        }
        acc
    }
    /// Inverts every element in place with one field inversion
    /// (Montgomery's trick). Returns `false`, leaving `v` unchanged, if any
    /// element is zero.
    fn batch_inv(&self, v: &mut [Self::Elem]) -> bool {
        if v.iter().any(|x| self.is_zero(x)) {
            return false;
        }
        // prefix[i] = v[0] * ... * v[i-1]
        let mut prefix = Vec::with_capacity(v.len());
        let mut acc = self.one();
        for x in v.iter() {
            prefix.push(acc.clone());
            acc = self.mul(&acc, x);
        }
        let Some(mut inv_acc) = self.inv(&acc) else {
            return false;
        };
        for (x, pre) in v.iter_mut().zip(prefix).rev() {
            let xi = self.mul(&inv_acc, &pre);
            inv_acc = self.mul(&inv_acc, x);
            *x = xi;
        }
        true
    }
    /// The coefficients of the product of two polynomials, given and
    /// returned little-endian: `a.len() + b.len() - 1` coefficients, or none
    /// when either factor is empty. Trailing zeros are neither required nor
    /// removed.
    ///
    /// Every polynomial product of [`poly`](crate::poly) goes through here.
    /// The default is Karatsuba's method over a schoolbook base case made of
    /// [`dot`](Self::dot) products (see
    /// [`KARATSUBA_THRESHOLD`](crate::poly::KARATSUBA_THRESHOLD)). The
    /// Mersenne fields and [`BigPrime`](crate::BigPrime) override it: above
    /// a size threshold they multiply by number-theoretic transforms modulo
    /// word-sized primes and reconstruct each coefficient modulo `p` by the
    /// Chinese remainder theorem (see their documentation).
    fn poly_mul(&self, a: &[Self::Elem], b: &[Self::Elem]) -> Vec<Self::Elem> {
        crate::poly::karatsuba::karatsuba(self, a, b)
    }

    /// From this many terms [`minimal_recurrence`](crate::minimal_recurrence)
    /// runs the half-GCD rather than Berlekamp-Massey. The crossover
    /// depends on how fast [`poly_mul`](Self::poly_mul) is: 2048 by
    /// default (measured on [`Goldilocks`](crate::Goldilocks)), 768 for an
    /// [`Fp64`](crate::Fp64) with transforms in the field.
    ///
    /// ```
    /// use field::{Field, Fp64, Goldilocks};
    ///
    /// assert_eq!(Goldilocks.half_gcd_threshold(), 2048);
    /// assert_eq!(Fp64::proth().half_gcd_threshold(), 768);
    /// ```
    fn half_gcd_threshold(&self) -> usize {
        DEFAULT_HALF_GCD_THRESHOLD
    }

    /// Above this many nodes
    /// [`solve_transposed_vandermonde`](crate::solve_transposed_vandermonde)
    /// evaluates by a remainder tree rather than Horner's rule:
    /// [`FAST_SOLVE_THRESHOLD`](crate::FAST_SOLVE_THRESHOLD) by default, lower
    /// for an [`Fp64`](crate::Fp64) with transforms in the field.
    fn remainder_tree_threshold(&self) -> usize {
        DEFAULT_REMAINDER_TREE_THRESHOLD
    }

    /// The butterflies of a number-theoretic transform of `v.len()` (a
    /// power of two) points, in place, or `false` to leave them to the
    /// generic code: forward, decimation in frequency (`(a + b, (a - b)
    /// w)`, natural order in, bit-reversed out); inverse, decimation in
    /// time (`(a + b w, a - b w)`), unscaled. Stage `h` (a span of `2h`)
    /// reads its twiddles `w` from `table[h..2h]`. [`Fp64`](crate::Fp64)
    /// runs them on its Montgomery words, vectorised where the CPU allows;
    /// an override must compute exactly these butterflies (the transforms
    /// are tested against the generic ones).
    ///
    /// # Panics
    ///
    /// Overrides may panic if `table` is shorter than `v`: the callers
    /// are this crate's transforms, which pass their own tables.
    fn transform_stages(&self, v: &mut [Self::Elem], table: &[Self::Elem], forward: bool) -> bool {
        let _ = (v, table, forward);
        false
    }

    /// `a_i <- a_i b_i` for every `i` (over [`Fp64`](crate::Fp64),
    /// vectorised where the CPU allows).
    ///
    /// # Panics
    ///
    /// If the slices differ in length.
    ///
    /// ```
    /// use field::{Field, Fp64};
    ///
    /// let f = Fp64::proth();
    /// let mut a: Vec<_> = (1..=9).map(|i| f.from_u64(i)).collect();
    /// let b: Vec<_> = (1..=9).map(|i| f.from_u64(10 * i)).collect();
    /// f.mul_each(&mut a, &b);
    /// assert_eq!(a[8], f.from_u64(810));
    /// ```
    fn mul_each(&self, a: &mut [Self::Elem], b: &[Self::Elem]) {
        assert_eq!(a.len(), b.len(), "mul_each of slices of different lengths");
        for (x, y) in a.iter_mut().zip(b) {
            self.mul_assign(x, y);
        }
    }

    /// `a_i <- a_i c` for every `i` (over [`Fp64`](crate::Fp64),
    /// vectorised where the CPU allows).
    ///
    /// ```
    /// use field::{Field, Fp64};
    ///
    /// let f = Fp64::proth();
    /// let mut a: Vec<_> = (1..=9).map(|i| f.from_u64(i)).collect();
    /// f.scale_each(&mut a, &f.from_u64(3));
    /// assert_eq!(a[8], f.from_u64(27));
    /// ```
    fn scale_each(&self, a: &mut [Self::Elem], c: &Self::Elem) {
        for x in a.iter_mut() {
            self.mul_assign(x, c);
        }
    }
}

/// [`Field::remainder_tree_threshold`]'s default, public as
/// [`FAST_SOLVE_THRESHOLD`](crate::FAST_SOLVE_THRESHOLD) (defined here so
/// that the trait does not reach into the Vandermonde module).
pub(crate) const DEFAULT_REMAINDER_TREE_THRESHOLD: usize = 1536;

/// [`Field::half_gcd_threshold`]'s default: measured on Goldilocks
/// (`locator/goldilocks` in the algorithms bench), Berlekamp-Massey and the
/// half-GCD take the same time at 2048 syndromes, and the half-GCD is
/// faster above.
pub(crate) const DEFAULT_HALF_GCD_THRESHOLD: usize = 2048;

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

// Karatsuba's method (a leaf module) sees a field through these.
impl<F: Field> RingOps for F {
    type Elem = F::Elem;
    fn ring_zero(&self) -> F::Elem {
        self.zero()
    }
    fn ring_add_assign(&self, a: &mut F::Elem, b: &F::Elem) {
        self.add_assign(a, b);
    }
    fn ring_sub_assign(&self, a: &mut F::Elem, b: &F::Elem) {
        self.sub_assign(a, b);
    }
    fn ring_dot(&self, a: &[F::Elem], b: &[F::Elem]) -> F::Elem {
        self.dot(a, b)
    }
}
