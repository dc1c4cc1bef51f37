//! The aggregator's properties, written once against
//! [`LinearSketch`] and run for every sketch type (field, wide-key,
//! integer, run-time chosen): instantiate with
//! [`aggregator_suite!`](crate::aggregator_suite).
//!
//! A *maker* draws the parameters and the clients' unmasked sketches of
//! one case from a seeded RNG; the properties only use the trait.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use syndrome_agg::ProtocolError;
use syndrome_agg::{Aggregator, LinearSketch, MaskedSketch, RawSketch, SketchError};

use super::props::{context, mask_all};

/// One case: the parameters and each client's unmasked sketch.
pub type Case<S> = (<S as LinearSketch>::Params, Vec<S>);

fn rejected<T: std::fmt::Debug>(r: Result<T, SketchError>) -> bool {
    matches!(
        r,
        Err(SketchError::Protocol(ProtocolError::MessageRejected { .. }))
    )
}

/// The sum an aggregator would release now, as elements.
fn released<S: RawSketch>(agg: &Aggregator<S>) -> Option<Vec<S::Elem>> {
    agg.clone().finish().ok().map(RawSketch::into_elements)
}

/// docs/threat-model.md C1, R1, R2, §2.1 for any sketch type, over `cases`
/// cases drawn by `make`:
///
/// - the masked sum equals the plain sum of the unmasked sketches, and
///   decodes to the same vector;
/// - a message of another round (a replay) is rejected;
/// - a second message from a counted client is rejected;
/// - fewer than `min_clients` clients release nothing;
/// - a rejected message leaves the state unchanged.
pub fn aggregator_properties<S, M>(make: M, cases: u32)
where
    S: RawSketch,
    M: Fn(&mut ChaCha8Rng) -> Case<S>,
{
    let mut runner = TestRunner::new(Config {
        cases: crate::cases(cases),
        failure_persistence: None,
        ..Config::default()
    });
    runner
        .run(&any::<u64>(), |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let (params, sketches) = make(&mut rng);
            let n = sketches.len();
            prop_assume!(n >= 1);
            let ctx = context(seed);
            let masked = mask_all(&params, &sketches, seed.is_multiple_of(2), ctx, &mut rng);

            // The plain sum.
            let mut plain = S::new(&params);
            for s in &sketches {
                plain.add(s).unwrap();
            }

            let mut agg = Aggregator::<S>::new(&params, ctx, n);
            for m in &masked {
                agg.accept(m).unwrap();
            }
            prop_assert_eq!(agg.clients().len(), n);
            let before = released(&agg);
            prop_assert_eq!(before.as_deref(), Some(&*plain.elements()));

            // A replay into the next round, and a duplicate client.
            let replay = MaskedSketch::<S>::from_parts(
                &params,
                n as u64 + 1,
                ctx.next(),
                masked[0].elements().to_vec(),
            )
            .unwrap();
            prop_assert!(rejected(agg.accept(&replay)));
            prop_assert!(rejected(agg.accept(&masked[rng.random_range(0..n)])));
            prop_assert_eq!(released(&agg), before);
            prop_assert_eq!(agg.clients().len(), n);

            // Decoding the aggregate is decoding the plain sum.
            let a = agg.decode();
            let b = plain.decode();
            prop_assert_eq!(a.is_ok(), b.is_ok());
            if let (Ok(a), Ok(b)) = (a, b) {
                prop_assert_eq!(a, b);
            }

            // Below the minimum: nothing is released.
            let mut short = Aggregator::<S>::new(&params, ctx, n + 1);
            for m in &masked {
                short.accept(m).unwrap();
            }
            prop_assert!(rejected(short.finish()));
            Ok(())
        })
        .unwrap();
}

/// Stamps out the aggregator properties for one sketch type:
/// `aggregator_suite!(name, maker, cases)` where `maker` is a
/// `Fn(&mut ChaCha8Rng) -> Case<S>`.
#[macro_export]
macro_rules! aggregator_suite {
    ($name:ident, $make:expr, $cases:expr) => {
        #[test]
        fn $name() {
            $crate::sagg::aggregator::aggregator_properties($make, $cases);
        }
    };
}

/// Makers for the sketch types of this crate.
pub mod makers {
    use field::{FiniteField, Mersenne61};
    use num_bigint::BigInt;
    use num_bigint::BigUint;
    use rand::RngExt;
    use rand_chacha::ChaCha8Rng;
    use syndrome_agg::wide::{WideKeyParams, WideSketch};
    use syndrome_agg::{
        AnyParams, AnySketch, CountPolicy, IntegerParams, IntegerSketch, LinearSketch, Scheme,
        Sketch, SketchParams,
    };

    use super::Case;
    use crate::sagg::props::{distinct_keys, random_domain};

    fn clients(rng: &mut ChaCha8Rng) -> usize {
        rng.random_range(1..=5usize)
    }

    /// `f` of each item of `pool` kept with probability one half.
    fn some<K, T>(
        rng: &mut ChaCha8Rng,
        pool: &[K],
        mut f: impl FnMut(&mut ChaCha8Rng, &K) -> T,
    ) -> Vec<T> {
        let mut out = Vec::new();
        for k in pool {
            if rng.random_bool(0.5) {
                out.push(f(rng, k));
            }
        }
        out
    }

    /// Unsigned histograms split over 1 to 5 clients, in field `f`.
    pub fn field<F: FiniteField>(f: F) -> impl Fn(&mut ChaCha8Rng) -> Case<Sketch<F>> {
        move |rng| {
            let t = rng.random_range(1..=6usize);
            let domain = random_domain(&f, rng);
            let params = SketchParams::new(t, domain.clone())
                .with_extra(rng.random_range(0..=2usize))
                .with_counts(CountPolicy::unsigned(1u64 << 40))
                .validate(f.clone())
                .unwrap();
            let pool = distinct_keys(rng, &domain, t);
            let sketches = (0..clients(rng))
                .map(|_| {
                    let entries: Vec<(BigUint, u64)> = some(rng, &pool, |rng, k| {
                        (k.clone(), rng.random_range(1..=1000u64))
                    });
                    Sketch::from_unsigned(&params, entries).unwrap()
                })
                .collect();
            (params, sketches)
        }
    }

    /// Byte-string keys of 0 to 20 bytes over GF(2^61 - 1).
    pub fn wide(rng: &mut ChaCha8Rng) -> Case<WideSketch<Mersenne61>> {
        let t = rng.random_range(1..=4usize);
        let mut hash_key = [0u8; 32];
        rng.fill(&mut hash_key[..]);
        let params = WideKeyParams::new(t, 20, hash_key)
            .with_counts(CountPolicy::unsigned(1u64 << 40))
            .validate(Mersenne61)
            .unwrap();
        let pool: Vec<Vec<u8>> = (0..t)
            .map(|i| {
                let len = rng.random_range(0..=19usize);
                let mut k = vec![u8::try_from(i).unwrap()];
                k.extend((0..len).map(|_| rng.random::<u8>()));
                k
            })
            .collect();
        let sketches = (0..clients(rng))
            .map(|_| {
                let entries = some(rng, &pool, |rng, k| {
                    (k.clone(), rng.random_range(1..=1000u64))
                });
                WideSketch::from_unsigned(&params, entries.iter().map(|(k, c)| (&k[..], *c)))
                    .unwrap()
            })
            .collect();
        (params, sketches)
    }

    /// The Appendix K integer sketch over small key domains.
    pub fn integer(rng: &mut ChaCha8Rng) -> Case<IntegerSketch> {
        let t = rng.random_range(1..=3usize);
        let domain = BigUint::from(rng.random_range(1..=2000u32));
        let params = IntegerParams::new(t, domain.clone(), 10_000u32)
            .with_extra(rng.random_range(0..=1usize))
            .validate()
            .unwrap();
        let pool = distinct_keys(rng, &domain, t);
        let sketches = (0..clients(rng))
            .map(|_| {
                let entries: Vec<(BigUint, u64)> = some(rng, &pool, |rng, k| {
                    (k.clone(), rng.random_range(1..=500u64))
                });
                IntegerSketch::from_unsigned(&params, entries).unwrap()
            })
            .collect();
        (params, sketches)
    }

    /// A run-time chosen sketch: `scheme` over a key domain of 1 to 200
    /// bits (so that every field of [`Scheme::FieldKeys`] occurs); 1 to 12
    /// bits for the integer scheme and 1 to 62 for partitioned sketches,
    /// whose keys are one-word field elements.
    pub fn any(scheme: Scheme) -> impl Fn(&mut ChaCha8Rng) -> Case<AnySketch> {
        move |rng| {
            let t = rng.random_range(1..=3usize);
            let bits = match scheme {
                Scheme::Integer => rng.random_range(1..=12u32),
                Scheme::Partitioned { .. } => rng.random_range(1..=62u32),
                _ => rng.random_range(1..=200u32),
            };
            let domain = (BigUint::from(1u8) << bits) - 1u32;
            let params = AnyParams::new(
                scheme.clone(),
                SketchParams::new(t, domain.clone())
                    .with_extra(rng.random_range(0..=1usize))
                    .with_counts(CountPolicy::unsigned(10_000u32)),
            )
            .validate()
            .unwrap();
            let pool = distinct_keys(rng, &domain, t);
            let sketches = (0..clients(rng))
                .map(|_| {
                    let entries: Vec<(BigUint, BigInt)> = some(rng, &pool, |rng, k| {
                        (k.clone(), BigInt::from(rng.random_range(1..=500u32)))
                    });
                    AnySketch::encode(&params, entries).unwrap()
                })
                .collect();
            (params, sketches)
        }
    }
}
