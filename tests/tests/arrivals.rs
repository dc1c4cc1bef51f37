//! Records that arrive (issue 29), at the federation level: random
//! interleavings of additions and removals (points, seeds, batches, whole
//! clients, new clients joining), flat and with groups, in several modes, with the federation
//! saved and loaded between some requests. After every request the
//! clients equal training from scratch on the records they hold, and,
//! once nothing waits, the model equals training from scratch on the
//! records present, bit for bit. A bad addition changes nothing.
#![allow(clippy::unwrap_used)]

use mufc::{
    AdditionRequest, Channel, ClientId, ClientTraining, ConfigParam, Federation, FederationConfig,
    Masks, MufcError, RemovalRequest, ServerPoints, Topology,
};
use mufc_testkit::{compare, compare_clients, compare_model, compare_tree};
use nalgebra::DMatrix;
use rand::{Rng, RngExt};
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

/// Eight clients: six train, two join later.
const MIX: Mixture = Mixture {
    clients: 8,
    ..Mixture::SIX
};

/// The clients that train; the others join later.
const TRAINED: usize = 6;

/// The modes: the defaults, the paper's seeding clients (where an added
/// point may win a round of the race), full K-means, pairwise masks, the
/// plain mode and groups.
fn modes() -> Vec<(&'static str, FederationConfig)> {
    let paper = || {
        FederationConfig::paper(3)
            .client_k(2)
            .server_points(ServerPoints::Centers)
            .gamma(0.05)
    };
    vec![
        ("defaults", FederationConfig::new(3).gamma(0.05)),
        ("paper, seeding", paper()),
        ("paper, full", paper().client_training(ClientTraining::Full)),
        (
            "paper, pairwise",
            paper().channel(Channel::scma(Masks::Pairwise)),
        ),
        ("paper, plain", paper().channel(Channel::Plain)),
        (
            "paper, groups of 3",
            paper().topology(Topology::Groups { size: 3 }),
        ),
    ]
}

/// The clients, each with about a quarter of its records held back to
/// arrive later, and those that join later with all of theirs: (trained
/// on, held back (none for a new client), new clients).
type Split = (
    Vec<(ClientId, Dataset)>,
    Vec<Dataset>,
    Vec<(ClientId, Dataset)>,
);

fn split<R: Rng>(label: &str, rng: &mut R) -> Split {
    let mut trained = Vec::new();
    let mut held = Vec::new();
    let mut joining = Vec::new();
    for (i, d) in gaussian_clients(label, MIX).into_iter().enumerate() {
        if i >= TRAINED {
            held.push(Dataset::empty(d.dim()).unwrap());
            joining.push((ClientId(i as u64), d));
            continue;
        }
        let later: Vec<PointId> = (d.ids().iter())
            .filter(|_| rng.random_bool(0.25))
            .copied()
            .collect();
        held.push(d.only(&later).unwrap());
        trained.push((ClientId(i as u64), d.without(&later).unwrap()));
    }
    (trained, held, joining)
}

/// One random request against `view` (the records the clients hold): an
/// addition of one to three held-back records for one or two clients, or
/// a removal (a point, a seed, a batch, a whole client).
enum Request {
    Add(AdditionRequest),
    Remove(RemovalRequest),
}

fn random_request<R: Rng>(
    fed: &Federation,
    view: &[(ClientId, Dataset)],
    (held, joining): (&mut [Dataset], &mut Vec<(ClientId, Dataset)>),
    rng: &mut R,
) -> Request {
    let live: Vec<usize> = (0..view.len()).filter(|&i| !view[i].1.is_empty()).collect();
    let pick = |rng: &mut R, n: usize| rng.random_range(0..n);
    if rng.random_bool(0.5) {
        let mut request = AdditionRequest::new();
        // A new client joins (with groups, the smallest group takes it),
        // alone or with records for others.
        if !joining.is_empty() && rng.random_bool(0.3) {
            let (c, d) = joining.remove(0);
            request = request.with_new_client(c, d);
        }
        for _ in 0..rng.random_range(1..=2) {
            let i = live[pick(rng, live.len())];
            let ids: Vec<PointId> = (0..rng.random_range(1..=3))
                .filter(|_| !held[i].is_empty())
                .map(|_| held[i].ids()[pick(rng, held[i].len())])
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            if ids.is_empty() || request.named().any(|c| c == view[i].0) {
                continue;
            }
            request = request.with_records(view[i].0, held[i].only(&ids).unwrap());
            held[i].remove(&ids).unwrap();
        }
        if !request.is_empty() {
            return Request::Add(request);
        }
    }
    let (client, data) = &view[live[pick(rng, live.len())]];
    let seeds: Vec<PointId> = (fed.client(*client).unwrap().seed_ids().iter())
        .copied()
        .filter(|id| data.contains(*id))
        .collect();
    // Whole clients leave only while the minimum aggregate stays met, and
    // not with groups (retraining would group the clients left anew: the
    // groups' own tests cover a leave).
    let flat = fed.config().topology() == Topology::Flat;
    let spare = flat && live.len() > fed.config().min_clients() + 1;
    Request::Remove(match rng.random_range(0..5) {
        0 if !seeds.is_empty() => {
            RemovalRequest::points(*client, vec![seeds[pick(rng, seeds.len())]])
        }
        1 if spare => RemovalRequest::clients(vec![*client]),
        2 => {
            let mut req = RemovalRequest::new();
            for &i in &live {
                let d = &view[i].1;
                if rng.random_bool(0.5) && d.len() > 3 {
                    req = req.with_points(view[i].0, vec![d.id(pick(rng, d.len()))]);
                }
            }
            match req.is_empty() {
                true => RemovalRequest::points(*client, vec![data.id(0)]),
                false => req,
            }
        }
        _ => RemovalRequest::points(*client, vec![data.id(pick(rng, data.len()))]),
    })
}

/// `view` after `request` (a new client comes last: it has the largest
/// id yet).
fn apply(view: &mut Vec<(ClientId, Dataset)>, request: &Request) {
    if let Request::Add(r) = request {
        view.extend(r.new_clients().iter().cloned());
    }
    for (c, d) in view.iter_mut() {
        match request {
            Request::Add(r) => {
                for (_, records) in r.entries().iter().filter(|(x, _)| x == c) {
                    d.append(records).unwrap();
                }
            }
            Request::Remove(r) => {
                if r.clients_removed().contains(c) {
                    *d = d.without(d.ids()).unwrap();
                }
                for (_, ids) in r.point_entries().iter().filter(|(x, _)| x == c) {
                    *d = d.without(ids).unwrap();
                }
            }
        }
    }
}

/// The clients that hold records (those removed whole have left).
fn present(view: &[(ClientId, Dataset)]) -> Vec<(ClientId, Dataset)> {
    (view.iter().filter(|(_, d)| !d.is_empty()))
        .cloned()
        .collect()
}

/// The federation trained from scratch on the records `view` holds: in
/// `fed`'s groups, which joins changed (whole clients do not leave with
/// groups here).
fn retrained(fed: &Federation, view: &[(ClientId, Dataset)]) -> Federation {
    let present = present(view);
    match fed.layout() {
        Some(layout) => Federation::with_layout(present, fed.config(), layout.clone()),
        None => Federation::with_ids(present, fed.config()),
    }
    .unwrap()
}

#[test]
fn random_additions_and_removals_equal_retraining_bit_for_bit() {
    let mut waited = 0;
    let mut reseeded = 0;
    let mut joined = 0;
    for min_updating in [1, mufc::DEFAULT_MIN_UPDATING_CLIENTS] {
        for (what, config) in modes() {
            for seq in 0..3u64 {
                let what = format!("{what}, min updating {min_updating}, sequence {seq}");
                let mut rng = testdata::rng(&format!("arrivals-{what}"));
                let (trained, mut held, mut joining) = split(&format!("arrivals-{seq}"), &mut rng);
                let all: u64 = (trained.iter().chain(&joining).map(|(_, d)| d.len()))
                    .chain(held.iter().map(Dataset::len))
                    .sum::<usize>() as u64;
                let config = (config.clone().seed(seq))
                    .min_updating_clients(min_updating)
                    .max_points(all)
                    .validate()
                    .unwrap();
                let grouped = config.topology() != Topology::Flat;
                let mut fed = Federation::with_ids(trained.clone(), &config).unwrap();
                let mut view = trained.clone();
                let mut applied = trained;
                for step in 0..10 {
                    let mine = (&mut held[..], &mut joining);
                    let request = random_request(&fed, &view, mine, &mut rng);
                    if let Request::Add(r) = &request {
                        joined += r.new_clients().len();
                    }
                    let report = match &request {
                        Request::Add(r) => fed.add(r),
                        Request::Remove(r) => fed.remove(r),
                    };
                    let report = report.unwrap_or_else(|e| panic!("{what}, step {step}: {e}"));
                    apply(&mut view, &request);
                    reseeded += usize::from(
                        matches!(request, Request::Add(_)) && !report.reseeded.is_empty(),
                    );
                    let waits = !fed.pending().is_empty() || !fed.pending_additions().is_empty();
                    waited += usize::from(waits);
                    if !waits {
                        applied.clone_from(&view);
                    }
                    let now = retrained(&fed, &view);
                    let checked = match (waits, grouped) {
                        (false, false) => compare(&fed, &now),
                        (false, true) => compare_tree(&fed, &now),
                        (true, false) => compare_clients(&fed, &now).and_then(|()| {
                            let before = Federation::with_ids(present(&applied), fed.config());
                            compare_model(&fed, &before.unwrap())
                        }),
                        // A request over two groups may be applied in one.
                        (true, true) => compare_clients(&fed, &now),
                    };
                    if let Err(e) = checked {
                        panic!("{what}, step {step}: {e}");
                    }
                    if rng.random_bool(0.3) {
                        fed = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
                    }
                }
                if let Some(report) = fed.flush().unwrap() {
                    assert!(!report.requests.is_empty(), "{what}");
                }
                let now = retrained(&fed, &view);
                let checked = match grouped {
                    true => compare_tree(&fed, &now),
                    false => compare(&fed, &now),
                };
                checked.unwrap_or_else(|e| panic!("{what}, flushed: {e}"));
            }
        }
    }
    // Not vacuous: some additions waited for another client, some
    // changed a seeding, some brought new clients.
    assert!(
        waited > 0 && reseeded > 0 && joined > 0,
        "{waited} waited, {reseeded} reseeded, {joined} joined"
    );
}

/// A federation of the clients of `label`, with room for `room` more
/// points than it holds.
fn with_room(label: &str, room: u64) -> Federation {
    let mut rng = testdata::rng(label);
    let (trained, _, _) = split(label, &mut rng);
    let held: u64 = trained.iter().map(|(_, d)| d.len() as u64).sum();
    let config = FederationConfig::new(3)
        .gamma(0.05)
        .max_points(held + room)
        .validate()
        .unwrap();
    Federation::with_ids(trained, &config).unwrap()
}

/// One record at `(x, x)` with id `id`.
fn one(x: f64, id: u64) -> Dataset {
    Dataset::with_ids(DMatrix::from_element(2, 1, x), vec![PointId(id)]).unwrap()
}

/// An addition the federation cannot take is refused, and the federation
/// is as it was, byte for byte: records with an id the client holds,
/// another dimension, outside the grid's box, for an unknown client, for
/// a client named twice, beyond the bound on points, or none at all.
#[test]
fn a_bad_addition_changes_nothing() {
    let mut fed = with_room("arrivals-bad", 2);
    let before = fed.to_bytes().unwrap();
    let taken = fed.client(ClientId(1)).unwrap().data().id(0);
    let heavy = Dataset::with_weights(
        DMatrix::from_element(2, 1, 0.1),
        vec![PointId(900)],
        vec![3],
    );
    let flat = Dataset::with_ids(DMatrix::from_element(3, 1, 0.0), vec![PointId(900)]).unwrap();
    let cases = [
        (
            AdditionRequest::records(ClientId(1), one(0.1, taken.0)),
            "already holds a point",
        ),
        (
            AdditionRequest::records(ClientId(9), one(0.1, 900)),
            "client 9 is not in",
        ),
        (
            AdditionRequest::records(ClientId(0), one(0.1, 900))
                .with_records(ClientId(0), one(0.1, 901)),
            "named twice",
        ),
        (AdditionRequest::new(), "the request is empty"),
        (
            AdditionRequest::records(ClientId(2), Dataset::empty(2).unwrap()),
            "the request is empty",
        ),
        (
            AdditionRequest::records(ClientId(0), one(0.75, 900)),
            "outside",
        ),
        (AdditionRequest::records(ClientId(0), flat), "dimension"),
        (
            AdditionRequest::records(ClientId(0), heavy.unwrap()),
            "beyond the bound",
        ),
    ];
    for (request, expected) in cases {
        let err = fed.add(&request).unwrap_err().to_string();
        assert!(err.contains(expected), "{expected}: {err}");
        assert_eq!(fed.to_bytes().unwrap(), before, "{request:?}");
    }
    assert_eq!(
        fed.add(&AdditionRequest::records(ClientId(1), one(0.1, taken.0)))
            .unwrap_err(),
        MufcError::HeldPoint {
            client: ClientId(1),
            id: taken
        }
    );
    let beyond = fed.add(
        &AdditionRequest::records(ClientId(0), one(0.1, 900))
            .with_records(ClientId(1), one(0.1, 900))
            .with_records(ClientId(2), one(0.1, 900)),
    );
    assert!(
        matches!(
            &beyond,
            Err(MufcError::InvalidConfig {
                param: ConfigParam::MaxPoints,
                ..
            })
        ),
        "{beyond:?}"
    );
}

/// The id of a point a pending removal erased names that point until the
/// removal's round runs: an addition may not take it (a federation saved
/// with both would not load). Once the round ran, the federation saves
/// and loads.
#[test]
fn an_addition_may_not_take_the_id_a_pending_removal_names() {
    let mut fed = with_room("arrivals-pending-id", 2);
    let gone = fed.client(ClientId(2)).unwrap().data().id(0);
    let lone = fed.remove(&RemovalRequest::points(ClientId(2), vec![gone]));
    assert!(lone.unwrap().outcome.is_deferred());
    let before = fed.to_bytes().unwrap();
    let again = fed.add(&AdditionRequest::records(ClientId(2), one(0.1, gone.0)));
    assert_eq!(
        again.unwrap_err(),
        MufcError::AlreadyPending {
            client: ClientId(2),
            id: Some(gone)
        }
    );
    assert_eq!(fed.to_bytes().unwrap(), before);
    // Another client's records: the round runs for both.
    fed.add(&AdditionRequest::records(ClientId(0), one(0.1, 900)))
        .unwrap();
    assert!(fed.pending_additions().is_empty() && fed.pending().is_empty());
    Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
}

/// A client that left whole is gone: an addition for it is refused as
/// for an unknown client (while its leave waits, as a conflict); a
/// withdrawn model takes additions at its clients alone.
#[test]
fn additions_for_a_client_that_left_and_a_withdrawn_model() {
    let mut rng = testdata::rng("arrivals-left");
    let (trained, held, _) = split("arrivals-left", &mut rng);
    let all: u64 = (trained.iter().map(|(_, d)| d.len()))
        .chain(held.iter().map(Dataset::len))
        .sum::<usize>() as u64;
    let config = FederationConfig::new(3)
        .gamma(0.05)
        .max_points(all)
        .min_clients(5)
        .validate()
        .unwrap();
    let mut fed = Federation::with_ids(trained, &config).unwrap();
    let records = |i: usize| held[i].only(&held[i].ids()[..1]).unwrap();
    // Client 2 leaves; its round waits for another client.
    fed.remove(&RemovalRequest::clients(vec![ClientId(2)]))
        .unwrap();
    let waiting = fed.add(&AdditionRequest::records(ClientId(2), records(2)));
    assert_eq!(
        waiting.unwrap_err(),
        MufcError::AlreadyPending {
            client: ClientId(2),
            id: None
        }
    );
    // Client 3's addition runs the round for both.
    let report = fed
        .add(&AdditionRequest::records(ClientId(3), records(3)))
        .unwrap();
    assert_eq!(report.requests, [1, 2]);
    assert_eq!(report.removed_clients, [ClientId(2)]);
    let gone = fed.add(&AdditionRequest::records(ClientId(2), records(2)));
    assert_eq!(gone.unwrap_err(), MufcError::UnknownClient(ClientId(2)));
    // Client 4 leaves too: four clients would be left, below the minimum
    // of 5, so the model is withdrawn, and additions reach the clients
    // alone.
    fed.remove(&RemovalRequest::clients(vec![ClientId(4)]))
        .unwrap();
    assert!(fed.withdrawal().is_some());
    let report = fed
        .add(&AdditionRequest::records(ClientId(0), records(0)))
        .unwrap();
    assert!(matches!(report.outcome, mufc::RemovalOutcome::Withdrawn(_)));
    assert!(fed.server().model().is_none());
    assert!(fed.pending_additions().is_empty());
    assert!(
        fed.client(ClientId(0))
            .unwrap()
            .data()
            .contains(held[0].ids()[0])
    );
}

/// A join the federation cannot take is refused, and the federation is
/// as it was, byte for byte: an id on the roster (a member's, or one that
/// left: an id names one client for good, also once saved and loaded),
/// twice the same new client, no
/// records, records outside the grid's box or of another dimension,
/// beyond the bound on points; flat and with groups.
#[test]
fn a_bad_join_changes_nothing() {
    let mut rng = testdata::rng("arrivals-bad-join");
    let (trained, _, joining) = split("arrivals-bad-join", &mut rng);
    let newcomer = joining[0].1.clone();
    let held: u64 = trained.iter().map(|(_, d)| d.len() as u64).sum();
    let config = FederationConfig::new(3).gamma(0.05);
    // Groups of three: client 5 leaves one of them with two.
    let grouped = (config.clone().min_clients(2)).topology(Topology::Groups { size: 3 });
    for layout in [config.clone(), grouped] {
        let roomy = layout.max_points(held + 40).validate().unwrap();
        let mut fed = Federation::with_ids(trained.clone(), &roomy).unwrap();
        fed.remove(&RemovalRequest::clients(vec![ClientId(5)]))
            .unwrap();
        fed.flush().unwrap();
        assert!(fed.withdrawal().is_none());
        bad_joins_change_nothing(&mut fed, &newcomer);
        // Saved and loaded, the federation still knows that 5 left.
        let mut loaded = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
        bad_joins_change_nothing(&mut loaded, &newcomer);
    }
    // A withdrawn model: no round runs there again.
    let strict = config
        .max_points(held + 100)
        .min_clients(6)
        .validate()
        .unwrap();
    let mut fed = Federation::with_ids(trained, &strict).unwrap();
    fed.remove(&RemovalRequest::clients(vec![ClientId(0)]))
        .unwrap();
    assert!(fed.withdrawal().is_some());
    let before = fed.to_bytes().unwrap();
    let err = (fed.add(&AdditionRequest::new_client(ClientId(9), newcomer))).unwrap_err();
    assert_eq!(err, MufcError::Withdrawn { request: 1 });
    assert_eq!(fed.to_bytes().unwrap(), before);
}

/// A lone join waits under the lone-update policy (its round would show
/// the server the new client's whole histogram), saved and loaded while
/// it waits; another client's change runs one round for both, at the new
/// capacity, and the model is then retraining's on every record.
#[test]
fn a_lone_join_waits_for_another_change_and_then_equals_retraining() {
    let mut rng = testdata::rng("arrivals-lone-join");
    let (trained, held, joining) = split("arrivals-lone-join", &mut rng);
    let all: u64 = (trained.iter().chain(&joining).map(|(_, d)| d.len()))
        .chain(held.iter().map(Dataset::len))
        .sum::<usize>() as u64;
    let config = FederationConfig::new(3)
        .gamma(0.05)
        .max_points(all)
        .validate()
        .unwrap();
    let mut fed = Federation::with_ids(trained.clone(), &config).unwrap();
    let before = fed.fit_report().sketch.clone().unwrap().capacity;
    let (c, d) = joining[0].clone();
    let report = fed.add(&AdditionRequest::new_client(c, d.clone())).unwrap();
    assert!(report.outcome.is_deferred(), "{:?}", report.outcome);
    assert_eq!(fed.pending_clients(), [c]);
    let model = Federation::with_ids(trained.clone(), fed.config()).unwrap();
    compare_model(&fed, &model).unwrap();
    // Saved and loaded while the join waits.
    let mut fed = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
    assert_eq!(fed.pending_additions()[0].named().collect::<Vec<_>>(), [c]);
    let records = held[0].only(&held[0].ids()[..1]).unwrap();
    let report = fed
        .add(&AdditionRequest::records(ClientId(0), records.clone()))
        .unwrap();
    assert_eq!(report.requests, [1, 2]);
    assert!(fed.pending_clients().is_empty());
    let mut all = trained;
    all[0].1.append(&records).unwrap();
    all.push((c, d));
    let retrained = Federation::with_ids(all, fed.config()).unwrap();
    compare(&fed, &retrained).unwrap();
    let saved = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
    for f in [&fed, &saved] {
        let grown = f.fit_report().sketch.clone().unwrap().capacity;
        assert_eq!(grown, before + fed.config().client_k());
    }
    compare(&saved, &retrained).unwrap();
}

/// Every bad join of [`a_bad_join_changes_nothing`] against `fed` (six
/// clients trained, client 5 left, room for 40 more points).
fn bad_joins_change_nothing(fed: &mut Federation, newcomer: &Dataset) {
    let before = fed.to_bytes().unwrap();
    let join = |c: u64, d: Dataset| AdditionRequest::new_client(ClientId(c), d);
    let flat = Dataset::with_ids(DMatrix::from_element(3, 1, 0.0), vec![PointId(0)]).unwrap();
    let cases = [
        (join(1, newcomer.clone()), "client 1 is or was a member"),
        (join(5, newcomer.clone()), "client 5 is or was a member"),
        (
            join(9, newcomer.clone()).with_new_client(ClientId(9), newcomer.clone()),
            "client 9 is named twice",
        ),
        (join(9, Dataset::empty(2).unwrap()), "the request is empty"),
        (join(9, one(0.75, 0)), "outside"),
        (join(9, flat), "dimension"),
        (
            join(9, newcomer.clone())
                .with_new_client(ClientId(10), newcomer.clone())
                .with_new_client(ClientId(11), newcomer.clone()),
            "beyond the bound",
        ),
    ];
    for (request, expected) in cases {
        let err = fed.add(&request).unwrap_err().to_string();
        assert!(err.contains(expected), "{expected}: {err}");
        assert_eq!(fed.to_bytes().unwrap(), before, "{request:?}");
    }
}
