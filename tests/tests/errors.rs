//! Every error is clear and leaves the federation unchanged: the saved
//! state before and after a failed request is the same, byte for byte.
#![allow(clippy::unwrap_used)]

use mufc::{
    Channel, ClientId, ClientTraining, Federation, FederationConfig, MufcError, RemovalRequest,
};
use nalgebra::DMatrix;
use seeding::{Dataset, PointId};
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

const MIX: Mixture = Mixture::SMALL;

fn fed(config: FederationConfig) -> Federation {
    Federation::new(gaussian_clients("errors", MIX), &config.validate().unwrap()).unwrap()
}

#[test]
fn failed_removal_requests_change_nothing() {
    for config in [
        FederationConfig::new(3).client_k(2),
        FederationConfig::new(3).client_k(2).channel(Channel::Plain),
        FederationConfig::new(3)
            .client_k(2)
            .client_training(ClientTraining::Full),
    ] {
        let mut fed = fed(config);
        // One request first, so that the state has history.
        fed.remove(
            &RemovalRequest::points(ClientId(1), vec![PointId(4)])
                .with_points(ClientId(3), vec![PointId(5)]),
        )
        .unwrap();
        let before = fed.to_bytes().unwrap_or_else(|_| unreachable!());
        let c0 = ClientId(0);
        let cases: Vec<(RemovalRequest, MufcError)> = vec![
            (RemovalRequest::new(), MufcError::EmptyRequest),
            (RemovalRequest::points(c0, vec![]), MufcError::EmptyRequest),
            (
                RemovalRequest::points(ClientId(9), vec![PointId(0)]),
                MufcError::UnknownClient(ClientId(9)),
            ),
            (
                RemovalRequest::clients(vec![ClientId(2), ClientId(9)]),
                MufcError::UnknownClient(ClientId(9)),
            ),
            (
                RemovalRequest::points(c0, vec![PointId(1), PointId(1000)]),
                MufcError::UnknownPoint {
                    client: c0,
                    id: PointId(1000),
                },
            ),
            (
                // Already removed.
                RemovalRequest::points(ClientId(1), vec![PointId(4)]),
                MufcError::UnknownPoint {
                    client: ClientId(1),
                    id: PointId(4),
                },
            ),
            (
                RemovalRequest::points(c0, vec![PointId(2), PointId(3), PointId(2)]),
                MufcError::RepeatedPoint {
                    client: c0,
                    id: PointId(2),
                },
            ),
            (
                RemovalRequest::clients(vec![c0]).with_points(c0, vec![PointId(1)]),
                MufcError::RepeatedClient(c0),
            ),
            (
                RemovalRequest::points(c0, vec![PointId(1)]).with_points(c0, vec![PointId(2)]),
                MufcError::RepeatedClient(c0),
            ),
            (
                // A valid request after an invalid part: nothing of it is
                // served.
                RemovalRequest::points(ClientId(2), vec![PointId(0)])
                    .with_points(ClientId(3), vec![PointId(77)]),
                MufcError::UnknownPoint {
                    client: ClientId(3),
                    id: PointId(77),
                },
            ),
        ];
        for (req, expected) in cases {
            assert_eq!(fed.remove(&req).unwrap_err(), expected, "{req:?}");
            assert_eq!(fed.to_bytes().unwrap(), before, "{req:?} changed the state");
        }
        // In the plain mode nothing waits: the server sees every client's
        // centroids, a lone update tells it nothing more.
        if fed.config().channel() == &Channel::Plain {
            let report = fed
                .remove(&RemovalRequest::points(c0, vec![PointId(0)]))
                .unwrap();
            assert!(!report.outcome.is_deferred());
            assert!(report.privacy_warning.is_none());
            continue;
        }
        // A lone update waits (docs/threat-model.md U3): it is checked,
        // its point erased, and the model does not change.
        let counts = fed.server().counts().clone();
        let report = fed
            .remove(&RemovalRequest::points(c0, vec![PointId(0)]))
            .unwrap();
        assert!(report.outcome.is_deferred());
        assert_eq!(fed.server().counts(), &counts);
        let with_pending = fed.to_bytes().unwrap();
        // While it waits, a failed request changes nothing, the pending
        // request included.
        let cases: Vec<(RemovalRequest, MufcError)> = vec![
            (
                RemovalRequest::points(ClientId(2), vec![PointId(0)])
                    .with_points(ClientId(3), vec![PointId(77)]),
                MufcError::UnknownPoint {
                    client: ClientId(3),
                    id: PointId(77),
                },
            ),
            (
                RemovalRequest::points(ClientId(2), vec![PointId(0)])
                    .with_points(c0, vec![PointId(6), PointId(0)]),
                MufcError::AlreadyPending {
                    client: c0,
                    id: Some(PointId(0)),
                },
            ),
        ];
        for (req, expected) in cases {
            assert_eq!(fed.remove(&req).unwrap_err(), expected, "{req:?}");
            assert_eq!(fed.to_bytes().unwrap(), with_pending, "{req:?}");
        }
        // Another client's request: both are served in one round.
        let report = fed
            .remove(&RemovalRequest::points(ClientId(2), vec![PointId(0)]))
            .unwrap();
        assert!(!report.lone_update);
        assert_eq!(report.updated_clients, vec![c0, ClientId(2)]);
        assert!(fed.pending().is_empty());
    }
}

fn col(v: &[f64]) -> Dataset {
    Dataset::new(DMatrix::from_column_slice(1, v.len(), v)).unwrap()
}

#[test]
fn invalid_federations_are_refused_with_clear_errors() {
    let ok = col(&[0.0, 0.1, 0.2, -0.3]);
    // Fewer clients than the minimum aggregate (docs/threat-model.md P4),
    // once the data is valid: refused, naming the numbers and the way out.
    // A fixed client k (the adaptive default never asks a client for more
    // clusters than it has distinct points: see below).
    let strict = FederationConfig::new(2)
        .client_k(2)
        .gamma(0.1)
        .validate()
        .unwrap();
    let two = vec![ok.clone(), col(&[0.3, -0.1, 0.2])];
    let err = Federation::new(two.clone(), &strict).unwrap_err();
    assert_eq!(
        err,
        MufcError::TooFewClients {
            clients: 2,
            min_clients: 3
        }
    );
    assert!(
        err.to_string().contains("FederationConfig::min_clients(2)"),
        "{err}"
    );
    assert!(err.to_string().contains("--min-clients 2"), "{err}");
    assert!(matches!(
        FederationConfig::new(2).min_clients(0).validate(),
        Err(MufcError::InvalidConfig {
            param: mufc::ConfigParam::MinClients,
            ..
        })
    ));
    assert!(matches!(
        FederationConfig::new(2).min_updating_clients(0).validate(),
        Err(MufcError::InvalidConfig {
            param: mufc::ConfigParam::MinUpdatingClients,
            ..
        })
    ));
    // The data errors, on federations of one and two clients.
    let k2 = strict.into_builder().min_clients(1).validate().unwrap();
    assert!(Federation::new(two, &k2).is_ok());
    let cases: Vec<(Vec<(ClientId, Dataset)>, MufcError)> = vec![
        (vec![], MufcError::NoClients),
        (
            vec![(ClientId(4), ok.clone()), (ClientId(4), ok.clone())],
            MufcError::DuplicateClient(ClientId(4)),
        ),
        (
            vec![
                (ClientId(0), ok.clone()),
                (ClientId(1), Dataset::empty(1).unwrap()),
            ],
            MufcError::EmptyClient(ClientId(1)),
        ),
        (
            vec![
                (ClientId(0), ok.clone()),
                (
                    ClientId(1),
                    Dataset::new(DMatrix::from_column_slice(2, 2, &[0.0, 0.1, 0.2, 0.3])).unwrap(),
                ),
            ],
            MufcError::DimensionMismatch {
                client: ClientId(1),
                expected: 1,
                found: 2,
            },
        ),
        (
            vec![
                (ClientId(0), ok.clone()),
                (ClientId(3), col(&[0.25, 0.25, 0.25])),
            ],
            MufcError::TooFewDistinctPoints {
                client: ClientId(3),
                k: 2,
                distinct: 1,
            },
        ),
        (
            vec![
                (ClientId(0), ok.clone()),
                (ClientId(5), col(&[0.0, 0.1, 0.7])),
            ],
            MufcError::OutsideBox {
                client: ClientId(5),
                id: PointId(2),
                axis: 0,
                value: 0.7,
            },
        ),
    ];
    for (clients, expected) in cases {
        assert_eq!(Federation::with_ids(clients, &k2).unwrap_err(), expected);
    }
    // Few distinct points are accepted on request: the client then finds
    // fewer clusters.
    let lenient = k2
        .clone()
        .into_builder()
        .allow_fewer_distinct(true)
        .validate()
        .unwrap();
    let fed = Federation::new(vec![ok.clone(), col(&[0.25, 0.25, 0.25])], &lenient).unwrap();
    assert_eq!(fed.client(ClientId(1)).unwrap().num_centroids(), 1);
    // So is the adaptive client k, which follows the data.
    let adaptive = FederationConfig::new(2)
        .gamma(0.1)
        .min_clients(1)
        .validate()
        .unwrap();
    let fed = Federation::new(vec![ok.clone(), col(&[0.25, 0.25, 0.25])], &adaptive).unwrap();
    assert_eq!(fed.client(ClientId(1)).unwrap().num_centroids(), 1);
    // The plain mode does not quantize, so the box does not apply; the
    // fixed-point range of the exact K-means does.
    let plain = k2
        .clone()
        .into_builder()
        .channel(Channel::Plain)
        .validate()
        .unwrap();
    assert!(Federation::new(vec![col(&[0.0, 3.0, 7.0])], &plain).is_ok());
    assert!(matches!(
        Federation::new(vec![col(&[0.0, 1e6, 7.0])], &plain),
        Err(MufcError::Seeding(_))
    ));
    // More points than the configured bound.
    let bounded = k2.into_builder().max_points(3).validate().unwrap();
    assert!(matches!(
        Federation::new(vec![ok], &bounded),
        Err(MufcError::InvalidConfig {
            param: mufc::ConfigParam::MaxPoints,
            ..
        })
    ));
}

#[test]
fn invalid_configurations_are_refused() {
    let bad = [
        (FederationConfig::new(0), "k"),
        (FederationConfig::new(2).client_k(0), "client_k"),
        (FederationConfig::new(2).gamma(0.0), "gamma"),
        (FederationConfig::new(2).gamma(f64::NAN), "gamma"),
        (FederationConfig::new(2).tolerance(-1.0), "tolerance"),
        (
            FederationConfig::new(2).client_tolerance(f64::INFINITY),
            "client_tolerance",
        ),
        (FederationConfig::new(2).max_iterations(0), "max_iterations"),
        (FederationConfig::new(2).restarts(0), "restarts"),
        (FederationConfig::new(2).max_points(0), "max_points"),
    ];
    for (c, name) in bad {
        match c.validate() {
            Err(MufcError::InvalidConfig { param, .. }) => assert_eq!(param.name(), name),
            other => panic!("{name}: {other:?}"),
        }
    }
}
