//! The dealer as a party (`masking::dealer`) against a server that tries
//! to learn one client's mask: it forges, replays or alters the sealed
//! seed it relays, asks the dealer twice for one round, or asks it for a
//! smaller ring than the clients were told. Each strategy
//! is drawn at random; the client must refuse (its seal does not open)
//! rather than mask with a seed the server knows. And the server's view
//! of an honest round (the masked inputs and the correction) depends on
//! the inputs only through their sum.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use field::{Field, Mersenne61};
use proptest::prelude::*;
use rand::RngExt;
use syndrome_agg::IntegerRing;
use syndrome_agg::masking::MaskDomain;
use syndrome_agg::masking::dealer::{
    SEALED_SEED_BYTES, SealKey, deal_seeds, open_seed, seeded_mask,
};
use syndrome_agg::masking::pairwise::{MaskKeyPair, RoundContext, SessionId};

fn ctx(round: u64) -> RoundContext {
    RoundContext {
        session: SessionId([5; 32]),
        round,
    }
}

/// The pairs' keys, as the dealer computes them (step 0).
fn pair_keys(dealer: &MaskKeyPair, clients: &[MaskKeyPair]) -> Vec<SealKey> {
    clients
        .iter()
        .enumerate()
        .map(|(i, k)| SealKey::agree(dealer, i as u64, &k.public_key()).unwrap())
        .collect()
}

/// The same keys as each client computes them.
fn client_keys(dealer: &MaskKeyPair, clients: &[MaskKeyPair]) -> Vec<SealKey> {
    clients
        .iter()
        .enumerate()
        .map(|(i, k)| SealKey::agree(k, i as u64, &dealer.public_key()).unwrap())
        .collect()
}

fn ring(keys: &[SealKey]) -> Vec<(u64, &SealKey)> {
    keys.iter()
        .enumerate()
        .map(|(i, k)| (i as u64, k))
        .collect()
}

fn keys(rng: &mut impl rand::CryptoRng, n: usize) -> Vec<MaskKeyPair> {
    (0..n).map(|_| MaskKeyPair::generate(rng)).collect()
}

/// What a server that wants client `victim`'s seed does.
#[derive(Clone, Copy, Debug)]
enum Strategy {
    /// Seals a seed it chose under a pair's key of its own with the victim
    /// (it plays a dealer with a key of its own).
    ForgeWithOwnDealerKey,
    /// Relays another client's seal to the victim.
    OtherClientsSeal,
    /// Relays the victim's seal of an earlier round.
    EarlierRound,
    /// Asks the dealer twice for the round and relays the second deal's
    /// seal, keeping the first deal's correction.
    SecondDeal,
    /// Flips one bit of the victim's seal.
    FlipBit,
    /// Random bytes of the right length.
    RandomBytes,
    /// Asks the dealer for a smaller ring than the one the clients were
    /// told (one client left out): that deal's correction would unmask
    /// the smaller sum, and with a sum of the whole ring, the client left
    /// out.
    SmallerRing,
}

const STRATEGIES: [Strategy; 7] = [
    Strategy::ForgeWithOwnDealerKey,
    Strategy::OtherClientsSeal,
    Strategy::EarlierRound,
    Strategy::SecondDeal,
    Strategy::FlipBit,
    Strategy::RandomBytes,
    Strategy::SmallerRing,
];

#[test]
fn a_server_never_gets_a_client_to_mask_with_a_seed_it_knows() {
    let mut rng = testdata::rng("dealer-threats");
    let f = Mersenne61;
    for case in 0..60 {
        let strategy = STRATEGIES[rng.random_range(0..STRATEGIES.len())];
        let n = rng.random_range(2..6usize);
        let victim = rng.random_range(0..n);
        let dealer = MaskKeyPair::generate(&mut rng);
        let clients = keys(&mut rng, n);
        let at_dealer = pair_keys(&dealer, &clients);
        let at_clients = client_keys(&dealer, &clients);
        let round = rng.random_range(1..100u64);
        let all: Vec<u64> = (0..n as u64).collect();
        let deal = deal_seeds(&f, &ctx(round), &ring(&at_dealer), 3, &mut rng).unwrap();
        let id = victim as u64;
        let (sealed, opens) = match strategy {
            Strategy::ForgeWithOwnDealerKey => {
                let fake = MaskKeyPair::generate(&mut rng);
                let key = SealKey::agree(&fake, id, &clients[victim].public_key()).unwrap();
                let forged = deal_seeds(&f, &ctx(round), &[(id, &key)], 3, &mut rng).unwrap();
                (forged.sealed[0].1.clone(), false)
            }
            Strategy::OtherClientsSeal => (deal.sealed[(victim + 1) % n].1.clone(), false),
            Strategy::EarlierRound => {
                let earlier =
                    deal_seeds(&f, &ctx(round - 1), &ring(&at_dealer), 3, &mut rng).unwrap();
                (earlier.sealed[victim].1.clone(), false)
            }
            Strategy::SecondDeal => {
                // It opens (the dealer sealed it), but its seed is not one
                // the first deal's correction cancels, and the server
                // learns neither: the sum fails to cancel, nothing leaks.
                let second = deal_seeds(&f, &ctx(round), &ring(&at_dealer), 3, &mut rng).unwrap();
                assert_ne!(second.correction, deal.correction, "case {case}");
                (second.sealed[victim].1.clone(), true)
            }
            Strategy::FlipBit => {
                let mut s = deal.sealed[victim].1.clone();
                let bit = rng.random_range(0..8 * s.len());
                s[bit / 8] ^= 1 << (bit % 8);
                (s, false)
            }
            Strategy::RandomBytes => {
                let mut s = vec![0u8; SEALED_SEED_BYTES];
                rng.fill_bytes(&mut s);
                (s, false)
            }
            Strategy::SmallerRing => {
                let out = (victim + 1) % n;
                let smaller: Vec<(u64, &SealKey)> = ring(&at_dealer)
                    .into_iter()
                    .filter(|(c, _)| *c != out as u64)
                    .collect();
                let dealt = deal_seeds(&f, &ctx(round), &smaller, 3, &mut rng).unwrap();
                let mine = dealt.sealed.iter().find(|(c, _)| *c == id).unwrap();
                (mine.1.clone(), false)
            }
        };
        let opened = open_seed(&at_clients[victim], &ctx(round), id, &all, &sealed);
        assert_eq!(opened.is_ok(), opens, "case {case}: {strategy:?}");
        // The honest seals of the other clients still open.
        for (i, k) in at_clients.iter().enumerate().filter(|(i, _)| *i != victim) {
            let s = &deal.sealed[i].1;
            assert!(
                open_seed(k, &ctx(round), i as u64, &all, s).is_ok(),
                "case {case}: client {i}"
            );
        }
    }
}

#[test]
fn the_dealer_refuses_a_ring_naming_a_client_twice() {
    let mut rng = testdata::rng("dealer-twice");
    let dealer = MaskKeyPair::generate(&mut rng);
    let clients = keys(&mut rng, 3);
    let at_dealer = pair_keys(&dealer, &clients);
    let mut r = ring(&at_dealer);
    r[2].0 = 0;
    assert!(deal_seeds(&Mersenne61, &ctx(0), &r, 4, &mut rng).is_err());
}

#[test]
fn the_pair_key_is_the_same_on_both_sides_and_differs_between_pairs() {
    let mut rng = testdata::rng("dealer-pairs");
    let dealer = MaskKeyPair::generate(&mut rng);
    let clients = keys(&mut rng, 3);
    let c = ctx(1);
    let at_dealer = pair_keys(&dealer, &clients);
    let at_clients = client_keys(&dealer, &clients);
    for i in 0..3 {
        let s = deal_seeds(&Mersenne61, &c, &ring(&at_dealer), 1, &mut rng).unwrap();
        assert!(open_seed(&at_clients[i], &c, i as u64, &[0, 1, 2], &s.sealed[i].1).is_ok());
        let other = (i + 1) % 3;
        // Another client's key, even told it is client i, does not open.
        assert!(open_seed(&at_clients[other], &c, i as u64, &[0, 1, 2], &s.sealed[i].1).is_err());
    }
}

/// The sum of every client's mask and the correction, in `domain`.
fn total<D: MaskDomain>(domain: &D, n: usize, len: usize, seed: u64) -> Vec<D::Elem> {
    let mut rng = testdata::rng(&format!("dealer-sum-{seed}"));
    let dealer = MaskKeyPair::generate(&mut rng);
    let clients = keys(&mut rng, n);
    let at_dealer = pair_keys(&dealer, &clients);
    let at_clients = client_keys(&dealer, &clients);
    let deal = deal_seeds(domain, &ctx(seed), &ring(&at_dealer), len, &mut rng).unwrap();
    let all: Vec<u64> = (0..n as u64).collect();
    let mut sum = deal.correction.0.clone();
    for ((id, sealed), k) in deal.sealed.iter().zip(&at_clients) {
        let s = open_seed(k, &ctx(seed), *id, &all, sealed).unwrap();
        let m = seeded_mask(domain, &s, &ctx(seed), *id, len).unwrap();
        for (a, b) in sum.iter_mut().zip(&m.0) {
            *a = domain.mask_add(a, b);
        }
    }
    sum
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Exactness in every mask domain: the masks and the correction sum
    /// to zero.
    #[test]
    fn the_masks_and_the_correction_cancel(n in 1usize..7, len in 0usize..9, seed in any::<u64>()) {
        prop_assert!(total(&Mersenne61, n, len, seed).iter().all(|e| *e == Mersenne61.zero()));
        let ring = IntegerRing::new(70);
        prop_assert!(total(&ring, n, len, seed).iter().all(|e| *e == ring.mask_zero()));
    }
}

/// In `Z / 4`, two clients of one element each: the server's view of a
/// round, `(y_1, y_2, c)` (masked inputs and the correction), is drawn for
/// the inputs `(0, 3)` and `(1, 2)`, which have the same sum. Both must be
/// uniform on the same 16 views (those with `y_1 + y_2 + c = 3`): the
/// view tells the sum and nothing else.
#[test]
fn the_servers_view_depends_on_the_inputs_only_through_their_sum() {
    let ring_domain = IntegerRing::new(2);
    let mut rng = testdata::rng("dealer-view");
    let dealer = MaskKeyPair::generate(&mut rng);
    let draws = 1500;
    let mut views: [BTreeMap<(String, String, String), usize>; 2] = Default::default();
    let clients = keys(&mut rng, 2);
    let at_dealer = pair_keys(&dealer, &clients);
    let at_clients = client_keys(&dealer, &clients);
    for (which, inputs) in [[0u64, 3], [1, 2]].iter().enumerate() {
        for round in 0..draws {
            let c = ctx(round);
            let deal = deal_seeds(&ring_domain, &c, &ring(&at_dealer), 1, &mut rng).unwrap();
            let mut view = Vec::new();
            for ((id, sealed), k) in deal.sealed.iter().zip(&at_clients) {
                let s = open_seed(k, &c, *id, &[0, 1], sealed).unwrap();
                let m = seeded_mask(&ring_domain, &s, &c, *id, 1).unwrap();
                let x = ring_domain.mask_from_u64(inputs[usize::try_from(*id).unwrap()]);
                view.push(format!("{:?}", ring_domain.mask_add(&x, &m.0[0])));
            }
            let key = (
                view[0].clone(),
                view[1].clone(),
                format!("{:?}", deal.correction.0[0]),
            );
            *views[which].entry(key).or_default() += 1;
        }
    }
    // The same support, and counts within a generous bound of each other
    // (16 cells of about 94 draws each: a standard deviation near 9.4).
    let cells: std::collections::BTreeSet<_> = views.iter().flat_map(|v| v.keys()).collect();
    assert_eq!(cells.len(), 16, "{views:?}");
    for cell in cells {
        let (a, b) = (
            views[0].get(cell).copied().unwrap_or(0),
            views[1].get(cell).copied().unwrap_or(0),
        );
        assert!(a.abs_diff(b) < 60, "{cell:?}: {a} against {b}");
    }
}
