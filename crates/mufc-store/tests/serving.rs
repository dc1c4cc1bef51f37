//! A server's store across processes: a request served by the model's
//! withdrawal is audited once, however often its client asks again (a
//! client that did not hear it was served asks on its next session).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::BTreeSet;

use mufc::remote::InProcess;
use mufc::{ClientId, FederationConfig};
use mufc_store::{IfExists, Store};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

/// The audit rows `(outcome, client, request)` of the store at `path`.
fn audit(path: &std::path::Path) -> Vec<(String, String, i64)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut s = conn
        .prepare("SELECT outcome, client, request FROM audit ORDER BY entry")
        .unwrap();
    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn a_request_served_by_the_withdrawal_is_audited_once() {
    let data = gaussian_clients("store-serving", Mixture::net(3));
    let clients = (0u64..).map(ClientId).zip(data).collect();
    let config = FederationConfig::new(2)
        .seed(5)
        .min_clients(2)
        .validate()
        .unwrap();
    let mut server = InProcess::train(clients, &config).unwrap().server().clone();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("server.db");
    let roster: Vec<String> = (0..3).map(|i| format!("c{i}")).collect();
    let mut store =
        Store::create_serving(&path, server.snapshot().unwrap(), &roster, IfExists::Refuse)
            .unwrap();
    let version = store.model_version();
    let gone = BTreeSet::from([ClientId(1), ClientId(2)]);
    server.withdraw_if_too_few(&gone, 1).unwrap();
    let withdrawn = server.snapshot().unwrap();
    let (c2, c0) = ((ClientId(2), 1), (ClientId(0), 3));
    store.withdraw_serving(withdrawn.clone(), &[c2]).unwrap();
    // Asked again, with another client's request, and again alone.
    store
        .withdraw_serving(withdrawn.clone(), &[c2, c0])
        .unwrap();
    store.withdraw_serving(withdrawn, &[c0]).unwrap();
    let served = |c: &str, r: i64| ("withdrawn".to_string(), c.to_string(), r);
    assert_eq!(audit(&path), [served("c2", 1), served("c0", 3)]);
    assert_eq!(store.model_version(), version + 1);
    drop(store);
    let again = Store::open(&path).unwrap();
    assert!(again.federation().withdrawal().is_some());
}
