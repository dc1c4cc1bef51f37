//! A client's store is written only once a server admits it (issue 28,
//! item 10: the store, holding the client's records, was written at the
//! first start, before any server had admitted the client). Until the
//! welcome, `mufc client` holds its records in memory; the only file is
//! the reservation of its store's identity (`<store>.identity`: 64 bytes,
//! mode 0600, no record), kept across restarts so that a client stopped
//! between the welcome and the writing of its store is admitted again.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use net::{Proc, assert_model, client_args, free_port, server_args};

const ROSTER: [&str; 3] = ["a", "b", "c"];

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_client_store_is_written_only_once_the_server_admits_it() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = net::written_data(dir, "cli-net-admission", &ROSTER);
    let certs = net::certs(dir, "certs", "hospitals", &ROSTER);
    let port = free_port();
    let (store, reservation) = (dir.join("a.db"), dir.join("a.db.identity"));
    // No server yet: a waits with its records in memory.
    let mut a = Proc::start("a", dir, &client_args(port, &certs, "a"), &[]);
    a.wait_for(|l| l.starts_with("disconnected"));
    assert!(!store.exists(), "a's store was written before any welcome");
    let reserved = std::fs::read(&reservation).unwrap();
    assert_eq!(
        reserved.len(),
        64,
        "the reservation holds only the identity"
    );
    assert_eq!(mode(&reservation), 0o600);
    // Its operator hears that there is nothing to forget here yet.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(["client", "forget", "--store", "a.db", "--ids", "3"])
        .args(["--wait", "0"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("no store at") && err.contains("data file"),
        "{err}"
    );
    assert!(!store.exists());
    // Stopped and started again, a keeps the identity it reserved.
    a.kill();
    let a = Proc::start("a again", dir, &client_args(port, &certs, "a"), &[]);
    a.wait_for(|l| l.starts_with("disconnected"));
    assert_eq!(std::fs::read(&reservation).unwrap(), reserved);
    // The server admits it: the store is written, readable by a's owner
    // only, under the reserved identity; the reservation is gone.
    let server = Proc::start(
        "server",
        dir,
        &server_args(port, &certs, &ROSTER, &["--k", "3"]),
        &[],
    );
    let _others: Vec<Proc> = ["b", "c"]
        .iter()
        .map(|n| Proc::start(n, dir, &client_args(port, &certs, n), &[]))
        .collect();
    server.wait_for(|l| l.starts_with("model trained"));
    a.wait_for(|l| l.starts_with("connected"));
    assert_eq!(mode(&store), 0o600);
    let opened = mufc_net::client_store::ClientStore::open(&store).unwrap();
    assert_eq!(opened.identity().unwrap().as_slice(), &reserved[..32]);
    assert!(!reservation.exists(), "the reservation outlived the store");
    assert_model(dir, data);
}

/// The lines are `tracing` events (issue 28, item 11): `MUFC_LOG` sets
/// the least level printed, `--json` gives one object per line with its
/// time and level, and a `MUFC_LOG` naming no level stops the client
/// before it does anything.
#[test]
fn mufc_log_sets_the_least_level_and_json_lines_are_stamped() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    net::written_data(dir, "cli-net-log", &ROSTER);
    let certs = net::certs(dir, "certs", "hospitals", &ROSTER);
    let mut args = client_args(free_port(), &certs, "a");
    args.push("--json".into());
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(&args)
        .env("MUFC_LOG", "loud")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr).to_string();
    assert!(!bad.status.success() && err.contains("MUFC_LOG"), "{err}");
    assert!(!dir.join("a.db.identity").exists());
    // No server: every line is a lost connection, a warning. At `error`
    // none is printed; at `warn` each is, stamped.
    for (least, printed) in [("error", false), ("warn", true)] {
        let a = Proc::start("a", dir, &args, &[("MUFC_LOG", least)]);
        std::thread::sleep(std::time::Duration::from_secs(3));
        let lines = a.raw_log();
        assert_eq!(!lines.is_empty(), printed, "{least}: {lines:?}");
        for line in lines {
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            assert_eq!(v["event"], "disconnected", "{line}");
            assert_eq!(v["level"], "WARN", "{line}");
            assert!(v["time"].as_str().unwrap().ends_with('Z'), "{line}");
        }
    }
}
