//! The decoders: the finite-field decoder of Algorithm 2 (line 3) and the
//! deterministic integer decoder of Appendix K.
//!
//! # The decoder contract (docs/threat-model.md §3)
//!
//! A decoder returns `Ok` only after it has checked that its answer's
//! re-encoding equals **every** one of the `2t + r` received syndromes
//! (over a field, by the locator's recurrence: `decode_field`); else it
//! returns a typed error. It never panics, and its work is bounded:
//! Berlekamp-Massey stops as soon as the locator would exceed degree `t`
//! (`O(t^2)`), root finding has a fixed attempt budget, the Vandermonde
//! solve and the check are `O(t (2t + r))`.
//!
//! # Detection bound
//!
//! Let the true aggregate `x` have `s` nonzero entries with
//! `t < s <= t + r`. Then no decoder output `y` (at most `t` nonzeros,
//! `y != x`) can match all `2t + r` syndromes, so the decoder *always*
//! rejects `x`.
//!
//! Proof sketch: if `y` matched, `x - y` would be a nonzero vector with at
//! most `s + t <= 2t + r` nonzero entries in the kernel of the
//! `(2t + r)`-row Vandermonde matrix `(k^(i-1))`, `i = 1..2t+r`, whose
//! columns are the distinct keys `k` of its support. Any `u <= 2t + r`
//! columns of that matrix have a nonzero `u x u` Vandermonde minor (the
//! first `u` rows; Appendix J of the paper), so they are linearly
//! independent and the kernel vector must be zero: a contradiction.
//! (`y = x` is impossible too, as `y` has at most `t < s` nonzeros.) For
//! `s > t + r` a false accept needs the locator to split into distinct
//! in-range roots *and* `r` further syndromes to match: about `p^-r` for
//! random garbage, but not for a crafted input, which is simply a different
//! valid aggregate (docs/threat-model.md §2.3).

// Untrusted input reaches this module (docs/threat-model.md §4): no
// panicking index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

// Decoders take input from outside: no panicking index or unwrap here
// (docs/threat-model.md §8). Field and big-integer arithmetic cannot overflow, so

use field::{
    Field, FieldError, FiniteField, Poly, Rational, Rationals, TransposedVandermonde, find_roots,
    integer_roots, minimal_recurrence, poly, solve_transposed_vandermonde,
};
use num_bigint::{BigInt, BigUint};
use num_traits::{One, Signed, Zero};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};

use crate::error::{DecodeError, SketchError, SketchResult, check_len};
use crate::integer::ValidIntegerParams;
use crate::params::ValidSketchParams;
use crate::sparse::SparseVector;

/// Domain separator of the root-finding RNG seed.
const ROOTS_SEED_PREFIX: &[u8] = b"syndrome-agg/v1/roots";

/// Maps a field error of the locator steps to the decoder contract's
/// names.
fn locator_error(e: FieldError, capacity: usize) -> SketchError {
    match e {
        FieldError::DegreeExceeded { needed, .. } => {
            SketchError::Decode(DecodeError::TooManyKeys { capacity, needed })
        }
        FieldError::NotSplit | FieldError::ZeroPolynomial | FieldError::NotIntegral => {
            SketchError::Decode(DecodeError::LocatorDoesNotSplit)
        }
        FieldError::RootsOutOfRange { low, high } => {
            SketchError::Decode(DecodeError::KeyOutOfRange {
                key: "(a root outside the domain)".into(),
                domain: format!("{low}..={high}"),
            })
        }
        FieldError::RepeatedRoot | FieldError::RepeatedNodes => {
            SketchError::Decode(DecodeError::RepeatedRoot)
        }
        FieldError::AttemptsExhausted { attempts } => {
            SketchError::Decode(DecodeError::Timeout { attempts })
        }
        other => SketchError::Field(other),
    }
}

/// The shortest recurrence of the syndromes (`field::minimal_recurrence`:
/// Berlekamp-Massey, or the half-GCD above a measured length), bounded by
/// `t`; returns the locator's reverse polynomial `x^L C(1/x)`, whose roots
/// are the keys.
///
/// The paper runs Berlekamp-Massey on the first `2t` syndromes; we run it
/// on all `2t + r`. For an aggregate of at most `t` keys both give the same
/// locator (its `2L <= 2t` first terms determine it). For `s > t` keys the
/// first `2t` terms generically have a recurrence of length exactly `t`,
/// so the over-capacity sum would only show later, as a locator that does
/// not split or a failed check; with `r >= 1` more terms its linear
/// complexity generically exceeds `t`, and Berlekamp-Massey stops with the
/// over-capacity error [`DecodeError::TooManyKeys`] at once. The final
/// check is unchanged, so the contract and the detection bound hold either
/// way; the cost is `O(t (2t + r))`.
pub(crate) fn locator<F: Field>(
    f: &F,
    s: &[F::Elem],
    capacity: usize,
) -> SketchResult<(usize, Poly<F::Elem>)> {
    let rec = minimal_recurrence(f, s, capacity).map_err(|e| locator_error(e, capacity))?;
    if rec.length > capacity {
        return Err(SketchError::Decode(DecodeError::TooManyKeys {
            capacity,
            needed: rec.length,
        }));
    }
    let rev = poly::reverse(f, &rec.connection, rec.length.saturating_add(1));
    Ok((rec.length, rev))
}

/// `S_i = sum_j v_j x_j^(i-1)` for `i = 1..m`: the re-encoding of the
/// decoder's check, by a tree of fractions above a few dozen terms
/// (`field::poly::power_sums`), so that the check costs `O(M(t) log t)`,
/// not `O(t (2t + r))`.
pub(crate) fn power_sums<F: Field>(
    f: &F,
    nodes: &[F::Elem],
    values: &[F::Elem],
    m: usize,
) -> SketchResult<Vec<F::Elem>> {
    poly::power_sums(f, nodes, values, m).map_err(SketchError::Field)
}

/// Compares a re-encoding with the received syndromes.
pub(crate) fn check_all<E: PartialEq>(received: &[E], reencoded: &[E]) -> SketchResult<()> {
    check_len(reencoded.len(), received.len())?;
    match received.iter().zip(reencoded).position(|(a, b)| a != b) {
        Some(i) => Err(SketchError::Decode(DecodeError::CheckMismatch {
            index: i.saturating_add(1),
        })),
        None => Ok(()),
    }
}

/// Located keys (as field elements) and their counts.
pub(crate) type NodesAndValues<E> = (Vec<E>, Vec<E>);

/// Maps a failed solve of the decoder's check to the contract's names: a
/// term the answer does not reproduce is [`DecodeError::CheckMismatch`]
/// at that (1-based) index plus `offset`.
pub(crate) fn solve_error(e: FieldError, capacity: usize, offset: usize) -> SketchError {
    match e {
        FieldError::SequenceMismatch { index } => SketchError::Decode(DecodeError::CheckMismatch {
            index: index.saturating_add(offset),
        }),
        FieldError::LengthMismatch { left, .. } => SketchError::Decode(DecodeError::TooManyKeys {
            capacity,
            needed: left,
        }),
        other => locator_error(other, capacity),
    }
}

/// The finite-field core: nodes and values of at most `capacity` terms that
/// reproduce all of `s`, nodes checked by `check_node`. The nodes come
/// back as the prepared [`TransposedVandermonde`] system, which the
/// wide-key decoder reuses for its payload channels.
///
/// The check of every syndrome is [`TransposedVandermonde::solve`]'s: one
/// polynomial product whose coefficients past the number of keys are zero
/// exactly when the answer's re-encoding equals every received syndrome,
/// the first nonzero one naming the first that differs (its proof is on
/// that method).
pub(crate) fn decode_field<F: FiniteField>(
    f: &F,
    s: &[F::Elem],
    capacity: usize,
    check_node: impl Fn(&F::Elem) -> SketchResult<()>,
) -> SketchResult<(TransposedVandermonde<F>, Vec<F::Elem>)> {
    if s.iter().all(|x| f.is_zero(x)) {
        let none = TransposedVandermonde::new(f, &[]).map_err(|e| locator_error(e, capacity))?;
        return Ok((none, Vec::new()));
    }
    let (len, rev) = locator(f, s, capacity)?;
    let nodes = if len == 0 {
        Vec::new()
    } else {
        let mut rng = roots_rng(f, s);
        let roots = find_roots(f, &rev, &mut rng).map_err(|e| locator_error(e, capacity))?;
        if roots.len() != len {
            return Err(SketchError::Decode(DecodeError::LocatorDoesNotSplit));
        }
        roots
    };
    for x in &nodes {
        check_node(x)?;
    }
    let system = TransposedVandermonde::new(f, &nodes).map_err(|e| locator_error(e, capacity))?;
    let values = system
        .solve(f, s)
        .map_err(|e| solve_error(e, capacity, 0))?;
    Ok((system, values))
}

/// The root-finding RNG: ChaCha20 seeded by SHA-256 of the syndromes.
/// Outputs are reproducible, and there is no fixed public sequence of
/// splitting elements an adversary could target.
fn roots_rng<F: FiniteField>(f: &F, s: &[F::Elem]) -> ChaCha20Rng {
    let mut h = Sha256::new();
    h.update(ROOTS_SEED_PREFIX);
    h.update(f.characteristic().to_bytes_le());
    let mut buf = Vec::with_capacity(f.byte_len());
    for x in s {
        buf.clear();
        f.write_bytes(x, &mut buf);
        h.update(&buf);
    }
    ChaCha20Rng::from_seed(h.finalize().into())
}

/// The finite-field decoder of a [`Sketch`](crate::Sketch) on raw
/// syndromes (Algorithm 2 of the paper, line 3).
pub(crate) fn decode_sketch<F: FiniteField>(
    params: &ValidSketchParams<F>,
    s: &[F::Elem],
) -> SketchResult<SparseVector<BigUint, F::Elem>> {
    let f = params.field();
    let expected = params.num_syndromes();
    check_len(expected, s.len())?;
    let domain = params.key_domain();
    let (system, values) = decode_field(f, s, params.capacity(), |x| {
        let k = f.to_biguint(x);
        if k.is_zero() || k > *domain {
            return Err(SketchError::Decode(DecodeError::KeyOutOfRange {
                key: k.to_string(),
                domain: domain.to_string(),
            }));
        }
        Ok(())
    })?;
    let mut entries: Vec<(BigUint, F::Elem)> = system
        .nodes()
        .iter()
        .map(|x| f.to_biguint(x))
        .zip(values)
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut total = BigUint::zero();
    for (k, v) in &entries {
        params.check_decoded_count(k, v, &mut total)?;
    }
    Ok(SparseVector::from_sorted(entries))
}

/// The deterministic decoder of an [`IntegerSketch`](crate::IntegerSketch)
/// on raw syndromes (Appendix K of the paper); `(key, count)` sorted by
/// key.
pub(crate) fn decode_integer(
    p: &ValidIntegerParams,
    syndromes: &[BigUint],
) -> SketchResult<Vec<(BigUint, BigUint)>> {
    let q = Rationals;
    let s: Vec<Rational> = syndromes.iter().map(|v| q.from_biguint(v)).collect();
    if s.iter().all(Rational::is_zero) {
        return Ok(Vec::new());
    }
    let t = p.capacity();
    let (len, rev) = locator(&q, &s, t)?;
    let roots: Vec<BigInt> = if len == 0 {
        Vec::new()
    } else {
        let high = BigInt::from(p.key_domain().clone());
        let r = integer_roots(&rev, &BigInt::one(), &high).map_err(|e| locator_error(e, t))?;
        if r.len() != len {
            return Err(SketchError::Decode(DecodeError::LocatorDoesNotSplit));
        }
        r
    };
    let mut keys = Vec::with_capacity(roots.len());
    for r in &roots {
        match r.to_biguint() {
            Some(k) if !k.is_zero() && k <= *p.key_domain() => keys.push(k),
            _ => {
                return Err(SketchError::Decode(DecodeError::KeyOutOfRange {
                    key: r.to_string(),
                    domain: p.key_domain().to_string(),
                }));
            }
        }
    }
    let nodes: Vec<Rational> = keys.iter().map(|k| q.from_biguint(k)).collect();
    let values = if nodes.is_empty() {
        Vec::new()
    } else {
        let first = s
            .get(..nodes.len())
            .ok_or(SketchError::Decode(DecodeError::LocatorDoesNotSplit))?;
        solve_transposed_vandermonde(&q, &nodes, first).map_err(|e| locator_error(e, t))?
    };
    let mut out = Vec::with_capacity(keys.len());
    let mut total = BigUint::zero();
    for (k, v) in keys.into_iter().zip(&values) {
        let count = match v.to_integer() {
            Some(c) if c.is_positive() => c.magnitude().clone(),
            _ => {
                return Err(SketchError::Decode(DecodeError::CountOutOfRange {
                    key: k.to_string(),
                    count: v.to_string(),
                    reason: "integer-sketch counts must be positive integers",
                }));
            }
        };
        total = crate::integer::big_add(&total, &count);
        if total > *p.max_total() {
            return Err(SketchError::Decode(DecodeError::CountOutOfRange {
                key: k.to_string(),
                count: count.to_string(),
                reason: "total count exceeds max_total",
            }));
        }
        out.push((k, count));
    }
    // Exact integer re-encode of every syndrome; the received values are
    // below 2^k, and so must the re-encoding be.
    let mut re = vec![BigUint::zero(); s.len()];
    for (k, c) in &out {
        let mut pw = c.clone();
        for (i, r) in re.iter_mut().enumerate() {
            *r = crate::integer::big_add(r, &pw);
            if i.saturating_add(1) < s.len() {
                pw = crate::integer::big_mul(&pw, k);
            }
        }
    }
    check_all(syndromes, &re)?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}
