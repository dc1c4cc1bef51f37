//! Attackers against a running federation of processes (issue 15): the
//! server, four honest client processes, and in this test's process:
//!
//! - a client without a certificate, and an impostor holding another
//!   federation's certificate for an honest client's name: neither gets a
//!   byte of the protocol, nor disturbs the federation;
//! - `mallory`, a member of the roster with a valid certificate, which
//!   trains honestly, then in the next round sends garbage, replays its
//!   message of the earlier round, and falls silent on an open session;
//!   and a second connection of hers that sends garbage instead of HTTP/2.
//!
//! The round completes with the honest clients (mallory dropped at the
//! step's deadline), the removal it serves is acknowledged, and the model
//! is exactly the in-process federation's over the clients included.
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::Duration;

use mufc::ClientId;
use mufc::remote::{Announcement, RemoteClient};
use mufc_net::proto::client_message::Body as Up;
use mufc_net::proto::server_message::Body as Down;
use mufc_net::proto::{ClientMessage, Directory, Hello};
use net::{LIMIT, Proc, Processes, assert_model, client_args, write_csv};
use rustls::pki_types::ServerName;
use rustls::pki_types::pem::PemObject;
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const HONEST: [&str; 4] = ["a", "b", "c", "d"];
const ROSTER: [&str; 5] = ["a", "b", "c", "d", "mallory"];

/// What mallory tells the test.
#[derive(Debug, PartialEq)]
enum Said {
    Trained,
    Attacked(u64),
}

/// Mallory: honest in round 0, then garbage, a replay of her round-0
/// message, and silence on an open session.
fn mallory(port: u16, certs: std::path::PathBuf, data: Dataset, said: std_mpsc::Sender<Said>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let tls = crate::common::member::member_tls(&certs, "mallory");
        let mut rpc = mufc_net::transport::connect(&format!("127.0.0.1:{port}"), tls)
            .await
            .unwrap();
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let up = |b: Up| ClientMessage { body: Some(b) };
        tx.send(up(Up::Hello(Hello {
            protocol: 1,
            name: "mallory".into(),
            points: data.len() as u64,
            dim: 2,
            scale: 1,
            store: vec![7; 32],
        })))
        .await
        .unwrap();
        let mut inbound = rpc
            .join(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        let key = std::fs::read_to_string(certs.join("client-mallory-key.pem")).unwrap();
        let endorser = mufc_net::endorse::Endorser::from_key_pem(&key).unwrap();
        let mut party = None;
        let mut half = None;
        let mut captured = None;
        while let Ok(Ok(Some(msg))) = tokio::time::timeout(LIMIT, inbound.message()).await {
            match msg.body.unwrap() {
                Down::Welcome(w) => {
                    party = Some(RemoteClient::new(ClientId(w.client_id), data.clone()).unwrap());
                }
                Down::Announcement(bytes) => {
                    let a = Announcement::from_bytes(&bytes).unwrap();
                    if a.spec.round == 0 {
                        let (h, first) = party.as_mut().unwrap().join(&a).unwrap();
                        let first = first.expect("a SecAgg client sends its keys first");
                        let signed = endorser.sign(&first).unwrap();
                        captured = Some(signed.clone());
                        half = Some(h);
                        tx.send(up(Up::First(signed))).await.unwrap();
                    } else {
                        // Signed by her: the server checks what is inside.
                        let garbage = endorser.sign(b"\x00garbage, not an envelope").unwrap();
                        tx.send(up(Up::First(garbage))).await.unwrap();
                        tx.send(up(Up::First(captured.clone().unwrap())))
                            .await
                            .unwrap();
                        said.send(Said::Attacked(a.spec.round)).unwrap();
                        // Silent from here on, the session kept open.
                    }
                }
                Down::Secagg(bytes) | Down::Directory(Directory { secagg: bytes, .. }) => {
                    if let Some(h) = half.as_mut() {
                        let reply = h.handle(&bytes).unwrap();
                        tx.send(up(Up::Secagg(reply))).await.unwrap();
                    }
                }
                Down::End(end) => {
                    if end.round == 0 {
                        assert!(end.committed);
                        party.as_mut().unwrap().commit(half.take().unwrap());
                        said.send(Said::Trained).unwrap();
                    }
                }
                // No client joins or leaves in this federation.
                Down::Admission(_) | Down::Departures(_) | Down::Withdrawn(_) | Down::Served(_) => {
                }
            }
        }
    });
}

/// A TLS connection to the server with `config`: the first bytes it
/// answers to `bytes` (empty on a refused handshake or a closed
/// connection).
fn answer(port: u16, config: Arc<rustls::ClientConfig>, bytes: &[u8]) -> Vec<u8> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        let name = ServerName::try_from("server.mufc").unwrap();
        let Ok(mut tls) = tokio_rustls::TlsConnector::from(config)
            .connect(name, tcp)
            .await
        else {
            return Vec::new();
        };
        let _ = tls.write_all(bytes).await;
        let mut out = vec![0; 4096];
        match tokio::time::timeout(Duration::from_secs(5), tls.read(&mut out)).await {
            Ok(Ok(n)) => out.into_iter().take(n).collect(),
            _ => Vec::new(),
        }
    })
}

#[test]
fn attackers_get_nothing_and_the_honest_clients_are_not_disturbed() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let other = net::certs(dir, "other", "elsewhere", &["a"]);
    let data = gaussian_clients("cli-net-attacks", Mixture::net(ROSTER.len()));
    for (name, d) in HONEST.iter().zip(&data) {
        write_csv(dir, name, d);
    }
    let extra = ["--k", "3", "--dropout", "0.2", "--step-timeout", "3"];
    let fed = Processes::start(dir, &ROSTER, &HONEST, &extra, |_| None);
    let (server, port, certs) = (&fed.server, fed.port, fed.certs.clone());
    let (said_tx, said) = std_mpsc::channel();
    let (c, d) = (certs.clone(), data[4].clone());
    std::thread::spawn(move || mallory(port, c, d, said_tx));
    assert_eq!(said.recv_timeout(LIMIT).unwrap(), Said::Trained);
    server.wait_for(|l| l.contains("committed (training): included 0,1,2,3,4"));

    // No certificate: the handshake fails, not one byte of HTTP/2.
    let ca_pem = std::fs::read_to_string(certs.join("ca.pem")).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let anonymous = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13])
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let preface = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    assert!(answer(port, Arc::new(anonymous), preface).is_empty());
    // The control: with a certificate of the federation, the same bytes
    // get the server's HTTP/2 settings.
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).unwrap();
    let mtls = mufc_net::tls::client_config(
        &ca_pem,
        &read(certs.join("client-mallory.pem")),
        &read(certs.join("client-mallory-key.pem")),
    )
    .unwrap();
    assert!(!answer(port, mtls.clone(), preface).is_empty());

    // Another federation's certificate for client a's name, trusting our
    // server: refused at the handshake, never connected.
    let impostor = mufc_net::tls::client_config(
        &ca_pem,
        &read(other.join("client-a.pem")),
        &read(other.join("client-a-key.pem")),
    )
    .unwrap();
    assert!(answer(port, impostor, preface).is_empty());
    write_csv(dir, "impostor", &data[0]);
    let mut args = client_args(port, &other, "a");
    args[4] = "impostor.csv".into();
    args[8] = "impostor.db".into();
    args.push("--ca".into());
    args.push(certs.join("ca.pem").to_str().unwrap().into());
    let impostor = Proc::start("impostor", dir, &args, &[]);

    // Mallory's second connection sends garbage instead of HTTP/2 (what
    // comes back does not matter: the federation must go on).
    answer(port, mtls, &[0xAB; 512]);

    // A removal: mallory attacks its round, the honest clients finish it.
    net::forget(dir, "b", "7");
    let Said::Attacked(round) = said.recv_timeout(LIMIT).unwrap() else {
        panic!("mallory did not attack")
    };
    let committed = server.wait_for(|l| l.starts_with(&format!("round {round} committed")));
    assert!(
        committed.contains("included 0,1,2,3, dropped 4"),
        "{committed}"
    );
    let rejected = server
        .log()
        .iter()
        .filter(|l| l.starts_with("rejected a message of client 4"))
        .count();
    assert!(rejected >= 2, "{:?}", server.log());
    assert!(
        !impostor.log().iter().any(|l| l.contains("connected as")),
        "{:?}",
        impostor.log()
    );
    // Client a connected once: the impostor never replaced its session.
    let a_sessions = server
        .log()
        .iter()
        .filter(|l| l.starts_with("client 0 (a) connected"))
        .count();
    assert_eq!(a_sessions, 1, "{:?}", server.log());

    // Exactly the federation of the included clients' points.
    let mut rest = data[..4].to_vec();
    rest[1] = rest[1].without(&[PointId(7)]).unwrap();
    assert_model(dir, rest);
}
