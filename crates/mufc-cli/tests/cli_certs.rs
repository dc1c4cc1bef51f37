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

/// `mufc certs --masking dealer` writes the dealer's certificate and a
/// secret key file for every party, and the federation file pins each
/// one's public key; a file that agrees on dealt masks without the keys,
/// or names keys for another masking, is refused.
#[test]
fn a_federation_file_with_dealt_masks_pins_every_partys_mask_key() {
    use mufc_net::federation_file::{FederationFile, parse_key};
    use syndrome_agg::masking::pairwise::MaskKeyPair;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("certs");
    certs_ok(&d, "dealt", "a,b,c", &["--masking", "dealer"]);
    assert!(d.join("dealer.pem").exists() && d.join("dealer-key.pem").exists());
    let text = std::fs::read_to_string(d.join("federation.json")).unwrap();
    let keys = FederationFile::parse(&text).unwrap().mask_keys.unwrap();
    let public = |file: &str| {
        let secret = parse_key(&std::fs::read_to_string(d.join(file)).unwrap()).unwrap();
        MaskKeyPair::from_secret_bytes(secret).public_key()
    };
    assert_eq!(public("dealer-mask.key"), keys.dealer.0);
    for (i, c) in ["a", "b", "c"].iter().enumerate() {
        assert_eq!(
            public(&format!("client-{c}-mask.key")),
            keys.clients[i].0,
            "{c}"
        );
    }
    let mut all: Vec<_> = keys.clients.iter().map(|k| k.0).collect();
    all.push(keys.dealer.0);
    all.sort_by_key(|k| k.0);
    all.dedup();
    assert_eq!(all.len(), 4, "every party's key is its own");

    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let pinned = json.as_object_mut().unwrap().remove("mask_keys").unwrap();
    let err = FederationFile::parse(&json.to_string()).unwrap_err();
    assert!(err.to_string().contains("mask_keys"), "{err}");
    json["mask_keys"] = pinned;
    json["policy"]["masking"] = "Pairwise".into();
    let err = FederationFile::parse(&json.to_string()).unwrap_err();
    assert!(err.to_string().contains("mask_keys"), "{err}");
}
