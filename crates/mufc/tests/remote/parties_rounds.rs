//! The parties' rounds beyond the removals of `parties.rs`: SecAgg's
//! simulated dropouts (every node equals retraining on the clients its
//! model holds), the costs and the fit report the driver measures, and
//! the withdrawal of a model whose clients left below the minimum
//! aggregate. Strategies are drawn from `testdata::rng` and named in
//! every failure.

use super::parties::{
    SOURCES, TOPOLOGIES, apply, assert_nodes_equal_retraining, assert_report_holds, draw_request,
    serve,
};
use super::*;
use mufc::remote::InProcess;
use mufc::{RemovalRequest, Topology};
use std::time::Duration;

/// `rest` without the data of the clients that no group's model holds
/// (they dropped out of their group's last round): what retraining
/// must see.
fn held(parties: &InProcess, rest: &[(ClientId, Dataset)]) -> Vec<(ClientId, Dataset)> {
    let groups = parties.server().groups().len();
    let included: BTreeSet<ClientId> = (0..groups)
        .flat_map(|g| parties.server().included(g))
        .collect();
    (rest.iter())
        .map(|(c, d)| match included.contains(c) {
            true => (*c, d.clone()),
            false => (*c, d.without(d.ids()).unwrap()),
        })
        .collect()
}

/// SecAgg with the configuration's dropout rate simulated (a client
/// offline from a step neither hears nor answers it): each round
/// includes the clients that stayed, and every node then equals
/// retraining on the data of the clients its model holds, flat and with
/// groups, through training and a random sequence of removals. A round
/// that loses too many clients fails, keeps the clients' erasure, and
/// leaves the request pending. The rate, the seed and the requests are
/// drawn, and named in every failure.
#[test]
fn the_parties_dropouts_leave_the_model_of_the_clients_that_stayed() {
    let mut rng = testdata::rng("parties-dropouts");
    let (mut dropped, mut failed) = (0, 0);
    for topology in [Topology::Flat, Topology::Groups { size: 4 }] {
        for _ in 0..2 {
            let mix = Mixture {
                clients: 8,
                per_client: rng.random_range(15..=25),
                ..Mixture::SMALL
            };
            let seed = rng.random_range(0..1000);
            let rate = rng.random_range(0.1..0.3);
            let secagg = SecAggOptions::new().dropout(rate);
            let mut what = format!("{topology:?}, seed {seed}, dropout {rate}");
            let data = with_ids(&gaussian_clients(&format!("dropouts-{seed}"), mix));
            let config = FederationConfig::new(2)
                .client_k(2)
                .channel(Channel::scma(Masks::SecAgg(secagg)))
                .topology(topology)
                .min_updating_clients(1)
                .seed(seed)
                .validate()
                .unwrap();
            let mut parties = match InProcess::train(data.clone(), &config) {
                Ok(parties) => parties,
                Err(MufcError::TooManyDropouts { .. }) => continue,
                Err(e) => panic!("{what}: {e}"),
            };
            let training = parties.training().iter();
            dropped += training.map(|r| r.report.dropped.len()).sum::<usize>();
            assert_nodes_equal_retraining(&parties, &held(&parties, &data), &what);
            let mut rest = data;
            let (mut whole_left, mut asked) = (false, 0);
            for _ in 0..4 {
                let Some(request) = draw_request(&mut rng, &parties, &mut whole_left, &mut what)
                else {
                    continue;
                };
                apply(&mut rest, &request);
                asked += 1;
                match parties.remove(&request) {
                    Ok(report) => {
                        assert_report_holds(&report, &parties, &what);
                        let rounds = parties.last_rounds().iter();
                        dropped += rounds.map(|r| r.report.dropped.len()).sum::<usize>();
                        assert_nodes_equal_retraining(&parties, &held(&parties, &rest), &what);
                    }
                    // Too many dropouts in a round: the clients have
                    // forgotten, and the request waits for the next round.
                    Err(MufcError::TooManyDropouts { .. }) => {
                        let waits = parties.pending().iter().any(|p| p.number == asked);
                        assert!(waits, "{what}: {:?}", parties.pending());
                        for (c, ids) in request.point_entries() {
                            let held = parties.clients()[at(*c)].data();
                            assert!(ids.iter().all(|id| !held.contains(*id)), "{what}");
                        }
                        failed += 1;
                        break;
                    }
                    Err(e) => panic!("{what}: {e}"),
                }
            }
        }
    }
    // Clients did drop out, and a round failed: neither side of the
    // test goes untested.
    assert!(
        dropped >= 3 && failed >= 1,
        "{dropped} dropouts, {failed} failed rounds"
    );
}

/// What the driver counts of the clients' side of a round is what the
/// parties report: the messages the clients sent the server and their
/// bytes, for every mask source, in training and in the removal rounds
/// (change rounds among them); and every member's join was timed.
#[test]
fn the_driver_counts_the_messages_and_bytes_the_report_gives() {
    for masks in SOURCES {
        let data = with_ids(&gaussian_clients("parties-costs", Mixture::SMALL));
        let config = FederationConfig::new(2)
            .channel(Channel::scma(masks()))
            .min_updating_clients(1)
            .seed(6)
            .validate()
            .unwrap();
        let mut parties = InProcess::train(data, &config).unwrap();
        let what = format!("{:?}", masks());
        let [training] = parties.training() else {
            panic!("{what}: one training round when flat");
        };
        let members = parties.clients().len();
        let costs = &training.costs;
        assert_eq!(costs.joins.len(), members, "{what}");
        assert_eq!(
            costs.bytes_up / members as u64,
            parties.fit_report().unwrap().bytes_per_client as u64,
            "{what}: training"
        );
        for (c, point) in [(1, 3), (2, 0), (1, 5)] {
            let request = RemovalRequest::points(ClientId(c), vec![PointId(point)]);
            let report = serve(&mut parties, &request, &what);
            let [round] = parties.last_rounds() else {
                panic!("{what}: one round per request");
            };
            let involved = parties.last_involvement().unwrap();
            assert_eq!(
                round.costs.messages, involved.messages,
                "{what}: {request:?}"
            );
            assert_eq!(
                round.costs.bytes_up / members as u64,
                report.bytes_per_client as u64,
                "{what}: {request:?}"
            );
            assert_eq!(round.report.decode, report.decode, "{what}: {request:?}");
            // The report's times are the round's, measured: the named
            // client's unlearning, every member's join, the server's
            // steps, all within the call.
            let t = &report.times;
            let unlearned = t.client_max > Duration::ZERO && t.client_sum >= t.client_max;
            let joined = t.encode_mask_max > Duration::ZERO && t.client_round_max >= t.client_max;
            let served = t.sum > Duration::ZERO && t.decode > Duration::ZERO;
            let within = t.wall >= t.sum + t.decode + t.server;
            assert!(unlearned && joined && served && within, "{what}: {t:?}");
        }
    }
}

/// A client removed whole that leaves fewer than `min_clients` clients
/// with points withdraws the model (with groups: a client of each of the
/// two groups, so that neither can take the other's clients), for every
/// mask source and topology; the next request is served by the clients
/// alone, with no round.
#[test]
fn a_client_leaving_below_the_minimum_withdraws_the_model() {
    for (s, masks) in SOURCES.iter().enumerate() {
        for topology in TOPOLOGIES {
            let clients = match topology {
                Topology::Flat => 3,
                _ => 6,
            };
            let mix = Mixture {
                clients,
                ..Mixture::SMALL
            };
            let what = format!("{:?}, {topology:?}", masks());
            let data = with_ids(&gaussian_clients(&format!("withdraw-{s}"), mix));
            let config = FederationConfig::new(2)
                .channel(Channel::scma(masks()))
                .topology(topology)
                .min_clients(3)
                .min_updating_clients(1)
                .seed(11)
                .validate()
                .unwrap();
            let mut parties = InProcess::train(data, &config).unwrap();
            let rounds = parties.server().rounds();
            let leaving = match topology {
                Topology::Flat => vec![ClientId(1)],
                _ => vec![ClientId(1), ClientId(4)],
            };
            let report = serve(&mut parties, &RemovalRequest::clients(leaving), &what);
            assert!(report.outcome.is_withdrawn(), "{what}");
            assert!(parties.last_rounds().is_empty(), "{what}");
            assert!(parties.withdrawal().is_some(), "{what}");
            assert!(parties.server().is_withdrawn(), "{what}");
            let later = RemovalRequest::points(ClientId(2), vec![PointId(0)]);
            serve(&mut parties, &later, &what);
            assert!(parties.last_rounds().is_empty(), "{what}");
            assert_eq!(parties.server().rounds(), rounds, "{what}: no round ran");
            assert!(!parties.clients()[2].data().contains(PointId(0)), "{what}");
            // The server's snapshot keeps the withdrawal: resumed, it
            // runs no round.
            let kept = parties.server().snapshot().unwrap();
            let roster = parties.server().setup().roster().to_vec();
            let resumed = RemoteServer::from_snapshot(kept, roster).unwrap();
            assert_eq!(resumed.withdrawal(), parties.withdrawal(), "{what}");
        }
    }
}

/// The parties' fit report: every client included and none dropped, the
/// bytes a client sent those the driver counted in the last round, and the driver timed
/// the clients' training and encoding, for every mask source and
/// topology.
#[test]
fn the_parties_fit_report_holds_what_the_driver_measured() {
    for (s, masks) in SOURCES.iter().enumerate() {
        for topology in TOPOLOGIES {
            let mix = Mixture {
                clients: 7,
                ..Mixture::SMALL
            };
            let what = format!("{:?}, {topology:?}", masks());
            let data = with_ids(&gaussian_clients(&format!("fit-report-{s}"), mix));
            let config = FederationConfig::new(2)
                .channel(Channel::scma(masks()))
                .topology(topology)
                .seed(13)
                .validate()
                .unwrap();
            let parties = InProcess::train(data.clone(), &config).unwrap();
            let mine = parties.fit_report().unwrap();
            let ids: Vec<ClientId> = data.iter().map(|(c, _)| *c).collect();
            assert_eq!(mine.included, ids, "{what}");
            assert!(mine.dropped.is_empty(), "{what}");
            assert!(mine.nonzero_bins > 0, "{what}");
            // The bytes a client sent: the last round's (with groups,
            // the last group's) over its members.
            let last = parties.training().last().unwrap();
            assert_eq!(
                last.costs.bytes_up / last.report.included.len() as u64,
                mine.bytes_per_client as u64,
                "{what}"
            );
            // The driver timed every party: the clients' training and
            // encoding, their later protocol steps, and the dealer.
            let t = &mine.times;
            assert!(t.client_sum > Duration::ZERO, "{what}: training");
            assert!(t.encode_mask_sum > Duration::ZERO, "{what}: encoding");
            assert!(t.protocol_client_sum > Duration::ZERO, "{what}: protocol");
            let dealt = matches!(masks(), Masks::Dealer);
            assert_eq!(t.offline > Duration::ZERO, dealt, "{what}: the dealer");
        }
    }
}
