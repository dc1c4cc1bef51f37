//! Dealt masks across processes (issue 27: every mask source is something
//! the parties do): the dealer is a party of its own ([`RemoteDealer`])
//! that shares a key with each client, agreed once from their long-term
//! X25519 keys. Every committed round equals retraining bit for bit, flat
//! and with groups; a client missing fails the round and changes nothing;
//! a lying server can make the dealer deal no round that would unmask
//! less than an aggregate the federation allows, and no client masks with
//! a seal the server altered, replayed, swapped or made itself.

use super::pairwise::varint;
use super::*;
use mufc::remote::{Agreement, Policy, ServerRound};
use mufc::{Masking, Topology};
use syndrome_agg::masking::pairwise::MaskKeyPair;

/// The keys of a dealt federation: the dealer's static pair and each
/// client's long-term pair, from the operating system.
pub(super) struct Keys {
    dealer: MaskKeyPair,
    clients: Vec<MaskKeyPair>,
}

impl Keys {
    pub(super) fn new(clients: usize) -> Self {
        Self {
            dealer: MaskKeyPair::generate(&mut rand::rng()),
            clients: (0..clients)
                .map(|_| MaskKeyPair::generate(&mut rand::rng()))
                .collect(),
        }
    }

    /// The dealer, sharing a key with every client but `without`.
    pub(super) fn dealer(&self, without: Option<ClientId>) -> RemoteDealer {
        let public = self
            .clients
            .iter()
            .enumerate()
            .map(|(i, k)| (ClientId(i as u64), k.public_key()))
            .filter(|(c, _)| Some(*c) != without)
            .collect();
        RemoteDealer::new(&self.dealer, &public).unwrap()
    }

    /// Pairs every client with the dealer whose public key it pinned.
    pub(super) fn pair(&self, clients: &mut [RemoteClient]) {
        for (i, c) in clients.iter_mut().enumerate() {
            self.pair_one(c, i);
        }
    }

    /// Pairs `client` with the dealer under the long-term key of client
    /// `i`.
    pub(super) fn pair_one(&self, client: &mut RemoteClient, i: usize) {
        (client.pair_with_dealer(&self.clients[i], &self.dealer.public_key())).unwrap();
    }
}

fn dealt_config(k: usize, min_clients: usize, seed: u64) -> ValidConfig {
    FederationConfig::new(k)
        .channel(Channel::scma(Masks::Dealer))
        .min_clients(min_clients)
        .seed(seed)
        .validate()
        .unwrap()
}

/// Five paired clients, their server, the keys and the honest dealer.
fn dealt_federation(
    label: &str,
    seed: u64,
) -> (
    Vec<Dataset>,
    RemoteServer,
    Vec<RemoteClient>,
    Keys,
    RemoteDealer,
) {
    let mix = Mixture {
        clients: 5,
        per_client: 24,
        ..Mixture::SMALL
    };
    let data = gaussian_clients(label, mix);
    let (server, mut clients) = federation(&data, &dealt_config(3, 3, seed));
    let keys = Keys::new(clients.len());
    keys.pair(&mut clients);
    let dealer = keys.dealer(None);
    (data, server, clients, keys, dealer)
}

/// One round with `dealer`, the seals relayed as `tamper` leaves them.
fn dealt_round(
    server: &mut RemoteServer,
    clients: &mut [RemoteClient],
    dealer: &mut RemoteDealer,
    faults: &BTreeMap<ClientId, Fault>,
    tamper: &mut Tamper<'_>,
) -> MufcResult<Outcome> {
    let dealing = Dealing { dealer, tamper };
    run_round_dealt(server, clients, faults, &mut |_, _| {}, Some(dealing), None)
}

fn honest(
    server: &mut RemoteServer,
    clients: &mut [RemoteClient],
    dealer: &mut RemoteDealer,
) -> MufcResult<Outcome> {
    dealt_round(server, clients, dealer, &BTreeMap::new(), &mut |_| {})
}

#[test]
fn dealt_rounds_train_and_forget_exactly() {
    let (data, mut server, mut clients, _keys, mut dealer) = dealt_federation("remote-dealt", 81);
    let mut data = with_ids(&data);
    let first = honest(&mut server, &mut clients, &mut dealer).unwrap();
    assert!(first.report.training);
    assert_equals_retraining(&server, &data, "training");
    // The model is the in-process federation's with its simulated dealer.
    let in_process = Federation::with_ids(data.clone(), server.setup().config()).unwrap();
    assert_eq!(
        centroid_bits(server.server()),
        centroid_bits(in_process.server())
    );
    assert_eq!(dealer.setup(), Some(server.setup()));

    let mut rng = testdata::rng("remote-dealt-forget");
    let mut masked_by_round = Vec::new();
    for round in 0..4 {
        forget_one_point_of_two(&mut rng, &mut clients, &mut data);
        let out = honest(&mut server, &mut clients, &mut dealer).unwrap();
        assert_equals_retraining(&server, &data, &format!("removal round {round}"));
        masked_by_round.push(out.masked_inputs());
    }
    // Fresh seeds every round: a client's masked bytes never repeat.
    for (c, m) in &masked_by_round[0] {
        assert_ne!(Some(m), masked_by_round[1].get(c), "client {c}");
    }
    // A whole client forgotten: it sends an empty histogram, masked.
    let gone = draw_clients(&mut rng, clients.len(), 1)[0];
    let all = data[at(gone)].1.ids().to_vec();
    clients[at(gone)].forget(&all).unwrap();
    data[at(gone)].1 = data[at(gone)].1.without(&all).unwrap();
    honest(&mut server, &mut clients, &mut dealer).unwrap();
    assert_equals_retraining(&server, &data, &format!("client {gone} forgotten whole"));
}

#[test]
fn a_client_missing_fails_the_dealt_round_and_changes_nothing() {
    for (case, step) in [SecAggStep::AdvertiseKeys, SecAggStep::MaskedInput]
        .into_iter()
        .enumerate()
    {
        let (data, mut server, mut clients, _keys, mut dealer) =
            dealt_federation("remote-dealt-dropout", 90 + case as u64);
        let data = with_ids(&data);
        honest(&mut server, &mut clients, &mut dealer).unwrap();
        let counts = server.server().counts().clone();
        let mut rng = testdata::rng(&format!("remote-dealt-dropout-{case}"));
        let silent = draw_clients(&mut rng, clients.len(), 1)[0];
        let faults = BTreeMap::from([(silent, Fault::Silent(step))]);
        let err =
            dealt_round(&mut server, &mut clients, &mut dealer, &faults, &mut |_| {}).unwrap_err();
        // A dealt round's clients answer one step, with their masked
        // inputs: a client gone from the start is missing there.
        assert!(
            matches!(&err, MufcError::RingIncomplete { missing, step: at, .. }
                if missing == &[silent] && *at == SecAggStep::MaskedInput),
            "client {silent} silent at {step}: {err}"
        );
        assert_eq!(server.server().counts(), &counts, "at {step}");
        honest(&mut server, &mut clients, &mut dealer).unwrap();
        assert_equals_retraining(&server, &data, &format!("after a failed round at {step}"));
    }
}

#[test]
fn an_unpaired_client_refuses_a_dealt_round() {
    let (_, mut server, mut clients, _keys, mut dealer) =
        dealt_federation("remote-dealt-unpaired", 95);
    let data = clients[2].data().clone();
    clients[2] = RemoteClient::new(ClientId(2), data).unwrap();
    let err = honest(&mut server, &mut clients, &mut dealer).unwrap_err();
    assert!(
        matches!(&err, MufcError::RoundRefused { reason, .. } if reason.contains("no key with a dealer")),
        "{err}"
    );
}

/// A round of every client, to its first step: the announcement, the
/// server's round holding every client's first message, and the clients'
/// halves.
fn keys_step(
    server: &mut RemoteServer,
    clients: &mut [RemoteClient],
) -> (Announcement, ServerRound, BTreeMap<ClientId, ClientRound>) {
    let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
    let started = server.start_round(&ids).unwrap();
    joined(clients, started)
}

/// The round `started`, to its first step: every client joined, the
/// server holding their first messages.
pub(super) fn joined(
    clients: &mut [RemoteClient],
    (announcement, mut round): (Announcement, ServerRound),
) -> (Announcement, ServerRound, BTreeMap<ClientId, ClientRound>) {
    let mut halves = BTreeMap::new();
    for c in clients.iter_mut() {
        let (half, first) = c.join(&announcement).unwrap();
        // None in a dealt round: the client waits for its sealed seed.
        if let Some(first) = first {
            round.receive(c.id(), &first).unwrap();
        }
        halves.insert(c.id(), half);
    }
    (announcement, round, halves)
}

/// The bytes of a deal request naming `ring` (the format the server's
/// request has: checked against it below).
fn deal_request(session: [u8; 32], round: u64, ring: &[ClientId]) -> Vec<u8> {
    let mut out = vec![2];
    out.extend_from_slice(&session);
    out.extend(varint(usize::try_from(round).unwrap()));
    out.extend(varint(ring.len()));
    for c in ring {
        out.extend(varint(usize::try_from(c.0).unwrap()));
    }
    out
}

/// The dealer's refusal, or a failure naming `what` was dealt.
fn refused(dealt: MufcResult<Vec<u8>>, what: &str) -> MufcError {
    match dealt {
        Ok(_) => panic!("the dealer dealt {what}"),
        Err(e) => e,
    }
}

/// The ways a lying server asks the dealer for a deal it must refuse.
#[derive(Clone, Copy, Debug)]
enum Lie {
    /// A ring of the victim alone: the correction would unmask it.
    RingOfOne,
    /// A ring smaller than the minimum aggregate.
    SmallRing,
    /// A ring naming a client outside the roster.
    Stranger,
    /// A ring naming one client twice.
    Twice,
    /// The round announced as pairwise.
    OtherProtocol,
    /// The same ring, and a request that leaves the victim out.
    RequestOmits,
    /// A setup whose minimum aggregate is one (outside the agreement).
    WeakerSetup,
}

const LIES: [Lie; 7] = [
    Lie::RingOfOne,
    Lie::SmallRing,
    Lie::Stranger,
    Lie::Twice,
    Lie::OtherProtocol,
    Lie::RequestOmits,
    Lie::WeakerSetup,
];

#[test]
fn a_lying_server_gets_no_deal_that_unmasks_less_than_an_aggregate() {
    let (data, mut server, mut clients, keys, mut dealer) =
        dealt_federation("remote-dealt-lies", 97);
    let regs: Vec<Registration> = clients.iter().map(RemoteClient::registration).collect();
    let config = server.setup().config().clone();
    let mut agreement = Agreement::new(clients.len()).policy(Policy {
        masking: Masking::Dealer,
        min_clients: 3,
        min_updating_clients: config.min_updating_clients(),
    });
    agreement.min_gamma = 0.0;
    dealer.agree(agreement);
    // The keys step, then the server's real request.
    let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
    let (announcement, mut round, _) = keys_step(&mut server, &mut clients);
    let RoundStep::Deal(request) = round.advance().unwrap() else {
        panic!("a dealt round asks for a deal");
    };
    let spec = &announcement.spec;
    assert_eq!(deal_request(spec.session, spec.round, &spec.ring), request);

    let mut rng = testdata::rng("remote-dealt-lies");
    let mut lies = LIES.to_vec();
    for i in (1..lies.len()).rev() {
        lies.swap(i, rng.random_range(0..=i));
    }
    for lie in lies {
        let victim = draw_clients(&mut rng, clients.len(), 1)[0];
        let mut forged = announcement.clone();
        let ring = &mut forged.spec.ring;
        let mut asked = None;
        match lie {
            Lie::RingOfOne => *ring = vec![victim],
            Lie::SmallRing => ring.retain(|c| *c == victim || c.0 == (victim.0 + 1) % 5),
            Lie::Stranger => ring.push(ClientId(99)),
            Lie::Twice => ring.push(victim),
            Lie::OtherProtocol => forged.spec.protocol = RoundProtocol::Pairwise,
            Lie::RequestOmits => {
                let rest: Vec<ClientId> = ring.iter().copied().filter(|c| *c != victim).collect();
                asked = Some(deal_request(spec.session, spec.round, &rest));
            }
            Lie::WeakerSetup => {
                let weak = config
                    .clone()
                    .into_builder()
                    .min_clients(1)
                    .validate()
                    .unwrap();
                forged.setup = RemoteSetup::new(&weak, &regs).unwrap();
                *ring = vec![victim];
            }
        }
        let asked =
            asked.unwrap_or_else(|| deal_request(spec.session, spec.round, &forged.spec.ring));
        let err = refused(dealer.deal(&forged, &asked), &format!("{lie:?}"));
        assert!(
            matches!(err, MufcError::RoundRefused { .. } | MufcError::Sketch(_)),
            "{lie:?} against client {victim}: {err}"
        );
    }
    // A dealer without a key for a client of the ring refuses it too.
    let mut keyless = keys.dealer(Some(ClientId(3)));
    let err = refused(keyless.deal(&announcement, &request), "a keyless client");
    assert!(err.to_string().contains("shares no key"), "{err}");

    // None of it changed the dealer: the honest request is dealt, and the
    // round commits exactly.
    let answer = dealer.deal(&announcement, &request).unwrap();
    round.receive_deal(&answer).unwrap();
    drop(round);
    let out = honest(&mut server, &mut clients, &mut dealer).unwrap();
    assert!(out.report.training);
    assert_equals_retraining(&server, &with_ids(&data), "after the lies");
    // Pinned: a later setup, even within the agreement, is another
    // federation's.
    let (mut next, _) = server.start_round(&ids).unwrap();
    next.setup = RemoteSetup::new(
        &config.into_builder().min_clients(4).validate().unwrap(),
        &regs,
    )
    .unwrap();
    let asked = deal_request(next.spec.session, next.spec.round, &next.spec.ring);
    let err = refused(dealer.deal(&next, &asked), "another setup");
    assert!(err.to_string().contains("first deal"), "{err}");
}

/// What a lying server does to the seals on their way to the clients.
#[derive(Clone, Copy, Debug)]
enum Forgery {
    /// Two clients' seals swapped.
    Swapped,
    /// One bit of one seal flipped.
    BitFlipped,
    /// An earlier round's seal, under this round's header.
    Replayed,
    /// Seals the server dealt itself, under a key pair of its own and
    /// the clients' public keys.
    OwnDealer,
}

#[test]
fn no_client_masks_with_a_seal_the_server_altered_or_made() {
    let mut rng = testdata::rng("remote-dealt-forgeries");
    let forgeries = [
        Forgery::Swapped,
        Forgery::BitFlipped,
        Forgery::Replayed,
        Forgery::OwnDealer,
    ];
    for trial in 0..6u64 {
        let forgery = forgeries[rng.random_range(0..forgeries.len())];
        let (data, mut server, mut clients, keys, mut dealer) =
            dealt_federation("remote-dealt-forgery", 100 + trial);
        let data = with_ids(&data);
        let mut earlier = Vec::new();
        dealt_round(
            &mut server,
            &mut clients,
            &mut dealer,
            &BTreeMap::new(),
            &mut |m| {
                earlier = m.clone();
            },
        )
        .unwrap();
        let counts = server.server().counts().clone();
        let pair = draw_clients(&mut rng, clients.len(), 2);
        let (a, b) = (at(pair[0]), at(pair[1]));
        let bit = rng.random_range(0..60 * 8);
        let what = format!("trial {trial}: {forgery:?} (clients {a}, {b})");
        let mut own = RemoteDealer::new(
            &MaskKeyPair::generate(&mut rand::rng()),
            &keys
                .clients
                .iter()
                .enumerate()
                .map(|(i, k)| (ClientId(i as u64), k.public_key()))
                .collect(),
        )
        .unwrap();
        let mut tamper = |m: &mut Vec<(ClientId, Vec<u8>)>| match forgery {
            Forgery::Swapped => {
                let (x, y) = (m[a].1.clone(), m[b].1.clone());
                m[a].1 = y;
                m[b].1 = x;
            }
            Forgery::BitFlipped => {
                let n = m[a].1.len();
                m[a].1[n - 60 + bit / 8] ^= 1 << (bit % 8);
            }
            Forgery::Replayed => {
                let (now, old) = (&mut m[a].1, &earlier[a].1);
                assert_eq!(now.len(), old.len(), "{what}");
                let n = now.len();
                now[n - 60..].copy_from_slice(&old[n - 60..]);
            }
            Forgery::OwnDealer => {}
        };
        let played = match forgery {
            Forgery::OwnDealer => &mut own,
            _ => &mut dealer,
        };
        let err = dealt_round(
            &mut server,
            &mut clients,
            played,
            &BTreeMap::new(),
            &mut tamper,
        )
        .unwrap_err();
        assert!(err.to_string().contains("does not open"), "{what}: {err}");
        assert_eq!(server.server().counts(), &counts, "{what}");
        honest(&mut server, &mut clients, &mut dealer).unwrap();
        assert_equals_retraining(&server, &data, &what);
    }
}

#[test]
fn dealt_groups_across_processes_are_the_tree_in_one_process() {
    let mix = Mixture {
        clients: 6,
        ..Mixture::SMALL
    };
    let data = gaussian_clients("remote-dealt-groups", mix);
    let config = dealt_config(2, 3, 110)
        .into_builder()
        .topology(Topology::Groups { size: 3 })
        .validate()
        .unwrap();
    let (mut server, mut clients) = federation(&data, &config);
    let keys = Keys::new(clients.len());
    keys.pair(&mut clients);
    let mut dealer = keys.dealer(None);
    let layout = server.setup().layout().unwrap().clone();
    for ids in layout.groups() {
        let (first, last) = (at(ids[0]), at(ids[ids.len() - 1]));
        let out = honest(&mut server, &mut clients[first..=last], &mut dealer).unwrap();
        assert_eq!(out.report.included, *ids);
    }
    let mut data = with_ids(&data);
    groups::assert_equals_tree(&server, &data, "dealt groups");
    // A removal in one group: its round alone, exact.
    let g = &layout.groups()[1];
    let c = at(g[0]);
    let id = data[c].1.ids()[0];
    clients[c].forget(&[id]).unwrap();
    data[c].1 = data[c].1.without(&[id]).unwrap();
    honest(
        &mut server,
        &mut clients[at(g[0])..=at(g[g.len() - 1])],
        &mut dealer,
    )
    .unwrap();
    groups::assert_equals_tree(&server, &data, "a removal in group 1");
    // A ring across the two groups: the dealer refuses it.
    let (mut across, _) = server.start_round(&g.clone()).unwrap();
    across.spec.ring = vec![layout.groups()[0][0], g[1], g[2]];
    let ring = across.spec.ring.clone();
    let asked = deal_request(across.spec.session, across.spec.round, &ring);
    let err = refused(dealer.deal(&across, &asked), "a ring across groups");
    assert!(err.to_string().contains("outside the group"), "{err}");
}

#[test]
fn a_deal_for_a_smaller_ring_than_the_clients_were_told_does_not_open() {
    // The server announces the whole ring to the clients, so that each
    // joins (the ring names every client of its last sum), but asks the
    // dealer for the ring without one client: that deal's correction
    // would unmask the smaller sum, and with the whole ring's sum of the
    // round before, the histogram of the client left out.
    let mut rng = testdata::rng("remote-dealt-smaller-ring");
    for trial in 0..3u64 {
        let (_, mut server, mut clients, _keys, mut dealer) =
            dealt_federation("remote-dealt-smaller", 120 + trial);
        honest(&mut server, &mut clients, &mut dealer).unwrap();
        let out = draw_clients(&mut rng, clients.len(), 1)[0];
        let rest: Vec<ClientId> = clients
            .iter()
            .map(RemoteClient::id)
            .filter(|c| *c != out)
            .collect();
        let (smaller, mut round) = server.start_round(&rest).unwrap();
        let mut told = smaller.clone();
        told.spec.ring = clients.iter().map(RemoteClient::id).collect();
        let mut halves = BTreeMap::new();
        for c in clients.iter_mut().filter(|c| c.id() != out) {
            let (half, first) = c.join(&told).unwrap();
            assert!(first.is_none(), "a dealt round's client waits for its seal");
            halves.insert(c.id(), half);
        }
        let RoundStep::Deal(request) = round.advance().unwrap() else {
            panic!("a dealt round asks for a deal");
        };
        // A ring of four of five is an aggregate the dealer allows.
        let answer = dealer.deal(&smaller, &request).unwrap();
        round.receive_deal(&answer).unwrap();
        let RoundStep::Send(seals) = round.advance().unwrap() else {
            panic!("the seals");
        };
        for (to, seal) in seals {
            let Err(err) = halves.get_mut(&to).unwrap().handle(&seal) else {
                panic!("trial {trial}: client {to} masked with a deal that leaves {out} out");
            };
            assert!(
                err.to_string().contains("does not open"),
                "trial {trial}: client {to}, told a ring with client {out}: {err}"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any bytes, or an honest message with one byte changed, given to
    /// the dealer as a request, to the server as the dealer's answer, and
    /// to a client as its sealed seed: an error or a valid message, never
    /// a panic; after a refusal the honest message is still taken, and
    /// the round commits exactly.
    #[test]
    fn dealt_messages_parse_from_any_bytes(
        junk in proptest::collection::vec(any::<u8>(), 0..200),
        flip in any::<(usize, u8)>(),
    ) {
        let (data, mut server, mut clients, _keys, mut dealer) =
            dealt_federation("remote-dealt-fuzz", 130);
        let (announcement, mut round, mut halves) = keys_step(&mut server, &mut clients);
        let mutate = |honest: &[u8]| {
            let mut m = honest.to_vec();
            let i = flip.0 % m.len();
            m[i] ^= flip.1.max(1);
            m
        };
        let RoundStep::Deal(request) = round.advance().unwrap() else {
            panic!("a dealt round asks for a deal");
        };
        prop_assert!(dealer.deal(&announcement, &junk).is_err());
        // Every byte of a request names its round or its ring: a changed
        // one is refused.
        prop_assert!(dealer.deal(&announcement, &mutate(&request)).is_err());
        let answer = dealer.deal(&announcement, &request).unwrap();
        prop_assert!(round.receive_deal(&junk).is_err());
        round.receive_deal(&answer).unwrap();
        let RoundStep::Send(seals) = round.advance().unwrap() else { panic!("the seals") };
        for (to, seal) in &seals {
            let half = halves.get_mut(to).unwrap();
            prop_assert!(half.handle(&junk).is_err());
            prop_assert!(half.handle(&mutate(seal)).is_err());
            let masked = half.handle(seal).unwrap();
            round.receive(*to, &masked).unwrap();
        }
        prop_assert!(matches!(round.advance().unwrap(), RoundStep::Finished));
        server.finish_round(round).unwrap();
        assert_equals_retraining(&server, &with_ids(&data), "after the junk");

        // The next round, with the dealer's answer changed on its way (a
        // changed seal or correction is still one, as from a faulty
        // dealer): refused, or the round fails at a client or in the
        // decode, or commits the exact model.
        let (announcement, mut round, mut halves) = keys_step(&mut server, &mut clients);
        let RoundStep::Deal(request) = round.advance().unwrap() else { panic!("a deal") };
        let answer = dealer.deal(&announcement, &request).unwrap();
        if round.receive_deal(&mutate(&answer)).is_err() {
            round.receive_deal(&answer).unwrap();
        }
        let RoundStep::Send(seals) = round.advance().unwrap() else { panic!("the seals") };
        for (to, seal) in &seals {
            match halves.get_mut(to).unwrap().handle(seal) {
                Ok(masked) => round.receive(*to, &masked).unwrap(),
                Err(_) => return Ok(()),
            }
        }
        prop_assert!(matches!(round.advance().unwrap(), RoundStep::Finished));
        if server.finish_round(round).is_ok() {
            assert_equals_retraining(&server, &with_ids(&data), "after a changed answer");
        }
    }
}

#[test]
fn a_dealer_offline_fails_the_round_and_changes_nothing() {
    // The dealer never answers: the server's deadline passes, the round
    // cannot go on (no client has a seed to mask with), and nothing
    // changes; the next round, with the dealer back, commits exactly.
    let (data, mut server, mut clients, _keys, mut dealer) =
        dealt_federation("remote-dealt-offline", 140);
    let data = with_ids(&data);
    honest(&mut server, &mut clients, &mut dealer).unwrap();
    let counts = server.server().counts().clone();
    let (_, mut round, _) = keys_step(&mut server, &mut clients);
    assert!(matches!(round.advance().unwrap(), RoundStep::Deal(_)));
    let err = round.advance().unwrap_err();
    assert!(err.to_string().contains("dealer has not answered"), "{err}");
    drop(round);
    assert_eq!(server.server().counts(), &counts);
    honest(&mut server, &mut clients, &mut dealer).unwrap();
    assert_equals_retraining(&server, &data, "after a round without its dealer");
}
