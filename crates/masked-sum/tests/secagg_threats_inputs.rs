//! The threat-model test cases (docs/threat-model.md §9) of the dropout-tolerant
//! protocol for malformed, oversized and abusive inputs, one named test
//! each: M3, O1, O2.
#![allow(clippy::unwrap_used)]

use field::{FiniteField, Fp64, Mersenne61};
use masked_sum::secagg::graph::Neighbourhoods;
use masked_sum::secagg::messages::{ClientBody, ClientEnvelope, MaskedInput, ServerEnvelope};
use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel, ThreatModel};
use masked_sum::secagg::transport::{Fault, Faults};
use masked_sum::secagg::{DEFAULT_MAX_MESSAGE, SessionConfig, Step};
use masked_sum::{SumError, WireError};
use sum_testkit::secagg::{Harness, all_but, config, context, inputs, oracle, run};

use crate::common;
use common::complete;

#[test]
fn m3_non_canonical_and_wrong_length_inputs() {
    let f = Fp64::new(101).unwrap();
    let cfg = config(&f, 4, complete(3), 3, "m3");
    let mut h = Harness::new(cfg.clone(), &inputs(&f, 4, 3, "m3"), "m3");
    let dir = h.step(&[]);
    assert!(h.answer(&dir).is_empty());
    let req = h.step(&[]);
    let ctx = *cfg.context();
    let good = |elements: Vec<u8>| MaskedInput {
        modulus: f.characteristic().to_bytes_le(),
        elements,
    };
    let send = |h: &mut Harness<Fp64>, body: MaskedInput| {
        h.server
            .receive(ClientEnvelope::new(&ctx, 1, ClientBody::MaskedInput(body)))
    };
    // An element >= p (one byte per element at p = 101).
    assert_eq!(
        send(&mut h, good(vec![5, 200, 7])),
        Err(SumError::NonCanonical)
    );
    assert_eq!(
        send(&mut h, good(vec![101, 0, 0])),
        Err(SumError::NonCanonical)
    );
    // Wrong length.
    assert!(matches!(
        send(&mut h, good(vec![5, 6])),
        Err(SumError::WrongLength { .. })
    ));
    // Another field.
    let other = MaskedInput {
        modulus: vec![103],
        elements: vec![1, 2, 3],
    };
    assert!(matches!(
        send(&mut h, other),
        Err(SumError::Mismatch { .. })
    ));
    // A truncated frame is refused at parsing.
    let bytes = ClientEnvelope::new(&ctx, 1, ClientBody::MaskedInput(good(vec![1, 2, 3])))
        .to_bytes()
        .unwrap();
    assert!(matches!(
        h.server.receive_bytes(&bytes[..bytes.len() - 1]),
        Err(SumError::Wire(WireError::Malformed { .. }))
    ));
    // None of them counted: the real messages still give the exact sum.
    assert!(h.answer(&req).is_empty());
    let out = h.complete().unwrap();
    assert_eq!(
        out.sum,
        oracle(&f, &inputs(&f, 4, 3, "m3"), &all_but(4, &[]))
    );
}

#[test]
fn o1_oversized_frame() {
    let f = Mersenne61;
    let cfg = std::sync::Arc::new(
        (*config(&f, 3, complete(2), 1, "o1"))
            .clone()
            .with_max_message(1024),
    );
    let mut h = Harness::new(cfg, &inputs(&f, 3, 1, "o1"), "o1");
    let huge = vec![0u8; 1025];
    assert!(matches!(
        h.server.receive_bytes(&huge),
        Err(SumError::Wire(WireError::FrameTooLarge {
            len: 1025,
            max: 1024
        }))
    ));
    let big = vec![0u8; DEFAULT_MAX_MESSAGE + 1];
    assert!(matches!(
        ClientEnvelope::parse(&big, DEFAULT_MAX_MESSAGE),
        Err(SumError::Wire(WireError::FrameTooLarge { .. }))
    ));
    assert!(matches!(
        ServerEnvelope::parse(&big, DEFAULT_MAX_MESSAGE),
        Err(SumError::Wire(WireError::FrameTooLarge { .. }))
    ));
    // The run goes on undisturbed.
    let dir = h.step(&[]);
    assert_eq!(dir.len(), 3);
}

#[test]
fn o2_parameter_abuse() {
    let f = Mersenne61;
    let ctx = context("o2", 0);
    let g = Neighbourhoods::complete(1..=5).unwrap();
    // Vector length beyond the cap, and zero.
    assert!(
        SessionConfig::new(
            f,
            ctx,
            g.clone(),
            complete(3),
            masked_sum::secagg::MAX_VECTOR_LEN + 1
        )
        .is_err()
    );
    assert!(SessionConfig::new(f, ctx, g.clone(), complete(3), 0).is_err());
    // Threshold above the holders, zero, and a graph of another shape.
    assert!(SessionConfig::new(f, ctx, g.clone(), complete(6), 1).is_err());
    assert!(SessionConfig::new(f, ctx, g.clone(), complete(0), 1).is_err());
    let harary = SecAggParams::new(
        GraphChoice::Harary { degree: 2 },
        2,
        0,
        ServerModel::SemiHonest,
    );
    assert!(SessionConfig::new(f, ctx, g, harary, 1).is_err());
    assert!(Neighbourhoods::harary_with_ring((1..=9).collect(), 3).is_err());
    assert!(Neighbourhoods::complete([1, 2, 2]).is_err());
    assert!(Neighbourhoods::complete([1, u64::MAX]).is_err());
    // Finder inputs out of range.
    assert!(
        ThreatModel::new(100, 1.0, 0.1, ServerModel::SemiHonest)
            .find()
            .is_err()
    );
    assert!(
        ThreatModel::new(100, 0.1, -0.1, ServerModel::SemiHonest)
            .find()
            .is_err()
    );
    assert!(
        ThreatModel::new(1, 0.1, 0.1, ServerModel::SemiHonest)
            .find()
            .is_err()
    );
    // A varint length of 2^60 in a message is refused without allocating.
    let mut bytes = ClientEnvelope::new(
        &ctx,
        1,
        ClientBody::ShareKeys(masked_sum::secagg::messages::ShareKeys { shares: vec![] }),
    )
    .to_bytes()
    .unwrap();
    bytes.pop(); // the empty list's length
    bytes.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x10]); // 2^60
    assert!(matches!(
        ClientEnvelope::parse(&bytes, DEFAULT_MAX_MESSAGE),
        Err(SumError::Wire(WireError::Malformed { .. }))
    ));
    // An unsupported version.
    let mut env = ClientEnvelope::new(
        &ctx,
        1,
        ClientBody::ShareKeys(masked_sum::secagg::messages::ShareKeys { shares: vec![] }),
    );
    env.version = 99;
    assert!(matches!(
        ClientEnvelope::parse(&env.to_bytes().unwrap(), DEFAULT_MAX_MESSAGE),
        Err(SumError::Wire(WireError::UnsupportedVersion {
            found: 99,
            ..
        }))
    ));
    // Unknown faults are harmless: a fault for a client outside the session.
    let cfg = config(&f, 3, complete(2), 1, "o2-run");
    let report = run(
        &cfg,
        &inputs(&f, 3, 1, "o2-run"),
        Faults::new().with(Fault::Drop {
            client: 77,
            from: Step::AdvertiseKeys,
        }),
        "o2-run",
    );
    assert!(report.output.is_ok());
}
