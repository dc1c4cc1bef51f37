//! The test cases (docs/threat-model.md §9) that concern sketches, decoders, masking and
//! parsing, one named test each (C3, C4, C5, M1-M5, O1, O2, R1, R2) plus
//! the exhaustive form of the decoder's detection bound.
#![allow(clippy::unwrap_used)]

use field::{Field, FiniteField, Fp64, Mersenne61};
use num_bigint::BigUint;
use rand::RngExt;
use syndrome_agg::LinearSketch;
use syndrome_agg::RawSketch;
use syndrome_agg::masking::pairwise::{MaskKeyPair, RoundContext, SessionId};
use syndrome_agg::masking::{MaskVector, deal_zero_sum_masks};
use syndrome_agg::wide::{WideKeyParams, WideSketch, key_hash};
use syndrome_agg::wire::{DEFAULT_MAX_FRAME, Frame, WIRE_VERSION};
use syndrome_agg::{
    Aggregator, CountPolicy, IntegerParams, IntegerSketch, MaskedSketch, Sketch, SketchError,
    SketchParams,
};
use syndrome_agg::{DecodeError, ParamsError, ProtocolError, WireError};

fn ctx(round: u64) -> RoundContext {
    RoundContext {
        session: SessionId([42; 32]),
        round,
    }
}

#[test]
fn c3_field_edges() {
    let f = Fp64::new(101).unwrap();
    // Keys 1 and N = p - 1, counts summing to n_max = 100 < p, and all
    // clients on one key.
    let params = SketchParams::new(2, 100u32)
        .with_counts(CountPolicy::unsigned(100u32))
        .validate(f)
        .unwrap();
    let mut sum = Sketch::new(&params);
    for _ in 0..10 {
        sum.add(&Sketch::from_unsigned(&params, [(100u32, 9u64)]).unwrap())
            .unwrap();
    }
    sum.add(&Sketch::from_unsigned(&params, [(1u32, 10u64)]).unwrap())
        .unwrap();
    assert_eq!(
        sum.decode().unwrap().to_unsigned(&f),
        vec![(1u32.into(), 10u32.into()), (100u32.into(), 90u32.into())]
    );
    // validate rejects N >= p, n_max >= p, and 2t + r above the cap.
    assert!(matches!(
        SketchParams::new(2, 101u32).validate(f),
        Err(SketchError::Params(ParamsError::FieldTooSmall { .. }))
    ));
    assert!(matches!(
        SketchParams::new(2, 100u32)
            .with_counts(CountPolicy::unsigned(101u32))
            .validate(f),
        Err(SketchError::Params(ParamsError::FieldTooSmall { .. }))
    ));
    assert!(matches!(
        SketchParams::new(2, 50u32)
            .with_counts(CountPolicy::signed(51u32))
            .validate(f),
        Err(SketchError::Params(ParamsError::FieldTooSmall { .. }))
    ));
    assert!(matches!(
        SketchParams::new(10, 100u32)
            .with_max_syndromes(20)
            .validate(f),
        Err(SketchError::Params(ParamsError::InvalidParams { .. }))
    ));
    // Key 0 and keys above N are refused by the encoder.
    assert!(matches!(
        Sketch::from_unsigned(&params, [(0u32, 1u64)]),
        Err(SketchError::Params(ParamsError::KeyOutOfDomain { .. }))
    ));
    assert!(matches!(
        Sketch::from_unsigned(&params, [(101u32, 1u64)]),
        Err(SketchError::Params(ParamsError::KeyOutOfDomain { .. }))
    ));
}

#[test]
fn c2_masked_rounds_of_2_3_10_50_clients_equal_the_plaintext_oracle() {
    let f = Mersenne61;
    let params = SketchParams::new(20, 1u64 << 50)
        .with_counts(CountPolicy::unsigned(1u64 << 40))
        .validate(f)
        .unwrap();
    let mut rng = testdata::rng("c2");
    for n in [2usize, 3, 10, 50] {
        let pool: Vec<u64> = (0..20).map(|_| rng.random_range(1..=1u64 << 50)).collect();
        let sketches: Vec<Sketch<Mersenne61>> = (0..n)
            .map(|_| {
                let entries: Vec<(u64, u64)> = pool
                    .iter()
                    .filter(|_| rng.random_bool(0.1))
                    .map(|&k| (k, 1))
                    .collect();
                Sketch::from_unsigned(&params, entries).unwrap()
            })
            .collect();
        let mut plain = Sketch::new(&params);
        sketches.iter().for_each(|s| plain.add(s).unwrap());
        let masked =
            sagg_testkit::sagg::props::mask_all(&params, &sketches, false, ctx(3), &mut rng);
        let mut agg = Aggregator::new(&params, ctx(3), n);
        for (m, s) in masked.iter().zip(&sketches) {
            assert_ne!(
                m.elements(),
                s.elements(),
                "a masked vector equals its plaintext"
            );
            agg.accept(m).unwrap();
        }
        assert_eq!(agg.decode().unwrap(), plain.decode().unwrap());
    }
}

#[test]
fn c4_empty_aggregate_decodes_to_empty() {
    let params = SketchParams::new(3, 1000u32).validate(Mersenne61).unwrap();
    let masks = deal_zero_sum_masks(
        &Mersenne61,
        3,
        params.num_syndromes(),
        &mut testdata::rng("c4"),
    );
    let mut agg = Aggregator::new(&params, ctx(0), 3);
    for (i, m) in masks.iter().enumerate() {
        agg.accept(&Sketch::new(&params).mask(m, i as u64, ctx(0)).unwrap())
            .unwrap();
    }
    assert!(agg.decode().unwrap().is_empty());
    let ip = IntegerParams::new(2, 10u32, 10u32).validate().unwrap();
    assert!(IntegerSketch::new(&ip).decode().unwrap().is_empty());
    let wp = WideKeyParams::new(2, 8, [0; 32])
        .validate(Mersenne61)
        .unwrap();
    assert!(WideSketch::new(&wp).decode().unwrap().is_empty());
}

#[test]
fn c5_masking_and_decoding_are_deterministic() {
    let params = SketchParams::new(4, 1u64 << 40)
        .validate(Mersenne61)
        .unwrap();
    let sketch = Sketch::from_unsigned(&params, [(5u64, 1u64), (1 << 39, 2)]).unwrap();
    let a = MaskKeyPair::from_secret_bytes([1; 32]);
    let b = MaskKeyPair::from_secret_bytes([2; 32]);
    let peers = [(8u64, b.public_key())];
    let m1 = sketch.mask_pairwise(&a, 3, &peers, ctx(1)).unwrap();
    let m2 = sketch.mask_pairwise(&a, 3, &peers, ctx(1)).unwrap();
    assert_eq!(
        m1.to_frame().to_bytes().unwrap(),
        m2.to_frame().to_bytes().unwrap()
    );
    // Another round gives unrelated masks.
    let m3 = sketch.mask_pairwise(&a, 3, &peers, ctx(2)).unwrap();
    assert_ne!(m1.elements(), m3.elements());
    let rebuilt = Sketch::from_elements(&params, sketch.elements().to_vec()).unwrap();
    assert_eq!(sketch.decode().unwrap(), rebuilt.decode().unwrap());
}

#[test]
fn m1_garbage_from_one_client_is_rejected() {
    let f = Mersenne61;
    let params = SketchParams::new(5, 1u64 << 50).validate(f).unwrap();
    let mut rng = testdata::rng("m1");
    for _ in 0..200 {
        let mut sum = Sketch::from_unsigned(&params, [(7u64, 3u64)]).unwrap();
        let garbage: Vec<_> = (0..params.num_syndromes())
            .map(|_| f.random(&mut rng))
            .collect();
        sum.add(&Sketch::from_elements(&params, garbage).unwrap())
            .unwrap();
        assert!(sum.decode().is_err());
    }
}

#[test]
fn m2_over_capacity_beyond_t_plus_r_rejected_in_ten_thousand_trials() {
    // p = 2^31 - 1: a false accept has probability about p^-r per trial.
    let f = Fp64::new((1 << 31) - 1).unwrap();
    let params = SketchParams::new(2, (1u64 << 31) - 2)
        .with_extra(1)
        .validate(f)
        .unwrap();
    let mut rng = testdata::rng("m2");
    for _ in 0..10_000 {
        let s = rng.random_range(4..=6u64);
        let entries: Vec<(u64, i64)> = (0..s)
            .map(|_| {
                (
                    rng.random_range(1..(1u64 << 31) - 1),
                    rng.random_range(1..1000i64),
                )
            })
            .collect();
        let sketch = Sketch::from_signed(&params, entries).unwrap();
        assert!(sketch.decode().is_err());
    }
}

/// The detection bound, exhaustively: over GF(7) with t = 2, r = 1 (and
/// GF(13) with t = 1, r = 1), *every* vector with t < s <= t + r nonzeros
/// is rejected, and every vector with at most t nonzeros decodes exactly.
#[test]
fn detection_bound_holds_exhaustively_on_tiny_fields() {
    for (p, t) in [(7u64, 2usize), (13, 1)] {
        let f = Fp64::new(p).unwrap();
        let params = SketchParams::new(t, p - 1)
            .with_extra(1)
            .validate(f)
            .unwrap();
        let keys: Vec<u64> = (1..p).collect();
        let mut checked = 0;
        // Every support of size s <= t + 1, every assignment of nonzero counts.
        for s in 0..=t + 1 {
            for support in subsets(&keys, s) {
                let mut counts = vec![1u64; s];
                loop {
                    let entries: Vec<(u64, u64)> = support
                        .iter()
                        .copied()
                        .zip(counts.iter().copied())
                        .collect();
                    let sketch = Sketch::from_unsigned(&params, entries.clone()).unwrap();
                    let got = sketch.decode();
                    if s <= t {
                        let want: Vec<(BigUint, BigUint)> =
                            entries.iter().map(|&(k, c)| (k.into(), c.into())).collect();
                        assert_eq!(got.unwrap().to_unsigned(&f), want);
                    } else {
                        assert!(got.is_err(), "{entries:?} decoded over GF({p})");
                    }
                    checked += 1;
                    // Next assignment of counts in 1..p.
                    let Some(i) = counts.iter().position(|&c| c < p - 1) else {
                        break;
                    };
                    counts[i] += 1;
                    counts[..i].iter_mut().for_each(|c| *c = 1);
                }
            }
        }
        assert!(checked > 1000);
    }
}

fn subsets(items: &[u64], k: usize) -> Vec<Vec<u64>> {
    if k == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, &x) in items.iter().enumerate() {
        for mut rest in subsets(&items[i + 1..], k - 1) {
            rest.insert(0, x);
            out.push(rest);
        }
    }
    out
}

#[test]
fn m3_non_canonical_wrong_length_and_truncated_frames_are_rejected() {
    let params = SketchParams::new(2, 100u32).validate(Mersenne61).unwrap();
    let msg = Sketch::from_unsigned(&params, [(3u32, 1u64)])
        .unwrap()
        .mask(&MaskVector(vec![0; 5]), 1, ctx(0))
        .unwrap();
    let good = msg.to_frame();
    // An element >= p.
    let mut f = good.clone();
    f.elements[..8].copy_from_slice(&u64::MAX.to_le_bytes());
    assert_eq!(
        MaskedSketch::<Sketch<_>>::from_frame(&f, &params),
        Err(SketchError::Decode(DecodeError::NonCanonical))
    );
    // p itself is not canonical either.
    f.elements[..8].copy_from_slice(&((1u64 << 61) - 1).to_le_bytes());
    assert_eq!(
        MaskedSketch::<Sketch<_>>::from_frame(&f, &params),
        Err(SketchError::Decode(DecodeError::NonCanonical))
    );
    // One element too few.
    let mut f = good.clone();
    f.elements.truncate(32);
    assert_eq!(
        MaskedSketch::<Sketch<_>>::from_frame(&f, &params),
        Err(SketchError::Decode(DecodeError::WrongLength {
            expected: 40,
            found: 32
        }))
    );
    // A truncated frame, trailing bytes, another version, another field.
    let bytes = good.to_bytes().unwrap();
    for cut in 0..bytes.len() {
        assert!(Frame::parse(&bytes[..cut], DEFAULT_MAX_FRAME).is_err());
    }
    let mut long = bytes;
    long.push(0);
    assert!(matches!(
        Frame::parse(&long, DEFAULT_MAX_FRAME),
        Err(SketchError::Wire(WireError::Malformed { .. }))
    ));
    let mut v2 = good.clone();
    v2.version = WIRE_VERSION + 1;
    assert!(matches!(
        Frame::parse(&v2.to_bytes().unwrap(), DEFAULT_MAX_FRAME),
        Err(SketchError::Wire(WireError::UnsupportedVersion { .. }))
    ));
    let other = SketchParams::new(2, 100u32)
        .validate(field::Mersenne127)
        .unwrap();
    assert_eq!(
        MaskedSketch::<Sketch<_>>::from_frame(&good, &other),
        Err(SketchError::Params(ParamsError::ParamsMismatch {
            what: "field modulus"
        }))
    );
    let wider = SketchParams::new(3, 100u32).validate(Mersenne61).unwrap();
    assert_eq!(
        MaskedSketch::<Sketch<_>>::from_frame(&good, &wider),
        Err(SketchError::Params(ParamsError::ParamsMismatch {
            what: "capacity"
        }))
    );
    assert_eq!(MaskedSketch::from_frame(&good, &params).unwrap(), msg);
}

#[test]
fn m4_out_of_range_results_are_rejected() {
    let f = Mersenne61;
    // A key above N: encode over a wider domain, decode with the narrow one.
    let wide = SketchParams::new(2, 1000u32).validate(f).unwrap();
    let narrow = SketchParams::new(2, 100u32).validate(f).unwrap();
    let s = Sketch::from_unsigned(&wide, [(500u32, 1u64)]).unwrap();
    let crafted = Sketch::from_elements(&narrow, s.into_elements()).unwrap();
    assert!(matches!(
        crafted.decode(),
        Err(SketchError::Decode(DecodeError::KeyOutOfRange { .. }))
    ));
    // A "negative" count and one above n_max under an unsigned policy.
    let loose = SketchParams::new(2, 100u32).validate(f).unwrap();
    let strict = SketchParams::new(2, 100u32)
        .with_counts(CountPolicy::unsigned(50u32))
        .validate(f)
        .unwrap();
    for count in [f.from_i64(-1), f.from_u64(51)] {
        let s = Sketch::encode(&loose, [(BigUint::from(9u32), count)]).unwrap();
        let crafted = Sketch::from_elements(&strict, s.into_elements()).unwrap();
        assert!(matches!(
            crafted.decode(),
            Err(SketchError::Decode(DecodeError::CountOutOfRange { .. }))
        ));
    }
    // Totals: 30 + 30 > 50.
    let s = Sketch::from_unsigned(&loose, [(1u32, 30u64), (2, 30)]).unwrap();
    let crafted = Sketch::from_elements(&strict, s.into_elements()).unwrap();
    assert!(matches!(
        crafted.decode(),
        Err(SketchError::Decode(DecodeError::CountOutOfRange { .. }))
    ));
    // Signed values beyond max_abs.
    let signed = SketchParams::new(2, 100u32)
        .with_counts(CountPolicy::signed(10u32))
        .validate(f)
        .unwrap();
    let s = Sketch::encode(&loose, [(BigUint::from(4u32), f.from_i64(-11))]).unwrap();
    let crafted = Sketch::from_elements(&signed, s.into_elements()).unwrap();
    assert!(matches!(
        crafted.decode(),
        Err(SketchError::Decode(DecodeError::CountOutOfRange { .. }))
    ));
    // Integer sketch: a count above max_total.
    let ip = IntegerParams::new(2, 100u32, 5u32).validate().unwrap();
    let big = IntegerParams::new(2, 100u32, 1000u32).validate().unwrap();
    let s = IntegerSketch::from_unsigned(&big, [(3u32, 6u64)]).unwrap();
    let s = s.elements().iter().map(|v| ip.ring().reduce(v)).collect();
    assert!(
        IntegerSketch::from_elements(&ip, s)
            .unwrap()
            .decode()
            .is_err()
    );
}

#[test]
fn m5_locator_with_irreducible_factor_or_repeated_root_is_rejected() {
    let f = Mersenne61;
    let params = SketchParams::new(3, (1u64 << 61) - 2).validate(f).unwrap();
    let m = params.num_syndromes();
    // s_k = -s_{k-2}: connection 1 + x^2, reverse x^2 + 1, irreducible
    // because 2^61 - 1 = 3 (mod 4) makes -1 a non-residue.
    let mut s = vec![f.one(), f.one()];
    while s.len() < m {
        let v = f.neg(&s[s.len() - 2]);
        s.push(v);
    }
    let sketch = Sketch::from_elements(&params, s).unwrap();
    assert_eq!(
        sketch.decode(),
        Err(SketchError::Decode(DecodeError::LocatorDoesNotSplit))
    );
    // s_k = (k + 1) a^k: reverse locator (x - a)^2.
    let a = f.from_u64(5);
    let s: Vec<_> = (0..m as u64)
        .map(|k| f.mul(&f.from_u64(k + 1), &f.pow_u64(&a, k)))
        .collect();
    let sketch = Sketch::from_elements(&params, s).unwrap();
    assert_eq!(
        sketch.decode(),
        Err(SketchError::Decode(DecodeError::RepeatedRoot))
    );
}

#[test]
fn o1_oversized_frame_is_rejected_before_decoding() {
    let bytes = vec![0u8; 1025];
    assert_eq!(
        Frame::parse(&bytes, 1024),
        Err(SketchError::Wire(WireError::FrameTooLarge {
            len: 1025,
            max: 1024
        }))
    );
}

#[test]
fn o2_parameter_abuse_is_refused_without_allocation() {
    assert!(matches!(
        SketchParams::new(usize::MAX / 2, 10u32).validate(Mersenne61),
        Err(SketchError::Params(ParamsError::InvalidParams { .. }))
    ));
    assert!(matches!(
        IntegerParams::new(1 << 20, 1u64 << 40, 10u32).validate(),
        Err(SketchError::Params(ParamsError::InvalidParams { .. }))
    ));
    assert!(matches!(
        WideKeyParams::new(4, 1 << 20, [0; 32]).validate(Mersenne61),
        Err(SketchError::Params(ParamsError::InvalidParams { .. }))
    ));
    // A frame whose element string claims 2^60 bytes: postcard's varint
    // length prefix is checked against the input, nothing is allocated.
    let params = SketchParams::new(1, 10u32).validate(Mersenne61).unwrap();
    let mut bytes = Sketch::new(&params)
        .to_frame(1, &ctx(0))
        .to_bytes()
        .unwrap();
    let n = bytes.len();
    let tail_len = 8 * 3 + 1; // the 24 element bytes and their 1-byte length
    bytes.truncate(n - tail_len);
    bytes.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]);
    assert!(matches!(
        Frame::parse(&bytes, DEFAULT_MAX_FRAME),
        Err(SketchError::Wire(WireError::Malformed { .. }))
    ));
}

#[test]
fn r1_duplicate_masked_input_is_rejected() {
    let params = SketchParams::new(2, 100u32).validate(Mersenne61).unwrap();
    let masks = deal_zero_sum_masks(&Mersenne61, 2, 5, &mut testdata::rng("r1"));
    let a = Sketch::from_unsigned(&params, [(1u32, 1u64)])
        .unwrap()
        .mask(&masks[0], 1, ctx(0))
        .unwrap();
    let b = Sketch::from_unsigned(&params, [(2u32, 1u64)])
        .unwrap()
        .mask(&masks[1], 2, ctx(0))
        .unwrap();
    let mut agg = Aggregator::new(&params, ctx(0), 2);
    agg.accept(&a).unwrap();
    assert!(matches!(
        agg.accept(&a),
        Err(SketchError::Protocol(ProtocolError::MessageRejected { .. }))
    ));
    agg.accept(&b).unwrap();
    assert_eq!(
        agg.decode().unwrap().to_unsigned(&Mersenne61),
        vec![(1u32.into(), 1u32.into()), (2u32.into(), 1u32.into())]
    );
}

#[test]
fn r2_cross_round_replay_is_rejected_and_would_not_cancel() {
    let params = SketchParams::new(2, 100u32).validate(Mersenne61).unwrap();
    let mut rng = testdata::rng("r2");
    let ka = MaskKeyPair::generate(&mut rng);
    let kb = MaskKeyPair::generate(&mut rng);
    let sa = Sketch::from_unsigned(&params, [(1u32, 1u64)]).unwrap();
    let sb = Sketch::from_unsigned(&params, [(2u32, 1u64)]).unwrap();
    let old_a = sa
        .mask_pairwise(&ka, 1, &[(2, kb.public_key())], ctx(0))
        .unwrap();
    let new_b = sb
        .mask_pairwise(&kb, 2, &[(1, ka.public_key())], ctx(1))
        .unwrap();
    let mut agg = Aggregator::new(&params, ctx(1), 2);
    assert!(matches!(
        agg.accept(&old_a),
        Err(SketchError::Protocol(ProtocolError::MessageRejected { .. }))
    ));
    // Forced in under the new round's label, the round-0 mask does not
    // cancel the round-1 mask: the sum is garbage and decoding fails.
    let forced = MaskedSketch::from_parts(&params, 1, ctx(1), old_a.elements().to_vec()).unwrap();
    agg.accept(&forced).unwrap();
    agg.accept(&new_b).unwrap();
    assert!(agg.decode().is_err());
}

#[test]
fn wide_key_hash_collision_is_an_error_not_a_wrong_key() {
    // A 17-bit field makes collisions of the keyed hash easy to find.
    let f = Fp64::new(65_537).unwrap();
    let hash_key = [7u8; 32];
    let mut seen = std::collections::HashMap::new();
    let (k1, k2) = (0u32..)
        .find_map(|i| {
            let key = format!("key-{i}").into_bytes();
            let h = f.to_u64(&key_hash(&f, &hash_key, &key).unwrap()).unwrap();
            seen.insert(h, key.clone()).map(|old| (old, key))
        })
        .unwrap();
    assert_ne!(k1, k2);
    let params = WideKeyParams::new(3, 16, hash_key).validate(f).unwrap();
    let s = WideSketch::from_unsigned(&params, [(&k1[..], 2u64), (&k2[..], 3)]).unwrap();
    assert!(matches!(
        s.decode(),
        Err(SketchError::Decode(DecodeError::HashMismatch { .. }))
    ));
    // Each key alone decodes.
    let s = WideSketch::from_unsigned(&params, [(&k1[..], 2u64)]).unwrap();
    assert_eq!(s.decode().unwrap().to_unsigned(&f), vec![(k1, 2u32.into())]);
}

#[test]
fn s2_duplicate_or_own_public_keys_are_refused() {
    use syndrome_agg::masking::pairwise::peer_mask_terms;
    let c = ctx(0);
    let me = MaskKeyPair::from_secret_bytes([1; 32]);
    let other = MaskKeyPair::from_secret_bytes([2; 32]);
    let dup = [(2, other.public_key()), (3, other.public_key())];
    assert!(matches!(
        peer_mask_terms(&Mersenne61, 3, &me, 1, &dup, &c).map_err(SketchError::from),
        Err(SketchError::Protocol(ProtocolError::InvalidPeers { .. }))
    ));
    let mine = [(2, me.public_key())];
    assert!(matches!(
        peer_mask_terms(&Mersenne61, 3, &me, 1, &mine, &c).map_err(SketchError::from),
        Err(SketchError::Protocol(ProtocolError::InvalidPeers { .. }))
    ));
    let twice = [(2, other.public_key()), (2, other.public_key())];
    assert!(peer_mask_terms(&Mersenne61, 3, &me, 1, &twice, &c).is_err());
    let myself = [(1, other.public_key())];
    assert!(peer_mask_terms(&Mersenne61, 3, &me, 1, &myself, &c).is_err());
    assert!(!format!("{me:?}").contains("secret"));
}
