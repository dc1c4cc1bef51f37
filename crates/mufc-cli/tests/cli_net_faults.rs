//! Faults between the parties (issue 28): the server and four clients,
//! each in a network namespace of its own joined by a bridge
//! (`common/netns.rs`), with delay and loss on every link where the
//! kernel has netem, and partitions: a client cut off while a removal
//! runs, the server cut off from everyone while a request waits, a
//! client cut off in the middle of a round. Every erasure acknowledged is
//! in the model, and once every site is back the model equals retraining
//! on every record present, bit for bit.
//!
//! Namespaces need root (CAP_NET_ADMIN); where they cannot be made the
//! test says why and passes without running (CI runs it where it can).
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::path::Path;
use std::time::Duration;

use seeding::PointId;

use crate::common::net::{self, Proc, assert_model};
use crate::common::netns::Netns;

const ROSTER: [&str; 4] = ["a", "b", "c", "d"];

/// `args` with the loopback address of `port` replaced by `addr`.
fn at(args: Vec<String>, port: u16, addr: &str) -> Vec<String> {
    let local = format!("127.0.0.1:{port}");
    args.into_iter()
        .map(|a| {
            if a == local {
                format!("{addr}:{port}")
            } else {
                a
            }
        })
        .collect()
}

/// Runs `forget` of `ids` at `client` in a thread (it waits up to a
/// minute for the acknowledgment, which it asserts).
fn forget_in_background(
    dir: &Path,
    client: &'static str,
    ids: &'static str,
) -> std::thread::JoinHandle<String> {
    let dir = dir.to_path_buf();
    std::thread::spawn(move || net::forget(&dir, client, ids))
}

/// Waits until `mufc inspect` on the server's store lists no client the
/// model lacks.
fn wait_until_the_model_holds_every_site(dir: &Path) {
    let start = std::time::Instant::now();
    loop {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
            .current_dir(dir)
            .args(["inspect", "--model", "server.db", "--json"])
            .output()
            .unwrap();
        let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        if j["model_lacks"] == serde_json::json!([]) {
            return;
        }
        assert!(
            start.elapsed() < net::LIMIT,
            "the model still lacks {}",
            j["model_lacks"]
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn partitions_lose_no_acknowledged_erasure_and_the_model_equals_retraining() {
    let parties = ["server", "a", "b", "c", "d"];
    let fabric = match Netns::new(&parties) {
        Ok(n) => n,
        Err(why) => {
            eprintln!("skipped: network namespaces cannot be made here ({why})");
            return;
        }
    };
    for p in parties {
        if let Err(why) = fabric.netem(p, "delay 20ms 5ms loss 1%") {
            eprintln!("no delay or loss: the kernel has no netem ({why}); partitions only");
            break;
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = net::written_data(dir, "cli-net-faults", &ROSTER);
    let addr = fabric.addr("server");
    let certs = net::certs_with(dir, "certs", "hospitals", &ROSTER, &["--hosts", &addr]);
    let port = net::free_port();
    // One site of four may be missing from a round.
    let extra = ["--k", "3", "--join-timeout", "2", "--step-timeout", "3"];
    let mut args = at(net::server_args(port, &certs, &ROSTER, &extra), port, &addr);
    args.extend(["--dropout".to_string(), "0.25".to_string()]);
    let server = Proc::start_in(&fabric.ns("server"), "server", dir, &args);
    server.wait_for(|l| l.starts_with("listening on"));
    let _clients: Vec<Proc> = ROSTER
        .iter()
        .map(|n| {
            let args = at(net::client_args(port, &certs, n), port, &addr);
            Proc::start_in(&fabric.ns(n), n, dir, &args)
        })
        .collect();
    server.wait_for(|l| l.starts_with("model trained"));
    let mut present = data;

    // 1. c is cut off while a's removal runs: the round names c, commits
    //    without it, and a catch-up round brings it back once healed (not
    //    before: a catch-up while c cannot answer would leave it out).
    fabric.cut("c");
    let acked = net::forget(dir, "a", "3");
    present[0] = present[0].without(&[PointId(3)]).unwrap();
    // c stays cut a while: its session looks open to the server (TCP
    // does not report a link that is down), and must not be taken for
    // connected.
    std::thread::sleep(Duration::from_secs(4));
    let seen = server.log().len();
    fabric.heal("c");
    server.wait_for_after(seen, |l| {
        l.contains(" committed") && l.contains("included 0,1,2,3, dropped")
    });
    assert!(acked.contains("acknowledged in round"), "{acked}");

    // 2. The server is cut off from everyone while b's request waits.
    fabric.cut("server");
    let pending = forget_in_background(dir, "b", "5");
    std::thread::sleep(Duration::from_secs(4));
    fabric.heal("server");
    let acked = pending.join().unwrap();
    present[1] = present[1].without(&[PointId(5)]).unwrap();
    assert!(acked.contains("acknowledged in round"), "{acked}");

    // 3. a is cut off in the middle of the round serving c's request.
    let seen = server.log().len();
    let pending = forget_in_background(dir, "c", "7");
    server.wait_for_after(seen, |l| l.contains(" started with clients"));
    fabric.cut("a");
    std::thread::sleep(Duration::from_secs(5));
    fabric.heal("a");
    let acked = pending.join().unwrap();
    present[2] = present[2].without(&[PointId(7)]).unwrap();
    assert!(acked.contains("acknowledged in round"), "{acked}");
    // a is back in the model (a catch-up round, if the round left it
    // out), and the model is retraining on every record present.
    wait_until_the_model_holds_every_site(dir);
    assert_model(dir, present);
}

/// A link that goes down says nothing to TCP: the server pings every
/// connection (`--keepalive`, HTTP/2 PING) and closes the session of a
/// client whose pings go unanswered, even when no round runs (before,
/// the server took a client cut off while idle for connected until it
/// next sent it something). Once healed, the client connects again and
/// the next removal includes it; the model equals retraining.
#[test]
fn a_client_cut_off_while_idle_is_seen_gone_by_the_keepalive() {
    const THREE: [&str; 3] = ["a", "b", "c"];
    let parties = ["server", "a", "b", "c"];
    let fabric = match Netns::new(&parties) {
        Ok(n) => n,
        Err(why) => {
            eprintln!("skipped: network namespaces cannot be made here ({why})");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = net::written_data(dir, "cli-net-keepalive", &THREE);
    let addr = fabric.addr("server");
    let certs = net::certs_with(dir, "certs", "hospitals", &THREE, &["--hosts", &addr]);
    let port = net::free_port();
    let extra = ["--k", "3", "--keepalive", "1"];
    let args = at(net::server_args(port, &certs, &THREE, &extra), port, &addr);
    let server = Proc::start_in(&fabric.ns("server"), "server", dir, &args);
    server.wait_for(|l| l.starts_with("listening on"));
    let _clients: Vec<Proc> = THREE
        .iter()
        .map(|n| {
            let mut args = at(net::client_args(port, &certs, n), port, &addr);
            args.extend(["--keepalive".to_string(), "1".to_string()]);
            Proc::start_in(&fabric.ns(n), n, dir, &args)
        })
        .collect();
    server.wait_for(|l| l.starts_with("model trained"));
    let seen = server.log().len();
    fabric.cut("c");
    server.wait_for_after(seen, |l| l == "client 2 (c) disconnected");
    let seen = server.log().len();
    fabric.heal("c");
    server.wait_for_after(seen, |l| l == "client 2 (c) connected");
    let acked = net::forget(dir, "a", "3");
    assert!(acked.contains("acknowledged in round"), "{acked}");
    let committed = server.wait_for_after(seen, |l| l.contains(" committed"));
    assert!(committed.contains("included 0,1,2,"), "{committed}");
    let mut present = data;
    present[0] = present[0].without(&[PointId(3)]).unwrap();
    assert_model(dir, present);
}
