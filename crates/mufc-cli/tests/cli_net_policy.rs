//! The lone-update policy across processes (issue 28, item 7): a removal
//! round that changes one client's message shows the server that change
//! (a reseeded client's new centroid is a record's grid cell). The server
//! holds a lone request back until another client of the group asks too,
//! or until `--max-defer` has passed; then one round serves what waits.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::time::Duration;

use mufc_net::client_store::{ClientStore, RequestStatus};
use net::{Processes, assert_model, forget_waiting};
use seeding::PointId;

const ROSTER: [&str; 3] = ["a", "b", "c"];

#[test]
fn a_lone_removal_waits_for_another_client_or_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = net::written_data(dir, "cli-net-policy", &ROSTER);
    let extra = [
        "--k",
        "3",
        "--min-updating-clients",
        "2",
        "--max-defer",
        "3",
    ];
    let fed = Processes::start(dir, &ROSTER, &ROSTER, &extra, |_| None);
    fed.server.wait_for(|l| l.starts_with("model trained"));

    // a alone: applied at a at once, held back at the server.
    let alone = forget_waiting(dir, "a", "3", "1.5");
    assert!(alone.contains("not yet committed"), "{alone}");
    let deferred = fed
        .server
        .wait_for(|l| l.starts_with("request of client 0 deferred"));
    assert!(deferred.contains("lone-update policy"), "{deferred}");
    assert!(
        !fed.server
            .log()
            .iter()
            .any(|l| l.starts_with("round 1 started")),
        "a lone request ran at once: {:?}",
        fed.server.log()
    );
    // b asks too: one round serves both.
    let both = forget_waiting(dir, "b", "5", "60");
    assert!(both.contains("acknowledged in round 1"), "{both}");
    let a_store = ClientStore::open(dir.join("a.db")).unwrap();
    assert_eq!(
        a_store.status(1).unwrap(),
        Some(RequestStatus::Acknowledged { round: 1 })
    );
    drop(a_store);

    // c alone: served alone once the deadline (3 s) has passed.
    let start = std::time::Instant::now();
    let late = forget_waiting(dir, "c", "8", "60");
    assert!(late.contains("acknowledged in round 2"), "{late}");
    assert!(
        start.elapsed() >= Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );

    let mut rest = data;
    rest[0] = rest[0].without(&[PointId(3)]).unwrap();
    rest[1] = rest[1].without(&[PointId(5)]).unwrap();
    rest[2] = rest[2].without(&[PointId(8)]).unwrap();
    assert_model(dir, rest);
}

/// The deadline counts from when the operator asked, across a server
/// restart: a lone request waits out `--max-defer` (8 s) once, not again
/// from the restart (the restarted server hears of it anew at the
/// client's next session, and started the wait over).
#[test]
fn a_server_restart_does_not_start_the_deadline_again() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = net::written_data(dir, "cli-net-policy-restart", &ROSTER);
    let extra = [
        "--k",
        "3",
        "--min-updating-clients",
        "2",
        "--max-defer",
        "8",
    ];
    let mut fed = Processes::start(dir, &ROSTER, &ROSTER, &extra, |_| None);
    let args = net::server_args(fed.port, &fed.certs, &ROSTER, &extra);
    fed.server.wait_for(|l| l.starts_with("model trained"));
    let asked = std::time::Instant::now();
    let waiting = {
        let dir = dir.to_path_buf();
        std::thread::spawn(move || forget_waiting(&dir, "a", "3", "60"))
    };
    fed.server
        .wait_for(|l| l.starts_with("request of client 0 deferred"));
    std::thread::sleep(Duration::from_secs(5));
    fed.server.kill();
    let _server = net::Proc::start("restarted server", dir, &args, &[]);
    let acked = waiting.join().unwrap();
    assert!(acked.contains("acknowledged in round"), "{acked}");
    // Served at the deadline, 8 s after asking: the restarted server's
    // own 8 s would end 13 s after asking at the earliest.
    let took = asked.elapsed();
    assert!(took >= Duration::from_secs(8), "{took:?}");
    assert!(
        took < Duration::from_secs(12),
        "the deadline started over: {took:?}"
    );
    let mut rest = data;
    rest[0] = rest[0].without(&[PointId(3)]).unwrap();
    assert_model(dir, rest);
}
