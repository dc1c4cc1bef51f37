//! `min_size` (the clusters a client sends, small ones dissolved): every
//! cluster weighs at least the minimum (or the whole model is one cluster
//! too light to send), no weight is lost, a moved centroid is the mean of
//! its members, a minimum of 1 changes nothing; and for K-means++ seeding,
//! unlearning gives the clusters of a reseeding, bit for bit (the exact
//! K-means counterpart runs in every `seeding_testkit::exact::compare`).
#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use seeding::{
    Dataset, ExactKMeans, ExpRace, KMeansParams, KMeansPlusPlus, MinSizeClusters, PointId,
    SeedingParams,
};
use seeding_testkit::exact::{Coords, Points, arb_points};

/// The invariants every `min_size` result keeps, for `data` and `min`.
fn check_invariants(data: &Dataset, c: &MinSizeClusters, min: u64) -> Result<(), String> {
    let total = data.total_weight();
    let sum: u64 = c.sizes().iter().sum();
    if sum != total {
        return Err(format!("sizes add up to {sum}, the data weighs {total}"));
    }
    if total >= min && !c.is_sendable() {
        return Err(format!("a cluster below {min}: {:?}", c.sizes()));
    }
    if total < min && (c.len() != 1 || c.is_sendable()) {
        return Err(format!("too light to send, yet {:?}", c.sizes()));
    }
    let mut counted = vec![0u64; c.len()];
    for p in 0..data.len() {
        let j = c
            .assignment(data.id(p))
            .ok_or_else(|| format!("no cluster for {}", data.id(p)))?;
        counted[j] += data.weight(p);
    }
    if counted != c.sizes() {
        return Err(format!(
            "members weigh {counted:?}, sizes say {:?}",
            c.sizes()
        ));
    }
    if c.assignment(PointId(u64::MAX)).is_some() {
        return Err("a cluster for a point not in the data".into());
    }
    Ok(())
}

fn kmeans(k: usize) -> ExactKMeans {
    ExactKMeans::new(KMeansParams::new(k).validate().unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: testdata::cases(128), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn kmeans_clusters_keep_the_invariants(
        points in arb_points(),
        k in 1usize..=8,
        min in 1u64..=6,
        seed in any::<u64>(),
    ) {
        let data = points.dataset(0);
        let model = kmeans(k).fit(&data, seed).unwrap();
        let c = model.min_size(min);
        let r = check_invariants(&data, &c, min);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        // A centroid that kept its members is the model's; one that took
        // points in is their weighted mean.
        for j in 0..c.len() {
            let col = c.centroids().column(j).into_owned();
            let members: Vec<usize> = (0..data.len()).filter(|&p| c.assignment(data.id(p)) == Some(j)).collect();
            let same = (0..model.num_centroids()).any(|i| {
                model.centroids().column(i) == col
                    && members.iter().all(|&p| model.assignment(data.id(p)) == Some(i))
            });
            if same {
                continue;
            }
            let w: f64 = members.iter().map(|&p| data.weight(p) as f64).sum();
            for axis in 0..data.dim() {
                let mean: f64 = members.iter().map(|&p| data.weight(p) as f64 * data.point(p)[axis]).sum::<f64>() / w;
                prop_assert!((mean - col[axis]).abs() <= 1e-6 * (1.0 + mean.abs()), "axis {} of cluster {}: {} vs mean {}", axis, j, col[axis], mean);
            }
        }
    }

    #[test]
    fn a_minimum_of_one_keeps_the_model(points in arb_points(), k in 1usize..=8, seed in any::<u64>()) {
        let data = points.dataset(0);
        let model = kmeans(k).fit(&data, seed).unwrap();
        prop_assume!(model.sizes().iter().all(|&s| s > 0));
        let c = model.min_size(1);
        prop_assert_eq!(c.centroids(), model.centroids());
        prop_assert_eq!(c.sizes(), model.sizes());
        for &id in data.ids() {
            prop_assert_eq!(c.assignment(id), model.assignment(id));
        }
    }

    #[test]
    fn seeding_clusters_keep_the_invariants_and_the_seeds(
        points in arb_points(),
        k in 1usize..=8,
        min in 1u64..=6,
        seed in any::<u64>(),
    ) {
        let data = points.dataset(0);
        let s = KMeansPlusPlus::new(SeedingParams::new(k).validate().unwrap()).fit(data.clone(), ExpRace::new(seed));
        let c = s.min_size(min);
        let r = check_invariants(&data, &c, min);
        prop_assert!(r.is_ok(), "{}", r.unwrap_err());
        // Every centre is one of the seeds.
        for col in c.centroids().column_iter() {
            prop_assert!(s.centers().column_iter().any(|seed| seed == col));
        }
    }

    #[test]
    fn unlearned_seeding_gives_the_clusters_of_a_reseeding(
        dim in 1usize..=3,
        n in 2usize..=80,
        k in 1usize..=8,
        min in 1u64..=5,
        seed in any::<u64>(),
        z in any::<u64>(),
        removed in prop::collection::vec(any::<prop::sample::Index>(), 1..=6),
    ) {
        let points = Points::random(dim, n, Coords::Fine, z % 2 == 0, z);
        let data = points.dataset(1);
        let kpp = KMeansPlusPlus::new(SeedingParams::new(k).validate().unwrap());
        let mut s = kpp.fit(data.clone(), ExpRace::new(seed));
        let mut ids: Vec<PointId> = removed.iter().map(|i| data.id(i.index(data.len()))).collect();
        ids.sort();
        ids.dedup();
        prop_assume!(ids.len() < data.len());
        s.unlearn(&ids).unwrap();
        let left = data.without(&ids).unwrap();
        let fresh = kpp.fit(Points::from_dataset(&left, Coords::Fine).dataset(7), ExpRace::new(seed));
        let (a, b) = (s.min_size(min), fresh.min_size(min));
        let bits = |c: &MinSizeClusters| c.centroids().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        prop_assert_eq!(bits(&a), bits(&b));
        prop_assert_eq!(a.sizes(), b.sizes());
        for &id in left.ids() {
            prop_assert_eq!(a.assignment(id), b.assignment(id));
        }
    }
}
