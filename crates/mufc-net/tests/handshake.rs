//! Mutual TLS between real sockets on 127.0.0.1 (issue 15's
//! authentication tests, at the transport): a test server that accepts a
//! connection only through `tls::server_config`, then reads the name the
//! client claims and answers `ok <name>` only if `tls::authenticate`
//! ties the certificate to it. Each attacker below tries to get an `ok`
//! (or any byte) it should not, and the server keeps serving honest
//! clients after every attempt.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mufc_net::certs::{FederationCa, Issued};
use mufc_net::tls::{authenticate, client_config, server_config};
use rustls::pki_types::ServerName;
use rustls::pki_types::pem::PemObject;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, TlsConnector};

/// Bounds every network step: the tests stop by themselves.
const STEP: Duration = Duration::from_secs(10);

/// The test server's counters.
#[derive(Default, Debug)]
struct Counts {
    handshakes_refused: AtomicUsize,
    authenticated: AtomicUsize,
    names_refused: AtomicUsize,
}

/// Serves until the test ends: one task per connection.
async fn serve(ca: &FederationCa) -> (SocketAddr, Arc<Counts>) {
    let s = ca.issue_server(&["127.0.0.1"]).unwrap();
    let acceptor =
        TlsAcceptor::from(server_config(ca.cert_pem(), &s.cert_pem, &s.key_pem).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let counts = Arc::new(Counts::default());
    let c = Arc::clone(&counts);
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, c) = (acceptor.clone(), Arc::clone(&c));
            tokio::spawn(async move {
                let Ok(Ok(tls)) = tokio::time::timeout(STEP, acceptor.accept(tcp)).await else {
                    c.handshakes_refused.fetch_add(1, Ordering::SeqCst);
                    return;
                };
                let peer: Option<Vec<_>> = tls.get_ref().1.peer_certificates().map(<[_]>::to_vec);
                let mut tls = BufReader::new(tls);
                let mut claimed = String::new();
                if tokio::time::timeout(STEP, tls.read_line(&mut claimed))
                    .await
                    .is_err()
                {
                    return;
                }
                let reply = match authenticate(peer.as_deref(), claimed.trim()) {
                    Ok(name) => {
                        c.authenticated.fetch_add(1, Ordering::SeqCst);
                        format!("ok {name}\n")
                    }
                    Err(e) => {
                        c.names_refused.fetch_add(1, Ordering::SeqCst);
                        format!("refused: {e}\n")
                    }
                };
                let _ = tls.get_mut().write_all(reply.as_bytes()).await;
                let _ = tls.get_mut().shutdown().await;
            });
        }
    });
    (addr, counts)
}

/// Connects with `config`, claims `name`, and returns what the server
/// sent (an error or an empty answer when the connection was refused).
async fn claim(
    addr: SocketAddr,
    config: Arc<rustls::ClientConfig>,
    name: &str,
) -> Result<String, String> {
    let tcp = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    let server = ServerName::IpAddress(addr.ip().into());
    let connector = TlsConnector::from(config);
    let mut tls = tokio::time::timeout(STEP, connector.connect(server, tcp))
        .await
        .map_err(|_| "timeout".to_string())?
        .map_err(|e| e.to_string())?;
    // TLS 1.3: a client whose certificate the server refuses only learns
    // it on its first read.
    tls.write_all(format!("{name}\n").as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut answer = String::new();
    tokio::time::timeout(STEP, tls.read_to_string(&mut answer))
        .await
        .map_err(|_| "timeout".to_string())?
        .map_err(|e| e.to_string())?;
    Ok(answer)
}

fn config_of(ca: &FederationCa, c: &Issued) -> Arc<rustls::ClientConfig> {
    client_config(ca.cert_pem(), &c.cert_pem, &c.key_pem).unwrap()
}

#[tokio::test]
async fn only_the_federations_clients_get_an_answer_and_only_as_themselves() {
    let ca = FederationCa::new("three-hospitals").unwrap();
    let (addr, counts) = serve(&ca).await;
    let a = ca.issue_client("hospital-a").unwrap();
    let honest = || claim(addr, config_of(&ca, &a), "hospital-a");
    assert_eq!(honest().await.unwrap(), "ok hospital-a\n");

    // A client of the federation claiming to be another: refused by name.
    let answer = claim(addr, config_of(&ca, &a), "hospital-b").await.unwrap();
    assert!(answer.starts_with("refused"), "{answer}");

    // No client certificate: the handshake fails, no byte of the
    // application comes back.
    let anonymous = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_protocol_versions(&[&rustls::version::TLS13])
    .unwrap()
    .with_root_certificates({
        let mut r = rustls::RootCertStore::empty();
        for c in rustls::pki_types::CertificateDer::pem_slice_iter(ca.cert_pem().as_bytes()) {
            r.add(c.unwrap()).unwrap();
        }
        r
    })
    .with_no_client_auth();
    let r = claim(addr, Arc::new(anonymous), "hospital-a").await;
    assert!(r.is_err() || r.as_deref() == Ok(""), "{r:?}");

    // A client of another federation (it trusts ours, to get that far):
    // its certificate does not verify, whatever name it carries.
    let other = FederationCa::new("elsewhere").unwrap();
    let stranger = other.issue_client("hospital-a").unwrap();
    let cfg = client_config(ca.cert_pem(), &stranger.cert_pem, &stranger.key_pem).unwrap();
    let r = claim(addr, cfg, "hospital-a").await;
    assert!(r.is_err() || r.as_deref() == Ok(""), "{r:?}");

    // A client that trusts another authority refuses our server: it does
    // not send its name to a server it cannot verify.
    let mine = other.issue_client("hospital-a").unwrap();
    let r = claim(addr, config_of(&other, &mine), "hospital-a").await;
    assert!(r.is_err(), "{r:?}");

    // Garbage instead of a handshake: dropped.
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(b"\x16\x03\x01\x00\x05hello, this is not TLS at all")
        .await
        .unwrap();
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(STEP, tcp.read_to_end(&mut buf)).await;
    assert!(!String::from_utf8_lossy(&buf).contains("ok"));

    // The honest client is still served.
    assert_eq!(honest().await.unwrap(), "ok hospital-a\n");
    // The authority read back from its key issues a client the server
    // (which trusts the certificate written at creation) accepts.
    let again = FederationCa::from_key_pem("three-hospitals", &ca.key_pem()).unwrap();
    let b = again.issue_client("hospital-b").unwrap();
    let answer = claim(addr, config_of(&ca, &b), "hospital-b").await.unwrap();
    assert_eq!(answer, "ok hospital-b\n");
    // Let the server's tasks count the last refusals.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(counts.authenticated.load(Ordering::SeqCst), 3);
    assert_eq!(counts.names_refused.load(Ordering::SeqCst), 1);
    // Anonymous, stranger, the client that refused us, garbage.
    assert_eq!(counts.handshakes_refused.load(Ordering::SeqCst), 4);
}

#[test]
fn authenticate_refuses_what_the_handshake_did_not_tie_to_the_name() {
    let ca = FederationCa::new("fed").unwrap();
    let a = ca.issue_client("a").unwrap();
    let der: Vec<_> = rustls::pki_types::CertificateDer::pem_slice_iter(a.cert_pem.as_bytes())
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(authenticate(Some(&der), "a").unwrap(), "a");
    for (peer, name) in [
        (Some(&der[..]), "b"),
        (Some(&der[..]), "a.client.mufc"),
        (Some(&der[..]), ""),
        (None, "a"),
        (Some(&[][..]), "a"),
    ] {
        assert!(
            authenticate(peer, name).is_err(),
            "{name:?} {}",
            peer.is_some()
        );
    }
    // Garbage where a certificate should be.
    let junk = vec![rustls::pki_types::CertificateDer::from(vec![
        0x30, 0x03, 1, 2, 3,
    ])];
    assert!(authenticate(Some(&junk), "a").is_err());
}

/// Issued certificates expire (issue 28, item 11: they ran to the year
/// 4096, so a stolen client key was good for ever): a year by default,
/// what the authority was told otherwise, each checked by rustls's own
/// verifiers at dates around the ends of the validity.
#[test]
fn an_issued_certificate_is_valid_for_its_validity_only() {
    use rustls::client::WebPkiServerVerifier;
    use rustls::client::danger::ServerCertVerifier;
    use rustls::pki_types::{CertificateDer, UnixTime};
    use rustls::server::WebPkiClientVerifier;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let day = 86_400u64;
    let at = |days_after: i64| {
        let secs = now.checked_add_signed(days_after * 86_400).unwrap();
        UnixTime::since_unix_epoch(Duration::from_secs(secs))
    };
    for (ca, days) in [
        (FederationCa::new("expiry").unwrap(), 365i64),
        (
            FederationCa::new("expiry")
                .unwrap()
                .validity(Duration::from_secs(30 * day))
                .unwrap(),
            30,
        ),
    ] {
        let der = |pem: &str| CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(der(ca.cert_pem())).unwrap();
        let roots = Arc::new(roots);
        let servers = WebPkiServerVerifier::builder_with_provider(roots.clone(), provider.clone())
            .build()
            .unwrap();
        let clients = WebPkiClientVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .unwrap();
        let server = der(&ca.issue_server(&["127.0.0.1"]).unwrap().cert_pem);
        let client = der(&ca.issue_client("a").unwrap().cert_pem);
        let name = ServerName::try_from("server.mufc").unwrap();
        let server_ok = |t| {
            servers
                .verify_server_cert(&server, &[], &name, &[], t)
                .is_ok()
        };
        let client_ok = |t| clients.verify_client_cert(&client, &[], t).is_ok();
        for (when, valid) in [(-1, false), (0, true), (days - 1, true), (days + 1, false)] {
            assert_eq!(
                server_ok(at(when)),
                valid,
                "server, {days} days, at day {when}"
            );
            assert_eq!(
                client_ok(at(when)),
                valid,
                "client, {days} days, at day {when}"
            );
        }
    }
    // No time at all, or more than ten years, is refused.
    let ca = FederationCa::new("expiry").unwrap();
    assert!(ca.validity(Duration::ZERO).is_err());
    let ca = FederationCa::new("expiry").unwrap();
    assert!(ca.validity(Duration::from_secs(11 * 366 * day)).is_err());
}
