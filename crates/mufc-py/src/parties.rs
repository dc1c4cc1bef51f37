//! The MUFC parties from Python, for a federated framework that drives
//! them (Flower): the server's party as an object the driver keeps for the
//! run, and each client's as stateless handlers over bytes whose state is
//! the client's own store (a path the caller gives), because a framework
//! may start a new client process for every message.
//!
//! A stateless client rebuilds its half of a round from the round's
//! messages: the driver sends each client the whole transcript of the
//! round so far (the announcement, then the server's message of every
//! step), and the client joins and handles them again. Its round secrets
//! derive from a key its store keeps, with the round's session and number
//! (`RemoteClient::with_round_key`), so every replay gives the same
//! answers. Its store logs the digest of each message it answered and of
//! its answer, per session: a step is answered once, and a replay whose
//! answer would differ (a server that asks a step again with another
//! message, or a client whose points changed mid-round) is refused, so
//! that the server gets no more from a stateless client than from one
//! that kept its round in memory (docs/python.md).

use std::path::PathBuf;

use mufc::remote::{
    Announcement, ClientRound, Registration, RemoteClient, RemoteServer, RemoteSetup, RoundStep,
    ServerRound,
};
use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions, ValidConfig};
use mufc_net::client_store::ClientStore;
use numpy::ndarray::Array2;
use numpy::{IntoPyArray, PyArray2, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use seeding::{Dataset, PointId};
use sha2::{Digest, Sha256};

use crate::convert::columns;
use crate::errors::{ConfigError, DataError, ProtocolError, StoreError};

/// Adds the parties' classes and functions.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ServerParty>()?;
    m.add_function(wrap_pyfunction!(client_create, m)?)?;
    m.add_function(wrap_pyfunction!(client_registration, m)?)?;
    m.add_function(wrap_pyfunction!(client_step, m)?)?;
    m.add_function(wrap_pyfunction!(client_commit, m)?)?;
    m.add_function(wrap_pyfunction!(client_forget, m)?)?;
    m.add_function(wrap_pyfunction!(registration, m)?)?;
    Ok(())
}

fn mufc_err(e: mufc::MufcError) -> PyErr {
    use mufc::MufcError as E;
    let msg = e.to_string();
    match e {
        E::InvalidConfig { .. } => ConfigError::new_err(msg),
        E::UnknownPoint { .. }
        | E::OutsideBox { .. }
        | E::DimensionMismatch { .. }
        | E::EmptyClient(_) => DataError::new_err(msg),
        _ => ProtocolError::new_err(msg),
    }
}

fn net_err(e: mufc_net::NetError) -> PyErr {
    StoreError::new_err(e.to_string())
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The client of the store at `path`, as client `id`, drawing its round
/// secrets from the key the store keeps.
fn load(path: &PathBuf, id: u64) -> PyResult<(ClientStore, RemoteClient)> {
    let store = ClientStore::open(path).map_err(net_err)?;
    let key = store.round_key().map_err(net_err)?;
    let client = store
        .client(ClientId(id))
        .map_err(net_err)?
        .with_round_key(key);
    Ok((store, client))
}

/// Rebuilds the client's half of the round `transcript` describes (the
/// announcement, then the server's message of each step), checking every
/// answer against those the store logged for the session and logging the
/// new ones. Returns the half and the last answer.
fn replay(
    store: &ClientStore,
    client: &mut RemoteClient,
    transcript: &[Vec<u8>],
) -> PyResult<(ClientRound, Option<Vec<u8>>)> {
    let (first, rest) = transcript
        .split_first()
        .ok_or_else(|| DataError::new_err("an empty transcript: the announcement comes first"))?;
    let announcement = Announcement::from_bytes(first).map_err(mufc_err)?;
    let session = announcement.spec.session;
    let (mut half, mut answer) = client.join(&announcement).map_err(mufc_err)?;
    let log = |step: usize, asked: &[u8], answer: Option<&[u8]>| -> PyResult<()> {
        let answered = answer.map_or([0; 32], digest);
        store
            .answer_once(&session, step as u64, &digest(asked), &answered)
            .map_err(|e| ProtocolError::new_err(e.to_string()))
    };
    log(0, first, answer.as_deref())?;
    for (i, msg) in rest.iter().enumerate() {
        let reply = half.handle(msg).map_err(mufc_err)?;
        log(i + 1, msg, Some(&reply))?;
        answer = Some(reply);
    }
    Ok((half, answer))
}

/// Creates client `name`'s store at `path` with its records (`n x d`, in
/// the quantizer's box), each named by `ids` (its data row, as `mufc fit`
/// names a record without an id column; `0..n` by default).
#[pyfunction]
#[pyo3(signature = (path, name, points, ids=None))]
fn client_create(
    path: PathBuf,
    name: &str,
    points: PyReadonlyArray2<'_, f64>,
    ids: Option<Vec<u64>>,
) -> PyResult<()> {
    let bad = |e: seeding::SeedingError| DataError::new_err(e.to_string());
    let m = columns(&points);
    let data = match ids {
        Some(ids) => Dataset::with_ids(m, ids.into_iter().map(PointId).collect()).map_err(bad)?,
        None => Dataset::new(m).map_err(bad)?,
    };
    ClientStore::create(&path, name, &data).map_err(net_err)?;
    Ok(())
}

/// What client `id` of the store at `path` tells the server when it
/// registers: `(id, points, dim, scale)`.
#[pyfunction]
fn client_registration(path: PathBuf, id: u64) -> PyResult<(u64, u64, usize, u32)> {
    let (_, client) = load(&path, id)?;
    let r = client.registration();
    Ok((r.id.0, r.points, r.dim, r.scale))
}

/// Client `id`'s answer to the last message of `transcript`: its first
/// message after the announcement alone, else its answer to the last
/// step's message (`None`: the client has nothing to send, a dealt
/// round's join). Nothing of the client's state changes but the log of
/// its answers.
#[pyfunction]
fn client_step<'py>(
    py: Python<'py>,
    path: PathBuf,
    id: u64,
    transcript: Vec<Vec<u8>>,
) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let (store, mut client) = load(&path, id)?;
    let (_, answer) = py.detach(|| replay(&store, &mut client, &transcript))?;
    Ok(answer.map(|a| PyBytes::new(py, &a)))
}

/// Client `id` commits the round of `transcript`, which the server
/// finished: `included` says whether the server's sum held it. Its
/// state (the sessions it joined, what it sent, the last sum it was in)
/// is saved and the session's log of answers dropped.
#[pyfunction]
fn client_commit(
    py: Python<'_>,
    path: PathBuf,
    id: u64,
    transcript: Vec<Vec<u8>>,
    included: bool,
) -> PyResult<()> {
    let (store, mut client) = load(&path, id)?;
    py.detach(|| {
        let (half, _) = replay(&store, &mut client, &transcript)?;
        client.took_part(&half);
        if included {
            client.commit(half);
        }
        store.save(&client).map_err(net_err)?;
        let session = Announcement::from_bytes(&transcript[0])
            .map_err(mufc_err)?
            .spec
            .session;
        store.forget_answers(&session).map_err(net_err)
    })
}

/// Client `id` forgets its points `ids` (Algorithm 4, lines 1-6): at once
/// in its store; the next round the client joins carries its new
/// histogram. Returns whether a seed was removed (the client reseeded).
#[pyfunction]
fn client_forget(py: Python<'_>, path: PathBuf, id: u64, ids: Vec<u64>) -> PyResult<bool> {
    let (store, mut client) = load(&path, id)?;
    py.detach(|| {
        let ids: Vec<PointId> = ids.into_iter().map(PointId).collect();
        let reseeded = client.forget(&ids).map_err(mufc_err)?;
        store.save(&client).map_err(net_err)?;
        Ok(reseeded)
    })
}

/// Registrations as the parties take them.
fn registered(registrations: Vec<(u64, u64, usize, u32)>) -> Vec<Registration> {
    registrations
        .into_iter()
        .map(|(id, points, dim, scale)| Registration {
            id: ClientId(id),
            points,
            dim,
            scale,
        })
        .collect()
}

impl ServerParty {
    /// The server of `regs` under `config`.
    fn of(config: &ValidConfig, regs: &[Registration]) -> PyResult<Self> {
        let setup = RemoteSetup::new(config, regs).map_err(mufc_err)?;
        let server = RemoteServer::new(setup).map_err(mufc_err)?;
        Ok(Self {
            server,
            round: None,
        })
    }
}

/// A step's messages, `(client id, bytes)`.
type Messages<'py> = Vec<(u64, Bound<'py, PyBytes>)>;

/// A finished round: the clients its sum held, and those that dropped
/// with the step.
type Finished = (Vec<u64>, Vec<(u64, String)>);

/// The server's party of a federation, kept by the driver for the run:
/// it resolves the setup from the clients' registrations, starts each
/// round, takes the clients' answers, closes each step at its deadline
/// (a client that did not answer is out from there, a dropout at that
/// step), and finishes the round: the model.
// `unsendable`: the round in progress holds the protocol's trait objects,
// which are not Sync; a driver keeps its server in one thread.
#[pyclass(module = "mufc._native", unsendable)]
pub(crate) struct ServerParty {
    server: RemoteServer,
    round: Option<ServerRound>,
}

impl std::fmt::Debug for ServerParty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerParty")
            .field("rounds", &self.server.rounds())
            .finish_non_exhaustive()
    }
}

#[pymethods]
impl ServerParty {
    /// The server of the clients `registrations` (`(id, points, dim,
    /// scale)` each, as `client_registration` gives them), with the
    /// options of `mufc server`.
    #[new]
    #[pyo3(signature = (registrations, n_clusters, seed=0, masking="secagg", client_k=None, gamma=None, min_clients=None, min_updating_clients=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        registrations: Vec<(u64, u64, usize, u32)>,
        n_clusters: usize,
        seed: u64,
        masking: &str,
        client_k: Option<usize>,
        gamma: Option<f64>,
        min_clients: Option<usize>,
        min_updating_clients: Option<usize>,
    ) -> PyResult<Self> {
        let masks = match masking {
            "secagg" => Masks::SecAgg(SecAggOptions::new()),
            "pairwise" => Masks::Pairwise,
            other => {
                return Err(ConfigError::new_err(format!(
                    "masking {other:?}: a stateless federation takes \"secagg\" or \"pairwise\" \
                     (dealt masks need a dealer party)"
                )));
            }
        };
        let mut builder = FederationConfig::new(n_clusters)
            .channel(Channel::scma(masks))
            .seed(seed);
        if let Some(k) = client_k {
            builder = builder.client_k(k);
        }
        if let Some(g) = gamma {
            builder = builder.gamma(g);
        }
        if let Some(n) = min_clients {
            builder = builder.min_clients(n);
        }
        if let Some(n) = min_updating_clients {
            builder = builder.min_updating_clients(n);
        }
        let config = builder.validate().map_err(mufc_err)?;
        Self::of(&config, &registered(registrations))
    }

    /// The server of the clients `registrations` set up as `mufc fit
    /// <options>` trains (its seed, preset and options; the records are
    /// the clients'): with clients whose points carry their data rows as
    /// ids (`client_create(..., ids=)`), the model is `mufc fit`'s on the
    /// same records in a file, bit for bit.
    #[staticmethod]
    fn like_fit(
        registrations: Vec<(u64, u64, usize, u32)>,
        options: Vec<String>,
    ) -> PyResult<Self> {
        use clap::Parser;
        let argv = ["mufc", "fit", "--model", "-"]
            .into_iter()
            .map(String::from)
            .chain(options);
        let cli = mufc_cli::cli::Cli::try_parse_from(argv)
            .map_err(|e| ConfigError::new_err(e.to_string()))?;
        let mufc_cli::cli::Command::Fit(args) = cli.command else {
            return Err(ConfigError::new_err("not the options of `mufc fit`"));
        };
        let regs = registered(registrations);
        let n = regs.iter().map(|r| r.points).sum::<u64>();
        let d = regs.first().map_or(0, |r| r.dim);
        let n = usize::try_from(n).map_err(|_| ConfigError::new_err("too many points"))?;
        let config = mufc_cli::commands::fit_config_for_parties(&args, n, d, regs.len())
            .map_err(crate::errors::cli)?;
        Self::of(&config, &regs)
    }

    /// Starts a round of the clients `ids`: the announcement to send each.
    fn start_round<'py>(
        &mut self,
        py: Python<'py>,
        ids: Vec<u64>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let ids: Vec<ClientId> = ids.into_iter().map(ClientId).collect();
        let (announcement, round) = self.server.start_round(&ids).map_err(mufc_err)?;
        self.round = Some(round);
        Ok(PyBytes::new(
            py,
            &announcement.to_bytes().map_err(mufc_err)?,
        ))
    }

    /// Takes client `id`'s answer in the current step (a refused message
    /// leaves the round as it was).
    fn receive(&mut self, id: u64, message: &[u8]) -> PyResult<()> {
        let round = self.round.as_mut().ok_or_else(no_round)?;
        round.receive(ClientId(id), message).map_err(mufc_err)
    }

    /// Closes the current step: the clients that did not answer are out.
    /// Returns the next step's messages, `(client id, bytes)`, or `None`
    /// once the sum is unmasked (then `finish_round`).
    fn advance<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Messages<'py>>> {
        let round = self.round.as_mut().ok_or_else(no_round)?;
        match round.advance().map_err(mufc_err)? {
            RoundStep::Finished => Ok(None),
            RoundStep::Send(msgs) => Ok(Some(
                msgs.into_iter()
                    .map(|(to, m)| (to.0, PyBytes::new(py, &m)))
                    .collect(),
            )),
            RoundStep::Deal(_) => Err(ConfigError::new_err("dealt masks need a dealer party")),
        }
    }

    /// Finishes the round: the model is updated. Returns the clients the
    /// sum held (they commit) and those that dropped, with the step.
    fn finish_round(&mut self) -> PyResult<Finished> {
        let round = self.round.take().ok_or_else(no_round)?;
        let report = self.server.finish_round(round).map_err(mufc_err)?;
        Ok((
            report.included.iter().map(|c| c.0).collect(),
            report
                .dropped
                .iter()
                .map(|(c, s)| (c.0, s.to_string()))
                .collect(),
        ))
    }

    /// The model's centroids (`k x d`, in the box), empty before training.
    fn centroids<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        centroid_rows(py, &self.server)
    }

    /// The centroids (`k x d`) the same parties reach driven in one
    /// process (`mufc::remote::InProcess`), under this server's setup (the
    /// configuration it resolved from the registrations), each client `i`
    /// holding `clients[i]` less its points `forgotten[i]` (named by row):
    /// the model a driver of the parties must reach, bit for bit, and
    /// retraining's after a removal.
    #[pyo3(signature = (clients, forgotten=None))]
    fn in_process_centroids<'py>(
        &self,
        py: Python<'py>,
        clients: Vec<PyReadonlyArray2<'py, f64>>,
        forgotten: Option<Vec<Vec<u64>>>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let bad = |e: seeding::SeedingError| DataError::new_err(e.to_string());
        let forgotten = forgotten.unwrap_or_default();
        let data = clients
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let gone: Vec<PointId> = (forgotten.get(i))
                    .map(|g| g.iter().copied().map(PointId).collect())
                    .unwrap_or_default();
                let d = Dataset::new(columns(a)).map_err(bad)?;
                Ok((ClientId(i as u64), d.without(&gone).map_err(bad)?))
            })
            .collect::<PyResult<Vec<_>>>()?;
        let config = self.server.setup().config().clone();
        let parties = py
            .detach(|| mufc::remote::InProcess::train(data, &config))
            .map_err(mufc_err)?;
        centroid_rows(py, parties.server())
    }
}

fn no_round() -> PyErr {
    ProtocolError::new_err("no round in progress: start_round first")
}

/// What client `id` holding `points` (`n x d`) tells the server when it
/// registers, `(id, points, dim, scale)`: `client_registration` without a
/// store.
#[pyfunction]
fn registration(id: u64, points: PyReadonlyArray2<'_, f64>) -> PyResult<(u64, u64, usize, u32)> {
    let data = Dataset::new(columns(&points)).map_err(|e| DataError::new_err(e.to_string()))?;
    let r = Registration::surveying(ClientId(id), &data);
    Ok((r.id.0, r.points, r.dim, r.scale))
}

/// A server party's centroids as a `k x d` array.
fn centroid_rows<'py>(
    py: Python<'py>,
    server: &RemoteServer,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let d = server.setup().dim();
    let flat: Vec<f64> = match server.server().centroids() {
        Some(c) => c
            .column_iter()
            .flat_map(|col| col.iter().copied().collect::<Vec<_>>())
            .collect(),
        None => Vec::new(),
    };
    let k = flat.len().checked_div(d).unwrap_or(0);
    let a =
        Array2::from_shape_vec((k, d), flat).map_err(|e| ProtocolError::new_err(e.to_string()))?;
    Ok(a.into_pyarray(py))
}
