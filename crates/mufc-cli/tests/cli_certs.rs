//! `mufc certs`: the files it writes make a mutually authenticated TLS 1.3
//! handshake between the server and a client (pumped in memory through
//! rustls), an authority read back from its directory issues more
//! clients, and nothing is overwritten without `--force`.
#![cfg(feature = "net")]
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;

use common::mufc;
use rustls::pki_types::ServerName;
use rustls::{ClientConnection, ServerConnection};

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

/// Runs the handshake of client `client` with the server of `dir`; the
/// claimed name is then checked as the server checks it.
fn handshake(dir: &Path, client: &str, claimed: &str) -> Result<String, String> {
    let ca = read(dir, "ca.pem");
    let server =
        mufc_net::tls::server_config(&ca, &read(dir, "server.pem"), &read(dir, "server-key.pem"))
            .unwrap();
    let cfg = mufc_net::tls::client_config(
        &ca,
        &read(dir, &format!("client-{client}.pem")),
        &read(dir, &format!("client-{client}-key.pem")),
    )
    .unwrap();
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let mut c = ClientConnection::new(cfg, name).map_err(|e| e.to_string())?;
    let mut s = ServerConnection::new(server).map_err(|e| e.to_string())?;
    for _ in 0..20 {
        let mut buf = Vec::new();
        c.write_tls(&mut buf).unwrap();
        let mut r = &buf[..];
        while !r.is_empty() {
            s.read_tls(&mut r).unwrap();
        }
        s.process_new_packets().map_err(|e| e.to_string())?;
        let mut buf = Vec::new();
        s.write_tls(&mut buf).unwrap();
        let mut r = &buf[..];
        while !r.is_empty() {
            c.read_tls(&mut r).unwrap();
        }
        c.process_new_packets().map_err(|e| e.to_string())?;
        if !c.is_handshaking() && !s.is_handshaking() {
            break;
        }
    }
    assert_eq!(s.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_3));
    mufc_net::tls::authenticate(s.peer_certificates(), claimed).map_err(|e| e.to_string())
}

/// `mufc certs` for `federation` into `dir`, issuing `clients`, with
/// `extra` options.
fn certs(dir: &Path, federation: &str, clients: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "certs",
        "--out-dir",
        dir.to_str().unwrap(),
        "--federation",
        federation,
        "--clients",
        clients,
    ];
    args.extend_from_slice(extra);
    mufc(&args)
}

/// As [`certs`], checking success.
fn certs_ok(dir: &Path, federation: &str, clients: &str, extra: &[&str]) -> Vec<u8> {
    let out = certs(dir, federation, clients, extra);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

#[test]
fn certs_make_a_mutually_authenticated_federation() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("certs");
    let stdout = certs_ok(&d, "three-hospitals", "a,b", &["--json"]);
    let j: serde_json::Value = serde_json::from_slice(&stdout).unwrap();
    // The authority, the server's pair, two clients' pairs, and the
    // federation file with the roster every party holds.
    assert_eq!(j["files"].as_array().unwrap().len(), 9);
    let file = mufc_net::federation_file::FederationFile::read(&d.join("federation.json")).unwrap();
    assert_eq!(file.roster, ["a", "b"]);
    assert_eq!(file.federation, "three-hospitals");
    #[cfg(unix)]
    for key in ["ca-key.pem", "server-key.pem", "client-a-key.pem"] {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d.join(key)).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "{key} is readable by others");
    }
    assert_eq!(handshake(&d, "a", "a").unwrap(), "a");
    assert!(handshake(&d, "a", "b").is_err());

    // The authority in the directory issues another client, which the
    // server of the first run accepts.
    let out = certs(&d, "three-hospitals", "c", &[]);
    assert!(out.status.success());
    assert_eq!(handshake(&d, "c", "c").unwrap(), "c");
    // The federation file is kept, and the operator told so.
    assert!(String::from_utf8_lossy(&out.stderr).contains("federation.json kept"));
    let kept = mufc_net::federation_file::FederationFile::read(&d.join("federation.json")).unwrap();
    assert_eq!(kept, file);

    // Nothing overwritten without --force; a bad name is refused before
    // anything is written.
    let before = read(&d, "client-a.pem");
    let out = certs(&d, "three-hospitals", "a", &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--force"));
    assert_eq!(read(&d, "client-a.pem"), before);
    let out = certs(&d, "three-hospitals", "d,bad.name", &[]);
    assert!(!out.status.success());
    assert!(!d.join("client-d.pem").exists());

    // Another federation's client does not get through this server.
    let other = dir.path().join("other");
    certs_ok(&other, "elsewhere", "a", &[]);
    std::fs::copy(other.join("client-a.pem"), d.join("client-x.pem")).unwrap();
    std::fs::copy(other.join("client-a-key.pem"), d.join("client-x-key.pem")).unwrap();
    assert!(handshake(&d, "x", "a").is_err());
}

#[test]
fn a_federation_file_with_dealt_masks_is_refused_until_a_dealer_process_exists() {
    // The library has the dealer's party (`mufc::remote::RemoteDealer`);
    // the deployment runs no dealer process yet, so a federation file
    // that agrees on dealt masks would leave every round without one.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("certs");
    let out = certs(&d, "dealt", "a,b,c", &["--masking", "dealer"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("dealer process"), "{err}");
    assert!(!d.join("federation.json").exists());
    certs_ok(&d, "dealt", "a,b,c", &["--masking", "pairwise", "--force"]);
}
