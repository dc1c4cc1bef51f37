//! Property suites for `syndrome-agg`, generic over the field (the field is
//! passed as a value, so run-time moduli join in). Instantiate them with
//! [`sagg_suite!`](crate::sagg_suite).

use std::collections::BTreeSet;
use syndrome_agg::DecodeError;

use field::{FiniteField, Mersenne61};
use num_bigint::{BigRng010, BigUint};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rand::{Rng, RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use syndrome_agg::masking::deal_zero_sum_masks;
use syndrome_agg::masking::pairwise::{MaskKeyPair, MaskPublicKey, RoundContext, SessionId};
use syndrome_agg::{
    Aggregator, CountPolicy, IntegerParams, IntegerSketch, LinearParams, LinearSketch,
    MaskedSketch, RawSketch, Sketch, SketchError, SketchParams, SparseVector,
};

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases: crate::cases(cases),
        failure_persistence: None,
        ..Config::default()
    })
}

/// A key domain for field `f`: mostly large (up to `p - 1`), sometimes tiny
/// so that keys collide across clients.
pub fn random_domain<F: FiniteField, R: Rng + ?Sized>(f: &F, rng: &mut R) -> BigUint {
    let p_minus_1 = f.characteristic() - 1u32;
    match rng.random_range(0..4u32) {
        0 => BigUint::from(rng.random_range(1..=64u32)).min(p_minus_1),
        1 => p_minus_1,
        _ => rng.random_biguint_range(&BigUint::from(1u8), &f.characteristic()),
    }
}

/// A uniform key in `[1, domain]`.
pub fn random_key<R: Rng + ?Sized>(rng: &mut R, domain: &BigUint) -> BigUint {
    rng.random_biguint_range(&BigUint::from(1u8), &(domain + 1u32))
}

/// `count` distinct keys in `[1, domain]` (fewer if the domain is smaller).
pub fn distinct_keys<R: Rng + ?Sized>(rng: &mut R, domain: &BigUint, count: usize) -> Vec<BigUint> {
    let mut set = BTreeSet::new();
    let target = if *domain < BigUint::from(count) {
        usize::try_from(domain).unwrap_or(count)
    } else {
        count
    };
    while set.len() < target {
        set.insert(random_key(rng, domain));
    }
    set.into_iter().collect()
}

/// A session context from a seed.
pub fn context(seed: u64) -> RoundContext {
    let mut s = [0u8; 32];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    RoundContext {
        session: SessionId(s),
        round: seed % 7,
    }
}

/// Masks every client's sketch, of any [`LinearSketch`] type, with dealer
/// masks if `dealer` (client ids `1, 2, ...`), else with pairwise masks
/// between all clients (ids spread out, so both signs and large ids
/// occur).
pub fn mask_all<S: LinearSketch, R: rand::CryptoRng + ?Sized>(
    params: &S::Params,
    sketches: &[S],
    dealer: bool,
    ctx: RoundContext,
    rng: &mut R,
) -> Vec<MaskedSketch<S>> {
    let n = sketches.len();
    if dealer {
        let masks = deal_zero_sum_masks(&params.mask_domain(), n, params.num_elements(), rng);
        sketches
            .iter()
            .zip(&masks)
            .enumerate()
            .map(|(i, (s, m))| s.mask(m, i as u64 + 1, ctx).unwrap())
            .collect()
    } else {
        let keys: Vec<MaskKeyPair> = (0..n).map(|_| MaskKeyPair::generate(rng)).collect();
        let ids: Vec<u64> = (0..n).map(|i| (i as u64) * 1_000_003 + 5).collect();
        let publics: Vec<(u64, MaskPublicKey)> = ids
            .iter()
            .zip(&keys)
            .map(|(id, k)| (*id, k.public_key()))
            .collect();
        sketches
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let peers: Vec<_> = publics
                    .iter()
                    .filter(|(id, _)| *id != ids[i])
                    .copied()
                    .collect();
                s.mask_pairwise(&keys[i], ids[i], &peers, ctx).unwrap()
            })
            .collect()
    }
}

/// docs/threat-model.md C1/C2: random sparse vectors split across a random number of
/// clients, masked (dealer and pairwise, alternately), summed by an
/// [`Aggregator`] and decoded, equal the true sum; masked messages differ
/// from the plaintext sketches.
pub fn masked_sum_decodes<F: FiniteField>(f: &F, max_capacity: usize, cases: u32) {
    runner(cases)
        .run(&any::<u64>(), |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let t = rng.random_range(1..=max_capacity);
            let r = rng.random_range(0..=2usize);
            let domain = random_domain(f, &mut rng);
            let max_total = 1u64 << 40;
            let params = SketchParams::new(t, domain.clone())
                .with_extra(r)
                .with_counts(CountPolicy::unsigned(max_total))
                .validate(f.clone())
                .unwrap();
            let support = rng.random_range(0..=t);
            let pool = distinct_keys(&mut rng, &domain, support);
            let clients = rng.random_range(1..=6usize);
            let mut all = Vec::new();
            let mut sketches = Vec::new();
            for _ in 0..clients {
                let mut entries = Vec::new();
                for k in &pool {
                    if rng.random_bool(0.5) {
                        entries.push((k.clone(), rng.random_range(1..=1000u64)));
                    }
                }
                all.extend(entries.iter().map(|(k, c)| (k.clone(), f.from_u64(*c))));
                sketches.push(Sketch::from_unsigned(&params, entries).unwrap());
            }
            let ctx = context(seed);
            let masked = mask_all(&params, &sketches, seed.is_multiple_of(2), ctx, &mut rng);
            let mut agg = Aggregator::new(&params, ctx, clients);
            for (m, s) in masked.iter().zip(&sketches) {
                // One client alone has no one to mask with.
                if clients > 1 {
                    prop_assert_ne!(m.elements(), s.elements());
                }
                agg.accept(m).unwrap();
            }
            let oracle = SparseVector::from_sum(f, all);
            prop_assert_eq!(agg.decode().unwrap(), oracle);
            Ok(())
        })
        .unwrap();
}

/// The over-capacity rule and the detection bound (docs/threat-model.md §3.3): every sum of `s`
/// nonzeros with `t < s <= t + r` is rejected, always; beyond `t + r` it is
/// rejected too (false accepts have probability about `p^-r`). Returns how
/// many rejections were [`DecodeError::TooManyKeys`] (generically all of
/// them: Berlekamp-Massey sees all `2t + r` syndromes; the rest fail the
/// locator or the final check).
pub fn over_capacity_rejected<F: FiniteField>(f: &F, max_capacity: usize, cases: u32) -> u32 {
    let too_many = std::cell::Cell::new(0u32);
    runner(cases)
        .run(&any::<u64>(), |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let t = rng.random_range(1..=max_capacity);
            let r = rng.random_range(1..=3usize);
            let domain = f.characteristic() - 1u32;
            let params = SketchParams::new(t, domain.clone())
                .with_extra(r)
                .validate(f.clone())
                .unwrap();
            let s = rng.random_range(t + 1..=t + r + 2);
            let keys = distinct_keys(&mut rng, &domain, s);
            let entries: Vec<_> = keys
                .iter()
                .map(|k| {
                    let mut c = f.random(&mut rng);
                    while f.is_zero(&c) {
                        c = f.random(&mut rng);
                    }
                    (k.clone(), c)
                })
                .collect();
            let sketch = Sketch::encode(&params, entries).unwrap();
            match sketch.decode() {
                Ok(v) => prop_assert!(
                    s > t + r,
                    "{s} nonzeros with t = {t}, r = {r} decoded to {} entries",
                    v.len()
                ),
                Err(SketchError::Decode(DecodeError::TooManyKeys { capacity, needed })) => {
                    prop_assert_eq!(capacity, t);
                    prop_assert!(needed > t);
                    too_many.set(too_many.get() + 1);
                }
                Err(_) => {}
            }
            Ok(())
        })
        .unwrap();
    too_many.get()
}

/// docs/threat-model.md M1: random syndromes, and sums perturbed in one syndrome, never
/// decode to a vector that fails the re-encode check: whatever decodes
/// re-encodes to exactly the input.
pub fn random_syndromes_never_misdecode<F: FiniteField>(f: &F, max_capacity: usize, cases: u32) {
    runner(cases)
        .run(&any::<u64>(), |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let t = rng.random_range(1..=max_capacity);
            let r = rng.random_range(0..=2usize);
            let domain = random_domain(f, &mut rng);
            let params = SketchParams::new(t, domain.clone())
                .with_extra(r)
                .validate(f.clone())
                .unwrap();
            let m = params.num_syndromes();
            let syndromes: Vec<F::Elem> = if seed.is_multiple_of(2) {
                (0..m).map(|_| f.random(&mut rng)).collect()
            } else {
                let support = rng.random_range(0..=t);
                let keys = distinct_keys(&mut rng, &domain, support);
                let entries: Vec<_> = keys.into_iter().map(|k| (k, f.random(&mut rng))).collect();
                let mut s = Sketch::encode(&params, entries).unwrap().into_elements();
                let i = rng.random_range(0..m);
                s[i] = f.add(&s[i], &f.random(&mut rng));
                s
            };
            let sketch = Sketch::from_elements(&params, syndromes.clone()).unwrap();
            if let Ok(v) = sketch.decode() {
                prop_assert!(v.len() <= t);
                let re = Sketch::encode(&params, v.into_entries()).unwrap();
                prop_assert_eq!(re.elements(), &syndromes[..]);
            }
            Ok(())
        })
        .unwrap();
}

/// The finite-field decoder (over GF(2^61 - 1)) and the Appendix K integer
/// decoder agree on the same inputs: both decode the same sum of at most
/// `t` keys, and both reject over-capacity sums within `t + r`.
pub fn decoders_agree(max_capacity: usize, cases: u32) {
    let f = Mersenne61;
    runner(cases)
        .run(&any::<u64>(), |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let t = rng.random_range(1..=max_capacity);
            let r = rng.random_range(0..=2usize);
            let domain = BigUint::from(rng.random_range(1..=5000u32));
            let max_total = 1_000_000u64;
            let fp = SketchParams::new(t, domain.clone())
                .with_extra(r)
                .with_counts(CountPolicy::unsigned(max_total))
                .validate(f)
                .unwrap();
            let ip = IntegerParams::new(t, domain.clone(), max_total)
                .with_extra(r)
                .validate()
                .unwrap();
            let s = rng.random_range(0..=t + r);
            let keys = distinct_keys(&mut rng, &domain, s);
            let clients = rng.random_range(1..=4usize);
            let mut truth = std::collections::BTreeMap::<BigUint, u64>::new();
            let mut fsum = Sketch::new(&fp);
            let mut isum = IntegerSketch::new(&ip);
            let masks = deal_zero_sum_masks(ip.ring(), clients, ip.num_syndromes(), &mut rng);
            for mask in &masks {
                let mut entries: Vec<(BigUint, u64)> = Vec::new();
                for k in &keys {
                    if rng.random_bool(0.6) {
                        entries.push((k.clone(), rng.random_range(1..=100u64)));
                    }
                }
                for (k, c) in &entries {
                    *truth.entry(k.clone()).or_default() += c;
                }
                fsum.add(&Sketch::from_unsigned(&fp, entries.clone()).unwrap())
                    .unwrap();
                let masked = IntegerSketch::from_unsigned(&ip, entries)
                    .unwrap()
                    .mask(mask, 0, context(0))
                    .unwrap();
                isum.add(&IntegerSketch::from_elements(&ip, masked.elements().to_vec()).unwrap())
                    .unwrap();
            }
            let a = fsum.decode();
            let b = isum.decode();
            match (&a, &b) {
                (Ok(x), Ok(y)) => prop_assert_eq!(&x.to_unsigned(&f)[..], y.entries()),
                (Err(_), Err(_)) => {}
                _ => prop_assert!(false, "decoders disagree: {:?} vs {:?}", a, b),
            }
            let truth = truth.into_iter().filter(|(_, c)| *c > 0).count();
            prop_assert_eq!(a.is_ok(), truth <= t, "{} nonzeros, t = {}", truth, t);
            Ok(())
        })
        .unwrap();
}

/// The chi-square statistic of `counts` against the uniform distribution.
pub fn chi_square(counts: &[u64]) -> f64 {
    let n: u64 = counts.iter().sum();
    let e = n as f64 / counts.len() as f64;
    counts
        .iter()
        .map(|&c| {
            let d = c as f64 - e;
            d * d / e
        })
        .sum()
}

/// One client's masked sketch is uniform: over `f` (a small prime field),
/// each masked syndrome of a fixed nonzero sketch, over `trials` fresh
/// pairwise (or dealer) masks, is tallied; returns the larger chi-square
/// statistic against uniform of the two syndromes, and the degrees of
/// freedom.
pub fn masked_sketch_is_uniform<F: FiniteField>(
    f: &F,
    dealer: bool,
    trials: usize,
    label: &str,
) -> (f64, usize) {
    let p = usize::try_from(f.to_u64(&f.neg(&f.one())).unwrap()).unwrap() + 1;
    let params = SketchParams::new(1, 3u32)
        .with_extra(0)
        .validate(f.clone())
        .unwrap();
    let sketch = Sketch::from_unsigned(&params, [(2u32, 1u64)]).unwrap();
    let mut rng = crate::rng(label);
    let mut counts = [vec![0u64; p], vec![0u64; p]];
    for trial in 0..trials {
        let others = Sketch::new(&params);
        let ctx = context(trial as u64);
        let masked = mask_all(&params, &[sketch.clone(), others], dealer, ctx, &mut rng);
        for (tally, s) in counts.iter_mut().zip(masked[0].elements().iter()) {
            tally[usize::try_from(f.to_u64(s).unwrap()).unwrap()] += 1;
        }
    }
    (chi_square(&counts[0]).max(chi_square(&counts[1])), p - 1)
}

/// Stamps out the `syndrome-agg` property tests for one field.
#[macro_export]
macro_rules! sagg_suite {
    ($name:ident, $field:expr, $capacity:expr, $cases:expr) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            #[test]
            fn c1_c2_masked_sum_decodes() {
                $crate::sagg::props::masked_sum_decodes(&$field, $capacity, $cases);
            }
            #[test]
            fn m2_over_capacity_is_rejected() {
                let too_many =
                    $crate::sagg::props::over_capacity_rejected(&$field, $capacity, $cases);
                // Over-capacity sums generically fail Berlekamp-Massey's
                // degree bound; the rest fail the locator or the check.
                let n = $crate::cases($cases);
                assert!(
                    too_many * 10 >= n * 9,
                    "only {too_many} TooManyKeys in {n} cases"
                );
            }
            #[test]
            fn m1_random_syndromes_never_misdecode() {
                $crate::sagg::props::random_syndromes_never_misdecode(&$field, $capacity, $cases);
            }
        }
    };
}
