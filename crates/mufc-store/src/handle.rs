//! The store: building one ([`Store::fit`]), opening one ([`Store::open`]),
//! and the state it holds in memory ([`State`]). The records a fit starts
//! from are sorted in the `admitted` submodule.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, params};
use seeding::{BoxTransform, PointId};

use crate::digest::RecordsDigest;
use crate::error::StoreError;
use crate::fault::FaultPoint;
use crate::load::{check_header, load, schema_cookie};
use crate::record::{ClientName, RecordId};
use crate::reports::Forgotten;
use crate::rows::{checksum, client_blob, server_blob};
use crate::schema::{configure, create};
pub(crate) use crate::state::State;
use crate::tombstone::{Inheritance, Secret};
use crate::types::{ClientRecords, FitOptions, IfExists, OnForgotten};
use mufc::{ClientId, Federation, FitReport, ValidConfig};

mod admitted;

use admitted::Admitted;

/// A trained federation in an SQLite file, served request by request (see
/// the [module docs](super) for the schema and the guarantees).
///
/// # Example
///
/// ```
/// use mufc::FederationConfig;
/// use mufc_store::{ClientRecords, FitOptions, Store};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let clients: Vec<Dataset> = (0..3)
///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
///     .collect::<Result<_, _>>()?;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("model.mufc");
/// let config = FederationConfig::new(2).gamma(0.1).validate()?;
/// let (store, report) = Store::fit(&path, ClientRecords::numbered(clients), &config, &FitOptions::new())?;
/// assert_eq!(report.included.len(), 3);
/// let centroids = store.centroids();
/// assert_eq!(centroids.len(), 2);
/// assert_eq!(centroids.iter().map(|c| c.weight).sum::<u64>(), 90);
/// // Nearest centroid of new points (one per column).
/// let labels = store.predict(&DMatrix::from_column_slice(2, 2, &[0.0, 0.0, 0.2, 0.1]))?;
/// assert_eq!(labels.len(), 2);
/// // An existing store is not overwritten unless asked.
/// drop(store);
/// let again = ClientRecords::numbered(vec![Dataset::new(DMatrix::zeros(2, 4))?]);
/// assert!(Store::fit(&path, again, &config, &FitOptions::new()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
    pub(crate) path: PathBuf,
    pub(crate) state: State,
    pub(crate) fault: Option<FaultPoint>,
    pub(crate) poisoned: bool,
    /// The records [`Store::fit`] left out (forgotten by the store it
    /// replaced).
    pub(crate) skipped: Vec<Forgotten>,
}

impl Store {
    /// A store serving `state` from the connection `conn` to `path`, with
    /// no fault injected, not poisoned, and nothing skipped.
    fn serving(conn: Connection, path: &Path, state: State) -> Self {
        Self {
            conn,
            path: path.to_path_buf(),
            state,
            fault: None,
            poisoned: false,
            skipped: Vec::new(),
        }
    }
}

/// The rollback journal SQLite keeps next to `path` during a transaction.
fn journal_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-journal");
    PathBuf::from(name)
}

pub(crate) fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |source| StoreError::Io { what, path, source }
}

pub(crate) fn sql_client(id: ClientId) -> i64 {
    // Clients are numbered 0.. by the store: far below 2^63.
    i64::try_from(id.0).unwrap_or(i64::MAX)
}

pub(crate) fn sql_point(id: PointId) -> Result<i64, StoreError> {
    i64::try_from(id.0).map_err(|_| StoreError::corrupt(format!("point id {id} above 2^63 - 1")))
}

/// Seconds since the Unix epoch (0 for a clock before it).
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// How long a busy connection waits for another process's transaction
/// before it fails: requests queue behind each other, each holding the
/// write lock for the time of one request (milliseconds to a second).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// Flushes a directory's entries (a rename in it is durable after this).
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

/// Best effort: directories cannot be opened for flushing here.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Opens `path` read-write, never creating it, with the store's settings.
fn connect(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(StoreError::db("opening the database"))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(StoreError::db("setting the busy timeout"))?;
    Ok(conn)
}

/// Writes client `c`'s row (in a transaction of the caller's).
pub(crate) fn write_client(conn: &Connection, c: &mufc::Client) -> Result<(), StoreError> {
    let key = sql_client(c.id());
    let blob = client_blob(c)?;
    let sum = checksum("clients", key, &blob);
    conn.prepare_cached("INSERT OR REPLACE INTO clients (id, state, sha256) VALUES (?1, ?2, ?3)")
        .and_then(|mut s| s.execute(params![key, blob, sum.as_slice()]))
        .map_err(StoreError::db("writing a client's state"))?;
    // A row of schema 6 in a store of schema 5 makes it the current schema
    // (in the same transaction).
    conn.pragma_update(None, "user_version", crate::schema::SCHEMA_VERSION)
        .map_err(StoreError::db("setting the schema version"))?;
    Ok(())
}

/// Writes the server row of `state` at `model_version`.
pub(crate) fn write_server(
    conn: &Connection,
    state: &State,
    model_version: u64,
    records: RecordsDigest,
) -> Result<(), StoreError> {
    write_server_of(conn, &state.fed, state, model_version, records)
}

/// Writes the server row of `fed`, with the rest of `state`, at
/// `model_version`.
pub(crate) fn write_server_of(
    conn: &Connection,
    fed: &Federation,
    state: &State,
    model_version: u64,
    records: RecordsDigest,
) -> Result<(), StoreError> {
    let blob = server_blob(
        fed,
        model_version,
        state.transform.as_ref(),
        &state.names,
        records,
    )?;
    let sum = checksum("server", 1, &blob);
    conn.execute(
        "INSERT OR REPLACE INTO server (id, state, sha256) VALUES (1, ?1, ?2)",
        params![blob, sum.as_slice()],
    )
    .map_err(StoreError::db("writing the server state"))?;
    // A server row of schema 8 makes a store of an older schema schema 8
    // (in the same transaction).
    conn.pragma_update(None, "user_version", crate::schema::SCHEMA_VERSION)
        .map_err(StoreError::db("setting the schema version"))?;
    Ok(())
}

/// What [`Store::fit`] checks before training: the deferral limit, and,
/// unless replacing, that nothing is at `path` (or its journal).
fn check_fit(path: &Path, options: &FitOptions) -> Result<(), StoreError> {
    if options.max_defer() > crate::MAX_DEFER {
        return Err(StoreError::MaxDefer {
            secs: options.max_defer().as_secs(),
        });
    }
    let journal = journal_of(path);
    if options.if_exists() == IfExists::Refuse {
        // Checked before training, which may take long; the rename
        // (`persist`) checks again.
        for p in [path, journal.as_path()] {
            if p.symlink_metadata().is_ok() {
                return Err(StoreError::Exists {
                    path: p.to_path_buf(),
                });
            }
        }
    }
    Ok(())
}

/// Refuses a transform of another dimension than `fed`'s points.
fn check_transform(transform: Option<&BoxTransform>, fed: &Federation) -> Result<(), StoreError> {
    if let Some(t) = transform
        && t.offset().len() != fed.dim()
    {
        return Err(StoreError::InvalidTransform {
            reason: format!(
                "of dimension {} for points of dimension {}",
                t.offset().len(),
                fed.dim()
            ),
        });
    }
    Ok(())
}

/// The state of a new store of `fed` and `new`, at model version 1 (its
/// records and schema cookie are set once it is written).
fn new_state(fed: Federation, new: &NewStore<'_>, secret: Secret) -> State {
    let by_name = new.names.iter().map(|(c, n)| (n.clone(), *c)).collect();
    State {
        fed,
        records: HashMap::new(),
        names: new.names.clone(),
        by_name,
        model_version: 1,
        transform: new.transform.clone(),
        last_entry: 0,
        schema: 0,
        secret,
        max_defer: new.max_defer,
        records_digest: RecordsDigest::of(&new.records),
    }
}

/// Writes the new store into a temporary file in `dir`.
fn write_temporary(
    dir: &Path,
    state: &State,
    new: &NewStore<'_>,
) -> Result<tempfile::NamedTempFile, StoreError> {
    let tmp = tempfile::Builder::new()
        .prefix(".mufc-store-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io("create a temporary file in", dir))?;
    let mut conn = connect(tmp.path())?;
    configure(&conn)?;
    write_new(&mut conn, state, new)?;
    conn.close()
        .map_err(|(_, e)| StoreError::db("closing the new store")(e))?;
    Ok(tmp)
}

/// Renames the written temporary file to `path`, never over a file.
fn persist(
    tmp: tempfile::NamedTempFile,
    path: &Path,
    if_exists: IfExists,
) -> Result<(), StoreError> {
    if if_exists == IfExists::Replace {
        // No store was there to lock (else it was replaced in place by
        // `create_new`); a journal without its database is a leftover
        // that would be rolled back into the new one.
        let journal = journal_of(path);
        match std::fs::remove_file(&journal) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io("remove the old journal", &journal)(e));
            }
            _ => {}
        }
    }
    tmp.persist_noclobber(path).map_err(|e| {
        if e.error.kind() == std::io::ErrorKind::AlreadyExists {
            StoreError::Exists {
                path: path.to_path_buf(),
            }
        } else {
            io("rename the new store to", path)(e.error)
        }
    })?;
    Ok(())
}

/// What a new store is made of, besides its federation.
pub(crate) struct NewStore<'a> {
    pub(crate) records: HashMap<RecordId, (ClientId, PointId)>,
    pub(crate) names: BTreeMap<ClientId, ClientName>,
    pub(crate) transform: Option<BoxTransform>,
    pub(crate) if_exists: IfExists,
    pub(crate) roster: Option<&'a [String]>,
    pub(crate) max_defer: u64,
    pub(crate) inheritance: Option<Inheritance>,
}

/// Writes a new store's every row into the empty database `conn`, in one
/// transaction.
fn write_new(conn: &mut Connection, state: &State, new: &NewStore<'_>) -> Result<(), StoreError> {
    let tx = conn
        .transaction()
        .map_err(StoreError::db("starting the transaction"))?;
    write_rows(&tx, state, new)?;
    tx.commit()
        .map_err(StoreError::db("committing the new store"))
}

/// Creates the tables and writes a new store's every row, in the
/// caller's transaction.
fn write_rows(tx: &Connection, state: &State, new: &NewStore<'_>) -> Result<(), StoreError> {
    create(tx)?;
    let meta = StoreError::db("writing the metadata");
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('created', ?1), ('mufc_version', ?2), \
         ('max_defer', ?3)",
        params![
            i64::try_from(unix_now()).unwrap_or(i64::MAX),
            env!("CARGO_PKG_VERSION"),
            i64::try_from(new.max_defer).unwrap_or(i64::MAX),
        ],
    )
    .map_err(meta)?;
    state.secret.write(tx)?;
    if let Some(names) = new.roster {
        let blob = postcard::to_allocvec(names).map_err(|e| StoreError::Database {
            context: "writing the roster",
            source: e.to_string().into(),
        })?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('roster', ?1)",
            params![blob],
        )
        .map_err(StoreError::db("writing the roster"))?;
    }
    write_server(tx, state, 1, RecordsDigest::of(&new.records))?;
    for c in state.fed.clients() {
        write_client(tx, c)?;
    }
    {
        let mut stmt = tx
            .prepare("INSERT INTO records (record, client, point) VALUES (?1, ?2, ?3)")
            .map_err(StoreError::db("writing the records"))?;
        for (r, (c, p)) in &new.records {
            stmt.execute(params![r.to_sql(), sql_client(*c), sql_point(*p)?])
                .map_err(StoreError::db("writing the records"))?;
        }
    }
    if let Some(i) = &new.inheritance {
        i.write(tx)?;
    }
    Ok(())
}

/// A store that `fit` replaces, write-locked (`BEGIN IMMEDIATE`) from
/// before its tombstones are read until the new store is committed in
/// its place: a `forget` of another process either committed before
/// (and its tombstones are inherited) or waits and is then served on the
/// new store. Dropped without [`Self::commit`], the lock is released and
/// the old store is left as it was.
pub(crate) struct Replaced {
    conn: Connection,
}

impl Replaced {
    /// Locks the store at `path` for replacing (`None` when there is no
    /// file). A file that is not a store is refused: replacing overwrites
    /// stores only, never a data file given by mistake.
    fn lock(path: &Path) -> Result<Option<Self>, StoreError> {
        if path.symlink_metadata().is_err() {
            return Ok(None);
        }
        let conn = connect(path)?;
        check_header(&conn, path).map_err(|e| match e {
            StoreError::NotAStore { path, reason } => StoreError::NotAStore {
                path,
                reason: format!(
                    "{reason}; replacing overwrites a store only: move the file away or \
                     name another"
                ),
            },
            e => e,
        })?;
        configure(&conn)?;
        conn.execute_batch("BEGIN IMMEDIATE")
            .map_err(StoreError::db("locking the store being replaced"))?;
        Ok(Some(Self { conn }))
    }

    /// Its secret and tombstones.
    fn inheritance(&self) -> Result<Inheritance, StoreError> {
        Inheritance::read(&self.conn).map_err(|e| StoreError::Corrupt {
            reason: format!(
                "the store being replaced keeps tombstones that do not read back ({e}): move \
                 it away first"
            ),
        })
    }

    /// Writes the new store over the old one's tables and commits: one
    /// transaction, so a crash leaves the old store or the new one.
    /// `secure_delete` overwrites the old rows' pages.
    fn commit(self, state: &State, new: &NewStore<'_>) -> Result<Connection, StoreError> {
        let tables: Vec<String> = {
            let mut stmt = self
                .conn
                .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                .map_err(StoreError::db("listing the replaced tables"))?;
            let rows = stmt
                .query_map([], |r| r.get(0))
                .map_err(StoreError::db("listing the replaced tables"))?;
            rows.collect::<Result<_, _>>()
                .map_err(StoreError::db("listing the replaced tables"))?
        };
        for t in &tables {
            self.conn
                .execute_batch(&format!("DROP TABLE \"{}\"", t.replace('"', "\"\"")))
                .map_err(StoreError::db("dropping the replaced tables"))?;
        }
        write_rows(&self.conn, state, new)?;
        self.conn
            .execute_batch("COMMIT")
            .map_err(StoreError::db("committing the new store"))?;
        Ok(self.conn)
    }
}

impl Store {
    /// Trains a federation (Algorithm 1, [`Federation::with_ids`]) on
    /// `clients` with `config` and writes it to a new store at `path`
    /// (model version 1), atomically: the database is written to a
    /// temporary file next to `path` and renamed to it once committed, or,
    /// replacing a store, written over its tables in one transaction that
    /// holds the store's write lock from before its tombstones are read
    /// (requests of other processes wait, then run on the new store; none
    /// is lost to the replacement).
    /// The clients are numbered `0..` in the order given (their
    /// [`ClientId`]s, from which their seeds derive) and named as given.
    /// Returns the store and the training report.
    ///
    /// Replacing a store ([`FitOptions::replace`]) keeps its secret and
    /// its tombstones: a record it had forgotten is refused, or left out
    /// ([`OnForgotten`]), never brought back silently.
    ///
    /// # Errors
    ///
    /// [`StoreError::Exists`] when `path` (or a rollback journal of it)
    /// exists and replacing was not asked for;
    /// [`StoreError::DuplicateRecord`], [`StoreError::DuplicateClient`];
    /// [`StoreError::Forgotten`] for forgotten records (with
    /// [`OnForgotten::Refuse`]); [`StoreError::Mufc`] for the errors of
    /// [`Federation::with_ids`]; [`StoreError::InvalidTransform`] for a
    /// transform of another dimension; [`StoreError::Io`] and
    /// [`StoreError::Database`] when writing fails (nothing is left at
    /// `path` then).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    /// use mufc_store::{ClientRecords, FitOptions, RecordId, Store, StoreError};
    /// use nalgebra::DMatrix;
    /// use seeding::{BoxTransform, Dataset};
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("m.mufc");
    /// let config = FederationConfig::new(2).gamma(0.1).validate()?;
    /// // Data in metres, mapped into the box by (x - 100) / 400.
    /// let t = BoxTransform::new(vec![100.0, 100.0], 1.0 / 400.0)?;
    /// let options = FitOptions::new().with_transform(Some(t.clone()));
    /// let (mut store, _) = Store::fit(&path, ClientRecords::numbered(clients.clone()), &config, &options)?;
    /// // Centroids in metres; a point in metres is predicted as its
    /// // mapped point would be.
    /// let c = store.centroids();
    /// assert!(c.iter().all(|c| c.coords.iter().all(|x| (0.0..=300.0).contains(x))));
    /// let metres = DMatrix::from_column_slice(2, 1, &c[0].coords);
    /// assert_eq!(store.predict(&metres)?, vec![0]);
    /// assert_eq!(store.transform(), Some(&t));
    /// store.forget(&[RecordId::from(3), RecordId::from(40)])?;
    /// drop(store);
    /// // Fitting the original data again over it: the forgotten records
    /// // are refused, not brought back.
    /// let again = Store::fit(&path, ClientRecords::numbered(clients), &config, &options.replace(true));
    /// assert!(matches!(again, Err(StoreError::Forgotten { records }) if records.len() == 2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fit(
        path: impl AsRef<Path>,
        clients: Vec<ClientRecords>,
        config: &ValidConfig,
        options: &FitOptions,
    ) -> Result<(Self, FitReport), StoreError> {
        let path = path.as_ref();
        check_fit(path, options)?;
        let if_exists = options.if_exists();
        let replaced = match if_exists {
            IfExists::Replace => Replaced::lock(path)?,
            IfExists::Refuse => None,
        };
        let inherited = replaced.as_ref().map(Replaced::inheritance).transpose()?;
        let secret = match &inherited {
            Some(i) => i.secret.clone(),
            None => Secret::generate()?,
        };
        let admitted = Admitted::of(clients, &secret, inherited.as_ref())?;
        if !admitted.skipped.is_empty() && options.forgotten() == OnForgotten::Refuse {
            return Err(StoreError::Forgotten {
                records: admitted.skipped,
            });
        }
        let fed = Federation::with_ids(admitted.data, config)?;
        let report = fed.fit_report().clone();
        let new = NewStore {
            records: admitted.records,
            names: admitted.names,
            transform: options.transform().cloned(),
            if_exists,
            roster: None,
            max_defer: options.max_defer().as_secs(),
            inheritance: inherited,
        };
        let mut store = Self::create_new(path, fed, new, secret, replaced)?;
        store.skipped = admitted.skipped;
        Ok((store, report))
    }

    /// Writes `fed` and `new` to a new store at `path`, atomically: over
    /// the `replaced` store's tables in its locked transaction, else a
    /// temporary file next to `path`, renamed to it once committed.
    pub(crate) fn create_new(
        path: &Path,
        fed: Federation,
        new: NewStore<'_>,
        secret: Secret,
        replaced: Option<Replaced>,
    ) -> Result<Self, StoreError> {
        check_transform(new.transform.as_ref(), &fed)?;
        let mut state = new_state(fed, &new, secret);
        if let Some(r) = replaced {
            let conn = r.commit(&state, &new)?;
            state.schema = schema_cookie(&conn)?;
            state.records = new.records;
            return Ok(Self::serving(conn, path, state));
        }

        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let tmp = write_temporary(dir, &state, &new)?;
        persist(tmp, path, new.if_exists)?;
        // The rename is durable once the directory's entries are.
        sync_dir(dir).map_err(io("flush the directory", dir))?;
        let conn = connect(path)?;
        configure(&conn)?;
        state.schema = schema_cookie(&conn)?;
        state.records = new.records;
        Ok(Self::serving(conn, path, state))
    }

    /// Opens the store at `path`: refuses a file that is not a store or
    /// of another schema version, runs SQLite's `quick_check`, checks
    /// every state blob against its SHA-256, rebuilds the federation (the
    /// server's K-means from the decoded counts, checked against the
    /// clients' histograms; each client from its stored points, seeds and
    /// clusters, without fitting it: a request fits a client it changes
    /// and checks the fit against what was stored, and
    /// [`Self::verify`] fits them all) and checks that the records name
    /// every point once. Everything is read in one read transaction: another
    /// process's request is either wholly in what it reads or not at all.
    /// A crash in a request's transaction is rolled back here (SQLite's
    /// hot journal).
    ///
    /// # Errors
    ///
    /// [`StoreError::Io`] when `path` cannot be read (it is never
    /// created), [`StoreError::NotAStore`], [`StoreError::SchemaVersion`]
    /// (naming the version found), [`StoreError::Corrupt`] for any damage
    /// found, [`StoreError::Database`] for other SQLite errors (a
    /// database locked for longer than a minute, ...).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc_store::{Store, StoreError};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("notes.txt");
    /// std::fs::write(&path, "not a database, but long enough to have a header of 100 bytes ........................................")?;
    /// assert!(matches!(Store::open(&path), Err(StoreError::NotAStore { .. })));
    /// assert!(matches!(Store::open(dir.path().join("missing")), Err(StoreError::Io { .. })));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        let path = path.as_ref();
        std::fs::metadata(path).map_err(io("open", path))?;
        let conn = connect(path)?;
        check_header(&conn, path)?;
        configure(&conn)?;
        crate::schema::upgrade(&conn)?;
        let state = {
            let tx = conn
                .unchecked_transaction()
                .map_err(StoreError::db("starting a read transaction"))?;
            let state = load(&tx, Some(path))?;
            tx.finish()
                .map_err(StoreError::db("ending the read transaction"))?;
            state
        };
        Ok(Self::serving(conn, path, state))
    }

    /// Reloads the state from the file after a failed write; the store is
    /// poisoned if that fails too.
    pub(crate) fn reload(&mut self) {
        let loaded = self
            .conn
            .unchecked_transaction()
            .map_err(StoreError::db("starting a read transaction"))
            .and_then(|tx| {
                let s = load(&tx, None)?;
                tx.finish()
                    .map_err(StoreError::db("ending the read transaction"))?;
                Ok(s)
            });
        match loaded {
            Ok(s) => self.state = s,
            Err(_) => self.poisoned = true,
        }
    }

    /// The records [`Self::fit`] left out because the store it replaced
    /// had forgotten them ([`OnForgotten::Skip`]); empty otherwise, and
    /// for a store opened.
    pub fn skipped(&self) -> &[Forgotten] {
        &self.skipped
    }
}
