//! Sketches carried by the dropout-tolerant protocol of `masked-sum`
//! (threat-model case R2, docs/threat-model.md §9): a masked sketch
//! replayed into the next round is refused by its header, and forced in
//! with a rewritten header its masks do not cancel, so the sum's sketch
//! does not decode: the decoder refuses rather than answer a wrong
//! histogram. The protocol's own cases are `masked-sum`'s tests.
#![allow(clippy::unwrap_used)]
// Client ids and counts in these tests are tiny: the casts are exact.
#![allow(clippy::cast_possible_truncation)]

use field::Mersenne61;
use sum_testkit::secagg::{Harness, all_but, config, oracle, run};
use syndrome_agg::secagg::messages::ClientEnvelope;
use syndrome_agg::secagg::params::{GraphChoice, SecAggParams, ServerModel};
use syndrome_agg::secagg::transport::Faults;
use syndrome_agg::secagg::{ClientId, DEFAULT_MAX_MESSAGE, SessionConfig, Step};
use syndrome_agg::{LinearSketch, ProtocolError, Sketch, SketchError, SketchParams};

/// Complete-graph parameters with threshold `t`, no colluders, a
/// semi-honest server.
fn complete(t: usize) -> SecAggParams {
    SecAggParams::new(GraphChoice::Complete, t, 0, ServerModel::SemiHonest)
}

#[test]
fn r2_cross_round_replay() {
    let f = Mersenne61;
    let n = 4u64;
    let sp = SketchParams::new(4, 1000u32).validate(f).unwrap();
    let ins: Vec<(ClientId, Vec<u64>)> = (1..=n)
        .map(|c| {
            (
                c,
                Sketch::from_unsigned(&sp, [(c as u32 * 10, c)])
                    .unwrap()
                    .elements()
                    .to_vec(),
            )
        })
        .collect();
    let len = sp.num_syndromes();
    let cfg0 = config(&f, n, complete(3), len, "r2");
    let cfg1 = std::sync::Arc::new(
        SessionConfig::new(
            f,
            cfg0.context().next(),
            cfg0.graph().clone(),
            *cfg0.params(),
            len,
        )
        .unwrap(),
    );
    // Round 0, recorded.
    let r0 = run(&cfg0, &ins, Faults::new(), "r2-0");
    let (_, _, old) = r0
        .transcript
        .as_ref()
        .unwrap()
        .to_server
        .iter()
        .find(|(s, c, _)| *s == Step::MaskedInput && *c == 2)
        .unwrap()
        .clone();
    // Replayed into round 1: refused by its header.
    let r1 = run(
        &cfg1,
        &ins,
        Faults::new().inject(Step::MaskedInput, old.clone()),
        "r2-1",
    );
    assert!(r1.server_rejections.iter().any(|(c, e)| *c == 2
        && matches!(
            SketchError::from(e.clone()),
            SketchError::Protocol(ProtocolError::MessageRejected { .. })
        )));
    let out = r1.output.unwrap();
    assert_eq!(out.sum, oracle(&f, &ins, &all_but(n, &[])));
    assert!(
        Sketch::from_elements(&sp, out.sum)
            .unwrap()
            .decode()
            .is_ok()
    );
    // Forced in with a rewritten header, the masks do not cancel and the
    // sum does not decode.
    let mut h = Harness::new(cfg1.clone(), &ins, "r2-forced");
    let dir = h.step(&[]);
    assert!(h.answer(&dir).is_empty());
    let req = h.step(&[]);
    assert!(h.answer(&req).is_empty());
    let mut forged = ClientEnvelope::parse(&old, DEFAULT_MAX_MESSAGE).unwrap();
    forged.round = cfg1.context().round;
    for m in h.pending.iter_mut().filter(|m| m.client == 2) {
        *m = forged.clone();
    }
    let out = h.complete().unwrap();
    assert_ne!(out.sum, oracle(&f, &ins, &all_but(n, &[])));
    assert!(
        Sketch::from_elements(&sp, out.sum)
            .unwrap()
            .decode()
            .is_err()
    );
}
