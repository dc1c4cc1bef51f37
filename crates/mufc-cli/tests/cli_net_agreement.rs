//! The grid is what the parties agreed, not what anybody claims (issue
//! 28, item 6): the grid step sets how finely the server sees the
//! clients' centroids, which are records. A member of the roster,
//! `mallory` (in this test's process), claims a trillion points to make
//! the step tiny; a server started with `--gamma 1e-6` sets it outright.
//! With the federation file `mufc certs` writes, the server refuses the
//! claim and the clients refuse the setup.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::path::{Path, PathBuf};

use crate::common::member::{Honest, hello, member_tls};
use mufc_net::proto::client_message::Body as Up;
use net::{LIMIT, Proc, Processes, assert_model, client_args, free_port, server_args, write_csv};
use seeding::Dataset;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

const HONEST: [&str; 3] = ["a", "b", "c"];
const ROSTER: [&str; 4] = ["a", "b", "c", "mallory"];

/// One session of mallory's, claiming `points`: what the server first
/// answers (`Err` with its refusal), and, when welcomed, her honest part
/// in every round until the session ends.
async fn mallory_session(
    port: u16,
    certs: &Path,
    data: &Dataset,
    points: u64,
) -> Result<(), String> {
    let tls = member_tls(certs, "mallory");
    let mut rpc = mufc_net::transport::connect(&format!("127.0.0.1:{port}"), tls)
        .await
        .unwrap();
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tx.send(hello("mallory", points, 9)).await.unwrap();
    let mut inbound = rpc
        .join(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .map_err(|s| s.message().to_string())?
        .into_inner();
    let mut honest = Honest::new(data.clone(), certs, "mallory");
    loop {
        let msg = match tokio::time::timeout(LIMIT, inbound.message()).await {
            Ok(Ok(Some(m))) => m,
            Ok(Err(status)) => return Err(status.message().to_string()),
            _ => return Ok(()),
        };
        if let Some(reply) = honest.answer(msg.body.unwrap()) {
            tx.send(reply).await.unwrap();
        }
    }
}

#[test]
fn a_member_claiming_a_trillion_points_is_refused_and_the_grid_stays_agreed() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = gaussian_clients("cli-net-claim", Mixture::net(ROSTER.len()));
    for (name, d) in HONEST.iter().zip(&data) {
        write_csv(dir, name, d);
    }
    let fed = Processes::start(dir, &ROSTER, &HONEST, &["--k", "3"], |_| None);
    let (port, certs, mine) = (fed.port, fed.certs.clone(), data[3].clone());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // The lie: refused, and told why.
    let refused = rt
        .block_on(mallory_session(port, &certs, &mine, 1_000_000_000_000))
        .unwrap_err();
    assert!(refused.contains("claims 1000000000000 points"), "{refused}");
    fed.server
        .wait_for(|l| l.starts_with("refused a session") && l.contains("claims"));
    // Back with the truth, she trains with the others.
    let honest = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let _ = rt.block_on(mallory_session(port, &certs, &mine, mine.len() as u64));
    });
    fed.server.wait_for(|l| l.starts_with("model trained"));
    let stored = mufc_store::Store::open(dir.join("server.db")).unwrap();
    let gamma = stored.federation().config().gamma().unwrap();
    assert!(gamma >= mufc::remote::DEFAULT_MIN_GAMMA, "{gamma}");
    drop(stored);
    assert_model(dir, data);
    drop(fed);
    honest.join().unwrap();
}

/// A copy of the certificates without the federation file: the server a
/// test plays as malicious ignores the agreement.
fn without_agreement(certs: &Path, dir: &Path) -> PathBuf {
    let out = dir.join("server-certs");
    std::fs::create_dir_all(&out).unwrap();
    for entry in std::fs::read_dir(certs).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "federation.json" {
            std::fs::copy(entry.path(), out.join(entry.file_name())).unwrap();
        }
    }
    out
}

#[test]
fn clients_refuse_a_server_whose_grid_is_finer_than_agreed() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    net::written_data(dir, "cli-net-fine", &HONEST);
    let certs = net::certs(dir, "certs", "hospitals", &HONEST);
    let port = free_port();
    let server_certs = without_agreement(&certs, dir);
    let extra = ["--k", "3", "--gamma", "1e-6"];
    let server = Proc::start(
        "server",
        dir,
        &server_args(port, &server_certs, &HONEST, &extra),
        &[],
    );
    server.wait_for(|l| l.starts_with("listening on"));
    let clients: Vec<Proc> = HONEST
        .iter()
        .map(|n| Proc::start(n, dir, &client_args(port, &certs, n), &[]))
        .collect();
    for c in &clients {
        let line = c.wait_for(|l| l.starts_with("refused round 0"));
        assert!(
            line.contains("outside the agreement") && line.contains("finer than the agreed"),
            "{line}"
        );
    }
    // Nothing was trained, nothing sent: no model exists.
    server.wait_for(|l| l.contains("round 0 failed"));
    assert!(!server.log().iter().any(|l| l.contains("committed")));
    assert!(!dir.join("server.db").exists());
}

/// A client the server refuses for good before it ever welcomed it (not
/// on the server's roster; another federation's certificates) leaves no
/// store holding its records behind (issue 28, item 10).
#[test]
fn a_client_refused_before_its_welcome_leaves_no_store() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = gaussian_clients("cli-net-unadmitted", Mixture::net(3));
    for (name, d) in ["a", "b", "zed"].iter().zip(&data) {
        write_csv(dir, name, d);
    }
    let certs = net::certs(dir, "certs", "hospitals", &["a", "b", "zed"]);
    let port = free_port();
    let server_certs = without_agreement(&certs, dir);
    let server = Proc::start(
        "server",
        dir,
        &server_args(port, &server_certs, &["a", "b"], &["--k", "3"]),
        &[],
    );
    server.wait_for(|l| l.starts_with("listening on"));
    let other = net::certs(dir, "other", "elsewhere", &["a"]);
    for (name, certs) in [("zed", &certs), ("a", &other)] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
            .current_dir(dir)
            .args(client_args(port, certs, name))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!out.status.success(), "{name}: {err}");
        assert!(
            err.contains("not in the roster") || err.contains("TLS handshake"),
            "{name}: {err}"
        );
        for left in [format!("{name}.db"), format!("{name}.db.identity")] {
            assert!(!dir.join(&left).exists(), "{left} is left");
        }
    }
}

/// The federation file pins the bounds of the clients' units (`mufc certs
/// --bounds`): a client started without `--bounds` maps its records from
/// them, and one started with other bounds is refused before it writes
/// its store.
#[test]
fn the_federation_file_pins_the_bounds() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    std::fs::write(dir.join("a.csv"), "x,y\n12,180\n40,35\n150,90\n").unwrap();
    let certs = dir.join("certs");
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .args(["certs", "--out-dir", certs.to_str().unwrap()])
        .args(["--federation", "f", "--clients", "a,b", "--bounds", "0,200"])
        .output()
        .unwrap();
    assert!(made.status.success());
    let port = free_port();
    let mut other = client_args(port, &certs, "a");
    other.extend(["--bounds".into(), "0,100".into()]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(&other)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(
        !out.status.success() && err.contains("pins other bounds"),
        "{err}"
    );
    assert!(!dir.join("a.db").exists());
    // Without --bounds: the file's. (The server welcomes a, which writes
    // its store then, and waits for b.)
    let server = Proc::start(
        "server",
        dir,
        &server_args(port, &certs, &["a", "b"], &["--k", "3"]),
        &[],
    );
    server.wait_for(|l| l.starts_with("listening on"));
    let client = Proc::start("a", dir, &client_args(port, &certs, "a"), &[]);
    let start = std::time::Instant::now();
    while !dir.join("a.db").exists() {
        assert!(start.elapsed() < LIMIT, "{:?}", client.log());
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    drop(client);
    let store = mufc_net::client_store::ClientStore::open(dir.join("a.db")).unwrap();
    let data = store.data().unwrap();
    let to_box = seeding::BoxTransform::from_bounds(&[0.0, 0.0], &[200.0, 200.0]).unwrap();
    assert_eq!(data.point(0), to_box.apply(&[12.0, 180.0]).as_slice());
}

/// The privacy policy and the topology are pinned by the federation file
/// (issue 28): a malicious server (played by the test) announcing a
/// weaker lone-update policy, or another topology, than the file pins
/// (which one drawn at random) is refused by every client before it
/// sends anything; `mufc server` started below the pinned policy refuses
/// to start.
#[test]
fn clients_refuse_a_policy_or_topology_outside_the_federation_file() {
    use rand::{RngExt, SeedableRng};
    const ROSTER: [&str; 3] = ["a", "b", "c"];
    let seed: u64 = rand::rng().random();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    // The malicious server runs a flat federation whose removal rounds
    // need two clients (the defaults).
    let (pin, expected): (&[&str], &str) = if rng.random_bool(0.5) {
        (&["--min-updating-clients", "3"], "the lone-update policy")
    } else {
        (&["--topology", "groups:3"], "topology")
    };
    let case = format!("seed {seed}: pinned {pin:?}");
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    net::written_data(dir, "cli-net-policy-pinned", &ROSTER);
    let certs = net::certs_with(dir, "certs", "hospitals", &ROSTER, pin);
    let port = free_port();
    let mut clients = Vec::new();
    let mut evil = crate::common::evil::Evil::start(port, &certs, &ROSTER, || {
        clients = ROSTER
            .iter()
            .map(|n| Proc::start(n, dir, &client_args(port, &certs, n), &[]))
            .collect::<Vec<_>>();
    });
    let all = evil.ids();
    let (_, round) = evil.announce(&all);
    for id in &all {
        match evil.next(*id, LIMIT) {
            Some(Up::Refusal(r)) => {
                assert!(
                    r.reason.contains("outside the agreement"),
                    "{case}: {}",
                    r.reason
                );
                assert!(r.reason.contains(expected), "{case}: {}", r.reason);
            }
            other => panic!("{case}: client {id} answered {other:?}"),
        }
    }
    assert!(round.answered().is_empty(), "{case}");
    drop(evil);
    drop(clients);
    // The honest server, started below the pinned policy, says so.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_mufc"))
        .current_dir(dir)
        .args(server_args(free_port(), &certs, &ROSTER, &[]))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{case}");
    assert!(err.contains("outside the federation file"), "{case}: {err}");
}
