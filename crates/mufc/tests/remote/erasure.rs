//! An erasure that reaches a client while a round runs (issue 28, item
//! 1). Across processes an operator's request is applied at once, in the
//! middle of whatever round the client is in; that round carries the
//! points as they were at its join, and the next round must carry the
//! removal. The client kept the round's sketch paired with its *current*
//! histogram, so the next round found nothing changed and sent the old
//! points again: the clients held 157 points, the model counted 158.

use super::*;

/// Random clients forget a point before a round and random points
/// (sometimes a seed, sometimes all of theirs) at a random step of that
/// round: the round equals retraining on the points as they were at its
/// join, and the next round on the points that remain, bit for bit.
#[test]
fn a_point_forgotten_during_a_round_leaves_the_model_at_the_next() {
    let mut rng = testdata::rng("remote-erasure-mid-round");
    for case in 0..4 {
        let n = rng.random_range(3..=5usize);
        let mix = Mixture {
            clients: n,
            per_client: rng.random_range(12..=24),
            ..Mixture::SMALL
        };
        let (k, seed) = (rng.random_range(2..=3), rng.random_range(0..1000));
        let data = gaussian_clients(&format!("remote-erasure-mid-round-{case}"), mix);
        let (mut server, mut clients) = federation(&data, &config(k, 0.0, 3, seed));
        let mut held = with_ids(&data);
        run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
        assert_equals_retraining(&server, &held, &format!("case {case}: training"));

        for round in 0..3 {
            let what = format!("case {case}, removal round {round}");
            let when = draw_step(&mut rng);
            let many = rng.random_range(1..=2);
            let who = draw_clients(&mut rng, n, many);
            // Before the round each chosen client forgets one point, so
            // that the round carries a new sketch of theirs (an unchanged
            // sketch is not kept again, and hides the fault).
            for &c in &who {
                let d = &held[at(c)].1;
                if d.len() > 2 {
                    let id = d.ids()[rng.random_range(0..d.len())];
                    clients[at(c)].forget(&[id]).unwrap();
                    held[at(c)].1 = d.without(&[id]).unwrap();
                }
            }
            let at_join = held.clone();
            // Drawn before the round: which points each chosen client
            // forgets (a seed of its own now and then, all its points
            // once in a while).
            let mut plan = Vec::new();
            for c in who {
                let d = &held[at(c)].1;
                if d.is_empty() {
                    continue;
                }
                // Retraining needs three clients that hold points.
                let holding = held.iter().filter(|(_, d)| !d.is_empty()).count();
                let ids: Vec<PointId> = if holding - plan.len() > 3 && rng.random_bool(0.2) {
                    d.ids().to_vec()
                } else if rng.random_bool(0.3) {
                    let seeds = clients[at(c)].seeds();
                    match seeds.first() {
                        Some(s) => vec![*s],
                        None => vec![d.ids()[0]],
                    }
                } else {
                    vec![d.ids()[rng.random_range(0..d.len())]]
                };
                plan.push((c, ids));
            }
            let mut done = false;
            run_round_with(
                &mut server,
                &mut clients,
                &BTreeMap::new(),
                &mut |step, clients| {
                    if step == when && !done {
                        for (c, ids) in &plan {
                            clients[at(*c)].forget(ids).unwrap();
                        }
                        done = true;
                    }
                },
            )
            .unwrap();
            assert!(done, "{what}: the removal was applied (at {when})");
            assert_equals_retraining(&server, &at_join, &format!("{what}: the round in flight"));
            for (c, ids) in &plan {
                held[at(*c)].1 = held[at(*c)].1.without(ids).unwrap();
            }
            run_round(&mut server, &mut clients, &BTreeMap::new()).unwrap();
            assert_equals_retraining(
                &server,
                &held,
                &format!("{what}: the next round (removed at {when})"),
            );
        }
    }
}
