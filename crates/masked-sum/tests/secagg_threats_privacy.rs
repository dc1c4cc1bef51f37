//! The threat-model test cases (docs/threat-model.md §9) of the dropout-tolerant
//! protocol for privacy and replays, one named test each: P1-P3, R1-R3.
#![allow(clippy::unwrap_used)]
// Client ids and counts in these tests are tiny: the casts are exact.
#![allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]

use std::collections::{BTreeMap, BTreeSet};

use field::{Field, FiniteField, Fp64, Mersenne61};
use masked_sum::masking::pairwise::{MaskPublicKey, peer_mask_terms};
use masked_sum::secagg::client::{Client, RoundLedger};
use masked_sum::secagg::messages::{
    AdvertiseKeys, ClientBody, ClientEnvelope, MaskedInput, ServerBody, ServerEnvelope,
};
use masked_sum::secagg::shamir::{self, SecretShare, Share};
use masked_sum::secagg::transport::Faults;
use masked_sum::secagg::{ClientId, SessionConfig, Step, self_mask, share_key};
use masked_sum::{ProtocolError, SumError};
use sum_testkit::secagg::{
    Harness, all_but, config, cross_round_replay, inputs, oracle, run_exact,
};

use crate::common;
use common::complete;

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
            masked_sum::masking::pairwise::MaskSign::Add => f.add(&z, &t3[0].values.0[0]),
            masked_sum::masking::pairwise::MaskSign::Subtract => f.sub(&z, &t3[0].values.0[0]),
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
        && matches!(e, SumError::Protocol(ProtocolError::MessageRejected { reason }) if reason.contains("duplicate"))));
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
        Err(SumError::Protocol(ProtocolError::MessageRejected { reason })) if reason.contains("duplicate")
    ));
    assert_eq!(
        h.complete().unwrap().sum,
        oracle(&f, &ins, &all_but(n, &[]))
    );
}

/// R2: a masked input of one round replayed into the next is refused by
/// its header; forced in with a rewritten header, its masks do not cancel
/// and the sum is not the inputs' (what a sketch's decoder then refuses
/// is `syndrome-agg`'s `secagg_sketches.rs`).
#[test]
fn r2_cross_round_replay() {
    let f = Mersenne61;
    let ins = inputs(&f, 4, 6, "r2");
    let replay = cross_round_replay(&f, &ins, "r2");
    assert!(replay.refused);
    assert_eq!(replay.sum, oracle(&f, &ins, &all_but(4, &[])));
    assert_ne!(replay.forced, oracle(&f, &ins, &all_but(4, &[])));
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
        Err(SumError::Protocol(ProtocolError::UnexpectedMessage { .. }))
    ));
    assert_eq!(h.sent.len(), before);
    // A second client state for the same round (another input) is refused
    // by the client's ledger; the next round is fine.
    let mut ledger = RoundLedger::default();
    let mut rng = testdata::rng("r3-ledger");
    assert!(Client::new(cfg.clone(), 1, ins[0].1.clone(), &mut ledger, &mut rng).is_ok());
    let other = vec![f.one(), f.one()];
    assert!(matches!(
        Client::new(cfg.clone(), 1, other.clone(), &mut ledger, &mut rng),
        Err(SumError::Protocol(ProtocolError::MessageRejected { .. }))
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
