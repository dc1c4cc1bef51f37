//! Sparse secure aggregation from Python, for any federated system
//! (the `syndrome-agg` crate): a sketch built from `(key, count)` pairs,
//! masked by the dealer's sealed seeds or by pairwise X25519 masks, sent
//! as bytes, summed by the server's aggregator and decoded. Every
//! message is the Rust crates' own bytes, so a Python party and a Rust
//! party of one round interoperate.

use masked_sum::masking::dealer::{SealKey, open_seed};
use masked_sum::masking::pairwise::{MaskKeyPair, MaskPublicKey};
use masked_sum::{RoundContext, SessionId};
use num_bigint::{BigInt, BigUint};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use syndrome_agg::{
    Aggregator as SketchAggregator, AnyParams, AnySketch, CountPolicy, LinearParams, LinearSketch,
    MaskedSketch, Scheme, SketchParams as RustParams, ValidAnyParams,
};

use crate::convert::{integer, natural, to_int};
use crate::errors::{self, ConfigError, DataError, ProtocolError};

/// Adds the aggregation classes and functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<SketchParams>()?;
    m.add_class::<Sketch>()?;
    m.add_class::<KeyPair>()?;
    m.add_class::<Aggregator>()?;
    m.add_function(wrap_pyfunction!(deal, m)?)?;
    m.add_function(wrap_pyfunction!(open_dealt_seed, m)?)?;
    Ok(())
}

/// Exactly 32 bytes (a session id, a key, a seed).
fn bytes32(what: &str, b: &[u8]) -> PyResult<[u8; 32]> {
    b.try_into()
        .map_err(|_| DataError::new_err(format!("{what} must be 32 bytes, got {}", b.len())))
}

/// The round a message belongs to: the session's 32-byte id and the
/// round number, never repeated within the session.
pub(crate) fn context(session: &[u8], round: u64) -> PyResult<RoundContext> {
    Ok(RoundContext {
        session: SessionId(bytes32("session", session)?),
        round,
    })
}

/// The generator of a draw: seeded (reproducible, for tests and known
/// answers) or the operating system's.
pub(crate) fn generator(seed: Option<&[u8]>) -> PyResult<ChaCha20Rng> {
    Ok(match seed {
        Some(s) => ChaCha20Rng::from_seed(bytes32("seed", s)?),
        None => ChaCha20Rng::from_rng(&mut rand::rng()),
    })
}

/// The public parameters of a round's sketches: at most `capacity`
/// distinct keys in the sum, keys in `[1, key_domain]`, counts summing
/// to at most `max_count` (or, `signed`, of absolute value at most it),
/// `extra` check syndromes. The field is the cheapest that holds them.
#[pyclass(module = "mufc._native", frozen)]
#[derive(Debug)]
pub(crate) struct SketchParams {
    params: ValidAnyParams,
}

impl SketchParams {
    pub(crate) fn inner(&self) -> &ValidAnyParams {
        &self.params
    }
}

#[pymethods]
impl SketchParams {
    #[new]
    #[pyo3(signature = (capacity, key_domain, max_count=None, signed=false, extra=None))]
    fn new(
        capacity: usize,
        key_domain: &Bound<'_, PyAny>,
        max_count: Option<&Bound<'_, PyAny>>,
        signed: bool,
        extra: Option<usize>,
    ) -> PyResult<Self> {
        let mut p = RustParams::new(capacity, natural(key_domain)?);
        if let Some(bound) = max_count {
            let bound = natural(bound)?;
            p = p.with_counts(if signed {
                CountPolicy::signed(bound)
            } else {
                CountPolicy::unsigned(bound)
            });
        } else if signed {
            return Err(ConfigError::new_err("signed counts need max_count"));
        }
        if let Some(e) = extra {
            p = p.with_extra(e);
        }
        let params = AnyParams::new(Scheme::FieldKeys, p)
            .validate()
            .map_err(errors::sketch)?;
        Ok(Self { params })
    }

    /// The most distinct keys a sum may hold and still decode.
    #[getter]
    fn capacity(&self) -> usize {
        self.params.sketch_params().capacity()
    }

    /// The field elements of a message (`2 capacity + extra`).
    #[getter]
    fn num_elements(&self) -> usize {
        self.params.num_elements()
    }

    /// The field's modulus.
    #[getter]
    fn modulus<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_int(py, &self.params.modulus())
    }

    /// The largest message these parameters allow, in bytes.
    #[getter]
    fn max_message_len(&self) -> usize {
        self.params.max_frame_len()
    }

    fn __repr__(&self) -> String {
        let p = self.params.sketch_params();
        format!(
            "SketchParams(capacity={}, key_domain={}, extra={}, modulus_bits={})",
            p.capacity(),
            p.key_domain(),
            p.extra(),
            self.params.modulus_bits()
        )
    }
}

/// A sketch of a sparse vector: its `(key, count)` entries encoded as
/// syndromes. Sketches add, subtract and decode; masked, they are what a
/// client sends.
#[pyclass(module = "mufc._native")]
#[derive(Debug)]
pub(crate) struct Sketch {
    sketch: AnySketch,
}

/// The entries of a decoded sum, as Python integers.
pub(crate) fn entries_of<'py>(
    py: Python<'py>,
    s: &AnySketch,
) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    let decoded = py.detach(|| s.decode()).map_err(errors::sketch)?;
    decoded
        .into_entries()
        .into_iter()
        .map(|(k, c)| Ok((to_int(py, &k)?, to_int(py, &c)?)))
        .collect()
}

impl Sketch {
    pub(crate) fn inner(&self) -> &AnySketch {
        &self.sketch
    }
}

#[pymethods]
impl Sketch {
    /// The sketch of `entries`, `(key, count)` pairs (a key named twice
    /// adds up).
    #[new]
    fn new(
        params: &SketchParams,
        entries: Vec<(Bound<'_, PyAny>, Bound<'_, PyAny>)>,
    ) -> PyResult<Self> {
        let pairs = entries
            .iter()
            .map(|(k, c)| Ok((natural(k)?, integer(c)?)))
            .collect::<PyResult<Vec<(BigUint, BigInt)>>>()?;
        let sketch = AnySketch::encode(&params.params, pairs).map_err(errors::sketch)?;
        Ok(Self { sketch })
    }

    /// Adds `other` (a sketch of the same parameters).
    fn add(&mut self, other: &Self) -> PyResult<()> {
        self.sketch.add(&other.sketch).map_err(errors::sketch)
    }

    /// Subtracts `other` (a sketch of the same parameters).
    fn subtract(&mut self, other: &Self) -> PyResult<()> {
        self.sketch.subtract(&other.sketch).map_err(errors::sketch)
    }

    /// The vector's entries, by key: raises `DecodeError` when the sketch
    /// holds more keys than the capacity (never a wrong vector).
    fn decode<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        entries_of(py, &self.sketch)
    }

    /// The message of client `client_id` in round `(session, round)`
    /// under pairwise masks: the sketch plus a mask agreed with each of
    /// `peers` (`(id, public key)` pairs of the round's other clients).
    /// Every client of the round must send.
    fn mask_pairwise<'py>(
        &self,
        py: Python<'py>,
        key: &KeyPair,
        client_id: u64,
        peers: Vec<(u64, Vec<u8>)>,
        session: &[u8],
        round: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ctx = context(session, round)?;
        let peers = peers
            .iter()
            .map(|(id, k)| Ok((*id, MaskPublicKey(bytes32("a public key", k)?))))
            .collect::<PyResult<Vec<_>>>()?;
        let masked = self
            .sketch
            .mask_pairwise(&key.pair, client_id, &peers, ctx)
            .map_err(errors::sketch)?;
        message_bytes(py, &masked)
    }

    /// The message of client `client_id` under dealt masks: the sketch
    /// plus the mask expanded from the 32-byte `seed` the dealer sealed to
    /// it (see `open_dealt_seed`).
    fn mask_seeded<'py>(
        &self,
        py: Python<'py>,
        seed: &[u8],
        client_id: u64,
        session: &[u8],
        round: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ctx = context(session, round)?;
        let masked = self
            .sketch
            .mask_seeded(&bytes32("seed", seed)?, client_id, ctx)
            .map_err(errors::sketch)?;
        message_bytes(py, &masked)
    }

    fn __repr__(&self) -> String {
        format!("Sketch(elements={})", self.sketch.params().num_elements())
    }
}

/// A masked sketch's wire bytes.
fn message_bytes<'py>(
    py: Python<'py>,
    m: &MaskedSketch<AnySketch>,
) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = m.to_frame().to_bytes().map_err(errors::sketch)?;
    Ok(PyBytes::new(py, &bytes))
}

/// A client's X25519 key pair for pairwise masks (the secret is wiped
/// when the object goes, and never printed).
#[pyclass(module = "mufc._native", frozen)]
#[derive(Debug)]
pub(crate) struct KeyPair {
    pair: MaskKeyPair,
}

#[pymethods]
impl KeyPair {
    /// A new key pair: from the operating system's randomness, or from a
    /// 32-byte `secret` (to restore a stored one).
    #[new]
    #[pyo3(signature = (secret=None))]
    fn new(secret: Option<&[u8]>) -> PyResult<Self> {
        let pair = match secret {
            Some(s) => MaskKeyPair::from_secret_bytes(bytes32("secret", s)?),
            None => MaskKeyPair::generate(&mut rand::rng()),
        };
        Ok(Self { pair })
    }

    /// The 32-byte public key the other clients of a round need.
    #[getter]
    fn public_key<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.pair.public_key().0)
    }

    /// The 32-byte secret, to store the pair (keep it as a secret).
    fn secret_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.pair.secret_bytes()[..])
    }

    fn __repr__(&self) -> String {
        format!(
            "KeyPair(public_key={:02x?})",
            &self.pair.public_key().0[..4]
        )
    }
}

/// The dealer's seals by client, and its correction message.
type Dealt<'py> = (Vec<(u64, Bound<'py, PyBytes>)>, Bound<'py, PyBytes>);

/// The dealer's part of a round: a fresh seed sealed to each client of
/// `ring` (`(id, key)` pairs, each key the 32 bytes the client shares
/// with the dealer) and the correction message, from client id
/// `correction_id`, that the server adds so that the masks cancel.
/// Returns `(seals, correction)`: `seals` maps each client id to the
/// bytes only that client can open. `seed` (32 bytes) makes the draw
/// reproducible; without it the draw is the operating system's.
#[pyfunction]
#[pyo3(signature = (params, session, round, ring, correction_id=0, seed=None))]
fn deal<'py>(
    py: Python<'py>,
    params: &SketchParams,
    session: &[u8],
    round: u64,
    ring: Vec<(u64, Vec<u8>)>,
    correction_id: u64,
    seed: Option<&[u8]>,
) -> PyResult<Dealt<'py>> {
    let ctx = context(session, round)?;
    let keys = ring
        .iter()
        .map(|(id, k)| Ok((*id, SealKey::from_secret_bytes(bytes32("a dealer key", k)?))))
        .collect::<PyResult<Vec<_>>>()?;
    let refs: Vec<(u64, &SealKey)> = keys.iter().map(|(id, k)| (*id, k)).collect();
    let mut rng = generator(seed)?;
    let (sealed, correction) = AnySketch::deal(&params.params, ctx, &refs, correction_id, &mut rng)
        .map_err(errors::sketch)?;
    let seals = sealed
        .into_iter()
        .map(|(id, bytes)| (id, PyBytes::new(py, &bytes)))
        .collect();
    Ok((seals, message_bytes(py, &correction)?))
}

/// Opens the seed the dealer sealed to client `client_id` in round
/// `(session, round)`, under the 32-byte `key` it shares with the dealer;
/// `ring` is the ids of the round's clients, as the dealer dealt them.
/// Raises `ProtocolError` for a seal that is not the dealer's for this
/// client, round and ring.
#[pyfunction]
fn open_dealt_seed<'py>(
    py: Python<'py>,
    key: &[u8],
    session: &[u8],
    round: u64,
    client_id: u64,
    ring: Vec<u64>,
    sealed: &[u8],
) -> PyResult<Bound<'py, PyBytes>> {
    let ctx = context(session, round)?;
    let key = SealKey::from_secret_bytes(bytes32("key", key)?);
    let seed =
        open_seed(&key, &ctx, client_id, &ring, sealed).map_err(|e| errors::sketch(e.into()))?;
    Ok(PyBytes::new(py, &seed[..]))
}

/// The server's side of a round: takes each client's message (bytes),
/// refusing one of another round, parameters or a client already
/// counted, and decodes the sum once at least `min_clients` sent.
#[pyclass(module = "mufc._native")]
#[derive(Debug)]
pub(crate) struct Aggregator {
    params: ValidAnyParams,
    inner: Option<SketchAggregator<AnySketch>>,
}

#[pymethods]
impl Aggregator {
    #[new]
    fn new(
        params: &SketchParams,
        session: &[u8],
        round: u64,
        min_clients: usize,
    ) -> PyResult<Self> {
        let ctx = context(session, round)?;
        Ok(Self {
            params: params.params.clone(),
            inner: Some(SketchAggregator::new(&params.params, ctx, min_clients)),
        })
    }

    /// Takes one client's message.
    fn accept(&mut self, message: &[u8]) -> PyResult<()> {
        let max = self.params.max_frame_len();
        let inner = self.inner.as_mut().ok_or_else(finished)?;
        let m = MaskedSketch::from_bytes(message, &self.params, max).map_err(errors::sketch)?;
        inner.accept(&m).map_err(errors::sketch)
    }

    /// The ids of the clients whose messages were taken.
    #[getter]
    fn clients(&self) -> PyResult<Vec<u64>> {
        let inner = self.inner.as_ref().ok_or_else(finished)?;
        Ok(inner.clients().iter().copied().collect())
    }

    /// The decoded sum, `(key, count)` by key. The aggregator is spent
    /// afterwards (a round decodes once).
    fn decode<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
        let inner = self.inner.take().ok_or_else(finished)?;
        let sum = py.detach(move || inner.finish()).map_err(errors::sketch)?;
        entries_of(py, &sum)
    }
}

fn finished() -> PyErr {
    ProtocolError::new_err("this round's sum was already decoded")
}
