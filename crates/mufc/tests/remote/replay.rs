//! A client that keeps a round key (`RemoteClient::with_round_key`) is
//! the same party on every replay of a round: a copy of it, joining the
//! same announcement and handling the same messages, gives the same bytes,
//! so that a client run as a new process for every message (the Python
//! binding's, under Flower) rebuilds its half of the round. Without the
//! key, or in another session, the bytes differ: the secrets are the
//! round's own.

use mufc::remote::{Registration, RemoteClient, RemoteServer, RemoteSetup, RoundStep};
use mufc::{Channel, ClientId, Federation, FederationConfig, Masks, SecAggOptions};
use nalgebra::DMatrix;
use seeding::Dataset;

fn data() -> Vec<Dataset> {
    (0..4)
        .map(|l| {
            let m = DMatrix::from_fn(2, 30, |r, c| {
                ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2
            });
            Dataset::new(m).unwrap()
        })
        .collect()
}

/// One round of `clients`, each answer also computed by a copy of its
/// client (`twins`), compared; returns whether every twin answered alike
/// and commits the round.
fn round_with_twins(
    server: &mut RemoteServer,
    clients: &mut [RemoteClient],
    twins: &mut [RemoteClient],
) -> bool {
    let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
    let (announcement, mut round) = server.start_round(&ids).unwrap();
    let mut alike = true;
    let mut halves = Vec::new();
    let mut twin_halves = Vec::new();
    for (c, t) in clients.iter_mut().zip(twins.iter_mut()) {
        let (half, first) = c.join(&announcement).unwrap();
        let (twin, twin_first) = t.join(&announcement).unwrap();
        alike &= first == twin_first;
        if let Some(first) = first {
            round.receive(c.id(), &first).unwrap();
        }
        halves.push(half);
        twin_halves.push(twin);
    }
    while let RoundStep::Send(msgs) = round.advance().unwrap() {
        for (to, msg) in msgs {
            let i = usize::try_from(to.0).unwrap();
            let reply = halves[i].handle(&msg).unwrap();
            // A twin with other secrets refuses the directory (its own
            // keys are not there) or answers otherwise.
            alike &= twin_halves[i].handle(&msg).ok().as_ref() == Some(&reply);
            round.receive(to, &reply).unwrap();
        }
    }
    let report = server.finish_round(round).unwrap();
    assert_eq!(report.included, ids);
    for (c, half) in clients.iter_mut().zip(halves) {
        c.took_part(&half);
        c.commit(half);
    }
    // A twin commits what its client sent: the same client either way.
    twins.clone_from_slice(clients);
    alike
}

#[test]
fn a_client_with_a_round_key_replays_a_round_byte_for_byte() {
    for masks in [Masks::SecAgg(SecAggOptions::new()), Masks::Pairwise] {
        let label = format!("{masks:?}");
        let config = FederationConfig::new(2)
            .channel(Channel::scma(masks))
            .seed(5)
            .validate()
            .unwrap();
        for keyed in [true, false] {
            let mut clients: Vec<RemoteClient> = (data().into_iter().enumerate())
                .map(|(i, d)| {
                    let c = RemoteClient::new(ClientId(i as u64), d).unwrap();
                    match keyed {
                        true => c.with_round_key([u8::try_from(i).unwrap() + 1; 32]),
                        false => c,
                    }
                })
                .collect();
            let regs: Vec<Registration> = clients.iter().map(RemoteClient::registration).collect();
            let mut server = RemoteServer::new(RemoteSetup::new(&config, &regs).unwrap()).unwrap();
            let mut twins = clients.clone();
            // Training, then a removal's round: every answer of a keyed
            // client is its copy's; a client drawing from the operating
            // system answers otherwise.
            assert_eq!(
                round_with_twins(&mut server, &mut clients, &mut twins),
                keyed,
                "{label}"
            );
            clients[1].forget(&[seeding::PointId(3)]).unwrap();
            twins[1].forget(&[seeding::PointId(3)]).unwrap();
            assert_eq!(
                round_with_twins(&mut server, &mut clients, &mut twins),
                keyed,
                "{label}"
            );
            // The same parties: the model is retraining's, bit for bit.
            let mut rest = data();
            rest[1] = rest[1].without(&[seeding::PointId(3)]).unwrap();
            let fed = Federation::new(rest, server.setup().config()).unwrap();
            assert_eq!(
                server.server().centroids(),
                fed.server().centroids(),
                "{label}"
            );
        }
    }
}

/// The public keys a SecAgg client advertises in its first message.
fn advertised(first: &[u8]) -> [u8; 32] {
    use syndrome_agg::secagg::messages::{ClientBody, ClientEnvelope};
    match ClientEnvelope::parse(first, 1 << 20).unwrap().body {
        ClientBody::AdvertiseKeys(k) => k.mask_key,
        other => panic!("not the keys: {other:?}"),
    }
}

#[test]
fn a_round_key_gives_each_session_its_own_secrets() {
    // The keys inside the messages, not the bytes (which name the session
    // anyway): the same round number in two sessions, or two clients of
    // one key, advertise other keys; a replay advertises the same.
    let secagg = Channel::scma(Masks::SecAgg(SecAggOptions::new()));
    let config = FederationConfig::new(2)
        .channel(secagg)
        .seed(5)
        .validate()
        .unwrap();
    let clients: Vec<RemoteClient> = (data().into_iter().enumerate())
        .map(|(i, d)| {
            let id = ClientId(u64::try_from(i).unwrap());
            RemoteClient::new(id, d).unwrap().with_round_key([9; 32])
        })
        .collect();
    let regs: Vec<Registration> = clients.iter().map(RemoteClient::registration).collect();
    let setup = RemoteSetup::new(&config, &regs).unwrap();
    let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
    let keys = |announcement: &mufc::remote::Announcement, c: usize| {
        advertised(&clients[c].clone().join(announcement).unwrap().1.unwrap())
    };
    // Round 0 announced by two servers of the same setup (a server
    // restarted from a store that never saw the round): two sessions.
    let (first, round) = RemoteServer::new(setup.clone())
        .unwrap()
        .start_round(&ids)
        .unwrap();
    assert_eq!(round.spec().round, 0);
    let (second, round) = RemoteServer::new(setup).unwrap().start_round(&ids).unwrap();
    assert_eq!(round.spec().round, 0);
    assert_eq!(keys(&first, 0), keys(&first, 0));
    assert_ne!(keys(&first, 0), keys(&second, 0));
    assert_ne!(keys(&first, 0), keys(&first, 1));
}
