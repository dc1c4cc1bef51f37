//! The parties' rounds against the federation run in one process, beyond
//! the removals of `parties.rs`: SecAgg's simulated dropouts, the costs
//! and the fit report the driver measures, and the withdrawal of a model
//! whose clients left below the minimum aggregate. Strategies are drawn
//! from `testdata::rng` and named in every failure.

use super::parties::{
    SOURCES, TOPOLOGIES, assert_same_nodes, assert_same_report, draw_request, trained_both,
};
use super::*;
use mufc::remote::InProcess;
use mufc::{RemovalRequest, Topology};
use std::time::Duration;

/// SecAgg with the configuration's dropout rate simulated: the parties in
/// one process drop the clients `Federation` drops, at the same steps (a
/// client offline from a step neither hears nor answers it), so every
/// round includes the same clients and leaves every node equal to the
/// federation's, flat and with groups, through training and a random
/// sequence of removals. The rate, the seed and the requests are drawn,
/// and named in every failure.
#[test]
fn the_parties_drop_out_where_the_federation_does() {
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
            let Ok(mut parties) = InProcess::train(data.clone(), &config) else {
                // Too many dropouts for a group's threshold: the
                // federation fails alike.
                assert!(Federation::with_ids(data, &config).is_err(), "{what}");
                continue;
            };
            let resolved = parties.server().setup().config().clone();
            let mut fed = Federation::with_ids(data, &resolved).unwrap();
            assert_same_nodes(&parties, &fed, &format!("{what}: training"));
            let mut whole_left = false;
            for _ in 0..4 {
                let Some(request) = draw_request(&mut rng, &parties, &mut whole_left, &mut what)
                else {
                    continue;
                };
                let (ours, theirs) = (parties.remove(&request), fed.remove(&request));
                match (ours, theirs) {
                    (Ok(ours), Ok(report)) => {
                        assert_same_report(&ours, &report, &what);
                        let reports = parties.last_rounds();
                        let included: BTreeSet<ClientId> = reports
                            .iter()
                            .flat_map(|r| r.report.included.clone())
                            .collect();
                        // With groups the federation's report names the
                        // included clients of every group: those of the
                        // groups that ran a round are the rounds'.
                        let ran: BTreeSet<ClientId> = (reports.iter())
                            .flat_map(|r| match r.report.group {
                                Some(g) => parties.server().groups()[g].clone(),
                                None => parties.server().setup().roster().to_vec(),
                            })
                            .collect();
                        let theirs: BTreeSet<ClientId> = (report.included.iter().copied())
                            .filter(|c| ran.contains(c))
                            .collect();
                        assert_eq!(included, theirs, "{what}");
                        dropped += reports
                            .iter()
                            .map(|r| r.report.dropped.len())
                            .sum::<usize>();
                    }
                    // Too many dropouts in a round: both fail. The
                    // federation in one process undoes the request; the
                    // parties' clients have forgotten, and the request
                    // waits for the next round.
                    (Err(a), Err(b)) => {
                        assert_eq!(a.to_string(), b.to_string(), "{what}");
                        let number = fed.applied_requests() + 1;
                        let waits = parties.pending().iter().any(|p| p.number == number);
                        assert!(waits, "{what}: {:?}", parties.pending());
                        for (c, ids) in request.point_entries() {
                            let held = parties.clients()[at(*c)].data();
                            assert!(ids.iter().all(|id| !held.contains(*id)), "{what}");
                        }
                        failed += 1;
                        break;
                    }
                    (a, b) => panic!("{what}: parties {a:?}, federation {b:?}"),
                }
                assert_same_nodes(&parties, &fed, &what);
            }
        }
    }
    // Clients did drop out: the comparison saw rounds without them.
    // The draw brings dropouts and a round they fail: neither side of
    // the comparison goes untested.
    assert!(
        dropped >= 3 && failed >= 1,
        "{dropped} dropouts, {failed} failed rounds"
    );
}

/// What the driver counts of the clients' side of a round is what the
/// federation in one process reports: the messages the clients sent the
/// server and their bytes, for every mask source, in training and in the
/// removal rounds (change rounds among them); and every member's join
/// was timed.
#[test]
fn the_driver_counts_the_messages_and_bytes_the_federation_reports() {
    for masks in SOURCES {
        let data = with_ids(&gaussian_clients("parties-costs", Mixture::SMALL));
        let config = FederationConfig::new(2)
            .channel(Channel::scma(masks()))
            .min_updating_clients(1)
            .seed(6)
            .validate()
            .unwrap();
        let (mut parties, mut fed) = trained_both(&data, &config);
        let what = format!("{:?}", masks());
        let [training] = parties.training() else {
            panic!("{what}: one training round when flat");
        };
        let members = parties.clients().len();
        let costs = &training.costs;
        assert_eq!(costs.joins.len(), members, "{what}");
        assert_eq!(
            costs.bytes_up / members as u64,
            fed.fit_report().bytes_per_client as u64,
            "{what}: training"
        );
        for (c, point) in [(1, 3), (2, 0), (1, 5)] {
            let request = RemovalRequest::points(ClientId(c), vec![PointId(point)]);
            let ours = parties.remove(&request).unwrap();
            let report = fed.remove(&request).unwrap();
            assert_same_report(&ours, &report, &what);
            let [round] = parties.last_rounds() else {
                panic!("{what}: one round per request");
            };
            let involved = fed.last_involvement().unwrap();
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
            let t = &ours.times;
            let unlearned = t.client_max > Duration::ZERO && t.client_sum >= t.client_max;
            let joined = t.encode_mask_max > Duration::ZERO && t.client_round_max >= t.client_max;
            let served = t.sum > Duration::ZERO && t.decode > Duration::ZERO;
            let within = t.wall >= t.sum + t.decode + t.server;
            assert!(unlearned && joined && served && within, "{what}: {t:?}");
        }
    }
}

/// A client removed whole that leaves fewer than `min_clients` clients
/// with points (in its group, with groups) withdraws the model in both,
/// alike, for every mask source and topology; the next request is served
/// by the clients alone, with no round, in both.
#[test]
fn a_client_leaving_below_the_minimum_withdraws_the_model_in_both() {
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
            let (mut parties, mut fed) = trained_both(&data, &config);
            let rounds = parties.server().rounds();
            let leave = RemovalRequest::clients(vec![ClientId(1)]);
            let report = fed.remove(&leave).unwrap();
            assert!(report.outcome.is_withdrawn(), "{what}");
            assert_same_report(&parties.remove(&leave).unwrap(), &report, &what);
            assert!(parties.last_rounds().is_empty(), "{what}");
            assert_eq!(parties.withdrawal(), fed.withdrawal(), "{what}");
            assert!(parties.server().is_withdrawn(), "{what}");
            assert_same_nodes(&parties, &fed, &what);
            let later = RemovalRequest::points(ClientId(2), vec![PointId(0)]);
            let report = fed.remove(&later).unwrap();
            assert_same_report(&parties.remove(&later).unwrap(), &report, &what);
            assert!(parties.last_rounds().is_empty(), "{what}");
            assert_eq!(parties.server().rounds(), rounds, "{what}: no round ran");
            assert!(!parties.clients()[2].data().contains(PointId(0)), "{what}");
            assert!(parties.server().snapshot().is_err(), "{what}");
        }
    }
}

/// The parties' fit report is the federation's: the aggregate, the
/// sketch, the server's points, the clients of the model and the bytes a
/// client sent, for every mask source and topology; and the driver timed
/// the clients' training and encoding.
#[test]
fn the_parties_fit_report_is_the_federations() {
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
            let (parties, fed) = trained_both(&data, &config);
            let (mine, theirs) = (parties.fit_report().unwrap(), fed.fit_report());
            assert_eq!(mine.nonzero_bins, theirs.nonzero_bins, "{what}");
            assert_eq!(mine.sketch, theirs.sketch, "{what}");
            assert_eq!(mine.server_points, theirs.server_points, "{what}");
            assert_eq!(mine.included, theirs.included, "{what}");
            assert_eq!(mine.dropped, theirs.dropped, "{what}");
            assert_eq!(mine.bytes_per_client, theirs.bytes_per_client, "{what}");
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
