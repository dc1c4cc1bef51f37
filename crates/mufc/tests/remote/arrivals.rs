//! Records that arrive (issue 29), across the parties: clients trained on
//! part of their records learn the rest between rounds, interleaved with
//! removals, and a client that had forgotten every point comes back with
//! new ones. Every committed round, a change round against the one before
//! it, equals training from scratch on the records present, bit for bit,
//! flat and with groups, under pairwise and dealt masks, whether clients
//! train by seeding alone (the insertion counterpart of Algorithm 3) or by
//! full K-means (an exact update). A bad addition changes nothing.

use super::change::{ALL, Fed, Range, SOURCES, Source, sends};
use super::*;
use mufc::{ClientTraining, Topology};
use nalgebra::DMatrix;

/// Every mask source with a change round, under both kinds of training.
fn cases() -> impl Iterator<Item = (usize, Source, ClientTraining)> {
    let trainings = [ClientTraining::Seeding, ClientTraining::Full];
    (SOURCES.into_iter())
        .flat_map(move |s| trainings.into_iter().map(move |t| (s, t)))
        .enumerate()
        .map(|(i, (s, t))| (i, s, t))
}

/// What each client holds back, to learn later.
struct Held(Vec<Dataset>);

impl Held {
    /// Every client of `fed`, still waiting, forgets about a quarter of
    /// its points, drawn at random: it trains without them and learns
    /// them later.
    fn back(rng: &mut ChaCha8Rng, fed: &mut Fed) -> Self {
        let mut held = Vec::new();
        for c in 0..fed.clients.len() {
            let all = fed.data[c].1.clone();
            let ids: Vec<PointId> = (all.ids().iter())
                .filter(|_| rng.random_bool(0.25))
                .copied()
                .collect();
            held.push(all.only(&ids).unwrap());
            if !ids.is_empty() {
                fed.forget(c, &ids);
            }
        }
        Self(held)
    }

    /// Up to three of client `c`'s held-back records, drawn at random and
    /// no longer held back; `None` when none is left.
    fn take(&mut self, rng: &mut ChaCha8Rng, c: usize) -> Option<Dataset> {
        let held = &mut self.0[c];
        if held.is_empty() {
            return None;
        }
        let ids: BTreeSet<PointId> = (0..rng.random_range(1..=3))
            .map(|_| held.ids()[rng.random_range(0..held.len())])
            .collect();
        let ids: Vec<PointId> = ids.into_iter().collect();
        let records = held.only(&ids).unwrap();
        held.remove(&ids).unwrap();
        Some(records)
    }
}

impl Fed {
    /// Client `c` learns `records`; the data follows.
    fn learn(&mut self, c: usize, records: &Dataset) {
        self.clients[c].learn(records).unwrap();
        self.data[c].1.append(records).unwrap();
    }

    /// One or two clients of `range`, drawn at random, learn some of
    /// their held-back records, and with even odds one or two clients
    /// forget some points: how many clients changed.
    fn arrive(&mut self, rng: &mut ChaCha8Rng, held: &mut Held, range: Range) -> usize {
        let n = range.end() - range.start() + 1;
        let mut changed = BTreeSet::new();
        let m = rng.random_range(1..=2);
        for c in draw_clients(rng, n, m) {
            let i = range.start() + at(c);
            if let Some(records) = held.take(rng, i) {
                self.learn(i, &records);
                changed.insert(i);
            }
        }
        if rng.random_bool(0.5) {
            let before: Vec<Dataset> = self.data.iter().map(|(_, d)| d.clone()).collect();
            self.forget_some(rng, range);
            for (i, (_, d)) in self.data.iter().enumerate() {
                if d.len() != before[i].len() {
                    changed.insert(i);
                }
            }
        }
        changed.len()
    }
}

/// Trains on three quarters of the records, then serves six requests
/// that add records (and with even odds remove some): each by a change
/// round, equal to retraining on the records present. Client 5 forgets
/// every point at request 3 and comes back with new records at request 4.
#[test]
fn records_that_arrive_give_the_model_of_the_records_present() {
    let mut rng = testdata::rng("remote-arrivals");
    for (s, source, training) in cases() {
        let label = "remote-arrivals";
        let mut fed = Fed::training(label, source, None, 90 + s as u64, Some(training));
        let mut held = Held::back(&mut rng, &mut fed);
        let whole = fed.round(ALL, None).unwrap();
        assert_equals_retraining(&fed.server, &fed.data, &format!("{source:?}: training"));
        let mut before = whole.report.round;
        let mut changes = 0;
        for r in 0..6 {
            let what = format!("{source:?}, {training:?}, request {r}");
            let updated = match r {
                3 => {
                    let all = fed.data[5].1.ids().to_vec();
                    fed.forget(5, &all);
                    1
                }
                4 => {
                    // Back with records it never held (client 4's, with
                    // new ids): it trains again.
                    let records = renamed(&fed.data[4].1, 1000);
                    fed.learn(5, &records);
                    1
                }
                _ => fed.arrive(&mut rng, &mut held, ALL),
            };
            if updated == 0 {
                continue;
            }
            let out = fed
                .round(ALL, Some(updated))
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let change = matches!(sends(&out), Sends::Changes { base, .. } if base == before);
            assert!(
                change || !fits(updated, 6),
                "{what}: {:?} after round {before}",
                sends(&out)
            );
            changes += usize::from(change);
            assert_equals_retraining(&fed.server, &fed.data, &what);
            before = out.report.round;
        }
        assert!(
            changes >= 3,
            "{source:?}, {training:?}: {changes} change rounds"
        );
    }
}

/// Whether the changes of `updated` clients (`2 k` bins each) fit below
/// the capacity of a group of `members` (`k` bins each): the server then
/// runs a change round.
fn fits(updated: usize, members: usize) -> bool {
    2 * updated < members
}

/// `data` with every id moved up by `by` (records new to a client).
fn renamed(data: &Dataset, by: u64) -> Dataset {
    let ids = data.ids().iter().map(|id| PointId(id.0 + by)).collect();
    Dataset::with_ids(data.points().clone(), ids).unwrap()
}

/// With groups, an addition's change round runs in its group only, and
/// the tree equals the one trained in one process on the records present.
#[test]
fn records_that_arrive_in_a_group_change_its_group_only() {
    let mut rng = testdata::rng("remote-arrivals-groups");
    let groups = [0..=2, 3..=5];
    for (s, source, training) in cases() {
        let topology = Some(Topology::Groups { size: 3 });
        let label = "remote-arrivals-groups";
        let mut fed = Fed::training(label, source, topology, 95 + s as u64, Some(training));
        let mut held = Held::back(&mut rng, &mut fed);
        for g in &groups {
            fed.round(g.clone(), None).unwrap();
        }
        let mut changes = 0;
        for r in 0..6 {
            let g = groups[rng.random_range(0..2)].clone();
            let what = format!("{source:?}, {training:?}, request {r} in {g:?}");
            let updated = fed.arrive(&mut rng, &mut held, g.clone());
            if updated == 0 {
                continue;
            }
            let out = fed.round(g, Some(updated)).unwrap();
            let change = matches!(sends(&out), Sends::Changes { .. });
            assert!(change || !fits(updated, 3), "{what}: {:?}", sends(&out));
            changes += usize::from(change);
            groups::assert_equals_tree(&fed.server, &fed.data, &what);
        }
        assert!(
            changes >= 1,
            "{source:?}, {training:?}: {changes} change rounds"
        );
    }
}

/// An addition that names an id the client holds, has another
/// dimension, lies outside the grid's box or holds nothing is refused,
/// and the client is as it was: its points, its seeds, and the model its
/// next round gives.
#[test]
fn a_bad_addition_changes_nothing() {
    let seeding = Some(ClientTraining::Seeding);
    let mut fed = Fed::training("remote-arrivals-bad", Source::Pairwise, None, 99, seeding);
    fed.round(ALL, None).unwrap();
    let c = &mut fed.clients[1];
    let (data, seeds) = (c.data().clone(), c.seeds().to_vec());
    let held = data.ids()[0];
    let dim = data.dim();
    let point = |x: f64, id: u64| {
        Dataset::with_ids(DMatrix::from_element(dim, 1, x), vec![PointId(id)]).unwrap()
    };
    let taken = c.learn(&point(0.1, held.0)).unwrap_err();
    assert!(matches!(taken, MufcError::HeldPoint { .. }), "{taken}");
    let outside = c.learn(&point(0.75, 5000)).unwrap_err();
    assert!(matches!(outside, MufcError::OutsideBox { .. }), "{outside}");
    let flat = Dataset::with_ids(DMatrix::from_element(dim + 1, 1, 0.0), vec![PointId(5001)]);
    let flat = c.learn(&flat.unwrap()).unwrap_err();
    assert!(
        matches!(flat, MufcError::DimensionMismatch { .. }),
        "{flat}"
    );
    let empty = c.learn(&Dataset::empty(dim).unwrap()).unwrap_err();
    assert!(matches!(empty, MufcError::EmptyRequest), "{empty}");
    assert_eq!(c.data(), &data);
    assert_eq!(c.seeds(), seeds);
    assert_equals_retraining(&fed.server, &fed.data, "after the refusals");
}

/// The bound on points is fixed at training (resolved from the points
/// then, unless the configuration gives one): a client that alone would
/// pass it refuses the records, and a round whose sum passes it fails at
/// the server and commits nothing.
#[test]
fn records_beyond_the_bound_the_federation_was_trained_with_are_refused() {
    let mut fed = Fed::new("remote-arrivals-bound", Source::Pairwise, None, 98);
    fed.round(ALL, None).unwrap();
    let max = fed.server.setup().config().max_points().unwrap();
    let dim = fed.data[0].1.dim();
    let one = |id: u64, weight: u64| {
        let m = DMatrix::from_element(dim, 1, 0.125);
        Dataset::with_weights(m, vec![PointId(id)], vec![weight]).unwrap()
    };
    let alone = fed.clients[0].learn(&one(7000, max)).unwrap_err();
    assert!(
        matches!(&alone, MufcError::InvalidConfig { .. })
            && alone.to_string().contains("max_points"),
        "{alone}"
    );
    // One record more than the federation was trained with.
    fed.learn(0, &one(7001, 1));
    let counts = fed.server.server().counts().clone();
    let err = fed.round(ALL, Some(1)).unwrap_err();
    assert!(err.to_string().contains("beyond the bound"), "{err}");
    assert_eq!(fed.server.server().counts(), &counts);
}
