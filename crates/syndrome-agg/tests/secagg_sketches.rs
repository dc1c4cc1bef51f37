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
use sum_testkit::secagg::{all_but, cross_round_replay, oracle};
use syndrome_agg::RawSketch;
use syndrome_agg::{LinearSketch, Sketch, SketchParams};

/// R2 with sketches as the inputs: the replay is refused and the sum
/// decodes; forced in, the sum does not decode.
#[test]
fn r2_cross_round_replay() {
    let f = Mersenne61;
    let sp = SketchParams::new(4, 1000u32).validate(f).unwrap();
    let ins: Vec<(u64, Vec<u64>)> = (1..=4u64)
        .map(|c| {
            let sketch = Sketch::from_unsigned(&sp, [(c as u32 * 10, c)]).unwrap();
            (c, sketch.elements().to_vec())
        })
        .collect();
    let replay = cross_round_replay(&f, &ins, "r2");
    assert!(replay.refused);
    assert_eq!(replay.sum, oracle(&f, &ins, &all_but(4, &[])));
    assert!(
        Sketch::from_elements(&sp, replay.sum)
            .unwrap()
            .decode()
            .is_ok()
    );
    assert!(
        Sketch::from_elements(&sp, replay.forced)
            .unwrap()
            .decode()
            .is_err()
    );
}
