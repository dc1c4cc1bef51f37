//! The federation across processes (issue 15): `mufc server` and five
//! `mufc client` processes on 127.0.0.1, over mutually authenticated TLS.
//!
//! - Training gives the model of the in-process `Federation` on the same
//!   data and configuration, bit for bit; a removal asked through a
//!   client's store is acknowledged once its round committed, and the model
//!   is then retraining's on the points left.
//! - The server is killed with SIGKILL and restarted: it resumes from its
//!   store, a removal acknowledged before the kill is still applied, and
//!   one asked afterwards is served exactly.
//! - A client process dies in the middle of a round: the round completes
//!   with the others and names it dropped; when too many die, the round
//!   fails cleanly and no model is stored.
//! - With a tree of groups (issue 16), six processes train one round per
//!   group and every node's model is the in-process tree's; a removal is a
//!   round of the requester's group, which the other clients never hear
//!   of; a restarted server resumes its groups. A server killed before
//!   every group trained (one client died in its group's training round)
//!   and after a removal in a trained group reads back the setup it kept
//!   and finishes training once the client is back.
//!
//! The attackers (bad certificates, replays, garbage) are in
//! `cli_net_attacks.rs`. Every wait is bounded and every child is killed
//! when the test ends.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::path::Path;
use std::time::Duration;

use net::{Proc, Processes, assert_model, client_args, forget, server_args};
use seeding::{Dataset, PointId};

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

/// The clients of the tests with groups.
const SIX: [&str; 6] = ["a", "b", "c", "d", "e", "f"];

/// Each client's points, written as `<name>.csv` into `dir`.
fn data(dir: &Path, label: &str) -> Vec<Dataset> {
    net::written_data(dir, label, &NAMES)
}

#[test]
fn five_processes_train_exactly_and_survive_a_killed_server() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = data(dir, "cli-net-exact");
    let extra = ["--k", "3", "--seed", "11"];
    let mut fed = Processes::start(dir, &NAMES, &NAMES, &extra, |_| None);
    let args = server_args(fed.port, &fed.certs, &NAMES, &extra);
    let server = &mut fed.server;
    server.wait_for(|l| l.contains("committed (training)"));
    assert_model(dir, data.clone());

    // A removal acknowledged before the server dies.
    forget(dir, "b", "7");
    let mut rest = data;
    rest[1] = rest[1].without(&[PointId(7)]).unwrap();
    assert_model(dir, rest.clone());

    // SIGKILL, then the same command again: it resumes from its store.
    server.kill();
    let server = Proc::start("restarted server", dir, &args, &[]);
    let clients = &fed.clients;
    server.wait_for(|l| l.starts_with("resumed from the store"));
    forget(dir, "d", "2,30");
    rest[3] = rest[3].without(&[PointId(2), PointId(30)]).unwrap();
    assert_model(dir, rest);
    for c in clients {
        assert!(
            !c.log().iter().any(|l| l.contains("refused")),
            "{:?}",
            c.log()
        );
    }
}

/// A client whose stdout reader went away (`mufc client ... | head`)
/// stays in the federation: it trains, serves a removal and does not
/// panic on its next event (issue 28, item 11).
#[test]
fn a_client_whose_stdout_closes_keeps_serving() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = data(dir, "cli-net-stdout");
    let extra = ["--k", "3", "--seed", "11"];
    let (last, first) = NAMES.split_last().unwrap();
    let fed = Processes::start(dir, &NAMES, first, &extra, |_| None);
    let mute = Proc::start_with_stdout_closed(last, dir, &client_args(fed.port, &fed.certs, last));
    fed.server.wait_for(|l| l.contains("committed (training)"));
    assert_model(dir, data.clone());
    forget(dir, last, "4");
    let mut rest = data;
    let i = NAMES.len() - 1;
    rest[i] = rest[i].without(&[PointId(4)]).unwrap();
    assert_model(dir, rest);
    let log = mute.log();
    assert!(!log.iter().any(|l| l.contains("panicked")), "{log:?}");
    assert!(
        log.iter().any(|l| l.contains("standard output failed")),
        "{log:?}"
    );
}

/// `mufc server --masking pairwise`: the key directory travels through
/// the server between processes; training and a removal equal the
/// in-process federation, bit for bit. The removal runs as a change
/// round (each client sends its change since the training round).
#[test]
fn five_processes_with_pairwise_masks_train_and_forget_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = data(dir, "cli-net-pairwise");
    let extra = ["--k", "3", "--seed", "11", "--masking", "pairwise"];
    let fed = Processes::start(dir, &NAMES, &NAMES, &extra, |_| None);
    fed.server.wait_for(|l| l.contains("committed (training)"));
    assert_model(dir, data.clone());
    forget(dir, "c", "3");
    let mut rest = data;
    rest[2] = rest[2].without(&[PointId(3)]).unwrap();
    assert_model(dir, rest);
    let log = fed.server.log();
    assert!(
        log.iter()
            .any(|l| l.starts_with("round 1 started") && l.contains("a change round")),
        "{log:?}"
    );
    for c in &fed.clients {
        assert!(
            !c.log().iter().any(|l| l.contains("refused")),
            "{:?}",
            c.log()
        );
    }
}

/// Pairwise masks tolerate no dropout, across processes too: a client
/// killed before its masked input (after its key went into the
/// directory) fails the round; nothing is unmasked, committed or stored.
#[test]
fn a_pairwise_client_killed_mid_round_fails_the_round_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    data(dir, "cli-net-pairwise-dropout");
    let extra = ["--k", "3", "--masking", "pairwise", "--step-timeout", "20"];
    let fed = Processes::start(dir, &NAMES, &NAMES, &extra, |n| {
        (n == "e").then_some("0:masked-input")
    });
    let line = fed.server.wait_for(|l| l.starts_with("round 0 failed"));
    assert!(line.contains("dropped out"), "{line}");
    assert!(!fed.server.log().iter().any(|l| l.contains("committed")));
    assert!(!dir.join("server.db").exists());
}

/// SIGTERM is not starved by a round (issue 28, item 11): a server whose
/// removal round waits for a client that stopped answering (frozen with
/// SIGSTOP, its connection open; a step deadline of five minutes) stops
/// within seconds of SIGTERM, without committing the round. It waited
/// out the deadline.
#[test]
fn sigterm_stops_a_server_waiting_in_a_round() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    data(dir, "cli-net-sigterm");
    let extra = ["--k", "3", "--step-timeout", "300"];
    let mut fed = Processes::start(dir, &NAMES, &NAMES, &extra, |_| None);
    fed.server.wait_for(|l| l.contains("committed (training)"));
    fed.clients[4].signal("STOP");
    let asked = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args([
            "client", "forget", "--store", "a.db", "--ids", "3", "--wait", "0",
        ])
        .output()
        .unwrap();
    assert!(asked.status.success(), "{asked:?}");
    fed.server.wait_for(|l| l.starts_with("round 1 started"));
    std::thread::sleep(Duration::from_millis(500));
    let took = fed.server.terminate(Duration::from_secs(20));
    fed.clients[4].signal("CONT");
    assert!(
        took.is_some_and(|t| t < Duration::from_secs(10)),
        "the server took {took:?} to stop; its log:\n{}",
        fed.server.log().join("\n")
    );
    let log = fed.server.log();
    assert!(
        !log.iter()
            .any(|l| l.contains("round 1") && l.contains("committed")),
        "{log:?}"
    );
}

#[test]
fn a_client_killed_mid_round_is_dropped_and_too_many_fail_cleanly() {
    let extra = ["--k", "3", "--dropout", "0.2", "--step-timeout", "20"];
    // One client dies before its masked input: the others complete.
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = data(dir, "cli-net-dropout");
    let fed = Processes::start(dir, &NAMES, &NAMES, &extra, |n| {
        (n == "e").then_some("0:masked-input")
    });
    let line = fed.server.wait_for(|l| l.contains("committed (training)"));
    assert!(line.contains("included 0,1,2,3, dropped 4"), "{line}");
    assert_model(dir, data[..4].to_vec());

    // A client loses its connection before its masked input and comes
    // back a second later, while another is still computing (it answers
    // three seconds late): the new session has no part in the round, which
    // goes on without it as soon as the slow one answers, long before the
    // step deadline (120 s, beyond the test's every wait).
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = self::data(dir, "cli-net-dropout");
    let slow = ["--k", "3", "--dropout", "0.2", "--step-timeout", "120"];
    let fed = Processes::start(dir, &NAMES, &NAMES, &slow, |n| match n {
        "d" => Some("0:masked-input:delay"),
        "e" => Some("0:masked-input:reconnect"),
        _ => None,
    });
    let line = fed.server.wait_for(|l| l.contains("committed (training)"));
    assert!(line.contains("included 0,1,2,3, dropped 4"), "{line}");
    fed.clients[4].wait_for(|l| l.starts_with("disconnected"));
    // Back in a new session, e is caught up by the next round: the model
    // then holds every client's data. (Reading the store right after the
    // training round raced with that catch-up round.)
    let caught_up = fed
        .server
        .wait_for(|l| l.starts_with("round 1 ") && l.contains(" committed"));
    assert!(caught_up.contains("included 0,1,2,3,4"), "{caught_up}");
    assert_model(dir, data);

    // Three of five die: below the threshold, the round fails, nothing is
    // unmasked and no model is stored.
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    self::data(dir, "cli-net-dropout");
    let fed = Processes::start(dir, &NAMES, &NAMES, &extra, |n| {
        ["c", "d", "e"].contains(&n).then_some("0:share-keys")
    });
    let line = fed.server.wait_for(|l| l.starts_with("round 0 failed"));
    assert!(line.contains("dropped out"), "{line}");
    assert!(!fed.server.log().iter().any(|l| l.contains("committed")));
    assert!(!dir.join("server.db").exists());
}

#[test]
fn six_processes_in_a_tree_of_groups_forget_in_one_group() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = net::written_data(dir, "cli-net-tree", &SIX);
    let mut fed = Processes::start(dir, &SIX, &SIX, &TREE, |_| None);
    let args = server_args(fed.port, &fed.certs, &SIX, &TREE);
    fed.server
        .wait_for(|l| l.starts_with("model trained after 3 rounds"));
    let trainings = fed.server.log();
    let trainings: Vec<&String> = trainings
        .iter()
        .filter(|l| l.contains("committed (training)"))
        .collect();
    assert_eq!(trainings.len(), 3, "{trainings:?}");
    assert_model(dir, data.clone());

    // d (group 1) forgets: a round of c and d alone.
    let seen = fed.server.log().len();
    forget(dir, "d", "7,8");
    let mut rest = data;
    rest[3] = rest[3].without(&[PointId(7), PointId(8)]).unwrap();
    let line = fed
        .server
        .wait_for_after(seen, |l| l.contains("started with"));
    assert!(
        line.ends_with("of group 1 started with clients 2,3"),
        "{line}"
    );
    assert_model(dir, rest.clone());
    for (name, c) in SIX.iter().zip(&fed.clients) {
        let joined = c
            .log()
            .iter()
            .filter(|l| l.starts_with("joined round"))
            .count();
        let want = if ["c", "d"].contains(name) { 2 } else { 1 };
        assert_eq!(joined, want, "client {name}: {:?}", c.log());
    }

    // The server dies and resumes its tree; a's removal stays in group 0.
    fed.server.kill();
    let server = Proc::start("restarted server", dir, &args, &[]);
    server.wait_for(|l| l.starts_with("resumed from the store"));
    forget(dir, "a", "0");
    rest[0] = rest[0].without(&[PointId(0)]).unwrap();
    let line = server.wait_for(|l| l.contains("started with"));
    assert!(
        line.ends_with("of group 0 started with clients 0,1"),
        "{line}"
    );
    assert_model(dir, rest);
}

/// The tree's options of these tests: groups {a, b}, {c, d}, {e, f} under
/// a tree of fan-out 2.
const TREE: [&str; 12] = [
    "--k",
    "3",
    "--seed",
    "5",
    "--min-clients",
    "2",
    "--topology",
    "tree",
    "--group-size",
    "2",
    "--fan-out",
    "2",
];

#[test]
fn a_server_killed_before_every_group_trained_keeps_its_setup() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = net::written_data(dir, "cli-net-setup", &SIX);
    // f dies before its masked input in its group's training round: that
    // round fails (a group of two cannot lose one), the other two train.
    let mut fed = Processes::start(dir, &SIX, &SIX, &TREE, |n| {
        (n == "f").then_some("0:masked-input")
    });
    let args = server_args(fed.port, &fed.certs, &SIX, &TREE);
    fed.server
        .wait_for(|l| l.starts_with("round 0 of group 2 failed"));
    for g in [0, 1] {
        fed.server
            .wait_for(|l| l.starts_with(&format!("round 0 of group {g} committed (training)")));
    }
    // A removal in a trained group: d now registers fewer points.
    forget(dir, "d", "3");
    let mut rest = data;
    rest[3] = rest[3].without(&[PointId(3)]).unwrap();
    assert!(!dir.join("server.db").exists());
    assert!(dir.join("server.db.setup").exists());

    fed.server.kill();
    let server = Proc::start("restarted server", dir, &args, &[]);
    server.wait_for(|l| l.starts_with("set up as before the restart"));
    let _f = Proc::start("f again", dir, &client_args(fed.port, &fed.certs, "f"), &[]);
    server.wait_for(|l| l.starts_with("model trained after"));
    assert!(
        !server.log().iter().any(|l| l.contains("failed")),
        "{:?}",
        server.log()
    );
    assert_model(dir, rest);
    assert!(!dir.join("server.db.setup").exists());
}
