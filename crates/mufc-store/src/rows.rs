//! The state blobs: what the server row and each client's row hold
//! (postcard, so every `f64` is its 8 bytes, little endian), and their
//! checksums.

use seeding::{BoxTransform, Dataset, PointId};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::digest::RecordsDigest;
use crate::error::StoreError;
use crate::record::ClientName;
use mufc::{Client, ClientId, Federation, ServerSnapshot, StoredClusters};

/// The server row, written from references: the model version, the
/// input transform and the name of every client the store held, then
/// the federation's [`ServerSnapshot`] (postcard writes a nested struct
/// as its fields in order, so the row is what schema 5 wrote).
#[derive(Serialize)]
struct ServerRef<'a> {
    model_version: u64,
    transform: Option<&'a BoxTransform>,
    names: Vec<(ClientId, &'a ClientName)>,
    federation: ServerSnapshot,
}

/// The server row, read back (the same fields in the same order).
#[derive(Deserialize)]
pub(crate) struct ServerState {
    pub(crate) model_version: u64,
    pub(crate) transform: Option<BoxTransform>,
    pub(crate) names: Vec<(ClientId, ClientName)>,
    pub(crate) federation: ServerSnapshot,
}

/// The server row of `fed` at `model_version`.
pub(crate) fn server_blob(
    fed: &Federation,
    model_version: u64,
    transform: Option<&BoxTransform>,
    names: &std::collections::BTreeMap<ClientId, ClientName>,
    records: RecordsDigest,
) -> Result<Vec<u8>, StoreError> {
    let state = ServerRef {
        model_version,
        transform,
        names: names.iter().map(|(c, n)| (*c, n)).collect(),
        federation: fed.server_snapshot(),
    };
    let mut blob = encode(&state)?;
    // Since schema 7 the digest of the records follows (32 bytes).
    blob.extend_from_slice(&records.0);
    Ok(blob)
}

/// A client's row: its points, its seeds and (since schema 6) the
/// clusters it sends, so that opening the store fits no client.
pub(crate) fn client_blob(client: &Client) -> Result<Vec<u8>, StoreError> {
    encode(&(client.data(), client.seed_ids(), client.clusters()))
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

pub(crate) fn parse_server(
    blob: &[u8],
) -> Result<(ServerState, Option<RecordsDigest>), StoreError> {
    if let Some(parsed) = with_digest(blob) {
        return Ok(parsed);
    }
    // A row of schema 7 ends its state before the field schema 8 added
    // last (the pending additions, a `Vec`): with that field empty
    // (postcard: one zero byte) before the records' digest, it parses as
    // written. A row of schema 5 or 6 ends before schema 7's field too
    // (the withdrawal, an `Option`) and has no digest: with both fields
    // empty, it parses as written.
    if let Some(at) = blob.len().checked_sub(32) {
        let (state, digest) = blob.split_at(at);
        let mut seven = Vec::with_capacity(blob.len().saturating_add(1));
        seven.extend_from_slice(state);
        seven.push(0);
        seven.extend_from_slice(digest);
        if let Some(parsed) = with_digest(&seven) {
            return Ok(parsed);
        }
    }
    let mut old = Vec::with_capacity(blob.len().saturating_add(2));
    old.extend_from_slice(blob);
    old.extend_from_slice(&[0, 0]);
    decode(&old, "the server state")
        .map(|state| (state, None))
        .map_err(|_| {
            let why = match postcard::take_from_bytes::<ServerState>(blob) {
                Err(e) => e.to_string(),
                Ok((_, rest)) => format!(
                    "it has {} bytes after its contents, not the records' 32-byte digest",
                    rest.len()
                ),
            };
            StoreError::corrupt(format!("the server state does not parse: {why}"))
        })
}

/// A server row of this schema: the state, then the records' digest.
fn with_digest(blob: &[u8]) -> Option<(ServerState, Option<RecordsDigest>)> {
    let (state, rest) = postcard::take_from_bytes::<ServerState>(blob).ok()?;
    let digest: [u8; 32] = rest.try_into().ok()?;
    Some((state, Some(RecordsDigest(digest))))
}

/// A client's row: its points, its seeds, and its clusters (none in a
/// row of schema 5, whose client is then fitted on opening).
pub(crate) fn parse_client(
    blob: &[u8],
    id: ClientId,
) -> Result<(Dataset, Vec<PointId>, Option<StoredClusters>), StoreError> {
    let what = format!("the state of client {id}");
    let ((data, seeds), rest): ((Dataset, Vec<PointId>), &[u8]) =
        postcard::take_from_bytes(blob)
            .map_err(|e| StoreError::corrupt(format!("{what} does not parse: {e}")))?;
    if rest.is_empty() {
        return Ok((data, seeds, None));
    }
    Ok((data, seeds, Some(decode(rest, &what)?)))
}

/// The checksum of a blob in row `key` of `table`: the table and the key
/// are hashed too, so that a blob copied into another row is refused.
pub(crate) fn checksum(table: &str, key: i64, blob: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"mufc-store\0");
    h.update(table.as_bytes());
    h.update([0]);
    h.update(key.to_le_bytes());
    h.update(blob);
    h.finalize().into()
}
