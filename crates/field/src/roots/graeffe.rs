//! Root finding by tangent Graeffe transforms, for prime fields whose
//! `p - 1` is a power of two times a product of small primes (such as
//! `27 * 2^59 + 1`, or `65537`): the fast path of the factorization step
//! of line 3 of Algorithm 2 of the paper.
//!
//! # Method (Grenet, van der Hoeven and Lecerf, ISSAC 2015)
//!
//! Let `h` be monic of degree `d`, with distinct roots `r_i` (the keys of
//! a decoded sketch). Write `p - 1 = s m` with `s = 2^l` a few times `d`.
//!
//! 1. *Shift.* For a random `tau`, the roots `rho_i = r_i - tau` of
//!    `h(x + tau)` are nonzero and, as far as collisions below go,
//!    random (an adversary cannot line keys up against a `tau` it does not
//!    know in advance).
//! 2. *Tangent.* Over `F[e]/(e^2)`, `G(x) = h(x + tau + e)` has the roots
//!    `rho_i - e`.
//! 3. *Graeffe.* The Graeffe transform of order `m` (one transform of
//!    order `q` per odd prime `q` of `m`, then one of order two per
//!    remaining factor of two, each a handful of transforms of length
//!    about `d`) gives `H = H0 + e H1` with roots
//!    `(rho_i - e)^m = rho_i^m - m rho_i^(m-1) e`. The `rho_i^m` are
//!    `s`-th roots of unity.
//! 4. *Evaluation.* One transform of length `s` each evaluates `H0`,
//!    `H0'` and `H1` at every `s`-th root of unity `w`. Where `H0(w) = 0`
//!    and `H0'(w) != 0`, exactly one `rho` has `rho^m = w`, and comparing
//!    the `e` parts gives `H1(w) = m rho^(m-1) H0'(w)`, so
//!    `rho = m w H0'(w) / H1(w)` and the root is `rho + tau`.
//! 5. *Collisions.* Roots whose `rho^m` coincide (a fraction of about
//!    `1 - e^(-d/s)`, an eighth here) are not found; the found roots are
//!    divided out (the division also checks them) and the rest runs again
//!    with a fresh shift.
//!
//! The cost is `O(M(d) log p)` field operations in all, where the
//! equal-degree splitting of Cantor and Zassenhaus pays `O(M(d) log p)`
//! per level of its splitting tree, `O(M(d) log p log d)` in all.
//! Polynomials that do not split, or have repeated roots, leave a part no
//! round can reduce; after two rounds without progress that part goes to
//! Cantor-Zassenhaus, which names the error.

use rand::Rng;

use super::cz::cantor_zassenhaus;
use crate::par;
use crate::poly::transform::{Ntt, bit_reverse};
use crate::poly::{self, Poly, div_rem_slices, trim};
use crate::{Field, FieldError, FiniteField};

/// Graeffe rounds run while the rest has a higher degree than this; a
/// quadratic is solved directly. Measured over `Fp64::proth()` with the
/// rounds forced on and off (`find_roots` of `m` random roots, medians of
/// five, 2026-11-24): Cantor-Zassenhaus is faster only at `m = 2`
/// (12.6 us against 22.5 us); from `m = 3` the rounds win (24.6 against
/// 32.3 us), by 3.1x at 8, 5.6x at 16, 15x at 64 and 17x at 256.
const GRAEFFE_MIN_DEGREE: usize = 2;

/// The largest odd prime factor of `p - 1` allowed: a Graeffe transform
/// of order `q` costs about `2q` transforms.
const MAX_ODD_ORDER: u64 = 61;

/// Rounds in a row that may find less than an eighth of the remaining
/// roots before the rest goes to Cantor-Zassenhaus. A round on a
/// polynomial that splits finds seven eighths of them on average.
const MAX_STALLS: u32 = 2;

/// `s = 2^l` is the least power of two at least `2^SPREAD_LOG` times the
/// degree (or `2^two_adicity`, if smaller): the fraction of roots lost to
/// collisions is then about `1 - e^(-1/8)`, 12 percent.
const SPREAD_LOG: u32 = 3;

/// The odd prime factors of `p - 1`, with multiplicity, if they are all
/// at most [`MAX_ODD_ORDER`].
fn small_odd_factors<F: FiniteField>(f: &F) -> Option<Vec<u64>> {
    let p_minus_one = u64::try_from(f.characteristic() - 1u32).ok()?;
    let mut odd = p_minus_one >> f.two_adicity();
    let mut out = Vec::new();
    let mut q = 3;
    while odd > 1 && q <= MAX_ODD_ORDER {
        while odd.is_multiple_of(q) {
            out.push(q);
            odd /= q;
        }
        q += 2;
    }
    (odd == 1).then_some(out)
}

/// The roots of the monic `g` (degree at least one) when it splits into
/// distinct linear factors, in no particular order; the errors of
/// [`find_roots`](crate::find_roots). Falls back to Cantor-Zassenhaus for
/// fields that do not fit the method and for small degrees.
pub(crate) fn split_roots<F: FiniteField, R: Rng + ?Sized>(
    f: &F,
    g: &[F::Elem],
    rng: &mut R,
) -> Result<Vec<F::Elem>, FieldError> {
    split_roots_above(f, g, rng, GRAEFFE_MIN_DEGREE)
}

/// [`split_roots`] with Graeffe rounds down to degree `min_degree + 1`
/// (tests run it on tiny degrees, where every case can be enumerated).
fn split_roots_above<F: FiniteField, R: Rng + ?Sized>(
    f: &F,
    g: &[F::Elem],
    rng: &mut R,
    min_degree: usize,
) -> Result<Vec<F::Elem>, FieldError> {
    let Some(odd) = small_odd_factors(f) else {
        return cantor_zassenhaus(f, g, rng);
    };
    let mut rest = g.to_vec();
    let mut roots = Vec::new();
    let mut stalls = 0;
    while rest.len() > min_degree + 1 && stalls < MAX_STALLS {
        let degree = rest.len() - 1;
        let found = round(f, &odd, &rest, rng);
        let progress = found.len() >= degree / 8 && !found.is_empty();
        if !found.is_empty() {
            // The found roots are distinct roots of `rest` by the argument
            // in the module documentation; the division re-checks it.
            let product = poly::from_roots(f, &found);
            let (mut quot, mut rem) = div_rem_slices(f, &rest, product.coeffs());
            trim(f, &mut rem);
            if rem.is_empty() {
                trim(f, &mut quot);
                rest = quot;
                roots.extend(found);
            } else {
                stalls = MAX_STALLS;
                continue;
            }
        }
        if !progress {
            stalls += 1;
        }
    }
    if rest.len() > 1 {
        roots.extend(cantor_zassenhaus(f, &rest, rng)?);
    }
    Ok(roots)
}

/// One round (steps 1 to 4): the roots found, none if the round could not
/// run (a field too small for the degree, or an unlucky shift).
fn round<F: FiniteField, R: Rng + ?Sized>(
    f: &F,
    odd: &[u64],
    h: &[F::Elem],
    rng: &mut R,
) -> Vec<F::Elem> {
    let d = h.len() - 1;
    let k = f.two_adicity();
    let log_n = (d + 1).next_power_of_two().trailing_zeros();
    let Ok(p_minus_one) = u64::try_from(f.characteristic() - 1u32) else {
        return Vec::new();
    };
    // The shift needs d! invertible, the transforms 2^log_n points.
    if log_n > k || u64::try_from(d).map_or(true, |d| d >= p_minus_one) {
        return Vec::new();
    }
    let log_s = k.min(log_n + SPREAD_LOG);
    let (Some(ntt), Some(ntt_s)) = (Ntt::new(f, log_n), Ntt::new(f, log_s)) else {
        return Vec::new();
    };
    let tau = f.random(rng);
    let Some(shifted) = taylor_shift(f, h, &tau) else {
        return Vec::new();
    };
    if f.is_zero(&shifted[0]) {
        return Vec::new();
    }
    let mut a1 = poly::derivative(f, &Poly::from_coeffs(f, shifted.clone())).into_coeffs();
    a1.resize(d + 1, f.zero());
    let mut pair = (shifted, a1);
    for &q in odd {
        match graeffe_odd(f, &ntt, q, &pair) {
            Some(next) => pair = next,
            None => return Vec::new(),
        }
    }
    let Some((h0, h1)) = graeffe_two_steps(f, &ntt, pair, k - log_s) else {
        return Vec::new();
    };
    let dh0 = poly::derivative(f, &Poly::from_coeffs(f, h0.clone())).into_coeffs();
    let inputs = [&h0, &dh0, &h1];
    let mut evaluated = par::map(&inputs, ntt_s.len(), |c| ntt_s.forward_padded(f, c));
    let (Some(v1), Some(vd), Some(v0)) = (evaluated.pop(), evaluated.pop(), evaluated.pop()) else {
        return Vec::new();
    };
    let m = f.from_u64(p_minus_one >> log_s);
    let powers = Powers::new(f, log_s);
    let mut positions = Vec::new();
    let mut denominators = Vec::new();
    for (pos, ((a, b), c)) in v0.iter().zip(&vd).zip(&v1).enumerate() {
        if f.is_zero(a) && !f.is_zero(b) && !f.is_zero(c) {
            positions.push(pos);
            denominators.push(c.clone());
        }
    }
    if !f.batch_inv(&mut denominators) {
        return Vec::new();
    }
    positions
        .iter()
        .zip(&denominators)
        .map(|(&pos, inv_h1)| {
            let w = powers.get(f, bit_reverse(pos, log_s));
            let rho = f.mul(&f.mul(&m, &w), &f.mul(&vd[pos], inv_h1));
            f.add(&rho, &tau)
        })
        .collect()
}

/// `h(x + tau)`, by one product: with `a_i = i! h_i` and `b_j = tau^j / j!`,
/// the coefficient of `x^k` is `(sum_i a_i b_(i-k)) / k!`. `None` if some
/// `i! <= d!` is not invertible (the field is smaller than the degree).
fn taylor_shift<F: Field>(f: &F, h: &[F::Elem], tau: &F::Elem) -> Option<Vec<F::Elem>> {
    let d = h.len() - 1;
    let mut fact = Vec::with_capacity(d + 1);
    let mut acc = f.one();
    for i in 0..=d {
        if i > 0 {
            acc = f.mul(&acc, &f.from_u64(i as u64));
        }
        fact.push(acc.clone());
    }
    let mut inv_fact = fact.clone();
    if !f.batch_inv(&mut inv_fact) {
        return None;
    }
    // a reversed, so that the product's coefficient d - k is the sum.
    let a_rev: Vec<F::Elem> = (0..=d).rev().map(|i| f.mul(&h[i], &fact[i])).collect();
    let mut b = Vec::with_capacity(d + 1);
    let mut tp = f.one();
    for inv in &inv_fact {
        b.push(f.mul(&tp, inv));
        tp = f.mul(&tp, tau);
    }
    let c = poly::mul_slices(f, &a_rev, &b);
    Some((0..=d).map(|k| f.mul(&c[d - k], &inv_fact[k])).collect())
}

/// A polynomial over `F[e]/(e^2)`: the parts without and with `e`, both
/// with `d + 1` coefficients.
type Tangent<E> = (Vec<E>, Vec<E>);

/// `steps` Graeffe transforms of order two. With `A = E(x^2) + x O(x^2)`,
/// `B(x^2) = (-1)^d A(x) A(-x)` (the sign keeps it monic), and over
/// `F[e]/(e^2)` the `e` part of `A(x) A(-x)` is `A0(x) A1(-x) + A1(x)
/// A0(-x)`.
///
/// Each step needs `A` at the `2n`-th roots of unity (`x` and `-x` for
/// every `n`-th root `y = x^2`) and gives `B` at the `n`-th roots, which
/// are half of the next step's points: so a step costs one inverse
/// transform (for the coefficients of `B`) and one forward transform of
/// `B(w x)` (for the other half), per part, where recomputing from
/// coefficients would cost three. The values are kept as the two
/// transforms of `A(x)` and `A(w x)`, `w` a primitive `2n`-th root: in
/// each, the values at `x` and `-x` sit at adjacent positions `2v, 2v+1`
/// (bit-reversed order), and their product is `B` at position `v` of
/// the first half (even powers of the `n`-th root) or of the second.
fn graeffe_two_steps<F: FiniteField>(
    f: &F,
    ntt: &Ntt<F::Elem>,
    (a0, a1): Tangent<F::Elem>,
    steps: u32,
) -> Option<Tangent<F::Elem>> {
    if steps == 0 {
        return Some((a0, a1));
    }
    let len = a0.len();
    let negate = (len - 1) % 2 == 1;
    let w = f.two_adic_root(ntt.len().trailing_zeros() + 1)?;
    let both = |coeffs: &[F::Elem]| {
        (
            ntt.forward_padded(f, coeffs),
            twisted_transform(f, ntt, coeffs, &w),
        )
    };
    let work = ntt.len();
    let (mut v0, mut v1) = par::join(work, || both(&a0), || both(&a1));
    for step in 1..=steps {
        let (w0, w1) = pair_products(f, &v0, &v1, negate);
        // The two parts are independent: one core each.
        let last = step == steps;
        let next = |values: Vec<F::Elem>| {
            let mut c = values.clone();
            ntt.inverse(f, &mut c);
            c.truncate(len);
            let twisted = (!last).then(|| twisted_transform(f, ntt, &c, &w));
            (c, values, twisted)
        };
        let ((c0, w0, t0), (c1, w1, t1)) = par::join(work, || next(w0), || next(w1));
        match (t0, t1) {
            (Some(t0), Some(t1)) => {
                v0 = (w0, t0);
                v1 = (w1, t1);
            }
            _ => return Some((c0, c1)),
        }
    }
    None
}

/// The transforms of `A(x)` and `A(w x)`.
type TwoHalves<E> = (Vec<E>, Vec<E>);

/// The values of `B = (-1)^d A(x) A(-x)` (both parts) at the `n`-th roots,
/// in bit-reversed order, from those of `A` at the `2n`-th roots.
fn pair_products<F: Field>(
    f: &F,
    v0: &TwoHalves<F::Elem>,
    v1: &TwoHalves<F::Elem>,
    negate: bool,
) -> (Vec<F::Elem>, Vec<F::Elem>) {
    let n = v0.0.len();
    let mut w0 = Vec::with_capacity(n);
    let mut w1 = Vec::with_capacity(n);
    for (x0, x1) in [(&v0.0, &v1.0), (&v0.1, &v1.1)] {
        for (a, b) in x0.chunks_exact(2).zip(x1.chunks_exact(2)) {
            let p0 = f.mul(&a[0], &a[1]);
            let p1 = f.add(&f.mul(&a[0], &b[1]), &f.mul(&b[0], &a[1]));
            if negate {
                w0.push(f.neg(&p0));
                w1.push(f.neg(&p1));
            } else {
                w0.push(p0);
                w1.push(p1);
            }
        }
    }
    (w0, w1)
}

/// The Graeffe transform of odd prime order `q`: `B(x^q) = prod_(j<q)
/// A(z^j x)` for a primitive `q`-th root `z` (monic for odd `q`). With
/// `psi` of order `q n` and `psi^q` the transforms' `n`-th root, the
/// values of `A` at all `q n` powers of `psi` are the transforms of the
/// `q` twisted polynomials `A(psi^r x)`, and `B` at `psi^(q i)` is the
/// product of `A` at its `q`-th roots `psi^(i + j n)`. `2q` forward
/// transforms and two inverse ones; `None` if the roots do not exist.
fn graeffe_odd<F: FiniteField>(
    f: &F,
    ntt: &Ntt<F::Elem>,
    q: u64,
    (a0, a1): &Tangent<F::Elem>,
) -> Option<Tangent<F::Elem>> {
    let n = ntt.len();
    let log_n = n.trailing_zeros();
    let q_us = usize::try_from(q).ok()?;
    let psi = odd_twist_root(f, log_n, q)?;
    let mut twists = Vec::with_capacity(q_us);
    let mut twist = f.one();
    for _ in 0..q_us {
        twists.push(twist.clone());
        twist = f.mul(&twist, &psi);
    }
    let values = par::map(&twists, n * q_us, |c| {
        (
            twisted_transform(f, ntt, a0, c),
            twisted_transform(f, ntt, a1, c),
        )
    });
    let mut b0 = vec![f.zero(); n];
    let mut b1 = vec![f.zero(); n];
    for i in 0..n {
        let (mut acc0, mut acc1) = (f.one(), f.zero());
        for j in 0..q_us {
            let l = i + j * n;
            let (r, u) = (l % q_us, l / q_us);
            let pos = bit_reverse(u, log_n);
            let (x0, x1) = (&values[r].0[pos], &values[r].1[pos]);
            acc1 = f.add(&f.mul(&acc0, x1), &f.mul(&acc1, x0));
            acc0 = f.mul(&acc0, x0);
        }
        let pos = bit_reverse(i, log_n);
        b0[pos] = acc0;
        b1[pos] = acc1;
    }
    ntt.inverse(f, &mut b0);
    ntt.inverse(f, &mut b1);
    b0.truncate(a0.len());
    b1.truncate(a0.len());
    Some((b0, b1))
}

/// The transform of `a(c x)`.
fn twisted_transform<F: Field>(
    f: &F,
    ntt: &Ntt<F::Elem>,
    a: &[F::Elem],
    c: &F::Elem,
) -> Vec<F::Elem> {
    let mut t = f.one();
    let v: Vec<F::Elem> = a
        .iter()
        .map(|x| {
            let out = f.mul(x, &t);
            t = f.mul(&t, c);
            out
        })
        .collect();
    ntt.forward_padded(f, &v)
}

/// A primitive `q 2^log_n`-th root `psi` with `psi^q` equal to the
/// transforms' primitive `2^log_n`-th root `w`: `psi = w^u z` for
/// `u = q^-1 mod 2^log_n` and a primitive `q`-th root `z`.
fn odd_twist_root<F: FiniteField>(f: &F, log_n: u32, q: u64) -> Option<F::Elem> {
    let w = f.two_adic_root(log_n)?;
    let n = 1u64.checked_shl(log_n)?;
    // q is odd, so it is invertible modulo 2^log_n (Newton's iteration).
    let mut u: u64 = 1;
    for _ in 0..6 {
        u = u.wrapping_mul(2u64.wrapping_sub(q.wrapping_mul(u)));
    }
    let u = u & (n - 1);
    let p_minus_one = u64::try_from(f.characteristic() - 1u32).ok()?;
    // z = g^((p-1)/q) for the first g whose power is not one: q is prime,
    // so that power has order exactly q.
    let z = (2..1u64 << 16)
        .map(|g| f.pow_u64(&f.from_u64(g), p_minus_one / q))
        .find(|z| !f.is_one(z))?;
    Some(f.mul(&f.pow_u64(&w, u), &z))
}

/// The powers of a primitive `2^log`-th root by two table lookups and a
/// product (two tables of about `2^(log/2)` entries each, not one of
/// `2^log`).
struct Powers<E> {
    low_bits: u32,
    low: Vec<E>,
    high: Vec<E>,
}

impl<E: Clone> Powers<E> {
    fn new<F: FiniteField<Elem = E>>(f: &F, log: u32) -> Self {
        let low_bits = log / 2;
        let w = f.two_adic_root(log).unwrap_or_else(|| f.one());
        let table = |base: &E, len: usize| {
            let mut out = Vec::with_capacity(len);
            let mut t = f.one();
            for _ in 0..len {
                out.push(t.clone());
                t = f.mul(&t, base);
            }
            out
        };
        let low = table(&w, 1 << low_bits);
        let step = f.pow_u64(&w, 1 << low_bits);
        let high = table(&step, 1 << (log - low_bits));
        Self {
            low_bits,
            low,
            high,
        }
    }

    fn get<F: Field<Elem = E>>(&self, f: &F, j: usize) -> E {
        let mask = (1 << self.low_bits) - 1;
        f.mul(&self.high[j >> self.low_bits], &self.low[j & mask])
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::{Fp64, Goldilocks};

    fn planted<F: FiniteField>(f: &F, n: usize, rng: &mut ChaCha8Rng) -> Vec<F::Elem> {
        let mut roots: Vec<F::Elem> = Vec::with_capacity(n);
        while roots.len() < n {
            let r = f.random(rng);
            if !roots.contains(&r) {
                roots.push(r);
            }
        }
        roots
    }

    fn check<F: FiniteField>(f: &F, n: usize, seed: u64) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut roots = planted(f, n, &mut rng);
        let g = poly::from_roots(f, &roots);
        let mut found = split_roots(f, g.coeffs(), &mut rng).unwrap();
        let key = |r: &F::Elem| f.to_biguint(r);
        roots.sort_by_key(key);
        found.sort_by_key(key);
        assert_eq!(found, roots, "n = {n}");
    }

    #[test]
    fn finds_every_root_in_proth_fields() {
        let proth = Fp64::new(27 * (1 << 59) + 1).unwrap();
        let fermat = Fp64::new(65_537).unwrap();
        for (n, seed) in [(49, 1), (100, 2), (1000, 3), (3000, 4)] {
            check(&proth, n, seed);
            check(&fermat, n, seed);
        }
        // A field barely larger than the degree: collisions everywhere.
        check(&Fp64::new(7681).unwrap(), 2000, 5);
    }

    #[test]
    fn fields_outside_the_method_fall_back() {
        assert!(small_odd_factors(&Goldilocks).is_none());
        check(&Goldilocks, 200, 6);
    }

    #[test]
    fn one_round_finds_most_roots_with_their_exact_values() {
        let f = Fp64::new(27 * (1 << 59) + 1).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let roots = planted(&f, 4000, &mut rng);
        let g = poly::from_roots(&f, &roots);
        let odd = small_odd_factors(&f).unwrap();
        assert_eq!(odd, vec![3, 3, 3]);
        let found = round(&f, &odd, g.coeffs(), &mut rng);
        assert!(found.len() > 4000 * 3 / 4, "{}", found.len());
        for r in &found {
            assert!(roots.contains(r));
        }
    }

    /// Every monic polynomial of small degree over GF(257) (`256 = 2^8`:
    /// three order-two steps), GF(97) (`96 = 3 * 2^5`: an order-three step
    /// and an order-two one) and GF(13) (`12 = 3 * 2^2`): the Graeffe
    /// rounds, run down to degree one, agree with Cantor-Zassenhaus on
    /// every one, roots and errors alike.
    #[test]
    fn agrees_with_cantor_zassenhaus_exhaustively_over_tiny_fields() {
        for (p, max_deg) in [(257u64, 2u32), (97, 2), (13, 3)] {
            let f = Fp64::new(p).unwrap();
            let mut rng = ChaCha8Rng::seed_from_u64(p);
            for deg in 1..=max_deg {
                for code in 0..p.pow(deg) {
                    let mut g: Vec<_> = (0..deg).map(|i| f.from_u64(code / p.pow(i) % p)).collect();
                    g.push(f.one());
                    let sorted = |r: Result<Vec<_>, FieldError>| {
                        r.map(|mut v| {
                            v.sort_by_key(|x| f.to_u64(x));
                            v
                        })
                    };
                    let fast = sorted(split_roots_above(&f, &g, &mut rng, 0));
                    let slow = sorted(cantor_zassenhaus(&f, &g, &mut rng));
                    assert_eq!(fast, slow, "GF({p}): {g:?}");
                }
            }
        }
    }

    #[test]
    fn rejections_are_those_of_cantor_zassenhaus() {
        let f = Fp64::new(27 * (1 << 59) + 1).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let roots = planted(&f, 300, &mut rng);
        let g = poly::from_roots(&f, &roots);
        // Times an irreducible quadratic x^2 - z for a non-residue z.
        let minus_one = f.neg(&f.one());
        let z = (2..100)
            .map(|v| f.from_u64(v))
            .find(|z| f.pow_u64(z, (27u64 << 59) / 2) == minus_one)
            .unwrap();
        let quad = Poly::from_coeffs(&f, vec![f.neg(&z), f.zero(), f.one()]);
        let not_split = poly::mul(&f, &g, &quad);
        assert_eq!(
            split_roots(&f, not_split.coeffs(), &mut rng),
            Err(FieldError::NotSplit)
        );
        let double = poly::mul(&f, &g, &poly::from_roots(&f, &roots[..1]));
        assert_eq!(
            split_roots(&f, double.coeffs(), &mut rng),
            Err(FieldError::RepeatedRoot)
        );
    }
}
