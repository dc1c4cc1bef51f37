//! The split test and Cantor-Zassenhaus equal-degree splitting: root
//! finding over every finite field (the default of [`find_roots`](crate::find_roots)).

use num_bigint::BigUint;
use rand::Rng;

use crate::poly::gcd_slices;
use crate::poly::{Modulus, div_rem_slices, trim};
use crate::{FieldError, FiniteField};

/// Randomized attempts allowed per splitting step. For a valid input each
/// attempt fails with probability at most about one half (for large
/// fields; at most two thirds in the smallest), so running out means the
/// random source is broken, not bad luck.
const ATTEMPTS_PER_SPLIT: u32 = 64;

/// The roots of the monic `g` (degree at least one), in no particular
/// order, by the split test and Cantor-Zassenhaus splitting (steps 1 and
/// 2 of [`find_roots`](crate::find_roots)): what the tangent Graeffe
/// method falls back to.
pub(crate) fn cantor_zassenhaus<F: FiniteField, R: Rng + ?Sized>(
    f: &F,
    g: &[F::Elem],
    rng: &mut R,
) -> Result<Vec<F::Elem>, FieldError> {
    let n = g.len() - 1;
    if n == 1 {
        return Ok(vec![f.neg(&g[0])]);
    }
    let order = f.order();
    if order < BigUint::from(3u8) {
        return brute_force(f, g, &order);
    }
    let mut ctx = Ctx::new(f, order);
    split_test(f, g, &ctx)?;
    let mut roots = Vec::with_capacity(n);
    let mut stack = vec![g.to_vec()];
    while let Some(h) = stack.pop() {
        match h.len() - 1 {
            0 => {}
            1 => roots.push(f.neg(&h[0])),
            2 if ctx.quadratic(f, &h, rng, &mut roots) => {}
            _ => {
                let (a, b) = cz_split(f, &h, &ctx, rng)?;
                stack.push(a);
                stack.push(b);
            }
        }
    }
    Ok(roots)
}

/// Step 1: `x^q = x (mod g)`, and the classification of a failure.
fn split_test<F: FiniteField>(f: &F, g: &[F::Elem], ctx: &Ctx<F::Elem>) -> Result<(), FieldError> {
    let n = g.len() - 1;
    let m = Modulus::new(f, g.to_vec());
    let x = [f.zero(), f.one()];
    let xq = m.pow(f, &x, &ctx.order);
    if xq[..] == x[..] {
        return Ok(());
    }
    // t = x^q - x (mod g). Every irreducible factor of g is linear exactly
    // when g divides (x^q - x)^k for k at least the largest multiplicity,
    // and n is such a k.
    let mut t = xq;
    t.resize(2.max(t.len()), f.zero());
    t[1] = f.sub(&t[1], &f.one());
    trim(f, &mut t);
    if m.pow(f, &t, &BigUint::from(n)).is_empty() {
        Err(FieldError::RepeatedRoot)
    } else {
        Err(FieldError::NotSplit)
    }
}

/// One Cantor-Zassenhaus step on a monic `h` of degree at least two that
/// splits into distinct linear factors: two monic factors of lower degree.
#[allow(clippy::type_complexity)] // a pair of coefficient vectors
fn cz_split<F: FiniteField, R: Rng + ?Sized>(
    f: &F,
    h: &[F::Elem],
    ctx: &Ctx<F::Elem>,
    rng: &mut R,
) -> Result<(Vec<F::Elem>, Vec<F::Elem>), FieldError> {
    let m = Modulus::new(f, h.to_vec());
    let deg = h.len() - 1;
    for _ in 0..ATTEMPTS_PER_SPLIT {
        let a = f.random(rng);
        let mut w = m.pow(f, &[a, f.one()], &ctx.half);
        if w.is_empty() {
            w.push(f.zero());
        }
        w[0] = f.sub(&w[0], &f.one());
        trim(f, &mut w);
        let g = gcd_slices(f, h.to_vec(), w);
        let dg = g.len().saturating_sub(1);
        if dg > 0 && dg < deg {
            // g divides h, so the remainder is zero and the quotient monic.
            let (mut q, _) = div_rem_slices(f, h, &g);
            trim(f, &mut q);
            return Ok((g, q));
        }
    }
    Err(FieldError::AttemptsExhausted {
        attempts: ATTEMPTS_PER_SPLIT,
    })
}

/// The roots of `g` by trying every element, for fields of fewer than
/// three elements (where `(q-1)/2 = 0` leaves Cantor-Zassenhaus nothing to
/// work with).
fn brute_force<F: FiniteField>(
    f: &F,
    g: &[F::Elem],
    order: &BigUint,
) -> Result<Vec<F::Elem>, FieldError> {
    let n = g.len() - 1;
    let mut rest = g.to_vec();
    let mut roots = Vec::new();
    let count = u64::try_from(order).unwrap_or(0);
    for v in 0..count {
        let r = f.from_u64(v);
        let lin = [f.neg(&r), f.one()];
        let (q, rem) = div_rem_slices(f, &rest, &lin);
        if rem.iter().all(|c| f.is_zero(c)) {
            let (_, rem2) = div_rem_slices(f, &q, &lin);
            if q.len() > 1 && rem2.iter().all(|c| f.is_zero(c)) {
                return Err(FieldError::RepeatedRoot);
            }
            rest = q;
            roots.push(r);
        }
    }
    if roots.len() == n {
        Ok(roots)
    } else {
        Err(FieldError::NotSplit)
    }
}

/// Per-call constants: the order, `(q-1)/2`, and what square roots need.
struct Ctx<E> {
    order: BigUint,
    half: BigUint,
    /// `q - 1 = odd * 2^two_adicity`.
    odd: BigUint,
    two_adicity: u64,
    /// A quadratic non-residue, found on first need (Tonelli-Shanks).
    non_residue: Option<E>,
}

impl<E: Clone + PartialEq> Ctx<E> {
    fn new<F: FiniteField<Elem = E>>(_f: &F, order: BigUint) -> Self {
        let q1 = &order - 1u32;
        let two_adicity = q1.trailing_zeros().unwrap_or(0);
        let odd = &q1 >> two_adicity;
        Self {
            half: q1 >> 1u32,
            order,
            odd,
            two_adicity,
            non_residue: None,
        }
    }

    /// Pushes both roots of the monic quadratic `h` (which splits into
    /// distinct linear factors) and returns true, or returns false if the
    /// square root could not be found (then the caller splits generically).
    fn quadratic<F: FiniteField<Elem = E>, R: Rng + ?Sized>(
        &mut self,
        f: &F,
        h: &[E],
        rng: &mut R,
        roots: &mut Vec<E>,
    ) -> bool {
        // x^2 + b x + c: roots (-b +- sqrt(b^2 - 4c)) / 2.
        let (c, b) = (&h[0], &h[1]);
        let four_c = f.double(&f.double(c));
        let disc = f.sub(&f.square(b), &four_c);
        let Some(s) = self.sqrt(f, &disc, rng) else {
            return false;
        };
        let Some(half) = f.inv(&f.from_u64(2)) else {
            return false;
        };
        let nb = f.neg(b);
        roots.push(f.mul(&f.add(&nb, &s), &half));
        roots.push(f.mul(&f.sub(&nb, &s), &half));
        true
    }

    /// A square root of `d` (Tonelli-Shanks), or `None` if `d` is not a
    /// square or no non-residue turned up.
    fn sqrt<F: FiniteField<Elem = E>, R: Rng + ?Sized>(
        &mut self,
        f: &F,
        d: &E,
        rng: &mut R,
    ) -> Option<E> {
        if f.is_zero(d) {
            return Some(f.zero());
        }
        if self.two_adicity == 1 {
            // q = 3 (mod 4): d^((q+1)/4) is a root when one exists.
            let r = f.pow(d, &((&self.order + 1u32) >> 2u32));
            return (f.square(&r) == *d).then_some(r);
        }
        let z = match &self.non_residue {
            Some(z) => z.clone(),
            None => {
                let minus_one = f.neg(&f.one());
                let z = (0..ATTEMPTS_PER_SPLIT)
                    .map(|_| f.random(rng))
                    .find(|z| f.pow(z, &self.half) == minus_one)?;
                self.non_residue = Some(z.clone());
                z
            }
        };
        let mut m = self.two_adicity;
        let mut c = f.pow(&z, &self.odd);
        let mut t = f.pow(d, &self.odd);
        let mut r = f.pow(d, &((&self.odd + 1u32) >> 1u32));
        loop {
            if f.is_one(&t) {
                return Some(r);
            }
            // The least i with t^(2^i) = 1; i = m means d is not a square.
            let mut i = 0;
            let mut t2 = t.clone();
            while !f.is_one(&t2) {
                t2 = f.square(&t2);
                i += 1;
                if i == m {
                    return None;
                }
            }
            let mut b = c.clone();
            for _ in 0..m - i - 1 {
                b = f.square(&b);
            }
            m = i;
            c = f.square(&b);
            t = f.mul(&t, &c);
            r = f.mul(&r, &b);
        }
    }
}
