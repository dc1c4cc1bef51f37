//! A client's store: its own points and seeding state, the sessions it
//! joined, and its operator's removal requests, in one SQLite file with
//! the settings of the server's store (`mufc_store::configure`: a
//! rollback journal flushed at every commit, deleted data overwritten).
//!
//! | table      | one row per        | contents                                                  |
//! |------------|--------------------|-----------------------------------------------------------|
//! | `meta`     | setting            | `name` (the client's name), `created`, `admitted` (clients admitted after training) |
//! | `state`    | store (`id = 1`)   | `state`: id, points, setup, seeds, sessions (postcard); `sha256` |
//! | `requests` | request            | `request`, `time`, `points` (ids), `status`, `round`, `detail`, `records` (an addition's, postcard); `sha256` |
//!
//! Every row that matters carries a checksum (issue 28, item 10: a bit
//! flip turned a pending erasure of points `17,22` into one of `17,23`):
//! the state's over its blob, a request's over all its columns,
//! rewritten with every change. [`ClientStore::open`] runs SQLite's
//! `quick_check` and checks every row; every read checks its rows. A
//! store of an earlier version gets its requests' checksums when it is
//! first opened.
//!
//! A request is `pending` when the operator asks (`mufc client forget`,
//! `mufc client add`), `applied` once the running client has removed the
//! points from its state or learned the records (in the same transaction
//! as the new state), `acknowledged` once a round that included the client
//! committed at the server, or `refused` (an id the client does not hold,
//! a record it cannot take). The points of an applied removal are gone
//! from this file at once; the model forgets them when the round commits.
//! An addition's records wait in its row until it is applied.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use mufc::ClientId;
use mufc::remote::RemoteClient;
use rusqlite::{Connection, OpenFlags, OptionalExtension, params};
use seeding::Dataset;
use sha2::{Digest, Sha256};

use crate::NetError;

mod additions;
mod leaving;
mod members;
mod replay;
mod requests;

pub use members::Member;
pub use requests::Asked;
pub(crate) mod reservation;
mod state;

use state::State;

pub use reservation::FirstStart;

const TABLES: &str = "
CREATE TABLE meta (key TEXT PRIMARY KEY, value ANY NOT NULL) STRICT;
CREATE TABLE state (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    state BLOB NOT NULL,
    sha256 BLOB NOT NULL
) STRICT;
CREATE TABLE requests (
    request INTEGER PRIMARY KEY AUTOINCREMENT,
    time INTEGER NOT NULL,
    points TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'applied', 'acknowledged', 'refused')),
    round INTEGER,
    detail TEXT NOT NULL DEFAULT '',
    sha256 BLOB,
    records BLOB
) STRICT;
";

/// `PRAGMA application_id` of a client's store: "MUFc".
const APPLICATION_ID: i64 = 0x4D55_4663;

/// Where a removal request stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestStatus {
    /// Asked; the running client has not applied it yet.
    Pending,
    /// The client removed the points; a round has not committed since.
    Applied,
    /// A round that included the client committed: the model forgot them.
    Acknowledged {
        /// The round.
        round: u64,
    },
    /// The server withdrew its model (docs/threat-model.md P4: too few
    /// clients with points were left): no model counts the points, and
    /// no round will run.
    Withdrawn {
        /// Why, as the server said it.
        reason: String,
    },
    /// The client refused it.
    Refused {
        /// Why.
        reason: String,
    },
}

/// A client's store (see the module docs).
#[derive(Debug)]
pub struct ClientStore {
    /// Behind a mutex so that the store may be shared by the tasks of an
    /// async runtime (a connection is `Send`, not `Sync`).
    conn: Mutex<Connection>,
    path: PathBuf,
}

/// `path` with `suffix` added to its file name.
pub(crate) fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn checksum(blob: &[u8]) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(b"mufc-client-state/");
    h.update(blob);
    h.finalize().to_vec()
}

impl ClientStore {
    /// The connection (a panic of another holder left it as it was:
    /// every write is one transaction).
    fn db(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn error(&self, what: &str, e: impl std::fmt::Display) -> NetError {
        NetError::ClientStore {
            path: self.path.clone(),
            reason: format!("{what}: {e}"),
        }
    }

    /// Creates the store of client `name` holding `data`, a new file that
    /// only its owner may read or write (mode 0600 on Unix: it holds the
    /// client's records).
    ///
    /// The points must lie in the model's box `[-1/2, 1/2]^d` (the
    /// federation across processes always quantizes): a point outside
    /// would fail every round the client joins, so it is refused here,
    /// before anything is written.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if a point lies outside the box, if
    /// `path` exists or cannot be written.
    pub fn create(path: impl AsRef<Path>, name: &str, data: &Dataset) -> Result<Self, NetError> {
        Self::create_as(path.as_ref(), name, data, rand::random())
    }

    /// [`Self::create`] with the identity `identity` (a first start's,
    /// reserved before the server admitted the client).
    pub(crate) fn create_as(
        path: &Path,
        name: &str,
        data: &Dataset,
        identity: [u8; 32],
    ) -> Result<Self, NetError> {
        let path = path.to_path_buf();
        let at = path.clone();
        let fail = |what: &str, e: &dyn std::fmt::Display| NetError::ClientStore {
            path: at.clone(),
            reason: format!("{what}: {e}"),
        };
        Self::check_importable(&path, data)?;
        // Built aside and linked into place once complete: a client
        // stopped while the store is written leaves no half-written file
        // where its store should be (it would not open, and the client
        // would not start again). The file is new and readable by its
        // owner only: the store holds the client's records (SQLite would
        // create it with the umask's mode, world-readable by default; its
        // journal copies the mode of the database).
        let exists = || fail("creating it", &"the file exists");
        if path.symlink_metadata().is_ok() {
            return Err(exists());
        }
        let building = sibling(&path, ".creating");
        // What a stopped creation left: ours to discard.
        let _ = std::fs::remove_file(&building);
        let _ = std::fs::remove_file(sibling(&building, "-journal"));
        let mut file = std::fs::OpenOptions::new();
        file.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            file.mode(0o600);
        }
        file.open(&building).map_err(|e| fail("creating it", &e))?;
        let built = Self::write_new(&building, name, data, identity);
        let placed = built.and_then(|()| {
            // `link` never replaces a file: a store that appeared
            // meanwhile is kept.
            std::fs::hard_link(&building, &path).map_err(|e| {
                if e.kind() == std::io::ErrorKind::AlreadyExists {
                    exists()
                } else {
                    fail("creating it", &e)
                }
            })
        });
        let _ = std::fs::remove_file(&building);
        placed?;
        let conn = Connection::open(&path).map_err(|e| fail("opening it", &e))?;
        mufc_store::configure(&conn).map_err(|e| fail("configuring it", &e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| fail("configuring it", &e))?;
        Ok(Self {
            conn: Mutex::new(conn),
            path,
        })
    }

    /// Writes a new store's tables and first rows into the empty file
    /// `path`, and closes it.
    fn write_new(
        path: &Path,
        name: &str,
        data: &Dataset,
        identity: [u8; 32],
    ) -> Result<(), NetError> {
        let fail = |what: &str, e: &dyn std::fmt::Display| NetError::ClientStore {
            path: path.to_path_buf(),
            reason: format!("{what}: {e}"),
        };
        let mut conn = Connection::open(path).map_err(|e| fail("creating it", &e))?;
        mufc_store::configure(&conn).map_err(|e| fail("configuring it", &e))?;
        let state = State {
            id: None,
            data: data.clone(),
            setup: None,
            seeds: Vec::new(),
            sessions: Vec::new(),
            last_sum: Vec::new(),
            sent: None,
        };
        let blob = postcard::to_allocvec(&state).map_err(|e| fail("encoding", &e))?;
        let tx = conn
            .transaction()
            .map_err(|e| fail("starting a transaction", &e))?;
        tx.execute_batch(TABLES)
            .map_err(|e| fail("creating the tables", &e))?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(|e| fail("stamping it", &e))?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('name', ?1), ('created', ?2), \
             ('identity', ?3)",
            params![name, unix_now(), identity.as_slice()],
        )
        .map_err(|e| fail("writing the metadata", &e))?;
        tx.execute(
            "INSERT INTO state (id, state, sha256) VALUES (1, ?1, ?2)",
            params![blob, checksum(&blob)],
        )
        .map_err(|e| fail("writing the state", &e))?;
        tx.commit().map_err(|e| fail("committing", &e))?;
        conn.close().map_err(|(_, e)| fail("closing it", &e))
    }

    /// Refuses points outside the model's box `[-1/2, 1/2]^d`, naming the
    /// first (the store at `path` would hold them).
    pub(crate) fn check_importable(path: &Path, data: &Dataset) -> Result<(), NetError> {
        if let Err(seeding::SeedingError::OutsideBox {
            point: Some(pos),
            axis,
            value,
        }) = data.check_in_box()
        {
            return Err(NetError::ClientStore {
                path: path.to_path_buf(),
                reason: format!(
                    "importing the points: point {} (row {pos}) lies outside the model's box \
                     [-1/2, 1/2] on axis {axis} (coordinate {value}); map the data into it \
                     with the bounds the federation agreed on",
                    data.id(pos)
                ),
            });
        }
        Ok(())
    }

    /// Opens an existing store (never creates one).
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if `path` is missing, not a client's
    /// store, or damaged.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, NetError> {
        let path = path.as_ref().to_path_buf();
        let at = path.clone();
        let fail = |what: &str, e: &dyn std::fmt::Display| NetError::ClientStore {
            path: at.clone(),
            reason: format!("{what}: {e}"),
        };
        std::fs::metadata(&path).map_err(|e| fail("opening it", &e))?;
        let mut conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| fail("opening it", &e))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| fail("opening it", &e))?;
        // Damage first: a truncated file reads as "not a store" else.
        mufc_store::quick_check(&conn, &path).map_err(|e| fail("opening it", &e))?;
        let app: i64 = conn
            .pragma_query_value(None, "application_id", |r| r.get(0))
            .map_err(|_| fail("opening it", &"not a client's store"))?;
        if app != APPLICATION_ID {
            return Err(fail("opening it", &"not a client's store"));
        }
        mufc_store::configure(&conn).map_err(|e| fail("configuring it", &e))?;
        // A store of an earlier version has no request checksums: they
        // are written now, once (nothing older can vouch for the rows).
        // Nor the records of additions (issue 29): every row it has is a
        // removal's.
        Self::add_request_records(&conn).map_err(|e| fail("upgrading it", &e))?;
        let has_sums = conn.prepare("SELECT sha256 FROM requests LIMIT 0").is_ok();
        if !has_sums {
            Self::add_request_checksums(&mut conn).map_err(|e| fail("upgrading it", &e))?;
        }
        // A store of an earlier version has no identity: it gets one now
        // (the server keeps the first it hears for each client). Only
        // then is anything written: an open, by the running client or by
        // `mufc client forget` beside it, is otherwise a read.
        let stamped: Option<i64> = conn
            .query_row("SELECT 1 FROM meta WHERE key = 'identity'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| fail("opening it", &e))?;
        if stamped.is_none() {
            let identity: [u8; 32] = rand::random();
            conn.execute(
                "INSERT OR IGNORE INTO meta (key, value) VALUES ('identity', ?1)",
                params![identity.as_slice()],
            )
            .map_err(|e| fail("stamping it", &e))?;
        }
        let store = Self {
            conn: Mutex::new(conn),
            path,
        };
        store.state()?;
        store.identity()?;
        store.check_requests()?;
        Ok(store)
    }

    /// The store's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The client's name.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if it cannot be read.
    pub fn name(&self) -> Result<String, NetError> {
        self.db()
            .query_row("SELECT value FROM meta WHERE key = 'name'", [], |r| {
                r.get(0)
            })
            .map_err(|e| self.error("reading the name", e))
    }

    /// The store's identity: random, from its creation, sent to the
    /// server in every Hello. The server admits each client from the store
    /// it first spoke from, so that a store imported again (holding
    /// records the client forgot) cannot bring them back.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if it cannot be read or is not 32 bytes.
    pub fn identity(&self) -> Result<[u8; 32], NetError> {
        let bytes: Vec<u8> = self
            .db()
            .query_row("SELECT value FROM meta WHERE key = 'identity'", [], |r| {
                r.get(0)
            })
            .map_err(|e| self.error("reading the identity", e))?;
        bytes
            .try_into()
            .map_err(|_| self.error("reading the identity", "it is not 32 bytes"))
    }

    fn state(&self) -> Result<State, NetError> {
        Self::state_in(&self.db()).map_err(|e| self.error("reading the state", e))
    }

    /// The state as `conn` reads it (inside a transaction, for one).
    fn state_in(conn: &Connection) -> Result<State, String> {
        let (blob, sum): (Vec<u8>, Vec<u8>) = conn
            .query_row("SELECT state, sha256 FROM state WHERE id = 1", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(|e| e.to_string())?;
        if checksum(&blob) != sum {
            return Err("it does not match its checksum".into());
        }
        state::parse(&blob).map_err(|e| format!("parsing it: {e}"))
    }

    /// The client's id in the federation, once a server welcomed it.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if the state cannot be read.
    pub fn id(&self) -> Result<Option<ClientId>, NetError> {
        Ok(self.state()?.id)
    }

    /// The points the client holds now.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if the state cannot be read.
    pub fn data(&self) -> Result<Dataset, NetError> {
        Ok(self.state()?.data)
    }

    /// The client as stored, with id `id` (the server's welcome): rebuilt
    /// and checked by [`RemoteClient::restore`].
    ///
    /// # Errors
    ///
    /// [`NetError::Protocol`] if the store was welcomed under another id;
    /// the errors of the restore.
    pub fn client(&self, id: ClientId) -> Result<RemoteClient, NetError> {
        let s = self.state()?;
        if let Some(stored) = s.id
            && stored != id
        {
            return Err(NetError::Protocol(format!(
                "the server welcomed this client as {id}, its store as {stored}"
            )));
        }
        let sessions: BTreeSet<[u8; 32]> = s.sessions.into_iter().collect();
        Ok(
            RemoteClient::restore(id, s.data, s.setup, &s.seeds, sessions)?
                .with_last_sum(s.last_sum)
                .with_sent(s.sent),
        )
    }

    fn write_state(tx: &Connection, client: &RemoteClient) -> Result<(), rusqlite::Error> {
        let state = State {
            id: Some(client.id()),
            data: client.data().clone(),
            setup: client.setup().cloned(),
            seeds: client.seeds().to_vec(),
            sessions: client.sessions().iter().copied().collect(),
            last_sum: client.last_sum().to_vec(),
            sent: client.sent().cloned(),
        };
        Self::write_blob(tx, &state)
    }

    fn write_blob(tx: &Connection, state: &State) -> Result<(), rusqlite::Error> {
        let blob = postcard::to_allocvec(state)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        tx.execute(
            "INSERT OR REPLACE INTO state (id, state, sha256) VALUES (1, ?1, ?2)",
            params![blob, checksum(&blob)],
        )?;
        Ok(())
    }

    /// Writes the client's state.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if writing fails (the old state stays).
    pub fn save(&self, client: &RemoteClient) -> Result<(), NetError> {
        Self::write_state(&self.db(), client).map_err(|e| self.error("writing the state", e))
    }
}
