//! The rationals on `num-bigint`, for the deterministic decoder of
//! Appendix K and for exact probability computations in tests.
//!
//! `num-rational` would be the well-kept crate for this, but its current
//! release (0.4) is built on `num-bigint` 0.4 while the workspace is on
//! 0.5 (the `rand_core` 0.10 generation); mixing them would put two
//! incompatible `BigInt` types in one build. The type below is small: a
//! normalized fraction and the four operations.

use core::cmp::Ordering;
use core::fmt;
use core::ops::{Add, Div, Mul, Neg, Sub};

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::Field;

/// An exact rational number `num / den`, always normalized: `den > 0` and
/// `gcd(|num|, den) = 1`, so equal values have equal representations.
///
/// # Example
///
/// ```
/// use field::Rational;
///
/// let a = Rational::new(6, 4).unwrap(); // 3/2
/// let b = Rational::from_integer(-1);
/// assert_eq!((&a + &b).to_string(), "1/2");
/// assert!(a > b);
/// assert_eq!(Rational::new(1, 0), None);
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Rational {
    num: BigInt,
    den: BigUint,
}

impl Rational {
    /// `num / den`, or `None` when `den` is zero.
    pub fn new(num: impl Into<BigInt>, den: impl Into<BigInt>) -> Option<Self> {
        let (num, den) = (num.into(), den.into());
        if den.is_zero() {
            return None;
        }
        let (num, den) = if den.is_negative() {
            (-num, -den)
        } else {
            (num, den)
        };
        Some(Self::normalize(num, den.into_parts().1))
    }

    /// The integer `v` as a rational.
    pub fn from_integer(v: impl Into<BigInt>) -> Self {
        Self {
            num: v.into(),
            den: BigUint::one(),
        }
    }

    /// Zero.
    pub fn zero() -> Self {
        Self::from_integer(0)
    }

    /// One.
    pub fn one() -> Self {
        Self::from_integer(1)
    }

    fn normalize(num: BigInt, den: BigUint) -> Self {
        let g = num.magnitude().gcd(&den);
        if g.is_one() || g.is_zero() {
            return Self { num, den };
        }
        Self {
            num: BigInt::from_biguint(num.sign(), num.magnitude() / &g),
            den: den / g,
        }
    }

    /// The numerator (carrying the sign).
    pub fn numer(&self) -> &BigInt {
        &self.num
    }

    /// The denominator (positive).
    pub fn denom(&self) -> &BigUint {
        &self.den
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.num.is_zero()
    }

    /// Whether the value is an integer.
    pub fn is_integer(&self) -> bool {
        self.den.is_one()
    }

    /// The value as an integer, if it is one.
    pub fn to_integer(&self) -> Option<BigInt> {
        self.is_integer().then(|| self.num.clone())
    }

    /// The multiplicative inverse, or `None` for zero.
    pub fn recip(&self) -> Option<Self> {
        if self.num.is_zero() {
            return None;
        }
        let num = BigInt::from_biguint(self.num.sign(), self.den.clone());
        Some(Self {
            num,
            den: self.num.magnitude().clone(),
        })
    }

    /// The nearest `f64` (for display and statistics, never for decisions).
    pub fn to_f64(&self) -> f64 {
        // Scale so that both parts fit comfortably in an f64 before dividing.
        let shift = self.num.bits().max(self.den.bits()).saturating_sub(1000);
        let n = (&self.num >> shift).to_f64().unwrap_or(f64::NAN);
        let d = (&self.den >> shift).to_f64().unwrap_or(f64::NAN);
        n / d
    }
}

impl fmt::Debug for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Rational {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den.is_one() {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

impl Ord for Rational {
    fn cmp(&self, other: &Self) -> Ordering {
        let l = &self.num * BigInt::from(other.den.clone());
        let r = &other.num * BigInt::from(self.den.clone());
        l.cmp(&r)
    }
}

impl PartialOrd for Rational {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Add for &Rational {
    type Output = Rational;
    fn add(self, rhs: &Rational) -> Rational {
        if self.den == rhs.den {
            return Rational::normalize(&self.num + &rhs.num, self.den.clone());
        }
        let num =
            &self.num * BigInt::from(rhs.den.clone()) + &rhs.num * BigInt::from(self.den.clone());
        Rational::normalize(num, &self.den * &rhs.den)
    }
}

impl Sub for &Rational {
    type Output = Rational;
    fn sub(self, rhs: &Rational) -> Rational {
        self + &(-rhs)
    }
}

impl Neg for &Rational {
    type Output = Rational;
    fn neg(self) -> Rational {
        Rational {
            num: -&self.num,
            den: self.den.clone(),
        }
    }
}

impl Mul for &Rational {
    type Output = Rational;
    fn mul(self, rhs: &Rational) -> Rational {
        Rational::normalize(&self.num * &rhs.num, &self.den * &rhs.den)
    }
}

impl Div for &Rational {
    type Output = Option<Rational>;
    /// `None` when dividing by zero.
    fn div(self, rhs: &Rational) -> Option<Rational> {
        rhs.recip().map(|r| self * &r)
    }
}

macro_rules! forward_owned {
    ($($tr:ident $m:ident -> $out:ty),*) => {$(
        impl $tr for Rational {
            type Output = $out;
            fn $m(self, rhs: Self) -> $out {
                (&self).$m(&rhs)
            }
        }
    )*};
}
forward_owned!(Add add -> Rational, Sub sub -> Rational, Mul mul -> Rational, Div div -> Option<Rational>);

impl From<BigInt> for Rational {
    fn from(v: BigInt) -> Self {
        Self::from_integer(v)
    }
}

impl From<i64> for Rational {
    fn from(v: i64) -> Self {
        Self::from_integer(v)
    }
}

/// The field of rational numbers, as a zero-sized context over [`Rational`].
///
/// It is a [`Field`] but not a [`FiniteField`](crate::FiniteField): it has
/// no modulus, no uniform distribution and no fixed-width encoding.
///
/// # Example
///
/// ```
/// use field::{Field, Rationals};
///
/// let q = Rationals;
/// let third = q.inv(&q.from_u64(3)).unwrap();
/// assert_eq!(q.mul(&third, &q.from_i64(-6)), q.from_i64(-2));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rationals;

impl Field for Rationals {
    type Elem = Rational;

    fn zero(&self) -> Rational {
        Rational::zero()
    }
    fn one(&self) -> Rational {
        Rational::one()
    }
    fn is_zero(&self, a: &Rational) -> bool {
        a.is_zero()
    }
    fn add(&self, a: &Rational, b: &Rational) -> Rational {
        a + b
    }
    fn sub(&self, a: &Rational, b: &Rational) -> Rational {
        a - b
    }
    fn neg(&self, a: &Rational) -> Rational {
        -a
    }
    fn mul(&self, a: &Rational, b: &Rational) -> Rational {
        a * b
    }
    fn inv(&self, a: &Rational) -> Option<Rational> {
        a.recip()
    }
    fn from_u64(&self, v: u64) -> Rational {
        Rational::from_integer(v)
    }
    fn from_biguint(&self, v: &BigUint) -> Rational {
        Rational::from_integer(BigInt::from(v.clone()))
    }
    fn from_bigint(&self, v: &BigInt) -> Rational {
        Rational::from_integer(v.clone())
    }
}

impl Rational {
    /// The sign of the value.
    pub fn sign(&self) -> Sign {
        self.num.sign()
    }
}
