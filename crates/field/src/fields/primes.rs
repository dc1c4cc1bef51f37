//! Primes: a deterministic primality test, the smallest prime above a bound,
//! and the choice of the cheapest field that can hold a bound.
//!
//! Every client and the server must agree on the modulus from public
//! parameters alone, so nothing here is randomized: primality is the
//! Baillie-PSW test of `glass_pumpkin` (a strong base-2 Miller-Rabin test and
//! a strong Lucas test, with fixed parameters; no composite passing it is
//! known, and none exists below `2^64`).

use core::convert::Infallible;

use num_bigint::BigUint;
use num_traits::ToPrimitive;

// The field choice lives in its own file (it uses the fields, which use
// the primality test here); its public path stays `field::primes`.
pub use crate::fields::choice::{
    FieldChoice, FieldKind, FieldVisitor, cheapest_field, cheapest_field_kind, fp64_above,
};

/// `glass_pumpkin` keeps an RNG parameter in its Baillie-PSW entry point for
/// API compatibility but never draws from it; this stand-in makes that
/// visible (it would produce only zeros).
struct NoRng;

impl rand::TryRng for NoRng {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(0)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(0)
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        dst.fill(0);
        Ok(())
    }
}

/// Whether `n` is prime, by the deterministic Baillie-PSW test.
///
/// # Example
///
/// ```
/// use field::primes::is_prime;
/// use num_bigint::BigUint;
///
/// assert!(is_prime(&BigUint::from(2u8)));
/// assert!(is_prime(&((BigUint::from(1u8) << 127u32) - 1u32)));
/// assert!(!is_prime(&BigUint::from(561u32))); // a Carmichael number
/// ```
pub fn is_prime(n: &BigUint) -> bool {
    glass_pumpkin::prime::strong_check_with(n, &mut NoRng)
}

/// Odd primes below this bound sieve the candidates of [`next_prime`].
const SIEVE_LIMIT: u32 = 1 << 16;
/// Candidates examined per sieve window.
const WINDOW: usize = 1 << 12;

fn small_odd_primes() -> Vec<u32> {
    let n = SIEVE_LIMIT as usize;
    let mut composite = vec![false; n];
    let mut out = Vec::new();
    for i in 3..n {
        if i % 2 == 1 && !composite[i] {
            out.push(u32::try_from(i).unwrap_or(u32::MAX));
            let mut j = i * i;
            while j < n {
                composite[j] = true;
                j += i;
            }
        }
    }
    out
}

/// The smallest prime `>= bound`, deterministically.
///
/// Candidates are sieved by every odd prime below `2^16` one window at a
/// time, and the survivors are tested in increasing order with
/// [`is_prime`]. The expected cost is about `ln(bound) / 10` Baillie-PSW
/// tests: milliseconds up to a few hundred bits, seconds at several
/// thousand.
///
/// # Example
///
/// ```
/// use field::primes::next_prime;
/// use num_bigint::BigUint;
///
/// assert_eq!(next_prime(&BigUint::from(0u8)), BigUint::from(2u8));
/// assert_eq!(next_prime(&BigUint::from(14u8)), BigUint::from(17u8));
/// assert_eq!(next_prime(&BigUint::from(17u8)), BigUint::from(17u8));
/// // The smallest prime above 2^64 is 2^64 + 13.
/// let b = BigUint::from(1u8) << 64u32;
/// assert_eq!(next_prime(&b), b + 13u32);
/// ```
pub fn next_prime(bound: &BigUint) -> BigUint {
    if *bound <= BigUint::from(2u8) {
        return BigUint::from(2u8);
    }
    // Small bounds: the sieve primes themselves may be the answer.
    if bound.to_u32().is_some_and(|b| b < SIEVE_LIMIT) {
        let mut c = bound.clone();
        while !is_prime(&c) {
            c += 1u32;
        }
        return c;
    }
    let primes = small_odd_primes();
    // Start at the first odd candidate >= bound.
    let mut base = bound.clone();
    if !base.bit(0) {
        base += 1u32;
    }
    loop {
        // Candidate i of this window is base + 2i.
        let mut sieve = vec![true; WINDOW];
        for &q in &primes {
            let q64 = u64::from(q);
            let r = (&base % q).to_u64().unwrap_or(0);
            // Smallest i with base + 2i = 0 (mod q): i = (-r) * 2^-1 mod q.
            let inv2 = q64.div_ceil(2); // 2 * (q+1)/2 = 1 (mod q)
            let start = ((q64 - r) % q64) * inv2 % q64;
            let mut i = usize::try_from(start).unwrap_or(usize::MAX);
            let step = q as usize;
            while i < WINDOW {
                sieve[i] = false;
                i += step;
            }
        }
        for (i, alive) in sieve.iter().enumerate() {
            if *alive {
                let c = &base + BigUint::from(2 * i);
                if is_prime(&c) {
                    return c;
                }
            }
        }
        base += BigUint::from(2 * WINDOW);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sieve_agrees_with_trial_division_above_the_sieve_limit() {
        let start = u64::from(SIEVE_LIMIT) - 50;
        for b in start..start + 3000 {
            let expect = (b..).find(|&c| (2..c).take_while(|d| d * d <= c).all(|d| c % d != 0));
            assert_eq!(next_prime(&BigUint::from(b)).to_u64(), expect, "bound {b}");
        }
    }
}
