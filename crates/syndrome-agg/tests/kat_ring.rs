//! docs/threat-model.md C5 for the ring a sketch masks in: the ring case
//! of the mask-sampling known answers (`masked-sum`'s
//! `tests/vectors/mask_kat.json`, from the Python reference
//! `scripts/ref/mask_kat.py`) sampled in [`IntegerRing`], from the seed
//! the vector names. The pipeline that derives the seed, and the field
//! cases, are `masked-sum`'s `kat.rs`.
#![allow(clippy::unwrap_used)]

use num_bigint::BigUint;
use syndrome_agg::IntegerRing;
use syndrome_agg::masking::{MaskDomain, MaskStream};

#[derive(serde::Deserialize)]
struct Case {
    name: String,
    seed: String,
    values: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Kat {
    cases: Vec<Case>,
}

fn seed(s: &str) -> [u8; 32] {
    let bytes: Vec<u8> = (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect();
    bytes.try_into().unwrap()
}

#[test]
fn c5_ring_mask_sampling_matches_the_python_reference() {
    let kat: Kat =
        serde_json::from_str(include_str!("../../masked-sum/tests/vectors/mask_kat.json")).unwrap();
    let case = kat.cases.iter().find(|c| c.name == "ring2^70").unwrap();
    let ring = IntegerRing::new(70);
    let want: Vec<BigUint> = case.values.iter().map(|v| v.parse().unwrap()).collect();
    let got = ring
        .sample(&mut MaskStream::new(&seed(&case.seed)), want.len())
        .unwrap();
    let expect: Vec<BigUint> = want.iter().map(|v| ring.mask_from_canonical(v)).collect();
    assert_eq!(got, expect);
}
