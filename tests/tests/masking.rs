//! The server never sees a plaintext sketch: every message it receives is
//! masked (each element differs from the client's plaintext syndrome), the
//! masks are fresh in every round, and the masked messages still sum to
//! the sketch of the plain sum, or in a removal's change round to the
//! sketch of the change of the plain sum (docs/threat-model.md C2, U4, P3
//! in spirit).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use syndrome_agg::RawSketch;

use field::Fp64;
use mufc::{Channel, ClientId, Federation, FederationConfig, Masks, RemovalRequest};
use mufc_testkit::plain_sum;
use num_bigint::BigUint;
use seeding_testkit::mixtures::{Mixture, gaussian_clients};
use syndrome_agg::wire::{DEFAULT_MAX_FRAME, Frame};
use syndrome_agg::{Aggregator, CountPolicy, MaskedSketch, Sketch, SketchParams};

const MIX: Mixture = Mixture {
    clients: 6,
    per_client: 40,
    dim: 3,
    clusters: 3,
    k_prime: 2,
    spread: 0.2,
    sigma: 0.1,
};

/// The messages of the last round, parsed, by client.
fn received(
    fed: &Federation,
    params: &syndrome_agg::ValidSketchParams<Fp64>,
) -> BTreeMap<ClientId, MaskedSketch<Sketch<Fp64>>> {
    fed.last_messages()
        .unwrap()
        .iter()
        .map(|(id, bytes)| {
            let frame = Frame::parse(bytes, DEFAULT_MAX_FRAME).unwrap();
            let m = MaskedSketch::from_frame(&frame, params).unwrap();
            assert_eq!(m.client_id(), id.0);
            (*id, m)
        })
        .collect()
}

fn plaintext(
    fed: &Federation,
    id: ClientId,
    params: &syndrome_agg::ValidSketchParams<Fp64>,
) -> Sketch<Fp64> {
    let h = fed.client(id).unwrap().histogram().iter().cloned();
    Sketch::from_unsigned(params, h).unwrap()
}

type Histograms = BTreeMap<ClientId, Vec<(BigUint, u64)>>;

fn histograms(fed: &Federation) -> Histograms {
    fed.clients()
        .iter()
        .map(|c| (c.id(), c.histogram().to_vec()))
        .collect()
}

/// The sketch of client `id`'s change from `before` to now.
fn plain_change(
    fed: &Federation,
    before: &Histograms,
    id: ClientId,
    params: &syndrome_agg::ValidSketchParams<Fp64>,
) -> Sketch<Fp64> {
    let mut change: BTreeMap<BigUint, i64> = BTreeMap::new();
    for (b, c) in &before[&id] {
        *change.entry(b.clone()).or_default() -= i64::try_from(*c).unwrap();
    }
    for (b, c) in fed.client(id).unwrap().histogram() {
        *change.entry(b.clone()).or_default() += i64::try_from(*c).unwrap();
    }
    Sketch::from_signed(params, change.into_iter().filter(|(_, c)| *c != 0)).unwrap()
}

#[test]
fn the_server_sees_only_masked_sketches_that_sum_to_the_plain_sum() {
    for masking in [Masks::Dealer, Masks::Pairwise] {
        let config = FederationConfig::new(3)
            .client_k(2)
            .channel(Channel::scma(masking))
            .run(mufc::RunOptions::new().record_messages(true))
            .validate()
            .unwrap();
        let mut fed = Federation::new(gaussian_clients("masking", MIX), &config).unwrap();
        let info = fed.fit_report().sketch.clone().unwrap();
        assert_eq!(info.modulus_bits, 64);
        let max_points = fed.config().max_points().unwrap();
        let params = SketchParams::new(info.capacity, fed.quantizer().unwrap().num_bins().clone())
            .with_extra(fed.config().channel().as_scma().unwrap().extra())
            .with_counts(CountPolicy::unsigned(max_points))
            .validate(Fp64::proth())
            .unwrap();
        // A removal that keeps every client sends changes: two clients
        // update, so t' = 2 k 2 = 8, with signed counts.
        let change_params = SketchParams::new(8, fed.quantizer().unwrap().num_bins().clone())
            .with_extra(fed.config().channel().as_scma().unwrap().extra())
            .with_counts(CountPolicy::signed(max_points))
            .validate(Fp64::proth())
            .unwrap();
        let f = Fp64::proth();
        let mut previous: Option<BTreeMap<ClientId, MaskedSketch<Sketch<Fp64>>>> = None;
        let mut before: Option<(Histograms, BTreeMap<BigUint, u64>)> = None;
        for round in 0..3u64 {
            let p = if round == 0 { &params } else { &change_params };
            let msgs = received(&fed, p);
            // With dealt masks the server also receives the dealer's
            // correction (the pseudo-client u64::MAX): it sums it with the
            // clients' messages.
            let correction = ClientId(u64::MAX);
            let dealt = matches!(masking, Masks::Dealer);
            assert_eq!(msgs.contains_key(&correction), dealt);
            assert_eq!(msgs.len(), fed.clients().len() + usize::from(dealt));
            let mut server = Aggregator::new(p, *msgs.values().next().unwrap().context(), 1);
            for (id, m) in &msgs {
                assert_eq!(m.context().round, round);
                if *id == correction {
                    server.accept(m).unwrap();
                    continue;
                }
                let plain = match &before {
                    None => plaintext(&fed, *id, p),
                    Some((h, _)) => plain_change(&fed, h, *id, p),
                };
                // Every element is masked (equality has probability 1/p),
                // a client that did not change included.
                for (a, b) in m.elements().iter().zip(plain.elements().iter()) {
                    assert_ne!(a, b, "client {id}: an unmasked syndrome");
                }
                server.accept(m).unwrap();
            }
            let decoded = server.decode().unwrap();
            match &before {
                None => {
                    let sum: BTreeMap<BigUint, u64> = decoded
                        .to_unsigned(&f)
                        .into_iter()
                        .map(|(k, c)| (k, u64::try_from(c).unwrap()))
                        .collect();
                    assert_eq!(sum, plain_sum(&fed));
                }
                Some((_, counts)) => {
                    // The sum of the changes moves the last counts to the
                    // plain sum of now.
                    let mut now = counts.clone();
                    for (k, c) in decoded.to_signed(&f) {
                        let e = now.entry(k).or_default();
                        *e = u64::try_from(i128::from(*e) + i128::try_from(c).unwrap()).unwrap();
                    }
                    now.retain(|_, c| *c != 0);
                    assert_eq!(now, plain_sum(&fed));
                }
            }
            assert_eq!(&plain_sum(&fed), fed.server().counts());
            // Fresh masks: a client whose histogram did not change sends
            // another message in the next round.
            if let Some(prev) = &previous
                && round > 1
            {
                let quiet = ClientId(4);
                assert_ne!(prev[&quiet].elements(), msgs[&quiet].elements());
            }
            previous = Some(msgs);
            before = Some((histograms(&fed), fed.server().counts().clone()));
            // Two clients update (a lone update would wait,
            // docs/threat-model.md U3); client 4 never does.
            let (c, d) = (ClientId(round), ClientId(5));
            let id = |c: ClientId| vec![fed.client(c).unwrap().data().id(0)];
            let report = fed
                .remove(&RemovalRequest::points(c, id(c)).with_points(d, id(d)))
                .unwrap();
            assert!(!report.outcome.is_deferred());
        }
    }
}
