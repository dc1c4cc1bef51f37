//! A round's membership is a rule, not the server's choice (issue 28,
//! items 4 and 5), across real processes:
//!
//! - a malicious server (played by the test) that holds a committed sum
//!   of every client and announces a ring without one of them, to
//!   difference the two sums, is refused by every client it asks;
//! - the honest server, when a site is down at a removal, names it in the
//!   ring (a dropout at the protocol's first step) rather than silently
//!   running without it; the model lacks that site (`mufc inspect` says
//!   so) until the site comes back, and then a catch-up round brings its
//!   data back: the model equals retraining on every record present.
#![cfg(all(unix, feature = "net"))]
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation
)]

use mufc::ClientId;
use mufc_net::proto::client_message::Body as Up;
use rand::{RngExt, SeedableRng};
use seeding::PointId;

use crate::common::evil::Evil;
use crate::common::net::{self, Proc, Processes, assert_model};

#[test]
fn clients_refuse_a_ring_that_leaves_out_a_client_of_the_last_sum() {
    const ROSTER: [&str; 5] = ["a", "b", "c", "d", "e"];
    let seed: u64 = rand::rng().random();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    net::written_data(dir, "cli-net-membership", &ROSTER);
    let certs = net::certs(dir, "certs", "hospitals", &ROSTER);
    let port = net::free_port();
    let mut clients = Vec::new();
    let mut evil = Evil::start(port, &certs, &ROSTER, || {
        clients = ROSTER
            .iter()
            .map(|n| Proc::start(n, dir, &net::client_args(port, &certs, n), &[]))
            .collect::<Vec<_>>();
    });
    let all = evil.ids();
    // The server holds S(all).
    let report = evil.run_honest(&all);
    assert_eq!(report.included, all);
    // Then asks for S(all but the victim), with one or two left out (a
    // ring holds at least the minimum aggregate, three).
    let victim = all[rng.random_range(0..all.len())];
    let mut ring: Vec<ClientId> = all.iter().copied().filter(|c| *c != victim).collect();
    if rng.random_bool(0.5) {
        ring.remove(rng.random_range(0..ring.len()));
    }
    let case = format!("seed {seed}: ring {ring:?} leaves out {victim}");
    let (_, round) = evil.announce(&ring);
    let number = round.spec().round;
    for id in &ring {
        match evil.next(*id, net::LIMIT) {
            Some(Up::Refusal(r)) => {
                assert_eq!(r.round, number, "{case}");
                assert!(
                    r.reason.contains("the ring omits client"),
                    "{case}: {}",
                    r.reason
                );
            }
            other => panic!("{case}: client {id} answered {other:?}"),
        }
    }
    // Nothing of the round reached the server: no keys, no input.
    assert!(round.answered().is_empty(), "{case}");
    evil.end(&ring, number, false, &[]);
    // The full ring is joined.
    let (_, mut round) = evil.announce(&all);
    assert!(evil.firsts(&all, &mut round).is_ok(), "{case}");
    for (id, c) in ring.iter().map(|id| (id, &clients[id.0 as usize])) {
        let log = c.log().join("\n");
        assert!(
            log.contains("the ring omits client"),
            "{case}: client {id}:\n{log}"
        );
    }
}

#[test]
fn a_site_down_at_a_removal_is_named_in_the_ring_and_caught_up_when_it_returns() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let sites = net::FOUR_SITES;
    let data = net::written_data(dir, "cli-net-catch-up", &sites);
    let extra = net::ONE_MAY_DROP;
    let mut fed = Processes::start(dir, &sites, &sites, &extra, |_| None);
    fed.server.wait_for(|l| l.starts_with("model trained"));
    // d goes down; a forgets a record.
    fed.clients[3].kill();
    net::forget(dir, "a", "3");
    let committed = fed.server.wait_for(|l| l.starts_with("round 1 committed"));
    assert!(committed.contains("included 0,1,2, dropped"), "{committed}");
    // The ring named d (a dropout at the first step), not a ring without
    // it.
    let started = fed.server.wait_for(|l| l.starts_with("round 1 started"));
    assert!(started.ends_with("with clients 0,1,2,3"), "{started}");
    // The model lacks d's data, and says so.
    let inspect = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(["inspect", "--model", "server.db", "--json"])
        .output()
        .unwrap();
    let j: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
    assert_eq!(j["model_lacks"], serde_json::json!(["d"]), "{j}");
    assert_eq!(
        j["model_includes"],
        serde_json::json!(["a", "b", "c"]),
        "{j}"
    );
    // d comes back: a catch-up round brings its data back at once.
    let _d = net::bring_back(&fed, dir, "d", 2);
    let mut present = data;
    present[0] = present[0].without(&[PointId(3)]).unwrap();
    assert_model(dir, present);
}

/// Two requests served at once by a catch-up round: with the lone-update
/// policy at two clients, c's request waits while d is down; d's own
/// request, asked while its client was down, reaches the server when d
/// comes back, so one round serves both and brings d's data back into
/// the model. Both are acknowledged, and the model equals retraining on
/// every record present.
#[test]
fn a_catch_up_round_serves_the_requests_waiting_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let sites = net::FOUR_SITES;
    let data = net::written_data(dir, "cli-net-catch-up-requests", &sites);
    let extra = [&net::ONE_MAY_DROP[..], &["--min-updating-clients", "2"]].concat();
    let mut fed = Processes::start(dir, &sites, &sites, &extra, |_| None);
    fed.server.wait_for(|l| l.starts_with("model trained"));
    fed.clients[3].kill();
    // d's operator asks with its client down: recorded, not yet applied.
    let recorded = net::forget_waiting(dir, "d", "5", "0");
    assert!(recorded.contains("recorded"), "{recorded}");
    let at_c = {
        let dir = dir.to_path_buf();
        std::thread::spawn(move || net::forget(&dir, "c", "7"))
    };
    fed.server
        .wait_for(|l| l.starts_with("request of client 2 deferred"));
    let seen = fed.server.log().len();
    let _d = Proc::start("d", dir, &net::client_args(fed.port, &fed.certs, "d"), &[]);
    let committed = fed
        .server
        .wait_for_after(seen, |l| l.contains(" committed"));
    assert!(committed.contains("included 0,1,2,3,"), "{committed}");
    let acked = at_c.join().unwrap();
    assert!(acked.contains("acknowledged in round"), "{acked}");
    // d's request was in that round: acknowledged in its store.
    let store = mufc_net::client_store::ClientStore::open(dir.join("d.db")).unwrap();
    assert!(
        matches!(
            store.status(1).unwrap(),
            Some(mufc_net::client_store::RequestStatus::Acknowledged { .. })
        ),
        "{:?}",
        store.status(1)
    );
    let mut present = data;
    present[2] = present[2].without(&[PointId(7)]).unwrap();
    present[3] = present[3].without(&[PointId(5)]).unwrap();
    assert_model(dir, present);
}
