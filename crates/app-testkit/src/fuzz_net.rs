//! The fuzz bodies of `mufc-net`'s parsers: what
//! arrives from outside a party's process.
//!
//! - [`client_message`]: a client's message as the server decodes it
//!   (Hello, a removal request, a refusal, a SecAgg message, a signed
//!   first message), with the server's checks of a Hello
//!   ([`mufc_net::server::check_hello`]) and of a signature
//!   ([`mufc_net::endorse::verify`], against a real certificate);
//! - [`server_message`]: the server's message as a client decodes it,
//!   an announcement given to a client holding an agreement
//!   ([`mufc::remote::RemoteClient::join`]), a key directory's signed
//!   messages checked as a client checks them
//!   ([`mufc_net::endorse::FirstMessages`]);
//! - [`federation_file`] and [`revocation_list`]: the files the parties
//!   read, which must parse back to themselves once written.
//!
//! On any input: an error or a value, never a panic; what decodes encodes
//! back to bytes that decode to the same value.

use ::mufc::ClientId;
use ::mufc::remote::{Agreement, Announcement, RemoteClient};
use mufc_net::federation_file::FederationFile;
use mufc_net::proto::client_message::Body as Up;
use mufc_net::proto::server_message::Body as Down;
use mufc_net::proto::{ClientMessage, ServerMessage};
use mufc_net::revocation::RevocationList;
use nalgebra::DMatrix;
use prost::Message;
use seeding::Dataset;

/// A federation's authority and one client certificate (DER), made once
/// per process: the signatures and directories of the inputs are
/// checked against them.
fn federation() -> &'static (String, Vec<u8>) {
    static FED: std::sync::OnceLock<(String, Vec<u8>)> = std::sync::OnceLock::new();
    FED.get_or_init(|| {
        use rustls::pki_types::pem::PemObject;
        let ca = mufc_net::certs::FederationCa::new("fuzz").expect("authority");
        let c = ca.issue_client("c0").expect("client");
        let der =
            rustls::pki_types::CertificateDer::from_pem_slice(c.cert_pem.as_bytes()).expect("pem");
        (ca.cert_pem().to_string(), der.as_ref().to_vec())
    })
}

/// A client's message from any bytes: decoded, re-encoded to the same
/// value, a Hello checked as the server checks it, and a signed first
/// message's signature checked against a real certificate (which it
/// cannot match).
pub fn client_message(data: &[u8]) {
    let Ok(msg) = ClientMessage::decode(data) else {
        return;
    };
    let again = ClientMessage::decode(msg.encode_to_vec().as_slice()).expect("re-decode");
    assert_eq!(again, msg);
    if let Some(Up::Hello(hello)) = &msg.body
        && mufc_net::server::check_hello(hello).is_ok()
    {
        assert!(hello.dim >= 1 && hello.dim <= mufc_net::server::MAX_DIM);
        assert_eq!(hello.store.len(), 32);
    }
    if let Some(Up::First(signed)) = &msg.body {
        assert!(mufc_net::endorse::verify(&federation().1, signed).is_err());
    }
}

/// A server's message from any bytes: decoded, re-encoded to the same
/// value, and an announcement given to a client of twelve points that
/// holds an agreement on three clients in 2-D.
pub fn server_message(data: &[u8]) {
    let Ok(msg) = ServerMessage::decode(data) else {
        return;
    };
    let again = ServerMessage::decode(msg.encode_to_vec().as_slice()).expect("re-decode");
    assert_eq!(again, msg);
    if let Some(Down::Directory(d)) = &msg.body {
        let (ca, _) = federation();
        let check =
            mufc_net::endorse::FirstMessages::new(ca, Some(vec!["c0".into()])).expect("authority");
        // No input holds a valid signature by the certificate's key.
        assert!(d.firsts.is_empty() || check.check(&d.firsts).is_err());
    }
    let Some(Down::Announcement(bytes)) = &msg.body else {
        return;
    };
    let Ok(announcement) = Announcement::from_bytes(bytes) else {
        return;
    };
    let points = Dataset::new(DMatrix::from_fn(2, 12, |r, c| {
        ((c * 5 + r * 7) % 17) as f64 / 40.0 - 0.2
    }))
    .expect("data");
    let mut client = RemoteClient::new(ClientId(0), points).expect("client");
    client.agree(Agreement::new(3).dim(2));
    let joined = client.join(&announcement);
    if joined.is_ok() {
        // Whatever it joined lies inside the agreement.
        let setup = client.setup().expect("trained");
        assert!(Agreement::new(3).dim(2).check_setup(setup).is_ok());
    }
}

/// A federation file from any bytes: what parses writes back to text
/// that parses to the same file.
pub fn federation_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(file) = FederationFile::parse(text) {
        let written = file.to_json().expect("write");
        assert_eq!(FederationFile::parse(&written).expect("re-parse"), file);
    }
}

/// A revocation list from any bytes: what parses writes back to text
/// that parses to the same list.
pub fn revocation_list(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(list) = RevocationList::parse(text) {
        let written = list.to_text();
        assert_eq!(RevocationList::parse(&written).expect("re-parse"), list);
    }
}

/// The seed corpus of [`client_message`]: each kind of message, and a
/// Hello the server refuses.
pub(crate) fn client_seeds() -> Vec<(&'static str, Vec<u8>)> {
    use mufc_net::proto::{Forget, Hello, Refusal};
    let msg = |body: Up| ClientMessage { body: Some(body) }.encode_to_vec();
    let hello = Hello {
        protocol: 1,
        name: "st-marys".into(),
        points: 4000,
        dim: 2,
        scale: 3,
        store: vec![7; 32],
    };
    vec![
        ("hello", msg(Up::Hello(hello.clone()))),
        (
            "hello-no-store",
            msg(Up::Hello(Hello {
                store: Vec::new(),
                ..hello.clone()
            })),
        ),
        (
            "hello-huge-dim",
            msg(Up::Hello(Hello {
                dim: u64::MAX,
                ..hello
            })),
        ),
        (
            "forget",
            msg(Up::Forget(Forget {
                request: 17,
                asked_at: 0,
                empties: true,
            })),
        ),
        (
            "refusal",
            msg(Up::Refusal(Refusal {
                round: 3,
                reason: "outside the agreement".into(),
            })),
        ),
        ("secagg", msg(Up::Secagg(b"MUFC\x01garbage".to_vec()))),
        ("first", msg(Up::First(signed()))),
    ]
}

/// A signed first message with a signature of the right shape (an
/// ECDSA P-256 DER signature's length) that signs nothing: fixed bytes,
/// so that the corpus is the same at every generation.
fn signed() -> mufc_net::proto::Signed {
    let mut signature = vec![0x30, 0x44, 0x02, 0x20];
    signature.extend([7; 32]);
    signature.extend([0x02, 0x20]);
    signature.extend([9; 32]);
    mufc_net::proto::Signed {
        message: b"\x01keys of client 0".to_vec(),
        scheme: 0x0403,
        signature,
    }
}

/// The seed corpus of [`server_message`]: a welcome, a round's end, and
/// the announcement of a real round (its session fixed, so that the
/// corpus is the same at every generation) inside the agreement and one
/// outside it.
pub(crate) fn server_seeds() -> Vec<(&'static str, Vec<u8>)> {
    use ::mufc::remote::{Registration, RemoteServer, RemoteSetup};
    use ::mufc::{Channel, FederationConfig, Masks, SecAggOptions};
    use mufc_net::proto::{RoundEnd, Welcome};
    let msg = |body: Down| ServerMessage { body: Some(body) }.encode_to_vec();
    let regs: Vec<Registration> = (0..3)
        .map(|i| Registration {
            id: ClientId(i),
            points: 12,
            dim: 2,
            scale: 1,
        })
        .collect();
    let announce = |gamma: f64| {
        let config = FederationConfig::new(2)
            .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
            .gamma(gamma)
            .min_clients(3)
            .validate()
            .expect("config");
        let setup = RemoteSetup::new(&config, &regs).expect("setup");
        let mut server = RemoteServer::new(setup).expect("server");
        let ids: Vec<ClientId> = (0..3).map(ClientId).collect();
        let (mut announcement, _) = server.start_round(&ids).expect("round");
        announcement.spec.session = [5; 32];
        announcement.to_bytes().expect("bytes")
    };
    vec![
        (
            "welcome",
            msg(Down::Welcome(Welcome {
                client_id: 0,
                rounds: 4,
            })),
        ),
        (
            "end",
            msg(Down::End(RoundEnd {
                round: 2,
                committed: true,
                included: vec![0, 1, 2],
                detail: String::new(),
            })),
        ),
        (
            "served",
            msg(Down::Served(mufc_net::proto::Served {
                round: 2,
                request: 1,
            })),
        ),
        ("announcement", msg(Down::Announcement(announce(0.01)))),
        (
            "announcement-fine-grid",
            msg(Down::Announcement(announce(1e-6))),
        ),
        ("secagg", msg(Down::Secagg(vec![0; 40]))),
        (
            "directory",
            msg(Down::Directory(mufc_net::proto::Directory {
                secagg: vec![0; 40],
                firsts: vec![mufc_net::proto::Endorsed {
                    client_id: 0,
                    signed: Some(signed()),
                    certificate: b"\x30\x82\x01\x00 not a certificate".to_vec(),
                }],
            })),
        ),
    ]
}
