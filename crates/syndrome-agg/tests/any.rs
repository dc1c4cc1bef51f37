//! The run-time chosen sketch is the concrete sketch underneath, bit for
//! bit: the same field choice, frames, masked frames and decoded vectors.
#![allow(clippy::unwrap_used)]

use field::primes::{FieldChoice, cheapest_field};
use field::{FiniteField, Fp64};
use num_bigint::{BigInt, BigUint};
use syndrome_agg::RawSketch;
use syndrome_agg::masking::pairwise::{MaskKeyPair, RoundContext, SessionId};
use syndrome_agg::partitioned::{PartitionParams, PartitionedSketch};
use syndrome_agg::wide::{WideKeyParams, WideSketch};
use syndrome_agg::{
    AnyParams, AnySketch, CountPolicy, IntegerParams, IntegerSketch, LinearParams, LinearSketch,
    MaskedSketch, Scheme, Sketch, SketchError, SketchParams,
};
use syndrome_agg::{DecodeError, ParamsError};

const CTX: RoundContext = RoundContext {
    session: SessionId([8; 32]),
    round: 2,
};

fn entries(domain: &BigUint) -> Vec<(BigUint, u64)> {
    vec![
        (BigUint::from(1u8), 5),
        (domain.clone(), 2),
        (domain / 3u32 + 1u32, 7),
    ]
}

fn any_entries(e: &[(BigUint, u64)]) -> Vec<(BigUint, BigInt)> {
    e.iter()
        .map(|(k, c)| (k.clone(), BigInt::from(*c)))
        .collect()
}

/// Frames (plain and pairwise-masked) and the decode of `any` equal those
/// of the concrete sketch `concrete`.
fn same_as<S: RawSketch>(any: &AnySketch, concrete: &S, decoded: Vec<(BigUint, BigInt)>) {
    assert_eq!(
        any.to_frame(3, &CTX).to_bytes().unwrap(),
        concrete.to_frame(3, &CTX).to_bytes().unwrap()
    );
    let (a, b) = (
        MaskKeyPair::from_secret_bytes([1; 32]),
        MaskKeyPair::from_secret_bytes([2; 32]),
    );
    let peers = [(2, b.public_key())];
    let ma = any.mask_pairwise(&a, 1, &peers, CTX).unwrap();
    let mc = concrete.mask_pairwise(&a, 1, &peers, CTX).unwrap();
    let bytes = ma.to_frame().to_bytes().unwrap();
    assert_eq!(bytes, mc.to_frame().to_bytes().unwrap());
    let back = MaskedSketch::<AnySketch>::from_bytes(&bytes, any.params(), 1 << 20).unwrap();
    assert_eq!(back, ma);
    assert_eq!(any.decode().unwrap().into_entries(), decoded);
}

#[test]
fn field_keys_pick_the_cheapest_field_and_match_the_concrete_sketch() {
    for bits in [10u32, 61, 62, 63, 64, 127, 128, 300] {
        let domain = (BigUint::from(1u8) << bits) - 1u32;
        let e = entries(&domain);
        let counts = CountPolicy::unsigned(1000u32);
        let any_params = AnyParams::new(
            Scheme::FieldKeys,
            SketchParams::new(4, domain.clone()).with_counts(counts.clone()),
        )
        .validate()
        .unwrap();
        let any = AnySketch::encode(&any_params, any_entries(&e)).unwrap();
        let base = SketchParams::new(4, domain.clone()).with_counts(counts);
        let mut want: Vec<(BigUint, BigInt)> = any_entries(&e);
        want.sort();
        match cheapest_field(&domain) {
            FieldChoice::Proth(f) => {
                let p = base.validate(f).unwrap();
                same_as(&any, &Sketch::from_unsigned(&p, e).unwrap(), want);
            }
            FieldChoice::Mersenne127(f) => {
                let p = base.validate(f).unwrap();
                same_as(&any, &Sketch::from_unsigned(&p, e).unwrap(), want);
            }
            FieldChoice::Big(f) => {
                assert_eq!(any_params.modulus(), f.characteristic());
                let p = base.validate(f).unwrap();
                same_as(&any, &Sketch::from_unsigned(&p, e).unwrap(), want);
            }
        }
    }
}

#[test]
fn wide_keys_match_the_concrete_sketch() {
    let domain = (BigUint::from(1u8) << 200u32) - 1u32;
    let e = entries(&domain);
    let any_params = AnyParams::new(
        Scheme::WideKeys { hash_key: [5; 32] },
        SketchParams::new(4, domain).with_counts(CountPolicy::unsigned(1000u32)),
    )
    .validate()
    .unwrap();
    let any = AnySketch::encode(&any_params, any_entries(&e)).unwrap();
    let p = WideKeyParams::new(4, 25, [5; 32])
        .with_counts(CountPolicy::unsigned(1000u32))
        .validate(Fp64::proth())
        .unwrap();
    let bytes: Vec<(Vec<u8>, u64)> = e.iter().map(|(k, c)| (k.to_bytes_le(), *c)).collect();
    let concrete = WideSketch::from_unsigned(&p, bytes.iter().map(|(k, c)| (&k[..], *c))).unwrap();
    let mut want = any_entries(&e);
    want.sort();
    same_as(&any, &concrete, want);
}

#[test]
fn partitioned_keys_match_the_concrete_sketch() {
    // Three keys under the default bucket count (one bucket), and 5000
    // keys under three buckets.
    for (t, keys) in [(4usize, 3u64), (5000, 5000)] {
        let domain = BigUint::from(1u64 << 40);
        let e: Vec<(BigUint, u64)> = if keys == 3 {
            entries(&domain)
        } else {
            (1..=keys)
                .map(|k| (BigUint::from(k * 7919), k % 5 + 1))
                .collect()
        };
        let counts = CountPolicy::unsigned(100_000u32);
        let any_params = AnyParams::new(
            Scheme::Partitioned { hash_key: [6; 32] },
            SketchParams::new(t, domain.clone()).with_counts(counts.clone()),
        )
        .validate()
        .unwrap();
        assert_eq!(any_params.modulus_bits(), 64);
        let any = AnySketch::encode(&any_params, any_entries(&e)).unwrap();
        let p = PartitionParams::new(t, domain, [6; 32])
            .with_counts(counts)
            .validate(Fp64::proth())
            .unwrap();
        assert_eq!(p.buckets(), if t == 4 { 1 } else { 3 });
        let concrete = PartitionedSketch::from_unsigned(&p, e.clone()).unwrap();
        let mut want = any_entries(&e);
        want.sort();
        same_as(&any, &concrete, want);
    }
}

#[test]
fn partitioned_keys_beyond_one_word_are_refused() {
    let r = AnyParams::new(
        Scheme::Partitioned { hash_key: [6; 32] },
        SketchParams::new(4, BigUint::from(1u8) << 70u32),
    )
    .validate();
    assert!(
        matches!(
            r,
            Err(SketchError::Params(ParamsError::InvalidParams { .. }))
        ),
        "{r:?}"
    );
}

#[test]
fn the_integer_scheme_matches_the_concrete_sketch() {
    let domain = BigUint::from(900u32);
    let e = entries(&domain);
    let any_params = AnyParams::new(
        Scheme::Integer,
        SketchParams::new(4, domain.clone()).with_counts(CountPolicy::unsigned(1000u32)),
    )
    .validate()
    .unwrap();
    let any = AnySketch::encode(&any_params, any_entries(&e)).unwrap();
    let p = IntegerParams::new(4, domain, 1000u32).validate().unwrap();
    let mut want = any_entries(&e);
    want.sort();
    same_as(&any, &IntegerSketch::from_unsigned(&p, e).unwrap(), want);
}

#[test]
fn signed_counts_decode_centered_and_differences_unlearn() {
    let params = AnyParams::new(
        Scheme::FieldKeys,
        SketchParams::new(3, 1000u32).with_counts(CountPolicy::signed(100u32)),
    )
    .validate()
    .unwrap();
    let mut a =
        AnySketch::encode(&params, [(5u32.into(), 4.into()), (9u32.into(), 1.into())]).unwrap();
    let b = AnySketch::encode(&params, [(9u32.into(), 1.into()), (7u32.into(), 2.into())]).unwrap();
    a.subtract(&b).unwrap();
    assert_eq!(
        a.decode().unwrap().into_entries(),
        vec![(5u32.into(), 4.into()), (7u32.into(), (-2).into())]
    );
}

#[test]
fn outside_input_is_refused() {
    let params = AnyParams::new(Scheme::FieldKeys, SketchParams::new(2, 100u32))
        .validate()
        .unwrap();
    let mut s = AnySketch::new(&params);
    assert!(matches!(
        s.insert(&0u32.into(), &1.into()),
        Err(SketchError::Params(ParamsError::KeyOutOfDomain { .. }))
    ));
    // An element >= p.
    let mut e = s.elements().to_vec();
    e[0] = params.modulus();
    assert_eq!(
        AnySketch::from_elements(&params, e),
        Err(SketchError::Decode(DecodeError::NonCanonical))
    );
    // Sketches of different schemes do not add up.
    let other = AnyParams::new(
        Scheme::Integer,
        SketchParams::new(2, 100u32).with_counts(CountPolicy::unsigned(10u32)),
    )
    .validate()
    .unwrap();
    assert!(matches!(
        s.add(&AnySketch::new(&other)),
        Err(SketchError::Params(ParamsError::ParamsMismatch { .. }))
    ));
    assert_eq!(params.num_elements(), 5);
    // The integer scheme needs unsigned counts.
    assert!(
        AnyParams::new(Scheme::Integer, SketchParams::new(2, 100u32))
            .validate()
            .is_err()
    );
}
