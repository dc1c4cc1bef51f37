//! Pairwise masks across processes (issue 27: every mask source is
//! something the parties do): the key directory travels through the
//! server, every committed round equals retraining bit for bit, a client
//! missing at either step fails the round and changes nothing, a client's
//! bad message is refused while the round goes on, and a client refuses a
//! directory that is not the ring's.

use super::*;

fn pairwise_config(k: usize, min_clients: usize, seed: u64) -> ValidConfig {
    FederationConfig::new(k)
        .channel(Channel::scma(Masks::Pairwise))
        .min_clients(min_clients)
        .seed(seed)
        .validate()
        .unwrap()
}

fn pairwise_federation(label: &str, seed: u64) -> (Vec<Dataset>, RemoteServer, Vec<RemoteClient>) {
    let mix = Mixture {
        clients: 5,
        per_client: 24,
        ..Mixture::SMALL
    };
    let data = gaussian_clients(label, mix);
    let (server, clients) = federation(&data, &pairwise_config(3, 3, seed));
    (data, server, clients)
}

#[test]
fn pairwise_rounds_train_and_forget_exactly() {
    let (data, mut server, mut clients) = pairwise_federation("remote-pairwise", 41);
    let mut data = with_ids(&data);
    let first = run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
    assert!(first.report.training);
    assert!(first.report.dropped.is_empty());
    assert_equals_retraining(&server, &data, "training");

    let mut rng = testdata::rng("remote-pairwise-forget");
    let mut masked_by_round = Vec::new();
    for round in 0..4 {
        forget_one_point_of_two(&mut rng, &mut clients, &mut data);
        let out = run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
        assert_equals_retraining(&server, &data, &format!("removal round {round}"));
        masked_by_round.push(out.masked_inputs());
    }
    // The same client's masked message differs from round to round even
    // where its data did not change: every round draws fresh keys.
    let (a, b) = (&masked_by_round[0], &masked_by_round[1]);
    for (c, m) in a {
        assert_ne!(
            Some(m),
            b.get(c),
            "client {c} sent the same masked bytes twice"
        );
    }
}

#[test]
fn a_client_missing_at_either_step_fails_the_round_and_changes_nothing() {
    for (case, step) in [SecAggStep::AdvertiseKeys, SecAggStep::MaskedInput]
        .into_iter()
        .enumerate()
    {
        let (data, mut server, mut clients) =
            pairwise_federation("remote-pairwise-dropout", 50 + case as u64);
        let data = with_ids(&data);
        run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
        let counts = server.server().counts().clone();
        let mut rng = testdata::rng(&format!("remote-pairwise-dropout-{case}"));
        let silent = draw_clients(&mut rng, clients.len(), 1)[0];
        let faults = BTreeMap::from([(silent, Fault::Silent(step))]);
        let err = run_round(&mut server, &mut clients, &faults).unwrap_err();
        assert!(
            matches!(&err, MufcError::RingIncomplete { missing, step: at, .. }
                if missing == &[silent] && *at == step),
            "client {silent} silent at {step}: {err}"
        );
        // The message names the client and why no threshold helps.
        let text = err.to_string();
        assert!(text.contains(&format!("({silent}) dropped out")), "{text}");
        assert!(text.contains("every client of its ring"), "{text}");
        assert_eq!(server.server().counts(), &counts, "at {step}");
        // The next round, with everybody, commits and is exact.
        run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
        assert_equals_retraining(&server, &data, &format!("after a failed round at {step}"));
    }
}

#[test]
fn a_clients_bad_message_is_refused_and_the_round_completes() {
    let mut rng = testdata::rng("remote-pairwise-attacks");
    for trial in 0..6 {
        let (data, mut server, mut clients) =
            pairwise_federation("remote-pairwise-bad", 60 + trial);
        let data = with_ids(&data);
        let ids = draw_clients(&mut rng, clients.len(), 2);
        let (attacker, victim) = (ids[0], ids[1]);
        let step = if rng.random_bool(0.5) {
            SecAggStep::AdvertiseKeys
        } else {
            SecAggStep::MaskedInput
        };
        let attack = match rng.random_range(0..3) {
            0 => Attack::Foreign(victim),
            1 => Attack::Bytes("garbage", vec![1, 7, 7, 7]),
            _ => Attack::Truncated(rng.random_range(0..1000)),
        };
        let what = format!("trial {trial}: client {attacker} sends {attack:?} at {step}");
        let faults = BTreeMap::from([(
            attacker,
            Fault::Attack {
                step,
                attack,
                then_honest: true,
            },
        )]);
        run_round(&mut server, &mut clients, &faults).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_equals_retraining(&server, &data, &what);
    }
}

#[test]
fn a_client_refuses_a_directory_that_is_not_the_rings() {
    let (_, mut server, mut clients) = pairwise_federation("remote-pairwise-directory", 70);
    let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
    let (announcement, mut round) = server.start_round(&ids).unwrap();
    let mut halves = Vec::new();
    for c in clients.iter_mut() {
        let (half, first) = c.join(&announcement).unwrap();
        let first = first.expect("a pairwise client sends its key first");
        round.receive(c.id(), &first).unwrap();
        halves.push(half);
    }
    let RoundStep::Send(msgs) = round.advance().unwrap() else {
        panic!("the directory is sent");
    };
    let (to, directory) = msgs.last().unwrap().clone();
    let me = at(to);
    // The directory lists the keys in id order: its last 32 bytes are the
    // key of the last client, which this one is.
    let mut swapped = directory.clone();
    let n = swapped.len();
    swapped[n - 1] ^= 1;
    let err = halves[me].handle(&swapped).unwrap_err();
    assert!(
        matches!(err, MufcError::RoundRefused { .. }),
        "a changed own key: {err}"
    );
    // Entries of 33 bytes (a one-byte id, a key), in id order: the
    // first one renamed to a stranger, or named twice. The client's own
    // key is intact; only the ring check can catch these.
    let first = n - 33 * ids.len();
    assert_eq!(directory[first], 0, "the first entry is client 0's");
    let mut stranger = directory.clone();
    stranger[first] = 99;
    let mut twice = directory.clone();
    twice[first] = 1;
    for (what, d) in [("a stranger", stranger), ("a client twice", twice)] {
        let err = halves[me].handle(&d).unwrap_err();
        assert!(
            matches!(err, MufcError::RoundRefused { .. }),
            "a directory with {what}: {err}"
        );
    }
    for cut in [0, 1, n / 2, n - 1] {
        assert!(
            halves[me].handle(&directory[..cut]).is_err(),
            "a directory cut to {cut} bytes"
        );
    }
    // The honest directory is still taken: nothing was sent before.
    assert!(halves[me].handle(&directory).is_ok());
    assert!(halves[me].is_done());
}

#[test]
fn a_client_refuses_a_pairwise_round_it_should_not_join() {
    let (_, mut server, mut clients) = pairwise_federation("remote-pairwise-lies", 80);
    let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
    let (honest, _) = server.start_round(&ids).unwrap();
    let me = ids[0];
    // A ring of the client alone (its sketch would go unmasked), of fewer
    // than the minimum aggregate, or a SecAgg run it is not configured
    // for: refused, nothing sent.
    let mut alone = honest.clone();
    alone.spec.ring = vec![me];
    let mut two = honest.clone();
    two.spec.ring = vec![me, ids[1]];
    let mut secagg = honest.clone();
    secagg.spec.protocol = RoundProtocol::SecAgg(syndrome_agg::secagg::params::SecAggParams::new(
        syndrome_agg::secagg::params::GraphChoice::Complete,
        3,
        0,
        syndrome_agg::secagg::params::ServerModel::SemiMalicious,
    ));
    // A change round, before any round committed: the client has no base
    // to take its change against.
    let mut changes = honest.clone();
    changes.spec.sends = Sends::Changes {
        capacity: 1,
        base: 0,
    };
    for (what, a) in [
        ("alone", alone),
        ("two", two),
        ("secagg", secagg),
        ("changes", changes),
    ] {
        let err = clients[0]
            .join(&a)
            .err()
            .unwrap_or_else(|| panic!("{what} was joined"));
        assert!(
            matches!(err, MufcError::RoundRefused { .. }),
            "{what}: {err}"
        );
    }
    assert!(clients[0].join(&honest).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any bytes, or an honest message with one byte changed, given to
    /// the server at either step or to a client as its directory: an
    /// error or a valid message, never a panic; and after a refusal the
    /// honest message is still taken.
    #[test]
    fn pairwise_messages_parse_from_any_bytes(
        junk in proptest::collection::vec(any::<u8>(), 0..200),
        flip in any::<(usize, u8)>(),
    ) {
        let (_, mut server, mut clients) = pairwise_federation("remote-pairwise-fuzz", 90);
        let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
        let (announcement, mut round) = server.start_round(&ids).unwrap();
        let mut halves = Vec::new();
        let mut firsts = Vec::new();
        for c in clients.iter_mut() {
            let (half, first) = c.join(&announcement).unwrap();
            halves.push(half);
            firsts.push(first.expect("a pairwise client sends its key first"));
        }
        let mutate = |honest: &[u8]| {
            let mut m = honest.to_vec();
            let i = flip.0 % m.len();
            m[i] ^= flip.1.max(1);
            m
        };
        prop_assert!(round.receive(ids[0], &junk).is_err());
        // A refused message changes nothing: the honest key is taken
        // unless the changed one was (a changed key is still a key).
        let took_changed = round.receive(ids[0], &mutate(&firsts[0])).is_ok();
        prop_assert_eq!(round.receive(ids[0], &firsts[0]).is_ok(), !took_changed);
        for (c, first) in ids.iter().zip(&firsts).skip(1) {
            round.receive(*c, first).unwrap();
        }
        let RoundStep::Send(msgs) = round.advance().unwrap() else { panic!("directory") };
        let (to, directory) = msgs.last().unwrap().clone();
        let me = at(to);
        if halves[me].handle(&junk).is_err() && halves[me].handle(&mutate(&directory)).is_err() {
            prop_assert!(halves[me].handle(&directory).is_ok());
        }
        let mut masked = Vec::new();
        for (c, d) in &msgs {
            if !halves[at(*c)].is_done() {
                masked.push((*c, halves[at(*c)].handle(d)));
            }
        }
        prop_assert!(round.receive(ids[1], &junk).is_err());
        if let Some((c, Ok(m))) = masked.first() {
            let took_changed = round.receive(*c, &mutate(m)).is_ok();
            prop_assert_eq!(round.receive(*c, m).is_ok(), !took_changed);
        }
    }
}

/// Postcard's unsigned varint.
pub(super) fn varint(mut v: usize) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let b = u8::try_from(v & 0x7f).unwrap();
        v >>= 7;
        if v == 0 {
            out.push(b);
            return out;
        }
        out.push(b | 0x80);
    }
}

/// A member's masked frame for other sketch parameters (here another
/// capacity) is refused when it arrives, not when the sum is taken: the
/// member's own frame is then taken and the round completes, exactly.
#[test]
fn a_frame_of_other_parameters_is_refused_on_arrival() {
    let (data, mut server, mut clients) = pairwise_federation("remote-pairwise-params", 95);
    let data = with_ids(&data);
    let ids: Vec<ClientId> = clients.iter().map(RemoteClient::id).collect();
    let (announcement, mut round) = server.start_round(&ids).unwrap();
    let mut halves = Vec::new();
    for c in clients.iter_mut() {
        let (half, first) = c.join(&announcement).unwrap();
        let first = first.expect("a pairwise client sends its key first");
        round.receive(c.id(), &first).unwrap();
        halves.push(half);
    }
    let RoundStep::Send(msgs) = round.advance().unwrap() else {
        panic!("the directory is sent");
    };
    let masked: Vec<(ClientId, Vec<u8>)> = msgs
        .iter()
        .map(|(c, d)| (*c, halves[at(*c)].handle(d).unwrap()))
        .collect();
    // The message is the frame alone.
    let (attacker, honest) = &masked[0];
    let mut f = syndrome_agg::wire::Frame::parse(honest, usize::MAX).unwrap();
    f.capacity += 1;
    let forged = f.to_bytes().unwrap();
    assert!(
        round.receive(*attacker, &forged).is_err(),
        "a frame of another capacity was taken"
    );
    for (c, m) in &masked {
        round.receive(*c, m).unwrap();
    }
    assert!(matches!(round.advance().unwrap(), RoundStep::Finished));
    server.finish_round(round).unwrap();
    for (c, half) in clients.iter_mut().zip(halves) {
        c.commit(half);
    }
    assert_equals_retraining(&server, &data, "after a refused frame");
}
