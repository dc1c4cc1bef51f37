//! Property tests over GF(2^61 - 1), GF(2^64 - 2^32 + 1), GF(27 * 2^59 + 1), GF(2^127 - 1) and a 256-bit prime
//! (docs/threat-model.md C1, C2, M1, M2), the two decoders cross-checked, and the
//! uniformity of one masked sketch; the aggregator's properties for every
//! sketch type.
#![allow(clippy::unwrap_used)]

use field::{BigPrime, Fp64, Goldilocks, Mersenne61, Mersenne127};
use sagg_testkit::sagg::props;

sagg_testkit::sagg_suite!(mersenne61, Mersenne61, 8, 64);
sagg_testkit::sagg_suite!(goldilocks, Goldilocks, 8, 64);
sagg_testkit::sagg_suite!(mersenne127, Mersenne127, 8, 48);
// Capacities above the thresholds of Graeffe root finding and the tree
// re-encode (the remainder-tree Vandermonde solve starts at 1536 nodes:
// field's vandermonde suite runs it).
sagg_testkit::sagg_suite!(proth, Fp64::proth(), 300, 8);
sagg_testkit::sagg_suite!(mersenne61_large, Mersenne61, 300, 4);
sagg_testkit::sagg_suite!(
    big256,
    BigPrime::new(testdata::known_primes::p256()).unwrap(),
    3,
    12
);

// The aggregator's properties (sum, replay, duplicate, minimum clients,
// state unchanged on rejection), once for every sketch type.
mod aggregator {
    use field::{BigPrime, Goldilocks, Mersenne61, Mersenne127};
    use sagg_testkit::sagg::aggregator::makers;
    use syndrome_agg::Scheme;

    sagg_testkit::aggregator_suite!(field61, makers::field(Mersenne61), 24);
    sagg_testkit::aggregator_suite!(field_goldilocks, makers::field(Goldilocks), 16);
    sagg_testkit::aggregator_suite!(field_proth, makers::field(field::Fp64::proth()), 16);
    sagg_testkit::aggregator_suite!(field127, makers::field(Mersenne127), 16);
    sagg_testkit::aggregator_suite!(
        field_big256,
        makers::field(BigPrime::new(testdata::known_primes::p256()).unwrap()),
        6
    );
    sagg_testkit::aggregator_suite!(wide61, makers::wide, 12);
    sagg_testkit::aggregator_suite!(integer, makers::integer, 12);
    sagg_testkit::aggregator_suite!(any_field, makers::any(Scheme::FieldKeys), 16);
    sagg_testkit::aggregator_suite!(
        any_wide,
        makers::any(Scheme::WideKeys { hash_key: [4; 32] }),
        8
    );
    sagg_testkit::aggregator_suite!(any_integer, makers::any(Scheme::Integer), 8);
    sagg_testkit::aggregator_suite!(
        any_partitioned,
        makers::any(Scheme::Partitioned { hash_key: [6; 32] }),
        8
    );
}

#[test]
fn finite_field_and_integer_decoders_agree() {
    props::decoders_agree(3, 48);
}

/// The 0.999 quantile of chi-square with 250 degrees of freedom is about
/// 321.0 (Wilson-Hilferty: 250 (1 - 2/2250 + 3.09 sqrt(2/2250))^3).
const CHI2_250_999: f64 = 321.0;

#[test]
fn one_pairwise_masked_sketch_is_uniform() {
    let f = Fp64::new(251).unwrap();
    let (chi2, dof) = props::masked_sketch_is_uniform(&f, false, 251 * 30, "uniform-pairwise");
    assert_eq!(dof, 250);
    assert!(chi2 < CHI2_250_999, "chi-square {chi2} over {dof} dof");
}

#[test]
fn one_dealer_masked_sketch_is_uniform() {
    let f = Fp64::new(251).unwrap();
    let (chi2, dof) = props::masked_sketch_is_uniform(&f, true, 251 * 30, "uniform-dealer");
    assert!(chi2 < CHI2_250_999, "chi-square {chi2} over {dof} dof");
}

/// The statistic must be able to fail: an unmasked sketch is a point mass.
#[test]
fn chi_square_rejects_a_point_mass() {
    let mut counts = vec![0u64; 251];
    counts[7] = 251 * 30;
    assert!(props::chi_square(&counts) > CHI2_250_999);
}
