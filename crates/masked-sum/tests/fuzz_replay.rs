//! docs/threat-model.md M6: the bodies of the protocol's fuzz targets
//! (`fuzz/fuzz_targets/secagg_*.rs`), replayed on stable Rust over
//! deterministic pseudo-random inputs.

use sum_testkit::fuzz::replay;
use sum_testkit::secagg;

#[test]
fn m6_secagg_client_envelope() {
    replay(
        "secagg_client_envelope",
        120,
        64,
        secagg::fuzz_client_envelope,
    );
}

#[test]
fn m6_secagg_server_envelope() {
    replay(
        "secagg_server_envelope",
        120,
        64,
        secagg::fuzz_server_envelope,
    );
}

#[test]
fn m6_secagg_server_receive() {
    replay(
        "secagg_server_receive",
        200,
        512,
        secagg::fuzz_server_receive,
    );
}

#[test]
fn m6_secagg_secret_share() {
    replay("secagg_secret_share", 400, 64, secagg::fuzz_secret_share);
}
