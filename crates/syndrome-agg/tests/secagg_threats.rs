//! The test cases (docs/threat-model.md §9) of the dropout-tolerant protocol, one named
//! test each: C2, D1-D6, M3, S1, S1b, S2-S5, P1-P3, R1-R3, O1, O2.
#![allow(clippy::unwrap_used)]
// Client ids and counts in these tests are tiny: the casts are exact.
#![allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]

use std::collections::{BTreeMap, BTreeSet};
use syndrome_agg::LinearSketch;
use syndrome_agg::{DecodeError, ParamsError, ProtocolError, WireError};

use field::{Field, FiniteField, Fp64, Mersenne61};
use syndrome_agg::masking::pairwise::{MaskPublicKey, peer_mask_terms};
use syndrome_agg::secagg::client::{Client, RoundLedger};
use syndrome_agg::secagg::graph::Neighbourhoods;
use syndrome_agg::secagg::messages::{
    AdvertiseKeys, ClientBody, ClientEnvelope, MaskedInput, ServerBody, ServerEnvelope,
    UnmaskingRequest,
};
use syndrome_agg::secagg::params::{GraphChoice, SecAggParams, ServerModel, ThreatModel};
use syndrome_agg::secagg::shamir::{self, SecretShare, Share};
use syndrome_agg::secagg::transport::{Fault, Faults, InProcess};
use syndrome_agg::secagg::{
    ClientId, DEFAULT_MAX_MESSAGE, SessionConfig, Step, self_mask, share_key,
};
use syndrome_agg::{Sketch, SketchError, SketchParams};
use testkit::secagg::{
    Harness, all_but, config, context, inputs, nothing_unmasked, oracle, run, run_exact,
};

fn complete(t: usize) -> SecAggParams {
    SecAggParams::new(GraphChoice::Complete, t, 0, ServerModel::SemiHonest)
}

fn expect_not_enough<E: std::fmt::Debug>(r: &Result<E, SketchError>, at: Step) {
    match r {
        Err(SketchError::Protocol(ProtocolError::NotEnoughClients { step, .. })) => {
            assert_eq!(*step, at);
        }
        other => panic!("expected NotEnoughClients at {at}, got {other:?}"),
    }
}

#[test]
fn c2_exact_sum_with_masking_no_dropouts() {
    let f = Mersenne61;
    for n in [2u64, 3, 10, 50] {
        let ts: Vec<usize> = if n <= 10 {
            (2..=n as usize).collect()
        } else {
            vec![2, 26, 50]
        };
        for t in ts {
            let label = format!("c2-{n}-{t}");
            let cfg = config(&f, n, complete(t), 3, &label);
            let ins = inputs(&f, n, 3, &label);
            let report = run_exact(&cfg, &ins, Faults::new(), &all_but(n, &[]), &label);
            // Masked vectors differ from the plaintext ones.
            for (_, id, bytes) in &report.transcript.as_ref().unwrap().to_server {
                let msg = ClientEnvelope::parse(bytes, DEFAULT_MAX_MESSAGE).unwrap();
                if let ClientBody::MaskedInput(m) = msg.body {
                    let plain: Vec<u8> = ins[(*id - 1) as usize]
                        .1
                        .iter()
                        .flat_map(|e| f.to_bytes(e))
                        .collect();
                    assert_ne!(
                        m.elements, plain,
                        "{label}: client {id} sent its input in the clear"
                    );
                }
            }
        }
    }
    // SecAgg+ too: Harary graphs of degree 4 and 6 on 12 clients.
    for degree in [4, 6] {
        let label = format!("c2-harary-{degree}");
        let params = SecAggParams::new(
            GraphChoice::Harary { degree },
            3,
            0,
            ServerModel::SemiHonest,
        );
        let cfg = config(&f, 12, params, 2, &label);
        run_exact(
            &cfg,
            &inputs(&f, 12, 2, &label),
            Faults::new(),
            &all_but(12, &[]),
            &label,
        );
    }
}

#[test]
fn d1_drop_after_advertise_keys() {
    let f = Mersenne61;
    let (n, t) = (8u64, 5);
    for k in 1..=(n - t as u64) {
        let gone: Vec<ClientId> = (1..=k).collect();
        let label = format!("d1-{k}");
        let cfg = config(&f, n, complete(t), 2, &label);
        let mut faults = Faults::new();
        for c in &gone {
            faults = faults.drop_from(*c, Step::ShareKeys);
        }
        let report = run_exact(
            &cfg,
            &inputs(&f, n, 2, &label),
            faults,
            &all_but(n, &gone),
            &label,
        );
        let out = report.output.unwrap();
        assert!(
            gone.iter()
                .all(|c| out.dropped.get(c) == Some(&Step::ShareKeys))
        );
    }
}

#[test]
fn d2_drop_after_share_keys() {
    let f = Mersenne61;
    let (n, t) = (8u64, 5);
    for k in 1..=(n - t as u64 + 1) {
        let gone: Vec<ClientId> = (n - k + 1..=n).collect();
        let label = format!("d2-{k}");
        let cfg = config(&f, n, complete(t), 2, &label);
        let ins = inputs(&f, n, 2, &label);
        let mut faults = Faults::new();
        for c in &gone {
            faults = faults.drop_from(*c, Step::MaskedInput);
        }
        if n - k >= t as u64 {
            // Their pairwise masks are removed through s_sk reconstruction.
            run_exact(&cfg, &ins, faults, &all_but(n, &gone), &label);
        } else {
            let report = run(&cfg, &ins, faults, &label);
            expect_not_enough(&report.output, Step::MaskedInput);
            assert!(nothing_unmasked(&report));
        }
    }
}

#[test]
fn d3_drop_after_masked_input() {
    let f = Mersenne61;
    let (n, t) = (8u64, 5);
    let gone = [2u64, 7];
    let cfg = config(&f, n, complete(t), 4, "d3");
    let ins = inputs(&f, n, 4, "d3");
    let mut faults = Faults::new();
    for c in gone {
        faults = faults.drop_from(c, Step::Unmasking);
    }
    // Their inputs are included: b_u comes from the others' shares.
    let report = run_exact(&cfg, &ins, faults, &all_but(n, &[]), "d3");
    let out = report.output.unwrap();
    assert!(out.included.contains(&2) && out.included.contains(&7));
    assert_eq!(out.dropped.get(&2), Some(&Step::Unmasking));
}

#[test]
fn d4_drop_during_unmasking() {
    let f = Mersenne61;
    let (n, t) = (8u64, 5);
    let ins = inputs(&f, n, 2, "d4");
    for silent in [n - t as u64, n - t as u64 + 1] {
        let cfg = config(&f, n, complete(t), 2, "d4");
        let mut faults = Faults::new();
        for c in 1..=silent {
            faults = faults.drop_from(c, Step::Unmasking);
        }
        let report = run(&cfg, &ins, faults, "d4");
        if n - silent == t as u64 {
            // Exactly t respond: success, everyone who masked is included.
            let out = report.output.unwrap();
            assert_eq!(out.sum, oracle(&f, &ins, &all_but(n, &[])));
        } else {
            // t - 1 respond: an error, no partial output.
            expect_not_enough(&report.output, Step::Unmasking);
        }
    }
}

#[test]
fn d5_threshold_boundary_at_every_step() {
    let f = Mersenne61;
    let (n, t) = (7u64, 4);
    let ins = inputs(&f, n, 2, "d5");
    for step in Step::ALL {
        for k in [n - t as u64, n - t as u64 + 1] {
            let label = format!("d5-{step}-{k}");
            let cfg = config(&f, n, complete(t), 2, &label);
            let gone: Vec<ClientId> = (1..=k).collect();
            let mut faults = Faults::new();
            for c in &gone {
                faults = faults.drop_from(*c, step);
            }
            let report = run(&cfg, &ins, faults, &label);
            if k == n - t as u64 {
                let included = if step >= Step::ConsistencyCheck {
                    all_but(n, &[])
                } else {
                    all_but(n, &gone)
                };
                let out = report.output.unwrap();
                assert_eq!(out.included, included, "{label}");
                assert_eq!(out.sum, oracle(&f, &ins, &included), "{label}");
            } else {
                expect_not_enough(&report.output, step);
                if step < Step::Unmasking {
                    assert!(nothing_unmasked(&report), "{label}");
                }
            }
        }
    }
}

#[test]
fn d6_deadline() {
    let f = Mersenne61;
    let (n, t) = (6u64, 4);
    let ins = inputs(&f, n, 2, "d6");
    for step in Step::ALL {
        let label = format!("d6-{step}");
        let cfg = config(&f, n, complete(t), 2, &label);
        // Client 3 answers this step only after the deadline.
        let report = run(&cfg, &ins, Faults::new().late(3, step), &label);
        let out = report.output.as_ref().unwrap();
        assert_eq!(
            out.dropped.get(&3),
            Some(&step),
            "{label}: marked dead at that step"
        );
        let included = if step >= Step::ConsistencyCheck {
            all_but(n, &[])
        } else {
            all_but(n, &[3])
        };
        assert_eq!(out.sum, oracle(&f, &ins, &included), "{label}");
        // Its late message was refused, not waited for.
        assert!(
            report.server_rejections.iter().any(|(c, e)| *c == 3
                && matches!(
                    e,
                    SketchError::Protocol(ProtocolError::UnexpectedMessage { .. })
                )),
            "{label}"
        );
    }
}

#[test]
fn m3_non_canonical_and_wrong_length_inputs() {
    let f = Fp64::new(101).unwrap();
    let cfg = config(&f, 4, complete(3), 3, "m3");
    let mut h = Harness::new(cfg.clone(), &inputs(&f, 4, 3, "m3"), "m3");
    let dir = h.step(&[]);
    assert!(h.answer(&dir).is_empty());
    let req = h.step(&[]);
    let ctx = *cfg.context();
    let good = |elements: Vec<u8>| MaskedInput {
        modulus: f.characteristic().to_bytes_le(),
        elements,
    };
    let send = |h: &mut Harness<Fp64>, body: MaskedInput| {
        h.server
            .receive(ClientEnvelope::new(&ctx, 1, ClientBody::MaskedInput(body)))
    };
    // An element >= p (one byte per element at p = 101).
    assert_eq!(
        send(&mut h, good(vec![5, 200, 7])),
        Err(SketchError::Decode(DecodeError::NonCanonical))
    );
    assert_eq!(
        send(&mut h, good(vec![101, 0, 0])),
        Err(SketchError::Decode(DecodeError::NonCanonical))
    );
    // Wrong length.
    assert!(matches!(
        send(&mut h, good(vec![5, 6])),
        Err(SketchError::Decode(DecodeError::WrongLength { .. }))
    ));
    // Another field.
    let other = MaskedInput {
        modulus: vec![103],
        elements: vec![1, 2, 3],
    };
    assert!(matches!(
        send(&mut h, other),
        Err(SketchError::Params(ParamsError::ParamsMismatch { .. }))
    ));
    // A truncated frame is refused at parsing.
    let bytes = ClientEnvelope::new(&ctx, 1, ClientBody::MaskedInput(good(vec![1, 2, 3])))
        .to_bytes()
        .unwrap();
    assert!(matches!(
        h.server.receive_bytes(&bytes[..bytes.len() - 1]),
        Err(SketchError::Wire(WireError::Malformed { .. }))
    ));
    // None of them counted: the real messages still give the exact sum.
    assert!(h.answer(&req).is_empty());
    let out = h.complete().unwrap();
    assert_eq!(
        out.sum,
        oracle(&f, &inputs(&f, 4, 3, "m3"), &all_but(4, &[]))
    );
}

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
                SketchError::Protocol(ProtocolError::ProtocolAbort { client: 1, .. })
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
        Err(SketchError::Protocol(
            ProtocolError::UnexpectedMessage { .. }
        ))
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
    let out = testkit::lying::play_with(
        7,
        params,
        &colluders,
        label,
        testkit::lying::Plan {
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
fn directory_abort(
    tamper: impl Fn(&mut Vec<(ClientId, AdvertiseKeys)>),
    label: &str,
) -> SketchError {
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
    let abort = |e: &SketchError| {
        matches!(
            e,
            SketchError::Protocol(ProtocolError::ProtocolAbort { client: 1, .. })
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
            .run(ins.clone(), &mut testkit::rng("s3"))
            .unwrap();
        assert!(
            report.client_errors.iter().any(|(c, s, e)| *c == 2
                && *s == Step::MaskedInput
                && matches!(
                    e,
                    SketchError::Protocol(ProtocolError::AeadFailure { to: 2, .. })
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
                Err(SketchError::Protocol(ProtocolError::AeadFailure { .. }))
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
        Err(SketchError::Protocol(ProtocolError::BadShares {
            client: 1,
            ..
        }))
    ));
}

#[test]
fn s5_shamir_input_validation() {
    let f = Fp64::new(101).unwrap();
    let s = f.from_u64(42);
    let mut rng = testkit::rng("s5");
    let zero_id = |ids: &[u64]| {
        matches!(
            shamir::split(&f, &s, 2, ids, &mut testkit::rng("s5")),
            Err(SketchError::Protocol(ProtocolError::ShareIdZero { .. }))
        )
    };
    assert!(zero_id(&[0, 1, 2]));
    assert!(zero_id(&[1, 101, 2])); // 101 = 0 mod p
    assert!(zero_id(&[1, 2, 202]));
    let dup = |ids: &[u64]| {
        matches!(
            shamir::split(&f, &s, 2, ids, &mut testkit::rng("s5")),
            Err(SketchError::Protocol(
                ProtocolError::DuplicateShareId { .. }
            ))
        )
    };
    assert!(dup(&[1, 2, 2]));
    assert!(dup(&[3, 104, 5])); // 104 = 3 mod p
    let shares = shamir::split(&f, &s, 3, &[1, 2, 3, 4], &mut rng).unwrap();
    assert!(matches!(
        shamir::reconstruct(&f, &shares[..2], 3),
        Err(SketchError::Protocol(ProtocolError::TooFewShares {
            have: 2,
            need: 3
        }))
    ));
    assert!(matches!(
        shamir::decode_with_errors(&f, &shares[..2], 3),
        Err(SketchError::Protocol(ProtocolError::TooFewShares { .. }))
    ));
    let mut twice = shares[..3].to_vec();
    twice[2] = twice[0].clone();
    assert!(matches!(
        shamir::reconstruct(&f, &twice, 3),
        Err(SketchError::Protocol(
            ProtocolError::DuplicateShareId { .. }
        ))
    ));
    let mut aliased = shares[..3].to_vec();
    aliased[2].id = 102; // = 1 mod p: same point as share 0
    // The error names both ids as given, not the reduced point.
    match shamir::reconstruct(&f, &aliased, 3) {
        Err(SketchError::Protocol(ProtocolError::DuplicateShareId { id, earlier })) => {
            assert_eq!((id.as_str(), earlier.as_str()), ("102", "1"));
        }
        other => panic!("expected DuplicateShareId, got {other:?}"),
    }
    match shamir::split(&f, &s, 2, &[3, 104, 5], &mut testkit::rng("s5")) {
        Err(SketchError::Protocol(ProtocolError::DuplicateShareId { id, earlier })) => {
            assert_eq!((id.as_str(), earlier.as_str()), ("104", "3"));
        }
        other => panic!("expected DuplicateShareId, got {other:?}"),
    }
    let mut zero = shares[..3].to_vec();
    zero[1].id = 0;
    assert!(matches!(
        shamir::reconstruct(&f, &zero, 3),
        Err(SketchError::Protocol(ProtocolError::ShareIdZero { .. }))
    ));
    // The same for byte secrets.
    let b = shamir::split_secret(&[7; 32], 3, &[1, 2, 3], &mut rng).unwrap();
    assert!(matches!(
        shamir::reconstruct_secret(&b[..2], 3),
        Err(SketchError::Protocol(ProtocolError::TooFewShares { .. }))
    ));
    assert!(matches!(
        shamir::split_secret(&[7; 32], 2, &[0, 1], &mut rng),
        Err(SketchError::Protocol(ProtocolError::ShareIdZero { .. }))
    ));
    assert_eq!(*shamir::reconstruct_secret(&b, 3).unwrap(), [7; 32]);
    // Threshold 0 or above the holders.
    assert!(shamir::split(&f, &s, 0, &[1, 2], &mut rng).is_err());
    assert!(shamir::split(&f, &s, 3, &[1, 2], &mut rng).is_err());
}

#[test]
fn p1_below_threshold_shares_reveal_nothing() {
    // Exhaustive at p = 5, t = 3: for any 2 shares and any candidate
    // secret, exactly one polynomial of degree < 3 is consistent, and the
    // third share it implies reconstructs that candidate.
    let f = Fp64::new(5).unwrap();
    let e = |v: u64| f.from_u64(v);
    let eval = |c: &[u64; 3], x: u64| (c[0] + c[1] * x + c[2] * x * x) % 5;
    for x1 in 1..5u64 {
        for x2 in (x1 + 1)..5 {
            for y1 in 0..5 {
                for y2 in 0..5 {
                    for s in 0..5u64 {
                        let consistent: Vec<[u64; 3]> = (0..25)
                            .map(|i| [s, i / 5, i % 5])
                            .filter(|c| eval(c, x1) == y1 && eval(c, x2) == y2)
                            .collect();
                        assert_eq!(consistent.len(), 1, "x=({x1},{x2}) y=({y1},{y2}) s={s}");
                        let x3 = (1..5).find(|x| *x != x1 && *x != x2).unwrap();
                        let shares = [(x1, y1), (x2, y2), (x3, eval(&consistent[0], x3))]
                            .map(|(x, y)| Share { id: x, value: e(y) });
                        assert_eq!(shamir::reconstruct(&f, &shares, 3).unwrap(), e(s));
                    }
                }
            }
        }
    }
}

/// One run of P2 at p = 5: returns the adversary's view (z_1, z_2) for
/// inputs (x_1, x_2, 0), client 3 colluding with the server.
fn p2_view(x1: u64, x2: u64, run: usize, seed: &str) -> (u64, u64) {
    let f = Fp64::new(5).unwrap();
    let label = format!("p2-{seed}-{x1}-{run}");
    let cfg = config(&f, 3, complete(2), 1, &label);
    let ins = vec![
        (1, vec![f.from_u64(x1)]),
        (2, vec![f.from_u64(x2)]),
        (3, vec![f.zero()]),
    ];
    let mut h = Harness::new(cfg.clone(), &ins, &label);
    let reqs = h.to_unmasking();
    assert!(h.answer(&reqs).is_empty());
    let sent = h.sent.clone();
    h.finish().unwrap();
    let ctx = cfg.context();
    let adverts: BTreeMap<ClientId, AdvertiseKeys> = sent
        .iter()
        .filter_map(|m| match &m.body {
            ClientBody::AdvertiseKeys(k) => Some((m.client, *k)),
            _ => None,
        })
        .collect();
    // The server reconstructs b_1, b_2 from the revealed seed shares.
    let mut seed_shares: BTreeMap<ClientId, Vec<SecretShare>> = BTreeMap::new();
    for m in &sent {
        if let ClientBody::UnmaskingResponse(r) = &m.body {
            for s in &r.seed_shares {
                seed_shares
                    .entry(s.owner)
                    .or_default()
                    .push(SecretShare::from_bytes(&s.share).unwrap());
            }
        }
    }
    let colluder = Harness::<Fp64>::secrets(&label, 3);
    let mut view = [0u64; 2];
    for (i, u) in [1u64, 2].iter().enumerate() {
        let y = sent
            .iter()
            .find_map(|m| match &m.body {
                ClientBody::MaskedInput(mi) if m.client == *u => {
                    Some(f.from_bytes(&mi.elements).unwrap())
                }
                _ => None,
            })
            .unwrap();
        let b = shamir::reconstruct_secret(&seed_shares[u], 2).unwrap();
        let own = self_mask(&f, 1, &b, ctx, *u).unwrap();
        // The colluder's pairwise term with u, as u applied it.
        let t3 = peer_mask_terms(
            &f,
            1,
            &colluder.mask,
            3,
            &[(*u, MaskPublicKey(adverts[u].mask_key))],
            ctx,
        )
        .unwrap();
        let mut z = f.sub(&y, &own.0[0]);
        // u's term = -(3's term): add 3's term back.
        z = match t3[0].sign {
            syndrome_agg::masking::pairwise::MaskSign::Add => f.add(&z, &t3[0].values.0[0]),
            syndrome_agg::masking::pairwise::MaskSign::Subtract => f.sub(&z, &t3[0].values.0[0]),
        };
        view[i] = f.to_u64(&z).unwrap();
    }
    (view[0], view[1])
}

#[test]
fn p2_masking_hides_inputs() {
    // Two input pairs with the same sum (4 mod 5). The adversary's view
    // (z_1, z_2) = (x_1 + r, x_2 - r) with r uniform: its distribution must
    // not depend on the split. Chi-squared homogeneity over the 5 values
    // of z_1 (z_2 = 4 - z_1 always), df = 4, critical value 18.47 at 1e-3.
    const RUNS: usize = 250;
    for seed in ["a", "b"] {
        let mut counts = [[0f64; 5]; 2];
        for (row, (x1, x2)) in [(1u64, 3u64), (4, 0)].iter().enumerate() {
            for r in 0..RUNS {
                let (z1, z2) = p2_view(*x1, *x2, r, seed);
                assert_eq!((z1 + z2) % 5, 4, "the view sums to the output");
                counts[row][z1 as usize] += 1.0;
            }
        }
        let mut chi2 = 0.0;
        for col in 0..5 {
            let total = counts[0][col] + counts[1][col];
            for row in counts {
                let expected = total / 2.0;
                if expected > 0.0 {
                    chi2 += (row[col] - expected).powi(2) / expected;
                }
            }
        }
        assert!(
            chi2 < 18.47,
            "seed {seed}: chi2 = {chi2}, counts {counts:?}"
        );
        // And each row is uniform (goodness of fit, df = 4).
        for row in counts {
            let e = RUNS as f64 / 5.0;
            let g: f64 = row.iter().map(|c| (c - e).powi(2) / e).sum();
            assert!(g < 18.47, "seed {seed}: not uniform: {row:?}");
        }
    }
}

#[test]
fn p3_transcript_invariant() {
    let f = Mersenne61;
    let (n, t) = (8u64, 5);
    let colluders: BTreeSet<ClientId> = [5, 6, 7, 8].into();
    assert_eq!(colluders.len(), t - 1);
    let label = "p3";
    let cfg = config(&f, n, complete(t), 3, label);
    let ins = inputs(&f, n, 3, label);
    // Client 2 drops before masking, client 3 during unmasking.
    let mut h = Harness::new(cfg.clone(), &ins, label);
    let dir = h.step(&[]);
    assert!(h.answer(&dir).is_empty());
    let req = h.step(&[]);
    let req: Vec<ServerEnvelope> = req.into_iter().filter(|m| m.client != 2).collect();
    assert!(h.answer(&req).is_empty());
    let cons = h.step(&[]);
    assert!(h.answer(&cons).is_empty());
    let unmask = h.step(&[]);
    let unmask: Vec<ServerEnvelope> = unmask.into_iter().filter(|m| m.client != 3).collect();
    let served = unmask.clone();
    assert!(h.answer(&unmask).is_empty());
    let sent = h.sent.clone();
    let out = h.finish().unwrap();
    assert_eq!(out.sum, oracle(&f, &ins, &all_but(n, &[2])));
    // What the adversary holds: shares revealed to the server, plus every
    // share a colluder received (it holds one of each secret of each peer).
    let mut seed_holders: BTreeMap<ClientId, BTreeSet<ClientId>> = BTreeMap::new();
    let mut key_holders: BTreeMap<ClientId, BTreeSet<ClientId>> = BTreeMap::new();
    for m in &sent {
        if let ClientBody::UnmaskingResponse(r) = &m.body {
            for s in &r.seed_shares {
                seed_holders.entry(s.owner).or_default().insert(m.client);
            }
            for s in &r.key_shares {
                key_holders.entry(s.owner).or_default().insert(m.client);
            }
        }
    }
    for u in (1..=n).filter(|u| !colluders.contains(u)) {
        let seeds = seed_holders
            .get(&u)
            .cloned()
            .unwrap_or_default()
            .union(&colluders)
            .count();
        let keys = key_holders
            .get(&u)
            .cloned()
            .unwrap_or_default()
            .union(&colluders)
            .count();
        assert!(
            seeds < t || keys < t,
            "client {u}: {seeds} seed and {keys} key shares"
        );
    }
    // The server never asked anyone for both shares of one peer.
    for m in &served {
        let ServerBody::UnmaskingRequest(r) = &m.body else {
            panic!()
        };
        assert!(r.alive.iter().all(|a| !r.dropped.contains(a)));
    }
    // No plaintext input and no share-encryption key on the wire.
    let wire: Vec<Vec<u8>> = sent.iter().map(|m| m.to_bytes().unwrap()).collect();
    let contains = |needle: &[u8]| {
        wire.iter()
            .any(|w| w.windows(needle.len()).any(|x| x == needle))
    };
    for (_, x) in &ins {
        let plain: Vec<u8> = x.iter().flat_map(|e| f.to_bytes(e)).collect();
        assert!(!contains(&plain));
    }
    let secrets: BTreeMap<ClientId, _> = (1..=n)
        .map(|c| (c, Harness::<Mersenne61>::secrets(label, c)))
        .collect();
    for u in 1..=n {
        for v in (u + 1)..=n {
            let shared = secrets[&u]
                .enc
                .agree(v, &secrets[&v].enc.public_key())
                .unwrap();
            let key = share_key(&shared, cfg.context(), u, v);
            assert!(!contains(&key[..]), "AEAD key of ({u}, {v}) on the wire");
            assert!(!contains(&secrets[&u].seed[..]));
            assert!(!contains(&secrets[&u].mask.secret_bytes()[..]));
        }
    }
}

#[test]
fn r1_duplicate_masked_input() {
    let f = Mersenne61;
    let n = 5u64;
    let cfg = config(&f, n, complete(3), 2, "r1");
    let ins = inputs(&f, n, 2, "r1");
    let report = run_exact(
        &cfg,
        &ins,
        Faults::new().duplicate(2, Step::MaskedInput),
        &all_but(n, &[]),
        "r1",
    );
    assert!(report.server_rejections.iter().any(|(c, e)| *c == 2
        && matches!(e, SketchError::Protocol(ProtocolError::MessageRejected { reason }) if reason.contains("duplicate"))));
    // A different second message from the same client does not count
    // either: first write wins.
    let mut h = Harness::new(cfg, &ins, "r1-forged");
    let dir = h.step(&[]);
    assert!(h.answer(&dir).is_empty());
    let req = h.step(&[]);
    assert!(h.answer(&req).is_empty());
    h.deliver(&[]);
    let forged = ClientEnvelope::new(
        h.cfg.context(),
        2,
        ClientBody::MaskedInput(MaskedInput {
            modulus: f.characteristic().to_bytes_le(),
            elements: vec![0; 16],
        }),
    );
    assert!(matches!(
        h.server.receive(forged),
        Err(SketchError::Protocol(ProtocolError::MessageRejected { reason })) if reason.contains("duplicate")
    ));
    assert_eq!(
        h.complete().unwrap().sum,
        oracle(&f, &ins, &all_but(n, &[]))
    );
}

#[test]
fn r2_cross_round_replay() {
    let f = Mersenne61;
    let n = 4u64;
    let sp = SketchParams::new(4, 1000u32).validate(f).unwrap();
    let ins: Vec<(ClientId, Vec<u64>)> = (1..=n)
        .map(|c| {
            (
                c,
                Sketch::from_unsigned(&sp, [(c as u32 * 10, c)])
                    .unwrap()
                    .elements()
                    .to_vec(),
            )
        })
        .collect();
    let len = sp.num_syndromes();
    let cfg0 = config(&f, n, complete(3), len, "r2");
    let cfg1 = std::sync::Arc::new(
        SessionConfig::new(
            f,
            cfg0.context().next(),
            cfg0.graph().clone(),
            *cfg0.params(),
            len,
        )
        .unwrap(),
    );
    // Round 0, recorded.
    let r0 = run(&cfg0, &ins, Faults::new(), "r2-0");
    let (_, _, old) = r0
        .transcript
        .as_ref()
        .unwrap()
        .to_server
        .iter()
        .find(|(s, c, _)| *s == Step::MaskedInput && *c == 2)
        .unwrap()
        .clone();
    // Replayed into round 1: refused by its header.
    let r1 = run(
        &cfg1,
        &ins,
        Faults::new().inject(Step::MaskedInput, old.clone()),
        "r2-1",
    );
    assert!(r1.server_rejections.iter().any(|(c, e)| *c == 2
        && matches!(
            e,
            SketchError::Protocol(ProtocolError::MessageRejected { .. })
        )));
    let out = r1.output.unwrap();
    assert_eq!(out.sum, oracle(&f, &ins, &all_but(n, &[])));
    assert!(
        Sketch::from_elements(&sp, out.sum)
            .unwrap()
            .decode()
            .is_ok()
    );
    // Forced in with a rewritten header, the masks do not cancel and the
    // sum does not decode.
    let mut h = Harness::new(cfg1.clone(), &ins, "r2-forced");
    let dir = h.step(&[]);
    assert!(h.answer(&dir).is_empty());
    let req = h.step(&[]);
    assert!(h.answer(&req).is_empty());
    let mut forged = ClientEnvelope::parse(&old, DEFAULT_MAX_MESSAGE).unwrap();
    forged.round = cfg1.context().round;
    for m in h.pending.iter_mut().filter(|m| m.client == 2) {
        *m = forged.clone();
    }
    let out = h.complete().unwrap();
    assert_ne!(out.sum, oracle(&f, &ins, &all_but(n, &[])));
    assert!(
        Sketch::from_elements(&sp, out.sum)
            .unwrap()
            .decode()
            .is_err()
    );
}

#[test]
fn r3_mask_reuse() {
    let f = Mersenne61;
    let cfg = config(&f, 4, complete(3), 2, "r3");
    let ins = inputs(&f, 4, 2, "r3");
    let mut h = Harness::new(cfg.clone(), &ins, "r3");
    let dir = h.step(&[]);
    assert!(h.answer(&dir).is_empty());
    let req = h.step(&[]);
    assert!(h.answer(&req).is_empty());
    // Asked to mask a second time in the same round: refused.
    let again = req.iter().find(|m| m.client == 1).unwrap();
    let before = h.sent.len();
    assert!(matches!(
        h.answer_one(again),
        Err(SketchError::Protocol(
            ProtocolError::UnexpectedMessage { .. }
        ))
    ));
    assert_eq!(h.sent.len(), before);
    // A second client state for the same round (another input) is refused
    // by the client's ledger; the next round is fine.
    let mut ledger = RoundLedger::default();
    let mut rng = testkit::rng("r3-ledger");
    assert!(Client::new(cfg.clone(), 1, ins[0].1.clone(), &mut ledger, &mut rng).is_ok());
    let other = vec![f.one(), f.one()];
    assert!(matches!(
        Client::new(cfg.clone(), 1, other.clone(), &mut ledger, &mut rng),
        Err(SketchError::Protocol(ProtocolError::MessageRejected { .. }))
    ));
    let next = std::sync::Arc::new(
        SessionConfig::new(
            f,
            cfg.context().next(),
            cfg.graph().clone(),
            *cfg.params(),
            2,
        )
        .unwrap(),
    );
    assert!(Client::new(next, 1, other.clone(), &mut ledger, &mut rng).is_ok());
    // And an earlier round after a later one is refused.
    assert!(Client::new(cfg, 1, other, &mut ledger, &mut rng).is_err());
}

#[test]
fn o1_oversized_frame() {
    let f = Mersenne61;
    let cfg = std::sync::Arc::new(
        (*config(&f, 3, complete(2), 1, "o1"))
            .clone()
            .with_max_message(1024),
    );
    let mut h = Harness::new(cfg, &inputs(&f, 3, 1, "o1"), "o1");
    let huge = vec![0u8; 1025];
    assert!(matches!(
        h.server.receive_bytes(&huge),
        Err(SketchError::Wire(WireError::FrameTooLarge {
            len: 1025,
            max: 1024
        }))
    ));
    let big = vec![0u8; DEFAULT_MAX_MESSAGE + 1];
    assert!(matches!(
        ClientEnvelope::parse(&big, DEFAULT_MAX_MESSAGE),
        Err(SketchError::Wire(WireError::FrameTooLarge { .. }))
    ));
    assert!(matches!(
        ServerEnvelope::parse(&big, DEFAULT_MAX_MESSAGE),
        Err(SketchError::Wire(WireError::FrameTooLarge { .. }))
    ));
    // The run goes on undisturbed.
    let dir = h.step(&[]);
    assert_eq!(dir.len(), 3);
}

#[test]
fn o2_parameter_abuse() {
    let f = Mersenne61;
    let ctx = context("o2", 0);
    let g = Neighbourhoods::complete(1..=5).unwrap();
    // Vector length beyond the cap, and zero.
    assert!(
        SessionConfig::new(
            f,
            ctx,
            g.clone(),
            complete(3),
            syndrome_agg::DEFAULT_MAX_SYNDROMES + 1
        )
        .is_err()
    );
    assert!(SessionConfig::new(f, ctx, g.clone(), complete(3), 0).is_err());
    // Threshold above the holders, zero, and a graph of another shape.
    assert!(SessionConfig::new(f, ctx, g.clone(), complete(6), 1).is_err());
    assert!(SessionConfig::new(f, ctx, g.clone(), complete(0), 1).is_err());
    let harary = SecAggParams::new(
        GraphChoice::Harary { degree: 2 },
        2,
        0,
        ServerModel::SemiHonest,
    );
    assert!(SessionConfig::new(f, ctx, g, harary, 1).is_err());
    assert!(Neighbourhoods::harary_with_ring((1..=9).collect(), 3).is_err());
    assert!(Neighbourhoods::complete([1, 2, 2]).is_err());
    assert!(Neighbourhoods::complete([1, u64::MAX]).is_err());
    // Finder inputs out of range.
    assert!(
        ThreatModel::new(100, 1.0, 0.1, ServerModel::SemiHonest)
            .find()
            .is_err()
    );
    assert!(
        ThreatModel::new(100, 0.1, -0.1, ServerModel::SemiHonest)
            .find()
            .is_err()
    );
    assert!(
        ThreatModel::new(1, 0.1, 0.1, ServerModel::SemiHonest)
            .find()
            .is_err()
    );
    // A varint length of 2^60 in a message is refused without allocating.
    let mut bytes = ClientEnvelope::new(
        &ctx,
        1,
        ClientBody::ShareKeys(syndrome_agg::secagg::messages::ShareKeys { shares: vec![] }),
    )
    .to_bytes()
    .unwrap();
    bytes.pop(); // the empty list's length
    bytes.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]); // 2^60
    assert!(matches!(
        ClientEnvelope::parse(&bytes, DEFAULT_MAX_MESSAGE),
        Err(SketchError::Wire(WireError::Malformed { .. }))
    ));
    // An unsupported version.
    let mut env = ClientEnvelope::new(
        &ctx,
        1,
        ClientBody::ShareKeys(syndrome_agg::secagg::messages::ShareKeys { shares: vec![] }),
    );
    env.version = 99;
    assert!(matches!(
        ClientEnvelope::parse(&env.to_bytes().unwrap(), DEFAULT_MAX_MESSAGE),
        Err(SketchError::Wire(WireError::UnsupportedVersion {
            found: 99,
            ..
        }))
    ));
    // Unknown faults are harmless: a fault for a client outside the session.
    let cfg = config(&f, 3, complete(2), 1, "o2-run");
    let report = run(
        &cfg,
        &inputs(&f, 3, 1, "o2-run"),
        Faults::new().with(Fault::Drop {
            client: 77,
            from: Step::AdvertiseKeys,
        }),
        "o2-run",
    );
    assert!(report.output.is_ok());
}
