//! The privacy policies of the federation (docs/threat-model.md §6), on
//! by default: P4, no aggregate of fewer than `min_clients` clients (3),
//! and U3, no unlearning round that changes fewer than
//! `min_updating_clients` clients' messages (2): such requests wait,
//! pending, until other clients' requests join them, and are then applied
//! in one round that equals retraining bit for bit.
#![allow(clippy::unwrap_used)]

use mufc::{
    Channel, ClientId, DecodeKind, Federation, FederationConfig, Masks, MufcError, RemovalOutcome,
    RemovalRequest, SecAggOptions, ServerUpdate,
};
use mufc_testkit::{compare, compare_model, numbered, plain_sum, untimed, without_request};
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

const MIX: Mixture = Mixture::SMALL;

fn data() -> Vec<(ClientId, Dataset)> {
    numbered(gaussian_clients("privacy", MIX))
}

/// Seeding-only clients (the paper's): a removal that is not a seed
/// changes one count, which the tests of lone updates read.
fn config() -> FederationConfig {
    FederationConfig::paper(3).client_k(2).gamma(0.05).seed(11)
}

fn fed() -> Federation {
    Federation::with_ids(data(), &config().validate().unwrap()).unwrap()
}

/// A point of client `c` that is not one of its seeds.
fn non_seed(fed: &Federation, c: ClientId) -> PointId {
    let client = fed.client(c).unwrap();
    client
        .data()
        .ids()
        .iter()
        .copied()
        .find(|id| !client.seed_ids().contains(id))
        .unwrap()
}

/// `fed` equals a federation retrained on `truth`, bit for bit.
fn assert_retrained(fed: &Federation, truth: &[(ClientId, Dataset)]) {
    let retrained = Federation::with_ids(truth.to_vec(), fed.config()).unwrap();
    compare(fed, &retrained).unwrap();
    assert_eq!(fed.server().counts(), &plain_sum(fed));
}

#[test]
fn the_defaults_are_three_clients_and_two_updating_clients() {
    let c = FederationConfig::new(2).validate().unwrap();
    assert_eq!(c.min_clients(), mufc::DEFAULT_MIN_CLIENTS);
    assert_eq!(c.min_updating_clients(), mufc::DEFAULT_MIN_UPDATING_CLIENTS);
    assert_eq!((c.min_clients(), c.min_updating_clients()), (3, 2));
}

#[test]
fn a_lone_non_seed_removal_is_deferred_and_the_model_is_unchanged() {
    let mut fed = fed();
    let before = fed.clone();
    let rounds = fed.rounds();
    let c = ClientId(1);
    let req = RemovalRequest::points(c, vec![non_seed(&fed, c)]);
    let report = fed.remove(&req).unwrap();
    assert_eq!(
        report.outcome,
        RemovalOutcome::Deferred {
            pending_clients: vec![c],
            needed: 2
        }
    );
    assert_eq!(report.request, 1);
    assert!(report.requests.is_empty());
    assert_eq!(report.removed_points, 0);
    assert!(report.updated_clients.is_empty());
    assert_eq!(report.decode, DecodeKind::Skipped);
    assert_eq!(report.server, ServerUpdate::Unchanged);
    assert!(!report.lone_update);
    assert_eq!(report.privacy_warning, None);
    // No round ran, no report entered the history, and the model is the
    // one before: the server saw nothing. The point is erased from the
    // client at once.
    assert_eq!(fed.rounds(), rounds);
    assert!(fed.history().is_empty());
    compare_model(&fed, &before).unwrap();
    let held = |f: &Federation| f.client(c).unwrap().data().len();
    assert_eq!(held(&fed) + 1, held(&before));
    assert_eq!(fed.pending().len(), 1);
    assert_eq!(fed.pending()[0].number, 1);
    assert_eq!(fed.pending()[0].request, req);
    assert_eq!(fed.pending_clients(), vec![c]);
    // A second request of the same client is still lone: it waits too.
    let report = fed
        .remove(&RemovalRequest::points(c, vec![PointId(0)]))
        .unwrap();
    assert_eq!(report.request, 2);
    assert!(report.outcome.is_deferred());
    compare_model(&fed, &before).unwrap();
    assert_eq!(held(&fed) + 2, held(&before));
    assert_eq!(fed.pending().len(), 2);
}

#[test]
fn a_second_clients_request_applies_both_in_one_round_and_equals_retraining() {
    let mut fed = fed();
    let mut truth = data();
    let rounds = fed.rounds();
    let (a, b) = (ClientId(0), ClientId(2));
    let first = RemovalRequest::points(a, vec![non_seed(&fed, a)]);
    // The same client twice: the requests merge (union of the points).
    let second = RemovalRequest::points(a, vec![PointId(7), PointId(8)]);
    let third = RemovalRequest::points(b, vec![non_seed(&fed, b)]);
    for req in [&first, &second] {
        assert!(fed.remove(req).unwrap().outcome.is_deferred());
    }
    let report = fed.remove(&third).unwrap();
    assert_eq!(report.outcome, RemovalOutcome::Applied);
    assert_eq!(report.request, 3);
    assert_eq!(report.requests, vec![1, 2, 3]);
    assert_eq!(report.updated_clients, vec![a, b]);
    assert_eq!(report.removed_points, 4);
    assert!(!report.lone_update);
    assert_eq!(report.privacy_warning, None);
    // One round for the three requests.
    assert_eq!(fed.rounds(), rounds + 1);
    assert_eq!(fed.history().len(), 1);
    assert!(fed.pending().is_empty());
    for req in [&first, &second, &third] {
        truth = without_request(&truth, req);
    }
    assert_retrained(&fed, &truth);
    assert_eq!(fed.server().total_count(), 4 * 30 - 4);
    // Request numbers go on after the batch.
    let report = fed
        .remove(&RemovalRequest::points(a, vec![PointId(9)]).with_points(b, vec![PointId(9)]))
        .unwrap();
    assert_eq!((report.request, report.requests), (4, vec![4]));
}

#[test]
fn flush_applies_a_lone_request_with_a_privacy_warning() {
    let mut fed = fed();
    assert!(fed.flush().unwrap().is_none());
    let c = ClientId(3);
    let req = RemovalRequest::points(c, vec![non_seed(&fed, c)]);
    assert!(fed.remove(&req).unwrap().outcome.is_deferred());
    let report = fed.flush().unwrap().unwrap();
    assert_eq!(report.outcome, RemovalOutcome::Applied);
    assert_eq!((report.request, report.requests.clone()), (1, vec![1]));
    assert!(report.lone_update);
    assert_eq!(report.updated_clients, vec![c]);
    assert_eq!(report.decode, DecodeKind::Delta { nonzeros: 1 });
    let warning = report.privacy_warning.unwrap();
    assert!(warning.contains("only client 3"), "{warning}");
    assert!(warning.contains("U3"), "{warning}");
    assert!(fed.pending().is_empty());
    assert!(fed.flush().unwrap().is_none());
    assert_retrained(&fed, &without_request(&data(), &req));
}

#[test]
fn min_updating_clients_1_serves_every_request_at_once() {
    let config = config().min_updating_clients(1).validate().unwrap();
    let mut fed = Federation::with_ids(data(), &config).unwrap();
    let mut truth = data();
    for c in [ClientId(1), ClientId(1), ClientId(2)] {
        let req = RemovalRequest::points(c, vec![non_seed(&fed, c)]);
        let report = fed.remove(&req).unwrap();
        assert_eq!(report.outcome, RemovalOutcome::Applied);
        assert_eq!(report.requests, vec![report.request]);
        assert!(report.lone_update);
        // The report says what the server learns.
        assert!(report.privacy_warning.is_some());
        assert!(fed.pending().is_empty());
        truth = without_request(&truth, &req);
        assert_retrained(&fed, &truth);
    }
    assert_eq!(fed.history().len(), 3);
}

#[test]
fn pending_requests_survive_save_and_load() {
    let mut fed = fed();
    let (a, b) = (ClientId(1), ClientId(3));
    let lone = RemovalRequest::points(a, vec![non_seed(&fed, a)]);
    assert!(fed.remove(&lone).unwrap().outcome.is_deferred());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pending.mufc");
    fed.save(&path).unwrap();
    let mut loaded = Federation::load(&path).unwrap();
    assert_eq!(loaded.pending(), fed.pending());
    assert_eq!(loaded.to_bytes().unwrap(), fed.to_bytes().unwrap());
    // Both complete the batch in the same way.
    let other = RemovalRequest::points(b, vec![non_seed(&fed, b)]);
    let x = fed.remove(&other).unwrap();
    let y = loaded.remove(&other).unwrap();
    assert_eq!(x.requests, vec![1, 2]);
    assert_eq!(untimed(&x).requests, untimed(&y).requests);
    assert_eq!(x.updated_clients, y.updated_clients);
    compare(&fed, &loaded).unwrap();
    let truth = without_request(&without_request(&data(), &lone), &other);
    assert_retrained(&loaded, &truth);
}

#[test]
fn an_unknown_id_in_a_request_while_another_is_pending_changes_nothing() {
    let mut fed = fed();
    let c = ClientId(0);
    let lone = RemovalRequest::points(c, vec![PointId(4)]);
    assert!(fed.remove(&lone).unwrap().outcome.is_deferred());
    let before = fed.to_bytes().unwrap();
    let cases: Vec<(RemovalRequest, MufcError)> = vec![
        // Another client's valid points with an unknown one: the request
        // would complete the batch, but nothing of it is served.
        (
            RemovalRequest::points(ClientId(2), vec![PointId(1)])
                .with_points(ClientId(3), vec![PointId(999)]),
            MufcError::UnknownPoint {
                client: ClientId(3),
                id: PointId(999),
            },
        ),
        (
            RemovalRequest::points(ClientId(2), vec![PointId(1)])
                .with_points(ClientId(9), vec![PointId(1)]),
            MufcError::UnknownClient(ClientId(9)),
        ),
        // The pending point again: the same id twice.
        (
            RemovalRequest::points(c, vec![PointId(5), PointId(4)])
                .with_points(ClientId(2), vec![PointId(1)]),
            MufcError::AlreadyPending {
                client: c,
                id: Some(PointId(4)),
            },
        ),
    ];
    for (req, expected) in cases {
        let err = fed.remove(&req).unwrap_err();
        assert_eq!(err, expected, "{req:?}");
        assert_eq!(fed.to_bytes().unwrap(), before, "{req:?} changed the state");
        assert_eq!(fed.pending().len(), 1);
    }
    assert!(
        MufcError::AlreadyPending {
            client: c,
            id: Some(PointId(4))
        }
        .to_string()
        .contains("already named by a pending removal request")
    );
    // A whole client pending: naming it again is refused too, and a whole
    // removal takes in the client's pending points.
    let whole = RemovalRequest::clients(vec![c]);
    assert!(fed.remove(&whole).unwrap().outcome.is_deferred());
    assert_eq!(
        fed.remove(&RemovalRequest::points(c, vec![PointId(9)]))
            .unwrap_err(),
        MufcError::AlreadyPending {
            client: c,
            id: Some(PointId(9))
        }
    );
    let report = fed
        .remove(&RemovalRequest::points(ClientId(2), vec![PointId(1)]))
        .unwrap();
    assert_eq!(report.requests, vec![1, 2, 3]);
    assert_eq!(report.removed_clients, vec![c]);
    assert_eq!(report.removed_points, 31);
    let truth = without_request(
        &without_request(&data(), &whole),
        &RemovalRequest::points(ClientId(2), vec![PointId(1)]),
    );
    assert_retrained(&fed, &truth);
}

#[test]
fn an_aggregate_of_fewer_than_min_clients_is_never_decoded_the_model_is_withdrawn() {
    // At fit: refused.
    let three = data().into_iter().take(3).collect::<Vec<_>>();
    let two = data().into_iter().take(2).collect::<Vec<_>>();
    assert!(Federation::with_ids(three, &config().validate().unwrap()).is_ok());
    let err = Federation::with_ids(two.clone(), &config().validate().unwrap()).unwrap_err();
    assert_eq!(
        err,
        MufcError::TooFewClients {
            clients: 2,
            min_clients: 3
        }
    );
    let lowered = config().min_clients(2).validate().unwrap();
    assert!(Federation::with_ids(two, &lowered).is_ok());
    // After whole clients leave (two of four would remain, however the
    // request names them): the points are erased all the same, no round
    // runs, and the server keeps nothing of the old aggregate.
    for req in [
        RemovalRequest::clients(vec![ClientId(0), ClientId(1)]),
        RemovalRequest::clients(vec![ClientId(0)]).with_points(
            ClientId(1),
            fed().client(ClientId(1)).unwrap().data().ids().to_vec(),
        ),
    ] {
        let mut fed = fed();
        let rounds = fed.rounds();
        let report = fed.remove(&req).unwrap();
        let w = fed.withdrawal().unwrap().clone();
        assert_eq!(report.outcome, RemovalOutcome::Withdrawn(w.clone()));
        assert_eq!((w.clients, w.min_clients), (2, 3));
        assert_eq!(report.server, ServerUpdate::Cleared);
        assert_eq!(report.decode, DecodeKind::Skipped);
        assert_eq!(fed.rounds(), rounds, "no round runs");
        assert_eq!(fed.client_ids(), vec![ClientId(2), ClientId(3)]);
        assert!(fed.server().counts().is_empty() && fed.server().model().is_none());
        assert!(fed.last_messages().is_none());
    }
    // Also when the request completes a pending one: both are covered.
    let mut fed = fed();
    assert!(
        fed.remove(&RemovalRequest::clients(vec![ClientId(0)]))
            .unwrap()
            .outcome
            .is_deferred()
    );
    let report = fed
        .remove(&RemovalRequest::clients(vec![ClientId(1)]))
        .unwrap();
    assert!(report.outcome.is_withdrawn());
    assert_eq!(report.requests, vec![1, 2]);
    assert_eq!(report.removed_clients, vec![ClientId(0), ClientId(1)]);
    assert!(fed.pending().is_empty());
    // Every client leaving at once leaves no aggregate to see: an
    // ordinary request, the model cleared.
    let mut fed = self::fed();
    let report = fed
        .remove(&RemovalRequest::clients(vec![
            ClientId(0),
            ClientId(1),
            ClientId(2),
            ClientId(3),
        ]))
        .unwrap();
    assert_eq!(report.outcome, RemovalOutcome::Applied);
    assert_eq!(report.server, ServerUpdate::Cleared);
    assert!(fed.clients().is_empty());
}

#[test]
fn secagg_dropouts_that_leave_fewer_than_min_clients_fail_and_keep_the_model() {
    // Ten clients on the complete graph (threshold 6); a minimum aggregate
    // of 9: a round in which two clients drop before sending their masked
    // input leaves 8, enough for the protocol but not for the policy.
    let many = Mixture {
        clients: 10,
        per_client: 12,
        ..MIX
    };
    let clients = gaussian_clients("privacy-secagg", many);
    let mut seen = false;
    for seed in 0..60 {
        let config = FederationConfig::new(2)
            .client_k(2)
            .gamma(0.1)
            .channel(Channel::scma(Masks::SecAgg(
                SecAggOptions::new().dropout(0.15).colluding(0.0),
            )))
            .min_clients(9)
            .seed(seed)
            .validate()
            .unwrap();
        let Ok(mut fed) = Federation::new(clients.clone(), &config) else {
            continue;
        };
        let before = fed.to_bytes().unwrap();
        let rounds = fed.rounds();
        let point = |c: usize| vec![fed.clients()[c].data().id(0)];
        let req = RemovalRequest::points(ClientId(0), point(0)).with_points(ClientId(1), point(1));
        match fed.remove(&req) {
            Ok(report) => assert!(report.included.len() >= 9, "seed {seed}"),
            Err(MufcError::TooManyDropouts {
                have,
                need,
                threshold,
                min_clients,
                ..
            }) if have >= threshold => {
                assert_eq!((need, min_clients), (9, 9), "seed {seed}");
                assert!(threshold < 9 && have < 9, "seed {seed}");
                // The model is as it was and the round counter moved on;
                // the request waits, its points erased (a failed round
                // keeps the erasure).
                let restored = Federation::from_bytes(&before).unwrap();
                assert_failed_round_kept_the_model(&fed, &restored, &req);
                assert_eq!(fed.rounds(), rounds + 1);
                seen = true;
            }
            Err(e) => assert!(matches!(e, MufcError::TooManyDropouts { .. }), "{e}"),
        }
        if seen {
            break;
        }
    }
    assert!(seen, "no seed left fewer included clients than the minimum");
}

#[test]
fn the_too_many_dropouts_error_names_the_minimum_and_how_to_lower_it() {
    let err = MufcError::TooManyDropouts {
        round: 3,
        clients: 10,
        dropped: 2,
        step: mufc::SecAggStep::MaskedInput,
        have: 8,
        need: 9,
        threshold: 6,
        min_clients: 9,
    };
    let text = err.to_string();
    assert!(text.contains("8 remained"), "{text}");
    assert!(text.contains("minimum aggregate 9"), "{text}");
    assert!(text.contains("--min-clients"), "{text}");
}

/// After a round that failed: `fed`'s model and reports are `before`'s,
/// and `req` is pending with its points gone from its clients.
pub(crate) fn assert_failed_round_kept_the_model(
    fed: &Federation,
    before: &Federation,
    req: &RemovalRequest,
) {
    assert_eq!(fed.server().counts(), before.server().counts());
    assert_eq!(fed.server().centroids(), before.server().centroids());
    assert_eq!(fed.history(), before.history());
    assert_eq!(fed.pending().last().map(|p| &p.request), Some(req));
    for (c, ids) in req.point_entries() {
        let held = fed.client(*c).unwrap().data().ids();
        assert!(ids.iter().all(|p| !held.contains(p)), "client {c}");
    }
}
