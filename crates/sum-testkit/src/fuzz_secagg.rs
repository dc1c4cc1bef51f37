//! Fuzz harness bodies for the secure-aggregation protocol of
//! `masked-sum` ([`masked_sum::secagg`]), re-exported as
//! `sum_testkit::secagg::fuzz_*`.
//!
//! Every body runs one session of three clients over GF(101) (threshold 2,
//! complete graph, vectors of length 2). Running the clients for real costs
//! milliseconds per input (X25519 and AEAD at every step), which would cap
//! a campaign at a few hundred executions a second. A client is a
//! function of its seeded RNG and of the messages it is handed, so its
//! answers are recorded by history (`LazyClient`): a client answers
//! from the record while its history has been seen before, and otherwise
//! is rebuilt from its RNG, replayed through its history and handed the
//! message for real. Every run is exactly the run of real clients; the
//! honest run of each session ([`Honest`]) and the common detours (the
//! victim's message refused) cost nothing after their first time. The
//! server always runs for real.

use masked_sum::ProtocolError;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, OnceLock};

use field::{Field, FiniteField, Fp64};
use masked_sum::SumError;
use masked_sum::secagg::client::{Client, RoundLedger};
use masked_sum::secagg::messages::{ClientBody, ClientEnvelope, ServerEnvelope};
use masked_sum::secagg::server::{Advance, Server};
use masked_sum::secagg::shamir::SecretShare;
use masked_sum::secagg::{AggregationOutput, ClientId, SessionConfig};
use rand_chacha::ChaCha8Rng;

use crate::secagg::{Harness, config, inputs, oracle};

/// The clients of a fuzz session.
const CLIENTS: u64 = 3;
/// The input length.
const LEN: usize = 2;

/// An element of the session's field.
type Elem = <Fp64 as Field>::Elem;

/// The protocol's steps: every body walks them all.
const STEPS: usize = masked_sum::secagg::Step::ALL.len();

fn field() -> Fp64 {
    Fp64::new(101).unwrap_or_else(|_| unreachable!("101 is prime"))
}

/// The honest run of the fuzz session named by a label: every message of
/// every step, recorded once per process.
#[derive(Debug)]
pub struct Honest {
    label: &'static str,
    cfg: Arc<SessionConfig<Fp64>>,
    inputs: Vec<(ClientId, Vec<Elem>)>,
    /// Client messages of every step, by client.
    client: Vec<BTreeMap<ClientId, ClientEnvelope>>,
    /// The server's messages after every step but the last, by receiving
    /// client.
    server: Vec<BTreeMap<ClientId, ServerEnvelope>>,
}

impl Honest {
    fn record(label: &'static str) -> Self {
        let f = field();
        let params = masked_sum::secagg::params::SecAggParams::new(
            masked_sum::secagg::params::GraphChoice::Complete,
            2,
            0,
            masked_sum::secagg::params::ServerModel::SemiHonest,
        );
        let cfg = config(&f, CLIENTS, params, LEN, label);
        let ins = inputs(&f, CLIENTS, LEN, label);
        let mut h = Harness::new(cfg.clone(), &ins, label);
        let by_client =
            |msgs: &[ClientEnvelope]| msgs.iter().map(|m| (m.client, m.clone())).collect();
        let mut client = vec![by_client(&h.pending)];
        let mut server = Vec::new();
        for _ in 1..STEPS {
            let msgs = h.step(&[]);
            server.push(msgs.iter().map(|m| (m.client, m.clone())).collect());
            assert!(
                h.answer(&msgs).is_empty(),
                "{label}: an honest client failed"
            );
            client.push(by_client(&h.pending));
        }
        let out = h.finish().unwrap();
        assert_eq!(out.included, (1..=CLIENTS).collect::<BTreeSet<_>>());
        assert_eq!(out.sum, oracle(&f, &ins, &out.included));
        Self {
            label,
            cfg,
            inputs: ins,
            client,
            server,
        }
    }

    /// The honest run of the session `label` (one of the fuzz bodies').
    pub fn get(label: &'static str) -> &'static Self {
        static CELLS: OnceLock<std::sync::Mutex<BTreeMap<&'static str, &'static Honest>>> =
            OnceLock::new();
        let cells = CELLS.get_or_init(Default::default);
        let mut map = cells
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        map.entry(label)
            .or_insert_with(|| Box::leak(Box::new(Self::record(label))))
    }

    /// The honest message of `client` at `step` (0 to `STEPS - 1`),
    /// serialized.
    pub fn client_bytes(&self, step: usize, client: ClientId) -> Vec<u8> {
        self.client[step][&client].to_bytes().unwrap()
    }

    /// The server's honest message to `client` after `step` (0 to
    /// `STEPS - 2`),
    /// serialized.
    pub fn server_bytes(&self, step: usize, client: ClientId) -> Vec<u8> {
        self.server[step][&client].to_bytes().unwrap()
    }

    fn rng(&self, id: ClientId) -> ChaCha8Rng {
        crate::rng(&format!("{}/client-{id}", self.label))
    }
}

/// What a client answered after a history of messages, by session label,
/// client and history (serialized): a client is a function of its seeded
/// RNG and the messages it was handed, so a recorded answer is exact.
type Memo = std::collections::HashMap<(&'static str, ClientId, Vec<u8>), Reply>;

/// A client's answer to one message.
type Reply = Result<ClientEnvelope, SumError>;

/// The most answers [`Memo`] keeps (about 10 MB); beyond, clients run.
const MEMO_MAX: usize = 20_000;

fn memo() -> std::sync::MutexGuard<'static, Memo> {
    static MEMO: OnceLock<std::sync::Mutex<Memo>> = OnceLock::new();
    MEMO.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A client that answers from the recorded answers ([`Memo`]) while its
/// history has been seen before, and otherwise is rebuilt from its seeded
/// RNG, replayed through its history and handed the message for real
/// (recording the answer).
struct LazyClient {
    id: ClientId,
    /// The messages handed so far, serialized with their lengths.
    history: Vec<u8>,
    /// The messages handed so far.
    handed: Vec<ServerEnvelope>,
    real: Option<(Client<Fp64>, ChaCha8Rng)>,
}

impl LazyClient {
    fn new(id: ClientId) -> Self {
        Self {
            id,
            history: Vec::new(),
            handed: Vec::new(),
            real: None,
        }
    }

    /// The real client in the state its history left it in.
    fn materialize(&mut self, hon: &Honest) -> &mut (Client<Fp64>, ChaCha8Rng) {
        let (id, handed) = (self.id, &self.handed);
        self.real.get_or_insert_with(|| {
            let mut rng = hon.rng(id);
            let input = hon.inputs.iter().find(|(c, _)| *c == id).unwrap().1.clone();
            let (mut c, first) = Client::new(
                hon.cfg.clone(),
                id,
                input,
                &mut RoundLedger::default(),
                &mut rng,
            )
            .unwrap();
            assert_eq!(
                first, hon.client[0][&id],
                "the recorded run is not reproducible"
            );
            for m in handed {
                let _ = c.handle(m, &mut rng);
            }
            (c, rng)
        })
    }

    fn handle(&mut self, hon: &Honest, msg: &ServerEnvelope) -> Reply {
        let bytes = msg.to_bytes().unwrap();
        self.history
            .extend_from_slice(&(bytes.len() as u64).to_le_bytes());
        self.history.extend_from_slice(&bytes);
        let key = (hon.label, self.id, self.history.clone());
        if self.real.is_none()
            && let Some(r) = memo().get(&key)
        {
            self.handed.push(msg.clone());
            return r.clone();
        }
        let (c, rng) = self.materialize(hon);
        let r = c.handle(msg, rng);
        self.handed.push(msg.clone());
        let mut memo = memo();
        if memo.len() < MEMO_MAX {
            memo.insert(key, r.clone());
        }
        r
    }
}

/// A run of the fuzz session: a real server, lazy clients, and the masked
/// inputs the server accepted and the clients produced (for the oracle).
struct Run {
    hon: &'static Honest,
    server: Server<Fp64>,
    clients: BTreeMap<ClientId, LazyClient>,
    pending: Vec<ClientEnvelope>,
    /// Masked inputs the server accepted, by the client they name.
    accepted: BTreeMap<ClientId, Vec<u8>>,
    /// Masked inputs the clients produced.
    produced: BTreeMap<ClientId, Vec<u8>>,
}

fn masked(msg: &ClientEnvelope) -> Option<&[u8]> {
    match &msg.body {
        ClientBody::MaskedInput(mi) => Some(&mi.elements),
        _ => None,
    }
}

impl Run {
    fn new(label: &'static str) -> Self {
        let hon = Honest::get(label);
        Self {
            hon,
            server: Server::new(hon.cfg.clone()),
            clients: (1..=CLIENTS).map(|c| (c, LazyClient::new(c))).collect(),
            pending: hon.client[0].values().cloned().collect(),
            accepted: BTreeMap::new(),
            produced: BTreeMap::new(),
        }
    }

    fn receive(&mut self, msg: ClientEnvelope) -> Result<(), SumError> {
        let kept = masked(&msg).map(|m| (msg.client, m.to_vec()));
        let r = self.server.receive(msg);
        if r.is_ok()
            && let Some((c, m)) = kept
        {
            self.accepted.insert(c, m);
        }
        r
    }

    fn receive_bytes(&mut self, bytes: &[u8]) -> Result<(), SumError> {
        let r = self.server.receive_bytes(bytes);
        if r.is_ok() {
            // Accepted, so it parses: record what the server took.
            let msg = ClientEnvelope::parse(bytes, usize::MAX).unwrap();
            if let Some(m) = masked(&msg) {
                self.accepted.insert(msg.client, m.to_vec());
            }
        }
        r
    }

    fn deliver(&mut self) {
        for m in core::mem::take(&mut self.pending) {
            let _ = self.receive(m);
        }
    }

    /// Every client the server wrote to answers (a client the server names
    /// that is not in the session is skipped: the server must not do that).
    fn answer(&mut self, msgs: &[ServerEnvelope]) {
        for m in msgs {
            let c = self
                .clients
                .get_mut(&m.client)
                .unwrap_or_else(|| panic!("the server wrote to client {}", m.client));
            if let Ok(reply) = c.handle(self.hon, m) {
                if let Some(y) = masked(&reply) {
                    self.produced.insert(reply.client, y.to_vec());
                }
                self.pending.push(reply);
            }
        }
    }

    /// Delivers, closes the step and lets the clients answer; the result
    /// of the server's `advance`.
    fn step(&mut self) -> Result<Option<AggregationOutput<Elem>>, SumError> {
        self.deliver();
        match self.server.advance()? {
            Advance::Send(msgs) => {
                self.answer(&msgs);
                Ok(None)
            }
            Advance::Finished(out) => Ok(Some(out)),
        }
    }

    /// Runs to the end: the output, or the server's error.
    fn finish(&mut self) -> Result<AggregationOutput<Elem>, SumError> {
        loop {
            if let Some(out) = self.step()? {
                return Ok(out);
            }
        }
    }

    /// The invariant of a finished run: the sum is the included clients'
    /// inputs plus exactly what was changed in their masked inputs between
    /// the client and the server (the masking is linear, and every mask is
    /// removed by the honest clients' shares). Nothing else a network can
    /// do to these messages changes the sum: it makes a client abort or
    /// drop, or the server refuse or abort.
    fn check(&self, out: &AggregationOutput<Elem>) {
        let f = field();
        let mut want = oracle(&f, &self.hon.inputs, &out.included);
        let w = f.byte_len();
        for c in &out.included {
            let (Some(a), Some(p)) = (self.accepted.get(c), self.produced.get(c)) else {
                panic!("client {c} included without an accepted and a produced masked input");
            };
            for ((s, a), p) in want.iter_mut().zip(a.chunks(w)).zip(p.chunks(w)) {
                let a = f.from_bytes(a).unwrap();
                let p = f.from_bytes(p).unwrap();
                *s = f.add(s, &f.sub(&a, &p));
            }
        }
        assert_eq!(out.sum, want, "the sum is not what the server accepted");
        // Only a client that went missing during unmasking can be both
        // (docs/threat-model.md D3: its self-mask is rebuilt from its shares; the
        // same for one gone after the consistency step).
        for (c, step) in &out.dropped {
            assert!(
                *step >= masked_sum::secagg::Step::ConsistencyCheck || !out.included.contains(c),
                "client {c} dropped at {step} and included"
            );
        }
    }
}

/// Applies the fuzz input to a real message: pairs `(position, xor)` (the
/// position scaled by 7 modulo the length, so that one byte reaches every
/// offset of a short message), and a final odd byte truncates that many
/// bytes.
pub fn mutate(bytes: &mut Vec<u8>, data: &[u8]) {
    for pair in data.chunks(2) {
        match pair {
            [p, x] if !bytes.is_empty() => {
                let i = usize::from(*p) * 7 % bytes.len();
                bytes[i] ^= *x;
            }
            [n] => bytes.truncate(bytes.len().saturating_sub(usize::from(*n))),
            _ => {}
        }
    }
}

/// Fuzz body: the server's message to client 1 after step
/// `data[0] % (STEPS - 1)`,
/// mutated by the rest of `data` ([`mutate`]), parsed and handed to
/// client 1 in the state the honest run left it in.
///
/// Invariants: no panic; what parses re-serializes to bytes that parse to
/// the same message (not necessarily the same bytes: postcard accepts
/// overlong varints); a message of another session, round or client is
/// refused; a reply answers the step the message asked for, in this
/// session, from client 1; and a message refused without aborting the
/// client (a wrong step, session, round or client) leaves it unchanged:
/// the honest message then gets exactly the honest reply.
pub fn fuzz_server_envelope(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let step = usize::from(which) % (STEPS - 1);
    let hon = Honest::get("fuzz-server-envelope");
    let mut bytes = hon.server_bytes(step, 1);
    mutate(&mut bytes, rest);
    let Ok(msg) = ServerEnvelope::parse(&bytes, 1 << 16) else {
        return;
    };
    let again = ServerEnvelope::parse(&msg.to_bytes().unwrap(), 1 << 16).unwrap();
    assert_eq!(again, msg, "a parsed message must round-trip");
    let mut c = LazyClient::new(1);
    for s in 0..step {
        c.handle(hon, &hon.server[s][&1]).unwrap();
    }
    let ctx = *hon.cfg.context();
    match c.handle(hon, &msg) {
        Ok(reply) => {
            assert_eq!(reply.client, 1);
            assert_eq!(reply.context(), ctx);
            assert_eq!(reply.body.step(), msg.body.step());
            assert!(msg.client == 1 && msg.context() == ctx);
        }
        Err(
            SumError::Protocol(ProtocolError::MessageRejected { .. })
            | SumError::Protocol(ProtocolError::UnexpectedMessage { .. }),
        ) => {
            let (c, rng) = c.materialize(hon);
            assert!(!c.is_aborted(), "a refusal must not abort the client");
            let reply = c.handle(&hon.server[step][&1], rng).unwrap();
            assert_eq!(
                reply,
                hon.client[step + 1][&1],
                "a refusal changed the client"
            );
        }
        Err(_) => {
            assert!(msg.client == 1 && msg.context() == ctx, "the wrong error");
            assert!(
                c.materialize(hon).0.is_aborted(),
                "an error must abort the client"
            );
        }
    }
}

/// Fuzz body: client 2's message of step `data[0] % STEPS`, mutated by the
/// rest of `data` ([`mutate`]), fed to the server at that step (before
/// the other clients' messages, and again after them), then the run goes
/// on with the honest clients to the end.
///
/// Invariants: no panic; what parses re-serializes to bytes that parse to
/// the same message; and a run that finishes sums exactly the inputs of
/// the clients it names, plus what was changed in their masked inputs on
/// the way (a mutated masked input is a valid one, and the server is right
/// to accept it: the protocol hides inputs, it does not authenticate
/// them). Mutations of any other message must not change the sum.
pub fn fuzz_client_envelope(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let step = usize::from(which) % STEPS;
    let mut run = Run::new("fuzz-client-envelope");
    for _ in 0..step {
        assert!(run.step().unwrap().is_none());
    }
    let victim = run.pending.iter().position(|m| m.client == 2).unwrap();
    let mut bytes = run.pending.remove(victim).to_bytes().unwrap();
    mutate(&mut bytes, rest);
    if let Ok(msg) = ClientEnvelope::parse(&bytes, 1 << 16) {
        let again = ClientEnvelope::parse(&msg.to_bytes().unwrap(), 1 << 16).unwrap();
        assert_eq!(again, msg, "a parsed message must round-trip");
    }
    let _ = run.receive_bytes(&bytes);
    run.deliver();
    let _ = run.receive_bytes(&bytes);
    if let Ok(out) = run.finish() {
        run.check(&out);
    }
}

/// Fuzz body: `data` handed to the server as a client's message at every
/// step, ahead of the honest clients' messages.
///
/// Invariants: no panic, and a run that finishes sums what the server
/// accepted, as in [`fuzz_client_envelope`] (so bytes that the server
/// takes for some client's message are accounted for exactly).
pub fn fuzz_server_receive(data: &[u8]) {
    let mut run = Run::new("fuzz-server-receive");
    for _ in 0..STEPS {
        let _ = run.receive_bytes(data);
        match run.step() {
            Ok(None) => {}
            Ok(Some(out)) => return run.check(&out),
            Err(_) => return,
        }
    }
    unreachable!("the protocol has {STEPS} steps");
}

/// Fuzz body: share decoding never panics, and what decodes re-encodes to
/// exactly the input (the encoding is fixed-width and canonical).
pub fn fuzz_secret_share(data: &[u8]) {
    if let Ok(s) = SecretShare::from_bytes(data) {
        assert_eq!(&s.to_bytes()[..], data);
    }
}
