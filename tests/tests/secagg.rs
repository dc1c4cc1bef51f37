//! The federation's aggregation through the dropout-tolerant protocol
//! (`Masking::SecAgg`, Bonawitz et al. 2017): without dropouts it gives the
//! dealer's result bit for bit; with dropouts the server decodes exactly
//! the plain sum of the clients the reports call included, in every field
//! mode, across removals and a save/load; too many dropouts are a clean
//! error that changes nothing but the round counter; the integer ring is
//! refused.
#![allow(clippy::unwrap_used)]

use mufc::{
    Channel, ClientId, DecodeKind, Federation, FederationConfig, Masks, MufcError, RemovalReport,
    RemovalRequest, Scma, SecAggOptions, SecAggStep, ServerUpdate,
};
use mufc_testkit::{compare, plain_sum, plain_sum_over, untimed};
use seeding::Dataset;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

const CLIENTS: usize = 10;

fn data(label: &str, dim: usize) -> Vec<Dataset> {
    gaussian_clients(
        label,
        Mixture {
            clients: CLIENTS,
            per_client: 30,
            dim,
            clusters: 3,
            k_prime: 2,
            spread: 0.1,
            sigma: 0.13,
        },
    )
}

/// One configuration and data set per field the sketches can live in.
struct Mode {
    what: &'static str,
    data: Vec<Dataset>,
    config: FederationConfig,
    bits: fn(u64) -> bool,
}

fn modes() -> Vec<Mode> {
    let base = |gamma: f64| FederationConfig::new(3).client_k(2).gamma(gamma).seed(3);
    vec![
        Mode {
            what: "GF(27 * 2^59 + 1)",
            data: data("secagg-61", 3),
            config: base(0.1).channel(Channel::Scma(Scma::field(Masks::Dealer))),
            bits: |b| b == 64,
        },
        Mode {
            // B^d = 1000^8, about 2^80.
            what: "GF(2^127 - 1)",
            data: data("secagg-127", 8),
            config: base(0.001).channel(Channel::Scma(Scma::field(Masks::Dealer))),
            bits: |b| b == 127,
        },
        Mode {
            // B^d = 1000^14, about 2^140.
            what: "big prime",
            data: data("secagg-big", 14),
            config: base(0.001).channel(Channel::Scma(Scma::field(Masks::Dealer))),
            bits: |b| b > 127,
        },
        Mode {
            what: "wide keys over GF(27 * 2^59 + 1)",
            data: data("secagg-big", 14),
            config: base(0.001).channel(Channel::Scma(Scma::wide(Masks::Dealer))),
            bits: |b| b == 64,
        },
    ]
}

/// The round's reports are consistent and the server holds exactly the
/// plain sum of the included clients. Returns (excluded, included
/// although dropped) counts.
fn check_round(
    fed: &Federation,
    included: &[ClientId],
    dropped: &[(ClientId, SecAggStep)],
    what: &str,
) -> (usize, usize) {
    let ids = fed.client_ids();
    assert!(included.windows(2).all(|w| w[0] < w[1]), "{what}");
    assert!(included.iter().all(|c| ids.contains(c)), "{what}");
    let mut late = 0;
    for (c, step) in dropped {
        let inside = included.contains(c);
        assert_eq!(inside, *step == SecAggStep::Unmasking, "{what}: {c} {step}");
        late += usize::from(inside);
    }
    for c in &ids {
        if !included.contains(c) {
            assert!(dropped.iter().any(|(d, _)| d == c), "{what}: {c} missing");
        }
    }
    assert_eq!(fed.last_included(), included, "{what}");
    if included.len() < ids.len() {
        // The left-out clients' data is really missing from the server.
        assert_ne!(fed.server().counts(), &plain_sum(fed), "{what}");
    }
    assert_eq!(
        fed.server().counts(),
        &plain_sum_over(fed, included),
        "{what}: decoded != plain sum of the included clients"
    );
    (ids.len() - included.len(), late)
}

/// Removal requests that exercise the delta decoder across changing
/// included sets: one point, a whole client, a batch over three clients.
fn requests(fed: &Federation, round: usize) -> RemovalRequest {
    let ids = fed.client_ids();
    let pick = |i: usize| ids[(round * 3 + i) % ids.len()];
    let first = |c: ClientId| fed.client(c).unwrap().data().id(0);
    // Each request changes at least two clients' messages, so the default
    // policy (docs/threat-model.md U3) serves it at once: a round per
    // request.
    match round % 3 {
        0 => RemovalRequest::points(pick(0), vec![first(pick(0))])
            .with_points(pick(1), vec![first(pick(1))]),
        1 => RemovalRequest::clients(vec![pick(1)]).with_points(pick(2), vec![first(pick(2))]),
        _ => (0..3).fold(RemovalRequest::new(), |r, i| {
            r.with_points(pick(i), vec![first(pick(i))])
        }),
    }
}

#[test]
fn without_dropouts_secagg_gives_the_dealers_result_bit_for_bit() {
    for m in modes() {
        let dealer = m.config.clone().validate().unwrap();
        let masks = Masks::SecAgg(SecAggOptions::new());
        let channel = match m.config.clone().validate().unwrap().channel() {
            Channel::Scma(Scma::Wide { .. }) => Channel::Scma(Scma::wide(masks)),
            _ => Channel::Scma(Scma::field(masks)),
        };
        let secagg = m.config.channel(channel).validate().unwrap();
        let mut a = Federation::new(m.data.clone(), &dealer).unwrap();
        let mut b = Federation::new(m.data, &secagg).unwrap();
        let info = b.fit_report().sketch.clone().unwrap();
        assert!((m.bits)(info.modulus_bits), "{}: {info:?}", m.what);
        compare(&a, &b).unwrap();
        assert_eq!(b.server().counts(), &plain_sum(&b), "{}", m.what);
        let r = b.fit_report();
        assert_eq!(r.included, b.client_ids(), "{}", m.what);
        assert!(r.dropped.is_empty(), "{}", m.what);
        // The protocol is online work, timed on both sides.
        assert_eq!(r.times.offline, std::time::Duration::ZERO);
        assert!(r.times.protocol_client_max > std::time::Duration::ZERO);
        assert!(r.times.protocol_client_sum >= r.times.protocol_client_max);
        for round in 0..3 {
            let req = requests(&a, round);
            let ra = a.remove(&req).unwrap();
            let rb = b.remove(&req).unwrap();
            compare(&a, &b).unwrap();
            assert_eq!(ra.decode, rb.decode, "{}", m.what);
            assert_eq!(rb.included, b.client_ids(), "{}", m.what);
        }
    }
}

#[test]
fn with_dropouts_the_server_decodes_the_plain_sum_of_the_included_clients() {
    let mut seen = (0, 0);
    for m in modes() {
        let config = m
            .config
            .channel(Channel::scma(Masks::SecAgg(
                SecAggOptions::new().dropout(0.2),
            )))
            .validate()
            .unwrap();
        let mut fed = Federation::new(m.data, &config).unwrap();
        let r = fed.fit_report().clone();
        let (out, late) = check_round(&fed, &r.included, &r.dropped, m.what);
        seen = (seen.0 + out, seen.1 + late);
        let mut deltas = 0;
        for round in 0..4 {
            let req = requests(&fed, round);
            let report = fed.remove(&req).unwrap();
            let what = format!("{}, request {round}", m.what);
            let (out, late) = check_round(&fed, &report.included, &report.dropped, &what);
            seen = (seen.0 + out, seen.1 + late);
            deltas += usize::from(matches!(report.decode, DecodeKind::Delta { .. }));
        }
        // With the included set moving, some differences still decode.
        assert!(deltas > 0, "{}", m.what);
    }
    // Both kinds of dropout occurred: before the masked input (left out)
    // and during unmasking (included, docs/threat-model.md D3).
    assert!(seen.0 > 0 && seen.1 > 0, "{seen:?}");
}

#[test]
fn dropouts_reproduce_for_the_same_seed() {
    let m = modes().swap_remove(0);
    let config = |seed: u64| {
        m.config
            .clone()
            .seed(seed)
            .channel(Channel::scma(Masks::SecAgg(
                SecAggOptions::new().dropout(0.25),
            )))
            .validate()
            .unwrap()
    };
    let run = |seed: u64| {
        let mut fed = Federation::new(m.data.clone(), &config(seed)).unwrap();
        let mut trace = vec![(
            fed.fit_report().included.clone(),
            fed.fit_report().dropped.clone(),
        )];
        for round in 0..3 {
            let r = fed.remove(&requests(&fed, round)).unwrap();
            trace.push((r.included.clone(), r.dropped.clone()));
        }
        (fed, trace)
    };
    let (a, ta) = run(8);
    let (b, tb) = run(8);
    assert_eq!(ta, tb);
    compare(&a, &b).unwrap();
    let untimed_a: Vec<_> = a.history().iter().map(untimed).collect();
    let untimed_b: Vec<_> = b.history().iter().map(untimed).collect();
    assert_eq!(untimed_a, untimed_b);
    // Another seed draws other dropouts.
    let (_, tc) = run(9);
    assert_ne!(ta, tc);
}

#[test]
fn a_saved_federation_with_dropouts_serves_removals_as_before() {
    let m = modes().swap_remove(0);
    let config = m
        .config
        .channel(Channel::scma(Masks::SecAgg(
            SecAggOptions::new().dropout(0.2),
        )))
        .validate()
        .unwrap();
    let mut fed = Federation::new(m.data, &config).unwrap();
    fed.remove(&requests(&fed, 0)).unwrap();
    let mut loaded = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
    compare(&fed, &loaded).unwrap();
    for round in 1..3 {
        let req = requests(&fed, round);
        let a = fed.remove(&req).unwrap();
        let b = loaded.remove(&req).unwrap();
        // The server's update statistics (points recomputed) depend on the
        // caches of its K-means, which a reload rebuilds by a fresh fit;
        // its model does not (compared below).
        let norm = |r: &RemovalReport| RemovalReport {
            server: ServerUpdate::Unchanged,
            ..untimed(r)
        };
        assert_eq!(norm(&a), norm(&b));
        assert_eq!(
            std::mem::discriminant(&a.server),
            std::mem::discriminant(&b.server)
        );
        compare(&fed, &loaded).unwrap();
    }
}

#[test]
fn too_many_dropouts_fail_cleanly_and_keep_the_model() {
    let m = modes().swap_remove(0);
    // 10 clients, complete graph, threshold 6: a round fails when five or
    // more drop, which at rate 0.4 happens in about a third of the rounds.
    let config = |seed: u64| {
        m.config
            .clone()
            .seed(seed)
            .channel(Channel::scma(Masks::SecAgg(
                SecAggOptions::new().dropout(0.4),
            )))
            .validate()
            .unwrap()
    };
    let check_err = |err: &MufcError, round: u64| match err {
        MufcError::TooManyDropouts {
            round: r,
            clients,
            dropped,
            have,
            need,
            ..
        } => {
            assert_eq!(*r, round);
            assert!(*dropped > clients - need, "{err}");
            assert!(have < need, "{err}");
        }
        other => panic!("expected TooManyDropouts, got {other:?}"),
    };
    // Training fails for some seeds.
    let fit_failures = (0..12)
        .filter_map(|seed| Federation::new(m.data.clone(), &config(seed)).err())
        .inspect(|e| check_err(e, 0))
        .count();
    assert!(fit_failures > 0);
    // A removal fails after some successful ones, and nothing changes.
    let mut fed = (0..12)
        .find_map(|seed| Federation::new(m.data.clone(), &config(seed)).ok())
        .unwrap();
    let mut failed = false;
    for round in 0..12 {
        // Two clients update: the request is served at once (a lone one
        // would wait, docs/threat-model.md U3).
        let point = |c: usize| vec![fed.clients()[c].data().id(0)];
        let req = RemovalRequest::points(fed.client_ids()[round % 2], point(round % 2))
            .with_points(fed.client_ids()[2], point(2));
        let before = fed.to_bytes().unwrap();
        let rounds = fed.rounds();
        match fed.remove(&req) {
            Ok(r) => {
                check_round(&fed, &r.included, &r.dropped, "rate 0.4");
            }
            Err(e) => {
                check_err(&e, rounds);
                // The model is as it was, the request waits with its
                // points erased, and the failed round consumed its number
                // (its masks are never used again).
                let before = Federation::from_bytes(&before).unwrap();
                crate::privacy::assert_failed_round_kept_the_model(&fed, &before, &req);
                assert_eq!(fed.rounds(), rounds + 1);
                failed = true;
                break;
            }
        }
    }
    assert!(failed);
}

#[test]
fn secagg_plus_on_a_harary_graph_decodes_the_included_clients() {
    // 40 clients: the parameter finder picks a Harary graph of degree
    // well below 39 (unit-tested in the crate), so this runs SecAgg+.
    let data = gaussian_clients(
        "secagg-harary",
        Mixture {
            clients: 40,
            per_client: 12,
            dim: 2,
            clusters: 3,
            k_prime: 2,
            spread: 0.1,
            sigma: 0.13,
        },
    );
    let config = FederationConfig::new(3)
        .client_k(2)
        .gamma(0.1)
        .channel(Channel::scma(Masks::SecAgg(
            SecAggOptions::new()
                .graph(mufc::SecAggGraph::Harary)
                .dropout(0.1),
        )))
        .seed(4)
        .validate()
        .unwrap();
    let mut fed = Federation::new(data, &config).unwrap();
    let r = fed.fit_report().clone();
    let mut out = check_round(&fed, &r.included, &r.dropped, "harary, fit").0;
    for round in 0..2 {
        let r = fed.remove(&requests(&fed, round)).unwrap();
        out += check_round(&fed, &r.included, &r.dropped, "harary").0;
    }
    assert!(out > 0);
}

#[test]
fn secagg_refuses_the_integer_ring_the_plain_mode_and_bad_rates() {
    let invalid = |c: FederationConfig, name: &str| match c.validate() {
        Err(MufcError::InvalidConfig { param, reason }) => {
            assert_eq!(param.name(), name, "{reason}");
        }
        other => panic!("expected an invalid {name}, got {other:?}"),
    };
    // The combinations cannot be written as a `Channel` (the flat
    // command-line choices are refused by `mufc-cli`'s `cli::channel`).
    let none = SecAggOptions::new();
    let secagg = |o| FederationConfig::new(2).channel(Channel::scma(Masks::SecAgg(o)));
    for rate in [-0.1, 1.0, f64::NAN] {
        invalid(secagg(none.dropout(rate)), "dropout");
    }
    invalid(secagg(none.colluding(1.0)), "colluding");
    // A rate no threshold survives for this many clients.
    let m = modes().swap_remove(0);
    let c = m
        .config
        .channel(Channel::scma(Masks::SecAgg(
            SecAggOptions::new().dropout(0.6),
        )))
        .validate()
        .unwrap();
    match Federation::new(m.data, &c) {
        Err(MufcError::InvalidConfig {
            param: mufc::ConfigParam::Dropout,
            ..
        }) => {}
        other => panic!("expected an invalid dropout, got {other:?}"),
    }
}
