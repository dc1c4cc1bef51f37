//! Issue 5's "a removal whose point was not a seed leaves every client
//! message unchanged and does not refit the server", in its exact form
//! (docs/threat-model.md U1; see the crate docs of `mufc`, "Exactness"): the count of
//! the removed point must change, so
//!
//! - no client reseeds,
//! - every *other* client's plaintext histogram (what its sketch encodes)
//!   is unchanged,
//! - the affected client's histogram differs by exactly -1 in one bin,
//! - the server decodes a difference of one nonzero entry and updates its
//!   K-means incrementally (not a refit),
//! - and the result equals retraining on the remaining data bit for bit.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use mufc::{
    Channel, ClientId, DecodeKind, Federation, FederationConfig, Masks, RemovalRequest, Scma,
    ServerPoints, ServerUpdate,
};
use mufc_testkit::compare;
use num_bigint::BigUint;
use seeding::PointId;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

fn histogram(fed: &Federation, c: ClientId) -> BTreeMap<BigUint, i64> {
    fed.client(c)
        .unwrap()
        .histogram()
        .iter()
        .map(|(b, n)| (b.clone(), i64::try_from(*n).unwrap()))
        .collect()
}

#[test]
fn a_non_seed_removal_changes_one_count_and_updates_the_server_incrementally() {
    let mix = Mixture {
        clients: 8,
        per_client: 60,
        dim: 3,
        clusters: 5,
        k_prime: 2,
        spread: 0.2,
        sigma: 0.1,
    };
    let data = gaussian_clients("nonseed", mix);
    for points in [ServerPoints::Centers, ServerPoints::Uniform] {
        for channel in [Channel::default(), Channel::Scma(Scma::wide(Masks::Dealer))] {
            let config = FederationConfig::paper(4)
                .client_k(3)
                .server_points(points)
                .channel(channel)
                // One client's lone round at a time, which the default
                // policy would defer (docs/threat-model.md U3; the
                // deferral is tested in privacy.rs).
                .min_updating_clients(1)
                .validate()
                .unwrap();
            let mut fed = Federation::new(data.clone(), &config).unwrap();
            let before = fed.clone();
            for l in [0usize, 3, 7] {
                let c = ClientId(l as u64);
                let client = fed.client(c).unwrap();
                let victim: PointId = client
                    .data()
                    .ids()
                    .iter()
                    .copied()
                    .find(|id| !client.seed_ids().contains(id))
                    .unwrap();
                let prev = fed.clone();
                let report = fed
                    .remove(&RemovalRequest::points(c, vec![victim]))
                    .unwrap();

                assert!(report.reseeded.is_empty());
                assert_eq!(report.updated_clients, vec![c]);
                assert_eq!(report.decode, DecodeKind::Delta { nonzeros: 1 });
                match &report.server {
                    ServerUpdate::Incremental(s) => assert!(!s.fell_back),
                    other => panic!("expected an incremental update, got {other:?}"),
                }
                for other in fed.client_ids() {
                    if other != c {
                        assert_eq!(histogram(&fed, other), histogram(&prev, other));
                    }
                }
                let (old, new) = (histogram(&prev, c), histogram(&fed, c));
                let mut diff: Vec<(BigUint, i64)> = old
                    .keys()
                    .chain(new.keys())
                    .map(|b| {
                        let d = new.get(b).copied().unwrap_or(0) - old.get(b).copied().unwrap_or(0);
                        (b.clone(), d)
                    })
                    .filter(|(_, d)| *d != 0)
                    .collect();
                diff.dedup();
                assert_eq!(diff.len(), 1, "{diff:?}");
                assert_eq!(diff[0].1, -1);
                // The bin is that of the victim's seed.
                let seed = client_seed_of(&prev, c, victim);
                let q = fed.quantizer().unwrap();
                assert_eq!(diff[0].0, q.bin_of(&seed).unwrap());
                assert_eq!(
                    fed.client(c).unwrap().seed_ids(),
                    prev.client(c).unwrap().seed_ids()
                );
            }
            // Equal to retraining without the three points.
            let mut rest = data.clone();
            for (l, d) in rest.iter_mut().enumerate() {
                let gone: Vec<PointId> = d
                    .ids()
                    .iter()
                    .copied()
                    .filter(|id| !fed.client(ClientId(l as u64)).unwrap().data().contains(*id))
                    .collect();
                *d = d.without(&gone).unwrap();
            }
            let retrained = Federation::new(rest, fed.config()).unwrap();
            compare(&fed, &retrained).unwrap();
            assert!(compare(&fed, &before).is_err());
        }
    }
}

/// The coordinates of the seed that point `id` of client `c` belongs to.
fn client_seed_of(fed: &Federation, c: ClientId, id: PointId) -> Vec<f64> {
    let client = fed.client(c).unwrap();
    let pos = client.data().position(id).unwrap();
    let j = client.local_clusters()[pos] as usize;
    client.centroids().column(j).iter().copied().collect()
}
