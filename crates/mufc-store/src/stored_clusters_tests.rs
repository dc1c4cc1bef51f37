//! A client row keeps the clusters the client sends (schema 6), so that
//! opening fits no client. These tests change the rows as an old version
//! or damage would: a store of schema 5 (rows without clusters) opens and
//! is upgraded by its first request; clusters that do not fit their
//! points are refused on opening; clusters that fit but that a fit does
//! not give are found by `verify` and by the first request on the client.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::{Path, PathBuf};

use rusqlite::{Connection, params};
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};
use serde::{Deserialize, Serialize};

use crate::rows::checksum;
use crate::{ClientRecords, FitOptions, RecordId, Store, StoreError, VerifyOutcome};

/// `mufc::StoredClusters`, field by field (postcard writes fields in order).
#[derive(Serialize, Deserialize)]
struct Clusters {
    centroids: Vec<f64>,
    sizes: Vec<u64>,
    labels: Vec<u32>,
}

type Row = (Dataset, Vec<PointId>, Clusters);

fn fitted(dir: &Path) -> PathBuf {
    let path = dir.join("model.mufc");
    let config = mufc::FederationConfig::new(3)
        .gamma(0.1)
        .seed(4)
        .validate()
        .unwrap();
    let data = gaussian_clients("stored-clusters", Mixture::SMALL);
    Store::fit(
        &path,
        ClientRecords::numbered(data),
        &config,
        &FitOptions::new(),
    )
    .unwrap();
    path
}

/// Rewrites every client row of the store at `path` with `change`, under
/// a valid checksum (as a bug or an older version would write it).
fn rewrite(path: &Path, mut change: impl FnMut(i64, Row) -> Vec<u8>) {
    let conn = Connection::open(path).unwrap();
    let rows: Vec<(i64, Vec<u8>)> = conn
        .prepare("SELECT id, state FROM clients ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for (id, blob) in rows {
        let row: Row = postcard::from_bytes(&blob).unwrap();
        let new = change(id, row);
        conn.execute(
            "UPDATE clients SET state = ?1, sha256 = ?2 WHERE id = ?3",
            params![new, checksum("clients", id, &new).as_slice(), id],
        )
        .unwrap();
    }
}

fn user_version(path: &Path) -> i64 {
    Connection::open(path)
        .unwrap()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap()
}

/// The store at `path`, of an older schema, serves the centroids it
/// `served`, equals retraining, and its first request upgrades it.
fn opens_and_is_upgraded(path: &Path, served: &[crate::Centroid]) {
    let mut store = Store::open(path).unwrap();
    assert_eq!(store.centroids(), served, "the clients fitted on opening");
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Equal);
    store
        .forget(&[RecordId::from(31), RecordId::from(62)])
        .unwrap();
    drop(store);
    assert_eq!(user_version(path), crate::schema::SCHEMA_VERSION);
    let store = Store::open(path).unwrap();
    assert_eq!(store.verify().unwrap().outcome(), VerifyOutcome::Equal);
}

#[test]
fn a_store_of_schema_5_opens_and_its_first_request_upgrades_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = fitted(dir.path());
    let served = Store::open(&path).unwrap().centroids();
    rewrite(&path, |_, (data, seeds, _)| {
        postcard::to_allocvec(&(data, seeds)).unwrap()
    });
    Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 5)
        .unwrap();

    opens_and_is_upgraded(&path, &served);
}

#[test]
fn a_store_of_schema_6_opens_and_its_first_request_upgrades_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = fitted(dir.path());
    let served = Store::open(&path).unwrap().centroids();
    // Schema 6's server row ends before the withdrawal (`None`: one zero
    // byte), the pending additions (none: one zero byte) and the records'
    // digest (32 bytes) that end schema 8's.
    rewrite_server(&path, 6, |row| {
        row.truncate(row.len() - 32);
        assert_eq!(row.pop(), Some(0));
        assert_eq!(row.pop(), Some(0));
    });
    opens_and_is_upgraded(&path, &served);
}

#[test]
fn a_store_of_schema_7_opens_and_its_first_request_upgrades_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = fitted(dir.path());
    let served = Store::open(&path).unwrap().centroids();
    // Schema 7's audit has no `added` column (opening adds it: the
    // request below writes an audit row), and its state ends before the
    // pending additions (none: one zero byte), then comes the records'
    // digest.
    Connection::open(&path)
        .unwrap()
        .execute_batch("ALTER TABLE audit DROP COLUMN added")
        .unwrap();
    rewrite_server(&path, 7, |row| {
        let digest = row.split_off(row.len() - 32);
        assert_eq!(row.pop(), Some(0));
        row.extend_from_slice(&digest);
    });
    opens_and_is_upgraded(&path, &served);
}

/// Rewrites the server row of the store at `path` with `change`, as a
/// store of schema `version` wrote it.
fn rewrite_server(path: &Path, version: i64, change: impl FnOnce(&mut Vec<u8>)) {
    let conn = Connection::open(path).unwrap();
    let mut row: Vec<u8> = conn
        .query_row("SELECT state FROM server WHERE id = 1", [], |r| r.get(0))
        .unwrap();
    change(&mut row);
    conn.execute(
        "UPDATE server SET state = ?1, sha256 = ?2 WHERE id = 1",
        params![row, checksum("server", 1, &row).as_slice()],
    )
    .unwrap();
    conn.pragma_update(None, "user_version", version).unwrap();
}

#[test]
fn clusters_that_do_not_fit_their_points_are_refused() {
    // Each way the parts can disagree, in one client's row.
    type Damage = fn(&mut Clusters);
    let damages: [(&str, Damage); 4] = [
        ("a label naming no cluster", |c| c.labels[0] = 1000),
        ("a label moved", |c| {
            let l = c.labels[0];
            c.labels[0] = if l == 0 { 1 } else { 0 };
        }),
        ("a centre's coordinate missing", |c| {
            c.centroids.pop();
        }),
        ("a centre not finite", |c| c.centroids[0] = f64::NAN),
    ];
    for (what, damage) in damages {
        let dir = tempfile::tempdir().unwrap();
        let path = fitted(dir.path());
        rewrite(&path, |id, (data, seeds, mut clusters)| {
            if id == 1 {
                damage(&mut clusters);
            }
            postcard::to_allocvec(&(data, seeds, clusters)).unwrap()
        });
        let err = Store::open(&path).err().unwrap();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{what}: {err}");
        assert!(err.to_string().contains("client 1"), "{what}: {err}");
    }
}

#[test]
fn clusters_a_fit_does_not_give_are_found_by_verify_and_by_a_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = fitted(dir.path());
    // Client 2's first centre moved by a little: the parts still agree.
    rewrite(&path, |id, (data, seeds, mut clusters)| {
        if id == 2 {
            clusters.centroids[0] += 1e-9;
        }
        postcard::to_allocvec(&(data, seeds, clusters)).unwrap()
    });
    let mut store = Store::open(&path).unwrap();
    let v = store.verify().unwrap();
    assert_eq!(v.outcome(), VerifyOutcome::Differs, "{:?}", v.differences);

    // Record 60 is client 2's: the request fits the client and refuses.
    let before = std::fs::read(&path).unwrap();
    let err = store.forget(&[RecordId::from(60)]).err().unwrap();
    assert!(
        err.to_string()
            .contains("does not reproduce its stored seeds and clusters"),
        "{err}"
    );
    drop(store);
    assert_eq!(std::fs::read(&path).unwrap(), before, "nothing written");
    // Another client's request is served.
    let mut store = Store::open(&path).unwrap();
    store
        .forget(&[RecordId::from(1), RecordId::from(31)])
        .unwrap();
}
