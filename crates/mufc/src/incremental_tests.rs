//! A client's message after a removal is its last sketch updated by the
//! bins whose counts changed (issue 13, item 5): the same sketch, element
//! for element, as encoding every bin afresh, for every scheme; the same
//! frames under the same masks; the same federation as retraining.
#![allow(clippy::unwrap_used)]

use crate::test_channels::Sketch;
use std::collections::BTreeMap;

use num_bigint::{BigInt, BigUint};
use proptest::prelude::*;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};
use syndrome_agg::{
    AnyParams, AnySketch, CountPolicy, LinearSketch, Scheme, SketchParams, ValidAnyParams,
};

use crate::client::message::{Encoded, encode, sketch_of};
use crate::{ClientId, Federation, FederationConfig, Masking, RemovalRequest};

type Histogram = Vec<(BigUint, u64)>;

/// The sketch of `new` from the sketch of `old` ([`sketch_of`]) against
/// the sketch of `new` encoded afresh ([`encode`]): equal sketches (the
/// concrete sketches' elements compared).
fn from_last(old: &Histogram, new: &Histogram, params: &ValidAnyParams) -> Result<(), String> {
    let fresh = encode(params, new).map_err(|e| e.to_string())?;
    let last = Encoded {
        histogram: old.clone(),
        sketch: AnySketch::encode(
            params,
            old.iter().map(|(b, c)| (b.clone(), BigInt::from(*c))),
        )
        .map_err(|e| e.to_string())?,
    };
    let updated = sketch_of(params, new, Some(&last)).map_err(|e| e.to_string())?;
    if *updated != fresh {
        return Err(format!("{old:?} -> {new:?}: elements differ"));
    }
    // Without a last sketch: encoded afresh.
    let none = sketch_of(params, new, None).map_err(|e| e.to_string())?;
    if *none != fresh {
        return Err("the fresh encoding differs".into());
    }
    Ok(())
}

/// Every scheme mufc builds, with unsigned counts up to 200 and a key
/// domain of 2^bits (the field scheme picks its field from it: 2^61 - 1,
/// 2^127 - 1, a larger prime), and the factor that spreads bins `1..=30`
/// over the domain.
fn schemes() -> Vec<(ValidAnyParams, BigUint)> {
    let mut out = Vec::new();
    let params = |scheme: Scheme, bits: u32| {
        let domain = BigUint::from(1u8) << bits;
        let sketch = SketchParams::new(8, domain.clone())
            .with_extra(2)
            .with_counts(CountPolicy::unsigned(200u32));
        let p = AnyParams::new(scheme, sketch)
            .with_field_bound(domain.clone().max(BigUint::from(400u32)))
            .validate()
            .unwrap();
        (p, (domain >> 5u32) - 1u8)
    };
    for bits in [40, 100, 140] {
        out.push(params(Scheme::FieldKeys, bits));
    }
    out.push(params(Scheme::WideKeys { hash_key: [7; 32] }, 100));
    out.push(params(Scheme::Partitioned { hash_key: [7; 32] }, 40));
    out.push(params(Scheme::Integer, 12));
    out
}

fn histogram(m: &BTreeMap<u64, u64>, spread: &BigUint) -> Histogram {
    m.iter()
        .map(|(b, c)| (BigUint::from(*b) * spread + 1u8, *c))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_sketch_updated_from_the_last_one_is_the_fresh_sketch(
        old in prop::collection::btree_map(1u64..=30, 1u64..=20, 0..8),
        new in prop::collection::btree_map(1u64..=30, 1u64..=20, 0..8),
    ) {
        for (params, spread) in schemes() {
            let (old, new) = (histogram(&old, &spread), histogram(&new, &spread));
            prop_assert_eq!(from_last(&old, &new, &params), Ok(()));
        }
    }
}

const MIX: Mixture = Mixture {
    clients: 4,
    per_client: 12,
    dim: 2,
    clusters: 3,
    k_prime: 2,
    spread: 0.2,
    sigma: 0.1,
};

/// The modes with sketches: every scheme, the mask sources it allows.
const MODES: [(Sketch, Masking); 8] = [
    (Sketch::Auto, Masking::Dealer),
    (Sketch::Auto, Masking::Pairwise),
    (Sketch::Auto, Masking::SecAgg),
    (Sketch::Wide, Masking::Dealer),
    (Sketch::Wide, Masking::SecAgg),
    (Sketch::Partitioned, Masking::Dealer),
    (Sketch::Partitioned, Masking::SecAgg),
    (Sketch::Integer, Masking::Dealer),
];

/// Deterministic masks and recorded frames, so that two federations that
/// send the same sketches send the same bytes; every request applied at
/// once, down to one client.
fn config(privacy: Sketch, masking: Masking) -> crate::ValidConfig {
    FederationConfig::new(2)
        .client_k(2)
        .gamma(0.1)
        .seed(5)
        .channel(crate::test_channels::channel(privacy, masking))
        .run(crate::RunOptions::new().record_messages(true))
        .insecure_deterministic_masks(true)
        .min_clients(1)
        .min_updating_clients(1)
        .validate()
        .unwrap()
}

/// The server's counts and model, and every client's histogram, compared
/// bit for bit (mufc-testkit's comparison takes the `mufc` of other crates).
fn same_model(a: &Federation, b: &Federation) -> Result<(), String> {
    let hist = |f: &Federation| -> Vec<(ClientId, Histogram)> {
        f.clients()
            .iter()
            .map(|c| (c.id(), c.histogram().to_vec()))
            .collect()
    };
    let bits = |f: &Federation| -> Option<Vec<u64>> {
        let c = f.server().centroids()?;
        Some(c.iter().map(|x| x.to_bits()).collect())
    };
    if hist(a) != hist(b) {
        return Err("the clients' histograms differ".into());
    }
    if a.server().counts() != b.server().counts() {
        return Err("the decoded counts differ".into());
    }
    if bits(a) != bits(b) {
        return Err("the server's centroids differ".into());
    }
    Ok(())
}

/// Every client keeps a sketch, and it is the sketch of the histogram it
/// keeps with it, as encoded afresh; with `current`, that histogram is the
/// client's current one (after a whole round; a change round sends
/// changes and leaves the kept sketches as they were, which the next whole
/// round updates from).
fn check_kept(fed: &Federation, current: bool) -> Result<(), String> {
    let params = fed.sketch_params().unwrap();
    for c in fed.clients() {
        let kept = c
            .encoded()
            .ok_or(format!("client {} keeps no sketch", c.id()))?;
        if current && kept.histogram != c.histogram() {
            return Err(format!("client {}: the kept histogram is stale", c.id()));
        }
        let fresh = AnySketch::encode(
            params,
            kept.histogram
                .iter()
                .map(|(b, n)| (b.clone(), BigInt::from(*n))),
        )
        .unwrap();
        if kept.sketch != fresh {
            return Err(format!("client {}: the kept sketch differs", c.id()));
        }
    }
    Ok(())
}

/// One request: for each `(client, positions)`, the points at those
/// positions (modulo the client's size) of the client at that index
/// (modulo the number of clients), never a point requested before
/// (`removed`, deferred requests included) and leaving every client of
/// `data` at least two points (the retrained oracle needs the clients'
/// `k = 2` distinct points).
fn request(
    fed: &Federation,
    steps: &[(usize, Vec<usize>)],
    removed: &BTreeMap<ClientId, Vec<seeding::PointId>>,
    data: &[seeding::Dataset],
) -> Option<RemovalRequest> {
    let mut points: BTreeMap<ClientId, Vec<seeding::PointId>> = BTreeMap::new();
    for (c, positions) in steps {
        let clients = fed.clients();
        let index = c % clients.len();
        let client = *clients.get(index)?;
        let before = removed.get(&client.id()).map_or(&[][..], Vec::as_slice);
        let ids = points.entry(client.id()).or_default();
        for p in positions {
            let id = client.data().id(p % client.data().len());
            let left = data[index].len() - before.len() - ids.len();
            if !ids.contains(&id) && !before.contains(&id) && left > 2 {
                ids.push(id);
            }
        }
    }
    points.retain(|_, ids| !ids.is_empty());
    if points.is_empty() {
        return None;
    }
    let mut req = RemovalRequest::new();
    for (c, ids) in points {
        req = req.with_points(c, ids);
    }
    Some(req)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn removals_send_the_frames_of_a_fresh_encoding_and_equal_retraining(
        requests in prop::collection::vec(
            prop::collection::vec((0usize..4, prop::collection::vec(0usize..12, 1..4)), 1..3),
            1..5,
        ),
    ) {
        let data = gaussian_clients("incremental", MIX);
        for (privacy, masking) in MODES {
            let what = format!("{privacy:?}/{masking:?}");
            let mut fed = Federation::new(data.clone(), &config(privacy, masking)).unwrap();
            check_kept(&fed, true).map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
            let mut removed: BTreeMap<ClientId, Vec<seeding::PointId>> = BTreeMap::new();
            for steps in &requests {
                let Some(req) = request(&fed, steps, &removed, &data) else { break };
                // The same federation, sending sketches encoded afresh.
                let mut twin = fed.clone();
                twin.forget_encoded();
                let (a, b) = (fed.remove(&req), twin.remove(&req));
                prop_assert_eq!(a.is_ok(), b.is_ok(), "{}", what);
                if a.is_err() {
                    continue;
                }
                prop_assert_eq!(fed.last_messages(), twin.last_messages(), "{}", what);
                prop_assert!(fed.last_messages().is_some());
                check_kept(&fed, false).map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
                for (c, ids) in req.point_entries() {
                    removed.entry(*c).or_default().extend(ids.iter().copied());
                }
            }
            let rest: Vec<seeding::Dataset> = data
                .iter()
                .enumerate()
                .map(|(i, d)| {
                    let gone = removed.get(&ClientId(i as u64)).map_or(&[][..], Vec::as_slice);
                    d.without(gone).unwrap()
                })
                .collect();
            let retrained = Federation::new(rest, fed.config()).unwrap();
            same_model(&fed, &retrained).map_err(|e| TestCaseError::fail(format!("{what}: {e}")))?;
        }
    }
}

#[test]
fn a_loaded_federation_encodes_once_then_updates() {
    let data = gaussian_clients("incremental", MIX);
    let mut fed = Federation::new(data, &config(Sketch::Auto, Masking::Dealer)).unwrap();
    let mut loaded = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
    assert!(loaded.clients().iter().all(|c| c.encoded().is_none()));
    let [a, b, ..] = fed.clients()[..] else {
        panic!("fewer than two clients")
    };
    let req = RemovalRequest::points(a.id(), vec![a.data().id(1)])
        .with_points(b.id(), vec![b.data().id(2)]);
    // Here t = k L is too small for a change round (2 k per updated
    // client): a whole round, the loaded clients encode afresh.
    fed.remove(&req).unwrap();
    let r = loaded.remove(&req).unwrap();
    assert_eq!(r.bytes_per_client, fed.fit_report().bytes_per_client);
    assert_eq!(fed.last_messages(), loaded.last_messages());
    check_kept(&loaded, true).unwrap();
    same_model(&fed, &loaded).unwrap();
    // A removed client makes the round whole: every client encodes, the
    // loaded ones afresh, the others from their kept sketches.
    let gone = RemovalRequest::clients(vec![fed.clients()[2].id()]);
    fed.remove(&gone).unwrap();
    loaded.remove(&gone).unwrap();
    assert_eq!(fed.last_messages(), loaded.last_messages());
    check_kept(&loaded, true).unwrap();
    check_kept(&fed, true).unwrap();
    same_model(&fed, &loaded).unwrap();
}
