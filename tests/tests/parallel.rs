//! Clients in parallel or one after the other: the same federation, bit
//! for bit, after training and after every removal.
#![allow(clippy::unwrap_used)]

use mufc::{
    Channel, ClientId, ClientTraining, Federation, FederationConfig, Masks, RemovalRequest,
    SecAggOptions,
};
use mufc_testkit::{compare, untimed};
use seeding::PointId;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};

#[test]
fn parallel_and_serial_clients_give_the_same_bits() {
    let mix = Mixture {
        clients: 16,
        per_client: 80,
        dim: 3,
        clusters: 4,
        k_prime: 2,
        spread: 0.2,
        sigma: 0.1,
    };
    let data = gaussian_clients("parallel", mix);
    let base = || FederationConfig::new(4).client_k(2);
    let configs = [
        base(),
        base().client_training(ClientTraining::Full),
        // Dropouts are drawn from names, not from the order of work.
        base().channel(Channel::scma(Masks::SecAgg(
            SecAggOptions::new().dropout(0.2),
        ))),
    ];
    for config in configs {
        let mut par = Federation::new(data.clone(), &config.clone().validate().unwrap()).unwrap();
        let mut ser = Federation::new(
            data.clone(),
            &config
                .run(mufc::RunOptions::new().parallel(false))
                .validate()
                .unwrap(),
        )
        .unwrap();
        compare(&par, &ser).unwrap();
        let requests = [
            RemovalRequest::points(ClientId(3), vec![PointId(1), PointId(2)])
                .with_points(ClientId(9), vec![PointId(7)]),
            RemovalRequest::clients(vec![ClientId(0), ClientId(15)]),
            RemovalRequest::points(
                ClientId(5),
                par.client(ClientId(5)).unwrap().seed_ids().to_vec(),
            ),
        ];
        for req in requests {
            let a = par.remove(&req).unwrap();
            let b = ser.remove(&req).unwrap();
            assert_eq!(untimed(&a), untimed(&b));
            compare(&par, &ser).unwrap();
        }
    }
}
