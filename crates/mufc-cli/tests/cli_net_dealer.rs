//! `mufc dealer` (issue 27: every mask source runs across processes):
//! `mufc certs --masking dealer` writes the dealer's certificate and
//! every party's mask key, the federation file pins their public keys,
//! and a server, a dealer and five clients, each a process of its own,
//! train and forget exactly; the removal is a change round, dealt like
//! the training round. A dealer given another key than the one the file
//! pins refuses to start. `mufc certs --revoke-dealer` withdraws the
//! dealer's certificate while the federation runs. A dealer killed
//! mid-deal fails its round, and a new dealer serves it.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::common::net::{
    Proc, assert_model, certs_with, client_args, forget, forget_waiting, free_port, server_args,
    written_data,
};
use seeding::PointId;

const NAMES: [&str; 5] = ["a", "b", "c", "d", "e"];

fn dealer_args(port: u16, certs: &Path) -> Vec<String> {
    [
        "dealer",
        "--server",
        &format!("127.0.0.1:{port}"),
        "--certs",
        certs.to_str().unwrap(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

/// `mufc certs --revoke-dealer` on the federation `hospitals` whose
/// authority is `dir/certs`.
fn revoke_dealer(dir: &Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(["certs", "--out-dir", "certs", "--federation", "hospitals"])
        .arg("--revoke-dealer")
        .output()
        .unwrap()
}

/// A trained federation of five client processes, a server and a dealer
/// (started with `dealer_env`), dealt masks, one request served alone.
struct Dealt {
    data: Vec<seeding::Dataset>,
    certs: PathBuf,
    port: u16,
    server: Proc,
    dealer: Proc,
    _clients: Vec<Proc>,
}

impl Dealt {
    /// Writes the data of `label` and the certificates, starts every
    /// process (the dealer before the clients, each client with its
    /// `fault`, `mufc_net::fault`'s) and waits for training. `inspect`
    /// sees the certificates' directory before any process.
    fn trained(
        dir: &Path,
        label: &str,
        seed: &str,
        dealer_env: &[(&str, &str)],
        fault: impl Fn(&str) -> Option<&'static str>,
        inspect: impl FnOnce(&Path),
    ) -> Self {
        let data = written_data(dir, label, &NAMES);
        let certs = certs_with(
            dir,
            "certs",
            "hospitals",
            &NAMES,
            &["--masking", "dealer", "--min-updating-clients", "1"],
        );
        inspect(&certs);
        let (port, server, dealer) = server_and_dealer(dir, &certs, &["--seed", seed], dealer_env);
        let clients = (NAMES.iter())
            .map(|n| {
                let env: Vec<_> = fault(n)
                    .map(|f| (mufc_net::fault::FAULT_ENV, f))
                    .into_iter()
                    .collect();
                Proc::start(n, dir, &client_args(port, &certs, n), &env)
            })
            .collect();
        server.wait_for(|l| l.contains("committed (training)"));
        Self {
            data,
            certs,
            port,
            server,
            dealer,
            _clients: clients,
        }
    }
}

/// A server of the five clients with dealt masks (and `extra` options)
/// and its dealer (with `dealer_env`), once the dealer connected: the
/// server's port and both processes.
fn server_and_dealer(
    dir: &Path,
    certs: &Path,
    extra: &[&str],
    dealer_env: &[(&str, &str)],
) -> (u16, Proc, Proc) {
    let port = free_port();
    let mut args = vec!["--k", "3", "--masking", "dealer"];
    args.extend_from_slice(extra);
    let server = Proc::start("server", dir, &server_args(port, certs, &NAMES, &args), &[]);
    server.wait_for(|l| l.starts_with("listening on"));
    let dealer = Proc::start("dealer", dir, &dealer_args(port, certs), dealer_env);
    server.wait_for(|l| l.contains("the dealer connected"));
    (port, server, dealer)
}

#[test]
fn five_processes_and_a_dealer_train_and_forget_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    // The clients' processes live as long as their binding.
    let Dealt {
        data,
        certs,
        server,
        dealer,
        _clients,
        ..
    } = Dealt::trained(
        dir,
        "cli-net-dealer",
        "11",
        &[],
        |_| None,
        |certs| {
            // Every secret key is its holder's alone.
            for file in ["dealer-mask.key", "client-a-mask.key", "dealer-key.pem"] {
                let mode = std::fs::metadata(certs.join(file))
                    .unwrap()
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o077, 0, "{file}: {mode:o}");
            }
        },
    );
    assert_model(dir, data.clone());
    forget(dir, "c", "3");
    let mut rest = data;
    rest[2] = rest[2].without(&[PointId(3)]).unwrap();
    assert_model(dir, rest.clone());
    let log = server.log();
    assert!(
        log.iter()
            .any(|l| l.starts_with("round 1 started") && l.contains("a change round")),
        "{log:?}"
    );
    dealer.wait_for(|l| l.contains("dealt round 1"));
    assert!(dealer.log().iter().any(|l| l.contains("dealt round 0")));

    // The authority revokes the dealer (`--revoke-dealer`): its
    // certificate's fingerprint joins the list, the server closes its
    // session before the next round, and the removal's round waits for a
    // dealer (none starts, the model is unchanged).
    let out = revoke_dealer(dir);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pem = std::fs::read_to_string(certs.join("dealer.pem")).unwrap();
    let fingerprint = mufc_net::revocation::fingerprint_pem(&pem).unwrap();
    let list = mufc_net::revocation::RevocationList::read(&certs.join("revoked.txt")).unwrap();
    assert!(list.contains(&fingerprint));
    forget_waiting(dir, "d", "4", "0");
    server.wait_for(|l| l.contains("closed the session of the dealer: its certificate is revoked"));
    server.wait_for(|l| l.contains("(the dealer is not connected); the group waits"));
    assert!(!server.log().iter().any(|l| l.starts_with("round 2 ")));
    assert_model(dir, rest);
}

/// A dealer killed while the server waits for its deal (it aborts on the
/// request of round 1, a removal round): the round fails and changes
/// nothing, no round starts while no dealer is connected, and a dealer
/// started again deals round 2, which serves the waiting removal; the
/// model then equals retraining.
#[test]
fn a_dealer_killed_mid_deal_fails_the_round_and_a_new_dealer_serves_it() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let fault = [(mufc_net::fault::DEALER_FAULT_ENV, "1")];
    let Dealt {
        data,
        certs,
        port,
        server,
        dealer,
        _clients,
    } = Dealt::trained(dir, "cli-net-dealer-killed", "12", &fault, |_| None, |_| {});
    forget_waiting(dir, "c", "3", "0");
    server.wait_for(|l| l.starts_with("round 1 failed"));
    server.wait_for(|l| l.contains("the dealer disconnected"));
    assert!(
        !server
            .log()
            .iter()
            .any(|l| l.starts_with("round 1 committed"))
    );
    assert_model(dir, data.clone());
    drop(dealer);
    let _again = Proc::start("dealer-again", dir, &dealer_args(port, &certs), &[]);
    let committed = server.wait_for(|l| l.contains("committed") && !l.contains("training"));
    assert!(committed.starts_with("round 2 committed"), "{committed}");
    let mut rest = data;
    rest[2] = rest[2].without(&[PointId(3)]).unwrap();
    assert_model(dir, rest);
}

/// A dealt round's client sends one message, its masked input, once its
/// sealed seed came: a client killed as its seed arrives (round 1, a
/// removal's change round) fails the round at that step, and nothing is
/// committed; the others refuse a ring without it (it was in their last
/// sum), so the removal waits, and once the client runs again round 2
/// serves it exactly.
#[test]
fn a_dealt_client_killed_before_its_masked_input_fails_the_round_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let Dealt {
        data,
        certs,
        port,
        server,
        dealer: _dealer,
        _clients,
    } = Dealt::trained(
        dir,
        "cli-net-dealer-dropout",
        "13",
        &[],
        |n| (n == "e").then_some("1:masked-input"),
        |_| {},
    );
    forget_waiting(dir, "c", "3", "0");
    let line = server.wait_for(|l| l.starts_with("round 1 failed"));
    assert!(
        line.contains("dropped out at the masked-input step"),
        "{line}"
    );
    assert!(
        !server
            .log()
            .iter()
            .any(|l| l.starts_with("round 1 committed"))
    );
    assert_model(dir, data.clone());
    let _again = Proc::start("e-again", dir, &client_args(port, &certs, "e"), &[]);
    let committed = server.wait_for(|l| l.contains("committed") && !l.contains("training"));
    assert!(committed.starts_with("round 2 committed"), "{committed}");
    let mut rest = data;
    rest[2] = rest[2].without(&[PointId(3)]).unwrap();
    assert_model(dir, rest);
}

/// `--revoke-dealer` in a directory without the dealer's certificate
/// (a federation without dealt masks) is an error naming the file, and
/// writes no list.
#[test]
fn revoking_a_dealer_that_was_never_issued_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let certs = certs_with(dir, "certs", "hospitals", &NAMES, &[]);
    let out = revoke_dealer(dir);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("dealer.pem"), "{err}");
    assert!(!certs.join("revoked.txt").exists());
}

#[test]
fn a_dealer_with_a_key_the_file_does_not_pin_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let certs = certs_with(dir, "certs", "hospitals", &NAMES, &["--masking", "dealer"]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(dealer_args(free_port(), &certs))
        .args([
            "--mask-key",
            certs.join("client-a-mask.key").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not the dealer's"), "{err}");
}

/// A site joins a dealt federation (issue 29): `mufc certs --join` issues
/// its certificate and its mask key and pins the key's public half in the
/// federation file, which the running dealer reads again when the round
/// names the new client; the server admits it, the dealer deals its whole
/// round, and the model equals the in-process fit on the six sites.
#[test]
fn a_site_joins_a_dealt_federation_and_the_dealer_deals_for_it() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let all = written_data(dir, "cli-net-dealer-join", &["a", "b", "c", "d", "e", "f"]);
    let options = ["--masking", "dealer", "--min-updating-clients", "1"];
    let certs = certs_with(dir, "certs", "hospitals", &NAMES, &options);
    let extra = ["--seed", "17", "--max-points", "500", "--admit-new-clients"];
    let (port, server, dealer) = server_and_dealer(dir, &certs, &extra, &[]);
    let _clients: Vec<Proc> = (NAMES.iter())
        .map(|n| Proc::start(n, dir, &client_args(port, &certs, n), &[]))
        .collect();
    server.wait_for(|l| l.contains("committed (training)"));

    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(["certs", "--out-dir", "certs", "--federation", "hospitals"])
        .args(["--clients", "f", "--join", "-q"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let file = mufc_net::federation_file::FederationFile::read(&certs.join("federation.json"));
    let keys = file.unwrap().client_mask_keys().unwrap();
    assert_eq!(keys.len(), 6);
    let mode = std::fs::metadata(certs.join("client-f-mask.key"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o077, 0, "{mode:o}");
    let _f = Proc::start("f", dir, &client_args(port, &certs, "f"), &[]);
    server.wait_for(|l| l.contains("client 5 (f) admitted"));
    server.wait_for(|l| l.contains(" committed") && l.contains("included 0,1,2,3,4,5"));
    dealer.wait_for(|l| l.contains("dealt round 1"));
    assert_model(dir, all);
}
