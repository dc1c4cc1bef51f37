//! A client that joins a trained federation, across processes (issue 29):
//! the authority issues its certificate and appends it to the federation
//! file (`mufc certs --join`); the server, started with
//! `--admit-new-clients`, admits it; the running members, whose federation
//! file does not name it, check its certificate and take the setup that
//! admits it; the model is then the in-process `Federation`'s on every
//! client's records, bit for bit. A member restarted afterwards, and a
//! removal at the new client, keep it so.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::process::Command;

use mufc::ClientId;
use net::{Proc, Processes, assert_model, assert_model_in_groups, assert_model_of};

const SITES: [&str; 4] = ["a", "b", "c", "d"];

/// Six sites in groups of three, of which two must remain; a seventh
/// joins.
const SIX: [&str; 6] = ["a", "b", "c", "d", "e", "f"];
const SEVEN: [&str; 7] = ["a", "b", "c", "d", "e", "f", "g"];
const GROUPS: [&str; 10] = [
    "--k",
    "3",
    "--seed",
    "13",
    "--min-clients",
    "2",
    "--topology",
    "groups",
    "--group-size",
    "3",
];

#[test]
fn a_site_joins_a_trained_federation_and_the_model_stays_exact() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let all = net::written_data(dir, "cli-net-joins", &["a", "b", "c", "d", "e"]);
    let extra = [
        "--k",
        "3",
        "--seed",
        "13",
        "--max-points",
        "400",
        "--admit-new-clients",
    ];
    let mut fed = Processes::start(dir, &SITES, &SITES, &extra, |_| None);
    fed.server.wait_for(|l| l.contains("committed (training)"));
    assert_model(dir, all[..4].to_vec());

    join_roster(&fed.certs, "e");
    let e = Proc::start("e", dir, &net::client_args(fed.port, &fed.certs, "e"), &[]);
    fed.server.wait_for(|l| l.contains("client 4 (e) admitted"));
    fed.server
        .wait_for(|l| l.contains(" committed") && l.contains("included 0,1,2,3,4"));
    assert_model(dir, all.clone());
    assert!(
        fed.clients[0]
            .log()
            .iter()
            .any(|l| l.contains("client(s) 4 joined the federation")),
        "{:?}",
        fed.clients[0].log()
    );

    // A member restarted from its store, then a removal at the new site.
    fed.clients[0].kill();
    let a = Proc::start("a", dir, &net::client_args(fed.port, &fed.certs, "a"), &[]);
    a.wait_for(|l| l.contains("connected as client 0"));
    net::forget(dir, "e", "3");
    let mut rest = all;
    rest[4] = rest[4].without(&[seeding::PointId(3)]).unwrap();
    assert_model(dir, rest.clone());
    net::forget(dir, "a", "5");
    rest[0] = rest[0].without(&[seeding::PointId(5)]).unwrap();
    assert_model(dir, rest.clone());

    // Site b leaves: its whole removal, then its signed leave; the server
    // keeps it and the members run their rings without b.
    leave_b(dir, &mut fed);
    // The others keep their ids (a client's training depends on it).
    let mut remaining: Vec<(ClientId, _)> = (0u64..).map(ClientId).zip(rest).collect();
    remaining.remove(1);
    assert_model_of(dir, remaining.clone());
    net::forget(dir, "c", "2");
    remaining[1].1 = remaining[1].1.without(&[seeding::PointId(2)]).unwrap();
    assert_model_of(dir, remaining);
    drop((a, e));
}

/// The same in groups of three: site b leaves its group, and site g,
/// admitted later, joins the group with the fewest sites left (where the
/// topology would not put it). Every
/// client holds the federation file's agreement: the members take the
/// setup that admits g as theirs with g admitted, and g, which has no
/// history, checks the groups by the topology with g anywhere. The
/// model equals the in-process federation's in the groups the server
/// holds, bit for bit.
#[test]
fn in_groups_a_site_leaves_another_joins_and_the_model_stays_exact() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let all = net::written_data(dir, "cli-net-joins-groups", &SEVEN);
    let extra = [
        GROUPS.as_slice(),
        &["--max-points", "2000", "--admit-new-clients"],
    ]
    .concat();
    let mut fed = Processes::start(dir, &SIX, &SIX, &extra, |_| None);
    for g in [0, 1] {
        fed.server
            .wait_for(|l| l.starts_with(&format!("round 0 of group {g} committed (training)")));
    }
    let mut present: Vec<(ClientId, _)> = (0u64..).map(ClientId).zip(all[..6].to_vec()).collect();
    assert_model_in_groups(dir, present.clone());

    leave(dir, &mut fed, 1, "b");
    present.remove(1);
    assert_model_in_groups(dir, present.clone());

    join_roster(&fed.certs, "g");
    let g = Proc::start("g", dir, &net::client_args(fed.port, &fed.certs, "g"), &[]);
    fed.server.wait_for(|l| l.contains("client 6 (g) admitted"));
    fed.server
        .wait_for(|l| l.contains(" committed") && l.contains("included 0,2,6"));
    present.push((ClientId(6), all[6].clone()));
    assert_model_in_groups(dir, present.clone());
    let store = mufc_store::Store::open(dir.join("server.db")).unwrap();
    let groups = store.federation().layout().unwrap().groups().to_vec();
    assert_eq!(groups[0], [0, 1, 2, 6].map(ClientId));
    assert_eq!(groups[1], [3, 4, 5].map(ClientId));

    // The server restarts (its federation file's agreement names six
    // sites: the seventh, admitted since, sits in any group); the new
    // site forgets a point: a round of its group, with a and c.
    fed.server.kill();
    let args = net::server_args(fed.port, &fed.certs, &SEVEN, &extra);
    let server = Proc::start("restarted server", dir, &args, &[]);
    server.wait_for(|l| l.starts_with("resumed from the store"));
    net::forget(dir, "g", "3");
    present[5].1 = present[5].1.without(&[seeding::PointId(3)]).unwrap();
    assert_model_in_groups(dir, present);
    drop(g);
}

/// A group that leaves take below the minimum aggregate merges across
/// processes: sites b and c leave the group of a, b and c (minimum two),
/// and a moves to the other group, whose whole round serves c's leave as
/// the first group is emptied. Every client holds the federation file's
/// agreement: the sites take the merged groups as theirs with one
/// group's clients moved. The model equals the in-process fit in the
/// groups the server holds, bit for bit, and a later removal at a keeps
/// it so.
#[test]
fn in_groups_a_group_left_below_the_minimum_merges_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let all = net::written_data(dir, "cli-net-merges", &SEVEN);
    let mut fed = Processes::start(dir, &SIX, &SIX, &GROUPS, |_| None);
    fed.server
        .wait_for(|l| l.starts_with("model trained after"));
    let mut present: Vec<(ClientId, _)> = (0u64..).map(ClientId).zip(all.clone()).collect();
    present.truncate(6);
    leave(dir, &mut fed, 1, "b");
    leave(dir, &mut fed, 2, "c");
    fed.server
        .wait_for(|l| l.starts_with("group 0 fell below the minimum aggregate"));
    present.retain(|(c, _)| ![1, 2].contains(&c.0));
    assert_model_in_groups(dir, present.clone());
    let store = mufc_store::Store::open(dir.join("server.db")).unwrap();
    let groups = store.federation().layout().unwrap().groups().to_vec();
    assert_eq!(groups[1], [0, 3, 4, 5].map(ClientId));
    net::forget(dir, "a", "5");
    present[0].1 = present[0].1.without(&[seeding::PointId(5)]).unwrap();
    assert_model_in_groups(dir, present.clone());

    // Site g joins the merged federation: it checks the groups with one
    // group's sites moved, and itself anywhere.
    fed.server.kill();
    let admit = [GROUPS.as_slice(), &["--admit-new-clients"]].concat();
    let args = net::server_args(fed.port, &fed.certs, &SIX, &admit);
    let server = Proc::start("restarted server", dir, &args, &[]);
    server.wait_for(|l| l.starts_with("resumed from the store"));
    join_roster(&fed.certs, "g");
    let g = Proc::start("g", dir, &net::client_args(fed.port, &fed.certs, "g"), &[]);
    server.wait_for(|l| l.contains("client 6 (g) admitted"));
    server.wait_for(|l| l.contains(" committed") && l.contains("included 0,3,4,5,6,"));
    present.push((ClientId(6), all[6].clone()));
    assert_model_in_groups(dir, present);
    drop(g);
}

/// The authority issues `name`'s certificate in `certs` and appends it to
/// the federation file (`mufc certs --join`), which `name` starts with (the
/// members hold the old one).
pub(crate) fn join_roster(certs: &std::path::Path, name: &str) {
    let status = Command::new(env!("CARGO_BIN_EXE_mufc"))
        .args(["certs", "--out-dir"])
        .arg(certs)
        .args([
            "--federation",
            "hospitals",
            "--clients",
            name,
            "--join",
            "-q",
        ])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(certs.join("federation.json")).unwrap();
    assert!(text.contains(&format!("\"{name}\"")), "{text}");
}

/// Site b leaves with `mufc client leave`: the command says so once the
/// server took the leave, the server says so, b's client stops, and its
/// store runs no client again.
fn leave_b(dir: &std::path::Path, fed: &mut Processes) {
    leave(dir, fed, 1, "b");
}

/// Site `name`, client `id`, leaves as [`leave_b`] says.
fn leave(dir: &std::path::Path, fed: &mut Processes, id: usize, name: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args([
            "client",
            "leave",
            "--store",
            &format!("{name}.db"),
            "--wait",
            "60",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success() && text.contains("left the federation"),
        "{text}"
    );
    fed.server
        .wait_for(|l| l.contains(&format!("client {id} ({name}) left the federation")));
    assert!(
        fed.clients[id].exits_within(net::LIMIT),
        "{name} stops once it left"
    );
    let again = Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(net::client_args(fed.port, &fed.certs, name))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&again.stderr);
    assert!(
        !again.status.success() && said.contains("left the federation"),
        "{said}"
    );
}
