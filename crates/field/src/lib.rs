#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod error;
mod fields;
mod finite;
mod par;
pub mod poly;
mod recurrence;
mod roots;
mod traits;

pub use fields::primes;

pub use error::FieldError;
pub use fields::big::BigPrime;
pub use fields::ff_compat::{FfField, FfMersenne61, FfMersenne127, Fp61, Fp127};
pub use fields::fp64::{Fp64, Mont64, P_PROTH};
pub use fields::goldilocks::{Goldilocks, P64};
pub use fields::mersenne::{Mersenne61, Mersenne127, P61, P127};
pub use fields::rational::{Rational, Rationals};
pub use finite::FiniteField;
pub use poly::Poly;
pub use recurrence::bm::{Recurrence, berlekamp_massey};
pub use recurrence::hgcd::minimal_recurrence;
pub use recurrence::vandermonde::{
    FAST_SOLVE_THRESHOLD, TransposedVandermonde, solve_transposed_vandermonde,
};
pub use roots::find_roots;
pub use roots::introots::integer_roots;
pub use traits::Field;
