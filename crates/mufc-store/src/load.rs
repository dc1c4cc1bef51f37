//! Opening a store: the header (is it a store, of which version), SQLite's
//! own integrity check, then every row checked against its checksum,
//! parsed, and the federation rebuilt and checked against the records.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use rusqlite::Connection;
use seeding::{BoxTransform, Dataset, PointId};

use crate::digest::RecordsDigest;
use crate::error::StoreError;
use crate::record::{ClientName, RecordId};
use crate::rows::{ServerState, checksum, parse_client, parse_server};
use crate::schema::{APPLICATION_ID, OLDEST_READ, SCHEMA_VERSION};
use crate::state::State;
use crate::tombstone::Secret;
use mufc::{ClientId, ClientSnapshot, Federation, ServerSnapshot, StoredClusters};

/// Refuses a file that is not a store of this schema version.
pub(crate) fn check_header(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let not_a_store = |reason: String| StoreError::NotAStore {
        path: path.to_path_buf(),
        reason,
    };
    let read = |name: &str| {
        conn.pragma_query_value(None, name, |r| r.get::<_, i64>(0))
            .map_err(|e| match e.sqlite_error_code() {
                Some(rusqlite::ErrorCode::NotADatabase) => not_a_store(e.to_string()),
                _ => StoreError::db("reading the header")(e),
            })
    };
    let app = read("application_id")?;
    if app != APPLICATION_ID {
        return Err(not_a_store(format!(
            "its application id is {app:#x}, a store's is {APPLICATION_ID:#x}"
        )));
    }
    let version = read("user_version")?;
    // Schema 5 differs only in client rows without clusters (read by
    // `parse_client`); writing a client row makes the store schema 6.
    if !(OLDEST_READ..=SCHEMA_VERSION).contains(&version) {
        return Err(StoreError::SchemaVersion {
            found: version,
            supported: SCHEMA_VERSION,
        });
    }
    Ok(())
}

/// SQLite's `quick_check` (the b-trees, their pages and their counts),
/// after the file's length: SQLite reads the pages missing from a
/// truncated file as zeros, and the check does not read free pages.
/// [`Store::open`](crate::Store::open) runs it; a client's store across
/// processes runs it too.
///
/// # Errors
///
/// [`StoreError::Corrupt`] saying what the check found;
/// [`StoreError::Database`] or [`StoreError::Io`] if it cannot run.
///
/// # Example
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("any.db");
/// let conn = rusqlite::Connection::open(&path)?;
/// conn.execute_batch("CREATE TABLE t (x INTEGER)")?;
/// mufc_store::quick_check(&conn, &path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn quick_check(conn: &Connection, path: &Path) -> Result<(), StoreError> {
    let read = |name: &str| {
        conn.pragma_query_value(None, name, |r| r.get::<_, i64>(0))
            .map_err(StoreError::db("reading the page count"))
    };
    let expected = read("page_count")?.checked_mul(read("page_size")?);
    let found = std::fs::metadata(path)
        .map_err(|source| StoreError::Io {
            what: "read the length of",
            path: path.to_path_buf(),
            source,
        })?
        .len();
    if expected.and_then(|e| u64::try_from(e).ok()) != Some(found) {
        return Err(StoreError::corrupt(format!(
            "the file has {found} bytes, its header says {} (truncated or extended)",
            expected.map_or_else(|| "an impossible size".to_string(), |e| e.to_string())
        )));
    }
    let mut stmt = conn
        .prepare("PRAGMA quick_check")
        .map_err(StoreError::db("checking integrity"))?;
    let found: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .and_then(Iterator::collect)
        .map_err(StoreError::db("checking integrity"))?;
    if found.len() == 1 && found.first().is_some_and(|s| s == "ok") {
        Ok(())
    } else {
        Err(StoreError::corrupt(format!(
            "SQLite's integrity check: {}",
            found.join("; ")
        )))
    }
}

fn client_id(raw: i64) -> Result<ClientId, StoreError> {
    u64::try_from(raw)
        .map(ClientId)
        .map_err(|_| StoreError::corrupt(format!("negative client id {raw}")))
}

fn verified(table: &str, key: i64, blob: &[u8], sum: &[u8]) -> Result<(), StoreError> {
    if checksum(table, key, blob).as_slice() == sum {
        Ok(())
    } else {
        Err(StoreError::corrupt(format!(
            "the {table} row {key} does not match its checksum"
        )))
    }
}

/// Every row, checked, and the federation rebuilt from them (in the
/// caller's read transaction, so that all is one snapshot).
///
/// With `check`, SQLite's `quick_check` of the file at that path runs too
/// ([`quick_check`]); when anything fails, what it finds is the error
/// reported (damage named by SQLite rather than by what it broke).
pub(crate) fn load(conn: &Connection, check: Option<&Path>) -> Result<State, StoreError> {
    read_state(conn, check).map_err(|e| match check {
        Some(path) => quick_check(conn, path).err().unwrap_or(e),
        None => e,
    })
}

fn read_state(conn: &Connection, check: Option<&Path>) -> Result<State, StoreError> {
    let (mut server, stored_digest) = read_server(conn)?;
    let model_version = server.model_version;
    let transform = server.transform.take();
    let (names, by_name) = client_names(&mut server)?;
    let (clients, clusters) = read_clients(conn)?;
    let (fed, (records, records_digest)) =
        rebuild(conn, check, server.federation, clients, clusters)?;
    check_rebuilt(&fed, transform.as_ref(), &names, &records)?;
    // A store of schema 5 or 6 has no digest yet (its first request
    // writes one).
    if stored_digest.is_some_and(|d| d != records_digest) {
        return Err(StoreError::corrupt(
            "the records table does not match its digest: a record was changed to name \
             another point, added or removed outside a request (a forget would erase the wrong \
             data)",
        ));
    }
    let max_defer = stored_max_defer(conn)?;
    Ok(State {
        fed,
        records,
        names,
        by_name,
        model_version,
        transform,
        last_entry: last_entry(conn)?,
        schema: schema_cookie(conn)?,
        secret: Secret::read(conn)?,
        max_defer: u64::try_from(max_defer)
            .map_err(|_| StoreError::corrupt("a negative deferral limit"))?,
        records_digest,
    })
}

/// The server row, checked against its checksum and parsed, with the
/// records' digest it holds.
fn read_server(conn: &Connection) -> Result<(ServerState, Option<RecordsDigest>), StoreError> {
    let db = StoreError::db("reading the state");
    let (blob, sum): (Vec<u8>, Vec<u8>) = conn
        .query_row("SELECT state, sha256 FROM server WHERE id = 1", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .map_err(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => {
                StoreError::corrupt("the server row is missing")
            }
            e => db(e),
        })?;
    verified("server", 1, &blob, &sum)?;
    // The transform is checked as it is parsed (`BoxTransform`'s serde).
    parse_server(&blob)
}

/// The clients' names by client, and the clients by name.
type Names = (
    BTreeMap<ClientId, ClientName>,
    HashMap<ClientName, ClientId>,
);

/// The clients' names, taken from the server row, both ways; two
/// clients may not share a name.
fn client_names(server: &mut ServerState) -> Result<Names, StoreError> {
    let names: BTreeMap<ClientId, ClientName> =
        std::mem::take(&mut server.names).into_iter().collect();
    let by_name: HashMap<ClientName, ClientId> =
        names.iter().map(|(c, n)| (n.clone(), *c)).collect();
    if by_name.len() != names.len() {
        return Err(StoreError::corrupt("two clients have the same name"));
    }
    Ok((names, by_name))
}

/// Every client row, checked against its checksum and parsed: the
/// clients' data and seeds, and the clusters they last sent.
fn read_clients(
    conn: &Connection,
) -> Result<(Vec<ClientSnapshot>, BTreeMap<ClientId, StoredClusters>), StoreError> {
    let mut clients: Vec<(ClientId, Dataset, Vec<PointId>)> = Vec::new();
    let mut clusters = BTreeMap::new();
    let mut stmt = conn
        .prepare("SELECT id, state, sha256 FROM clients ORDER BY id")
        .map_err(StoreError::db("reading the clients"))?;
    let mut rows = stmt
        .query([])
        .map_err(StoreError::db("reading the clients"))?;
    while let Some(row) = rows.next().map_err(StoreError::db("reading the clients"))? {
        let get = |e| StoreError::db("reading the clients")(e);
        let key: i64 = row.get(0).map_err(get)?;
        let blob: Vec<u8> = row.get(1).map_err(get)?;
        let sum: Vec<u8> = row.get(2).map_err(get)?;
        verified("clients", key, &blob, &sum)?;
        let id = client_id(key)?;
        let (data, seeds, sent) = parse_client(&blob, id)?;
        clients.push((id, data, seeds));
        if let Some(sent) = sent {
            clusters.insert(id, sent);
        }
    }
    Ok((clients, clusters))
}

/// The federation rebuilt from the rows, and the records read (with
/// SQLite's check first, with `check`).
fn rebuild(
    conn: &Connection,
    check: Option<&Path>,
    federation: ServerSnapshot,
    clients: Vec<ClientSnapshot>,
    clusters: BTreeMap<ClientId, StoredClusters>,
) -> Result<(Federation, Records), StoreError> {
    // The federation is rebuilt (the server's K-means, the last sum's
    // sketch) on another thread while this one reads the records (and
    // runs SQLite's check when opening): the two take about as long.
    let (fed, records) = std::thread::scope(|scope| {
        let rebuilt = scope.spawn(move || Federation::from_stored(federation, clients, clusters));
        let read = check
            .map_or(Ok(()), |path| quick_check(conn, path))
            .and_then(|()| read_records(conn));
        let fed = rebuilt
            .join()
            .map_err(|_| StoreError::corrupt("rebuilding the federation failed"));
        (fed, read)
    });
    let records = records?;
    let fed =
        fed?.map_err(|e| StoreError::corrupt(format!("the stored state does not rebuild: {e}")))?;
    Ok((fed, records))
}

/// The rebuilt federation checked against the rest of the state: the
/// transform's dimension, a name for every client, and the records.
fn check_rebuilt(
    fed: &Federation,
    transform: Option<&BoxTransform>,
    names: &BTreeMap<ClientId, ClientName>,
    records: &HashMap<RecordId, (ClientId, PointId)>,
) -> Result<(), StoreError> {
    if let Some(t) = transform
        && t.offset().len() != fed.dim()
    {
        return Err(StoreError::corrupt(format!(
            "an input transform of dimension {} for points of dimension {}",
            t.offset().len(),
            fed.dim()
        )));
    }
    if let Some(c) = fed
        .client_ids()
        .into_iter()
        .find(|c| !names.contains_key(c))
    {
        return Err(StoreError::corrupt(format!("client {c} has no name")));
    }
    check_records(records, fed)
}

/// The deferral limit as stored (seconds).
fn stored_max_defer(conn: &Connection) -> Result<i64, StoreError> {
    conn.query_row("SELECT value FROM meta WHERE key = 'max_defer'", [], |r| {
        r.get(0)
    })
    .map_err(|e| match e {
        rusqlite::Error::QueryReturnedNoRows => {
            StoreError::corrupt("the deferral limit (max_defer) is missing")
        }
        e => StoreError::db("reading the deferral limit")(e),
    })
}

/// What changes when another connection writes: SQLite's schema cookie
/// (a replacing `fit` rewrites the tables) and the last journal entry (a
/// request or round).
pub(crate) fn mark(conn: &Connection) -> Result<(i64, i64), StoreError> {
    Ok((schema_cookie(conn)?, last_entry(conn)?))
}

/// SQLite's schema cookie, which every change of a table's definition
/// increments.
pub(crate) fn schema_cookie(conn: &Connection) -> Result<i64, StoreError> {
    conn.pragma_query_value(None, "schema_version", |r| r.get(0))
        .map_err(StoreError::db("reading the schema cookie"))
}

/// The last journal entry (0 for none).
pub(crate) fn last_entry(conn: &Connection) -> Result<i64, StoreError> {
    conn.query_row("SELECT coalesce(max(entry), 0) FROM journal", [], |r| {
        r.get(0)
    })
    .map_err(StoreError::db("reading the journal"))
}

/// Every record of the table: its client and point; and their digest.
type Records = (HashMap<RecordId, (ClientId, PointId)>, RecordsDigest);

/// Every record of the table, and their digest.
fn read_records(conn: &Connection) -> Result<Records, StoreError> {
    let db = |e| StoreError::db("reading the records")(e);
    let count: i64 = conn
        .query_row("SELECT count(*) FROM records", [], |r| r.get(0))
        .map_err(db)?;
    let mut records = HashMap::with_capacity(usize::try_from(count).unwrap_or(0));
    let mut digest = RecordsDigest::default();
    let mut stmt = conn
        .prepare("SELECT record, client, point FROM records")
        .map_err(db)?;
    let mut rows = stmt.query([]).map_err(db)?;
    while let Some(row) = rows.next().map_err(db)? {
        let record =
            RecordId::from_sql(row.get_ref(0).map_err(db)?).map_err(StoreError::corrupt)?;
        let (client, point): (i64, i64) = (row.get(1).map_err(db)?, row.get(2).map_err(db)?);
        let client = client_id(client)?;
        let point = u64::try_from(point)
            .map(PointId)
            .map_err(|_| StoreError::corrupt(format!("record {record}: negative point id")))?;
        digest.toggle(&record, client, point);
        if records.insert(record.clone(), (client, point)).is_some() {
            return Err(StoreError::corrupt(format!("record {record} occurs twice")));
        }
    }
    Ok((records, digest))
}

/// The records checked to name every point of every client of `fed` once.
fn check_records(
    records: &HashMap<RecordId, (ClientId, PointId)>,
    fed: &Federation,
) -> Result<(), StoreError> {
    if records.len() != fed.num_points() {
        return Err(StoreError::corrupt(format!(
            "{} records for {} points",
            records.len(),
            fed.num_points()
        )));
    }
    // As many records as points, each naming a distinct held point: every
    // point once.
    let mut named: HashMap<ClientId, Vec<bool>> = fed
        .clients()
        .iter()
        .map(|c| (c.id(), vec![false; c.data().len()]))
        .collect();
    for (record, &(client, point)) in records {
        let pos = fed.client(client).and_then(|c| c.data().position(point));
        let slot = pos.and_then(|p| named.get_mut(&client)?.get_mut(p));
        match slot {
            Some(seen) if !*seen => *seen = true,
            found => {
                return Err(StoreError::corrupt(format!(
                    "record {record} names point {point} of client {client}, which {}",
                    if found.is_some() {
                        "another record names too"
                    } else {
                        "the store does not hold"
                    }
                )));
            }
        }
    }
    Ok(())
}
