//! The plain mode (Algorithm 5) as parties: against retraining, and a
//! client that refuses to send its centroids in the clear unless its
//! operator allowed it.

use super::parties::{apply, draw_request, serve};
use super::*;
use mufc::remote::InProcess;

/// The plain mode (Algorithm 5) as parties: every client sends its
/// centroids in the clear, and a removal's round carries the changed
/// clients' alone. Training and a random sequence of requests (points,
/// seeds, whole clients) leave the server's points and model equal to
/// retraining on what remains.
#[test]
fn the_plain_mode_as_parties_equals_retraining() {
    let mut rng = testdata::rng("parties-plain");
    let mut served = 0;
    for case in 0..3 {
        let mix = Mixture {
            clients: rng.random_range(4..=7),
            per_client: rng.random_range(15..=25),
            ..Mixture::SMALL
        };
        let seed = rng.random_range(0..1000);
        let mut what = format!("plain, case {case}, seed {seed}");
        let data = with_ids(&gaussian_clients(&format!("plain-{seed}"), mix));
        let config = FederationConfig::new(2)
            .client_k(2)
            .channel(Channel::Plain)
            .seed(seed)
            .validate()
            .unwrap();
        let mut parties = InProcess::train(data.clone(), &config).unwrap();
        let resolved = parties.server().setup().config().clone();
        let mut rest = data;
        let mut whole_left = true;
        for _ in 0..3 {
            let Some(request) = draw_request(&mut rng, &parties, &mut whole_left, &mut what) else {
                continue;
            };
            let report = serve(&mut parties, &request, &what);
            assert_eq!(
                report.outcome.is_withdrawn(),
                parties.withdrawal().is_some()
            );
            if parties.withdrawal().is_some() {
                break;
            }
            // One round, of the clients the request names.
            let [round] = parties.last_rounds() else {
                panic!("{what}: {} rounds", parties.last_rounds().len());
            };
            let named: Vec<ClientId> = request
                .named()
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            assert_eq!(round.report.included, named, "{what}");
            apply(&mut rest, &request);
            served += 1;
            let remaining: Vec<(ClientId, Dataset)> = rest
                .iter()
                .filter(|(_, d)| !d.is_empty())
                .cloned()
                .collect();
            let retrained = InProcess::train(remaining, &resolved).unwrap();
            assert_same_plain(
                parties.server().server(),
                retrained.server().server(),
                &what,
            );
        }
    }
    assert!(served >= 5, "{served} requests");
}

/// The server's points (ids, coordinates and weights, bit for bit; in id
/// order: the server's exact K-means does not depend on their order) and
/// its centroids.
pub(super) fn assert_same_plain(a: &Server, b: &Server, what: &str) {
    let points = |d: &Dataset| {
        let mut all: Vec<(PointId, Vec<u64>, u64)> = (0..d.len())
            .map(|i| {
                let bits = d.point(i).iter().map(|x| x.to_bits()).collect();
                (d.id(i), bits, d.weight(i))
            })
            .collect();
        all.sort_unstable();
        all
    };
    assert_eq!(points(a.data()), points(b.data()), "{what}: points");
    assert_eq!(centroid_bits(a), centroid_bits(b), "{what}: centroids");
}

/// A client its operator did not allow the plain mode refuses a plain
/// round, whether the server announces the plain protocol in a masked
/// federation or sets the federation up in the plain mode: it sends
/// nothing in the clear. Allowed, it joins.
#[test]
fn a_server_cannot_make_a_client_send_its_centroids_in_the_clear() {
    let data = with_ids(&gaussian_clients("parties-plain-refused", Mixture::SMALL));
    let plain = FederationConfig::new(2)
        .channel(Channel::Plain)
        .seed(2)
        .validate()
        .unwrap();
    let regs = registrations(&data);
    let mut server = RemoteServer::new(RemoteSetup::new(&plain, &regs).unwrap()).unwrap();
    let ids: Vec<ClientId> = data.iter().map(|(id, _)| *id).collect();
    let (announcement, _) = server.start_round(&ids).unwrap();
    let (id, points) = data[0].clone();
    let mut client = RemoteClient::new(id, points.clone()).unwrap();
    let err = client.join(&announcement).unwrap_err();
    assert!(
        matches!(&err, MufcError::RoundRefused { reason, .. } if reason.contains("in the clear")),
        "{err}"
    );
    assert!(client.seeds().is_empty(), "it did not even train");
    // A masked setup with the plain protocol announced: refused too.
    let mut lying = announcement.clone();
    let masked = FederationConfig::new(2).seed(2).validate().unwrap();
    lying.setup = RemoteSetup::new(&masked, &regs).unwrap();
    assert!(matches!(
        client.join(&lying),
        Err(MufcError::RoundRefused { .. })
    ));
    // Allowed by its operator, it joins and sends its centroids.
    let mut allowed = RemoteClient::new(id, points).unwrap().allowing_plain();
    assert!(allowed.join(&announcement).is_ok());
}

/// Nor can a server make a client's masks, or the dealer's seeds,
/// predictable: a setup under `insecure_deterministic_masks` is refused by
/// a client or a dealer whose operator did not allow it, for every mask
/// source, before the client trains; allowed, they join and deal.
#[test]
fn a_server_cannot_make_the_masks_derive_from_the_seed() {
    let data = with_ids(&gaussian_clients("parties-deterministic", Mixture::SMALL));
    let regs = registrations(&data);
    let ids: Vec<ClientId> = data.iter().map(|(id, _)| *id).collect();
    let sources = [
        Masks::Dealer,
        Masks::Pairwise,
        Masks::SecAgg(SecAggOptions::new()),
    ];
    for masks in sources {
        let config = FederationConfig::new(2)
            .channel(Channel::scma(masks))
            .insecure_deterministic_masks(true)
            .seed(2)
            .validate()
            .unwrap();
        let setup = RemoteSetup::new(&config, &regs).unwrap();
        let mut server = RemoteServer::new(setup).unwrap();
        let (announcement, _) = server.start_round(&ids).unwrap();
        let (id, points) = data[0].clone();
        let mut client = RemoteClient::new(id, points.clone()).unwrap();
        let err = client.join(&announcement).unwrap_err();
        assert!(
            matches!(&err, MufcError::RoundRefused { reason, .. } if reason.contains("federation seed")),
            "{masks:?}: {err}"
        );
        assert!(
            client.seeds().is_empty(),
            "{masks:?}: it did not even train"
        );
        let mut allowed = RemoteClient::new(id, points)
            .unwrap()
            .allowing_deterministic_masks();
        if masks == Masks::Dealer {
            // The dealer refuses to deal for the round, whatever the
            // request: it checks the setup first.
            let own = syndrome_agg::masking::pairwise::MaskKeyPair::generate(&mut rand::rng());
            let key = syndrome_agg::masking::pairwise::MaskKeyPair::generate(&mut rand::rng());
            let keys = BTreeMap::from([(id, key.public_key())]);
            let mut dealer = RemoteDealer::new(&own, &keys).unwrap();
            let err = dealer.deal(&announcement, &[]).unwrap_err();
            assert!(
                matches!(&err, MufcError::RoundRefused { reason, .. } if reason.contains("federation seed")),
                "{err}"
            );
            allowed.pair_with_dealer(&key, &own.public_key()).unwrap();
        }
        assert!(allowed.join(&announcement).is_ok(), "{masks:?}");
    }
}

/// What each client of `data` registers with (no survey: scale 1).
fn registrations(data: &[(ClientId, Dataset)]) -> Vec<Registration> {
    (data.iter())
        .map(|(id, d)| Registration {
            id: *id,
            points: d.len() as u64,
            dim: d.dim(),
            scale: 1,
        })
        .collect()
}
