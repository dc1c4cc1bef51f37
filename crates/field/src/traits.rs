//! The field traits: a field is a *context* object, elements are plain data.

use core::fmt::Debug;

use num_bigint::{BigInt, BigUint, Sign};

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

    /// The product of `a` and `b` modulo `x^n - 1` for a power of two `n`
    /// (`n` coefficients: the product's coefficient `i` lands at `i mod
    /// n`), or `None` to leave the caller to a full [`poly_mul`](Self::poly_mul)
    /// (every field without transforms of length `n`). The default is
    /// [`poly_transform`](Self::poly_transform) of `b` and
    /// [`poly_mul_transformed`](Self::poly_mul_transformed).
    ///
    /// A field that multiplies by its own transforms gets this product
    /// from transforms of length `n`, where the full product needs the
    /// next power of two above `a.len() + b.len() - 1`: up to half the
    /// work. Division uses it where only a window of a product is
    /// wanted (the remainder `a - q b`, whose degree is known to be
    /// below `n`; the middle terms of a Newton step, where the wrapped
    /// terms fall on coefficients already known).
    ///
    /// ```
    /// use field::{Field, Fp64, Mersenne61};
    ///
    /// let f = Fp64::proth();
    /// let a: Vec<_> = (1..=300).map(|i| f.from_u64(i)).collect();
    /// let full = f.poly_mul(&a, &a);
    /// let wrapped = f.poly_mul_wrapped(&a, &a, 512).expect("Fp64::proth has the roots");
    /// for i in 0..512 {
    ///     let mut c = full[i];
    ///     if i + 512 < full.len() {
    ///         f.add_assign(&mut c, &full[i + 512]);
    ///     }
    ///     assert_eq!(wrapped[i], c);
    /// }
    /// assert_eq!(Mersenne61.poly_mul_wrapped(&[1], &[1], 512), None);
    /// ```
    fn poly_mul_wrapped(
        &self,
        a: &[Self::Elem],
        b: &[Self::Elem],
        n: usize,
    ) -> Option<Vec<Self::Elem>> {
        // One factor transformed, then multiplied in: the fields with
        // transforms implement only those two.
        let b_hat = self.poly_transform(b, n)?;
        self.poly_mul_transformed(a, &b_hat)
    }

    /// `b` folded modulo `x^n - 1` and transformed, for `n` a power of
    /// two, when the field multiplies by its own transforms of length `n`
    /// (`None` otherwise, the default): a factor prepared once for many
    /// products by [`poly_mul_transformed`](Self::poly_mul_transformed).
    ///
    /// Division by a fixed divisor keeps its divisor's and its inverse's
    /// transforms this way, so each reduction transforms only what
    /// changes (the remainder trees of [`poly::evaluate_many`](crate::poly::evaluate_many)
    /// and of the decoders' solve, [`poly::pow_mod`](crate::poly::pow_mod)).
    ///
    /// ```
    /// use field::{Field, Fp64, Goldilocks};
    ///
    /// let f = Fp64::proth();
    /// let a: Vec<_> = (1..=100).map(|i| f.from_u64(i)).collect();
    /// let b: Vec<_> = (1..=80).map(|i| f.from_u64(3 * i)).collect();
    /// let b_hat = f.poly_transform(&b, 256).expect("Fp64::proth has the roots");
    /// let product = f.poly_mul_transformed(&a, &b_hat).expect("the same length");
    /// assert_eq!(product[..179], f.poly_mul(&a, &b)[..]); // 179 < 256 terms: nothing wraps
    /// assert_eq!(Goldilocks.poly_transform(&[1, 2], 48), None); // not a power of two
    /// ```
    fn poly_transform(&self, b: &[Self::Elem], n: usize) -> Option<Vec<Self::Elem>> {
        let _ = (b, n);
        None
    }

    /// `a b mod (x^n - 1)`, `n = b_hat.len()`, for `b_hat` from
    /// [`poly_transform`](Self::poly_transform)`(b, n)`: `None` when the
    /// field has no transform of that length (the default). Any `a`
    /// length: `a` is folded first.
    fn poly_mul_transformed(
        &self,
        a: &[Self::Elem],
        b_hat: &[Self::Elem],
    ) -> Option<Vec<Self::Elem>> {
        let _ = (a, b_hat);
        None
    }

    /// The coefficients back from `n = v_hat.len()` transformed values
    /// (the inverse of [`poly_transform`](Self::poly_transform) on
    /// polynomials of fewer than `n` terms), or `None` when the field has
    /// no transform of that length (the default). Transforms are linear,
    /// so a sum of products of transformed factors needs one inverse: the
    /// half-GCD's 2x2 matrix products transform each entry once and
    /// invert once per entry of the result.
    ///
    /// ```
    /// use field::{Field, Fp64};
    ///
    /// let f = Fp64::proth();
    /// let a: Vec<_> = (1..=100).map(|i| f.from_u64(i)).collect();
    /// let a_hat = f.poly_transform(&a, 128).expect("Fp64::proth has the roots");
    /// let back = f.poly_untransform(a_hat).expect("the same length");
    /// assert_eq!(back[..100], a[..]);
    /// ```
    fn poly_untransform(&self, v_hat: Vec<Self::Elem>) -> Option<Vec<Self::Elem>> {
        let _ = v_hat;
        None
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
