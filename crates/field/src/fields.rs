//! The fields themselves, one file each: the Mersenne primes 2^61 - 1 and
//! 2^127 - 1, GF(2^64 - 2^32 + 1), 64-bit primes in Montgomery form,
//! primes of any size chosen at run time, the rationals, and the `ff`
//! adapter; with the word arithmetic they share, the primes and the
//! choice of the cheapest field for a bound.

pub(crate) mod big;
pub(crate) mod choice;
pub(crate) mod ff_compat;
pub(crate) mod fp64;
pub(crate) mod goldilocks;
pub(crate) mod mersenne;
pub mod primes;
pub(crate) mod rational;
pub(crate) mod word;
