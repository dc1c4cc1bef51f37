//! Property tests of both baselines on random clients.
#![allow(clippy::unwrap_used, clippy::float_cmp)]

use baselines::{BaselineError, DcKMeans, DcParams, KFedParams, kfed};
use nalgebra::DMatrix;
use proptest::prelude::*;
use seeding::{Dataset, PointId, SqEuclidean, phi};

/// 1 to 4 clients of 1 to 10 points each in 1 or 2 dimensions, on a coarse
/// grid (so that ties and repeated points occur), with distinct ids.
fn arb_clients() -> impl Strategy<Value = Vec<Dataset>> {
    (1usize..=2, prop::collection::vec(1usize..=10, 1..=4)).prop_flat_map(|(dim, sizes)| {
        let total: usize = sizes.iter().sum();
        prop::collection::vec(-8i32..=8, total * dim).prop_map(move |grid| {
            let mut next = 0;
            sizes
                .iter()
                .map(|&n| {
                    let coords: Vec<f64> = grid[next * dim..(next + n) * dim]
                        .iter()
                        .map(|&g| f64::from(g) / 4.0)
                        .collect();
                    let ids = (next..next + n).map(|i| PointId(i as u64)).collect();
                    next += n;
                    Dataset::with_ids(DMatrix::from_vec(dim, n, coords), ids).unwrap()
                })
                .collect()
        })
    })
}

fn union(clients: &[Dataset]) -> Dataset {
    let dim = clients[0].dim();
    let coords: Vec<f64> = clients.iter().flat_map(|c| c.coords().to_vec()).collect();
    Dataset::new(DMatrix::from_vec(dim, coords.len() / dim, coords)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// K-FED either runs, reproducibly, giving every point a server
    /// cluster, with an induced objective at least the nearest-centroid
    /// objective of the same centroids; or refuses because the clients
    /// sent fewer than K centroids.
    #[test]
    fn kfed_is_reproducible_and_its_induced_objective_bounds_phi(
        clients in arb_clients(),
        k in 1usize..=4,
        local_k in 1usize..=3,
        seed in any::<u64>(),
    ) {
        let params = KFedParams::new(k, local_k).validate().unwrap();
        match kfed(&clients, &params, seed) {
            Ok(run) => {
                prop_assert_eq!(run.centroids.ncols(), k);
                for (data, labels) in clients.iter().zip(&run.induced) {
                    prop_assert_eq!(labels.len(), data.len());
                    prop_assert!(labels.iter().all(|&j| (j as usize) < k));
                }
                let nearest = phi(&SqEuclidean, &union(&clients), run.centroids.as_view()).unwrap();
                prop_assert!(run.phi_f >= nearest * (1.0 - 1e-9) - 1e-12);
                let again = kfed(&clients, &params, seed).unwrap();
                prop_assert_eq!(&again.centroids, &run.centroids);
                prop_assert_eq!(again.phi_f.to_bits(), run.phi_f.to_bits());
                prop_assert_eq!(&again.induced, &run.induced);
            }
            // Each client sends at most min(n, k') centroids (fewer when
            // it has fewer distinct points).
            Err(e) => prop_assert!(run_refused(&e), "{e}"),
        }
    }

    /// Deleting points from DC-KMeans gives the tree a fresh fit of the
    /// remaining points gives, bit for bit.
    #[test]
    fn dc_deletion_equals_retraining(
        clients in arb_clients(),
        k in 1usize..=3,
        leaf_k in 1usize..=3,
        seed in any::<u64>(),
        victims in prop::collection::vec(any::<prop::sample::Index>(), 1..=3),
    ) {
        let params = DcParams::new(k, leaf_k).root_restarts(3).validate().unwrap();
        let mut dc = DcKMeans::fit(clients.clone(), params, seed).unwrap();
        let mut remaining = clients;
        for v in victims {
            let ids: Vec<PointId> = remaining.iter().flat_map(|c| c.ids().to_vec()).collect();
            if ids.len() <= 1 {
                break;
            }
            let id = ids[v.index(ids.len())];
            let del = dc.delete(id).unwrap();
            remaining[del.leaf] = remaining[del.leaf].without(&[id]).unwrap();
        }
        let fresh = DcKMeans::fit(remaining, params, seed).unwrap();
        prop_assert_eq!(dc.centroids(), fresh.centroids());
        prop_assert_eq!(dc.leaf_models(), fresh.leaf_models());
        prop_assert_eq!(dc.induced(), fresh.induced());
        prop_assert_eq!(dc.phi_f().unwrap().to_bits(), fresh.phi_f().unwrap().to_bits());
    }
}

fn run_refused(e: &BaselineError) -> bool {
    matches!(e, BaselineError::InvalidParameter { name: "K", .. })
}
