//! Number-theoretic transforms in the field itself, for the prime fields
//! whose multiplicative group has a large power-of-two order subgroup
//! ([`Goldilocks`](crate::Goldilocks), and [`Fp64`](crate::Fp64) with a
//! prime such as `27 * 2^59 + 1`), through
//! [`FiniteField::two_adic_root`].
//!
//! One implementation serves polynomial products and the tangent Graeffe
//! root finder (`graeffe.rs`): a decimation-in-frequency forward transform
//! that takes coefficients in natural order and leaves the values in
//! bit-reversed order, and a decimation-in-time inverse that takes them
//! back. A product never needs the natural order of the values, so neither
//! direction spends a pass on the bit-reversal permutation.

use std::any::Any;
use std::sync::{Arc, Mutex, PoisonError};

use crate::{Field, FiniteField};

/// The transforms of length `n = 2^log`: their twiddle factors and `1/n`.
///
/// Stage `h` (a butterfly span of `2h`, for `h = 1, 2, 4, ..., n/2`) uses
/// the `h` powers `w_(2h)^j`, `j < h`, of a primitive `2h`-th root: they
/// are stored contiguously at `[h, 2h)`, so every stage reads its factors
/// in order (a single table read with a stride would miss the cache at
/// the small stages of a large transform).
///
/// Stage `h`'s factors do not depend on `n`, so the tables of a length
/// `N >= n` begin with those of `n`: the tables are built once per field,
/// for the largest length used so far, and shared (see [`tables`]).
pub(crate) struct Ntt<E> {
    log: u32,
    /// At least `2^log` entries; the transforms read the first `2^log`.
    forward: Arc<Vec<E>>,
    inverse: Arc<Vec<E>>,
    /// `1/n`, applied by the inverse transform.
    n_inv: E,
}

impl<E: Clone> Ntt<E> {
    /// The transforms of length `2^log`, or `None` if the field has no
    /// root of unity of that order. The tables come from the cache of
    /// [`tables`] when it holds this field's.
    pub(crate) fn new<F: FiniteField<Elem = E>>(f: &F, log: u32) -> Option<Self> {
        let (w, n_inv) = root_and_scale(f, log)?;
        let (forward, inverse) = tables(f, log, &w)?;
        Some(Self {
            log,
            forward,
            inverse,
            n_inv,
        })
    }

    /// As [`new`](Self::new), with the tables built afresh and not cached:
    /// what every product did before the cache, kept for the test that
    /// the cached tables are the same and for timing the two.
    #[cfg(test)]
    fn new_uncached<F: FiniteField<Elem = E>>(f: &F, log: u32) -> Option<Self> {
        let (w, n_inv) = root_and_scale(f, log)?;
        let (forward, inverse) = build_tables(f, log, &w)?;
        Some(Self {
            log,
            forward,
            inverse,
            n_inv,
        })
    }

    /// The transform length.
    pub(crate) fn len(&self) -> usize {
        1 << self.log
    }

    /// The values of the polynomial with coefficients `v` (length exactly
    /// [`len`](Self::len)) at the powers `w^0 .. w^(n-1)` of the primitive
    /// root, in bit-reversed order: position `i` holds the value at
    /// `w^bitrev(i)`.
    pub(crate) fn forward<F: Field<Elem = E>>(&self, f: &F, v: &mut [E]) {
        debug_assert_eq!(v.len(), self.len());
        if f.transform_stages(v, &self.forward[..v.len()], true) {
            return;
        }
        let mut h = v.len() / 2;
        while h >= 1 {
            let tw = &self.forward[h..2 * h];
            for chunk in v.chunks_exact_mut(2 * h) {
                let (lo, hi) = chunk.split_at_mut(h);
                for ((a, b), t) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let s = f.add(a, b);
                    *b = f.mul(&f.sub(a, b), t);
                    *a = s;
                }
            }
            h /= 2;
        }
    }

    /// The inverse of [`forward`](Self::forward): values in bit-reversed
    /// order in, coefficients in natural order out.
    pub(crate) fn inverse<F: Field<Elem = E>>(&self, f: &F, v: &mut [E]) {
        debug_assert_eq!(v.len(), self.len());
        if !f.transform_stages(v, &self.inverse[..v.len()], false) {
            self.inverse_stages(f, v);
        }
        f.scale_each(v, &self.n_inv);
    }

    /// The butterflies of [`inverse`](Self::inverse), unscaled, for any
    /// field.
    fn inverse_stages<F: Field<Elem = E>>(&self, f: &F, v: &mut [E]) {
        let n = v.len();
        let mut h = 1;
        while h < n {
            let tw = &self.inverse[h..2 * h];
            for chunk in v.chunks_exact_mut(2 * h) {
                let (lo, hi) = chunk.split_at_mut(h);
                for ((a, b), t) in lo.iter_mut().zip(hi.iter_mut()).zip(tw) {
                    let u = f.mul(b, t);
                    *b = f.sub(a, &u);
                    *a = f.add(a, &u);
                }
            }
            h *= 2;
        }
    }

    /// `v` zero-padded to the transform length and transformed.
    pub(crate) fn forward_padded<F: Field<Elem = E>>(&self, f: &F, v: &[E]) -> Vec<E> {
        let mut out = Vec::with_capacity(self.len());
        out.extend_from_slice(&v[..v.len().min(self.len())]);
        out.resize(self.len(), f.zero());
        self.forward(f, &mut out);
        out
    }
}

/// The number-theoretic transform of length `2^log` in a field with roots
/// of unity of that order: the kernel under [`mul`](crate::poly::mul) for
/// [`Goldilocks`](crate::Goldilocks) and [`Fp64`](crate::Fp64) with a
/// prime such as [`P_PROTH`](crate::P_PROTH), public so that it can be
/// measured against other libraries' transforms.
///
/// [`forward`](Self::forward) takes coefficients in natural order and
/// leaves the values in bit-reversed order (position `i` holds the value at
/// `w^bitrev(i)` for the primitive root `w` of
/// [`FiniteField::two_adic_root`]); [`inverse`](Self::inverse) takes them
/// back, scaled, so that the two are inverse to each other.
///
/// ```
/// use field::{Field, Fp64, poly::Transform};
///
/// let f = Fp64::proth();
/// let t = Transform::new(&f, 3).expect("2^59 divides p - 1");
/// let coeffs: Vec<_> = (1..=8).map(|i| f.from_u64(i)).collect();
/// let mut v = coeffs.clone();
/// t.forward(&f, &mut v);
/// assert_eq!(v[0], f.from_u64(36)); // the value at w^0 = 1
/// t.inverse(&f, &mut v);
/// assert_eq!(v, coeffs);
/// ```
pub struct Transform<E>(Ntt<E>);

impl<E> std::fmt::Debug for Transform<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transform")
            .field("len", &(1usize << self.0.log))
            .finish_non_exhaustive()
    }
}

impl<E: Clone> Transform<E> {
    /// The transforms of length `2^log`, or `None` if the field has no
    /// primitive `2^log`-th root of unity.
    pub fn new<F: FiniteField<Elem = E>>(f: &F, log: u32) -> Option<Self> {
        Ntt::new(f, log).map(Self)
    }

    /// The transform length, `2^log`.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: a transform has at least one point.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The values of the polynomial with coefficients `v` at the powers of
    /// the root, in bit-reversed order, in place (over
    /// [`Fp64`](crate::Fp64), vectorised where the CPU allows).
    ///
    /// # Panics
    ///
    /// If `v.len()` is not [`len`](Self::len).
    pub fn forward<F: FiniteField<Elem = E>>(&self, f: &F, v: &mut [E]) {
        assert_eq!(v.len(), self.len(), "a transform of {} points", self.len());
        self.0.forward(f, v);
    }

    /// The inverse of [`forward`](Self::forward), in place.
    ///
    /// # Panics
    ///
    /// If `v.len()` is not [`len`](Self::len).
    pub fn inverse<F: FiniteField<Elem = E>>(&self, f: &F, v: &mut [E]) {
        assert_eq!(v.len(), self.len(), "a transform of {} points", self.len());
        self.0.inverse(f, v);
    }
}

/// The stage tables of the transforms of `2^log` points in `f`, forward
/// and inverse, for the tests of fields' own butterflies.
#[cfg(test)]
pub(crate) fn stage_tables_for_tests<F: FiniteField>(
    f: &F,
    log: u32,
) -> (Vec<F::Elem>, Vec<F::Elem>) {
    let ntt = Ntt::new(f, log).expect("the field has the roots");
    let n = ntt.len();
    (
        ntt.forward[..n.max(2)].to_vec(),
        ntt.inverse[..n.max(2)].to_vec(),
    )
}

/// A primitive `2^log`-th root of unity and `1/2^log`, if they exist.
fn root_and_scale<F: FiniteField>(f: &F, log: u32) -> Option<(F::Elem, F::Elem)> {
    let n = 1usize.checked_shl(log)?;
    let w = f.two_adic_root(log)?;
    let n_inv = f.inv(&f.from_u64(u64::try_from(n).ok()?))?;
    Some((w, n_inv))
}

/// The forward and inverse stage tables of length `2^log` for the
/// primitive root `w`.
type Tables<E> = (Arc<Vec<E>>, Arc<Vec<E>>);

/// The forward and inverse stage tables of [`Ntt`] for the primitive
/// `2^log`-th root `w`, built afresh.
fn build_tables<F: Field>(f: &F, log: u32, w: &F::Elem) -> Option<Tables<F::Elem>> {
    let n = 1usize.checked_shl(log)?;
    let w_inv = f.inv(w)?;
    Some((
        Arc::new(stage_tables(f, w, n)),
        Arc::new(stage_tables(f, &w_inv, n)),
    ))
}

/// How many fields' tables [`tables`] keeps, most recently used first. A
/// program multiplies in one or two transform fields (the decoder's); the
/// bound keeps the memory bounded in one that cycles through many moduli.
const CACHED_FIELDS: usize = 4;

/// The longest transform whose tables [`tables`] keeps: `2^21` points
/// (the product of two polynomials of 10^6 terms), 32 MiB of tables
/// (forward and inverse) per field of 8-byte elements. Longer transforms
/// build theirs on each call, and the memory is returned. Building them
/// costs two products per point: with the vectorised butterflies that is
/// about a sixth of a product's time at `2^21` points, which is why the
/// bound went up from `2^20`.
const MAX_CACHED_LOG: u32 = 21;

/// One field's tables in the cache of [`tables`]: those of `2^log`
/// points, which serve every shorter transform too.
struct Cached<F: Field> {
    field: F,
    log: u32,
    forward: Arc<Vec<F::Elem>>,
    inverse: Arc<Vec<F::Elem>>,
}

/// The tables cached per field value, most recently used first, of
/// whatever field types the program uses (hence `Any`, and a list rather
/// than a map: the fields are compared with `==`, and there are at most
/// [`CACHED_FIELDS`] of them).
///
/// A cache in the context types themselves would not fit them: `Fp64` is
/// `Copy` and serialized as its bare modulus, and `Goldilocks` is
/// zero-sized. The lock is held only to look up and to insert, never
/// while a table is built.
static CACHE: Mutex<Vec<Box<dyn Any + Send + Sync>>> = Mutex::new(Vec::new());

/// The stage tables of length `2^log` for `f`, whose primitive `2^log`-th
/// root is `w` (from [`FiniteField::two_adic_root`]): the first `2^log`
/// entries of `f`'s cached tables if they are at least that long, else
/// tables built for `2^log` and cached for the next call.
///
/// A cached table serves a shorter length only if its stage of that
/// length holds the powers of `w` itself: true when the field's roots
/// are squares of one another, as in `Fp64` and `Goldilocks`, and checked,
/// so that a field whose roots are not gets fresh tables instead of
/// wrong ones. With it the entries are exactly those of fresh tables (the
/// same field elements, and elements are reduced, so the same values).
fn tables<F: FiniteField>(f: &F, log: u32, w: &F::Elem) -> Option<Tables<F::Elem>> {
    if log > MAX_CACHED_LOG {
        return build_tables(f, log, w);
    }
    let n = 1usize << log;
    {
        let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
        let hit = cache.iter().position(|entry| {
            entry.downcast_ref::<Cached<F>>().is_some_and(|c| {
                c.field == *f && c.log >= log && (log < 2 || c.forward[n / 2 + 1] == *w)
            })
        });
        if let Some(i) = hit {
            cache[..=i].rotate_right(1);
            let c = cache[0].downcast_ref::<Cached<F>>()?;
            return Some((Arc::clone(&c.forward), Arc::clone(&c.inverse)));
        }
    }
    let (forward, inverse) = build_tables(f, log, w)?;
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let same_field = cache.iter().position(|entry| {
        entry
            .downcast_ref::<Cached<F>>()
            .is_some_and(|c| c.field == *f)
    });
    // Another thread may have cached longer tables meanwhile; keep those.
    let longer_cached = same_field
        .and_then(|i| cache[i].downcast_ref::<Cached<F>>())
        .is_some_and(|c| c.log >= log);
    if !longer_cached {
        if let Some(i) = same_field {
            cache.remove(i);
        }
        cache.insert(
            0,
            Box::new(Cached {
                field: f.clone(),
                log,
                forward: Arc::clone(&forward),
                inverse: Arc::clone(&inverse),
            }),
        );
        cache.truncate(CACHED_FIELDS);
    }
    Some((forward, inverse))
}

/// The stage tables of [`Ntt`] for a primitive `n`-th root `w`.
fn stage_tables<F: Field>(f: &F, w: &F::Elem, n: usize) -> Vec<F::Elem> {
    let mut table = vec![f.zero(); n.max(2)];
    let mut h = n / 2;
    // The primitive 2h-th root for the current stage: w^(n / 2h).
    let mut root = w.clone();
    while h >= 1 {
        let mut t = f.one();
        for slot in &mut table[h..2 * h] {
            *slot = t.clone();
            t = f.mul(&t, &root);
        }
        root = f.square(&root);
        h /= 2;
    }
    table
}

/// The index whose `log` low bits are those of `i` reversed.
pub(crate) fn bit_reverse(i: usize, log: u32) -> usize {
    if log == 0 {
        0
    } else {
        i.reverse_bits() >> (usize::BITS - log)
    }
}

pub(crate) mod products;

#[cfg(test)]
mod tests;
