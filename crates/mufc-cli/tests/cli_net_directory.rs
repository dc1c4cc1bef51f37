//! A server that forges the key directory (issue 28, item 8): real `mufc
//! client` processes connect to a malicious server played by the test,
//! which runs the protocol with them but, in the directory it sends one
//! victim, puts keys of its own in place of a peer's. Every way it can
//! dress the forgery (the peer's genuine signature left on, the keys
//! re-signed with another member's key and certificate, the signature
//! left out, a signature of garbage, no signatures at all) is tried, and
//! the victim must send nothing more in that round: no share encrypted
//! to the forged keys, no masked input. The same server relaying the
//! genuine directory is answered (the control). Which client is the
//! victim and whose keys are replaced are drawn at random (named in
//! every failure message).
#![cfg(all(unix, feature = "net"))]
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation
)]

use std::collections::BTreeMap;
use std::time::Duration;

use crate::common::evil::Evil;
use crate::common::net::{self, Proc};
use mufc::ClientId;
use mufc::remote::RoundStep;
use mufc_net::endorse::Endorser;
use mufc_net::proto::client_message::Body as Up;
use mufc_net::proto::server_message::Body as Down;
use mufc_net::proto::{Directory, Endorsed};
use rand::{RngExt, SeedableRng};
use syndrome_agg::masking::pairwise::{RoundContext, SessionId};
use syndrome_agg::secagg::messages::{
    AdvertiseKeys, ClientBody, ClientEnvelope, ServerBody, ServerEnvelope,
};

const ROSTER: [&str; 3] = ["a", "b", "c"];

/// How the server dresses the keys it puts in the peer's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Forgery {
    /// No forgery: the genuine directory and signatures (the control).
    None,
    /// The peer's genuine signed message left on.
    GenuineSignatureKept,
    /// The forged keys signed with another member's key, relayed with
    /// that member's certificate in the peer's name.
    ResignedByAnotherMember,
    /// The peer's signed message left out.
    SignatureOmitted,
    /// The forged keys with the peer's certificate and a signature over
    /// something else.
    BadSignature,
    /// A bare directory, as before signed directories.
    Unsigned,
}

const FORGERIES: [Forgery; 6] = [
    Forgery::None,
    Forgery::GenuineSignatureKept,
    Forgery::ResignedByAnotherMember,
    Forgery::SignatureOmitted,
    Forgery::BadSignature,
    Forgery::Unsigned,
];

/// The directory the victim gets with `forgery`: the genuine one
/// (`msg`, `firsts`) with `peer`'s keys replaced by the server's own.
fn forge(
    forgery: Forgery,
    msg: &[u8],
    firsts: &BTreeMap<ClientId, Endorsed>,
    peer: ClientId,
    other: (ClientId, &Endorser),
    rng: &mut rand_chacha::ChaCha8Rng,
) -> Down {
    let genuine: Vec<Endorsed> = firsts.values().cloned().collect();
    if forgery == Forgery::None {
        return Down::Directory(Directory {
            secagg: msg.to_vec(),
            firsts: genuine,
        });
    }
    let mut env = ServerEnvelope::parse(msg, 1 << 24).unwrap();
    let ServerBody::KeyDirectory(d) = &mut env.body else {
        panic!("not a key directory");
    };
    // Keys whose secrets the server holds (any 32 bytes are an X25519
    // public key; these are not of low order with overwhelming odds).
    let forged = AdvertiseKeys {
        enc_key: rng.random(),
        mask_key: rng.random(),
        seed_commitment: rng.random(),
    };
    for (id, keys) in &mut d.entries {
        if *id == peer.0 {
            *keys = forged;
        }
    }
    let directory = env.to_bytes().unwrap();
    if forgery == Forgery::Unsigned {
        return Down::Secagg(directory);
    }
    let ctx = RoundContext {
        session: SessionId(env.session),
        round: env.round,
    };
    let forged_first = ClientEnvelope::new(&ctx, peer.0, ClientBody::AdvertiseKeys(forged))
        .to_bytes()
        .unwrap();
    let mut endorsed: Vec<Endorsed> = Vec::new();
    for e in genuine {
        if e.client_id != peer.0 {
            endorsed.push(e);
            continue;
        }
        match forgery {
            Forgery::GenuineSignatureKept => endorsed.push(e),
            Forgery::ResignedByAnotherMember => endorsed.push(Endorsed {
                client_id: peer.0,
                signed: Some(other.1.sign(&forged_first).unwrap()),
                certificate: firsts[&other.0].certificate.clone(),
            }),
            Forgery::SignatureOmitted => {}
            Forgery::BadSignature => {
                let mut s = e.signed.clone().unwrap();
                s.message = forged_first.clone();
                endorsed.push(Endorsed {
                    signed: Some(s),
                    ..e
                });
            }
            Forgery::None | Forgery::Unsigned => unreachable!(),
        }
    }
    Down::Directory(Directory {
        secagg: directory,
        firsts: endorsed,
    })
}

#[test]
fn a_client_refuses_a_key_directory_the_server_forged() {
    let seed: u64 = rand::rng().random();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let victim = ClientId(rng.random_range(0..3));
    let peer = ClientId((victim.0 + rng.random_range(1..3)) % 3);
    let other = ClientId(3 - victim.0 - peer.0);
    let case = format!("seed {seed}: victim {victim}, forged peer {peer}, other member {other}");

    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    net::written_data(dir, "cli-net-directory", &ROSTER);
    let certs = net::certs(dir, "certs", "hospitals", &ROSTER);
    let port = net::free_port();
    let other_key = Endorser::from_key_pem(
        &std::fs::read_to_string(
            certs.join(format!("client-{}-key.pem", ROSTER[other.0 as usize])),
        )
        .unwrap(),
    )
    .unwrap();
    let mut clients = Vec::new();
    let mut evil = Evil::start(port, &certs, &ROSTER, || {
        clients = ROSTER
            .iter()
            .map(|n| Proc::start(n, dir, &net::client_args(port, &certs, n), &[]))
            .collect();
    });
    let ids = evil.ids();
    let mut answered = Vec::new();
    for forgery in FORGERIES {
        let (_, mut round) = evil.announce(&ids);
        let number = round.spec().round;
        let firsts = evil.firsts(&ids, &mut round).unwrap();
        let RoundStep::Send(msgs) = round.advance().unwrap() else {
            panic!("{case}: no key directory");
        };
        let msg = msgs.into_iter().find(|(to, _)| *to == victim).unwrap().1;
        let body = forge(forgery, &msg, &firsts, peer, (other, &other_key), &mut rng);
        evil.send(victim, body);
        // The victim's shares, if it took the directory: a share
        // encrypted to the forged keys would be the server's to open.
        let reply = evil.next(victim, Duration::from_secs(5));
        // A refused directory is said to the server at once (it stops
        // waiting for the victim), for this round.
        let refused = matches!(&reply, Some(Up::Refusal(r)) if r.round == number);
        answered.push((forgery, matches!(reply, Some(Up::Secagg(_))), refused));
        evil.end(&ids, number, false, &[]);
    }
    for (forgery, yes, refused) in &answered {
        assert_eq!(*yes, *forgery == Forgery::None, "{case}: {forgery:?}");
        assert_eq!(*refused, *forgery != Forgery::None, "{case}: {forgery:?}");
    }
    // The victim says why, and names the peer whose keys were replaced:
    // in its log, which may print the last refusal after the server heard
    // it (waited for, bounded).
    let victim_proc = &clients[victim.0 as usize];
    for why in [
        format!("gives client {peer} keys it did not sign"),
        format!("message of client {peer} is refused"),
        "came without its clients' signed messages".to_string(),
    ] {
        eprintln!("{case}: waiting for {why:?}");
        victim_proc.wait_for(|l| l.contains(&why));
    }
}
