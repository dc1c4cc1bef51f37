//! Linear recurrences: Berlekamp-Massey and its half-GCD replacement
//! (the shortest recurrence that generates a sequence, the error locator
//! of a syndrome decoder), and the transposed Vandermonde solve that
//! recovers the counts once the locator's roots are known.

pub(crate) mod bm;
pub(crate) mod hgcd;
pub(crate) mod vandermonde;
