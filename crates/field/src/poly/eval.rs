//! Evaluation, derivatives, products of linear factors and reversal.

use super::{Poly, mul_slices, normalized};
use crate::Field;

/// Up to this many roots, [`from_roots`] multiplies the linear factors in
/// one by one (linear work each); above, it splits the roots in halves and
/// multiplies the two halves' products (a product tree), so that the large
/// products run at the speed of the field's fast multiplication.
const PRODUCT_LEAF: usize = 16;

/// `p(x)`, by Horner's rule.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// let p = Poly::from_coeffs(&f, vec![1, 2, 3]); // 3x^2 + 2x + 1
/// assert_eq!(poly::evaluate(&f, &p, &2), 17);
/// assert_eq!(poly::evaluate(&f, &Poly::zero(), &2), 0);
/// ```
pub fn evaluate<F: Field>(f: &F, p: &Poly<F::Elem>, x: &F::Elem) -> F::Elem {
    horner(f, p.coeffs(), x)
}

/// Horner's rule on a coefficient slice.
pub(crate) fn horner<F: Field>(f: &F, c: &[F::Elem], x: &F::Elem) -> F::Elem {
    let mut acc = f.zero();
    for a in c.iter().rev() {
        acc = f.add(&f.mul(&acc, x), a);
    }
    acc
}

/// The polynomial given by coefficient slice `c` at every point of `xs`.
///
/// Horner's rule is a chain of dependent multiplications; evaluating four
/// points in lockstep gives the processor four independent chains.
pub(crate) fn horner_many<F: Field>(f: &F, c: &[F::Elem], xs: &[F::Elem]) -> Vec<F::Elem> {
    let mut out = Vec::with_capacity(xs.len());
    let mut chunks = xs.chunks_exact(4);
    for x in &mut chunks {
        let mut acc = [f.zero(), f.zero(), f.zero(), f.zero()];
        for a in c.iter().rev() {
            for (s, xi) in acc.iter_mut().zip(x) {
                *s = f.add(&f.mul(s, xi), a);
            }
        }
        out.extend(acc);
    }
    out.extend(chunks.remainder().iter().map(|x| horner(f, c, x)));
    out
}

/// The formal derivative.
///
/// # Example
///
/// ```
/// use field::{Field, Fp64, Poly, poly};
///
/// let f = Fp64::new(5)?;
/// let c = |v: u64| f.from_u64(v);
/// let p = Poly::from_coeffs(&f, vec![c(1), c(1), c(0), c(0), c(0), c(1)]); // x^5 + x + 1
/// // 5x^4 + 1 = 1 in characteristic 5.
/// assert_eq!(poly::derivative(&f, &p), Poly::constant(&f, c(1)));
/// # Ok::<(), field::FieldError>(())
/// ```
pub fn derivative<F: Field>(f: &F, p: &Poly<F::Elem>) -> Poly<F::Elem> {
    let c = p.coeffs();
    let out = c
        .iter()
        .enumerate()
        .skip(1)
        .map(|(i, a)| f.mul(a, &f.from_u64(i as u64)))
        .collect();
    normalized(f, out)
}

/// The monic polynomial `prod_i (x - roots[i])` (one for no roots), by a
/// product tree.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, poly};
///
/// let f = Mersenne61;
/// let p = poly::from_roots(&f, &[1, 2]);
/// assert_eq!(p.coeffs(), &[2, f.neg(&3), 1]); // x^2 - 3x + 2
/// ```
pub fn from_roots<F: Field>(f: &F, roots: &[F::Elem]) -> Poly<F::Elem> {
    // A product of monic factors is monic, so it is already normalized.
    Poly::from_normalized(product_tree(f, roots))
}

fn product_tree<F: Field>(f: &F, roots: &[F::Elem]) -> Vec<F::Elem> {
    if roots.len() <= PRODUCT_LEAF {
        return linear_product(f, roots);
    }
    let (l, r) = roots.split_at(roots.len() / 2);
    mul_slices(f, &product_tree(f, l), &product_tree(f, r))
}

/// `prod_j (x - x_j)` over a few points, one linear factor at a time
/// (the leaves of the product trees).
pub(crate) fn linear_product<F: Field>(f: &F, points: &[F::Elem]) -> Vec<F::Elem> {
    let mut p = Vec::with_capacity(points.len() + 1);
    p.push(f.one());
    for r in points {
        // p <- p * (x - r), from the top coefficient down.
        p.push(f.zero());
        for i in (0..p.len()).rev() {
            let low = if i == 0 { f.zero() } else { p[i - 1].clone() };
            p[i] = f.sub(&low, &f.mul(r, &p[i]));
        }
    }
    p
}

/// `s_i += c x^(i-1)` for every `i`, with running powers: one term of
/// [`power_sums`](crate::poly::power_sums), `2 s.len()` field operations
/// (a sketch's insert of one key).
///
/// # Example
///
/// ```
/// use field::{Mersenne61, poly};
///
/// let mut s = vec![0u64; 4];
/// poly::add_power_sums(&Mersenne61, &mut s, &2, &7);
/// assert_eq!(s, vec![7, 14, 28, 56]);
/// ```
pub fn add_power_sums<F: Field>(f: &F, s: &mut [F::Elem], x: &F::Elem, c: &F::Elem) {
    let mut pw = c.clone();
    let n = s.len();
    for (i, si) in s.iter_mut().enumerate() {
        f.add_assign(si, &pw);
        if i + 1 < n {
            pw = f.mul(&pw, x);
        }
    }
}

/// `x^(len-1) p(1/x)` for `p` taken modulo `x^len`: the first `len`
/// coefficients of `p` (padded with zeros) in reverse order.
///
/// Reversal turns the error locator of Algorithm 2 of the paper,
/// `prod_j (1 - j x)`, into `prod_j (x - j)`, whose roots are the
/// positions `j`.
///
/// # Example
///
/// ```
/// use field::{Field, Mersenne61, Poly, poly};
///
/// let f = Mersenne61;
/// // 1 - 5x reversed over two coefficients is x - 5.
/// let locator = Poly::from_coeffs(&f, vec![1, f.neg(&5)]);
/// assert_eq!(poly::reverse(&f, &locator, 2), poly::from_roots(&f, &[5]));
/// // Over three coefficients it gains a factor x.
/// assert_eq!(poly::reverse(&f, &locator, 3).coeffs(), &[0, f.neg(&5), 1]);
/// ```
pub fn reverse<F: Field>(f: &F, p: &Poly<F::Elem>, len: usize) -> Poly<F::Elem> {
    let c = p.coeffs();
    let out = (0..len)
        .rev()
        .map(|i| c.get(i).cloned().unwrap_or_else(|| f.zero()))
        .collect();
    normalized(f, out)
}
