//! The parties over every sketch scheme: the field sketch, the wide
//! field, the partitioned one and the integer ring, each with the mask
//! sources it takes, flat and with groups. Training and a random sequence
//! of removals leave every node equal to retraining once nothing waits.
//! The strategy is drawn from `testdata::rng` and named in every failure.

use super::parties::{apply, assert_nodes_equal_retraining, draw_request, serve};
use super::*;
use mufc::remote::InProcess;
use mufc::{RingMasks, Scma, Topology};

/// Every scheme with every mask source it takes.
fn schemes() -> Vec<(&'static str, Scma)> {
    let secagg = || Masks::SecAgg(SecAggOptions::new());
    vec![
        ("field, dealer", Scma::field(Masks::Dealer)),
        ("field, SecAgg", Scma::field(secagg())),
        ("wide, pairwise", Scma::wide(Masks::Pairwise)),
        ("wide, SecAgg", Scma::wide(secagg())),
        ("partitioned, dealer", Scma::partitioned(Masks::Dealer)),
        ("partitioned, pairwise", Scma::partitioned(Masks::Pairwise)),
        ("integer, pairwise", Scma::integer(RingMasks::Pairwise)),
        ("integer, dealer", Scma::integer(RingMasks::Dealer)),
    ]
}

#[test]
fn the_parties_equal_retraining_for_every_sketch_scheme() {
    let mut rng = testdata::rng("parties-sketches");
    let mut served = 0;
    for (name, scma) in schemes() {
        for topology in [Topology::Flat, Topology::Groups { size: 3 }] {
            let seed = rng.random_range(0..1000);
            let mut what = format!("{name}, {topology:?}, seed {seed}");
            let mix = Mixture {
                clients: 6,
                per_client: rng.random_range(15..=25),
                ..Mixture::SMALL
            };
            let data = with_ids(&gaussian_clients(&format!("sketches-{seed}"), mix));
            let config = FederationConfig::new(2)
                .client_k(2)
                .channel(Channel::Scma(scma.clone()))
                .topology(topology)
                .min_updating_clients(1)
                .min_clients(2)
                .seed(seed)
                .validate()
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let mut parties = InProcess::train(data.clone(), &config).unwrap();
            assert_nodes_equal_retraining(&parties, &data, &format!("{what}: training"));
            let mut rest = data;
            let mut whole_left = true;
            for _ in 0..3 {
                let Some(request) = draw_request(&mut rng, &parties, &mut whole_left, &mut what)
                else {
                    continue;
                };
                serve(&mut parties, &request, &what);
                apply(&mut rest, &request);
                served += 1;
                if parties.waiting().is_empty() && parties.withdrawal().is_none() {
                    assert_nodes_equal_retraining(&parties, &rest, &what);
                }
            }
        }
    }
    assert!(served >= 40, "{served} requests served");
}
