//! The threat-model test cases (docs/threat-model.md §9) of the dropout-tolerant
//! protocol for correctness and dropouts, one named test each: C2, D1-D6.
//! The other cases of §9 are in `secagg_threats_server.rs` (S1, S1b,
//! S2-S5), `secagg_threats_privacy.rs` (P1-P3, R1-R3) and
//! `secagg_threats_inputs.rs` (M3, O1, O2).
#![allow(clippy::unwrap_used)]
// Client ids and counts in these tests are tiny: the casts are exact.
#![allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]

use field::{FiniteField, Mersenne61};
use masked_sum::secagg::messages::{ClientBody, ClientEnvelope};
use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel};
use masked_sum::secagg::transport::Faults;
use masked_sum::secagg::{ClientId, DEFAULT_MAX_MESSAGE, Step};
use masked_sum::{ProtocolError, SumError};
use sum_testkit::secagg::{all_but, config, inputs, nothing_unmasked, oracle, run, run_exact};

use crate::common;
use common::complete;

fn expect_not_enough<E: std::fmt::Debug>(r: &Result<E, SumError>, at: Step) {
    match r {
        Err(SumError::Protocol(ProtocolError::NotEnoughClients { step, .. })) => {
            assert_eq!(*step, at);
        }
        other => panic!("expected NotEnoughClients at {at}, got {other:?}"),
    }
}

#[test]
fn c2_exact_sum_with_masking_no_dropouts() {
    let f = Mersenne61;
    for n in [2u64, 3, 10, 50] {
        let ts: Vec<usize> = if n <= 10 {
            (2..=n as usize).collect()
        } else {
            vec![2, 26, 50]
        };
        for t in ts {
            let label = format!("c2-{n}-{t}");
            let cfg = config(&f, n, complete(t), 3, &label);
            let ins = inputs(&f, n, 3, &label);
            let report = run_exact(&cfg, &ins, Faults::new(), &all_but(n, &[]), &label);
            // Masked vectors differ from the plaintext ones.
            for (_, id, bytes) in &report.transcript.as_ref().unwrap().to_server {
                let msg = ClientEnvelope::parse(bytes, DEFAULT_MAX_MESSAGE).unwrap();
                if let ClientBody::MaskedInput(m) = msg.body {
                    let plain: Vec<u8> = ins[(*id - 1) as usize]
                        .1
                        .iter()
                        .flat_map(|e| f.to_bytes(e))
                        .collect();
                    assert_ne!(
                        m.elements, plain,
                        "{label}: client {id} sent its input in the clear"
                    );
                }
            }
        }
    }
    // SecAgg+ too: Harary graphs of degree 4 and 6 on 12 clients.
    for degree in [4, 6] {
        let label = format!("c2-harary-{degree}");
        let params = SecAggParams::new(
            GraphChoice::Harary { degree },
            3,
            0,
            ServerModel::SemiHonest,
        );
        let cfg = config(&f, 12, params, 2, &label);
        run_exact(
            &cfg,
            &inputs(&f, 12, 2, &label),
            Faults::new(),
            &all_but(12, &[]),
            &label,
        );
    }
}

#[test]
fn d1_drop_after_advertise_keys() {
    let f = Mersenne61;
    let (n, t) = (8u64, 5);
    for k in 1..=(n - t as u64) {
        let gone: Vec<ClientId> = (1..=k).collect();
        let label = format!("d1-{k}");
        let cfg = config(&f, n, complete(t), 2, &label);
        let mut faults = Faults::new();
        for c in &gone {
            faults = faults.drop_from(*c, Step::ShareKeys);
        }
        let report = run_exact(
            &cfg,
            &inputs(&f, n, 2, &label),
            faults,
            &all_but(n, &gone),
            &label,
        );
        let out = report.output.unwrap();
        assert!(
            gone.iter()
                .all(|c| out.dropped.get(c) == Some(&Step::ShareKeys))
        );
    }
}

#[test]
fn d2_drop_after_share_keys() {
    let f = Mersenne61;
    let (n, t) = (8u64, 5);
    for k in 1..=(n - t as u64 + 1) {
        let gone: Vec<ClientId> = (n - k + 1..=n).collect();
        let label = format!("d2-{k}");
        let cfg = config(&f, n, complete(t), 2, &label);
        let ins = inputs(&f, n, 2, &label);
        let mut faults = Faults::new();
        for c in &gone {
            faults = faults.drop_from(*c, Step::MaskedInput);
        }
        if n - k >= t as u64 {
            // Their pairwise masks are removed through s_sk reconstruction.
            run_exact(&cfg, &ins, faults, &all_but(n, &gone), &label);
        } else {
            let report = run(&cfg, &ins, faults, &label);
            expect_not_enough(&report.output, Step::MaskedInput);
            assert!(nothing_unmasked(&report));
        }
    }
}

#[test]
fn d3_drop_after_masked_input() {
    let f = Mersenne61;
    let (n, t) = (8u64, 5);
    let gone = [2u64, 7];
    let cfg = config(&f, n, complete(t), 4, "d3");
    let ins = inputs(&f, n, 4, "d3");
    let mut faults = Faults::new();
    for c in gone {
        faults = faults.drop_from(c, Step::Unmasking);
    }
    // Their inputs are included: b_u comes from the others' shares.
    let report = run_exact(&cfg, &ins, faults, &all_but(n, &[]), "d3");
    let out = report.output.unwrap();
    assert!(out.included.contains(&2) && out.included.contains(&7));
    assert_eq!(out.dropped.get(&2), Some(&Step::Unmasking));
}

#[test]
fn d4_drop_during_unmasking() {
    let f = Mersenne61;
    let (n, t) = (8u64, 5);
    let ins = inputs(&f, n, 2, "d4");
    for silent in [n - t as u64, n - t as u64 + 1] {
        let cfg = config(&f, n, complete(t), 2, "d4");
        let mut faults = Faults::new();
        for c in 1..=silent {
            faults = faults.drop_from(c, Step::Unmasking);
        }
        let report = run(&cfg, &ins, faults, "d4");
        if n - silent == t as u64 {
            // Exactly t respond: success, everyone who masked is included.
            let out = report.output.unwrap();
            assert_eq!(out.sum, oracle(&f, &ins, &all_but(n, &[])));
        } else {
            // t - 1 respond: an error, no partial output.
            expect_not_enough(&report.output, Step::Unmasking);
        }
    }
}

#[test]
fn d5_threshold_boundary_at_every_step() {
    let f = Mersenne61;
    let (n, t) = (7u64, 4);
    let ins = inputs(&f, n, 2, "d5");
    for step in Step::ALL {
        for k in [n - t as u64, n - t as u64 + 1] {
            let label = format!("d5-{step}-{k}");
            let cfg = config(&f, n, complete(t), 2, &label);
            let gone: Vec<ClientId> = (1..=k).collect();
            let mut faults = Faults::new();
            for c in &gone {
                faults = faults.drop_from(*c, step);
            }
            let report = run(&cfg, &ins, faults, &label);
            if k == n - t as u64 {
                let included = if step >= Step::ConsistencyCheck {
                    all_but(n, &[])
                } else {
                    all_but(n, &gone)
                };
                let out = report.output.unwrap();
                assert_eq!(out.included, included, "{label}");
                assert_eq!(out.sum, oracle(&f, &ins, &included), "{label}");
            } else {
                expect_not_enough(&report.output, step);
                if step < Step::Unmasking {
                    assert!(nothing_unmasked(&report), "{label}");
                }
            }
        }
    }
}

#[test]
fn d6_deadline() {
    let f = Mersenne61;
    let (n, t) = (6u64, 4);
    let ins = inputs(&f, n, 2, "d6");
    for step in Step::ALL {
        let label = format!("d6-{step}");
        let cfg = config(&f, n, complete(t), 2, &label);
        // Client 3 answers this step only after the deadline.
        let report = run(&cfg, &ins, Faults::new().late(3, step), &label);
        let out = report.output.as_ref().unwrap();
        assert_eq!(
            out.dropped.get(&3),
            Some(&step),
            "{label}: marked dead at that step"
        );
        let included = if step >= Step::ConsistencyCheck {
            all_but(n, &[])
        } else {
            all_but(n, &[3])
        };
        assert_eq!(out.sum, oracle(&f, &ins, &included), "{label}");
        // Its late message was refused, not waited for.
        assert!(
            report.server_rejections.iter().any(|(c, e)| *c == 3
                && matches!(
                    e,
                    SumError::Protocol(ProtocolError::UnexpectedMessage { .. })
                )),
            "{label}"
        );
    }
}
