//! A lying server and a lying client: a client refuses a round whose
//! announcement is not the one its configuration gives (and still joins
//! an honest round after); the server refuses a client's bad bytes and
//! the round completes for the others with the right sum.

use super::*;

/// What a lying server changes in an honest announcement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lie {
    /// A threshold below the configuration's.
    LowerThreshold,
    /// Another neighbourhood graph.
    OtherGraph,
    /// A ring without the client.
    RingWithout,
    /// A ring naming a client twice.
    RingTwice,
    /// A ring naming a client outside the federation's roster.
    RingStranger,
    /// Another federation than the one the client trained in.
    OtherSetup,
    /// The announcement of a round the client already joined.
    Replay,
    /// A change round: with SecAgg a dropout would lose its change.
    AsksForChanges,
}

const LIES: [Lie; 8] = [
    Lie::LowerThreshold,
    Lie::OtherGraph,
    Lie::RingWithout,
    Lie::RingTwice,
    Lie::RingStranger,
    Lie::OtherSetup,
    Lie::Replay,
    Lie::AsksForChanges,
];

/// Four clients; before each of sixteen rounds a random client is first
/// told a lie, in random order, each lie twice (the first, before any
/// round trained the client, neither the setup nor the replay): it
/// refuses with `RoundRefused`, sends nothing and keeps its state; then
/// every client joins an honest round, which equals retraining.
#[test]
fn a_client_refuses_a_lying_announcement_and_joins_an_honest_one() {
    let mut rng = testdata::rng("remote-lying-server");
    let data = gaussian_clients("remote-lying-server", Mixture::SMALL);
    let cfg = config(2, 0.0, 3, 9);
    let (mut server, mut clients) = federation(&data, &cfg);
    let regs: Vec<Registration> = clients.iter().map(RemoteClient::registration).collect();
    let ids: Vec<ClientId> = regs.iter().map(|r| r.id).collect();
    let mut last: Option<Vec<u8>> = None;
    let mut order = shuffled(&mut rng, &LIES, 2);
    let needs_training = |l: &Lie| matches!(l, Lie::OtherSetup | Lie::Replay);
    let first = order.iter().position(|l| !needs_training(l)).unwrap();
    order.swap(0, first);
    for (case, lie) in order.into_iter().enumerate() {
        let victim = ClientId(rng.random_range(0..4));
        let trained = clients[at(victim)].setup().is_some();
        assert!(trained || !needs_training(&lie));
        let (honest, _) = server.start_round(&ids).unwrap();
        let mut a = honest.clone();
        let variant = rng.random_range(0..3);
        match lie {
            Lie::LowerThreshold => {
                let p = secagg(&mut a.spec);
                p.threshold = rng.random_range(1..p.threshold);
            }
            Lie::OtherGraph => {
                let other = syndrome_agg::secagg::params::GraphChoice::Harary { degree: 2 };
                let p = secagg(&mut a.spec);
                assert_ne!(p.graph, other);
                p.graph = other;
            }
            Lie::RingWithout => a.spec.ring.retain(|c| *c != victim),
            Lie::RingStranger => {
                let at = rng.random_range(0..a.spec.ring.len());
                match variant {
                    0 => a.spec.ring.insert(at, ClientId(99)),
                    _ if a.spec.ring[at] != victim => a.spec.ring[at] = ClientId(99),
                    _ => a.spec.ring.push(ClientId(99)),
                }
                // Parameters consistent with the ring's length.
                let n = a.spec.ring.len();
                a.spec.protocol = RoundProtocol::SecAgg(cfg_params(&cfg, &regs, n));
            }
            Lie::RingTwice => {
                let j = rng.random_range(0..a.spec.ring.len());
                if variant == 0 {
                    a.spec.ring.push(a.spec.ring[j]);
                } else {
                    let i = (j + rng.random_range(1..a.spec.ring.len())) % a.spec.ring.len();
                    a.spec.ring[i] = a.spec.ring[j];
                }
            }
            Lie::OtherSetup => {
                let mut regs = regs.clone();
                let c = match variant {
                    0 => config(2, 0.0, 3, 10),
                    1 => {
                        regs[rng.random_range(0..4)].points += 1;
                        cfg.clone()
                    }
                    _ => {
                        regs.push(Registration {
                            id: ClientId(99),
                            points: 30,
                            dim: 2,
                            scale: 1,
                        });
                        cfg.clone()
                    }
                };
                a.setup = RemoteSetup::new(&c, &regs).unwrap();
            }
            Lie::Replay => a = Announcement::from_bytes(last.as_ref().unwrap()).unwrap(),
            Lie::AsksForChanges => {
                a.spec.sends = Sends::Changes {
                    capacity: rng.random_range(1..1000),
                    base: rng.random_range(0..a.spec.round + 2),
                };
            }
        }
        let what = format!("case {case}: {lie:?} (variant {variant}) to {victim}");
        assert_ne!(a, honest, "{what}: no lie");
        let client = &mut clients[at(victim)];
        let (sessions, seeds) = (client.sessions().clone(), client.seeds().to_vec());
        let setup = client.setup().cloned();
        let lied = Announcement::from_bytes(&a.to_bytes().unwrap()).unwrap();
        match client.join(&lied) {
            Err(MufcError::RoundRefused { round, .. }) => assert_eq!(round, a.spec.round),
            Err(e) => panic!("{what}: {e}"),
            Ok(_) => panic!("{what}: joined"),
        }
        assert_eq!(client.sessions(), &sessions, "{what}");
        if trained {
            assert_eq!(
                (client.seeds(), client.setup()),
                (&seeds[..], setup.as_ref())
            );
        }
        let out = run_round(&mut server, &mut clients, &BTreeMap::new())
            .unwrap_or_else(|e| panic!("{what}, then honest: {e}"));
        assert_equals_retraining(&server, &with_ids(&data), &what);
        last = Some(out.announcement);
    }
}

/// A random client of six, at a random step, first sends bad bytes:
/// another client's message, garbage, its own message truncated, or its
/// message of the same step of an earlier round. The server refuses them;
/// then the client either answers honestly (the round equals retraining
/// on all) or falls silent (it is dropped at that step, and the round
/// equals retraining on the clients included).
#[test]
fn the_server_refuses_a_clients_bad_bytes_and_the_round_completes() {
    let mut rng = testdata::rng("remote-lying-client");
    let (data, config, _) = dropout_federation("remote-lying-client", 5);
    for (case, kind) in shuffled(&mut rng, &[0, 1, 2, 3], 3).into_iter().enumerate() {
        let (mut server, mut clients) = federation(&data, &config);
        let earlier = (kind == 3 || rng.random_bool(0.5))
            .then(|| run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap());
        let (attacker, step) = (ClientId(rng.random_range(0..6)), draw_step(&mut rng));
        let attack = match kind {
            0 => Attack::Foreign(ClientId((attacker.0 + rng.random_range(1..6)) % 6)),
            1 => {
                let len = rng.random_range(0..300);
                let bytes = (0..len).map(|_| rng.random_range(0..=255u8)).collect();
                Attack::Bytes("garbage", bytes)
            }
            2 => Attack::Truncated(rng.random_range(0..100_000)),
            _ => {
                let accepted = &earlier.as_ref().unwrap().accepted;
                let old = accepted
                    .iter()
                    .find(|(c, s, _)| (*c, *s) == (attacker, step));
                Attack::Bytes("its message of the last round", old.unwrap().2.clone())
            }
        };
        let then_honest = rng.random_bool(0.5);
        let what = format!(
            "case {case}: {attacker} at {step} sends {attack:?}, then honest {then_honest}, \
             after a round {}",
            earlier.is_some()
        );
        let fault = Fault::Attack {
            step,
            attack,
            then_honest,
        };
        let out = run_round(
            &mut server,
            &mut clients,
            &BTreeMap::from([(attacker, fault)]),
        )
        .unwrap_or_else(|e| panic!("{what}: {e}"));
        let dropped = if then_honest {
            vec![]
        } else {
            vec![(attacker, step)]
        };
        assert_eq!(out.report.dropped, dropped, "{what}");
        let out_of_sum = !then_honest && step <= SecAggStep::MaskedInput;
        let included: Vec<_> = with_ids(&data)
            .into_iter()
            .filter(|(c, _)| !(out_of_sum && *c == attacker))
            .collect();
        let ids: Vec<ClientId> = included.iter().map(|(c, _)| *c).collect();
        assert_eq!(out.report.included, ids, "{what}");
        assert_equals_retraining(&server, &included, &what);
    }
}

/// The protocol parameters an honest server announces for `n` clients of
/// the federation of `config` and `regs` (read from a scratch server of
/// that many clients).
fn cfg_params(
    config: &ValidConfig,
    regs: &[Registration],
    n: usize,
) -> syndrome_agg::secagg::params::SecAggParams {
    let mut regs = regs.to_vec();
    while regs.len() < n {
        let id = ClientId(1000 + regs.len() as u64);
        regs.push(Registration { id, ..regs[0] });
    }
    let ids: Vec<ClientId> = regs.iter().take(n).map(|r| r.id).collect();
    let mut server = RemoteServer::new(RemoteSetup::new(config, &regs).unwrap()).unwrap();
    match server.start_round(&ids).unwrap().0.spec.protocol {
        RoundProtocol::SecAgg(p) => p,
        other => panic!("a SecAgg round, not {other:?}"),
    }
}

/// The SecAgg parameters of a SecAgg round's spec, to lie about.
fn secagg(spec: &mut mufc::remote::RoundSpec) -> &mut syndrome_agg::secagg::params::SecAggParams {
    match &mut spec.protocol {
        RoundProtocol::SecAgg(p) => p,
        other => panic!("a SecAgg round, not {other:?}"),
    }
}
