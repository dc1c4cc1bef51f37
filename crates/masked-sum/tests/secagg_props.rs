//! Property and parameter tests of the secure aggregation: random
//! dropouts against the exact prediction over several fields and graphs,
//! Shamir against `vsss-rs`, the SecAgg+ parameter finder, Harary graphs,
//! and the groups of clients with the corrected ParGen conditions.
#![allow(clippy::unwrap_used)]
// Rates times small client counts: the casts are exact.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]

use std::collections::BTreeSet;

use field::{BigPrime, FfMersenne61, FfMersenne127, Fp64, Mersenne61, Mersenne127};
use masked_sum::secagg::graph::{GraphKind, Neighbourhoods};
use masked_sum::secagg::groups::{GroupParams, Groups, Removal};
use masked_sum::secagg::params::{GraphChoice, ServerModel, ThreatModel};
use rand::RngExt;
use rand::seq::SliceRandom;
use sum_testkit::secagg::{dropouts_property, shamir_suite, shamir_vs_vsss};

macro_rules! dropout_props {
    ($name:ident, $field:expr) => {
        mod $name {
            #[test]
            fn complete_graph() {
                super::dropouts_property(&$field, 0, testdata::cases(24));
            }
            #[test]
            fn harary_graph() {
                super::dropouts_property(&$field, 4, testdata::cases(24));
            }
        }
    };
}

dropout_props!(mersenne61, field::Mersenne61);
dropout_props!(mersenne127, field::Mersenne127);
dropout_props!(fp101, field::Fp64::new(101).unwrap());
dropout_props!(
    big256,
    field::BigPrime::new(testdata::known_primes::p256()).unwrap()
);

#[test]
fn shamir_over_every_field() {
    shamir_suite(&Mersenne61, 60);
    shamir_suite(&Mersenne127, 60);
    shamir_suite(&Fp64::new(101).unwrap(), 60);
    shamir_suite(&Fp64::new(7).unwrap(), 60);
    shamir_suite(&BigPrime::new(testdata::known_primes::p256()).unwrap(), 30);
}

#[test]
fn shamir_against_vsss_rs() {
    shamir_vs_vsss(&FfMersenne127::new(), 40);
    shamir_vs_vsss(&FfMersenne61::new(), 40);
}

#[test]
fn harary_graph_shape() {
    let mut rng = testdata::rng("harary-shape");
    for (n, k) in [(5u64, 2usize), (12, 4), (31, 6), (50, 10)] {
        let g = Neighbourhoods::harary(1..=n, k, &mut rng).unwrap();
        assert_eq!(g.kind(), GraphKind::Harary { degree: k });
        for u in 1..=n {
            let nb = g.neighbours(u).unwrap();
            assert_eq!(nb.len(), k, "degree");
            assert!(!nb.contains(&u));
            for v in &nb {
                assert!(g.neighbours(*v).unwrap().contains(&u), "symmetric");
                assert!(g.are_neighbours(u, *v));
            }
            assert_eq!(g.holders(u).unwrap().len(), k + 1);
        }
    }
    // Degree n - 1 or more is the complete graph.
    let g = Neighbourhoods::harary_with_ring((1..=5).collect(), 4).unwrap();
    assert_eq!(g.kind(), GraphKind::Complete);
    assert_eq!(g.neighbours(3).unwrap(), vec![1, 2, 4, 5]);
}

/// Monte Carlo check of the finder's output: on random rings with exactly
/// `floor(gamma n)` colluders and `floor(delta n)` dropouts, no client has
/// more than `c` colluding neighbours or fewer than `t` surviving ones.
fn check_found(n: usize, delta: f64, gamma: f64, model: ServerModel, trials: usize) {
    let p = ThreatModel::new(n, delta, gamma, model).find().unwrap();
    p.validate(n).unwrap();
    let h = p.holders(n);
    match model {
        ServerModel::SemiMalicious => assert!(2 * p.threshold > h + p.max_colluders),
        ServerModel::SemiHonest => assert!(p.threshold > p.max_colluders),
    }
    let GraphChoice::Harary { degree } = p.graph else {
        return;
    };
    assert!(degree.is_multiple_of(2) && degree + 1 < n);
    let a = (gamma * n as f64 + 1e-12).floor() as usize;
    let d = (delta * n as f64 + 1e-12).floor() as usize;
    let mut rng = testdata::rng(&format!("finder-{n}-{delta}-{gamma}"));
    for _ in 0..trials {
        let g = Neighbourhoods::harary(0..n as u64, degree, &mut rng).unwrap();
        let mut ids: Vec<u64> = (0..n as u64).collect();
        ids.shuffle(&mut rng);
        let bad: BTreeSet<u64> = ids[..a].iter().copied().collect();
        let gone: BTreeSet<u64> = ids[a..a + d].iter().copied().collect();
        for u in 0..n as u64 {
            let nb = g.neighbours(u).unwrap();
            if !bad.contains(&u) {
                assert!(nb.iter().filter(|v| bad.contains(v)).count() <= p.max_colluders);
            }
            assert!(nb.iter().filter(|v| !gone.contains(v)).count() >= p.threshold);
        }
    }
}

#[test]
fn finder_parameters_hold_on_random_rings() {
    check_found(1000, 0.05, 0.05, ServerModel::SemiMalicious, 30);
    check_found(1000, 0.1, 0.2, ServerModel::SemiHonest, 30);
    check_found(300, 0.05, 0.1, ServerModel::SemiMalicious, 30);
    check_found(10_000, 0.05, 0.05, ServerModel::SemiMalicious, 3);
    // SecAgg+ pays O(log n) neighbours: from 10^3 to 10^4 clients the
    // degree grows far less than tenfold.
    let deg = |n| match ThreatModel::new(n, 0.05, 0.05, ServerModel::SemiMalicious)
        .find()
        .unwrap()
        .graph
    {
        GraphChoice::Harary { degree } => degree,
        GraphChoice::Complete => n,
    };
    assert!(deg(10_000) < 2 * deg(1000));
}

#[test]
fn finder_falls_back_to_the_complete_graph() {
    // Ten clients, one colluding and one dropping: the Harary graph of
    // degree 6 already works deterministically (two bad clients cannot
    // cut a ring of 3-runs; 2t > 7 + 1 and 6 - 1 >= t).
    let p = ThreatModel::new(10, 0.1, 0.1, ServerModel::SemiMalicious)
        .find()
        .unwrap();
    assert_eq!(p.graph, GraphChoice::Harary { degree: 6 });
    assert_eq!((p.threshold, p.max_colluders), (5, 1));
    // Six clients, one of each: degree 4 needs t = 4 of 4 neighbours,
    // which one dropout breaks; the complete graph (t = 4 <= 6 - 1) works.
    let p = ThreatModel::new(6, 1.0 / 6.0, 1.0 / 6.0, ServerModel::SemiMalicious)
        .find()
        .unwrap();
    assert_eq!(p.graph, GraphChoice::Complete);
    assert_eq!(p.max_colluders, 1);
    assert!(2 * p.threshold > 6 + 1 && p.threshold <= 5);
    // Infeasible: half the clients colluding and a third dropping.
    assert!(
        ThreatModel::new(10, 0.34, 0.5, ServerModel::SemiMalicious)
            .find()
            .is_err()
    );
}

fn paper_example() -> GroupParams {
    GroupParams {
        clients: 200,
        colluding_rate: 0.1,
        dropout_rate: 0.1,
        removal_rate: 0.1,
        threshold_rate: 0.7,
        security_bits: 40.0,
        correctness_bits: 40.0,
    }
}

#[test]
fn paper_example_does_not_reproduce() {
    let p = paper_example();
    // The printed conditions: f3 holds at k = 1 and f2 at tiny k, so k is
    // f1's 41, not the paper's 60.
    let printed = p.par_gen_printed().unwrap();
    assert_eq!(printed.k3, 1, "the printed f3 holds at k = 1");
    assert!(p.f3_printed(1) > 0.0);
    assert!(
        printed.k2 < 10,
        "the printed f2 is met by tiny groups: {}",
        printed.k2
    );
    assert_ne!(printed.group_size, 60);
    assert_eq!(printed.group_size, printed.k1);
    // The corrected conditions admit no group size at all at N = 200: the
    // correctness margin 1 - delta - xi - zeta = 0.1 needs k >= 1293.
    assert!(p.par_gen().is_err());
    let big = GroupParams {
        clients: 1_000_000,
        ..p
    };
    let k2 = (1..100_000).find(|&k| big.f2(k) >= 0.0).unwrap();
    assert!(k2 > 200);
    assert!(
        p.f3(1) < 0.0,
        "a one-client group has no connectivity guarantee"
    );
}

#[test]
fn corrected_f2_gets_harder_with_the_threshold() {
    let p = paper_example();
    let at = |xi: f64| GroupParams {
        threshold_rate: xi,
        ..p
    };
    // A higher threshold leaves less room for dropouts and removals.
    assert!(at(0.5).f2(500) > at(0.6).f2(500));
    // The printed f2 says the opposite.
    assert!(at(0.5).f2_printed(500) < at(0.6).f2_printed(500));
}

#[test]
fn par_gen_is_minimal_and_meets_its_conditions() {
    for (n, gamma, delta, zeta, xi) in [
        (20_000usize, 0.05, 0.05, 0.05, 0.6),
        (50_000, 0.1, 0.05, 0.05, 0.5),
        (5_000, 0.02, 0.02, 0.02, 0.5),
    ] {
        let p = GroupParams {
            clients: n,
            colluding_rate: gamma,
            dropout_rate: delta,
            removal_rate: zeta,
            threshold_rate: xi,
            security_bits: 40.0,
            correctness_bits: 40.0,
        };
        let s = p.par_gen().unwrap();
        let k = s.group_size;
        assert!(p.f1(k) >= 0.0 && p.f2(k) >= 0.0 && p.f3(k) >= 0.0);
        assert!(
            p.f1(k - 1) < 0.0 || p.f2(k - 1) < 0.0 || p.f3(k - 1) < 0.0,
            "minimal"
        );
        // The bounds behind them, evaluated directly.
        let union = (n as f64 / k as f64).ln();
        let ln2 = std::f64::consts::LN_2;
        assert!(union - 2.0 * (xi - gamma).powi(2) * k as f64 <= -40.0 * ln2 + 1e-9);
        let rho: f64 = gamma + delta + zeta;
        assert!((k as f64).ln() + s.degree as f64 / 2.0 * rho.ln() <= -40.0 * ln2 + 1e-9);
        assert!(s.degree < k && s.threshold <= k - s.removal_budget);
    }
}

#[test]
fn groups_partition_and_removal_budget() {
    let p = GroupParams {
        clients: 0,
        colluding_rate: 0.05,
        dropout_rate: 0.05,
        removal_rate: 0.05,
        threshold_rate: 0.6,
        security_bits: 40.0,
        correctness_bits: 40.0,
    };
    let mut rng = testdata::rng("groups");
    let n = 20_000u64;
    let mut g = Groups::form((0..n).collect(), p, &mut rng).unwrap();
    let k = g.sizing().group_size;
    let q = g.sizing().removal_budget;
    assert!(q >= 1);
    // Each group's aggregation parameters hold for every group, even after
    // its whole removal budget and the largest dropout count f2 allows.
    let sp = g.secagg_params();
    for m in g.groups() {
        sp.validate(m.len()).unwrap();
        assert!(sp.threshold <= m.len() - q - (0.05 * m.len() as f64).ceil() as usize);
    }
    let all: BTreeSet<u64> = g.groups().iter().flatten().copied().collect();
    assert_eq!(all.len() as u64, n, "every client in exactly one group");
    assert_eq!(
        g.groups().iter().map(BTreeSet::len).sum::<usize>() as u64,
        n
    );
    assert!(g.groups().iter().all(|m| m.len() >= k));
    // Spend one group's budget; the next removal there re-forms.
    let victims: Vec<u64> = g.groups()[0].iter().copied().take(q + 1).collect();
    for (i, v) in victims.iter().enumerate() {
        match g.remove(*v, &mut rng).unwrap() {
            Removal::Removed { group, remaining } => {
                assert_eq!(group, 0);
                assert_eq!(remaining, q - i - 1);
            }
            Removal::Reformed { generation } => {
                assert_eq!(i, q, "re-formed only once the budget is spent");
                assert_eq!(generation, 1);
            }
        }
    }
    assert_eq!(g.generation(), 1);
    let all: BTreeSet<u64> = g.groups().iter().flatten().copied().collect();
    assert_eq!(all.len() as u64, n - q as u64 - 1);
    assert!(victims.iter().all(|v| g.group_of(*v).is_none()));
    assert!(g.remove(victims[0], &mut rng).is_err());
    // With gamma N colluders placed at random, no group reaches t of them
    // (2^-40 by f1; 50 random placements here).
    let t = g.sizing().threshold;
    let members: Vec<u64> = all.into_iter().collect();
    for _ in 0..50 {
        let colluders: BTreeSet<u64> = (0..(members.len() / 20))
            .map(|_| members[rng.random_range(0..members.len())])
            .collect();
        for m in g.groups() {
            assert!(m.iter().filter(|c| colluders.contains(c)).count() < t);
        }
    }
}

#[test]
fn secrets_are_redacted_and_wiped() {
    use masked_sum::secagg::client::ClientSecrets;
    use masked_sum::secagg::messages::RevealedShare;
    use masked_sum::secagg::shamir::{SecretShare, Share, split_secret};
    use zeroize::Zeroize;

    let secrets = ClientSecrets::generate(&mut testdata::rng("redact"));
    let seed_hex: String = secrets.seed.iter().map(|b| format!("{b:02x}")).collect();
    let printed = format!("{secrets:?}");
    assert!(!printed.contains(&format!("{:?}", &secrets.seed[..])));
    assert!(!printed.contains(&seed_hex));
    assert!(!printed.contains(&format!("{:?}", &secrets.mask.secret_bytes()[..])));
    let shares = split_secret(&secrets.seed, 2, &[1, 2, 3], &mut testdata::rng("redact")).unwrap();
    let s = format!("{:?}", shares[0]);
    assert!(!s.contains(&shares[0].values[0].to_string()), "{s}");
    let r = RevealedShare {
        owner: 1,
        share: shares[0].to_bytes(),
    };
    assert!(!format!("{r:?}").contains(&format!("{:?}", &r.share[..])));
    let g = Share {
        id: 4,
        value: 123_456_789u64,
    };
    assert!(!format!("{g:?}").contains("123456789"));
    // Shares wipe themselves (ZeroizeOnDrop runs this on drop).
    let mut w: SecretShare = shares[1].clone();
    w.zeroize();
    assert_eq!((w.id, w.values), (0, [0; 3]));
    // A client's Debug names its id and state only.
    let f = Mersenne61;
    let cfg = sum_testkit::secagg::config(
        &f,
        3,
        masked_sum::secagg::params::SecAggParams::new(
            GraphChoice::Complete,
            2,
            0,
            ServerModel::SemiHonest,
        ),
        1,
        "redact",
    );
    let h = sum_testkit::secagg::Harness::new(
        cfg,
        &sum_testkit::secagg::inputs(&f, 3, 1, "redact"),
        "redact",
    );
    let c = format!("{:?}", h.clients[&1]);
    let mine = sum_testkit::secagg::Harness::<Mersenne61>::secrets("redact", 1);
    assert!(
        !c.contains(&format!("{:?}", &mine.seed[..])) && c.contains("id: 1"),
        "{c}"
    );
    assert!(!format!("{:?}", h.server).contains(&format!("{:?}", &mine.seed[..])));
}
