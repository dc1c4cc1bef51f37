//! docs/threat-model.md M6: the bodies of the `syndrome-agg` fuzz targets (the sketches', the
//! protocol's are `masked-sum`'s), replayed on
//! stable Rust over deterministic pseudo-random inputs.

use sagg_testkit::fuzz::replay;
use sagg_testkit::sagg::fuzz;

#[test]
fn m6_sketch_decode() {
    replay("sagg_sketch_decode", 400, 160, fuzz::sketch_decode);
}

#[test]
fn m6_integer_decode() {
    replay("sagg_integer_decode", 300, 96, fuzz::integer_decode);
}

#[test]
fn m6_wide_decode() {
    replay("sagg_wide_decode", 300, 256, fuzz::wide_decode);
}

#[test]
fn m6_partitioned_decode() {
    replay(
        "sagg_partitioned_decode",
        300,
        256,
        fuzz::partitioned_decode,
    );
}

/// Few inputs: each builds and decodes a sketch just large enough for the
/// half-GCD, the remainder tree or the buckets' fast paths
/// (`sagg_testkit::sagg::fuzz_large::shapes`).
#[test]
fn m6_large_decode() {
    replay(
        "sagg_large_decode",
        6,
        48,
        sagg_testkit::sagg::fuzz_large::large_decode,
    );
}

#[test]
fn m6_frame_parse() {
    replay("sagg_frame_parse", 400, 256, fuzz::frame_parse);
}
