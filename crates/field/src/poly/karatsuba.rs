//! Karatsuba multiplication of coefficient slices over any ring given by
//! the few operations it needs ([`RingOps`]). A leaf module: the `Field`
//! trait's default product and the polynomial code both use it, without
//! depending on each other.

/// The operations Karatsuba's method needs; every [`Field`](crate::Field)
/// has them.
pub(crate) trait RingOps {
    /// The elements.
    type Elem: Clone;
    /// `0`.
    fn ring_zero(&self) -> Self::Elem;
    /// `a += b`.
    fn ring_add_assign(&self, a: &mut Self::Elem, b: &Self::Elem);
    /// `a -= b`.
    fn ring_sub_assign(&self, a: &mut Self::Elem, b: &Self::Elem);
    /// `sum a[i] b[i]` over the common length.
    fn ring_dot(&self, a: &[Self::Elem], b: &[Self::Elem]) -> Self::Elem;
}

/// Below this many coefficients in the shorter factor, [`poly::mul`](crate::poly::mul) uses the
/// schoolbook method; at or above it, Karatsuba's.
///
/// The schoolbook base case computes each output coefficient as one
/// [`Field::dot`](crate::Field::dot) of contiguous slices (one factor is kept reversed), so a
/// field with lazy reduction (such as [`Mersenne61`](crate::Mersenne61),
/// which sums 64 products in a `u128` before reducing) pays one reduction
/// per output coefficient instead of one per product. That makes the base
/// case cheap, hence the fairly high threshold (tuned on `Mersenne61` with
/// the `algorithms` bench).
pub const KARATSUBA_THRESHOLD: usize = 32;

/// Karatsuba multiplication of coefficient slices with a schoolbook base
/// case; the default of [`Field::poly_mul`](crate::Field::poly_mul).
pub(crate) fn karatsuba<R: RingOps>(r: &R, a: &[R::Elem], b: &[R::Elem]) -> Vec<R::Elem> {
    karatsuba_with(r, a, b, &|a, b, out| schoolbook_add_into(r, a, b, out))
}

/// `out += a * b` for a base case: both factors nonempty, the shorter one
/// below [`KARATSUBA_THRESHOLD`].
pub(crate) type BaseCase<'a, E> = dyn Fn(&[E], &[E], &mut [E]) + 'a;

/// Karatsuba multiplication with a field-specific base case (fields with
/// lazy reduction accumulate whole base products in wide integers).
pub(crate) fn karatsuba_with<R: RingOps>(
    r: &R,
    a: &[R::Elem],
    b: &[R::Elem],
    base: &BaseCase<'_, R::Elem>,
) -> Vec<R::Elem> {
    if a.is_empty() || b.is_empty() {
        return Vec::new();
    }
    let mut out = vec![r.ring_zero(); a.len() + b.len() - 1];
    kara_add_into(r, a, b, &mut out, base);
    out
}

/// `out += a * b`, with `out.len() >= a.len() + b.len() - 1` and both
/// factors nonempty.
fn kara_add_into<R: RingOps>(
    r: &R,
    a: &[R::Elem],
    b: &[R::Elem],
    out: &mut [R::Elem],
    base: &BaseCase<'_, R::Elem>,
) {
    let (a, b) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let (la, lb) = (a.len(), b.len());
    if lb < KARATSUBA_THRESHOLD {
        base(a, b, out);
        return;
    }
    let h = la.div_ceil(2);
    if lb <= h {
        // Unbalanced: cut the long factor into pieces of the short one's
        // length, so that every recursive product is balanced.
        for (k, chunk) in a.chunks(lb).enumerate() {
            kara_add_into(r, chunk, b, &mut out[k * lb..], base);
        }
        return;
    }
    let (a0, a1) = a.split_at(h);
    let (b0, b1) = b.split_at(h);
    let z0 = karatsuba_with(r, a0, b0, base);
    let z2 = karatsuba_with(r, a1, b1, base);
    let mut sa = a0.to_vec();
    for (s, x) in sa.iter_mut().zip(a1) {
        r.ring_add_assign(s, x);
    }
    let mut sb = b0.to_vec();
    for (s, x) in sb.iter_mut().zip(b1) {
        r.ring_add_assign(s, x);
    }
    // z1 = (a0 + a1)(b0 + b1) - z0 - z2
    let mut z1 = karatsuba_with(r, &sa, &sb, base);
    for (z, x) in z1.iter_mut().zip(&z0) {
        r.ring_sub_assign(z, x);
    }
    for (z, x) in z1.iter_mut().zip(&z2) {
        r.ring_sub_assign(z, x);
    }
    for (o, x) in out.iter_mut().zip(&z0) {
        r.ring_add_assign(o, x);
    }
    for (o, x) in out[h..].iter_mut().zip(&z1) {
        r.ring_add_assign(o, x);
    }
    for (o, x) in out[2 * h..].iter_mut().zip(&z2) {
        r.ring_add_assign(o, x);
    }
}

/// `out += a * b` by the schoolbook method: output coefficient `k` is one
/// dot product of a slice of `a` with a slice of `b` reversed.
pub(crate) fn schoolbook_add_into<R: RingOps>(
    r: &R,
    a: &[R::Elem],
    b: &[R::Elem],
    out: &mut [R::Elem],
) {
    let (la, lb) = (a.len(), b.len());
    if la == 0 || lb == 0 {
        return;
    }
    let brev: Vec<R::Elem> = b.iter().rev().cloned().collect();
    for (k, o) in out.iter_mut().enumerate().take(la + lb - 1) {
        // sum over i of a[i] * b[k - i] = a[i] * brev[lb - 1 - k + i]
        let i0 = k.saturating_sub(lb - 1);
        let i1 = k.min(la - 1);
        let d = r.ring_dot(&a[i0..=i1], &brev[lb - 1 + i0 - k..]);
        r.ring_add_assign(o, &d);
    }
}
