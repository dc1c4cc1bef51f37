//! Change rounds (`aggregation/change.rs`): a removal that keeps every
//! client sends each client's change under small parameters instead of its
//! whole histogram; the result equals retraining; the masks stay fresh and
//! hide which clients changed; rounds that cannot carry changes are whole.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::test_channels::Sketch;
use proptest::prelude::*;
use rand::{Rng, RngExt};
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

use crate::aggregation::masked_elements;
use crate::{
    AdditionRequest, ClientId, DecodeKind, Federation, FederationConfig, Masking, RemovalRequest,
    ValidConfig,
};

/// Twelve clients of 25 points, k = 2: the capacity t = k L = 24 leaves
/// room for changes of up to five clients (2 k each) below it.
const MIX: Mixture = Mixture {
    clients: 12,
    per_client: 25,
    dim: 2,
    clusters: 3,
    k_prime: 2,
    spread: 0.2,
    sigma: 0.1,
};

/// The modes whose removals run change rounds (dealt and pairwise masks,
/// every scheme that decodes differences).
const CHANGE_MODES: [(Sketch, Masking); 6] = [
    (Sketch::Auto, Masking::Dealer),
    (Sketch::Auto, Masking::Pairwise),
    (Sketch::Field, Masking::Dealer),
    (Sketch::Wide, Masking::Dealer),
    (Sketch::Wide, Masking::Pairwise),
    (Sketch::Partitioned, Masking::Dealer),
];

fn config(privacy: Sketch, masking: Masking) -> ValidConfig {
    config_k(privacy, masking, 2)
}

/// As [`config`], with clients computing `k` clusters.
fn config_k(privacy: Sketch, masking: Masking, k: usize) -> ValidConfig {
    FederationConfig::new(3)
        .client_k(k)
        .gamma(0.1)
        .seed(11)
        .channel(crate::test_channels::channel(privacy, masking))
        .run(crate::RunOptions::new().record_messages(true))
        .validate()
        .unwrap()
}

/// The clients' points, seeds and histograms, the server's counts and
/// centroids, bit for bit (mufc-testkit's comparison takes the `mufc` of other
/// crates).
fn compare(a: &Federation, b: &Federation) -> Result<(), String> {
    let clients = |f: &Federation| {
        f.clients()
            .iter()
            .map(|c| {
                // By point id: a removal may reorder a client's points.
                let mut points: Vec<(PointId, Vec<u64>)> = (0..c.data().len())
                    .map(|p| {
                        let bits = c.data().point(p).iter().map(|x| x.to_bits()).collect();
                        (c.data().id(p), bits)
                    })
                    .collect();
                points.sort();
                (
                    c.id(),
                    points.iter().map(|(id, _)| *id).collect::<Vec<_>>(),
                    points.into_iter().map(|(_, b)| b).collect::<Vec<_>>(),
                    c.seed_ids().to_vec(),
                    c.histogram().to_vec(),
                )
            })
            .collect::<Vec<_>>()
    };
    let server = |f: &Federation| {
        f.server()
            .centroids()
            .map(|c| c.iter().map(|x| x.to_bits()).collect::<Vec<_>>())
    };
    for (x, y) in clients(a).iter().zip(clients(b).iter()) {
        if x != y {
            return Err(format!(
                "client {}: ids {} / points {} / seeds {} / histogram {}",
                x.0,
                x.1 == y.1,
                x.2 == y.2,
                x.3 == y.3,
                x.4 == y.4
            ));
        }
    }
    if a.clients().len() != b.clients().len() {
        return Err("the clients differ".into());
    }
    if a.server().counts() != b.server().counts() {
        return Err("the decoded counts differ".into());
    }
    if server(a) != server(b) {
        return Err("the server's centroids differ".into());
    }
    Ok(())
}

/// The federation retrained without the points `gone` removed so far.
fn retrained(fed: &Federation, gone: &[(ClientId, PointId)]) -> Federation {
    let rest = gaussian_clients("change-rounds", MIX)
        .into_iter()
        .enumerate()
        .map(|(l, d)| {
            let id = ClientId(l as u64);
            let ids: Vec<_> = gone
                .iter()
                .filter(|(c, _)| *c == id)
                .map(|(_, p)| *p)
                .collect();
            (id, d.without(&ids).unwrap())
        })
        .collect();
    Federation::with_ids(rest, fed.config()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    /// Requests naming two or three clients, some of their points seeds
    /// (the client reseeds), each served by a change round: the message is
    /// smaller than a whole one, the decoded difference is the change, and
    /// the federation equals retraining after every request.
    #[test]
    fn removals_that_keep_every_client_send_changes_and_equal_retraining(
        requests in prop::collection::vec(
            (prop::sample::subsequence((0usize..12).collect::<Vec<_>>(), 2..=3), 0usize..25, any::<bool>()),
            1..4,
        ),
    ) {
        let data = gaussian_clients("change-rounds", MIX);
        for (privacy, masking) in CHANGE_MODES {
            let what = format!("{privacy:?}/{masking:?}");
            let mut fed = Federation::new(data.clone(), &config(privacy, masking)).unwrap();
            let whole = fed.fit_report().bytes_per_client;
            let mut gone = Vec::new();
            for (clients, pos, seed) in &requests {
                let mut req = RemovalRequest::new();
                let current = fed.clients();
                for &l in clients {
                    let c = current[l];
                    // A seed (the client reseeds from it on) or any point
                    // not removed yet.
                    let p = if *seed {
                        c.seed_ids()[0]
                    } else {
                        c.data().id(pos % c.data().len())
                    };
                    req = req.with_points(c.id(), vec![p]);
                    gone.push((c.id(), p));
                }
                drop(current);
                let r = fed.remove(&req).unwrap();
                prop_assert!(!r.outcome.is_deferred(), "{}", what);
                if matches!(r.decode, DecodeKind::Skipped) {
                    continue;
                }
                prop_assert!(matches!(r.decode, DecodeKind::Delta { .. }), "{}: {:?}", what, r.decode);
                prop_assert!(
                    r.bytes_per_client < whole,
                    "{}: {} bytes against {} for a whole round", what, r.bytes_per_client, whole
                );
                compare(&fed, &retrained(&fed, &gone))
                    .map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
            }
        }
    }
}

/// SecAgg (a client may drop, and its change would be lost) and the
/// integer scheme (it decodes only whole sums) run whole rounds; the
/// result equals retraining all the same. A client removed whole sends its
/// last change (minus its histogram), so its round is a change round too.
#[test]
fn rounds_that_cannot_carry_changes_are_whole() {
    let data = gaussian_clients("change-rounds", MIX);
    let two = |fed: &Federation| {
        let [a, b, ..] = fed.clients()[..] else {
            panic!("fewer than two clients")
        };
        RemovalRequest::points(a.id(), vec![a.data().id(4)])
            .with_points(b.id(), vec![b.data().id(4)])
    };
    // k = 1 for the integer scheme: its decoder is limited to t = 16.
    for (privacy, masking, k) in [
        (Sketch::Auto, Masking::SecAgg, 2),
        (Sketch::Integer, Masking::Dealer, 1),
    ] {
        let mut fed = Federation::new(data.clone(), &config_k(privacy, masking, k)).unwrap();
        let req = two(&fed);
        let r = fed.remove(&req).unwrap();
        assert_eq!(
            r.bytes_per_client,
            fed.fit_report().bytes_per_client,
            "{privacy:?}/{masking:?}"
        );
        let gone: Vec<_> = req
            .point_entries()
            .iter()
            .flat_map(|(c, ids)| ids.iter().map(|p| (*c, *p)))
            .collect();
        compare(&fed, &retrained(&fed, &gone)).unwrap();
    }
    let mut fed = Federation::new(data, &config(Sketch::Auto, Masking::Dealer)).unwrap();
    let whole = fed.fit_report().bytes_per_client;
    let r = fed
        .remove(&RemovalRequest::clients(vec![ClientId(3), ClientId(5)]))
        .unwrap();
    assert!(
        matches!(r.decode, DecodeKind::Delta { .. }),
        "{:?}",
        r.decode
    );
    assert!(r.bytes_per_client < whole);
    // The next request: a change round again, decoded against the
    // aggregate the last one left.
    let r = fed.remove(&two(&fed)).unwrap();
    assert!(r.bytes_per_client < whole);
}

/// The masked elements each party sent in a round, by sender.
pub(crate) type MaskedInputs = Vec<(ClientId, Vec<u8>)>;

/// The elements of recorded masked bytes, as integers (wide keys work in
/// GF(27 * 2^59 + 1): eight little-endian bytes each).
pub(crate) fn elements(v: &[u8]) -> Vec<u128> {
    v.chunks(8)
        .map(|e| {
            let mut b = [0u8; 16];
            b[..e.len()].copy_from_slice(e);
            u128::from_le_bytes(b)
        })
        .collect()
}

/// The masked elements the server received in the last round, the
/// dealer's correction among them (as the pseudo-client `u64::MAX`).
fn last_masked(fed: &Federation) -> MaskedInputs {
    let sent = fed.last_messages().unwrap();
    let mut m: MaskedInputs = (sent.iter())
        .filter_map(|(c, b)| Some((*c, masked_elements(b)?)))
        .collect();
    m.sort_by_key(|(c, _)| *c);
    m
}

const P: u128 = 27 * (1 << 59) + 1;

/// The element-wise sum modulo `P` of the masked vectors of `clients`.
pub(crate) fn subset_sum(m: &MaskedInputs, clients: &[ClientId]) -> Vec<u128> {
    let mut sum: Vec<u128> = Vec::new();
    for (c, v) in m {
        if !clients.contains(c) {
            continue;
        }
        let e = elements(v);
        if sum.is_empty() {
            sum = vec![0; e.len()];
        }
        for (s, x) in sum.iter_mut().zip(e) {
            *s = (*s + x) % P;
        }
    }
    sum
}

/// Four change rounds of clients 1 and 7 (additions in the rounds `add`
/// accepts, removals in the others), each attacked by the curious server
/// of [`server_sees_only_the_sum`] with subsets drawn from `label`'s
/// stream.
fn four_change_rounds(fed: &mut Federation, label: &str, add: impl Fn(usize) -> bool) {
    let whole = fed.fit_report().bytes_per_client;
    let mut rng = testdata::rng(label);
    let mut previous: Option<MaskedInputs> = None;
    for round in 0..4usize {
        let r = two_change(fed, round, add(round));
        assert!(r.bytes_per_client < whole, "round {round} was whole");
        previous = Some(server_sees_only_the_sum(
            fed,
            previous.as_ref(),
            &mut rng,
            round,
        ));
    }
}

/// Clients 1 and 7 change in request `round`: each loses its point at
/// position `round`, or, with `add`, gains a copy of it under a new id.
fn two_change(fed: &mut Federation, round: usize, add: bool) -> crate::RemovalReport {
    let (a, b) = (fed.clients()[1].clone(), fed.clients()[7].clone());
    if add {
        let copy = |c: &crate::Client| {
            let d = c.data().only(&[c.data().id(round)]).unwrap();
            let id = PointId(10_000 + round as u64);
            Dataset::with_ids(d.points().clone(), vec![id]).unwrap()
        };
        let req = AdditionRequest::records(a.id(), copy(&a)).with_records(b.id(), copy(&b));
        fed.add(&req).unwrap()
    } else {
        let req = RemovalRequest::points(a.id(), vec![a.data().id(round)])
            .with_points(b.id(), vec![b.data().id(round)]);
        fed.remove(&req).unwrap()
    }
}

/// What a curious server tries on the last round's messages: every
/// client's and the dealer's correction (the pseudo-client
/// `u64::MAX`), which it receives too. Over every message the masks
/// cancel, leaving the sum of the changes (not zero: a positive
/// control); over any proper subset of 200 drawn at random they cancel
/// nowhere; and every element of every message differs from `previous`
/// round's (fresh masks; same length: same t'). Returns the messages.
fn server_sees_only_the_sum(
    fed: &Federation,
    previous: Option<&MaskedInputs>,
    rng: &mut impl Rng,
    round: usize,
) -> MaskedInputs {
    let m = last_masked(fed);
    let ids: Vec<ClientId> = m.iter().map(|(c, _)| *c).collect();
    assert_eq!(ids.len(), fed.clients().len() + 1);
    assert!(ids.contains(&ClientId(u64::MAX)));
    assert!(subset_sum(&m, &ids).iter().any(|&x| x != 0));
    for _ in 0..200 {
        let subset: Vec<ClientId> = (ids.iter().copied())
            .filter(|_| rng.random_bool(0.5))
            .collect();
        if subset.is_empty() || subset.len() == ids.len() {
            continue;
        }
        let s = subset_sum(&m, &subset);
        assert!(
            s.iter().all(|&x| x != 0),
            "round {round}: the masks of {subset:?} cancel somewhere"
        );
    }
    for ((c, x), (_, y)) in previous.into_iter().flat_map(|p| m.iter().zip(p)) {
        assert_eq!(x.len(), y.len());
        assert!(
            elements(x).iter().zip(elements(y)).all(|(u, v)| *u != v),
            "client {c}: a mask reused"
        );
    }
    m
}

/// The server of a change round sees every masked message (and the
/// dealer's correction) and tries to learn which clients changed: it sums
/// a subset of them, drawn at random, hoping the masks cancel there and
/// leave those clients' changes (zero for clients that did not change).
/// They cancel only over every message and the correction: that sum is
/// the sum of the changes, with a nonzero element (a positive control),
/// and no proper subset's sum is zero. And two change rounds never share
/// a mask.
#[test]
fn a_change_round_hides_which_clients_changed_and_never_reuses_masks() {
    let data = gaussian_clients("change-rounds", MIX);
    let mut fed = Federation::new(data, &config(Sketch::Wide, Masking::Dealer)).unwrap();
    four_change_rounds(&mut fed, "change-round-server", |_| false);
}

/// A round that carries records that arrive is a removal's round to the
/// server: a change round whose masks cancel only over every message,
/// fresh each round, whichever way the two clients' points went (the
/// rounds alternate additions and removals). What the server decodes is
/// the sum of the two changes, as for a removal (docs/threat-model.md
/// §2.2).
#[test]
fn an_addition_round_hides_which_clients_changed_as_a_removal_does() {
    let data = gaussian_clients("change-rounds", MIX);
    let total: usize = data.iter().map(Dataset::len).sum();
    let config = (config(Sketch::Wide, Masking::Dealer).into_builder())
        .max_points(total as u64 + 16)
        .validate()
        .unwrap();
    let mut fed = Federation::new(data, &config).unwrap();
    four_change_rounds(&mut fed, "addition-round-server", |round| round % 2 == 1);
}

/// A join's round is whole, at the capacity the new client brought, and
/// carries the new client's whole histogram: a lone join waits (its round
/// would show the server that histogram), and is flushed only with a
/// warning. With another client's change in the round, the curious server
/// of [`server_sees_only_the_sum`] learns the sum alone, as in a removal's
/// round; so too in the change round after it, at the new capacity.
#[test]
fn a_join_round_hides_the_new_client_as_a_removal_round_hides_a_removal() {
    let data = gaussian_clients("change-rounds", MIX);
    let newcomer = gaussian_clients("change-rounds-join", MIX).remove(0);
    let total = data
        .iter()
        .chain([&newcomer])
        .map(Dataset::len)
        .sum::<usize>();
    let config = (config(Sketch::Wide, Masking::Dealer).into_builder())
        .max_points(total as u64 + 16)
        .validate()
        .unwrap();
    let mut fed = Federation::new(data, &config).unwrap();
    let mut flushed = fed.clone();
    let joining = AdditionRequest::new_client(ClientId(12), newcomer);
    let lone = fed.add(&joining).unwrap();
    assert!(lone.outcome.is_deferred(), "{:?}", lone.outcome);
    flushed.add(&joining).unwrap();
    let warned = flushed.flush().unwrap().unwrap();
    assert!(warned.privacy_warning.is_some(), "{warned:?}");
    // Client 1 gains a copy of a point: one round for both.
    let a = fed.clients()[1].clone();
    let copy = a.data().only(&[a.data().id(0)]).unwrap();
    let copy = Dataset::with_ids(copy.points().clone(), vec![PointId(10_000)]).unwrap();
    let both = fed.add(&AdditionRequest::records(a.id(), copy)).unwrap();
    assert_eq!(both.updated_clients, [ClientId(1), ClientId(12)]);
    assert!(both.privacy_warning.is_none());
    assert_eq!(fed.clients().len(), 13);
    let mut rng = testdata::rng("join-round-server");
    server_sees_only_the_sum(&fed, None, &mut rng, 0);
    let after = two_change(&mut fed, 1, false);
    assert!(
        after.bytes_per_client < both.bytes_per_client,
        "not a change round"
    );
    server_sees_only_the_sum(&fed, None, &mut rng, 1);
}

/// After loading, the last sum is kept as counts (`restore_last`) and
/// encoded only when a round needs its sketch: change rounds move the
/// counts, a removed client's last change among them, then change rounds
/// go on. Every step equals the federation that was never saved, and at
/// the end retraining.
#[test]
fn a_loaded_federation_keeps_its_last_sum_as_counts_until_a_whole_round() {
    let data = gaussian_clients("change-rounds", MIX);
    for (privacy, masking) in CHANGE_MODES {
        let what = format!("{privacy:?}/{masking:?}");
        let mut kept = Federation::new(data.clone(), &config(privacy, masking)).unwrap();
        let mut loaded = Federation::from_bytes(&kept.to_bytes().unwrap()).unwrap();
        let whole = kept.fit_report().bytes_per_client;
        let mut gone = Vec::new();
        let points = |fed: &Federation, a: usize, b: usize, pos: usize| {
            let (ca, cb) = (fed.clients()[a], fed.clients()[b]);
            RemovalRequest::points(ca.id(), vec![ca.data().id(pos)])
                .with_points(cb.id(), vec![cb.data().id(pos)])
        };
        let steps = [
            points(&kept, 0, 1, 3),
            points(&kept, 2, 4, 5),
            RemovalRequest::clients(vec![ClientId(7), ClientId(9)]),
            points(&kept, 1, 3, 6),
        ];
        for (step, req) in steps.iter().enumerate() {
            let a = kept.remove(req).unwrap();
            let b = loaded.remove(req).unwrap();
            assert_eq!(a.decode, b.decode, "{what}, step {step}");
            assert_eq!(
                a.bytes_per_client, b.bytes_per_client,
                "{what}, step {step}"
            );
            assert!(b.bytes_per_client < whole, "{what}, step {step}");
            gone.extend(
                req.point_entries()
                    .iter()
                    .flat_map(|(c, ids)| ids.iter().map(|p| (*c, *p))),
            );
            compare(&loaded, &kept).unwrap_or_else(|e| panic!("{what}, step {step}: {e}"));
        }
        // Retraining without the points, then the removal of clients 7 and 9.
        let mut again = retrained(&loaded, &gone);
        again
            .remove(&RemovalRequest::clients(vec![ClientId(7), ClientId(9)]))
            .unwrap();
        compare(&loaded, &again).unwrap_or_else(|e| panic!("{what}, retrained: {e}"));
    }
}
