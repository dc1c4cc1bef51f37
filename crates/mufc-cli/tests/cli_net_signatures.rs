//! The server checks every signed first message against its sender's
//! certificate before it relays it (issue 28, item 8): `mallory`, a
//! member of the roster played by this test, trains honestly, then in the
//! removal round sends keys whose signature is not hers, dressed one way
//! drawn at random: a bit of the signature flipped, her keys signed with
//! another member's key, the signature left out, the message changed
//! after signing, or another scheme named. The server rejects the
//! message, saying why; mallory is a dropout at the first step, and the
//! honest clients finish the round. (Without the server's check the
//! server relays her message, every honest client refuses the directory,
//! and the round fails.)
#![cfg(all(unix, feature = "net"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use crate::common::net;

use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;

use crate::common::member::{Honest, hello, member_tls, open_session, up};
use mufc::remote::Announcement;
use mufc_net::proto::Signed;
use mufc_net::proto::client_message::Body as Up;
use mufc_net::proto::server_message::Body as Down;
use net::{LIMIT, Processes, assert_model, write_csv};
use rand::{RngExt, SeedableRng};
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

const HONEST: [&str; 4] = ["a", "b", "c", "d"];
const ROSTER: [&str; 5] = ["a", "b", "c", "d", "mallory"];

/// How mallory's keys come signed in the removal round.
#[derive(Clone, Copy, Debug)]
enum Forgery {
    FlippedBit,
    AnotherMembersKey,
    NoSignature,
    MessageChanged,
    AnotherScheme,
}

const FORGERIES: [Forgery; 5] = [
    Forgery::FlippedBit,
    Forgery::AnotherMembersKey,
    Forgery::NoSignature,
    Forgery::MessageChanged,
    Forgery::AnotherScheme,
];

/// Mallory's first message `first` of a round, signed as `forgery` says.
fn forged(forgery: Forgery, first: &[u8], certs: &std::path::Path) -> Signed {
    let key = |name: &str| {
        let pem = std::fs::read_to_string(certs.join(format!("client-{name}-key.pem"))).unwrap();
        mufc_net::endorse::Endorser::from_key_pem(&pem).unwrap()
    };
    let mut signed = key("mallory").sign(first).unwrap();
    match forgery {
        Forgery::FlippedBit => signed.signature[7] ^= 0x10,
        Forgery::AnotherMembersKey => signed = key("b").sign(first).unwrap(),
        Forgery::NoSignature => signed.signature.clear(),
        Forgery::MessageChanged => {
            let last = signed.message.len() - 1;
            signed.message[last] ^= 1;
        }
        Forgery::AnotherScheme => {
            signed.scheme = u32::from(u16::from(rustls::SignatureScheme::ECDSA_NISTP384_SHA384));
        }
    }
    signed
}

/// Mallory: honest in training, then `forgery` in every later round.
fn mallory(
    port: u16,
    certs: PathBuf,
    data: Dataset,
    forgery: Forgery,
    said: std_mpsc::Sender<u64>,
) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let tls = member_tls(&certs, "mallory");
        let mut rpc = mufc_net::transport::connect(&format!("127.0.0.1:{port}"), tls)
            .await
            .unwrap();
        let first = hello("mallory", data.len() as u64, 9);
        let (tx, mut inbound) = open_session(&mut rpc, first, 16).await;
        let mut honest = Honest::new(data.clone(), &certs, "mallory");
        let mut party = None;
        while let Ok(Ok(Some(msg))) = tokio::time::timeout(LIMIT, inbound.message()).await {
            let body = msg.body.unwrap();
            if let Down::Welcome(w) = &body {
                party = Some(mufc::ClientId(w.client_id));
            }
            if let Down::Announcement(bytes) = &body {
                let a = Announcement::from_bytes(bytes).unwrap();
                if a.spec.round > 0 {
                    // Her real keys of this round, signed wrong.
                    let mut me =
                        mufc::remote::RemoteClient::new(party.unwrap(), data.clone()).unwrap();
                    let (_, first) = me.join(&a).unwrap();
                    let first = first.expect("a SecAgg client sends its keys first");
                    tx.send(up(Up::First(forged(forgery, &first, &certs))))
                        .await
                        .unwrap();
                    said.send(a.spec.round).unwrap();
                    continue;
                }
            }
            if let Some(reply) = honest.answer(body) {
                tx.send(reply).await.unwrap();
            }
        }
    });
}

#[test]
fn the_server_rejects_keys_not_signed_by_their_sender() {
    let seed: u64 = rand::rng().random();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let forgery = FORGERIES[rng.random_range(0..FORGERIES.len())];
    eprintln!("seed {seed}: {forgery:?}");
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let data = gaussian_clients("cli-net-signatures", Mixture::net(ROSTER.len()));
    for (name, d) in HONEST.iter().zip(&data) {
        write_csv(dir, name, d);
    }
    let extra = ["--k", "3", "--dropout", "0.2", "--step-timeout", "3"];
    let fed = Processes::start(dir, &ROSTER, &HONEST, &extra, |_| None);
    let (server, port) = (&fed.server, fed.port);
    let (said_tx, said) = std_mpsc::channel();
    let (c, d) = (fed.certs.clone(), data[4].clone());
    std::thread::spawn(move || mallory(port, c, d, forgery, said_tx));
    server.wait_for(|l| l.contains("committed (training): included 0,1,2,3,4"));

    net::forget(dir, "b", "7");
    let round = said.recv_timeout(LIMIT).unwrap();
    let committed = server.wait_for(|l| l.starts_with(&format!("round {round} committed")));
    assert!(
        committed.contains("included 0,1,2,3, dropped 4"),
        "{forgery:?}: {committed}"
    );
    let rejected = server
        .log()
        .into_iter()
        .find(|l| l.starts_with("rejected a message of client 4"))
        .unwrap_or_else(|| panic!("{forgery:?}: {:?}", server.log()));
    assert!(rejected.contains("signature"), "{forgery:?}: {rejected}");
    // No honest client saw a directory it had to refuse.
    for c in &fed.clients {
        assert!(
            !c.log().iter().any(|l| l.contains("key directory")),
            "{forgery:?}: {:?}",
            c.log()
        );
    }
    let mut rest = data[..4].to_vec();
    rest[1] = rest[1].without(&[PointId(7)]).unwrap();
    assert_model(dir, rest);
}
