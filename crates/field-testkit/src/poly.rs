//! Generic property suites for [`field::poly`], instantiated for every
//! field (the rationals included) with [`poly_suite!`](crate::poly_suite).
//!
//! Every suite takes the field *value* and a sampler `sample(f, rng)` for
//! its elements ([`uniform`] for finite fields, [`small_rational`] for the
//! rationals), and checks the fast algorithms against naive reference
//! implementations written here with nothing but the field operations.
//! Each case draws from its own seeded RNG and the assertion messages name
//! the case, so a failure replays exactly.

use field::{Field, FiniteField, Poly, Rational, Rationals, poly};
use num_bigint::BigUint;
use rand::{Rng, RngExt};
use rand_chacha::ChaCha8Rng;

/// Uniform elements of a finite field.
pub fn uniform<F: FiniteField>(f: &F, rng: &mut ChaCha8Rng) -> F::Elem {
    f.random(rng)
}

/// Small rationals: integers in `[-20, 20]` over denominators in `[1, 4]`,
/// zero a tenth of the time (so that cancellations happen).
pub fn small_rational(_: &Rationals, rng: &mut ChaCha8Rng) -> Rational {
    if rng.random_range(0..10) == 0 {
        return Rational::zero();
    }
    let num: i64 = rng.random_range(-20..=20);
    let den: i64 = rng.random_range(1..=4);
    Rational::new(num, den).unwrap()
}

/// The RNG of case `i` of a named suite.
pub fn case_rng(label: &str, i: usize) -> ChaCha8Rng {
    crate::rng(&format!("{label}/{i}"))
}

/// A random polynomial with `len` coefficients before normalization
/// (the top one is nonzero unless the sampler insists on zeros).
pub fn random_poly<F: Field, S>(
    f: &F,
    sample: &S,
    rng: &mut ChaCha8Rng,
    len: usize,
) -> Poly<F::Elem>
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    let mut c: Vec<F::Elem> = (0..len).map(|_| sample(f, rng)).collect();
    if let Some(top) = c.last_mut()
        && f.is_zero(top)
    {
        *top = f.one();
    }
    Poly::from_coeffs(f, c)
}

/// A nonzero element.
pub fn nonzero<F: Field, S>(f: &F, sample: &S, rng: &mut ChaCha8Rng) -> F::Elem
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    loop {
        let v = sample(f, rng);
        if !f.is_zero(&v) {
            return v;
        }
    }
}

/// `count` distinct elements (by rejection: the field must have more than
/// `count` elements the sampler can produce).
pub fn distinct<F: Field, S>(f: &F, sample: &S, rng: &mut ChaCha8Rng, count: usize) -> Vec<F::Elem>
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    let mut out: Vec<F::Elem> = Vec::with_capacity(count);
    let mut tries = 0usize;
    while out.len() < count {
        let v = sample(f, rng);
        if !out.contains(&v) {
            out.push(v);
        }
        tries += 1;
        assert!(
            tries < 100 * count + 1000,
            "cannot draw {count} distinct elements"
        );
    }
    out
}

/// Schoolbook product with plain field operations: the reference.
pub fn naive_mul<F: Field>(f: &F, a: &Poly<F::Elem>, b: &Poly<F::Elem>) -> Poly<F::Elem> {
    let (ac, bc) = (a.coeffs(), b.coeffs());
    if ac.is_empty() || bc.is_empty() {
        return Poly::zero();
    }
    let mut out = vec![f.zero(); ac.len() + bc.len() - 1];
    for (i, x) in ac.iter().enumerate() {
        for (j, y) in bc.iter().enumerate() {
            out[i + j] = f.add(&out[i + j], &f.mul(x, y));
        }
    }
    Poly::from_coeffs(f, out)
}

/// Horner-free evaluation with explicit powers: the reference.
pub fn naive_eval<F: Field>(f: &F, p: &Poly<F::Elem>, x: &F::Elem) -> F::Elem {
    let mut acc = f.zero();
    let mut power = f.one();
    for c in p.coeffs() {
        acc = f.add(&acc, &f.mul(c, &power));
        power = f.mul(&power, x);
    }
    acc
}

/// Ring laws: commutativity, associativity, distributivity, identities,
/// negation, subtraction, scaling, and `deg(ab) = deg a + deg b`.
pub fn ring_laws<F: Field, S>(f: &F, sample: S, cases: usize, max_len: usize)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    let one = Poly::one(f);
    for i in 0..crate::cases(u32::try_from(cases).unwrap()) as usize {
        let rng = &mut case_rng("poly/ring_laws", i);
        let draw = |rng: &mut ChaCha8Rng| {
            let len = rng.random_range(0..=max_len);
            random_poly(f, &sample, rng, len)
        };
        let (a, b, c) = (draw(rng), draw(rng), draw(rng));
        let k = sample(f, rng);
        let ctx = format!("case {i}: a={a:?} b={b:?} c={c:?}");
        assert_eq!(poly::add(f, &a, &b), poly::add(f, &b, &a), "{ctx}");
        assert_eq!(
            poly::add(f, &poly::add(f, &a, &b), &c),
            poly::add(f, &a, &poly::add(f, &b, &c)),
            "{ctx}"
        );
        assert_eq!(poly::mul(f, &a, &b), poly::mul(f, &b, &a), "{ctx}");
        assert_eq!(
            poly::mul(f, &poly::mul(f, &a, &b), &c),
            poly::mul(f, &a, &poly::mul(f, &b, &c)),
            "{ctx}"
        );
        assert_eq!(
            poly::mul(f, &a, &poly::add(f, &b, &c)),
            poly::add(f, &poly::mul(f, &a, &b), &poly::mul(f, &a, &c)),
            "{ctx}"
        );
        assert_eq!(poly::add(f, &a, &Poly::zero()), a, "{ctx}");
        assert_eq!(poly::mul(f, &a, &one), a, "{ctx}");
        assert!(poly::mul(f, &a, &Poly::zero()).is_zero(), "{ctx}");
        assert!(poly::add(f, &a, &poly::neg(f, &a)).is_zero(), "{ctx}");
        assert_eq!(
            poly::sub(f, &a, &b),
            poly::add(f, &a, &poly::neg(f, &b)),
            "{ctx}"
        );
        assert_eq!(
            poly::scale(f, &a, &k),
            poly::mul(f, &a, &Poly::constant(f, k.clone())),
            "{ctx}"
        );
        match (a.degree(), b.degree()) {
            (Some(da), Some(db)) => {
                assert_eq!(poly::mul(f, &a, &b).degree(), Some(da + db), "{ctx}");
            }
            _ => assert!(poly::mul(f, &a, &b).is_zero(), "{ctx}"),
        }
        for p in [&a, &b, &c] {
            assert!(p.leading().is_none_or(|l| !f.is_zero(l)), "not normalized");
        }
    }
}

/// Fast multiplication (Karatsuba, or the field's own NTT or Kronecker
/// product) equals the schoolbook reference on sizes around and well above
/// [`poly::KARATSUBA_THRESHOLD`] and the fields' NTT thresholds, balanced
/// and unbalanced, including squares (sizes above `max_len` are skipped).
pub fn mul_matches_naive<F: Field, S>(f: &F, sample: S, max_len: usize)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    let t = poly::KARATSUBA_THRESHOLD;
    let mut sizes = vec![
        (1, 1),
        (2, 7),
        (t - 1, t - 1),
        (t, t),
        (t + 1, t),
        (t, 3),
        (2 * t - 1, 2 * t + 1),
        (2 * t, t + 1),
        (3 * t + 5, t + 2),
        (4 * t + 3, 4 * t + 1),
        (8, 8),
        (9, 17),
        (16, 16),
        (17, 40),
        (64, 64),
        (130, 7),
        // Above the NTT thresholds of the fields that have one.
        (257, 260),
        (300, 600),
    ];
    sizes.retain(|&(x, y)| x.max(y) <= max_len);
    for (i, &(la, lb)) in sizes.iter().enumerate() {
        let rng = &mut case_rng("poly/mul_matches_naive", i);
        let a = random_poly(f, &sample, rng, la);
        let b = random_poly(f, &sample, rng, lb);
        assert_eq!(
            poly::mul(f, &a, &b),
            naive_mul(f, &a, &b),
            "sizes {la} x {lb}"
        );
        assert_eq!(
            poly::mul(f, &a, &a),
            naive_mul(f, &a, &a),
            "square of size {la}"
        );
    }
}

/// [`Field::poly_mul_wrapped`], where the field has it, is the full
/// product folded modulo `x^n - 1` (lengths below, at and above `n`, and
/// factors that fold several times); a length that is not a power of two
/// is declined.
pub fn mul_wrapped_matches_folded<F: Field, S>(f: &F, sample: S, max_len: usize)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    let mut sizes = vec![
        (1, 1, 1),
        (16, 16, 16),
        (20, 30, 32),
        (64, 64, 128),
        (100, 100, 64),
        (300, 600, 512),
        (1000, 17, 256),
    ];
    sizes.retain(|&(x, y, _)| x.max(y) <= max_len);
    for (i, &(la, lb, n)) in sizes.iter().enumerate() {
        let rng = &mut case_rng("poly/mul_wrapped_matches_folded", i);
        let a: Vec<F::Elem> = (0..la).map(|_| sample(f, rng)).collect();
        let b: Vec<F::Elem> = (0..lb).map(|_| sample(f, rng)).collect();
        let Some(w) = f.poly_mul_wrapped(&a, &b, n) else {
            continue;
        };
        let mut want = vec![f.zero(); n];
        for (k, c) in f.poly_mul(&a, &b).iter().enumerate() {
            f.add_assign(&mut want[k % n], c);
        }
        assert_eq!(w, want, "sizes {la} x {lb} modulo x^{n} - 1");
    }
    let ones = vec![f.one(); 64];
    assert_eq!(f.poly_mul_wrapped(&ones, &ones, 48), None);
}

/// `a = q b + r` with `deg r < deg b`, across [`poly::NEWTON_THRESHOLD`];
/// `rem` agrees; division by zero is an error; exact division recovers the
/// factor.
pub fn div_rem_roundtrip<F: Field, S>(f: &F, sample: S, cases: usize, max_len: usize)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    assert_eq!(
        poly::div_rem(f, &Poly::one(f), &Poly::zero()),
        Err(field::FieldError::DivisionByZero)
    );
    let nt = poly::NEWTON_THRESHOLD;
    let mut fixed = vec![
        (3 * nt, nt + 1),
        (2 * nt + 5, nt),
        (nt + 10, 2 * nt),
        (2 * nt, nt + 2),
    ];
    fixed.retain(|&(x, y)| x.max(y) <= max_len);
    let n = crate::cases(u32::try_from(cases).unwrap()) as usize;
    for i in 0..n + fixed.len() {
        let rng = &mut case_rng("poly/div_rem", i);
        let (la, lb) = fixed
            .get(i)
            .copied()
            .unwrap_or_else(|| (rng.random_range(0..=max_len), rng.random_range(1..=max_len)));
        let a = random_poly(f, &sample, rng, la);
        let b = random_poly(f, &sample, rng, lb.max(1));
        let (q, r) = poly::div_rem(f, &a, &b).unwrap();
        let ctx = format!("case {i}: sizes {la} / {lb}");
        assert_eq!(poly::add(f, &poly::mul(f, &q, &b), &r), a, "{ctx}");
        assert!(r.degree() < b.degree() || r.is_zero(), "{ctx}");
        assert_eq!(poly::rem(f, &a, &b).unwrap(), r, "{ctx}");
        let prod = poly::mul(f, &a, &b);
        let (q2, r2) = poly::div_rem(f, &prod, &b).unwrap();
        assert_eq!(q2, a, "{ctx}: exact quotient");
        assert!(r2.is_zero(), "{ctx}: exact remainder");
    }
}

/// `gcd` is monic, divides both arguments, and a common factor `c` always
/// divides it; after dividing out the gcd the cofactors are coprime;
/// `gcd(a, 0)` is `a` made monic and `gcd(0, 0) = 0`.
pub fn gcd_properties<F: Field, S>(f: &F, sample: S, cases: usize, max_len: usize)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    assert!(poly::gcd(f, &Poly::zero(), &Poly::zero()).is_zero());
    for i in 0..crate::cases(u32::try_from(cases).unwrap()) as usize {
        let rng = &mut case_rng("poly/gcd", i);
        let draw = |rng: &mut ChaCha8Rng, hi: usize| {
            let len = rng.random_range(1..=hi.max(1));
            random_poly(f, &sample, rng, len)
        };
        let c = draw(rng, max_len / 3);
        let a = poly::mul(f, &draw(rng, max_len / 2), &c);
        let b = poly::mul(f, &draw(rng, max_len / 2), &c);
        let g = poly::gcd(f, &a, &b);
        let ctx = format!("case {i}");
        assert!(g.leading().is_some_and(|l| f.is_one(l)), "{ctx}: not monic");
        assert!(
            poly::rem(f, &a, &g).unwrap().is_zero(),
            "{ctx}: g does not divide a"
        );
        assert!(
            poly::rem(f, &b, &g).unwrap().is_zero(),
            "{ctx}: g does not divide b"
        );
        assert!(
            poly::rem(f, &g, &c).unwrap().is_zero(),
            "{ctx}: c does not divide g"
        );
        let (ca, _) = poly::div_rem(f, &a, &g).unwrap();
        let (cb, _) = poly::div_rem(f, &b, &g).unwrap();
        assert_eq!(poly::gcd(f, &ca, &cb), Poly::one(f), "{ctx}: cofactors");
        assert_eq!(
            poly::gcd(f, &a, &b),
            poly::gcd(f, &b, &a),
            "{ctx}: symmetry"
        );
        assert_eq!(
            poly::gcd(f, &a, &Poly::zero()),
            poly::make_monic(f, &a),
            "{ctx}"
        );
    }
}

/// `pow_mod` against repeated multiplication for small exponents, the
/// exponent law `b^(e1 + e2) = b^e1 b^e2` for exponents of `exp_bits`
/// bits, with moduli on both sides of [`poly::NEWTON_THRESHOLD`]; a zero
/// modulus is an error. (Over the rationals coefficients double in size
/// with every squaring, so keep `exp_bits` small there.)
pub fn pow_mod_matches_naive<F: Field, S>(
    f: &F,
    sample: S,
    cases: usize,
    max_len: usize,
    exp_bits: u32,
) where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    assert_eq!(
        poly::pow_mod(f, &Poly::x(f), &BigUint::from(3u8), &Poly::zero()),
        Err(field::FieldError::DivisionByZero)
    );
    for i in 0..crate::cases(u32::try_from(cases).unwrap()) as usize {
        let rng = &mut case_rng("poly/pow_mod", i);
        let mlen = if i % 3 == 2 {
            (poly::NEWTON_THRESHOLD + 2).min(max_len)
        } else {
            rng.random_range(1..=max_len.min(20))
        };
        let m = random_poly(f, &sample, rng, mlen.max(1));
        let blen = rng.random_range(0..=2 * mlen);
        let base = random_poly(f, &sample, rng, blen);
        let e: u32 = rng.random_range(0..12);
        let mut naive = poly::rem(f, &Poly::one(f), &m).unwrap();
        for _ in 0..e {
            naive = poly::rem(f, &poly::mul(f, &naive, &base), &m).unwrap();
        }
        let ctx = format!("case {i}: deg m = {mlen}, e = {e}");
        assert_eq!(
            poly::pow_mod(f, &base, &BigUint::from(e), &m).unwrap(),
            naive,
            "{ctx}"
        );
        let draw_exp = |rng: &mut ChaCha8Rng| {
            let mut e = BigUint::from(rng.next_u64());
            while e.bits() < u64::from(exp_bits) {
                e = (e << 64u32) + rng.next_u64();
            }
            let surplus = e.bits() - u64::from(exp_bits);
            e >> surplus
        };
        let e1 = draw_exp(rng);
        let e2 = draw_exp(rng);
        let lhs = poly::pow_mod(f, &base, &(&e1 + &e2), &m).unwrap();
        let p1 = poly::pow_mod(f, &base, &e1, &m).unwrap();
        let p2 = poly::pow_mod(f, &base, &e2, &m).unwrap();
        let rhs = poly::rem(f, &poly::mul(f, &p1, &p2), &m).unwrap();
        assert_eq!(lhs, rhs, "{ctx}: exponent law");
    }
}

/// `from_roots` is monic of the right degree, vanishes exactly at its
/// roots, equals the naive product of linear factors (across the product
/// tree's leaf size), and `evaluate` agrees with explicit powers.
pub fn from_roots_and_evaluate<F: Field, S>(f: &F, sample: S, cases: usize, max_len: usize)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    assert_eq!(poly::from_roots(f, &[]), Poly::one(f));
    for i in 0..crate::cases(u32::try_from(cases).unwrap()) as usize {
        let rng = &mut case_rng("poly/from_roots", i);
        let k = if i % 4 == 3 {
            max_len
        } else {
            rng.random_range(0..=max_len)
        };
        let roots: Vec<F::Elem> = (0..k).map(|_| sample(f, rng)).collect();
        let p = poly::from_roots(f, &roots);
        let ctx = format!("case {i}: {k} roots");
        assert_eq!(p.degree(), Some(k), "{ctx}");
        assert!(p.leading().is_some_and(|l| f.is_one(l)), "{ctx}");
        let mut naive = Poly::one(f);
        for r in &roots {
            naive = naive_mul(f, &naive, &Poly::from_coeffs(f, vec![f.neg(r), f.one()]));
        }
        assert_eq!(p, naive, "{ctx}");
        for r in roots.iter().take(8) {
            assert!(f.is_zero(&poly::evaluate(f, &p, r)), "{ctx}");
        }
        let x = sample(f, rng);
        let expect = roots
            .iter()
            .fold(f.one(), |acc, r| f.mul(&acc, &f.sub(&x, r)));
        assert_eq!(poly::evaluate(f, &p, &x), expect, "{ctx}");
        assert_eq!(poly::evaluate(f, &p, &x), naive_eval(f, &p, &x), "{ctx}");
    }
}

/// The derivative is linear, obeys the product rule, kills constants, and
/// maps `x^n` to `n x^(n-1)`; `reverse` twice is the identity on
/// polynomials with a nonzero constant term.
pub fn derivative_and_reverse<F: Field, S>(f: &F, sample: S, cases: usize, max_len: usize)
where
    S: Fn(&F, &mut ChaCha8Rng) -> F::Elem,
{
    for n in 0..6u64 {
        let xn = Poly::monomial(f, f.one(), usize::try_from(n).unwrap());
        let expect = if n == 0 {
            Poly::zero()
        } else {
            Poly::monomial(f, f.from_u64(n), usize::try_from(n - 1).unwrap())
        };
        assert_eq!(poly::derivative(f, &xn), expect, "x^{n}");
    }
    for i in 0..crate::cases(u32::try_from(cases).unwrap()) as usize {
        let rng = &mut case_rng("poly/derivative", i);
        let la = rng.random_range(0..=max_len);
        let lb = rng.random_range(0..=max_len);
        let a = random_poly(f, &sample, rng, la);
        let b = random_poly(f, &sample, rng, lb);
        let d = |p: &Poly<F::Elem>| poly::derivative(f, p);
        let ctx = format!("case {i}");
        assert_eq!(
            d(&poly::add(f, &a, &b)),
            poly::add(f, &d(&a), &d(&b)),
            "{ctx}"
        );
        assert_eq!(
            d(&poly::mul(f, &a, &b)),
            poly::add(f, &poly::mul(f, &d(&a), &b), &poly::mul(f, &a, &d(&b))),
            "{ctx}: product rule"
        );
        assert!(d(&Poly::constant(f, sample(f, rng))).is_zero(), "{ctx}");
        let c = a.coeffs().to_vec();
        if c.first().is_some_and(|c0| !f.is_zero(c0)) {
            let len = c.len();
            let r = poly::reverse(f, &a, len);
            assert_eq!(poly::reverse(f, &r, len), a, "{ctx}: reverse twice");
            // x^(len-1) a(1/x) at a nonzero point y equals y^(len-1) a(1/y).
            let y = nonzero(f, &sample, rng);
            let yi = f.inv(&y).unwrap();
            let lhs = poly::evaluate(f, &r, &y);
            let rhs = f.mul(
                &f.pow_u64(&y, u64::try_from(len - 1).unwrap()),
                &poly::evaluate(f, &a, &yi),
            );
            assert_eq!(lhs, rhs, "{ctx}: reverse evaluates at 1/y");
        }
    }
}

/// Stamps out the polynomial suites for one field: a module name, an
/// expression for the field, the sampler, the largest polynomial length
/// to test (keep it small for expensive fields), optionally the number of
/// cases (24) and the exponent size for `pow_mod` (104 bits).
///
/// ```ignore
/// field_testkit::poly_suite!(mersenne61, field::Mersenne61, field_testkit::poly::uniform, 200);
/// field_testkit::poly_suite!(rationals, field::Rationals, field_testkit::poly::small_rational, 60, 8, 5);
/// ```
#[macro_export]
macro_rules! poly_suite {
    ($name:ident, $field:expr, $sample:expr, $max_len:expr) => {
        $crate::poly_suite!($name, $field, $sample, $max_len, 24, 104);
    };
    ($name:ident, $field:expr, $sample:expr, $max_len:expr, $cases:expr) => {
        $crate::poly_suite!($name, $field, $sample, $max_len, $cases, 104);
    };
    ($name:ident, $field:expr, $sample:expr, $max_len:expr, $cases:expr, $exp_bits:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn ring_laws() {
                $crate::poly::ring_laws(&$field, $sample, $cases, $max_len / 3);
            }
            #[test]
            fn mul_matches_naive() {
                $crate::poly::mul_matches_naive(&$field, $sample, 3 * $max_len);
            }
            #[test]
            fn mul_wrapped_matches_folded() {
                $crate::poly::mul_wrapped_matches_folded(&$field, $sample, 3 * $max_len);
            }
            #[test]
            fn div_rem_roundtrip() {
                $crate::poly::div_rem_roundtrip(&$field, $sample, $cases, $max_len);
            }
            #[test]
            fn gcd_properties() {
                $crate::poly::gcd_properties(&$field, $sample, $cases, $max_len);
            }
            #[test]
            fn pow_mod_matches_naive() {
                $crate::poly::pow_mod_matches_naive(&$field, $sample, $cases, $max_len, $exp_bits);
            }
            #[test]
            fn from_roots_and_evaluate() {
                $crate::poly::from_roots_and_evaluate(&$field, $sample, $cases, $max_len);
            }
            #[test]
            fn derivative_and_reverse() {
                $crate::poly::derivative_and_reverse(&$field, $sample, $cases, $max_len / 2);
            }
        }
    };
}
