//! A certificate withdrawn before it expires (issue 28, item 11): `mufc
//! certs --revoke d` while the federation runs closes client d's session
//! before the next round and refuses it from then on, without restarting
//! the server; the others' removal is served without it.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use net::{Processes, assert_model};
use seeding::PointId;

const ROSTER: [&str; 4] = ["a", "b", "c", "d"];

#[test]
fn a_revoked_client_is_closed_out_and_refused_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = net::written_data(dir, "cli-net-revoked", &ROSTER);
    let extra = ["--k", "3", "--join-timeout", "2"];
    let fed = Processes::start(dir, &ROSTER, &ROSTER, &extra, |_| None);
    fed.server.wait_for(|l| l.starts_with("model trained"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(["certs", "--out-dir", "certs", "--federation", "hospitals"])
        .args(["--revoke", "d"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A removal at a: the server notices the list before the round.
    net::forget(dir, "a", "3");
    fed.server
        .wait_for(|l| l.contains("closed the session of d: its certificate is revoked"));
    // d came back and was refused, and stopped saying why.
    fed.server
        .wait_for(|l| l.starts_with("refused a session") && l.contains("revoked"));
    fed.clients[3].wait_for(|l| l.contains("revoked"));
    let committed = fed.server.wait_for(|l| l.starts_with("round 1 committed"));
    assert!(committed.contains("included 0,1,2,"), "{committed}");
    // Every line the server printed says when, and how much it matters
    // (issue 28, item 11): the revocation is a warning.
    let raw = fed.server.raw_log();
    assert!(!raw.is_empty());
    for line in &raw {
        assert_ne!(net::unstamped(line), line, "no time and level: {line}");
    }
    let closed = raw
        .iter()
        .find(|l| l.contains("closed the session of d"))
        .unwrap();
    assert!(closed.contains(" WARN "), "{closed}");
    let mut rest = data[..3].to_vec();
    rest[0] = rest[0].without(&[PointId(3)]).unwrap();
    assert_model(dir, rest);
}
