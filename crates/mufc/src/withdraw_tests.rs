//! A request below the policy's minimum aggregate (docs/threat-model.md
//! P4) erases its points at once and withdraws the model (issue 25): on
//! random sequences of requests under random policies, the points named
//! are always gone from the clients, a federation left below the minimum
//! serves no model, its clients equal their fit from scratch, one that is
//! not equals retraining, and both survive saving and loading bit for bit.
#![allow(clippy::unwrap_used)]

use nalgebra::DMatrix;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use seeding::{Dataset, PointId};

use crate::{
    Client, ClientId, Federation, FederationConfig, Layout, RemovalOutcome, RemovalRequest,
};

fn data(clients: usize, rng: &mut StdRng) -> Vec<(ClientId, Dataset)> {
    (0..clients)
        .map(|l| {
            let n = rng.random_range(6..16);
            let centre = rng.random_range(-0.3..0.3);
            let m = DMatrix::from_fn(2, n, |_, _| centre + rng.random_range(-0.1..0.1));
            (ClientId(l as u64), Dataset::new(m).unwrap())
        })
        .collect()
}

fn same_client(a: &Client, b: &Client) -> bool {
    let bits = |c: &Client| {
        c.centroids()
            .iter()
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    };
    a.id() == b.id()
        && a.data().ids() == b.data().ids()
        && a.seed_ids() == b.seed_ids()
        && a.sizes() == b.sizes()
        && bits(a) == bits(b)
        && a.histogram() == b.histogram()
}

/// The federation against training from scratch on what it holds, and
/// against itself saved and loaded (the file and the store's snapshot).
fn check(fed: &Federation, context: &str) {
    let data: Vec<(ClientId, Dataset)> = fed
        .clients()
        .iter()
        .map(|c| (c.id(), c.data().clone()))
        .collect();
    if fed.withdrawal().is_some() {
        assert!(
            fed.server().model().is_none(),
            "{context}: a withdrawn model"
        );
        assert!(fed.server().counts().is_empty(), "{context}: counts kept");
        assert!(fed.pending().is_empty(), "{context}: pending requests kept");
        let fitted = Federation::fit_clients(data, fed.config()).unwrap();
        assert_eq!(fitted.len(), fed.clients().len(), "{context}");
        for (a, b) in fitted.iter().zip(fed.clients()) {
            assert!(same_client(a, b), "{context}: client {} differs", a.id());
        }
    } else if fed.pending().is_empty() && !data.is_empty() && fed.layout().is_none() {
        let r = Federation::with_ids(data, fed.config()).unwrap();
        assert_eq!(r.server().counts(), fed.server().counts(), "{context}");
        assert_eq!(
            r.server().centroids(),
            fed.server().centroids(),
            "{context}"
        );
        for (a, b) in r.clients().iter().zip(fed.clients()) {
            assert!(same_client(a, b), "{context}: client {} differs", a.id());
        }
    }
    let bytes = fed.to_bytes().unwrap();
    let loaded = Federation::from_bytes(&bytes).unwrap();
    assert_eq!(loaded.to_bytes().unwrap(), bytes, "{context}: file");
    assert_eq!(loaded.withdrawal(), fed.withdrawal(), "{context}");
    let snapshot = fed
        .clients()
        .iter()
        .map(|c| (c.id(), c.data().clone(), c.seed_ids().to_vec()))
        .collect();
    let stored = Federation::from_snapshot(fed.server_snapshot(), snapshot).unwrap();
    // A snapshot keeps the last report only: the rest is compared.
    let server = |f: &Federation| postcard::to_allocvec(&f.server_snapshot()).unwrap();
    assert_eq!(server(&stored), server(fed), "{context}: snapshot");
    assert_eq!(stored.withdrawal(), fed.withdrawal(), "{context}: snapshot");
    for (a, b) in stored.clients().iter().zip(fed.clients()) {
        assert!(same_client(a, b), "{context}: snapshot, client {}", a.id());
    }
}

/// A random request on `fed`: points of one or two clients (all of a
/// client's, sometimes), or whole clients.
fn request(fed: &Federation, rng: &mut StdRng) -> RemovalRequest {
    let ids = fed.client_ids();
    if rng.random_bool(0.3) {
        let c = ids[rng.random_range(0..ids.len())];
        return RemovalRequest::clients(vec![c]);
    }
    let mut r = RemovalRequest::new();
    let mut named = Vec::new();
    for _ in 0..rng.random_range(1..=2usize) {
        let c = ids[rng.random_range(0..ids.len())];
        if named.contains(&c) {
            continue;
        }
        named.push(c);
        let held: Vec<PointId> = fed.client(c).unwrap().data().ids().to_vec();
        let take = if rng.random_bool(0.2) {
            held.len()
        } else {
            rng.random_range(1..=2usize.min(held.len()))
        };
        r = r.with_points(c, held[..take].to_vec());
    }
    r
}

#[test]
fn random_requests_under_random_policies_erase_at_once_and_withdraw_below_the_minimum() {
    let mut withdrawn = 0;
    for case in 0..24u64 {
        let mut rng = StdRng::seed_from_u64(case);
        let l = rng.random_range(3..6usize);
        let min_clients = rng.random_range(2..=l);
        let config = FederationConfig::new(2)
            .gamma(0.1)
            .seed(case)
            .min_clients(min_clients)
            .min_updating_clients(rng.random_range(1..=2))
            .validate()
            .unwrap();
        let mut fed = Federation::with_ids(data(l, &mut rng), &config).unwrap();
        for step in 0..8 {
            let context = format!("case {case} (L = {l}, min {min_clients}) step {step}");
            if fed.clients().is_empty() {
                break;
            }
            if rng.random_bool(0.15) {
                fed.flush().unwrap();
                check(&fed, &context);
                continue;
            }
            let r = request(&fed, &mut rng);
            let was = fed.withdrawal().cloned();
            let report = fed.remove(&r).unwrap();
            // Erased at once, whatever the outcome.
            for (c, ids) in r.point_entries() {
                if let Some(client) = fed.client(*c) {
                    assert!(ids.iter().all(|p| !client.data().contains(*p)), "{context}");
                }
            }
            for c in r.clients_removed() {
                assert!(fed.client(*c).is_none(), "{context}");
            }
            let left = fed.clients().len();
            match (&was, &report.outcome) {
                (Some(w), RemovalOutcome::Withdrawn(v)) => assert_eq!(w, v, "{context}"),
                (Some(_), o) => panic!("{context}: a withdrawn federation answered {o:?}"),
                (None, RemovalOutcome::Withdrawn(w)) => {
                    withdrawn += 1;
                    assert_eq!(w.request, report.request, "{context}");
                    assert_eq!((w.clients, w.min_clients), (left, min_clients), "{context}");
                    assert!(left > 0 && left < min_clients, "{context}");
                }
                (None, _) => assert!(left == 0 || left >= min_clients, "{context}"),
            }
            check(&fed, &context);
        }
    }
    // The draw reaches the case it tests.
    assert!(withdrawn >= 5, "only {withdrawn} withdrawals drawn");
}

#[test]
fn groups_below_the_minimum_that_none_can_take_withdraw_the_model() {
    let mut rng = StdRng::seed_from_u64(7);
    let clients = data(6, &mut rng);
    let config = FederationConfig::new(2).gamma(0.1).validate().unwrap();
    let layout = Layout::from_groups(
        vec![
            (0..3).map(ClientId).collect(),
            (3..6).map(ClientId).collect(),
        ],
        None,
    )
    .unwrap();
    let mut fed = Federation::with_layout(clients, &config, layout).unwrap();
    // A lone request of group 0 waits; the withdrawal covers it too.
    let first = fed
        .remove(&RemovalRequest::points(ClientId(1), vec![PointId(2)]))
        .unwrap();
    assert!(first.outcome.is_deferred());
    // One client of each group leaves: each group would hold two, and
    // neither can take the other's (a group of one below the minimum
    // merges into one that meets it, `tests/tests/groups.rs`).
    let report = fed
        .remove(&RemovalRequest::clients(vec![ClientId(2), ClientId(4)]))
        .unwrap();
    assert_eq!(report.requests, vec![1, 2]);
    let w = fed.withdrawal().unwrap().clone();
    assert_eq!(report.outcome, RemovalOutcome::Withdrawn(w.clone()));
    assert_eq!((w.group, w.clients, w.min_clients), (Some(0), 2, 3));
    assert!(fed.layout().is_none());
    assert_eq!(
        fed.num_points(),
        fed.clients().iter().map(|c| c.data().len()).sum::<usize>()
    );
    check(&fed, "groups");
    // Later requests: erased, no round, the same withdrawal.
    let r = fed
        .remove(&RemovalRequest::points(ClientId(0), vec![PointId(0)]))
        .unwrap();
    assert_eq!(r.outcome, RemovalOutcome::Withdrawn(w));
    assert_eq!(r.requests, vec![3]);
    assert!(fed.flush().unwrap().is_none());
    check(&fed, "groups, after");
}
