//! Change rounds across processes (issue 27: change rounds are party
//! logic). After a removal each client sends, masked with pairwise or
//! dealt masks, the change of its histogram since the last committed
//! round that included it, and the server decodes the sum of the changes
//! against its counts. Every committed change round equals retraining bit
//! for bit, flat and with groups, a client that forgot every point
//! included. A change round that cannot run (a restarted client without
//! its base, fewer changed clients announced than there are) fails,
//! changes nothing, and the next round is whole. A lying server's change
//! round (another base, a capacity out of range) is refused by the
//! clients, and by the dealer where it can tell.

use super::dealer::{Keys, joined};
use super::*;
use mufc::{ClientTraining, Topology};

/// The mask sources whose rounds need every client: those with change
/// rounds.
#[derive(Clone, Copy, Debug)]
pub(super) enum Source {
    Pairwise,
    Dealer,
}

pub(super) const SOURCES: [Source; 2] = [Source::Pairwise, Source::Dealer];

/// Six clients under `source` (with `topology`), their server, and the
/// dealer when the masks are dealt; `data` follows every removal.
pub(super) struct Fed {
    pub(super) server: RemoteServer,
    pub(super) clients: Vec<RemoteClient>,
    dealer: Option<RemoteDealer>,
    keys: Option<Keys>,
    pub(super) data: Vec<(ClientId, Dataset)>,
}

impl Fed {
    pub(super) fn new(label: &str, source: Source, topology: Option<Topology>, seed: u64) -> Self {
        Self::training(label, source, topology, seed, None)
    }

    /// [`Self::new`], the clients training as `training` says (the
    /// configuration's default when `None`).
    pub(super) fn training(
        label: &str,
        source: Source,
        topology: Option<Topology>,
        seed: u64,
        training: Option<ClientTraining>,
    ) -> Self {
        let mix = Mixture {
            clients: 6,
            per_client: 24,
            ..Mixture::SMALL
        };
        let data = gaussian_clients(label, mix);
        let masks = match source {
            Source::Pairwise => Masks::Pairwise,
            Source::Dealer => Masks::Dealer,
        };
        // Three clusters at every client, so that the changes of two
        // clients (2 k each) stay below the capacity (k L).
        let mut config = FederationConfig::new(3)
            .client_k(3)
            .channel(Channel::scma(masks))
            .min_clients(3)
            .seed(seed);
        if let Some(t) = topology {
            config = config.topology(t);
        }
        if let Some(t) = training {
            config = config.client_training(t);
        }
        let (server, mut clients) = federation(&data, &config.validate().unwrap());
        let keys = matches!(source, Source::Dealer).then(|| Keys::new(clients.len()));
        if let Some(k) = &keys {
            k.pair(&mut clients);
        }
        Self {
            server,
            clients,
            dealer: keys.as_ref().map(|k| k.dealer(None)),
            keys,
            data: with_ids(&data),
        }
    }

    /// One round of the clients at `range`: a change round where one
    /// applies when `updated` says how many of them changed, else whole.
    pub(super) fn round(&mut self, range: Range, updated: Option<usize>) -> MufcResult<Outcome> {
        let mut none = |_: &mut Vec<(ClientId, Vec<u8>)>| {};
        let dealing = (self.dealer.as_mut()).map(|dealer| Dealing {
            dealer,
            tamper: &mut none,
        });
        let clients = &mut self.clients[range];
        run_round_dealt(
            &mut self.server,
            clients,
            &BTreeMap::new(),
            &mut |_, _| {},
            dealing,
            updated,
        )
    }

    /// Client `c` restarts from what its store keeps (its points, setup,
    /// seeds, sessions and last sum), and pairs with the dealer again with
    /// its long-term key, as its operator does at every start.
    fn restart(&mut self, c: usize) {
        let old = &self.clients[c];
        let mut new = RemoteClient::restore(
            old.id(),
            old.data().clone(),
            old.setup().cloned(),
            old.seeds(),
            old.sessions().clone(),
        )
        .unwrap()
        .with_last_sum(old.last_sum().to_vec());
        if let Some(keys) = &self.keys {
            keys.pair_one(&mut new, c);
        }
        self.clients[c] = new;
    }

    /// Client `c` forgets `ids`.
    pub(super) fn forget(&mut self, c: usize, ids: &[PointId]) {
        self.clients[c].forget(ids).unwrap();
        self.data[c].1 = self.data[c].1.without(ids).unwrap();
    }

    /// One or two clients of `range`, drawn at random, forget one or
    /// two random points each, and each a seed with even odds (a client
    /// keeps at least three points): how many clients changed.
    pub(super) fn forget_some(&mut self, rng: &mut ChaCha8Rng, range: Range) -> usize {
        let n = range.end() - range.start() + 1;
        let mut changed = 0;
        let m = rng.random_range(1..=2);
        for c in draw_clients(rng, n, m) {
            let i = range.start() + at(c);
            let held = self.data[i].1.ids().to_vec();
            if held.len() <= 4 {
                continue;
            }
            let mut ids: BTreeSet<PointId> = (0..rng.random_range(1..=2))
                .map(|_| held[rng.random_range(0..held.len())])
                .collect();
            let seeds = self.clients[i].seeds();
            if rng.random_bool(0.5) && !seeds.is_empty() {
                ids.insert(seeds[rng.random_range(0..seeds.len())]);
            }
            self.forget(i, &ids.into_iter().collect::<Vec<_>>());
            changed += 1;
        }
        changed
    }
}

pub(super) type Range = std::ops::RangeInclusive<usize>;
pub(super) const ALL: Range = 0..=5;

/// What the round of `out` asked the clients to send.
pub(super) fn sends(out: &Outcome) -> Sends {
    Announcement::from_bytes(&out.announcement)
        .unwrap()
        .spec
        .sends
}

/// The bytes of every client's masked message in the round of `out`.
fn masked_bytes(out: &Outcome) -> usize {
    out.masked_inputs().values().map(Vec::len).sum()
}

/// Trains with a whole round, then serves four batches of removals by
/// change rounds, then a client that forgets every point, then one more
/// batch: each a change round against the round before it, smaller than
/// the whole round, and equal to retraining bit for bit.
#[test]
fn change_rounds_across_processes_forget_exactly() {
    let mut rng = testdata::rng("remote-change-rounds");
    for (s, source) in SOURCES.into_iter().enumerate() {
        let mut fed = Fed::new("remote-change", source, None, 60 + s as u64);
        let whole = fed.round(ALL, None).unwrap();
        assert_eq!(sends(&whole), Sends::Histograms);
        assert_equals_retraining(&fed.server, &fed.data, &format!("{source:?}: training"));
        let mut before = whole.report.round;
        for r in 0..6 {
            let what = format!("{source:?}, request {r}");
            let updated = match r {
                4 => {
                    let all = fed.data[5].1.ids().to_vec();
                    fed.forget(5, &all);
                    1
                }
                _ => fed.forget_some(&mut rng, ALL),
            };
            let out = fed
                .round(ALL, Some(updated))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert!(
                matches!(sends(&out), Sends::Changes { base, .. } if base == before),
                "{what}: {:?} after round {before}",
                sends(&out)
            );
            assert!(
                masked_bytes(&out) < masked_bytes(&whole),
                "{what}: no smaller than a whole round"
            );
            assert_equals_retraining(&fed.server, &fed.data, &what);
            before = out.report.round;
        }
    }
}

/// With groups, a removal's change round runs in its group only and the
/// tree equals the one trained in one process on the points left.
#[test]
fn change_rounds_with_groups_stay_in_their_group() {
    let mut rng = testdata::rng("remote-change-groups");
    let groups = [0..=2, 3..=5];
    for (s, source) in SOURCES.into_iter().enumerate() {
        let topology = Topology::Groups { size: 3 };
        let mut fed = Fed::new(
            "remote-change-groups",
            source,
            Some(topology),
            70 + s as u64,
        );
        for g in &groups {
            fed.round(g.clone(), None).unwrap();
        }
        for r in 0..4 {
            let g = groups[rng.random_range(0..2)].clone();
            let what = format!("{source:?}, request {r} in {g:?}");
            let updated = fed.forget_some(&mut rng, g.clone());
            let out = fed.round(g, Some(updated)).unwrap();
            assert!(
                matches!(sends(&out), Sends::Changes { .. }),
                "{what}: {:?}",
                sends(&out)
            );
            groups::assert_equals_tree(&fed.server, &fed.data, &what);
        }
    }
}

/// A change round that cannot run fails and changes nothing, and the
/// next round is whole and exact: when the server announces fewer
/// changed clients than there are (the sum of the changes does not
/// decode), and when a client restarted from its store no longer holds
/// the histogram it last sent. A round that cannot be a change round is
/// whole from the start: with SecAgg, and when the ring is not the last
/// committed round's.
#[test]
fn a_change_round_that_cannot_run_fails_and_the_next_is_whole() {
    for source in SOURCES {
        let mut fed = Fed::new("remote-change-fallback", source, None, 80);
        fed.round(ALL, None).unwrap();
        // Three clients reseed, and the server says nobody changed.
        for c in 0..3 {
            let seed = fed.clients[c].seeds()[0];
            fed.forget(c, &[seed]);
        }
        let counts = fed.server.server().counts().clone();
        let err = fed.round(ALL, Some(0)).unwrap_err();
        assert!(
            err.to_string().contains("did not decode"),
            "{source:?}: {err}"
        );
        assert_eq!(fed.server.server().counts(), &counts, "{source:?}");
        let out = fed.round(ALL, Some(3)).unwrap();
        assert_eq!(
            sends(&out),
            Sends::Histograms,
            "{source:?}: after a failure"
        );
        assert_equals_retraining(&fed.server, &fed.data, &format!("{source:?}: whole"));

        // Client 2 forgets a point and restarts from its store: it keeps
        // its points, setup, seeds and sessions, not its last histogram.
        let id = fed.data[2].1.ids()[0];
        fed.forget(2, &[id]);
        fed.restart(2);
        let counts = fed.server.server().counts().clone();
        let err = fed.round(ALL, Some(1)).unwrap_err();
        assert!(
            matches!(&err, MufcError::RoundRefused { reason, .. } if reason.contains("unknown to it")),
            "{source:?}: {err}"
        );
        assert_eq!(fed.server.server().counts(), &counts, "{source:?}");
        let out = fed.round(ALL, Some(1)).unwrap();
        assert_eq!(
            sends(&out),
            Sends::Histograms,
            "{source:?}: after a refusal"
        );
        assert_equals_retraining(&fed.server, &fed.data, &format!("{source:?}: restarted"));
        // Its base is back: the next removal is a change round again.
        let id = fed.data[2].1.ids()[0];
        fed.forget(2, &[id]);
        let out = fed.round(ALL, Some(1)).unwrap();
        assert!(matches!(sends(&out), Sends::Changes { .. }), "{source:?}");
        assert_equals_retraining(&fed.server, &fed.data, &format!("{source:?}: again"));
    }
}

/// A server restarted from what its store keeps (its snapshot) runs
/// change rounds at once: the last round a store counts is the last one
/// committed. The clients' bases are those of that round, and the model
/// equals retraining.
#[test]
fn a_restarted_server_runs_change_rounds() {
    let mut rng = testdata::rng("remote-change-restart");
    for source in SOURCES {
        let mut fed = Fed::new("remote-change-restart", source, None, 85);
        fed.round(ALL, None).unwrap();
        let updated = fed.forget_some(&mut rng, ALL);
        fed.round(ALL, Some(updated)).unwrap();
        let kept = fed.server.snapshot().unwrap();
        let roster = fed.server.setup().roster().to_vec();
        fed.server = RemoteServer::from_snapshot(kept, roster).unwrap();
        let updated = fed.forget_some(&mut rng, ALL);
        let out = fed.round(ALL, Some(updated)).unwrap();
        assert!(
            matches!(sends(&out), Sends::Changes { .. }),
            "{source:?}: {:?}",
            sends(&out)
        );
        assert_equals_retraining(&fed.server, &fed.data, &format!("{source:?}: restarted"));
    }
}

/// No change round where one cannot be: with SecAgg (a dropout would
/// lose its change) and for a ring other than the last committed
/// round's, the server announces a whole round.
#[test]
fn the_server_announces_a_whole_round_where_a_change_round_cannot_be() {
    let data = gaussian_clients("remote-change-secagg", Mixture::SMALL);
    let (mut server, mut clients) = federation(&data, &config(2, 0.0, 3, 90));
    let mut data = with_ids(&data);
    run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
    let id = data[1].1.ids()[0];
    clients[1].forget(&[id]).unwrap();
    data[1].1 = data[1].1.without(&[id]).unwrap();
    let out = run_round_dealt(
        &mut server,
        &mut clients,
        &BTreeMap::new(),
        &mut |_, _| {},
        None,
        Some(1),
    )
    .unwrap();
    assert_eq!(sends(&out), Sends::Histograms, "SecAgg");
    assert_equals_retraining(&server, &data, "SecAgg");

    let mut fed = Fed::new("remote-change-ring", Source::Pairwise, None, 91);
    fed.round(ALL, None).unwrap();
    let fewer: Vec<ClientId> = (0..5).map(ClientId).collect();
    let (a, _) = fed.server.start_change_round(&fewer, 1).unwrap();
    assert_eq!(a.spec.sends, Sends::Histograms, "a ring without client 5");
}

/// The ways a lying server asks for a change round that must be refused.
#[derive(Clone, Copy, Debug)]
enum Lie {
    /// A base other than the last committed round: the change would be
    /// taken against another histogram than the one the server's counts
    /// hold.
    OtherBase,
    /// A capacity of zero.
    NoCapacity,
    /// A capacity at or above the federation's (a whole round is as small;
    /// a huge one would make the parties allocate).
    FullCapacity,
}

const LIES: [Lie; 3] = [Lie::OtherBase, Lie::NoCapacity, Lie::FullCapacity];

/// Six clients under dealt masks; a removal, then the honest change
/// round's announcement altered by each lie, three times each in random
/// order, shown to a random client (and, where the dealer can tell, with
/// the honest deal request to the dealer): every one is refused and
/// nothing changes. The honest round, started again, is whole and exact,
/// and the next removal is a change round again.
#[test]
fn a_client_and_the_dealer_refuse_a_lying_change_round() {
    let mut rng = testdata::rng("remote-change-lies");
    let mut fed = Fed::new("remote-change-lies", Source::Dealer, None, 92);
    fed.round(ALL, None).unwrap();
    let id = fed.data[1].1.ids()[0];
    fed.forget(1, &[id]);
    let started = fed.server.start_change_round(&ids_of(ALL), 1).unwrap();
    let (honest, mut round, _halves) = joined(&mut fed.clients, started);
    let Sends::Changes { capacity, base } = honest.spec.sends else {
        panic!("no change round: {:?}", honest.spec.sends);
    };
    let RoundStep::Deal(request) = round.advance().unwrap() else {
        panic!("a dealt round asks for a deal");
    };
    let full = fed.server.setup().capacity() as u64;
    for (case, lie) in shuffled(&mut rng, &LIES, 3).into_iter().enumerate() {
        let mut a = honest.clone();
        // A session no client joined, so that the refusal is the lie's
        // and not a replay's.
        a.spec.session = rng.random();
        a.spec.sends = match lie {
            Lie::OtherBase => Sends::Changes {
                capacity,
                base: base + rng.random_range(1..4),
            },
            Lie::NoCapacity => Sends::Changes { capacity: 0, base },
            Lie::FullCapacity => Sends::Changes {
                capacity: rng.random_range(full..full * 1000),
                base,
            },
        };
        let victim = rng.random_range(0..6);
        let what = format!("case {case}: {lie:?} to client {victim}");
        let client = &mut fed.clients[victim];
        let sessions = client.sessions().clone();
        match client.join(&a) {
            Err(MufcError::RoundRefused { reason, .. }) => {
                assert!(!reason.contains("already joined"), "{what}: {reason}");
            }
            Err(e) => panic!("{what}: {e}"),
            Ok(_) => panic!("{what}: joined"),
        }
        assert_eq!(client.sessions(), &sessions, "{what}");
        // The dealer keeps no round: it cannot tell the base, and checks
        // the capacity.
        if !matches!(lie, Lie::OtherBase) {
            let dealer = fed.dealer.as_mut().unwrap();
            let err = dealer.deal(&a, &request).expect_err(&what);
            assert!(err.to_string().contains("capacity"), "{what}: {err}");
        }
    }
    drop(round);
    let out = fed.round(ALL, Some(1)).unwrap();
    assert_eq!(sends(&out), Sends::Histograms, "after the failed round");
    assert_equals_retraining(&fed.server, &fed.data, "after the lies");
    let id = fed.data[3].1.ids()[0];
    fed.forget(3, &[id]);
    let out = fed.round(ALL, Some(1)).unwrap();
    assert!(matches!(sends(&out), Sends::Changes { .. }));
    assert_equals_retraining(&fed.server, &fed.data, "a change round again");
}

fn ids_of(range: Range) -> Vec<ClientId> {
    range.map(|i| ClientId(i as u64)).collect()
}
