//! A peer that misbehaves costs the round at most its own input:
//! docs/threat-model.md S4 at the edge (a bad share among exactly `t + 1`,
//! too few spares for Gao's decoder, which needs `t + 2` to correct one,
//! is corrected by trying `t`-subsets against the commitment) and S2 at
//! the server (a client advertising a bad key is dropped, not relayed).
#![allow(clippy::unwrap_used)]

use field::Mersenne61;
use masked_sum::ProtocolError;
use masked_sum::SumError;
use masked_sum::secagg::Step;
use masked_sum::secagg::messages::ClientBody;
use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel};
use sum_testkit::secagg::{Harness, all_but, config, inputs, oracle};

#[test]
fn bad_share_with_t_plus_one_responders_is_corrected() {
    let f = Mersenne61;
    let (n, t) = (6u64, 3usize);
    let params = SecAggParams::new(GraphChoice::Complete, t, 0, ServerModel::SemiHonest);
    let ins = inputs(&f, n, 2, "s4-t-plus-one");
    for (owner, seed) in [(5, true), (1, true), (2, true)] {
        let cfg = config(&f, n, params, 2, "s4-t-plus-one");
        let mut h = Harness::new(cfg, &ins, "s4-t-plus-one");
        let reqs = h.to_unmasking();
        assert!(h.answer(&reqs).is_empty());
        // Only clients 1 to 4 answer the unmasking request: t + 1 shares
        // of every seed, one of them wrong.
        h.pending.retain(|m| m.client <= 4);
        let responder = if owner == 2 { 3 } else { 2 };
        h.corrupt_share(responder, owner, seed);
        let out = h.finish().unwrap();
        assert_eq!(out.sum, oracle(&f, &ins, &all_but(n, &[])), "owner {owner}");
    }
    // A dropped client's mask key, t + 1 shares with one wrong.
    let cfg = config(&f, n, params, 2, "s4-t-plus-one-key");
    let mut h = Harness::new(cfg, &ins, "s4-t-plus-one-key");
    let dir = h.step(&[]);
    assert!(h.answer(&dir).is_empty());
    let req = h.step(&[]);
    assert!(h.answer(&req).is_empty());
    let cons = h.step(&[6]); // 6 dropped before its masked input
    assert!(h.answer(&cons).is_empty());
    let unmask = h.step(&[]);
    assert!(h.answer(&unmask).is_empty());
    h.pending.retain(|m| m.client <= 4);
    h.corrupt_share(2, 6, false);
    assert_eq!(h.finish().unwrap().sum, oracle(&f, &ins, &all_but(n, &[6])));
    // Two wrong shares among t + 1: no t-subset is all good; a clean
    // error, never a wrong sum.
    let cfg = config(&f, n, params, 2, "s4-t-plus-one-two");
    let mut h = Harness::new(cfg, &ins, "s4-t-plus-one-two");
    let reqs = h.to_unmasking();
    assert!(h.answer(&reqs).is_empty());
    h.pending.retain(|m| m.client <= 4);
    h.corrupt_share(2, 5, true);
    h.corrupt_share(3, 5, true);
    assert!(matches!(
        h.finish(),
        Err(SumError::Protocol(ProtocolError::BadShares {
            client: 5,
            ..
        }))
    ));
}

/// Rewrites a client's advertised (encryption, mask) keys, given client
/// 1's encryption key.
type Tamper = dyn Fn(&mut [u8; 32], &mut [u8; 32], [u8; 32]);

#[test]
fn server_drops_a_client_with_a_duplicate_or_low_order_key() {
    let f = Mersenne61;
    let n = 5u64;
    let params = SecAggParams::new(GraphChoice::Complete, 3, 0, ServerModel::SemiHonest);
    let ins = inputs(&f, n, 2, "s2-server");
    // The order-8 point of Curve25519 (u = 1 has order 4; 0 order 1).
    let low_order: [[u8; 32]; 2] = [[0; 32], {
        let mut k = [0; 32];
        k[0] = 1;
        k
    }];
    let cases: Vec<(&str, Box<Tamper>)> = vec![
        ("its two keys equal", Box::new(|enc, mask, _| *mask = *enc)),
        (
            "a copy of client 1's key",
            Box::new(|enc, _, other| *enc = other),
        ),
        (
            "a copy of client 1's key as its mask key",
            Box::new(|_, mask, other| *mask = other),
        ),
        ("a zero key", Box::new(move |enc, _, _| *enc = low_order[0])),
        (
            "a low-order mask key",
            Box::new(move |_, mask, _| *mask = low_order[1]),
        ),
    ];
    for (what, tamper) in cases {
        let cfg = config(&f, n, params, 2, "s2-server");
        let mut h = Harness::new(cfg, &ins, "s2-server");
        let key1 = h
            .pending
            .iter()
            .find_map(|m| match &m.body {
                ClientBody::AdvertiseKeys(k) if m.client == 1 => Some(k.enc_key),
                _ => None,
            })
            .unwrap();
        let m5 = h.pending.iter_mut().find(|m| m.client == 5).unwrap();
        let ClientBody::AdvertiseKeys(k) = &mut m5.body else {
            panic!()
        };
        tamper(&mut k.enc_key, &mut k.mask_key, key1);
        let bad = m5.clone();
        // Refused on arrival (the state is unchanged) ...
        let mut probe = Harness::new(config(&f, n, params, 2, "s2-server"), &ins, "s2-server");
        probe.deliver(&[5]);
        assert!(probe.server.receive(bad).is_err(), "{what}");
        // ... so client 5 drops out at the first step and nobody aborts.
        let dir = h.step(&[]);
        assert!(dir.iter().all(|m| m.client != 5), "{what}");
        assert!(h.answer(&dir).is_empty(), "{what}: a peer aborted");
        let out = h.complete().unwrap();
        assert_eq!(out.sum, oracle(&f, &ins, &all_but(n, &[5])), "{what}");
        assert_eq!(out.dropped.get(&5), Some(&Step::AdvertiseKeys), "{what}");
    }
}

/// A client that sends shares to only some of its holders is refused (and
/// drops out), so that no holder masks without it while it masks with the
/// holder: found by fuzzing, where the accepted incomplete set gave a
/// wrong sum (docs/fuzzing.md).
#[test]
fn an_incomplete_set_of_shares_is_refused() {
    let f = Mersenne61;
    let n = 5u64;
    let params = SecAggParams::new(GraphChoice::Complete, 3, 0, ServerModel::SemiHonest);
    let ins = inputs(&f, n, 2, "incomplete-shares");
    let mut h = Harness::new(
        config(&f, n, params, 2, "incomplete-shares"),
        &ins,
        "incomplete-shares",
    );
    let dir = h.step(&[]);
    assert!(h.answer(&dir).is_empty());
    let m2 = h.pending.iter_mut().find(|m| m.client == 2).unwrap();
    let ClientBody::ShareKeys(sk) = &mut m2.body else {
        panic!("share keys")
    };
    sk.shares.retain(|e| e.peer != 4);
    let bad = m2.clone();
    assert!(matches!(
        h.server.receive(bad),
        Err(SumError::Protocol(ProtocolError::MessageRejected { reason })) if reason.contains("of its 4 holders")
    ));
    h.pending.retain(|m| m.client != 2);
    let req = h.step(&[]);
    assert!(h.answer(&req).is_empty());
    let out = h.complete().unwrap();
    assert_eq!(out.sum, oracle(&f, &ins, &all_but(n, &[2])));
    assert_eq!(out.dropped.get(&2), Some(&Step::ShareKeys));
}
