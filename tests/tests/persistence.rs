//! Save, load, unlearn == unlearn: a reloaded federation serves removal
//! requests with the same results, bit for bit, as the original, in every
//! mode; corrupt bytes are an error, never a panic or another federation.
#![allow(clippy::unwrap_used)]

use mufc::{
    Channel, ClientId, ClientTraining, Federation, FederationConfig, Masks, MufcError,
    RemovalRequest, RingMasks, Scma, ServerPoints,
};
use mufc_testkit::{compare, untimed};
use rand::RngExt;
use seeding::PointId;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

const MIX: Mixture = Mixture {
    clients: 5,
    per_client: 40,
    dim: 3,
    clusters: 3,
    k_prime: 2,
    spread: 0.2,
    sigma: 0.1,
};

fn requests(fed: &Federation) -> Vec<RemovalRequest> {
    let c1 = fed.client(ClientId(1)).unwrap();
    let c3 = fed.client(ClientId(3)).unwrap();
    vec![
        RemovalRequest::points(ClientId(1), vec![c1.seed_ids()[0]]),
        RemovalRequest::points(ClientId(3), vec![c3.data().id(5), c3.data().id(6)])
            .with_points(ClientId(0), vec![PointId(9)]),
        RemovalRequest::clients(vec![ClientId(2)]),
        RemovalRequest::points(ClientId(4), vec![PointId(0)]),
    ]
}

#[test]
fn save_load_unlearn_equals_unlearn_in_every_mode() {
    let data = gaussian_clients("persist", MIX);
    let modes = [
        FederationConfig::new(3).client_k(2),
        FederationConfig::new(3)
            .client_k(2)
            .server_points(ServerPoints::Uniform)
            .channel(Channel::scma(Masks::Pairwise)),
        FederationConfig::new(3)
            .client_k(2)
            .client_training(ClientTraining::Full)
            .channel(Channel::Scma(Scma::wide(Masks::Dealer))),
        FederationConfig::new(3)
            .client_k(2)
            .channel(Channel::Scma(Scma::integer(RingMasks::Dealer))),
        FederationConfig::new(3)
            .client_k(2)
            .channel(Channel::Plain)
            .restarts(2),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (i, c) in modes.into_iter().enumerate() {
        let mut fed = Federation::new(data.clone(), &c.seed(i as u64).validate().unwrap()).unwrap();
        // One request before saving, so that the saved state is not a
        // fresh fit's.
        fed.remove(&RemovalRequest::points(ClientId(0), vec![PointId(3)]))
            .unwrap();
        let path = dir.path().join(format!("fed-{i}.mufc"));
        fed.save(&path).unwrap();
        let mut loaded = Federation::load(&path).unwrap();
        compare(&fed, &loaded).unwrap();
        assert_eq!(loaded.rounds(), fed.rounds());
        assert_eq!(loaded.history(), fed.history());
        assert_eq!(loaded.fit_report(), fed.fit_report());
        assert_eq!(loaded.config(), fed.config());
        for req in requests(&fed) {
            let a = fed.remove(&req).unwrap();
            let b = loaded.remove(&req).unwrap();
            assert_eq!(untimed(&a), untimed(&b), "mode {i}");
            compare(&fed, &loaded).unwrap_or_else(|e| panic!("mode {i}: {e}"));
        }
        // Saving is deterministic.
        assert_eq!(
            Federation::from_bytes(&fed.to_bytes().unwrap())
                .unwrap()
                .to_bytes()
                .unwrap(),
            fed.to_bytes().unwrap()
        );
    }
}

#[test]
fn a_federation_without_clients_saves_and_loads() {
    let data = gaussian_clients("persist-empty", MIX);
    let mut fed = Federation::new(
        data,
        &FederationConfig::new(3).client_k(2).validate().unwrap(),
    )
    .unwrap();
    let all = fed.client_ids();
    let report = fed.remove(&RemovalRequest::clients(all)).unwrap();
    assert_eq!(report.server, mufc::ServerUpdate::Cleared);
    assert!(fed.server().model().is_none());
    assert_eq!(fed.objectives(None).unwrap_err(), MufcError::NoServerModel);
    let loaded = Federation::from_bytes(&fed.to_bytes().unwrap()).unwrap();
    assert!(loaded.clients().is_empty());
    compare(&fed, &loaded).unwrap();
}

#[test]
fn corrupt_bytes_are_errors() {
    let data = gaussian_clients("persist-corrupt", MIX);
    let fed = Federation::new(
        data,
        &FederationConfig::new(3).client_k(2).validate().unwrap(),
    )
    .unwrap();
    let bytes = fed.to_bytes().unwrap();
    assert!(matches!(
        Federation::from_bytes(&bytes[1..]),
        Err(MufcError::Persistence(_))
    ));
    assert!(Federation::from_bytes(&bytes[..bytes.len() / 2]).is_err());
    assert!(Federation::from_bytes(&[]).is_err());
    // Flipped bytes anywhere: an error or a valid federation, never a
    // panic; and whatever loads is checked against its stored seeds and
    // counts.
    let mut rng = testdata::rng("persist-flips");
    for _ in 0..200 {
        let mut b = bytes.clone();
        let i = rng.random_range(8..b.len());
        b[i] ^= 1 << rng.random_range(0..8u32);
        if let Ok(f) = Federation::from_bytes(&b) {
            assert_eq!(f.server().counts(), &mufc_testkit::plain_sum(&f));
        }
    }
    assert!(matches!(
        Federation::load("/no/such/file.mufc"),
        Err(MufcError::Persistence(_))
    ));
}
