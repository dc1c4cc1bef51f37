//! The fuzz body of the remote parties' pairwise round: bytes from
//! outside given to the server at either step, or to a client as its key
//! directory. On any input the parties return an error or take the
//! message, never panic, and a refused message changes nothing: the
//! honest message is taken after it, and the round completes.
//!
//! Written against the public API only (`mufc::remote`).

use ::mufc::remote::{
    Announcement, ClientRound, Registration, RemoteClient, RemoteServer, RemoteSetup, RoundStep,
    ServerRound,
};
use ::mufc::{Channel, ClientId, FederationConfig, Masks};
use nalgebra::DMatrix;
use seeding::Dataset;

/// Client `l` of twelve points in 2-D.
fn client(l: usize) -> RemoteClient {
    let data = Dataset::new(DMatrix::from_fn(2, 12, |r, c| {
        ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2
    }))
    .expect("data");
    RemoteClient::new(ClientId(l as u64), data).expect("client")
}

/// Three clients of twelve points in 2-D, pairwise masks.
fn parties() -> (RemoteServer, Vec<RemoteClient>) {
    let clients: Vec<RemoteClient> = (0..3).map(client).collect();
    let config = FederationConfig::new(2)
        .channel(Channel::scma(Masks::Pairwise))
        .gamma(0.05)
        .seed(3)
        .validate()
        .expect("config");
    let regs: Vec<Registration> = clients.iter().map(RemoteClient::registration).collect();
    let setup = RemoteSetup::new(&config, &regs).expect("setup");
    (RemoteServer::new(setup).expect("server"), clients)
}

/// The round started and every client joined: the server's half, the
/// clients' halves and their first messages (their keys).
fn joined(
    server: &mut RemoteServer,
    clients: &mut [RemoteClient],
) -> (ServerRound, Vec<ClientRound>, Vec<Vec<u8>>) {
    let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
    let (announcement, round) = server.start_round(&ids).expect("start");
    let bytes = announcement.to_bytes().expect("announcement");
    let mut halves = Vec::new();
    let mut keys = Vec::new();
    for c in clients.iter_mut() {
        let (half, first) = c
            .join(&Announcement::from_bytes(&bytes).expect("parse"))
            .expect("join");
        halves.push(half);
        keys.push(first.expect("a pairwise client sends its key first"));
    }
    (round, halves, keys)
}

/// `data[0] % 3` picks where the rest goes: 0, the server as client 0's
/// key; 1, the server as client 0's masked input; 2, client 0 as its key
/// directory.
pub fn pairwise_round(data: &[u8]) {
    let Some((&selector, input)) = data.split_first() else {
        return;
    };
    let (mut server, mut clients) = parties();
    let (mut round, mut halves, keys) = joined(&mut server, &mut clients);
    let me = ClientId(0);
    let mut took_input = false;
    if selector % 3 == 0 {
        took_input = round.receive(me, input).is_ok();
    }
    for (l, key) in keys.iter().enumerate() {
        let taken = round.receive(ClientId(l as u64), key).is_ok();
        // A message refused changed nothing: the client's own is taken.
        assert!(taken || (l == 0 && took_input), "client {l}'s key refused");
    }
    let directories = match round.advance() {
        Ok(RoundStep::Send(msgs)) => msgs,
        other => panic!("the directory is sent: {other:?}"),
    };
    let mut masked = Vec::new();
    for (to, directory) in &directories {
        let at = usize::try_from(to.0).expect("a client of the three");
        let half = &mut halves[at];
        if *to == me && selector % 3 == 2 && half.handle(input).is_ok() {
            // Only the real directory is taken; anything else is refused.
            assert!(half.is_done());
            return;
        }
        match half.handle(directory) {
            Ok(m) => masked.push((*to, m)),
            // Client 0 refuses a directory with a key it did not send.
            Err(_) => {
                assert!(took_input && *to == me, "client {to} refused its directory");
                return;
            }
        }
    }
    if selector % 3 == 1 {
        took_input = round.receive(me, input).is_ok();
    }
    for (to, m) in &masked {
        let taken = round.receive(*to, m).is_ok();
        assert!(
            taken || (*to == me && took_input),
            "client {to}'s input refused"
        );
    }
    if let Ok(RoundStep::Finished) = round.advance() {
        // A foreign frame taken for client 0's may fail the sum or the
        // decode: an error, never a panic.
        let _ = server.finish_round(round);
    }
}

/// Three clients of twelve points in 2-D in the plain mode (each allowed
/// it by its operator), joined to the server's first round: the server's
/// half and each client's message.
fn plain_joined() -> (RemoteServer, ServerRound, Vec<Vec<u8>>) {
    let mut clients: Vec<RemoteClient> = (0..3).map(|l| client(l).allowing_plain()).collect();
    let config = FederationConfig::new(2)
        .channel(Channel::Plain)
        .seed(3)
        .validate()
        .expect("config");
    let regs: Vec<Registration> = clients.iter().map(RemoteClient::registration).collect();
    let setup = RemoteSetup::new(&config, &regs).expect("setup");
    let mut server = RemoteServer::new(setup).expect("server");
    let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
    let (announcement, round) = server.start_round(&ids).expect("start");
    let messages = clients
        .iter_mut()
        .map(|c| c.join(&announcement).expect("join").1)
        .collect::<Option<_>>()
        .expect("a plain client sends its centroids at the join");
    (server, round, messages)
}

/// `data[0] % 2` picks when the rest reaches the server as client 0's
/// message of a plain round: 0, before client 0's own; 1, after it (a
/// second message). Either way the honest messages are taken, the round
/// finishes and the model holds every client's centroids.
pub fn plain_round(data: &[u8]) {
    let Some((&selector, input)) = data.split_first() else {
        return;
    };
    let (mut server, mut round, messages) = plain_joined();
    let me = ClientId(0);
    let mut took_input = false;
    if selector % 2 == 0 {
        took_input = round.receive(me, input).is_ok();
    }
    for (l, m) in messages.iter().enumerate() {
        let taken = round.receive(ClientId(l as u64), m).is_ok();
        assert!(
            taken || (l == 0 && took_input),
            "client {l}'s message refused"
        );
    }
    if selector % 2 == 1 {
        // Client 0 sent already: a second message is refused.
        assert!(round.receive(me, input).is_err(), "a second message taken");
    }
    assert!(matches!(round.advance(), Ok(RoundStep::Finished)));
    let report = server
        .finish_round(round)
        .expect("the plain round finishes");
    // Only a message of this round's fresh session is taken: the input
    // cannot be one, so every client's own was.
    assert!(!took_input, "a message of another session taken");
    assert_eq!(report.included.len(), 3);
}

/// The bytes of the snapshot of three tiny parties, trained, with one
/// request applied and one waiting (built once).
fn parties_snapshot_bytes() -> &'static [u8] {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES.get_or_init(|| {
        use ::mufc::RemovalRequest;
        use seeding::PointId;
        let data = (0..3)
            .map(|l| {
                let c = client(l);
                (c.id(), c.data().clone())
            })
            .collect();
        let config = FederationConfig::new(2)
            .gamma(0.05)
            .min_updating_clients(2)
            .seed(3)
            .validate()
            .expect("config");
        let mut parties = ::mufc::remote::InProcess::train(data, &config).expect("train");
        let both = RemovalRequest::points(ClientId(0), vec![PointId(1)])
            .with_points(ClientId(1), vec![PointId(2)]);
        parties.remove(&both).expect("applied");
        let lone = RemovalRequest::points(ClientId(2), vec![PointId(3)]);
        parties.remove(&lone).expect("waits");
        postcard::to_allocvec(&parties.snapshot().expect("snapshot")).expect("bytes")
    })
}

/// `data[0] % 2` picks what [`InProcess::restore`](::mufc::remote::InProcess::restore)
/// is given: 0, the rest parsed as a snapshot; 1, the bytes of a real
/// snapshot with the rest XOR-ed into them (as a crafted store row).
/// No panic; what restores snapshots and restores again, with the same
/// model.
pub fn parties_snapshot(data: &[u8]) {
    let Some((&selector, input)) = data.split_first() else {
        return;
    };
    let bytes: Vec<u8> = if selector % 2 == 0 {
        input.to_vec()
    } else {
        let mut bytes = parties_snapshot_bytes().to_vec();
        let len = bytes.len();
        for (i, b) in input.iter().enumerate() {
            if let Some(at) = bytes.get_mut(i.wrapping_mul(7919) % len) {
                *at ^= b;
            }
        }
        bytes
    };
    let Ok(snapshot) = postcard::from_bytes::<::mufc::remote::PartiesSnapshot>(&bytes) else {
        return;
    };
    let Ok(parties) = ::mufc::remote::InProcess::restore(snapshot) else {
        return;
    };
    let again = parties.snapshot().expect("restored parties snapshot");
    let restored = ::mufc::remote::InProcess::restore(again).expect("a snapshot restores");
    assert_eq!(
        restored.server().server().counts(),
        parties.server().server().counts()
    );
}
