//! Bounds on what a peer may make the server hold (issue 28, item 9),
//! against a `mufc server` process with honest client processes: a
//! member of the roster, `mallory`, in this test's process, trains
//! honestly and then floods the server with removal requests, sends it
//! one huge message, or opens many sessions on one connection; a peer
//! without a certificate opens hundreds of idle connections. Each test
//! asserts what the server holds and that the honest clients' removal is
//! still served.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::path::{Path, PathBuf};
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use crate::common::member::{Honest, hello, member_tls, open_session, up};
use mufc_net::proto::Forget;
use mufc_net::proto::client_message::Body as Up;
use mufc_net::proto::server_message::Body as Down;
use net::{LIMIT, Processes, assert_model, forget, write_csv};
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};
use tokio::io::AsyncReadExt;

const HONEST: [&str; 3] = ["a", "b", "c"];
const ROSTER: [&str; 4] = ["a", "b", "c", "mallory"];

/// What mallory does once the model is trained.
#[derive(Clone, Copy, Debug)]
enum Attack {
    /// This many removal requests, numbered 1, 2, ..., then honest.
    Flood(u64),
    /// One message of this many bytes, then silence.
    Huge(usize),
}

/// Mallory: an honest member that runs `attack` once the model is
/// trained and tells the test (`said`) when it did.
fn mallory(port: u16, certs: PathBuf, data: Dataset, attack: Attack, said: std_mpsc::Sender<()>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        // She accepts to send more than an honest client would.
        let mut rpc = mufc_net::transport::connect_counted(
            &format!("127.0.0.1:{port}"),
            member_tls(&certs, "mallory"),
            Default::default(),
            512 << 20,
            mufc_net::transport::KEEPALIVE,
        )
        .await
        .unwrap();
        let first = hello("mallory", data.len() as u64, 7);
        let (tx, mut inbound) = open_session(&mut rpc, first, 1024).await;
        let mut honest = Honest::new(data, &certs, "mallory");
        while let Ok(Ok(Some(msg))) = tokio::time::timeout(LIMIT, inbound.message()).await {
            let body = msg.body.unwrap();
            let trained = matches!(&body, Down::End(e) if e.round == 0);
            if let Some(reply) = honest.answer(body) {
                tx.send(reply).await.unwrap();
            }
            if !trained {
                continue;
            }
            match attack {
                Attack::Flood(n) => {
                    for request in 1..=n {
                        tx.send(up(Up::Forget(Forget {
                            request,
                            asked_at: 0,
                            empties: false,
                        })))
                        .await
                        .unwrap();
                    }
                }
                Attack::Huge(bytes) => {
                    tx.send(up(Up::Secagg(vec![0x5A; bytes]))).await.unwrap();
                }
            }
            said.send(()).unwrap();
        }
    });
}

/// The honest clients' data and the federation's processes, with
/// mallory running `attack` in a thread; returns once she attacked.
fn federation(
    dir: &Path,
    label: &str,
    extra: &[&str],
    attack: Attack,
) -> (Processes, Vec<Dataset>) {
    let data = gaussian_clients(label, Mixture::net(ROSTER.len()));
    for (name, d) in HONEST.iter().zip(&data) {
        write_csv(dir, name, d);
    }
    let fed = Processes::start(dir, &ROSTER, &HONEST, extra, |_| None);
    let (said_tx, said) = std_mpsc::channel();
    let (port, certs, d) = (fed.port, fed.certs.clone(), data[3].clone());
    std::thread::spawn(move || mallory(port, certs, d, attack, said_tx));
    said.recv_timeout(LIMIT).unwrap();
    (fed, data)
}

/// The largest resident set the process `pid` had, in bytes.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib << 10
}

#[test]
fn a_flood_of_removal_requests_costs_one_audit_row_per_client_and_round() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let (fed, data) = federation(dir, "cli-net-flood", &["--k", "3"], Attack::Flood(20_000));
    // The flood is served (mallory's points did not change), then an
    // honest removal.
    fed.server
        .wait_for(|l| l.starts_with("round 1 committed") && l.contains("included 0,1,2,3"));
    forget(dir, "b", "5");
    let store = mufc_store::Store::open(dir.join("server.db")).unwrap();
    let rows = store.history().unwrap();
    assert!(rows.len() <= 2 * ROSTER.len(), "{} audit rows", rows.len());
    let mallory = rows.iter().filter(|r| r.client.as_str() == "mallory");
    assert_eq!(mallory.map(|r| r.request).max(), Some(20_000));
    let mut rest = data;
    rest[1] = rest[1].without(&[PointId(5)]).unwrap();
    assert_model(dir, rest);
}

#[test]
fn a_huge_message_is_refused_before_the_server_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let extra = ["--k", "3", "--join-timeout", "2"];
    let before = Instant::now();
    let (fed, data) = federation(dir, "cli-net-huge", &extra, Attack::Huge(200 << 20));
    let pid = fed.server.pid();
    let baseline = peak_memory(pid);
    // The honest clients' removal runs without mallory, whose session the
    // server closed.
    forget(dir, "a", "3");
    let peak = peak_memory(pid);
    assert!(
        peak < baseline + (64 << 20),
        "the server's peak memory went from {baseline} to {peak} bytes"
    );
    let committed = fed.server.wait_for(|l| l.contains("committed"));
    assert!(committed.contains("included"), "{committed}");
    let mut rest = data[..3].to_vec();
    rest[0] = rest[0].without(&[PointId(3)]).unwrap();
    assert_model(dir, rest);
    assert!(before.elapsed() < LIMIT);
}

#[test]
fn idle_connections_beyond_the_bound_are_closed_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = net::written_data(dir, "cli-net-idle", &HONEST);
    let extra = ["--k", "3", "--max-handshakes", "8"];
    let fed = Processes::start(dir, &HONEST, &HONEST, &extra, |_| None);
    fed.server.wait_for(|l| l.starts_with("model trained"));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // 400 connections that never say a byte: each learns within a second
    // whether the server keeps it (it waits for the handshake's 10 s) or
    // closed it.
    let closed = rt.block_on(async {
        let mut idle = Vec::new();
        for _ in 0..400 {
            idle.push(
                tokio::net::TcpStream::connect(("127.0.0.1", fed.port))
                    .await
                    .unwrap(),
            );
        }
        let mut closed = 0;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        for s in &mut idle {
            let mut byte = [0u8; 1];
            if let Ok(r) = tokio::time::timeout_at(deadline, s.read(&mut byte)).await {
                // End of stream or a reset: closed by the server.
                assert!(!matches!(r, Ok(n) if n > 0));
                closed += 1;
            }
        }
        // While the kept ones are still open, an honest removal is served.
        forget(dir, "c", "2");
        drop(idle);
        closed
    });
    assert!(closed >= 400 - 8, "only {closed} of 400 were closed");
    let mut rest = data;
    rest[2] = rest[2].without(&[PointId(2)]).unwrap();
    assert_model(dir, rest);
}

#[test]
fn one_connection_opens_a_bounded_number_of_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = gaussian_clients("cli-net-streams", Mixture::net(ROSTER.len()));
    let fed = Processes::start(dir, &ROSTER, &[], &["--k", "3"], |_| None);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // Mallory opens twelve sessions on one connection, each with its
    // Hello; the server answers at most the bound (4) of them while they
    // stay open.
    let answered = rt.block_on(async {
        let rpc = mufc_net::transport::connect(
            &format!("127.0.0.1:{}", fed.port),
            member_tls(&fed.certs, "mallory"),
        )
        .await
        .unwrap();
        let mut opened = tokio::task::JoinSet::new();
        let mut senders = Vec::new();
        for _ in 0..12 {
            let (tx, rx) = tokio::sync::mpsc::channel(4);
            tx.send(hello("mallory", data[3].len() as u64, 7))
                .await
                .unwrap();
            senders.push(tx);
            let mut rpc = rpc.clone();
            opened.spawn(async move {
                rpc.join(tokio_stream::wrappers::ReceiverStream::new(rx))
                    .await
                    .map(tonic::Response::into_inner)
            });
        }
        let mut answered = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
        while let Ok(Some(joined)) = tokio::time::timeout_at(deadline, opened.join_next()).await {
            // A stream beyond the bound is refused (REFUSED_STREAM) or
            // waits.
            if let Ok(stream) = joined.unwrap() {
                answered.push(stream);
            }
        }
        drop(senders);
        answered.len()
    });
    assert!((1..=4).contains(&answered), "{answered} sessions answered");
}
