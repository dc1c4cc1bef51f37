//! docs/threat-model.md C5: known-answer tests that break loudly if a dependency changes
//! the value semantics of the mask pipeline (X25519 -> HKDF-SHA256 -> raw
//! ChaCha20 keystream -> rejection sampling).
#![allow(clippy::unwrap_used)]

use field::{BigPrime, Fp64, Mersenne61, Mersenne127};
use hkdf::Hkdf;
use masked_sum::ProtocolError;
use masked_sum::masking::MaskDomain;
use masked_sum::masking::MaskStream;
use masked_sum::masking::pairwise::{
    MaskKeyPair, MaskPublicKey, RoundContext, SessionId, derive_pair_seed,
};
use num_bigint::BigUint;
use sha2::Sha256;

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn hex32(s: &str) -> [u8; 32] {
    hex(s).try_into().unwrap()
}

#[test]
fn c5_x25519_rfc7748_section_5_2() {
    let cases = [
        (
            "a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4",
            "e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c",
            "c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552",
        ),
        (
            "4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d",
            "e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493",
            "95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957",
        ),
    ];
    for (k, u, out) in cases {
        assert_eq!(x25519_dalek::x25519(hex32(k), hex32(u)), hex32(out));
    }
}

#[test]
fn c5_x25519_rfc7748_section_6_1_key_pairs() {
    let alice = MaskKeyPair::from_secret_bytes(hex32(
        "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a",
    ));
    let bob = MaskKeyPair::from_secret_bytes(hex32(
        "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb",
    ));
    assert_eq!(
        alice.public_key().0,
        hex32("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
    );
    assert_eq!(
        bob.public_key().0,
        hex32("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
    );
    let shared = hex32("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
    assert_eq!(
        x25519_dalek::x25519(*alice.secret_bytes(), bob.public_key().0),
        shared
    );
}

#[test]
fn c5_hkdf_sha256_rfc5869() {
    // Test case 1.
    let ikm = [0x0bu8; 22];
    let salt = hex("000102030405060708090a0b0c");
    let info = hex("f0f1f2f3f4f5f6f7f8f9");
    let mut okm = [0u8; 42];
    Hkdf::<Sha256>::new(Some(&salt), &ikm)
        .expand(&info, &mut okm)
        .unwrap();
    assert_eq!(
        okm.to_vec(),
        hex("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    );
    // Test case 3: no salt, no info (our mask seeds use no salt).
    Hkdf::<Sha256>::new(None, &ikm)
        .expand(&[], &mut okm)
        .unwrap();
    assert_eq!(
        okm.to_vec(),
        hex("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8")
    );
}

#[test]
fn c5_chacha20_rfc8439_keystream() {
    // RFC 8439, appendix A.1, test vector 1: all-zero key and nonce, block
    // counter 0. The mask stream reads exactly this keystream.
    let mut s = MaskStream::new(&[0u8; 32]);
    let mut block = [0u8; 64];
    // Read in uneven pieces: the stream position must carry over.
    let (a, b) = block.split_at_mut(13);
    s.fill(a).unwrap();
    s.fill(b).unwrap();
    assert_eq!(
        block.to_vec(),
        hex(
            "76b8e0ada0f13d90405d6ae55386bd28bdd219b8a08ded1aa836efcc8b770dc7\
             da41597c5157488d7724e03fb8d84a376a43b8f41518a11cc387b669b2ee6586"
        )
    );
}

/// The stream read in uneven pieces, across every refill (they grow from
/// two blocks to 4 KiB), is the cipher's keystream taken in one call.
#[test]
fn c5_the_stream_read_in_pieces_is_the_keystream_in_one_call() {
    use chacha20::ChaCha20;
    use chacha20::cipher::{KeyIvInit, StreamCipher};
    let seed = [7u8; 32];
    let total = 3 * 4096 + 1000;
    let mut whole = vec![0u8; total];
    ChaCha20::new(&seed.into(), &[0u8; 12].into()).apply_keystream(&mut whole);
    for piece in [1, 7, 64, 100, 129, 4095, 5000] {
        let mut s = MaskStream::new(&seed);
        let mut read = vec![0u8; total];
        for chunk in read.chunks_mut(piece) {
            s.fill(chunk).unwrap();
        }
        assert_eq!(read, whole, "pieces of {piece} bytes");
    }
}

/// A deal is a function of the generator's stream, drawn client by
/// client (its seed, then its seal's nonce), whether the clients' work
/// runs on one core or all (the `parallel` feature): each client opens
/// the seed drawn for it, its seal starts with the nonce drawn next, and
/// the masks and the correction sum to zero.
#[test]
fn a_deal_follows_the_generators_stream_client_by_client() {
    use masked_sum::masking::dealer::{SealKey, deal_seeds, open_seed, seeded_mask};
    use rand::{Rng, SeedableRng};
    let f = Mersenne61;
    let ctx = RoundContext {
        session: SessionId([4; 32]),
        round: 9,
    };
    let dealer = MaskKeyPair::from_secret_bytes([3; 32]);
    let ids: Vec<u64> = (0..40).map(|i| 3 * i + 1).collect();
    let keys: Vec<SealKey> = (ids.iter())
        .map(|&c| {
            let mine = MaskKeyPair::from_secret_bytes([(c % 250) as u8 + 5; 32]);
            SealKey::agree(&dealer, c, &mine.public_key()).unwrap()
        })
        .collect();
    let ring: Vec<(u64, &SealKey)> = ids.iter().copied().zip(&keys).collect();
    let len = 37;
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(11);
    let mut replay = rng.clone();
    let deal = deal_seeds(&f, &ctx, &ring, len, &mut rng).unwrap();
    assert_eq!(deal.sealed.len(), ids.len());
    let mut sum = deal.correction.0.clone();
    for ((c, key), (named, sealed)) in ring.iter().zip(&deal.sealed) {
        assert_eq!(c, named, "the seals are in ring order");
        let (mut seed, mut nonce) = ([0u8; 32], [0u8; 12]);
        replay.fill_bytes(&mut seed);
        replay.fill_bytes(&mut nonce);
        assert_eq!(&sealed[..12], &nonce, "client {c}'s nonce");
        let opened = open_seed(key, &ctx, *c, &ids, sealed).unwrap();
        assert_eq!(*opened, seed, "client {c}'s seed");
        let mask = seeded_mask(&f, &opened, &ctx, *c, len).unwrap();
        for (s, m) in sum.iter_mut().zip(&mask.0) {
            *s = f.mask_add(s, m);
        }
    }
    assert!(sum.iter().all(|e| *e == f.mask_zero()));
}

#[test]
fn c5_non_contributory_peer_keys_are_refused() {
    let me = MaskKeyPair::from_secret_bytes([9; 32]);
    let ctx = RoundContext {
        session: SessionId([0; 32]),
        round: 0,
    };
    // u = 0 and u = 1 are low-order points (orders 2 and 4): a clamped
    // scalar, a multiple of 8, sends both to the all-zero output.
    let mut one = [0u8; 32];
    one[0] = 1;
    for bad in [[0u8; 32], one] {
        let err = derive_pair_seed(&me, 1, 2, &MaskPublicKey(bad), &ctx).unwrap_err();
        assert_eq!(
            err,
            masked_sum::SumError::Protocol(ProtocolError::NonContributoryKey { peer: 2 })
        );
    }
}

#[derive(serde::Deserialize)]
struct Case {
    name: String,
    modulus: String,
    secret_u: String,
    secret_v: String,
    public_u: String,
    public_v: String,
    id_u: u64,
    id_v: u64,
    session: String,
    round: u64,
    seed: String,
    keystream_prefix: String,
    rejected: usize,
    values: Vec<String>,
}

#[derive(serde::Deserialize)]
struct Kat {
    cases: Vec<Case>,
}

/// The ring `Z / 2^k`, written here from its definition (the
/// `syndrome-agg` crate's `IntegerRing` is the one a sketch masks in; its
/// own run of the ring's case is that crate's `kat_ring.rs`).
#[derive(Clone, Debug, PartialEq)]
struct PowerOfTwo(u64);

impl MaskDomain for PowerOfTwo {
    type Elem = BigUint;
    fn mask_modulus(&self) -> BigUint {
        BigUint::from(1u8) << self.0
    }
    fn mask_zero(&self) -> BigUint {
        BigUint::from(0u8)
    }
    fn mask_add(&self, a: &BigUint, b: &BigUint) -> BigUint {
        (a + b) % self.mask_modulus()
    }
    fn mask_sub(&self, a: &BigUint, b: &BigUint) -> BigUint {
        (a + self.mask_modulus() - b) % self.mask_modulus()
    }
    fn mask_from_canonical(&self, v: &BigUint) -> BigUint {
        v % self.mask_modulus()
    }
}

fn check_sampling<D: MaskDomain>(d: &D, case: &Case, seed: &[u8; 32])
where
    D::Elem: Clone,
{
    let want: Vec<BigUint> = case.values.iter().map(|v| v.parse().unwrap()).collect();
    let got = d.sample(&mut MaskStream::new(seed), want.len()).unwrap();
    let expect: Vec<D::Elem> = want.iter().map(|v| d.mask_from_canonical(v)).collect();
    assert_eq!(got, expect, "case {}", case.name);
}

/// Our mask-sampling KAT, produced by the independent Python reference
/// `scripts/ref/mask_kat.py` (the `cryptography` package's X25519, HKDF
/// and ChaCha20).
#[test]
fn c5_mask_sampling_kat_matches_the_python_reference() {
    let kat: Kat = serde_json::from_str(include_str!("vectors/mask_kat.json")).unwrap();
    assert_eq!(kat.cases.len(), 5);
    assert!(
        kat.cases.iter().any(|c| c.rejected > 0),
        "the KAT must exercise rejection"
    );
    for case in &kat.cases {
        let u = MaskKeyPair::from_secret_bytes(hex32(&case.secret_u));
        let v = MaskKeyPair::from_secret_bytes(hex32(&case.secret_v));
        assert_eq!(u.public_key().0, hex32(&case.public_u));
        assert_eq!(v.public_key().0, hex32(&case.public_v));
        let ctx = RoundContext {
            session: SessionId(hex32(&case.session)),
            round: case.round,
        };
        let su = derive_pair_seed(&u, case.id_u, case.id_v, &v.public_key(), &ctx).unwrap();
        let sv = derive_pair_seed(&v, case.id_v, case.id_u, &u.public_key(), &ctx).unwrap();
        assert_eq!(su.as_bytes(), &hex32(&case.seed), "case {}", case.name);
        assert_eq!(sv.as_bytes(), su.as_bytes());
        let mut prefix = [0u8; 64];
        su.stream().fill(&mut prefix).unwrap();
        assert_eq!(prefix.to_vec(), hex(&case.keystream_prefix));
        let seed = *su.as_bytes();
        let m: BigUint = case.modulus.parse().unwrap();
        match case.name.as_str() {
            "fp251" => check_sampling(&Fp64::new(251).unwrap(), case, &seed),
            "mersenne61" => check_sampling(&Mersenne61, case, &seed),
            "mersenne127" => check_sampling(&Mersenne127, case, &seed),
            "ring2^70" => check_sampling(&PowerOfTwo(70), case, &seed),
            "p256" => check_sampling(&BigPrime::new(m).unwrap(), case, &seed),
            other => panic!("unknown case {other}"),
        }
    }
}
