//! The threat-model test cases (docs/threat-model.md §9) of the dropout-tolerant
//! protocol for a server that lies or relays tampered messages, one named
//! test each: S1, S1b, S2-S5.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use field::{Field, Fp64, Mersenne61};
use masked_sum::secagg::messages::{
    AdvertiseKeys, ClientBody, ServerBody, ServerEnvelope, UnmaskingRequest,
};
use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel, ThreatModel};
use masked_sum::secagg::shamir;
use masked_sum::secagg::transport::InProcess;
use masked_sum::secagg::{ClientId, DEFAULT_MAX_MESSAGE, SessionConfig, Step};
use masked_sum::{ProtocolError, SumError};
use sum_testkit::secagg::{Harness, all_but, config, inputs, oracle};

use crate::common;
use common::complete;

/// Drives a 5-client complete session to the unmasking request of client
/// 1 and returns the harness and that request.
fn at_unmasking(label: &str) -> (Harness<Mersenne61>, ServerEnvelope) {
    let f = Mersenne61;
    let cfg = config(&f, 5, complete(3), 2, label);
    let mut h = Harness::new(cfg, &inputs(&f, 5, 2, label), label);
    let reqs = h.to_unmasking();
    let r1 = reqs.into_iter().find(|m| m.client == 1).unwrap();
    (h, r1)
}

fn with_lists(
    msg: &ServerEnvelope,
    alive: Vec<ClientId>,
    dropped: Vec<ClientId>,
) -> ServerEnvelope {
    let mut m = msg.clone();
    let attestations = match &msg.body {
        ServerBody::UnmaskingRequest(r) => r.attestations.clone(),
        _ => Vec::new(),
    };
    m.body = ServerBody::UnmaskingRequest(UnmaskingRequest {
        alive,
        dropped,
        attestations,
    });
    m
}

#[test]
fn s1_unmasking_request_asking_for_both_shares() {
    let cases: [(&str, Vec<ClientId>, Vec<ClientId>); 5] = [
        ("alive and dropped", vec![2, 3], vec![3]),
        ("listed twice", vec![2, 2], vec![]),
        ("unknown id", vec![2, 99], vec![]),
        ("the client itself", vec![2], vec![1]),
        ("itself as alive", vec![1, 2], vec![]),
    ];
    for (what, alive, dropped) in cases {
        let (mut h, req) = at_unmasking(&format!("s1-{what}"));
        let bad = with_lists(&req, alive, dropped);
        let before = h.sent.len();
        let err = h.answer_one(&bad).unwrap_err();
        assert!(
            matches!(
                err,
                SumError::Protocol(ProtocolError::ProtocolAbort { client: 1, .. })
            ),
            "{what}: {err}"
        );
        assert!(h.clients[&1].is_aborted(), "{what}");
        assert_eq!(h.sent.len(), before, "{what}: nothing revealed");
        // An aborted client stays silent, even for the honest request.
        assert!(h.answer_one(&req).is_err(), "{what}");
    }
    // A second request after the first was answered: "3 dropped" after
    // "3 alive" is refused, nothing more is revealed.
    let (mut h, req) = at_unmasking("s1-second");
    let first = h.answer_one(&req).unwrap();
    let ClientBody::UnmaskingResponse(resp) = &first.body else {
        panic!()
    };
    assert!(resp.key_shares.is_empty() && resp.seed_shares.iter().any(|s| s.owner == 3));
    let again = with_lists(&req, vec![], vec![3]);
    assert!(matches!(
        h.answer_one(&again),
        Err(SumError::Protocol(ProtocolError::UnexpectedMessage { .. }))
    ));
}

/// The adversary's view of client 1's secrets when the server splits its
/// holders (n = 7, colluder 7): at the consistency step the clients of
/// `told_alive` (and 1 itself) are sent the true alive set, the others the
/// set without 1, so that at unmasking the first reveal seed shares of 1
/// and the others key shares of 1; the colluder holds one of each and
/// forges its attestations. Returns (seed shares, key shares, whether
/// `b_1` and `s_sk_1` are reconstructible).
fn split_attack(
    params: SecAggParams,
    told_alive: &[ClientId],
    label: &str,
) -> (usize, usize, bool, bool) {
    let colluders = BTreeSet::from([7]);
    let out = sum_testkit::lying::play_with(
        7,
        params,
        &colluders,
        label,
        sum_testkit::lying::Plan {
            keep: &|_| None,
            set: &mut |r, truth| {
                let keep_1 = r == 1 || told_alive.contains(&r);
                Some(
                    truth
                        .iter()
                        .copied()
                        .filter(|w| keep_1 || *w != 1)
                        .collect(),
                )
            },
            lists: &mut |_, _, _| None,
        },
    );
    (
        out.view.seeds.get(&1).map_or(0, Vec::len),
        out.view.keys.get(&1).map_or(0, Vec::len),
        out.known.seeds.contains_key(&1),
        out.known.keys.contains_key(&1),
    )
}

#[test]
fn s1b_server_splits_the_neighbourhood() {
    // Complete graph on 7: h = 7 holders per secret, c = 1 colluder.
    // Semi-malicious policy: 2t > h + c, so t = 5.
    let strong = SecAggParams::new(GraphChoice::Complete, 5, 1, ServerModel::SemiMalicious);
    // {1, 2, 3, 4} attest the true set to each other (3 tags, plus the
    // colluder's forged one: t - 1 = 4) and reveal seed shares of 1; {5, 6}
    // gather only 2 attestations of their set and reveal nothing.
    let (seeds, keys, seed_ok, key_ok) = split_attack(strong, &[2, 3, 4], "s1b-strong");
    assert_eq!((seeds, keys), (5, 1));
    assert!(
        !(seed_ok && key_ok),
        "the server must reconstruct at most one of b_1, s_sk_1"
    );
    assert!(seed_ok && !key_ok);
    // An even split: neither side gathers t - 1 attestations; only the
    // colluder's shares are out.
    let (seeds, keys, seed_ok, key_ok) = split_attack(strong, &[2, 3], "s1b-strong-even");
    assert_eq!((seeds, keys), (1, 1));
    assert!(!seed_ok && !key_ok);
    // Every other split of the five honest holders fails the same way:
    // seed shares a + 1 (self) + c, key shares (5 - a) + c.
    for a in 0..=5usize {
        assert!(!(a + 2 >= 5 && 5 - a + 1 >= 5), "split {a}");
    }
    // t = 4 is refused under the semi-malicious policy ...
    let weak = SecAggParams::new(GraphChoice::Complete, 4, 1, ServerModel::SemiMalicious);
    assert!(weak.validate(7).is_err());
    // ... and rightly: a semi-honest configuration with t = 4 lets the
    // lying server reconstruct both secrets of client 1.
    let weak = SecAggParams::new(GraphChoice::Complete, 4, 1, ServerModel::SemiHonest);
    let (_, _, seed_ok, key_ok) = split_attack(weak, &[2, 3], "s1b-weak");
    assert!(seed_ok && key_ok);
    // The finder enforces the rule for SecAgg+ too.
    let p = ThreatModel::new(500, 0.05, 0.1, ServerModel::SemiMalicious)
        .find()
        .unwrap();
    let h = p.holders(500);
    assert!(2 * p.threshold > h + p.max_colluders);
}

/// Runs client 1 of a 4-client session on a tampered key directory.
fn directory_abort(tamper: impl Fn(&mut Vec<(ClientId, AdvertiseKeys)>), label: &str) -> SumError {
    let f = Mersenne61;
    let cfg = config(&f, 4, complete(3), 1, label);
    let mut h = Harness::new(cfg, &inputs(&f, 4, 1, label), label);
    let dirs = h.step(&[]);
    let mut d1 = dirs.into_iter().find(|m| m.client == 1).unwrap();
    let ServerBody::KeyDirectory(dir) = &mut d1.body else {
        panic!()
    };
    tamper(&mut dir.entries);
    let before = h.sent.len();
    let err = h.answer_one(&d1).unwrap_err();
    assert!(h.clients[&1].is_aborted(), "{label}");
    assert_eq!(h.sent.len(), before, "{label}: no share left the client");
    err
}

#[test]
fn s2_tampered_key_broadcast() {
    let abort = |e: &SumError| {
        matches!(
            e,
            SumError::Protocol(ProtocolError::ProtocolAbort { client: 1, .. })
        )
    };
    // Duplicate public keys.
    let e = directory_abort(|d| d[2].1.enc_key = d[1].1.enc_key, "s2-dup");
    assert!(abort(&e), "{e}");
    let e = directory_abort(|d| d[2].1.mask_key = d[1].1.enc_key, "s2-dup-cross");
    assert!(abort(&e), "{e}");
    // Own key altered, own entry omitted, own commitment altered.
    let e = directory_abort(|d| d[0].1.mask_key[3] ^= 1, "s2-own-altered");
    assert!(abort(&e), "{e}");
    let e = directory_abort(|d| d[0].1.seed_commitment[0] ^= 1, "s2-commitment");
    assert!(abort(&e), "{e}");
    let e = directory_abort(
        |d| {
            d.remove(0);
        },
        "s2-own-omitted",
    );
    assert!(abort(&e), "{e}");
    // All-zero and low-order X25519 keys (was_contributory() is false).
    let e = directory_abort(|d| d[1].1.enc_key = [0; 32], "s2-zero");
    assert!(abort(&e), "{e}");
    let mut one = [0u8; 32];
    one[0] = 1; // u = 1 has order 4 on Curve25519's twist-free encoding
    let e = directory_abort(move |d| d[2].1.mask_key = one, "s2-low-order");
    assert!(abort(&e), "{e}");
    // Too few entries for the threshold.
    let e = directory_abort(|d| d.truncate(2), "s2-too-few");
    assert!(abort(&e), "{e}");
    // A non-holder / unknown id.
    let e = directory_abort(|d| d[3].0 = 42, "s2-unknown");
    assert!(abort(&e), "{e}");
    // Wrong key length: a directory frame cut inside a key does not parse.
    let f = Mersenne61;
    let cfg = config(&f, 4, complete(3), 1, "s2-len");
    let mut h = Harness::new(cfg, &inputs(&f, 4, 1, "s2-len"), "s2-len");
    let bytes = h.step(&[])[0].to_bytes().unwrap();
    assert!(ServerEnvelope::parse(&bytes[..bytes.len() - 5], DEFAULT_MAX_MESSAGE).is_err());
}

#[test]
fn s3_tampered_encrypted_share() {
    let f = Mersenne61;
    let (n, t) = (6u64, 3);
    let ins = inputs(&f, n, 2, "s3");
    let flip: Box<dyn FnMut(&mut ServerEnvelope)> = Box::new(|m: &mut ServerEnvelope| {
        if let (2, ServerBody::MaskingRequest(r)) = (m.client, &mut m.body) {
            r.shares[0].ciphertext[5] ^= 1;
        }
    });
    // Client 2 gets its own ciphertext for 1 back, labelled as from 1
    // (sender and receiver swapped).
    let mut saved: Option<Vec<u8>> = None;
    let swap: Box<dyn FnMut(&mut ServerEnvelope)> = Box::new(move |m: &mut ServerEnvelope| {
        let ServerBody::MaskingRequest(r) = &mut m.body else {
            return;
        };
        if m.client == 1 {
            saved = r
                .shares
                .iter()
                .find(|e| e.peer == 2)
                .map(|e| e.ciphertext.clone());
        } else if m.client == 2
            && let Some(e) = r.shares.iter_mut().find(|e| e.peer == 1)
        {
            e.ciphertext = saved.clone().unwrap();
        }
    });
    for (what, tamper) in [("flip", flip), ("swap-src-dst", swap)] {
        let cfg = config(&f, n, complete(t), 2, &format!("s3-{what}"));
        let report = InProcess::new(cfg)
            .with_server_tamper(tamper)
            .run(ins.clone(), &mut testdata::rng("s3"))
            .unwrap();
        assert!(
            report.client_errors.iter().any(|(c, s, e)| *c == 2
                && *s == Step::MaskedInput
                && matches!(
                    e,
                    SumError::Protocol(ProtocolError::AeadFailure { to: 2, .. })
                )),
            "{what}: {:?}",
            report.client_errors
        );
        // The victim aborted; the others finish without it.
        let out = report.output.unwrap();
        assert_eq!(out.dropped.get(&2), Some(&Step::MaskedInput), "{what}");
        assert_eq!(out.sum, oracle(&f, &ins, &all_but(n, &[2])), "{what}");
    }
    // A ciphertext replayed from another session (same clients, same
    // seeds for their RNGs) or from another round fails authentication.
    let cfg_a = config(&f, n, complete(t), 2, "s3-session-a");
    let mut a = Harness::new(cfg_a, &ins, "s3-replay");
    let dir = a.step(&[]);
    assert!(a.answer(&dir).is_empty());
    let old = a.step(&[]);
    for label in ["s3-session-b", "s3-round"] {
        let cfg_b = if label == "s3-round" {
            let c = config(&f, n, complete(t), 2, "s3-session-a");
            let next = SessionConfig::new(f, c.context().next(), c.graph().clone(), *c.params(), 2)
                .unwrap();
            std::sync::Arc::new(next)
        } else {
            config(&f, n, complete(t), 2, label)
        };
        let mut b = Harness::new(cfg_b, &ins, "s3-replay");
        let dir = b.step(&[]);
        assert!(b.answer(&dir).is_empty());
        let mut req = b.step(&[]).into_iter().find(|m| m.client == 2).unwrap();
        let old2 = old.iter().find(|m| m.client == 2).unwrap();
        let (ServerBody::MaskingRequest(r), ServerBody::MaskingRequest(o)) =
            (&mut req.body, &old2.body)
        else {
            panic!()
        };
        r.shares[0].ciphertext = o.shares[0].ciphertext.clone();
        let before = b.sent.len();
        assert!(
            matches!(
                b.answer_one(&req),
                Err(SumError::Protocol(ProtocolError::AeadFailure { .. }))
            ),
            "{label}"
        );
        assert_eq!(b.sent.len(), before, "{label}: no plaintext used");
    }
}

#[test]
fn s4_bad_shamir_share_from_a_peer() {
    let f = Mersenne61;
    let (n, t) = (6u64, 3);
    let ins = inputs(&f, n, 2, "s4");
    // 6 responders, threshold 3: a wrong seed share is corrected.
    let cfg = config(&f, n, complete(t), 2, "s4");
    let mut h = Harness::new(cfg.clone(), &ins, "s4");
    let reqs = h.to_unmasking();
    assert!(h.answer(&reqs).is_empty());
    h.corrupt_share(2, 4, true);
    assert_eq!(h.finish().unwrap().sum, oracle(&f, &ins, &all_but(n, &[])));
    // A wrong key share of a dropped client is corrected too.
    let mut h = Harness::new(cfg.clone(), &ins, "s4-key");
    let dir = h.step(&[]);
    assert!(h.answer(&dir).is_empty());
    let req = h.step(&[]);
    assert!(h.answer(&req).is_empty());
    let cons = h.step(&[6]); // 6 dropped before its masked input arrived
    assert!(h.answer(&cons).is_empty());
    let unmask = h.step(&[]);
    assert!(h.answer(&unmask).is_empty());
    h.corrupt_share(1, 6, false);
    assert_eq!(h.finish().unwrap().sum, oracle(&f, &ins, &all_but(n, &[6])));
    // Exactly t responders and one bad share: detected, never a wrong sum.
    let mut h = Harness::new(cfg, &ins, "s4-exact");
    let reqs = h.to_unmasking();
    assert!(h.answer(&reqs).is_empty());
    h.corrupt_share(2, 1, true);
    h.pending.retain(|m| m.client <= 3);
    assert!(matches!(
        h.finish(),
        Err(SumError::Protocol(ProtocolError::BadShares {
            client: 1,
            ..
        }))
    ));
}

#[test]
fn s5_shamir_input_validation() {
    let f = Fp64::new(101).unwrap();
    let s = f.from_u64(42);
    let mut rng = testdata::rng("s5");
    let zero_id = |ids: &[u64]| {
        matches!(
            shamir::split(&f, &s, 2, ids, &mut testdata::rng("s5")),
            Err(SumError::Protocol(ProtocolError::ShareIdZero { .. }))
        )
    };
    assert!(zero_id(&[0, 1, 2]));
    assert!(zero_id(&[1, 101, 2])); // 101 = 0 mod p
    assert!(zero_id(&[1, 2, 202]));
    let dup = |ids: &[u64]| {
        matches!(
            shamir::split(&f, &s, 2, ids, &mut testdata::rng("s5")),
            Err(SumError::Protocol(ProtocolError::DuplicateShareId { .. }))
        )
    };
    assert!(dup(&[1, 2, 2]));
    assert!(dup(&[3, 104, 5])); // 104 = 3 mod p
    let shares = shamir::split(&f, &s, 3, &[1, 2, 3, 4], &mut rng).unwrap();
    assert!(matches!(
        shamir::reconstruct(&f, &shares[..2], 3),
        Err(SumError::Protocol(ProtocolError::TooFewShares {
            have: 2,
            need: 3
        }))
    ));
    assert!(matches!(
        shamir::decode_with_errors(&f, &shares[..2], 3),
        Err(SumError::Protocol(ProtocolError::TooFewShares { .. }))
    ));
    let mut twice = shares[..3].to_vec();
    twice[2] = twice[0].clone();
    assert!(matches!(
        shamir::reconstruct(&f, &twice, 3),
        Err(SumError::Protocol(ProtocolError::DuplicateShareId { .. }))
    ));
    let mut aliased = shares[..3].to_vec();
    aliased[2].id = 102; // = 1 mod p: same point as share 0
    // The error names both ids as given, not the reduced point.
    match shamir::reconstruct(&f, &aliased, 3) {
        Err(SumError::Protocol(ProtocolError::DuplicateShareId { id, earlier })) => {
            assert_eq!((id.as_str(), earlier.as_str()), ("102", "1"));
        }
        other => panic!("expected DuplicateShareId, got {other:?}"),
    }
    match shamir::split(&f, &s, 2, &[3, 104, 5], &mut testdata::rng("s5")) {
        Err(SumError::Protocol(ProtocolError::DuplicateShareId { id, earlier })) => {
            assert_eq!((id.as_str(), earlier.as_str()), ("104", "3"));
        }
        other => panic!("expected DuplicateShareId, got {other:?}"),
    }
    let mut zero = shares[..3].to_vec();
    zero[1].id = 0;
    assert!(matches!(
        shamir::reconstruct(&f, &zero, 3),
        Err(SumError::Protocol(ProtocolError::ShareIdZero { .. }))
    ));
    // The same for byte secrets.
    let b = shamir::split_secret(&[7; 32], 3, &[1, 2, 3], &mut rng).unwrap();
    assert!(matches!(
        shamir::reconstruct_secret(&b[..2], 3),
        Err(SumError::Protocol(ProtocolError::TooFewShares { .. }))
    ));
    assert!(matches!(
        shamir::split_secret(&[7; 32], 2, &[0, 1], &mut rng),
        Err(SumError::Protocol(ProtocolError::ShareIdZero { .. }))
    ));
    assert_eq!(*shamir::reconstruct_secret(&b, 3).unwrap(), [7; 32]);
    // Threshold 0 or above the holders.
    assert!(shamir::split(&f, &s, 0, &[1, 2], &mut rng).is_err());
    assert!(shamir::split(&f, &s, 3, &[1, 2], &mut rng).is_err());
}
