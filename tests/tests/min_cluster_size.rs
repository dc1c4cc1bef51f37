//! The minimum cluster size (docs/threat-model.md §6a), against the
//! server's view: with `min_cluster_size(s)` every point a client sends
//! stands for at least `s` of its records, and with full client K-means
//! it is their mean. Sizes, modes and data are drawn at random; a client
//! too small to send sends nothing; unlearning through the dissolved
//! clusters still equals retraining bit for bit.
#![allow(clippy::unwrap_used)]

use mufc::{Channel, ClientId, ClientTraining, Federation, FederationConfig, RemovalRequest};
use mufc_testkit::{compare, numbered};
use rand::RngExt;
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

const MIX: Mixture = Mixture {
    clients: 5,
    per_client: 24,
    dim: 2,
    clusters: 4,
    k_prime: 2,
    spread: 0.2,
    sigma: 0.08,
};

/// Checks what `fed`'s clients send against `s`: every count at least
/// `s`, every full K-means centre the mean of the records it stands for,
/// and in the plain mode every weighted point the server holds at least
/// `s`.
fn check_sent(fed: &Federation, s: u64, what: &str) {
    for c in fed.clients() {
        if !c.sends() {
            assert!(
                c.histogram().is_empty(),
                "{what}: a silent client sent bins"
            );
            assert!(
                (c.data().len() as u64) < s,
                "{what}: client {} kept silent",
                c.id()
            );
            continue;
        }
        assert!(
            c.sizes().iter().all(|&n| n >= s),
            "{what}: sizes {:?}",
            c.sizes()
        );
        assert!(
            c.histogram().iter().all(|(_, n)| *n >= s),
            "{what}: {:?}",
            c.histogram()
        );
        let labels = c.local_clusters();
        for (j, &size) in c.sizes().iter().enumerate() {
            let members: Vec<usize> = (0..labels.len())
                .filter(|&p| labels[p] as usize == j)
                .collect();
            assert_eq!(
                members.len() as u64,
                size,
                "{what}: cluster {j} of client {}",
                c.id()
            );
            if fed.config().client_training() == ClientTraining::Full {
                for axis in 0..c.data().dim() {
                    let mean = members
                        .iter()
                        .map(|&p| c.data().point(p)[axis])
                        .sum::<f64>()
                        / size as f64;
                    let centre = c.centroids()[(axis, j)];
                    assert!(
                        (mean - centre).abs() < 1e-9,
                        "{what}: centre {centre}, mean {mean}"
                    );
                }
            }
        }
    }
    if fed.config().channel() == &Channel::Plain {
        assert!(
            fed.server().data().weights().iter().all(|&w| w >= s),
            "{what}"
        );
    }
}

#[test]
fn every_point_a_client_sends_stands_for_at_least_the_minimum() {
    let mut rng = testdata::rng("min-cluster-size");
    let mut dissolved = 0;
    for trial in 0..24u64 {
        let s = rng.random_range(1..=6u64);
        let training = if rng.random_bool(0.5) {
            ClientTraining::Full
        } else {
            ClientTraining::Seeding
        };
        let plain = rng.random_bool(0.3);
        let mut config = FederationConfig::new(3)
            .client_training(training)
            .min_cluster_size(s)
            .gamma(0.02)
            .seed(trial)
            .min_updating_clients(1);
        if plain {
            config = config.channel(Channel::Plain);
        }
        let what = format!("trial {trial}: s = {s}, {training:?}, plain {plain}");
        let data = numbered(gaussian_clients(&format!("min-size-{trial}"), MIX));
        let fed = Federation::with_ids(data.clone(), &config.validate().unwrap()).unwrap();
        check_sent(&fed, s, &what);
        // Not vacuous: the adaptive k sends these small data sets point
        // by point, so a minimum above 2 dissolves clusters.
        let asked: usize = fed.clients().iter().map(|c| c.k()).sum();
        let sent: usize = fed.clients().iter().map(|c| c.num_centroids()).sum();
        if s > 2 {
            assert!(sent < asked, "{what}: {sent} of {asked}");
            dissolved += 1;
        }
        // The server counts every point of a client that sends.
        assert_eq!(
            fed.server().total_count(),
            (MIX.clients * MIX.per_client) as u64,
            "{what}"
        );
    }
    assert!(dissolved > 0);
}

#[test]
fn a_client_below_the_minimum_sends_nothing_and_unlearning_stays_exact() {
    let data = numbered(gaussian_clients("min-size-small", MIX));
    let config = FederationConfig::new(3)
        .min_cluster_size(8)
        .gamma(0.02)
        .seed(4)
        .min_updating_clients(1)
        .validate()
        .unwrap();
    let mut fed = Federation::with_ids(data.clone(), &config).unwrap();
    check_sent(&fed, 8, "start");
    // Client 2 shrinks from 24 points to 7: below the minimum.
    let victim = ClientId(2);
    let ids: Vec<PointId> = data[2].1.ids()[..17].to_vec();
    fed.remove(&RemovalRequest::points(victim, ids.clone()))
        .unwrap();
    let c = fed.client(victim).unwrap();
    assert!(!c.sends());
    assert!(c.histogram().is_empty());
    assert_eq!(fed.server().total_count(), (4 * 24) as u64);
    check_sent(&fed, 8, "after");
    let mut truth = data.clone();
    truth[2].1 = truth[2].1.without(&ids).unwrap();
    compare(
        &fed,
        &Federation::with_ids(truth.clone(), fed.config()).unwrap(),
    )
    .unwrap();
    // And a removal at a client that sends, with clusters dissolved.
    let more: Vec<PointId> = data[0].1.ids()[..5].to_vec();
    fed.remove(&RemovalRequest::points(ClientId(0), more.clone()))
        .unwrap();
    truth[0].1 = truth[0].1.without(&more).unwrap();
    compare(&fed, &Federation::with_ids(truth, fed.config()).unwrap()).unwrap();
}

#[test]
fn the_minimum_is_validated_and_one_changes_nothing() {
    let data: Vec<(ClientId, Dataset)> = numbered(gaussian_clients("min-size-one", MIX));
    let base = FederationConfig::new(3).gamma(0.02).seed(9);
    let one = Federation::with_ids(
        data.clone(),
        &base.clone().min_cluster_size(1).validate().unwrap(),
    )
    .unwrap();
    let default = Federation::with_ids(data, &base.clone().validate().unwrap()).unwrap();
    compare(&one, &default).unwrap();
    assert_eq!(
        base.clone().validate().unwrap().client().min_cluster_size(),
        1
    );
    assert!(base.min_cluster_size(0).validate().is_err());
}
