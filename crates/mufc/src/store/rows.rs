//! The state blobs: what the server row and each client's row hold
//! (postcard, so every `f64` is its 8 bytes, little endian), and their
//! checksums.

use num_bigint::BigUint;
use seeding::{BoxTransform, Dataset, PointId};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::StoreError;
use super::record::ClientName;
use crate::federation::unsent::Unsent;
use crate::persist::body::{Repr, SavedTree};
use crate::{Client, ClientId, Federation, FitReport, PendingRequest, RemovalReport, ValidConfig};

/// The server row, written from references. The fields of a saved
/// federation's body but the clients (`persist::body`; the groups
/// included, with their counts), the model version, the input transform
/// and the name of every client the store held (version 4).
#[derive(Serialize)]
struct ServerRef<'a> {
    model_version: u64,
    transform: Option<&'a BoxTransform>,
    names: Vec<(ClientId, &'a ClientName)>,
    config: &'a ValidConfig,
    dim: usize,
    counts: Vec<(&'a BigUint, u64)>,
    capacity: Option<usize>,
    rounds: u64,
    fit_report: &'a FitReport,
    applied_requests: u64,
    history: &'a [RemovalReport],
    pending: &'a [PendingRequest],
    unsent: Vec<(ClientId, &'a Unsent)>,
    tree: Option<SavedTree>,
}

/// The server row, read back (the same fields in the same order).
#[derive(Deserialize)]
pub(super) struct ServerState {
    pub(super) model_version: u64,
    pub(super) transform: Option<BoxTransform>,
    pub(super) names: Vec<(ClientId, ClientName)>,
    config: ValidConfig,
    dim: usize,
    counts: Vec<(BigUint, u64)>,
    capacity: Option<usize>,
    rounds: u64,
    fit_report: FitReport,
    pub(super) applied_requests: u64,
    history: Vec<RemovalReport>,
    pending: Vec<PendingRequest>,
    unsent: Vec<(ClientId, Unsent)>,
    tree: Option<SavedTree>,
}

/// The server row of `fed` at `model_version`.
pub(super) fn server_blob(
    fed: &Federation,
    model_version: u64,
    transform: Option<&BoxTransform>,
    names: &std::collections::BTreeMap<ClientId, ClientName>,
) -> Result<Vec<u8>, StoreError> {
    let state = ServerRef {
        model_version,
        transform,
        names: names.iter().map(|(c, n)| (*c, n)).collect(),
        config: fed.config(),
        dim: fed.dim(),
        counts: fed.server().counts().iter().map(|(b, &n)| (b, n)).collect(),
        capacity: fed.fit_report().sketch.as_ref().map(|s| s.capacity),
        rounds: fed.rounds(),
        fit_report: fed.fit_report(),
        applied_requests: fed.applied_requests(),
        // The last report only (the next round numbers its requests and
        // decodes against the clients it included): the audit log is the
        // history, and a row that grew with every request would make
        // every commit slower than the last.
        history: fed.history().last().map_or(&[][..], std::slice::from_ref),
        pending: fed.pending(),
        unsent: fed.unsent().iter().map(|(c, u)| (*c, u)).collect(),
        tree: fed.saved_tree(),
    };
    encode(&state)
}

/// A client's row: its points and its seeds.
pub(super) fn client_blob(client: &Client) -> Result<Vec<u8>, StoreError> {
    encode(&(client.data(), client.seed_ids()))
}

fn encode(value: &impl Serialize) -> Result<Vec<u8>, StoreError> {
    postcard::to_allocvec(value).map_err(|e| StoreError::Database {
        context: "serializing a state blob",
        source: Box::new(e),
    })
}

/// The whole of `blob` as a `T`.
fn decode<'a, T: Deserialize<'a>>(blob: &'a [u8], what: &str) -> Result<T, StoreError> {
    let (value, rest) = postcard::take_from_bytes(blob)
        .map_err(|e| StoreError::corrupt(format!("{what} does not parse: {e}")))?;
    if !rest.is_empty() {
        return Err(StoreError::corrupt(format!(
            "{what} has {} bytes after its contents",
            rest.len()
        )));
    }
    Ok(value)
}

pub(super) fn parse_server(blob: &[u8]) -> Result<ServerState, StoreError> {
    decode(blob, "the server state")
}

pub(super) fn parse_client(
    blob: &[u8],
    id: ClientId,
) -> Result<(Dataset, Vec<PointId>), StoreError> {
    decode(blob, &format!("the state of client {id}"))
}

/// The checksum of a blob in row `key` of `table`: the table and the key
/// are hashed too, so that a blob copied into another row is refused.
pub(super) fn checksum(table: &str, key: i64, blob: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"mufc-store\0");
    h.update(table.as_bytes());
    h.update([0]);
    h.update(key.to_le_bytes());
    h.update(blob);
    h.finalize().into()
}

/// A saved federation's state from the rows.
pub(super) fn assemble(
    server: ServerState,
    clients: Vec<(ClientId, Dataset, Vec<PointId>)>,
) -> Repr {
    Repr {
        config: server.config,
        dim: server.dim,
        clients,
        counts: server.counts,
        capacity: server.capacity,
        rounds: server.rounds,
        fit_report: server.fit_report,
        history: server.history,
        pending: server.pending,
        unsent: server.unsent,
        tree: server.tree,
    }
}
