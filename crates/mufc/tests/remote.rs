//! The federation split by party (`remote`), driven in one process by a
//! relay that can make one client fall silent or misbehave: every
//! committed round equals retraining bit for bit, dropouts within the
//! protocol's threshold are survived and beyond it change nothing, and an
//! announcement is parsed from any bytes without panicking. The lying
//! server and the lying client are in [`attacks`]. Strategies are drawn
//! from `testdata::rng` and named in every failure message.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

#[path = "remote/arrivals.rs"]
mod arrivals;
#[path = "remote/attacks.rs"]
mod attacks;
#[path = "remote/change.rs"]
mod change;
#[path = "remote/dealer.rs"]
mod dealer;
#[path = "remote/erasure.rs"]
mod erasure;
#[path = "remote/groups.rs"]
mod groups;
#[path = "remote/membership.rs"]
mod membership;
#[path = "remote/pairwise.rs"]
mod pairwise;
#[path = "remote/parties.rs"]
mod parties;
#[path = "remote/parties_layout.rs"]
mod parties_layout;
#[path = "remote/parties_plain.rs"]
mod parties_plain;
#[path = "remote/parties_rounds.rs"]
mod parties_rounds;
#[path = "remote/parties_saved.rs"]
mod parties_saved;
#[path = "remote/parties_sketches.rs"]
mod parties_sketches;
#[path = "remote/replay.rs"]
mod replay;
#[path = "remote/snapshot.rs"]
mod snapshot;

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

use mufc::remote::{
    Announcement, ClientRound, Registration, RemoteClient, RemoteDealer, RemoteServer, RemoteSetup,
    RoundProtocol, RoundReport, RoundStep, Sends,
};
use mufc::{
    Channel, ClientId, Federation, FederationConfig, Masks, MufcError, MufcResult, SecAggOptions,
    SecAggStep, Server, ValidConfig,
};

/// How one client misbehaves in a round.
#[derive(Clone, Debug)]
enum Fault {
    /// It stops answering from this step on (at `AdvertiseKeys`: it joins
    /// but never answers).
    Silent(SecAggStep),
    /// At `step` it first sends the server `attack`'s bytes, which must be
    /// refused; then its own message (`then_honest`), or nothing more.
    Attack {
        step: SecAggStep,
        attack: Attack,
        then_honest: bool,
    },
}

/// The bytes a misbehaving client sends.
#[derive(Clone)]
enum Attack {
    /// The message of this other client of the round, at the same step.
    Foreign(ClientId),
    /// These bytes: garbage, or a message of an earlier round (named).
    Bytes(&'static str, Vec<u8>),
    /// Its own message cut to this many bytes (modulo its length).
    Truncated(usize),
}

impl std::fmt::Debug for Attack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Foreign(c) => write!(f, "the message of client {c}"),
            Self::Bytes(what, b) => write!(f, "{what} ({} bytes)", b.len()),
            Self::Truncated(n) => write!(f, "its message truncated ({n} mod its length)"),
        }
    }
}

/// What a round that committed left.
#[derive(Debug)]
struct Outcome {
    report: RoundReport,
    /// The announcement's bytes, as every client received them.
    announcement: Vec<u8>,
    /// Every message the server accepted: its sender, step and bytes.
    accepted: Vec<(ClientId, SecAggStep, Vec<u8>)>,
}

/// Runs one round for every client: the server announces, each client
/// joins from the announcement's bytes, the relay carries each step's
/// messages (applying `faults`), the server finishes and the included
/// clients commit. A refused bad message is checked here; any other error
/// (too many dropouts, a refused announcement) is returned as is, before
/// `finish_round`.
fn run_round(
    server: &mut RemoteServer,
    clients: &mut [RemoteClient],
    faults: &BTreeMap<ClientId, Fault>,
) -> MufcResult<Outcome> {
    run_round_with(server, clients, faults, &mut |_, _| {})
}

/// [`run_round`], calling `meanwhile` with the clients before the server
/// collects each step: what a client does while a round runs (across
/// processes, an operator's request reaches it at any time).
fn run_round_with(
    server: &mut RemoteServer,
    clients: &mut [RemoteClient],
    faults: &BTreeMap<ClientId, Fault>,
    meanwhile: &mut dyn FnMut(SecAggStep, &mut [RemoteClient]),
) -> MufcResult<Outcome> {
    run_round_dealt(server, clients, faults, meanwhile, None, None)
}

/// A dealt round's third party, as the relay drives it: the dealer, and
/// what a lying server does to the messages that carry its seals to the
/// clients before it relays them.
struct Dealing<'a> {
    dealer: &'a mut RemoteDealer,
    tamper: &'a mut Tamper<'a>,
}

/// What a lying server does to the messages of one step before it
/// relays them.
type Tamper<'a> = dyn FnMut(&mut Vec<(ClientId, Vec<u8>)>) + 'a;

/// [`run_round_with`], with the round's dealer when its masks are dealt,
/// and with `updated` a change round where one applies
/// ([`RemoteServer::start_change_round`]).
fn run_round_dealt(
    server: &mut RemoteServer,
    clients: &mut [RemoteClient],
    faults: &BTreeMap<ClientId, Fault>,
    meanwhile: &mut dyn FnMut(SecAggStep, &mut [RemoteClient]),
    mut dealing: Option<Dealing<'_>>,
    updated: Option<usize>,
) -> MufcResult<Outcome> {
    let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
    let (announcement, mut round) = match updated {
        Some(u) => server.start_change_round(&ids, u)?,
        None => server.start_round(&ids)?,
    };
    let bytes = announcement.to_bytes()?;
    let mut halves: BTreeMap<ClientId, ClientRound> = BTreeMap::new();
    let mut replies = Vec::new();
    for c in clients.iter_mut() {
        let (half, first) = c.join(&Announcement::from_bytes(&bytes)?)?;
        halves.insert(c.id(), half);
        // A dealt round's client sends nothing before its sealed seed.
        replies.extend(first.map(|f| (c.id(), f)));
    }
    let mut silent = BTreeSet::new();
    let mut accepted = Vec::new();
    loop {
        let step = round.step().expect("the round collects a step");
        meanwhile(step, clients);
        for (from, honest) in &replies {
            match faults.get(from) {
                Some(Fault::Silent(s)) if *s <= step => {
                    silent.insert(*from);
                    continue;
                }
                Some(Fault::Attack {
                    step: s,
                    attack,
                    then_honest,
                }) if *s == step => {
                    let bad = match attack {
                        Attack::Foreign(other) => {
                            replies.iter().find(|(c, _)| c == other).unwrap().1.clone()
                        }
                        Attack::Bytes(_, b) => b.clone(),
                        Attack::Truncated(n) => honest[..n % honest.len()].to_vec(),
                    };
                    let r = round.receive(*from, &bad);
                    assert!(r.is_err(), "{attack:?} from {from} at {step} was accepted");
                    if !then_honest {
                        silent.insert(*from);
                        continue;
                    }
                }
                _ => {}
            }
            round.receive(*from, honest)?;
            accepted.push((*from, step, honest.clone()));
        }
        let mut step = round.advance()?;
        if let RoundStep::Deal(request) = &step {
            let d = dealing.as_mut().expect("a dealt round with a dealer");
            let answer = d.dealer.deal(&Announcement::from_bytes(&bytes)?, request)?;
            round.receive_deal(&answer)?;
            step = round.advance()?;
            if let RoundStep::Send(msgs) = &mut step {
                (d.tamper)(msgs);
            }
        }
        match step {
            RoundStep::Finished => break,
            RoundStep::Deal(_) => panic!("the server asked for a second deal"),
            RoundStep::Send(msgs) => {
                replies = msgs
                    .into_iter()
                    .filter(|(to, _)| !silent.contains(to))
                    .map(|(to, m)| Ok((to, halves.get_mut(&to).unwrap().handle(&m)?)))
                    .collect::<MufcResult<_>>()?;
            }
        }
    }
    let report = server.finish_round(round)?;
    for c in clients.iter_mut() {
        let half = halves.remove(&c.id()).unwrap();
        assert!(
            silent.contains(&c.id()) || half.is_done(),
            "client {}",
            c.id()
        );
        // As `mufc-net`'s client does once it knows the round's sum.
        c.took_part(&half);
        if report.included.contains(&c.id()) {
            c.commit(half);
        }
    }
    Ok(Outcome {
        report,
        announcement: bytes,
        accepted,
    })
}

/// Secure aggregation planned for `dropout`, over at least `min_clients`.
fn config(k: usize, dropout: f64, min_clients: usize, seed: u64) -> ValidConfig {
    FederationConfig::new(k)
        .channel(Channel::scma(Masks::SecAgg(
            SecAggOptions::new().dropout(dropout),
        )))
        .min_clients(min_clients)
        .seed(seed)
        .validate()
        .unwrap()
}

/// The server and the clients (ids `0..`) of `data` under `config`.
fn federation(data: &[Dataset], config: &ValidConfig) -> (RemoteServer, Vec<RemoteClient>) {
    let clients: Vec<RemoteClient> = data
        .iter()
        .enumerate()
        .map(|(i, d)| RemoteClient::new(ClientId(i as u64), d.clone()).unwrap())
        .collect();
    let regs: Vec<Registration> = clients.iter().map(RemoteClient::registration).collect();
    let server = RemoteServer::new(RemoteSetup::new(config, &regs).unwrap()).unwrap();
    (server, clients)
}

/// The clients' data with their ids.
fn with_ids(data: &[Dataset]) -> Vec<(ClientId, Dataset)> {
    data.iter()
        .enumerate()
        .map(|(i, d)| (ClientId(i as u64), d.clone()))
        .collect()
}

fn centroid_bits(s: &Server) -> Option<Vec<u64>> {
    s.centroids()
        .map(|c| c.iter().map(|x| x.to_bits()).collect())
}

/// The server's counts and centroids are those of [`Federation`] trained
/// from scratch on `data` (its nonempty clients), bit for bit. The
/// in-process run simulates the configuration's dropout rate: it retrains
/// with the resolved configuration at rate 0, so that it drops nobody.
fn assert_equals_retraining(server: &RemoteServer, data: &[(ClientId, Dataset)], what: &str) {
    let rest = data
        .iter()
        .filter(|(_, d)| !d.is_empty())
        .cloned()
        .collect();
    let config = (server.setup().config().clone().into_builder())
        .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
        .validate()
        .unwrap();
    let fed =
        Federation::with_ids(rest, &config).unwrap_or_else(|e| panic!("{what}: retraining: {e}"));
    assert!(fed.fit_report().dropped.is_empty(), "{what}");
    assert_eq!(
        server.server().counts(),
        fed.server().counts(),
        "{what}: counts"
    );
    assert_eq!(
        centroid_bits(server.server()),
        centroid_bits(fed.server()),
        "{what}: centroids"
    );
}

/// Two clients drawn at random forget one point each, drawn at random
/// (a client with two points or fewer keeps them); `data` follows.
fn forget_one_point_of_two(
    rng: &mut ChaCha8Rng,
    clients: &mut [RemoteClient],
    data: &mut [(ClientId, Dataset)],
) {
    for c in draw_clients(rng, clients.len(), 2) {
        let i = at(c);
        let n = data[i].1.len();
        if n <= 2 {
            continue;
        }
        let id = data[i].1.ids()[rng.random_range(0..n)];
        clients[i].forget(&[id]).unwrap();
        data[i].1 = data[i].1.without(&[id]).unwrap();
    }
}

impl Outcome {
    /// Each client's masked input, as the server accepted it.
    fn masked_inputs(&self) -> BTreeMap<ClientId, Vec<u8>> {
        self.accepted
            .iter()
            .filter(|(_, step, _)| *step == SecAggStep::MaskedInput)
            .map(|(c, _, m)| (*c, m.clone()))
            .collect()
    }
}

/// `n` distinct clients of `0..clients`, drawn at random.
fn draw_clients(rng: &mut ChaCha8Rng, clients: usize, n: usize) -> Vec<ClientId> {
    let mut pool: Vec<ClientId> = (0..clients as u64).map(ClientId).collect();
    (0..n)
        .map(|_| pool.swap_remove(rng.random_range(0..pool.len())))
        .collect()
}

/// Client `c`'s position (ids are `0..`).
fn at(c: ClientId) -> usize {
    usize::try_from(c.0).unwrap()
}

fn draw_step(rng: &mut ChaCha8Rng) -> SecAggStep {
    SecAggStep::ALL[rng.random_range(0..SecAggStep::ALL.len())]
}

/// `blocks` copies of `xs`, each shuffled: random order, every choice
/// drawn equally often.
fn shuffled<T: Copy>(rng: &mut ChaCha8Rng, xs: &[T], blocks: usize) -> Vec<T> {
    let mut out = Vec::new();
    for _ in 0..blocks {
        let mut block = xs.to_vec();
        for i in (1..block.len()).rev() {
            block.swap(i, rng.random_range(0..=i));
        }
        out.extend(block);
    }
    out
}

/// Six clients of 20 points under a protocol planned for a 20% dropout
/// rate, and the number of dropouts its threshold tolerates.
fn dropout_federation(label: &str, seed: u64) -> (Vec<Dataset>, ValidConfig, usize) {
    let mix = Mixture {
        clients: 6,
        per_client: 20,
        ..Mixture::SMALL
    };
    let data = gaussian_clients(label, mix);
    let config = config(2, 0.2, 3, seed);
    let (mut scratch, _) = federation(&data, &config);
    let ids: Vec<ClientId> = (0..6).map(ClientId).collect();
    let (a, _) = scratch.start_round(&ids).unwrap();
    let RoundProtocol::SecAgg(params) = a.spec.protocol else {
        panic!("a SecAgg round")
    };
    let need = params.min_clients.max(params.threshold);
    assert!(need < 6, "the protocol tolerates no dropout: {params:?}");
    (data, config, 6 - need)
}

/// 3-6 clients; 1-3 batches of removals (random points of random
/// clients, sometimes a seed, sometimes every point of one client), each
/// followed by a round: after every round the server equals retraining on
/// the points that remain, bit for bit.
#[test]
fn every_committed_round_equals_retraining() {
    let mut rng = testdata::rng("remote-exactness");
    for case in 0..6 {
        let n = rng.random_range(3..=6usize);
        let mix = Mixture {
            clients: n,
            per_client: rng.random_range(15..=30),
            ..Mixture::SMALL
        };
        let (k, seed) = (rng.random_range(2..=3), rng.random_range(0..1000));
        let data = gaussian_clients(&format!("remote-exactness-{case}"), mix);
        let (mut server, mut clients) = federation(&data, &config(k, 0.0, 3, seed));
        let mut rest = with_ids(&data);
        let mut what = format!("case {case}: {n} clients, k {k}, seed {seed}");
        run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
        assert_equals_retraining(&server, &rest, &what);
        let mut emptied = n < 4; // retraining needs three clients
        for _ in 0..rng.random_range(1..=3) {
            let mut batch = Vec::new();
            let touched = rng.random_range(1..=n);
            for c in draw_clients(&mut rng, n, touched) {
                let l = at(c);
                let held = rest[l].1.ids().to_vec();
                if held.is_empty() {
                    continue;
                }
                let kind = rng.random_range(0..3);
                let ids: Vec<PointId> = if kind == 2 && !emptied {
                    emptied = true;
                    held
                } else {
                    let mut ids: BTreeSet<PointId> = (0..rng.random_range(1..=3))
                        .map(|_| held[rng.random_range(0..held.len())])
                        .collect();
                    let seeds = clients[l].seeds();
                    if kind == 1 && !seeds.is_empty() {
                        ids.insert(seeds[rng.random_range(0..seeds.len())]);
                    }
                    ids.into_iter().collect()
                };
                clients[l].forget(&ids).unwrap();
                rest[l].1 = rest[l].1.without(&ids).unwrap();
                batch.push((l, ids));
            }
            what.push_str(&format!("; forgot {batch:?}"));
            run_round(&mut server, &mut clients, &BTreeMap::new())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_equals_retraining(&server, &rest, &what);
        }
    }
}

/// One client stops answering from a random step (of the training round
/// or a later one): the round commits, reports it dropped at that step,
/// includes it only if its masked input arrived (the protocol's D3), and
/// equals retraining on the included clients; the next full round equals
/// retraining on all.
#[test]
fn a_round_survives_a_dropout_at_any_step() {
    let mut rng = testdata::rng("remote-one-dropout");
    let (data, config, tolerated) = dropout_federation("remote-dropouts", 3);
    assert!(tolerated >= 1);
    for (case, step) in shuffled(&mut rng, &SecAggStep::ALL, 2)
        .into_iter()
        .enumerate()
    {
        let (mut server, mut clients) = federation(&data, &config);
        let trained_first = rng.random_bool(0.5);
        let victim = ClientId(rng.random_range(0..6));
        let what =
            format!("case {case}: trained first {trained_first}, {victim} silent from {step}");
        if trained_first {
            run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
        }
        let faults = BTreeMap::from([(victim, Fault::Silent(step))]);
        let out =
            run_round(&mut server, &mut clients, &faults).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(out.report.dropped, vec![(victim, step)], "{what}");
        let sent_input = step > SecAggStep::MaskedInput;
        assert_eq!(out.report.included.contains(&victim), sent_input, "{what}");
        assert_eq!(
            out.report.included.len(),
            5 + usize::from(sent_input),
            "{what}"
        );
        assert_eq!(out.report.training, !trained_first, "{what}");
        let included: Vec<_> = with_ids(&data)
            .into_iter()
            .filter(|(c, _)| out.report.included.contains(c))
            .collect();
        assert_equals_retraining(&server, &included, &what);
        run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
        assert_equals_retraining(&server, &with_ids(&data), &format!("{what}, then all"));
    }
}

/// One client more than the threshold tolerates stops answering, each
/// from a random step (sometimes after a client forgot points): `advance`
/// fails with `TooManyDropouts` at the step where too few remain, the
/// server's aggregate and model are unchanged, and the next full round
/// succeeds and equals retraining on the points that remain.
#[test]
fn too_many_dropouts_fail_the_round_and_change_nothing() {
    let mut rng = testdata::rng("remote-too-many-dropouts");
    let (data, config, tolerated) = dropout_federation("remote-dropouts", 4);
    for case in 0..8 {
        let (mut server, mut clients) = federation(&data, &config);
        let mut rest = with_ids(&data);
        let trained_first = rng.random_bool(0.5);
        let victims = draw_clients(&mut rng, 6, tolerated + 1);
        let mut steps: Vec<SecAggStep> = victims.iter().map(|_| draw_step(&mut rng)).collect();
        let faults: BTreeMap<ClientId, Fault> = (victims.iter().zip(&steps))
            .map(|(c, s)| (*c, Fault::Silent(*s)))
            .collect();
        let mut what = format!("case {case}: trained first {trained_first}, {faults:?}");
        if trained_first {
            run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
        }
        if rng.random_bool(0.5) {
            let l = rng.random_range(0..6);
            let ids: Vec<PointId> = rest[l].1.ids()[..rng.random_range(1..=3)].to_vec();
            clients[l].forget(&ids).unwrap();
            rest[l].1 = rest[l].1.without(&ids).unwrap();
            what.push_str(&format!(", client {l} forgot {ids:?} before"));
        }
        let (counts, centroids) = (
            server.server().counts().clone(),
            centroid_bits(server.server()),
        );
        let rounds = server.rounds();
        let err = run_round(&mut server, &mut clients, &faults).unwrap_err();
        steps.sort();
        let MufcError::TooManyDropouts {
            step, have, need, ..
        } = err
        else {
            panic!("{what}: {err}")
        };
        assert_eq!(step, steps[tolerated], "{what}");
        let gone = steps.iter().filter(|s| **s <= step).count();
        assert_eq!((have, need), (6 - gone, 6 - tolerated), "{what}");
        assert_eq!(server.server().counts(), &counts, "{what}");
        assert_eq!(centroid_bits(server.server()), centroids, "{what}");
        assert_eq!(server.is_trained(), trained_first, "{what}");
        assert_eq!(
            server.rounds(),
            rounds + 1,
            "{what}: the round number is consumed"
        );
        let out = run_round(&mut server, &mut clients, &BTreeMap::new())
            .unwrap_or_else(|e| panic!("{what}, then all: {e}"));
        assert_eq!(out.report.training, !trained_first, "{what}");
        assert_equals_retraining(&server, &rest, &format!("{what}, then all"));
    }
}

/// A valid announcement's bytes (three clients, the first round).
fn announcement_bytes() -> Vec<u8> {
    static BYTES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    BYTES
        .get_or_init(|| {
            let data = gaussian_clients("remote-announcement", Mixture::TINY);
            let (mut server, clients) = federation(&data, &config(2, 0.0, 3, 1));
            let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
            server.start_round(&ids).unwrap().0.to_bytes().unwrap()
        })
        .clone()
}

/// Every proper prefix of a valid announcement, and the announcement with
/// a byte appended or another version, is refused; the announcement
/// itself round-trips.
#[test]
fn every_truncation_of_an_announcement_is_refused() {
    let bytes = announcement_bytes();
    let a = Announcement::from_bytes(&bytes).unwrap();
    assert_eq!(a.to_bytes().unwrap(), bytes);
    for n in 0..bytes.len() {
        let r = Announcement::from_bytes(&bytes[..n]);
        assert!(
            matches!(r, Err(MufcError::Remote(_))),
            "prefix of {n} bytes: {r:?}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(Announcement::from_bytes(&longer).is_err());
    for other in [0, bytes[0] - 1, bytes[0] + 1, u8::MAX] {
        let mut version = bytes.clone();
        version[0] = other;
        assert!(
            Announcement::from_bytes(&version).is_err(),
            "version {other}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Arbitrary bytes, with or without the right version byte, are not
    /// an announcement.
    #[test]
    fn arbitrary_bytes_are_not_an_announcement(
        mut bytes in prop::collection::vec(any::<u8>(), 0..600),
        versioned in any::<bool>(),
    ) {
        if versioned {
            bytes.insert(0, announcement_bytes()[0]);
        }
        prop_assert!(Announcement::from_bytes(&bytes).is_err());
    }

    /// A valid announcement with up to three bytes overwritten parses or
    /// is refused, and never panics; what parses encodes again.
    #[test]
    fn a_corrupted_announcement_never_panics(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..=3),
    ) {
        let mut bytes = announcement_bytes();
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if let Ok(a) = Announcement::from_bytes(&bytes) {
            prop_assert!(a.to_bytes().is_ok());
        }
    }
}

/// The adaptive client `k` across processes: each client tells its survey
/// scale when it registers, and the server's setup resolves the same `k`
/// as the federation built in one process: doubled (20) for clients that
/// hold every one of the ten clusters (an i.i.d. split), not for clients
/// that hold two (17, the budget of 1000 server points over 60 clients).
/// A registration that dropped the scale would give 17 in both.
#[test]
fn the_adaptive_k_is_the_same_in_process_and_across_processes() {
    for (k_prime, expected) in [(10, 20), (2, 17)] {
        let mix = Mixture {
            clients: 60,
            per_client: 200,
            dim: 4,
            clusters: 10,
            k_prime,
            spread: 0.4,
            sigma: 0.01,
        };
        let data = gaussian_clients(&format!("survey-{k_prime}"), mix);
        let dealt = FederationConfig::new(10).gamma(0.01).validate().unwrap();
        let fed = Federation::new(data.clone(), &dealt).unwrap();
        let secagg = FederationConfig::new(10)
            .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
            .validate()
            .unwrap();
        // The parties driven in one process survey as every client does.
        let parties = mufc::remote::InProcess::train(with_ids(&data), &dealt).unwrap();
        assert_eq!(
            parties.server().setup().config().client_k(),
            expected,
            "K' = {k_prime}: in process"
        );
        let regs: Vec<Registration> = data
            .into_iter()
            .enumerate()
            .map(|(i, d)| {
                RemoteClient::new(ClientId(i as u64), d)
                    .unwrap()
                    .registration()
            })
            .collect();
        let setup = RemoteSetup::new(&secagg, &regs).unwrap();
        assert_eq!(fed.config().client_k(), expected, "K' = {k_prime}");
        assert_eq!(setup.config().client_k(), expected, "K' = {k_prime}");
    }
}
