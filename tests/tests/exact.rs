//! Exact unlearning at the federation level: after random sequences of
//! removal requests (non-seed points, seeds, whole clients, batches over
//! several clients, every point of a client) the federation equals, bit
//! for bit, a federation trained from scratch on the remaining data with
//! the same (resolved) configuration, in every privacy mode, server-point
//! mode and client training. Removing a whole client is the same as never
//! having had it.
#![allow(clippy::unwrap_used)]

use mufc::{
    Channel, ClientId, ClientTraining, DecodeKind, Federation, FederationConfig, Masks,
    RemovalRequest, RingMasks, Scma, ServerPoints, ServerUpdate,
};
use mufc_testkit::{compare, compare_clients, compare_model, plain_sum, without_request};
use rand::{Rng, RngExt};
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

const MIX: Mixture = Mixture::SIX;

fn clients(label: &str) -> Vec<(ClientId, Dataset)> {
    gaussian_clients(label, MIX)
        .into_iter()
        .enumerate()
        // Ids with gaps, not positions.
        .map(|(i, d)| (ClientId(3 * i as u64 + 1), d))
        .collect()
}

/// The paper's clients (seeding only) with a fixed k and bin centres at
/// the server; the modes below change one thing each.
fn base() -> FederationConfig {
    FederationConfig::paper(3)
        .client_k(2)
        .server_points(ServerPoints::Centers)
        .gamma(0.05)
        .seed(5)
}

/// The library's defaults: full K-means with the adaptive k (about 15
/// clusters a client here, and a client whose size crosses a step of the
/// rule refits), ten server runs.
fn defaults() -> FederationConfig {
    FederationConfig::new(3).gamma(0.05).seed(5)
}

fn modes() -> Vec<(&'static str, FederationConfig)> {
    vec![
        ("defaults", defaults()),
        ("defaults, two client runs", defaults().client_restarts(2)),
        (
            "defaults, minimum cluster size 3",
            defaults().min_cluster_size(3),
        ),
        (
            "plain, defaults, minimum cluster size 2",
            defaults().channel(Channel::Plain).min_cluster_size(2),
        ),
        (
            "scma, centres, seeding, minimum cluster size 3",
            base().min_cluster_size(3),
        ),
        ("scma, centres, seeding", base()),
        (
            "scma, uniform, seeding",
            base().server_points(ServerPoints::Uniform),
        ),
        (
            "scma, centres, full",
            base().client_training(ClientTraining::Full),
        ),
        (
            "scma, uniform, full, restarts",
            base()
                .server_points(ServerPoints::Uniform)
                .client_training(ClientTraining::Full)
                .restarts(2),
        ),
        (
            "scma-wide",
            base().channel(Channel::Scma(Scma::wide(Masks::Dealer))),
        ),
        (
            "scma-integer",
            base().channel(Channel::Scma(Scma::integer(RingMasks::Dealer))),
        ),
        (
            "scma, pairwise",
            base().channel(Channel::scma(Masks::Pairwise)),
        ),
        ("plain, seeding", base().channel(Channel::Plain)),
        (
            "plain, full",
            base()
                .channel(Channel::Plain)
                .client_training(ClientTraining::Full),
        ),
    ]
}

/// A random request against `view`, the clients' data once every request
/// accepted so far is applied (the pending ones included, so that no
/// point is named twice): one of the kinds the issue names. Seeds are
/// those of the federation's clients still in `view`.
fn random_request<R: Rng>(
    fed: &Federation,
    view: &[(ClientId, Dataset)],
    rng: &mut R,
) -> RemovalRequest {
    let ids: Vec<ClientId> = view.iter().map(|(id, _)| *id).collect();
    let pick = |rng: &mut R, n: usize| rng.random_range(0..n);
    let (client, data) = &view[pick(rng, view.len())];
    let client = *client;
    let held = |id: &PointId| data.ids().contains(id);
    let seeds: Vec<PointId> = fed
        .client(client)
        .unwrap()
        .seed_ids()
        .iter()
        .copied()
        .filter(held)
        .collect();
    let non_seeds: Vec<PointId> = data
        .ids()
        .iter()
        .copied()
        .filter(|id| !seeds.contains(id))
        .collect();
    // Whole clients leave only while the minimum aggregate
    // (docs/threat-model.md P4) stays met.
    let spare = ids.len() > fed.config().min_clients();
    match rng.next_u64() % 6 {
        // A point that is not a seed.
        0 | 1 if !non_seeds.is_empty() => {
            RemovalRequest::points(client, vec![non_seeds[pick(rng, non_seeds.len())]])
        }
        // A seed.
        2 if !seeds.is_empty() => {
            RemovalRequest::points(client, vec![seeds[pick(rng, seeds.len())]])
        }
        // A whole client.
        3 if spare => RemovalRequest::clients(vec![client]),
        // A batch: a few points of a few clients.
        4 => {
            let mut req = RemovalRequest::new();
            for (i, (other, d)) in view.iter().enumerate() {
                if i % 2 == rng.random_range(0..2usize) && d.len() > 3 {
                    let k = 1 + pick(rng, 3);
                    let start = pick(rng, d.len() - k + 1);
                    req = req.with_points(*other, d.ids()[start..start + k].to_vec());
                }
            }
            if req.is_empty() {
                RemovalRequest::points(client, vec![data.id(0)])
            } else {
                req
            }
        }
        // Every point of a client, by ids: the client leaves.
        5 if spare => RemovalRequest::points(client, data.ids().to_vec()),
        _ => RemovalRequest::points(client, vec![data.id(pick(rng, data.len()))]),
    }
}

/// Applies `req` to the ground truth.
fn apply(truth: &mut Vec<(ClientId, Dataset)>, req: &RemovalRequest) {
    *truth = without_request(truth, req);
}

#[test]
fn random_removal_sequences_equal_retraining_bit_for_bit_in_every_mode() {
    // Every request served at once (a policy of 1), and the default
    // policy, under which a request that changes one client alone waits
    // for another (docs/threat-model.md U3): after every request the
    // clients equal retraining without every point named so far (a
    // request erases at once), and the model equals retraining without
    // the points of the requests applied so far, bit for bit.
    for min_updating in [1, mufc::DEFAULT_MIN_UPDATING_CLIENTS] {
        let mut all_deferred = 0;
        for (what, config) in modes() {
            let what = format!("{what}, min updating {min_updating}");
            for seq in 0..5u64 {
                let mut truth = clients(&format!("exact-{seq}"));
                let config = config
                    .clone()
                    .seed(seq)
                    .min_updating_clients(min_updating)
                    .validate()
                    .unwrap();
                let mut fed = Federation::with_ids(truth.clone(), &config).unwrap();
                let mut view = truth.clone();
                let mut rng = testdata::rng(&format!("exact-requests-{what}-{seq}"));
                let mut deferred = 0;
                for step in 0..8 {
                    let req = random_request(&fed, &view, &mut rng);
                    let report = fed.remove(&req).unwrap();
                    apply(&mut view, &req);
                    if report.outcome.is_deferred() {
                        deferred += 1;
                        assert_eq!(report.removed_points, 0, "{what}");
                        assert!(!fed.pending().is_empty(), "{what}");
                    } else {
                        assert!(fed.pending().is_empty(), "{what}");
                        truth.clone_from(&view);
                        // Every round changes counts, and no server update
                        // is a refit from scratch while the server had
                        // points.
                        assert!(!report.updated_clients.is_empty(), "{what}");
                        // The policy holds but in the plain mode, where
                        // nothing waits.
                        assert!(
                            report.updated_clients.len() >= min_updating
                                || config.channel() == &Channel::Plain,
                            "{what}"
                        );
                        assert!(
                            matches!(report.server, ServerUpdate::Incremental(_)),
                            "{what}: {:?}",
                            report.server
                        );
                    }
                    let retrained = Federation::with_ids(truth.clone(), fed.config()).unwrap();
                    let erased = Federation::with_ids(view.clone(), fed.config()).unwrap();
                    let checked = if fed.pending().is_empty() {
                        compare(&fed, &retrained)
                    } else {
                        compare_clients(&fed, &erased)
                            .and_then(|()| compare_model(&fed, &retrained))
                    };
                    if let Err(e) = checked {
                        panic!("{what}, sequence {seq}, step {step} ({req:?}): {e}");
                    }
                    if config.channel() != &Channel::Plain && fed.pending().is_empty() {
                        assert_eq!(fed.server().counts(), &plain_sum(&fed), "{what}");
                    }
                    // A client too small for the minimum cluster size
                    // sends nothing.
                    let min_size = config.client().min_cluster_size();
                    let points: usize = truth
                        .iter()
                        .map(|(_, d)| d.len())
                        .filter(|&n| n as u64 >= min_size)
                        .sum();
                    let held: usize = view.iter().map(|(_, d)| d.len()).sum();
                    assert_eq!(fed.num_points(), held);
                    assert_eq!(fed.server().total_count(), points as u64, "{what}");
                }
                // Nothing waits in the plain mode (the server sees every
                // client's centroids anyway).
                if min_updating == 1 || config.channel() == &Channel::Plain {
                    assert_eq!(deferred, 0, "{what}");
                }
                all_deferred += deferred;
            }
        }
        // The default policy deferred some requests (not vacuous).
        assert_eq!(all_deferred > 0, min_updating > 1, "{all_deferred}");
    }
}

#[test]
fn removing_a_whole_client_is_never_having_had_it() {
    for (what, config) in modes() {
        let all = clients("never-had-it");
        let config = config.validate().unwrap();
        let mut fed = Federation::with_ids(all.clone(), &config).unwrap();
        let gone = all[2].0;
        // One client alone changes: the request waits (docs/threat-model.md
        // U3) until it is flushed; in the plain mode nothing waits.
        let mut report = fed.remove(&RemovalRequest::clients(vec![gone])).unwrap();
        let plain = config.channel() == &Channel::Plain;
        assert_eq!(report.outcome.is_deferred(), !plain, "{what}");
        if !plain {
            assert!(fed.client(gone).is_none(), "{what}: erased at once");
            report = fed.flush().unwrap().unwrap();
        }
        assert_eq!(report.privacy_warning.is_some(), !plain, "{what}");
        assert_eq!(report.removed_clients, vec![gone]);
        assert_eq!(report.removed_points, MIX.per_client);
        assert!(fed.client(gone).is_none());
        let without: Vec<_> = all.into_iter().filter(|(id, _)| *id != gone).collect();
        let never = Federation::with_ids(without, fed.config()).unwrap();
        compare(&fed, &never).unwrap_or_else(|e| panic!("{what}: {e}"));
    }
}

#[test]
fn a_seed_removal_reseeds_only_that_client_and_equals_retraining() {
    let mut truth = clients("seed-removal");
    // Lone updates served at once, and flagged (docs/threat-model.md U3).
    let config = base().min_updating_clients(1).validate().unwrap();
    let mut fed = Federation::with_ids(truth.clone(), &config).unwrap();
    let (client, seed) = {
        let c = &fed.clients()[1];
        (c.id(), c.seed_ids()[0])
    };
    let before = fed.clone();
    let report = fed
        .remove(&RemovalRequest::points(client, vec![seed]))
        .unwrap();
    assert_eq!(report.reseeded, vec![client]);
    assert_eq!(report.updated_clients, vec![client]);
    assert!(report.lone_update);
    let warning = report.privacy_warning.as_deref().unwrap();
    assert!(warning.contains(&format!("client {client}")), "{warning}");
    // A reseeding client moves at most 2k bins.
    match report.decode {
        DecodeKind::Delta { nonzeros } => assert!((1..=4).contains(&nonzeros)),
        other => panic!("{other:?}"),
    }
    for (a, b) in fed.clients().iter().zip(before.clients()) {
        if a.id() != client {
            assert_eq!(a.histogram(), b.histogram());
            assert_eq!(a.seed_ids(), b.seed_ids());
        }
    }
    apply(&mut truth, &RemovalRequest::points(client, vec![seed]));
    compare(&fed, &Federation::with_ids(truth, fed.config()).unwrap()).unwrap();
}

#[test]
fn the_comparison_catches_a_different_federation() {
    // Negative controls: the bit-for-bit comparison is not vacuous.
    let truth = clients("negative");
    let config = base().min_updating_clients(1).validate().unwrap();
    let fed = Federation::with_ids(truth.clone(), &config).unwrap();
    let other_seed = Federation::with_ids(
        truth,
        &fed.config()
            .clone()
            .into_builder()
            .seed(6)
            .validate()
            .unwrap(),
    )
    .unwrap();
    assert!(compare(&fed, &other_seed).is_err());
    let mut smaller = fed.clone();
    let c = smaller.clients()[0].id();
    let id = smaller.clients()[0].data().id(0);
    smaller
        .remove(&RemovalRequest::points(c, vec![id]))
        .unwrap();
    assert!(compare(&fed, &smaller).is_err());
    // The paper's Algorithm 4 as written keeps a client's counts when it
    // does not reseed: the server would still count the removed point,
    // which retraining never does. Find a non-seed point: the exact
    // federation's total drops by one, the stale one's would not.
    let c0 = &fed.clients()[0];
    let victim = c0
        .data()
        .ids()
        .iter()
        .copied()
        .find(|id| !c0.seed_ids().contains(id))
        .unwrap();
    let mut exact = fed.clone();
    let report = exact
        .remove(&RemovalRequest::points(c0.id(), vec![victim]))
        .unwrap();
    assert!(report.reseeded.is_empty());
    assert_eq!(exact.server().total_count(), fed.server().total_count() - 1);
}

#[test]
fn a_batch_that_reseeds_every_client_falls_back_to_decoding_the_whole_sum() {
    // Every client loses its first seed: each reseeds from round 0 and
    // moves up to 2k bins, more than the capacity t = k L in all; the
    // difference is refused by the decoder and the whole sum is decoded.
    let mut truth = clients("fallback");
    let config = base().gamma(0.01).validate().unwrap();
    let mut fed = Federation::with_ids(truth.clone(), &config).unwrap();
    let mut req = RemovalRequest::new();
    for c in fed.clients() {
        req = req.with_points(c.id(), vec![c.seed_ids()[0]]);
    }
    let report = fed.remove(&req).unwrap();
    assert_eq!(report.reseeded.len(), MIX.clients);
    assert!(
        matches!(report.decode, DecodeKind::Full { .. }),
        "{:?}",
        report.decode
    );
    apply(&mut truth, &req);
    compare(&fed, &Federation::with_ids(truth, fed.config()).unwrap()).unwrap();
    assert_eq!(fed.server().counts(), &plain_sum(&fed));
}
