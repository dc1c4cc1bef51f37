//! A group grown full by joins splits across processes (issue 29): the
//! server keeps the new groups in its store, then runs both halves' whole
//! rounds as one batch and stores them in one commit. Here the new
//! half's round fails (its newest site is killed before its masked
//! input; pairwise masks need every member): the half decoded first is
//! not stored either, so the model the store serves stays the one before
//! the split (with the first half alone, the clients that moved would be
//! in no sum). The site back, both rounds run, and the model equals the
//! in-process fit in the three groups, bit for bit.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::cli_net_joins::join_roster;
use crate::common::net;

use mufc::ClientId;
use net::{Proc, Processes, assert_model_in_groups};

const NINE: [&str; 9] = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];

/// Groups of two, both of which must remain, pairwise masks; a group of
/// four is full, and splits where no sum of fewer than two shows.
const PAIRS: [&str; 15] = [
    "--k",
    "3",
    "--seed",
    "13",
    "--min-clients",
    "2",
    "--topology",
    "groups",
    "--group-size",
    "2",
    "--masking",
    "pairwise",
    "--max-points",
    "4000",
    "--admit-new-clients",
];

/// Whether a server line says a round committed that included `id`.
fn committed_with(line: &str, id: u64) -> bool {
    let included = line.split("included ").nth(1).unwrap_or_default();
    let list = included.split(' ').next().unwrap_or_default();
    line.contains(" committed")
        && list
            .trim_end_matches(',')
            .split(',')
            .any(|c| c == id.to_string())
}

#[test]
fn a_split_whose_new_half_fails_stores_neither_half_and_runs_both_later() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let all = net::written_data(dir, "cli-net-splits", &NINE);
    let fed = Processes::start(dir, &NINE[..4], &NINE[..4], &PAIRS, |_| None);
    for g in [0, 1] {
        fed.server
            .wait_for(|l| l.starts_with(&format!("round 0 of group {g} committed (training)")));
    }
    // e, f, g and h join, in turn, the group with the fewest sites.
    let mut sites = Vec::new();
    for (id, name) in (4u64..).zip(&NINE[4..8]) {
        join_roster(&fed.certs, name);
        let args = net::client_args(fed.port, &fed.certs, name);
        sites.push(Proc::start(name, dir, &args, &[]));
        fed.server.wait_for(|l| committed_with(l, id));
    }
    let mut present: Vec<(ClientId, _)> = (0u64..).map(ClientId).zip(all[..8].to_vec()).collect();
    assert_model_in_groups(dir, present.clone());
    let before = mufc_store::Store::open(dir.join("server.db")).unwrap();
    let (counts, centroids) = {
        let server = before.federation().server();
        (
            server.counts().clone(),
            server.centroids().map(|m| m.clone_owned()),
        )
    };
    drop(before);

    // i joins the first group, which splits: e, g (in its sum) and i move.
    // i dies before its masked input in the new group's first round.
    join_roster(&fed.certs, "i");
    let args = net::client_args(fed.port, &fed.certs, "i");
    let fault = [(mufc_net::fault::FAULT_ENV, "0:masked-input")];
    let mut dying = Proc::start("i", dir, &args, &fault);
    fed.server.wait_for(|l| l.contains("group 0 grew full"));
    // Both halves fail: the first, decoded, with the second.
    fed.server.wait_for(|l| l.contains("of group 2 failed: "));
    let first = fed.server.wait_for(|l| l.contains("of group 0 failed: "));
    assert!(first.contains("the split's round 0 failed"), "{first}");
    assert!(dying.exits_within(net::LIMIT), "{:?}", dying.log());
    // Nothing of the batch is stored: the model is the one before.
    let kept = mufc_store::Store::open(dir.join("server.db")).unwrap();
    let layout = kept.federation().layout().unwrap().groups().to_vec();
    assert_eq!(layout[2], [4, 6, 8].map(ClientId));
    let server = kept.federation().server();
    assert_eq!(server.counts(), &counts);
    assert_eq!(server.centroids().map(|m| m.clone_owned()), centroids);
    drop(kept);
    assert!(
        !fed.server.log().iter().any(|l| committed_with(l, 8)),
        "{:?}",
        fed.server.log()
    );

    // i back: both halves run, stored together, exact.
    let i = Proc::start("i", dir, &args, &[]);
    fed.server.wait_for(|l| committed_with(l, 8));
    present.push((ClientId(8), all[8].clone()));
    assert_model_in_groups(dir, present);
    drop((sites, i));
}
