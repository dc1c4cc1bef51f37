//! The database's layout (see the module docs, "Schema") and the settings
//! every connection runs with.

use rusqlite::Connection;

use crate::error::StoreError;

/// The schema version, `PRAGMA user_version`.
/// Version 8: the server row's state ends with the additions whose model
/// update waits (records that arrive, issue 29), and the audit has an
/// `added` column (added at the first opening of an older store). Version 7: the server row ends with the federation's withdrawal (why it
/// serves no model, if a request left fewer clients than the minimum
/// aggregate). Version 6: a client's row also holds the clusters it sends, so that
/// opening a store fits no client (a client is fitted, and checked
/// against them, when a request changes it). Version 5: the configuration in the server row has the adaptive client
/// k, the minimum cluster size, the clients' K-means runs and the gamma
/// rule (issue 26). Version 4 added the clients' names (in the server row), record ids
/// as written (integers or text), the tombstones of forgotten records,
/// the per-store secret and deferral deadline, and the audit's erasure
/// and model times; version 3 the topology and the groups; version 2 the
/// input transform.
pub(crate) const SCHEMA_VERSION: i64 = 8;

/// The oldest schema this version reads: a store of schema 5 opens (its
/// clients are fitted on opening) and a store of schema 5, 6 or 7 becomes
/// schema 8 with the first request (which writes the server row and the
/// rows of the clients it changes).
pub(crate) const OLDEST_READ: i64 = 5;

/// `PRAGMA application_id`: "MUFC", so that another application's SQLite
/// file is refused as such.
pub(crate) const APPLICATION_ID: i64 = 0x4D55_4643;

/// The tables (STRICT: SQLite refuses a value of the wrong type; a record
/// id is `ANY`, kept as the integer or the text it was given as).
const TABLES: &str = "
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value ANY NOT NULL
) STRICT;
CREATE TABLE server (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    state BLOB NOT NULL,
    sha256 BLOB NOT NULL
) STRICT;
CREATE TABLE clients (
    id INTEGER PRIMARY KEY,
    state BLOB NOT NULL,
    sha256 BLOB NOT NULL
) STRICT;
CREATE TABLE records (
    record ANY PRIMARY KEY,
    client INTEGER NOT NULL,
    point INTEGER NOT NULL,
    UNIQUE (client, point)
) STRICT;
CREATE TABLE tombstones (
    tag BLOB PRIMARY KEY,
    request INTEGER NOT NULL,
    client INTEGER NOT NULL,
    erased INTEGER NOT NULL,
    version INTEGER,
    applied INTEGER,
    inherited INTEGER NOT NULL
) STRICT;
CREATE INDEX tombstones_waiting ON tombstones (client) WHERE version IS NULL;
CREATE TABLE journal (
    entry INTEGER PRIMARY KEY,
    request INTEGER NOT NULL,
    time INTEGER NOT NULL,
    kind TEXT NOT NULL,
    named TEXT NOT NULL
) STRICT;
CREATE TABLE audit (
    entry INTEGER PRIMARY KEY,
    request INTEGER NOT NULL,
    time INTEGER NOT NULL,
    client TEXT NOT NULL,
    points INTEGER NOT NULL,
    whole_client INTEGER NOT NULL,
    reseeded INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    applied TEXT NOT NULL,
    erased INTEGER NOT NULL,
    removed INTEGER,
    version_before INTEGER NOT NULL,
    version_after INTEGER NOT NULL,
    warning TEXT,
    added INTEGER NOT NULL DEFAULT 0
) STRICT;
";

/// The settings of every connection of a store: crash safety (a rollback
/// journal, flushed at every commit) and deleted data overwritten (see the
/// module docs, "Crash safety and deleted data"). Setting the journal mode
/// reads the database, so a hot journal left by a crash is rolled back
/// here. Public so that other stores of the family (a client's store in
/// `mufc-net`) keep the same promises.
///
/// # Errors
///
/// [`StoreError::Database`] if SQLite refuses a setting (an in-memory or
/// read-only database keeps another journal mode).
///
/// # Example
///
/// ```
/// let dir = tempfile::tempdir()?;
/// let conn = rusqlite::Connection::open(dir.path().join("x.db"))?;
/// mufc_store::configure(&conn)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn configure(conn: &Connection) -> Result<(), StoreError> {
    conn.pragma_update(None, "secure_delete", "ON")
        .map_err(StoreError::db("setting secure_delete"))?;
    // `journal_mode` answers with the mode it set: anything but `delete`
    // (an in-memory or read-only database) would keep old pages around.
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "DELETE", |r| r.get(0))
        .map_err(StoreError::db("setting the journal mode"))?;
    if !mode.eq_ignore_ascii_case("delete") {
        return Err(StoreError::Database {
            context: "setting the journal mode",
            source: format!("SQLite kept journal mode {mode}").into(),
        });
    }
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(StoreError::db("setting synchronous"))?;
    Ok(())
}

/// Brings an older store's tables up to this schema's: the audit's
/// `added` column (schema 8: the records a request added), with 0 in the
/// rows before it. Idempotent; run at every opening (a store opened by
/// an older build keeps working: it names the columns it writes).
///
/// # Errors
///
/// [`StoreError::Database`] if SQLite refuses.
pub(crate) fn upgrade(conn: &Connection) -> Result<(), StoreError> {
    let has_added: bool = conn
        .query_row(
            "SELECT count(*) FROM pragma_table_info('audit') WHERE name = 'added'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(StoreError::db("reading the audit's columns"))?;
    if !has_added {
        conn.execute_batch("ALTER TABLE audit ADD COLUMN added INTEGER NOT NULL DEFAULT 0")
            .map_err(StoreError::db("adding the audit's added column"))?;
    }
    Ok(())
}

/// Creates the tables of an empty database and stamps its version.
pub(crate) fn create(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(TABLES)
        .map_err(StoreError::db("creating the tables"))?;
    conn.pragma_update(None, "application_id", APPLICATION_ID)
        .map_err(StoreError::db("setting the application id"))?;
    conn.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(StoreError::db("setting the schema version"))?;
    Ok(())
}
