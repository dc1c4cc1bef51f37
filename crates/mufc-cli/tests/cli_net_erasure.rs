//! Erasure across processes (issue 28, items 1-3). An erasure applied
//! while a round runs reaches the model (item 1): client b forgets a point, which starts
//! round 1 with a new sketch of b's; client a answers that round's
//! unmasking step three seconds late, and b forgets a second point in
//! that window, after it joined the round and before the round commits.
//! The next round carries the second removal: the model equals
//! retraining on the records left (the old code kept round 1's sketch
//! with b's histogram after the second removal, found nothing changed
//! and re-sent the old sketch: the model kept the point while b
//! acknowledged its erasure).
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::time::Duration;

use net::{Processes, assert_model, forget, write_csv};
use seeding::PointId;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

const ROSTER: [&str; 3] = ["a", "b", "c"];

#[test]
fn a_point_forgotten_during_a_round_leaves_the_model_at_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let data = gaussian_clients("cli-net-erasure", Mixture::net(ROSTER.len()));
    for (name, d) in ROSTER.iter().zip(&data) {
        write_csv(&path, name, d);
    }
    let fed = Processes::start(&path, &ROSTER, &ROSTER, &["--k", "3"], |n| {
        (n == "a").then_some("1:unmasking:delay")
    });
    fed.server.wait_for(|l| l.starts_with("model trained"));
    let first = {
        let path = path.clone();
        std::thread::spawn(move || forget(&path, "b", "3"))
    };
    fed.server.wait_for(|l| l.starts_with("round 1 started"));
    // b has answered every step of round 1 by now; a sleeps at unmasking.
    std::thread::sleep(Duration::from_millis(1000));
    assert!(
        !fed.server
            .log()
            .iter()
            .any(|l| l.starts_with("round 1 committed")),
        "round 1 ended before b's removal: the window was missed"
    );
    let at_b = forget(&path, "b", "7");
    assert!(at_b.contains("acknowledged in round 2"), "{at_b}");
    assert!(first.join().unwrap().contains("acknowledged in round 1"));
    let mut rest = data;
    rest[1] = rest[1].without(&[PointId(3), PointId(7)]).unwrap();
    assert_model(&path, rest);
}

/// Erasure does not wait for the server (issue 28, item 3), across
/// processes: with the server killed, `mufc client forget` at a is
/// applied at once (the record leaves a's store while the command still
/// waits for the acknowledgment); the restarted server hears of it at the
/// next session and serves it, and the model equals retraining.
#[test]
fn a_removal_asked_while_the_server_is_down_leaves_the_store_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let data = net::written_data(&path, "cli-net-erasure-down", &ROSTER);
    let extra = ["--k", "3"];
    let mut fed = Processes::start(&path, &ROSTER, &ROSTER, &extra, |_| None);
    let args = net::server_args(fed.port, &fed.certs, &ROSTER, &extra);
    fed.server.wait_for(|l| l.starts_with("model trained"));
    fed.server.kill();
    let waiting = {
        let path = path.clone();
        std::thread::spawn(move || forget(&path, "a", "3"))
    };
    // The record leaves a's store while the server is still down.
    let start = std::time::Instant::now();
    loop {
        let held = mufc_net::client_store::ClientStore::open(path.join("a.db"))
            .and_then(|s| s.data())
            .map(|d| d.ids().contains(&PointId(3)));
        if held == Ok(false) {
            break;
        }
        assert!(
            start.elapsed() < net::LIMIT,
            "a still holds point 3: {held:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!waiting.is_finished(), "acknowledged with the server down");
    let _server = net::Proc::start("restarted server", &path, &args, &[]);
    let acked = waiting.join().unwrap();
    assert!(acked.contains("acknowledged in round"), "{acked}");
    let mut rest = data;
    rest[0] = rest[0].without(&[PointId(3)]).unwrap();
    assert_model(&path, rest);
}

/// A re-import does not bring forgotten records back (issue 28, item 2),
/// across processes: after a forgets a record, `mufc client` started for
/// a with a new store from its original data file is refused and stops,
/// and the model keeps the record forgotten.
#[test]
fn a_client_imported_again_from_its_original_data_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_path_buf();
    let data = net::written_data(&path, "cli-net-reimport", &ROSTER);
    let mut fed = Processes::start(&path, &ROSTER, &ROSTER, &["--k", "3"], |_| None);
    fed.server.wait_for(|l| l.starts_with("model trained"));
    forget(&path, "a", "3");
    fed.clients[0].kill();
    let mut args = net::client_args(fed.port, &fed.certs, "a");
    let store = args.iter().position(|a| a == "a.db").unwrap();
    args[store] = "a-again.db".into();
    let mut again = net::Proc::start("a again", &path, &args, &[]);
    again.wait_for(|l| l.contains("another store than before"));
    assert!(
        again.exits_within(net::LIMIT),
        "the re-imported client did not stop"
    );
    fed.server
        .wait_for(|l| l.starts_with("refused a session") && l.contains("another store"));
    // Never admitted, it left no copy of the records behind.
    assert!(!path.join("a-again.db").exists());
    assert!(!path.join("a-again.db.identity").exists());
    let mut rest = data;
    rest[0] = rest[0].without(&[PointId(3)]).unwrap();
    assert_model(&path, rest);
}
