//! Generic test logic for the dropout-tolerant secure aggregation of
//! `masked-sum` ([`masked_sum::secagg`]): protocol runs against the
//! plaintext oracle, Shamir suites over any field and against `vsss-rs`,
//! and (re-exported from [`crate::fuzz_secagg`]) the bodies of the
//! message-parser fuzz targets.

// Test code: errors are the protocol's own, documented there; client
// counts in tests are tiny, so `u64 as usize` cannot truncate.
#![allow(clippy::missing_errors_doc, clippy::cast_possible_truncation)]

use masked_sum::ProtocolError;
use std::collections::BTreeSet;
use std::sync::Arc;

use field::{Field, FiniteField};
use masked_sum::SumError;
use masked_sum::masking::pairwise::{RoundContext, SessionId};
use masked_sum::secagg::client::{Client, RoundLedger};
use masked_sum::secagg::graph::Neighbourhoods;
use masked_sum::secagg::messages::{ClientEnvelope, ServerEnvelope};
use masked_sum::secagg::params::{GraphChoice, SecAggParams};
use masked_sum::secagg::shamir::{self, SecretShare, Share};
use masked_sum::secagg::transport::{Faults, InProcess, RunReport};
use masked_sum::secagg::{ClientId, SessionConfig, Step};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use rand::RngExt;

/// A session context from a label.
pub fn context(label: &str, round: u64) -> RoundContext {
    let mut s = [0u8; 32];
    crate::rng(label).fill(&mut s);
    RoundContext {
        session: SessionId(s),
        round,
    }
}

/// A session over clients `1..=n` with the graph the parameters name.
pub fn config<F: FiniteField>(
    f: &F,
    n: u64,
    params: SecAggParams,
    len: usize,
    label: &str,
) -> Arc<SessionConfig<F>> {
    let mut rng = crate::rng(label);
    let graph = match params.graph {
        GraphChoice::Complete => Neighbourhoods::complete(1..=n).unwrap(),
        GraphChoice::Harary { degree } => Neighbourhoods::harary(1..=n, degree, &mut rng).unwrap(),
    };
    Arc::new(SessionConfig::new(f.clone(), context(label, 0), graph, params, len).unwrap())
}

/// Random inputs of length `len` for clients `1..=n`.
pub fn inputs<F: FiniteField>(
    f: &F,
    n: u64,
    len: usize,
    label: &str,
) -> Vec<(ClientId, Vec<F::Elem>)> {
    let mut rng = crate::rng(label);
    (1..=n)
        .map(|id| (id, (0..len).map(|_| f.random(&mut rng)).collect()))
        .collect()
}

/// The plaintext oracle: the sum of the inputs of `included`.
pub fn oracle<F: Field>(
    f: &F,
    inputs: &[(ClientId, Vec<F::Elem>)],
    included: &BTreeSet<ClientId>,
) -> Vec<F::Elem> {
    let len = inputs.first().map_or(0, |(_, v)| v.len());
    let mut sum = vec![f.zero(); len];
    for (id, v) in inputs {
        if included.contains(id) {
            for (a, b) in sum.iter_mut().zip(v) {
                f.add_assign(a, b);
            }
        }
    }
    sum
}

/// Runs the protocol over the in-process transport, recording the
/// transcript.
pub fn run<F: FiniteField>(
    cfg: &Arc<SessionConfig<F>>,
    inputs: &[(ClientId, Vec<F::Elem>)],
    faults: Faults,
    label: &str,
) -> RunReport<F::Elem> {
    InProcess::new(cfg.clone())
        .with_faults(faults)
        .recording()
        .run(inputs.to_vec(), &mut crate::rng(label))
        .unwrap()
}

/// What a masked input replayed from one round into the next does
/// (threat-model case R2, docs/threat-model.md §9): the inputs of four
/// clients `1..=4` under a complete graph of threshold 3, round 0
/// recorded, client 2's masked input of round 0 sent again in round 1.
#[derive(Debug)]
pub struct CrossRoundReplay<E> {
    /// Whether round 1's server refused the replay by its header.
    pub refused: bool,
    /// Round 1's sum, the replay refused.
    pub sum: Vec<E>,
    /// Round 1's sum when the replay is forced in with its header
    /// rewritten to round 1 (its masks do not cancel).
    pub forced: Vec<E>,
}

/// Runs [`CrossRoundReplay`]'s rounds over `inputs` (four clients, ids
/// `1..=4`, vectors of one length).
pub fn cross_round_replay<F: FiniteField>(
    f: &F,
    inputs: &[(ClientId, Vec<F::Elem>)],
    label: &str,
) -> CrossRoundReplay<F::Elem> {
    use masked_sum::secagg::DEFAULT_MAX_MESSAGE;
    use masked_sum::secagg::params::ServerModel;
    let len = inputs[0].1.len();
    let params = SecAggParams::new(GraphChoice::Complete, 3, 0, ServerModel::SemiHonest);
    let cfg0 = config(f, 4, params, len, label);
    let cfg1 = Arc::new(
        SessionConfig::new(
            f.clone(),
            cfg0.context().next(),
            cfg0.graph().clone(),
            *cfg0.params(),
            len,
        )
        .unwrap(),
    );
    let r0 = run(&cfg0, inputs, Faults::new(), &format!("{label}-0"));
    let (_, _, old) = r0
        .transcript
        .as_ref()
        .unwrap()
        .to_server
        .iter()
        .find(|(s, c, _)| *s == Step::MaskedInput && *c == 2)
        .unwrap()
        .clone();
    let r1 = run(
        &cfg1,
        inputs,
        Faults::new().inject(Step::MaskedInput, old.clone()),
        &format!("{label}-1"),
    );
    let refused = r1.server_rejections.iter().any(|(c, e)| {
        *c == 2 && matches!(e, SumError::Protocol(ProtocolError::MessageRejected { .. }))
    });
    let sum = r1.output.unwrap().sum;
    let mut h = Harness::new(cfg1.clone(), inputs, &format!("{label}-forced"));
    let directory = h.step(&[]);
    assert!(h.answer(&directory).is_empty());
    let request = h.step(&[]);
    assert!(h.answer(&request).is_empty());
    let mut forged = ClientEnvelope::parse(&old, DEFAULT_MAX_MESSAGE).unwrap();
    forged.round = cfg1.context().round;
    for m in h.pending.iter_mut().filter(|m| m.client == 2) {
        *m = forged.clone();
    }
    let forced = h.complete().unwrap().sum;
    CrossRoundReplay {
        refused,
        sum,
        forced,
    }
}

/// Runs the protocol and checks the output against the oracle over the
/// clients it reports included, and that those are exactly `expected`.
pub fn run_exact<F: FiniteField>(
    cfg: &Arc<SessionConfig<F>>,
    inputs: &[(ClientId, Vec<F::Elem>)],
    faults: Faults,
    expected: &BTreeSet<ClientId>,
    label: &str,
) -> RunReport<F::Elem> {
    let report = run(cfg, inputs, faults, label);
    let out = report
        .output
        .as_ref()
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(&out.included, expected, "{label}: included set");
    assert_eq!(
        out.sum,
        oracle(cfg.field(), inputs, expected),
        "{label}: sum"
    );
    report
}

/// Clients `1..=n` less `out`.
pub fn all_but(n: u64, out: &[ClientId]) -> BTreeSet<ClientId> {
    (1..=n).filter(|c| !out.contains(c)).collect()
}

/// Whether the transcript shows no unmasking response (nothing was revealed
/// in round 3).
pub fn nothing_unmasked<E>(report: &RunReport<E>) -> bool {
    report
        .transcript
        .as_ref()
        .is_none_or(|t| t.to_server.iter().all(|(s, _, _)| *s != Step::Unmasking))
}

/// Predicts a run with honest parties and `faults` of drops only: the
/// included clients, or the step at which the server must abort.
pub fn predict<F: FiniteField>(
    cfg: &SessionConfig<F>,
    faults: &Faults,
) -> Result<BTreeSet<ClientId>, Step> {
    let g = cfg.graph();
    let t = cfg.threshold();
    let alive = |c: ClientId, s: Step| faults.dropped_from(c).is_none_or(|d| d > s);
    let count_in = |c: ClientId, set: &BTreeSet<ClientId>| {
        g.holders(c)
            .unwrap()
            .iter()
            .filter(|h| set.contains(h))
            .count()
    };
    let u1: BTreeSet<ClientId> = g
        .ring()
        .iter()
        .copied()
        .filter(|c| alive(*c, Step::AdvertiseKeys))
        .collect();
    if u1.len() < cfg.min_clients() {
        return Err(Step::AdvertiseKeys);
    }
    // A client aborts when fewer than t of its holders are left.
    let u2: BTreeSet<ClientId> = u1
        .iter()
        .copied()
        .filter(|c| alive(*c, Step::ShareKeys) && count_in(*c, &u1) >= t)
        .collect();
    if u2.len() < cfg.min_clients() {
        return Err(Step::ShareKeys);
    }
    let u3: BTreeSet<ClientId> = u2
        .iter()
        .copied()
        .filter(|c| alive(*c, Step::MaskedInput) && count_in(*c, &u2) >= t)
        .collect();
    if u3.len() < cfg.min_clients() {
        return Err(Step::MaskedInput);
    }
    // A client attests when at least t of its holders (itself included)
    // are alive ...
    let u4: BTreeSet<ClientId> = u3
        .iter()
        .copied()
        .filter(|c| alive(*c, Step::ConsistencyCheck) && count_in(*c, &u3) >= t)
        .collect();
    if u4.len() < cfg.min_clients() {
        return Err(Step::ConsistencyCheck);
    }
    // ... and unmasks when t of them (itself included) attested.
    let u5: BTreeSet<ClientId> = u4
        .iter()
        .copied()
        .filter(|c| alive(*c, Step::Unmasking) && count_in(*c, &u4) >= t)
        .collect();
    if u5.len() < cfg.min_clients() {
        return Err(Step::Unmasking);
    }
    let seeds_ok = u3.iter().all(|u| count_in(*u, &u5) >= t);
    let keys_ok = u2.difference(&u3).all(|v| {
        g.neighbours(*v)
            .unwrap()
            .iter()
            .filter(|h| u5.contains(h))
            .count()
            >= t
    });
    if seeds_ok && keys_ok {
        Ok(u3)
    } else {
        Err(Step::Unmasking)
    }
}

/// Property: random dropouts give exactly the predicted outcome: when every
/// step keeps enough clients and every needed secret keeps `t` shares, the
/// exact sum over the included clients; otherwise `NotEnoughClients` at the
/// predicted step, with no share revealed when that step precedes
/// unmasking. Runs over any field and graph (degree 0 is the complete
/// graph).
pub fn dropouts_property<F: FiniteField>(f: &F, degree: usize, cases: u32) {
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            ..Config::default()
        },
        proptest::test_runner::TestRng::from_seed(
            proptest::test_runner::RngAlgorithm::ChaCha,
            &[7; 32],
        ),
    );
    let strategy = (
        4u64..11,
        1usize..4,
        proptest::collection::vec((0u8..4, 0u8..4), 10),
        0usize..3,
    );
    runner
        .run(&strategy, |(n, len, drops, extra)| {
            let (graph, holders) = if degree == 0 || degree + 1 >= n as usize {
                (GraphChoice::Complete, n as usize)
            } else {
                (GraphChoice::Harary { degree }, degree + 1)
            };
            let t = (holders / 2 + extra).clamp(1, holders);
            let params = SecAggParams::new(
                graph,
                t,
                0,
                masked_sum::secagg::params::ServerModel::SemiHonest,
            );
            let label = format!("prop-{n}-{len}-{drops:?}-{t}-{degree}");
            let cfg = config(f, n, params, len, &label);
            let ins = inputs(f, n, len, &label);
            let mut faults = Faults::new();
            for (c, (p, s)) in (1..=n).zip(&drops) {
                if *p == 0 {
                    faults = faults.drop_from(c, Step::ALL[usize::from(*s)]);
                }
            }
            let report = run(&cfg, &ins, faults.clone(), &label);
            match (predict(&cfg, &faults), &report.output) {
                (Ok(expected), Ok(out)) => {
                    prop_assert_eq!(&out.included, &expected);
                    prop_assert_eq!(&out.sum, &oracle(f, &ins, &expected));
                }
                (
                    Err(at),
                    Err(SumError::Protocol(ProtocolError::NotEnoughClients { step, .. })),
                ) => {
                    prop_assert_eq!(at, *step);
                    if at < Step::Unmasking {
                        prop_assert!(nothing_unmasked(&report));
                    }
                }
                (p, o) => prop_assert!(
                    false,
                    "predicted {p:?}, got {:?}",
                    o.as_ref().map(|o| &o.included)
                ),
            }
            Ok(())
        })
        .unwrap();
}

/// Shamir: any `t` of `n` shares reconstruct, fewer are an error, over
/// any field; error correction fixes `(n - t) / 2` bad shares.
pub fn shamir_suite<F: FiniteField>(f: &F, cases: u32) {
    let mut rng = crate::rng("shamir-suite");
    for _ in 0..cases {
        let n = rng.random_range(1..12usize);
        let t = rng.random_range(1..=n);
        let secret = f.random(&mut rng);
        let ids: Vec<u64> = (1..=n as u64).map(|i| i * 3 + 1).collect();
        let Ok(shares) = shamir::split(f, &secret, t, &ids, &mut rng) else {
            // Only a tiny field makes ids collide modulo p.
            assert!(f.characteristic() <= num_bigint::BigUint::from(3 * n as u64 + 1));
            continue;
        };
        let mut pick = shares.clone();
        for i in (1..pick.len()).rev() {
            pick.swap(i, rng.random_range(0..=i));
        }
        assert_eq!(shamir::reconstruct(f, &pick[..t], t).unwrap(), secret);
        assert!(matches!(
            shamir::reconstruct(f, &pick[..t - 1], t),
            Err(SumError::Protocol(ProtocolError::TooFewShares { .. }))
        ));
        let errors = (n - t) / 2;
        let mut bad = pick.clone();
        for s in bad.iter_mut().take(errors) {
            s.value = f.add(&s.value, &f.one());
        }
        assert_eq!(shamir::decode_with_errors(f, &bad, t).unwrap(), secret);
    }
}

/// Differential test against `vsss-rs` over the `ff` field `G`: shares
/// made by either reconstruct with the other.
pub fn shamir_vs_vsss<G>(f: &field::FfField<G>, cases: u32)
where
    G: ff::PrimeField,
{
    use vsss_rs::{IdentifierPrimeField, ReadableShareSet};
    type VShare<G> = (IdentifierPrimeField<G>, IdentifierPrimeField<G>);
    let mut rng = crate::rng("shamir-vsss");
    for _ in 0..cases {
        let n = rng.random_range(2..10usize);
        let t = rng.random_range(2..=n);
        let secret = f.random(&mut rng);
        let ids: Vec<u64> = (1..=n as u64).map(|i| i * 7 + 2).collect();
        // vsss-rs splits, we reconstruct.
        let theirs: Vec<VShare<G>> = vsss_rs::shamir::split_secret_with_ids::<VShare<G>>(
            t,
            n,
            &IdentifierPrimeField(secret),
            &mut rng,
            ids.iter().map(|i| IdentifierPrimeField(G::from(*i))),
        )
        .unwrap();
        let ours: Vec<Share<G>> = theirs
            .iter()
            .zip(&ids)
            .map(|((id, v), i)| {
                assert_eq!(id.0, G::from(*i));
                Share { id: *i, value: v.0 }
            })
            .collect();
        assert_eq!(shamir::reconstruct(f, &ours[n - t..], t).unwrap(), secret);
        // We split, vsss-rs reconstructs.
        let mine = shamir::split(f, &secret, t, &ids, &mut rng).unwrap();
        let back: Vec<VShare<G>> = mine
            .iter()
            .map(|s| {
                (
                    IdentifierPrimeField(G::from(s.id)),
                    IdentifierPrimeField(s.value),
                )
            })
            .collect();
        assert_eq!(back[..t].to_vec().combine().unwrap().0, secret);
        // Below the threshold both refuse or disagree with the secret.
        assert!(shamir::reconstruct(f, &mine[..t - 1], t).is_err());
    }
}

/// The id used for shares of client `c`.
pub fn share_id(c: ClientId) -> u64 {
    c + 1
}

/// A 32-byte secret share round trip (used by the P3 transcript test).
pub fn parse_share(bytes: &[u8]) -> SecretShare {
    SecretShare::from_bytes(bytes).unwrap()
}

// The fuzz bodies live in `crate::fuzz_secagg`, with the recorded honest
// run that makes them fast; their historical paths stay here.
pub use crate::fuzz_secagg::{
    fuzz_client_envelope, fuzz_secret_share, fuzz_server_envelope, fuzz_server_receive,
};

/// A hand-driven run: the server and every client as state machines, each
/// client with its own labelled RNG (so that a test can play a colluder
/// whose secrets it regenerates with [`Harness::secrets`]), every message
/// kept.
pub struct Harness<F: FiniteField> {
    /// The session.
    pub cfg: Arc<SessionConfig<F>>,
    /// The server.
    pub server: masked_sum::secagg::server::Server<F>,
    /// The clients still running.
    pub clients: std::collections::BTreeMap<ClientId, Client<F>>,
    /// Each client's RNG.
    pub rngs: std::collections::BTreeMap<ClientId, rand_chacha::ChaCha8Rng>,
    /// Client messages not yet delivered to the server.
    pub pending: Vec<ClientEnvelope>,
    /// Every client message produced, in order.
    pub sent: Vec<ClientEnvelope>,
    /// The label the client RNGs derive from.
    pub label: String,
}

impl<F: FiniteField> std::fmt::Debug for Harness<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("label", &self.label)
            .finish_non_exhaustive()
    }
}

impl<F: FiniteField> Harness<F> {
    /// Starts every client of `inputs` (AdvertiseKeys messages pending).
    pub fn new(
        cfg: Arc<SessionConfig<F>>,
        inputs: &[(ClientId, Vec<F::Elem>)],
        label: &str,
    ) -> Self {
        let mut h = Self {
            server: masked_sum::secagg::server::Server::new(cfg.clone()),
            cfg,
            clients: std::collections::BTreeMap::new(),
            rngs: std::collections::BTreeMap::new(),
            pending: Vec::new(),
            sent: Vec::new(),
            label: label.to_string(),
        };
        for (id, input) in inputs {
            let mut rng = Self::client_rng(label, *id);
            let (c, msg) = Client::new(
                h.cfg.clone(),
                *id,
                input.clone(),
                &mut RoundLedger::default(),
                &mut rng,
            )
            .unwrap();
            h.clients.insert(*id, c);
            h.rngs.insert(*id, rng);
            h.sent.push(msg.clone());
            h.pending.push(msg);
        }
        h
    }

    fn client_rng(label: &str, id: ClientId) -> rand_chacha::ChaCha8Rng {
        crate::rng(&format!("{label}/client-{id}"))
    }

    /// The secrets client `id` of a harness labelled `label` drew.
    pub fn secrets(label: &str, id: ClientId) -> masked_sum::secagg::client::ClientSecrets {
        masked_sum::secagg::client::ClientSecrets::generate(&mut Self::client_rng(label, id))
    }

    /// Delivers the pending messages, except those of `skip`.
    pub fn deliver(&mut self, skip: &[ClientId]) {
        for m in core::mem::take(&mut self.pending) {
            if !skip.contains(&m.client) {
                let _ = self.server.receive(m);
            }
        }
    }

    /// Delivers the pending messages and closes the step; returns the
    /// server's messages.
    pub fn step(&mut self, skip: &[ClientId]) -> Vec<ServerEnvelope> {
        self.deliver(skip);
        match self.server.advance().unwrap() {
            masked_sum::secagg::server::Advance::Send(m) => m,
            masked_sum::secagg::server::Advance::Finished(_) => panic!("finished early"),
        }
    }

    /// Client `id` handles `msg`; its reply is queued.
    pub fn answer_one(&mut self, msg: &ServerEnvelope) -> Result<ClientEnvelope, SumError> {
        let id = msg.client;
        let c = self.clients.get_mut(&id).unwrap();
        let rng = self.rngs.get_mut(&id).unwrap();
        let r = c.handle(msg, rng);
        if let Ok(m) = &r {
            self.sent.push(m.clone());
            self.pending.push(m.clone());
        }
        r
    }

    /// Every client of `msgs` handles its message (errors are returned).
    pub fn answer(&mut self, msgs: &[ServerEnvelope]) -> Vec<(ClientId, SumError)> {
        msgs.iter()
            .filter_map(|m| self.answer_one(m).err().map(|e| (m.client, e)))
            .collect()
    }

    /// Runs to the server's unmasking requests with nobody dropping:
    /// returns them.
    pub fn to_unmasking(&mut self) -> Vec<ServerEnvelope> {
        let cons = self.to_consistency();
        assert!(self.answer(&cons).is_empty());
        self.step(&[])
    }

    /// Runs to the server's consistency requests (the alive set to attest)
    /// with nobody dropping: returns them.
    pub fn to_consistency(&mut self) -> Vec<ServerEnvelope> {
        let dir = self.step(&[]);
        assert!(self.answer(&dir).is_empty());
        let req = self.step(&[]);
        assert!(self.answer(&req).is_empty());
        self.step(&[])
    }

    /// Flips the lowest bit of the first chunk of the share of `owner`'s
    /// secret (its self-mask seed if `seed`, else its mask key) in
    /// `responder`'s pending unmasking response: a peer sending a bad share
    /// (docs/threat-model.md S4).
    pub fn corrupt_share(&mut self, responder: ClientId, owner: ClientId, seed: bool) {
        let m = self
            .pending
            .iter_mut()
            .find(|m| m.client == responder)
            .unwrap();
        let masked_sum::secagg::messages::ClientBody::UnmaskingResponse(r) = &mut m.body else {
            panic!("{responder} has no pending unmasking response")
        };
        let list = if seed {
            &mut r.seed_shares
        } else {
            &mut r.key_shares
        };
        let s = list.iter_mut().find(|s| s.owner == owner).unwrap();
        s.share[8] ^= 1;
    }

    /// Runs every remaining step with every client answering honestly
    /// (an honest client's error panics), then finishes.
    pub fn complete(&mut self) -> Result<masked_sum::secagg::AggregationOutput<F::Elem>, SumError> {
        loop {
            self.deliver(&[]);
            match self.server.advance()? {
                masked_sum::secagg::server::Advance::Send(msgs) => {
                    let errors = self.answer(&msgs);
                    assert!(errors.is_empty(), "an honest client failed: {errors:?}");
                }
                masked_sum::secagg::server::Advance::Finished(o) => return Ok(o),
            }
        }
    }

    /// Delivers the pending messages and finishes.
    pub fn finish(&mut self) -> Result<masked_sum::secagg::AggregationOutput<F::Elem>, SumError> {
        self.deliver(&[]);
        match self.server.advance()? {
            masked_sum::secagg::server::Advance::Finished(o) => Ok(o),
            masked_sum::secagg::server::Advance::Send(_) => panic!("not at the last step"),
        }
    }
}
