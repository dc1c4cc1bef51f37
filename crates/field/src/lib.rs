#![doc = include_str!("../README.md")]
#![cfg_attr(not(test), warn(clippy::unwrap_used))]

mod big;
mod bm;
mod choice;
mod error;
mod ff_compat;
mod fp64;
mod goldilocks;
mod hgcd;
mod introots;
mod karatsuba;
mod mersenne;
mod multipoint;
mod par;
pub mod poly;
pub mod primes;
mod rational;
mod roots;
mod traits;
mod transform;
mod vandermonde;
mod word;

pub use big::BigPrime;
pub use bm::{Recurrence, berlekamp_massey};
pub use error::FieldError;
pub use ff_compat::{FfField, FfMersenne61, FfMersenne127, Fp61, Fp127};
pub use fp64::{Fp64, Mont64, P_PROTH};
pub use goldilocks::{Goldilocks, P64};
pub use hgcd::minimal_recurrence;
pub use introots::integer_roots;
pub use mersenne::{Mersenne61, Mersenne127, P61, P127};
pub use poly::Poly;
pub use rational::{Rational, Rationals};
pub use roots::find_roots;
pub use traits::{Field, FiniteField};
pub use vandermonde::{FAST_SOLVE_THRESHOLD, TransposedVandermonde, solve_transposed_vandermonde};
