//! The dealt round's three parties, honest and against a lying server:
//! the server's half, the dealer's and the clients', driven by hand.
//! A server that relays a seal that is not the client's (forged under a
//! key of its own, another client's, another round's, altered) never
//! gets that client to mask with a seed the server could know: the
//! client refuses the round; and the dealer refuses a request for a ring
//! that is not the round's. The strategy and the victim are drawn at
//! random.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation
)]

use std::collections::BTreeMap;

use num_bigint::BigUint;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha20Rng;
use syndrome_agg::masking::dealer::{SealKey, seal_seed};
use syndrome_agg::{AnyParams, CountPolicy, Scheme, SketchParams, ValidAnyParams};

use super::*;
use crate::aggregation::halves::{
    Advanced, ClientHalf, DealerHalf, RoundProtocol, RoundSpec, Sends, ServerHalf, Sums,
};
use crate::aggregation::round::Input;
use crate::aggregation::secrets::SecretSource;
use crate::server::decode::{Decoded, DeltaCheck};
use crate::{ClientId, MufcError};

fn params() -> ValidAnyParams {
    let sketch =
        SketchParams::new(8, BigUint::from(1000u32)).with_counts(CountPolicy::unsigned(100u32));
    AnyParams::new(Scheme::FieldKeys, sketch)
        .with_field_bound(BigUint::from(1000u32))
        .validate()
        .unwrap()
}

fn spec(round: u64, n: u64) -> RoundSpec {
    RoundSpec {
        round,
        session: [round as u8; 32],
        ring: (0..n).map(ClientId).collect(),
        protocol: RoundProtocol::Dealer,
        sends: Sends::Histograms,
    }
}

fn histogram(c: u64) -> Vec<(BigUint, u64)> {
    vec![(BigUint::from(10 + c), 3), (BigUint::from(500u32), c + 1)]
}

/// The round's three parties: the server's half, the dealer's, and each
/// client's half.
struct Round {
    server: Box<dyn ServerHalf>,
    dealer: DealerParty,
    clients: Vec<Box<dyn ClientHalf>>,
}

fn round(spec: &RoundSpec, keys: &DealerKeys, rng_seed: u64) -> Round {
    let p = params();
    let sums = Sums {
        params: p.clone(),
        delta: None,
        last: None,
        change: None,
    };
    let server = Box::new(FramedServer::open(spec.clone(), sums, 1).unwrap());
    let dealer = DealerParty::new(
        spec.clone(),
        PairKeys::Simulated(keys.clone()),
        p.clone(),
        ChaCha20Rng::seed_from_u64(rng_seed),
    );
    let clients = spec
        .ring
        .iter()
        .map(|c| {
            let h = histogram(c.0);
            let input = Input {
                id: *c,
                histogram: &h,
                last: None,
                change: None,
            };
            let mode = Mode::Dealer(keys.pair(*c));
            let (half, first, _) = FramedClient::join(spec, input, &p, mode).unwrap();
            // A dealt round's client waits for its seed: its one message
            // is its masked input.
            assert!(first.is_none());
            half
        })
        .collect();
    Round {
        server,
        dealer,
        clients,
    }
}

/// The request the server sends the dealer as the round opens (no
/// client has anything to answer before its seed).
fn asked(r: &mut Round) -> Vec<u8> {
    assert!(r.server.expected().is_empty());
    match r.server.advance().unwrap() {
        Advanced::Dealer(request) => request,
        other => panic!("expected a request to the dealer, got {other:?}"),
    }
}

fn sealed_to_clients(r: &mut Round, reply: &[u8]) -> BTreeMap<ClientId, Vec<u8>> {
    r.server.receive_dealer(reply).unwrap();
    match r.server.advance().unwrap() {
        Advanced::Clients(msgs) => msgs.into_iter().collect(),
        other => panic!("expected the sealed seeds, got {other:?}"),
    }
}

/// The round dealt honestly up to its clients' answers: each client's
/// masked frame, in id order (none given to the server yet).
fn frames(r: &mut Round) -> Vec<Vec<u8>> {
    let request = asked(r);
    let reply = r.dealer.handle(&request).unwrap();
    let sealed = sealed_to_clients(r, &reply);
    (r.clients.iter_mut().enumerate())
        .map(|(i, half)| half.handle(&sealed[&ClientId(i as u64)]).unwrap())
        .collect()
}

#[test]
fn an_honest_dealt_round_decodes_the_plain_sum() {
    let key = DealerKeys::new(SecretSource::Derived { seed: 3 }).unwrap();
    let s = spec(4, 4);
    let mut r = round(&s, &key, 1);
    let request = asked(&mut r);
    let reply = r.dealer.handle(&request).unwrap();
    // The dealer deals a round once.
    assert!(r.dealer.handle(&request).is_err());
    let sealed = sealed_to_clients(&mut r, &reply);
    for (i, half) in r.clients.iter_mut().enumerate() {
        let c = ClientId(i as u64);
        let frame = half.handle(&sealed[&c]).unwrap();
        r.server.receive(c, &frame).unwrap();
    }
    assert!(matches!(r.server.advance().unwrap(), Advanced::Finished));
    let last = BTreeMap::new();
    let check = DeltaCheck {
        last: &last,
        capacity: 8,
        max_points: 100,
    };
    let out = r.server.conclude(&check).unwrap();
    let mut plain: BTreeMap<BigUint, u64> = BTreeMap::new();
    for c in 0..4 {
        for (b, n) in histogram(c) {
            *plain.entry(b).or_default() += n;
        }
    }
    let Some(Decoded::Full(sum)) = out.decoded else {
        panic!("expected the whole sum")
    };
    assert_eq!(sum.into_iter().collect::<BTreeMap<_, _>>(), plain);
}

#[test]
fn a_frame_before_the_seeds_went_out_is_refused() {
    let key = DealerKeys::new(SecretSource::Derived { seed: 4 }).unwrap();
    let s = spec(5, 3);
    // A client's real frame of this round (the same deal, driven apart).
    let frame = frames(&mut round(&s, &key, 1)).swap_remove(0);
    // Before the request, and between the deal and its relay: no frame
    // is taken, however well made.
    let mut r = round(&s, &key, 1);
    assert!(r.server.receive(ClientId(0), &frame).is_err());
    let request = asked(&mut r);
    r.server
        .receive_dealer(&r.dealer.handle(&request).unwrap())
        .unwrap();
    assert!(r.server.receive(ClientId(0), &frame).is_err());
    assert!(r.server.answered().is_empty());
    // Once relayed, the same frame counts.
    assert!(matches!(r.server.advance().unwrap(), Advanced::Clients(_)));
    r.server.receive(ClientId(0), &frame).unwrap();
    assert_eq!(r.server.answered().len(), 1);
}

#[test]
fn a_frame_in_another_clients_name_is_refused() {
    let key = DealerKeys::new(SecretSource::Derived { seed: 6 }).unwrap();
    let s = spec(7, 3);
    let mut r = round(&s, &key, 3);
    let frames = frames(&mut r);
    // Client 1 relays client 0's frame, then its own relabelled as 0's.
    assert!(r.server.receive(ClientId(1), &frames[0]).is_err());
    let mut relabelled = syndrome_agg::wire::Frame::parse(&frames[1], usize::MAX).unwrap();
    relabelled.client_id = 0;
    let relabelled = relabelled.to_bytes().unwrap();
    assert!(r.server.receive(ClientId(1), &relabelled).is_err());
    assert!(r.server.answered().is_empty());
    // The honest frames still make the round.
    for (i, f) in frames.iter().enumerate() {
        r.server.receive(ClientId(i as u64), f).unwrap();
    }
    assert!(matches!(r.server.advance().unwrap(), Advanced::Finished));
}

/// What a lying server does to the victim's seal.
#[derive(Clone, Copy, Debug)]
enum Lie {
    /// Seals a seed it chose under a key of its own.
    Forged,
    /// Relays another client's seal to the victim.
    OtherClientsSeal,
    /// Relays the victim's seal of another round of the same dealer.
    OtherRound,
    /// Flips one bit of the victim's seal.
    FlipBit,
}

const LIES: [Lie; 4] = [
    Lie::Forged,
    Lie::OtherClientsSeal,
    Lie::OtherRound,
    Lie::FlipBit,
];

#[test]
fn a_lying_server_never_gets_a_client_to_mask_with_a_seed_it_knows() {
    let mut rng = ChaCha20Rng::seed_from_u64(27);
    let key = DealerKeys::new(SecretSource::Derived { seed: 5 }).unwrap();
    for case in 0..24 {
        let lie = LIES[rng.random_range(0..LIES.len())];
        let n = rng.random_range(2..5u64);
        let victim = ClientId(rng.random_range(0..n));
        let s = spec(10 + case, n);
        let mut r = round(&s, &key, case);
        let request = asked(&mut r);
        let reply = r.dealer.handle(&request).unwrap();
        let mut sealed = sealed_to_clients(&mut r, &reply);
        let victims_seal = |m: &[u8]| -> SealedSeed { from_bytes(m, 4096, "").unwrap() };
        match lie {
            Lie::Forged => {
                let own = SealKey::from_secret_bytes([200; 32]);
                let mut mine = victims_seal(&sealed[&victim]);
                let ring: Vec<u64> = s.ring.iter().map(|c| c.0).collect();
                mine.sealed =
                    seal_seed(&own, &s.context(), victim.0, &ring, &[7; 32], &mut rng).unwrap();
                sealed.insert(victim, to_bytes(&mine).unwrap());
            }
            Lie::OtherClientsSeal => {
                let other = ClientId((victim.0 + 1) % n);
                let mut mine = victims_seal(&sealed[&victim]);
                mine.sealed = victims_seal(&sealed[&other]).sealed;
                sealed.insert(victim, to_bytes(&mine).unwrap());
            }
            Lie::OtherRound => {
                let earlier = spec(s.round + 100, n);
                let mut e = round(&earlier, &key, case);
                let req = asked(&mut e);
                let rep = e.dealer.handle(&req).unwrap();
                let their = sealed_to_clients(&mut e, &rep);
                let mut mine = victims_seal(&sealed[&victim]);
                mine.sealed = victims_seal(&their[&victim]).sealed;
                sealed.insert(victim, to_bytes(&mine).unwrap());
            }
            Lie::FlipBit => {
                let mut mine = victims_seal(&sealed[&victim]);
                let bit = rng.random_range(0..8 * mine.sealed.len());
                mine.sealed[bit / 8] ^= 1 << (bit % 8);
                sealed.insert(victim, to_bytes(&mine).unwrap());
            }
        }
        for (i, half) in r.clients.iter_mut().enumerate() {
            let c = ClientId(i as u64);
            let answer = half.handle(&sealed[&c]);
            if c == victim {
                assert!(
                    matches!(answer, Err(MufcError::RoundRefused { .. })),
                    "case {case}: {lie:?} to {victim}: {answer:?}"
                );
                assert!(!half.is_done(), "case {case}");
            } else {
                assert!(answer.is_ok(), "case {case}: {lie:?}, client {c}");
            }
        }
    }
}

#[test]
fn the_dealer_refuses_a_request_for_another_ring_or_round() {
    let key = DealerKeys::new(SecretSource::Derived { seed: 9 }).unwrap();
    let s = spec(6, 3);
    let mut r = round(&s, &key, 2);
    let honest = asked(&mut r);
    let d: DealRequest = from_bytes(&honest, 1 << 20, "").unwrap();
    let without = DealRequest {
        ring: d.ring[1..].to_vec(),
        ..from_bytes(&honest, 1 << 20, "").unwrap()
    };
    let twice = DealRequest {
        ring: vec![d.ring[0], d.ring[0], d.ring[1], d.ring[2]],
        ..from_bytes(&honest, 1 << 20, "").unwrap()
    };
    let other_round = DealRequest {
        round: 7,
        ..from_bytes(&honest, 1 << 20, "").unwrap()
    };
    for bad in [without, twice, other_round] {
        assert!(r.dealer.handle(&to_bytes(&bad).unwrap()).is_err());
    }
    // Refused requests dealt nothing: the honest one is still served.
    assert!(r.dealer.handle(&honest).is_ok());
}

#[test]
fn the_server_refuses_a_dealers_answer_that_is_not_the_rounds() {
    let key = DealerKeys::new(SecretSource::Derived { seed: 8 }).unwrap();
    let s = spec(6, 3);
    let mut r = round(&s, &key, 2);
    let request = asked(&mut r);
    let reply = r.dealer.handle(&request).unwrap();
    let honest: Dealt = from_bytes(&reply, 1 << 20, "").unwrap();
    let variants: Vec<Dealt> = vec![
        Dealt {
            round: 7,
            ..from_bytes(&reply, 1 << 20, "").unwrap()
        },
        Dealt {
            sealed: honest.sealed[..2].to_vec(),
            ..from_bytes(&reply, 1 << 20, "").unwrap()
        },
        Dealt {
            sealed: vec![honest.sealed[0].clone(); 3],
            ..from_bytes(&reply, 1 << 20, "").unwrap()
        },
        Dealt {
            correction: honest.correction[..honest.correction.len() - 1].to_vec(),
            ..from_bytes(&reply, 1 << 20, "").unwrap()
        },
    ];
    for (i, bad) in variants.iter().enumerate() {
        assert!(
            r.server.receive_dealer(&to_bytes(bad).unwrap()).is_err(),
            "variant {i}"
        );
    }
    // Refused answers changed nothing: the honest one is still taken.
    r.server.receive_dealer(&reply).unwrap();
    assert!(matches!(r.server.advance().unwrap(), Advanced::Clients(_)));
}
