//! Known answers shared with the Python wheel (`crates/mufc-py`): the
//! messages of one round under pairwise masks and under dealt masks, from
//! fixed keys, seeds and data, as hex in `vectors/wheel_kat.json`. The
//! wheel's test (`crates/mufc-py/pytests/test_known_answers.py`) builds the
//! same round through Python and must produce the same bytes, so that a
//! Python party and a Rust party of one round interoperate.
//! `MUFC_WRITE_KAT=1` rewrites the file (only for a deliberate change of
//! the wire format).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use num_bigint::{BigInt, BigUint};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use syndrome_agg::masking::dealer::{SealKey, open_seed};
use syndrome_agg::masking::pairwise::{MaskKeyPair, RoundContext, SessionId};
use syndrome_agg::{
    Aggregator, AnyParams, AnySketch, CountPolicy, LinearSketch, MaskedSketch, Scheme,
    SketchParams, ValidAnyParams,
};

const PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/vectors/wheel_kat.json");

/// The round's public parameters, as the Python test builds them:
/// `SketchParams(4, 1000, max_count=100)`.
fn params() -> ValidAnyParams {
    let p = SketchParams::new(4, 1000u32).with_counts(CountPolicy::unsigned(100u32));
    AnyParams::new(Scheme::FieldKeys, p).validate().unwrap()
}

fn ctx() -> RoundContext {
    RoundContext {
        session: SessionId([7; 32]),
        round: 3,
    }
}

/// Client `id`'s entries.
fn data(id: u64) -> Vec<(BigUint, BigInt)> {
    let pairs: &[(u32, i32)] = match id {
        1 => &[(10, 1), (500, 2)],
        2 => &[(10, 3)],
        _ => &[(999, 4)],
    };
    pairs.iter().map(|&(k, c)| (k.into(), c.into())).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn bytes(m: &MaskedSketch<AnySketch>) -> Vec<u8> {
    m.to_frame().to_bytes().unwrap()
}

/// Every message of the two rounds, by name.
fn messages() -> BTreeMap<String, Vec<u8>> {
    let (p, ctx) = (params(), ctx());
    let mut out = BTreeMap::new();
    // Pairwise: client i's secret is 32 bytes of i.
    let keys: Vec<(u64, MaskKeyPair)> = (1..=3u8)
        .map(|i| (u64::from(i), MaskKeyPair::from_secret_bytes([i; 32])))
        .collect();
    for (id, key) in &keys {
        let peers: Vec<_> = keys
            .iter()
            .filter(|(p, _)| p != id)
            .map(|(p, k)| (*p, k.public_key()))
            .collect();
        let sketch = AnySketch::encode(&p, data(*id)).unwrap();
        let m = sketch.mask_pairwise(key, *id, &peers, ctx).unwrap();
        out.insert(format!("pairwise-{id}"), bytes(&m));
    }
    // Dealt: client i shares 32 bytes of 0x10 + i with the dealer, whose
    // generator is ChaCha20 from 32 bytes of 9.
    let seal: Vec<(u64, SealKey)> = (1..=3u8)
        .map(|i| (u64::from(i), SealKey::from_secret_bytes([0x10 + i; 32])))
        .collect();
    let ring: Vec<(u64, &SealKey)> = seal.iter().map(|(i, k)| (*i, k)).collect();
    let mut rng = ChaCha20Rng::from_seed([9; 32]);
    let (sealed, correction) = AnySketch::deal(&p, ctx, &ring, 0, &mut rng).unwrap();
    out.insert("dealt-correction".into(), bytes(&correction));
    for ((id, key), (_, s)) in seal.iter().zip(&sealed) {
        out.insert(format!("dealt-seal-{id}"), s.clone());
        let seed = open_seed(key, &ctx, *id, &[1, 2, 3], s).unwrap();
        let sketch = AnySketch::encode(&p, data(*id)).unwrap();
        out.insert(
            format!("dealt-{id}"),
            bytes(&sketch.mask_seeded(&seed, *id, ctx).unwrap()),
        );
    }
    out
}

#[test]
fn the_rounds_messages_are_the_known_answers_the_wheel_checks() {
    let got: BTreeMap<String, String> = messages()
        .iter()
        .map(|(k, v)| (k.clone(), hex(v)))
        .collect();
    if std::env::var_os("MUFC_WRITE_KAT").is_some() {
        std::fs::write(PATH, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
    }
    let want: BTreeMap<String, String> =
        serde_json::from_str(&std::fs::read_to_string(PATH).unwrap()).unwrap();
    assert_eq!(got, want);
}

#[test]
fn the_known_rounds_sum_to_the_clients_entries() {
    // The known answers are real rounds: each decodes to the sum.
    let (p, ctx) = (params(), ctx());
    let want: Vec<(BigUint, BigInt)> = vec![
        (10u32.into(), 4.into()),
        (500u32.into(), 2.into()),
        (999u32.into(), 4.into()),
    ];
    let all = messages();
    for prefix in ["pairwise-", "dealt-"] {
        let mut server = Aggregator::<AnySketch>::new(&p, ctx, 3);
        for (name, m) in &all {
            let Some(rest) = name.strip_prefix(prefix) else {
                continue;
            };
            if rest.starts_with("seal") {
                continue;
            }
            let max = p.max_frame_len();
            server
                .accept(&MaskedSketch::from_bytes(m, &p, max).unwrap())
                .unwrap();
        }
        assert_eq!(server.decode().unwrap().into_entries(), want, "{prefix}");
    }
}
