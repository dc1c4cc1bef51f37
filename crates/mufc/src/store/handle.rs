//! The store: building one ([`Store::fit`]), opening one ([`Store::open`]),
//! and what it tells ([`Store::predict`], [`Store::centroids`], the
//! accessors).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags, params};
use seeding::{BoxTransform, PointId};

use super::error::StoreError;
use super::fault::FaultPoint;
use super::load::{Loaded, check_header, load, quick_check};
use super::record::RecordId;
use super::rows::{checksum, client_blob, server_blob};
use super::schema::{configure, create};
use super::types::{ClientRecords, IfExists};
use crate::{ClientId, Federation, FitReport, ValidConfig};

/// A trained federation in an SQLite file, served request by request (see
/// the [module docs](super) for the schema and the guarantees).
///
/// # Example
///
/// ```
/// use mufc::FederationConfig;
/// use mufc::store::{ClientRecords, IfExists, Store};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let clients: Vec<Dataset> = (0..3)
///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
///     .collect::<Result<_, _>>()?;
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("model.mufc");
/// let config = FederationConfig::new(2).gamma(0.1).validate()?;
/// let (store, report) = Store::fit(&path, ClientRecords::numbered(clients), &config, IfExists::Refuse)?;
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
/// assert!(Store::fit(&path, again, &config, IfExists::Refuse).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Store {
    pub(super) conn: Connection,
    pub(super) path: PathBuf,
    pub(super) fed: Federation,
    pub(super) records: HashMap<RecordId, (ClientId, PointId)>,
    pub(super) model_version: u64,
    /// The map from the data's coordinates to the model's, if training
    /// used one.
    pub(super) transform: Option<BoxTransform>,
    pub(super) last_entry: i64,
    pub(super) fault: Option<FaultPoint>,
    pub(super) poisoned: bool,
}

/// The rollback journal SQLite keeps next to `path` during a transaction.
fn journal_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push("-journal");
    PathBuf::from(name)
}

fn io(what: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.to_path_buf();
    move |source| StoreError::Io { what, path, source }
}

fn sql_client(id: ClientId) -> Result<i64, StoreError> {
    i64::try_from(id.0).map_err(|_| StoreError::ClientOutOfRange(id))
}

fn sql_point(id: PointId) -> Result<i64, StoreError> {
    i64::try_from(id.0).map_err(|_| StoreError::corrupt(format!("point id {id} above 2^63 - 1")))
}

/// Seconds since the Unix epoch (0 for a clock before it).
pub(super) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Opens `path` read-write, never creating it, with the store's settings.
fn connect(path: &Path) -> Result<Connection, StoreError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(StoreError::db("opening the database"))?;
    // Another process's request holds the write lock for milliseconds:
    // wait for it rather than fail at once.
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .map_err(StoreError::db("setting the busy timeout"))?;
    Ok(conn)
}

/// Writes client `c`'s row (in a transaction of the caller's).
pub(super) fn write_client(conn: &Connection, c: &crate::Client) -> Result<(), StoreError> {
    let key = sql_client(c.id())?;
    let blob = client_blob(c)?;
    let sum = checksum("clients", key, &blob);
    conn.execute(
        "INSERT OR REPLACE INTO clients (id, state, sha256) VALUES (?1, ?2, ?3)",
        params![key, blob, sum.as_slice()],
    )
    .map_err(StoreError::db("writing a client's state"))?;
    Ok(())
}

/// Writes the server row at `model_version`.
pub(super) fn write_server(
    conn: &Connection,
    fed: &Federation,
    model_version: u64,
    transform: Option<&BoxTransform>,
) -> Result<(), StoreError> {
    let blob = server_blob(fed, model_version, transform)?;
    let sum = checksum("server", 1, &blob);
    conn.execute(
        "INSERT OR REPLACE INTO server (id, state, sha256) VALUES (1, ?1, ?2)",
        params![blob, sum.as_slice()],
    )
    .map_err(StoreError::db("writing the server state"))?;
    Ok(())
}

/// Writes a new store's every row into the empty database `conn`, in one
/// transaction.
fn write_new(
    conn: &mut Connection,
    fed: &Federation,
    records: &HashMap<RecordId, (ClientId, PointId)>,
    transform: Option<&BoxTransform>,
    roster: Option<&[String]>,
) -> Result<(), StoreError> {
    let tx = conn
        .transaction()
        .map_err(StoreError::db("starting the transaction"))?;
    create(&tx)?;
    let meta = StoreError::db("writing the metadata");
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('created', ?1), ('mufc_version', ?2)",
        params![
            i64::try_from(unix_now()).unwrap_or(i64::MAX),
            env!("CARGO_PKG_VERSION")
        ],
    )
    .map_err(meta)?;
    if let Some(names) = roster {
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
    write_server(&tx, fed, 1, transform)?;
    for c in fed.clients() {
        write_client(&tx, c)?;
    }
    {
        let mut stmt = tx
            .prepare("INSERT INTO records (record, client, point) VALUES (?1, ?2, ?3)")
            .map_err(StoreError::db("writing the records"))?;
        for (r, (c, p)) in records {
            let r = r.to_sql().ok_or(StoreError::RecordOutOfRange(*r))?;
            stmt.execute(params![r, sql_client(*c)?, sql_point(*p)?])
                .map_err(StoreError::db("writing the records"))?;
        }
    }
    tx.commit()
        .map_err(StoreError::db("committing the new store"))
}

impl Store {
    /// Trains a federation (Algorithm 1, [`Federation::with_ids`]) on
    /// `clients` with `config` and writes it to a new store at `path`
    /// (model version 1), atomically: the database is written to a
    /// temporary file next to `path` and renamed to it once committed.
    /// Returns the store and the training report.
    ///
    /// # Errors
    ///
    /// [`StoreError::Exists`] with [`IfExists::Refuse`] when `path` (or a
    /// rollback journal of it) exists; [`StoreError::DuplicateRecord`],
    /// [`StoreError::RecordOutOfRange`], [`StoreError::ClientOutOfRange`]
    /// for ids a store cannot hold; [`StoreError::Mufc`] for the errors of
    /// [`Federation::with_ids`]; [`StoreError::Io`] and
    /// [`StoreError::Database`] when writing fails (nothing is left at
    /// `path` then).
    ///
    /// # Example
    ///
    /// See [`Store`].
    pub fn fit(
        path: impl AsRef<Path>,
        clients: Vec<ClientRecords>,
        config: &ValidConfig,
        if_exists: IfExists,
    ) -> Result<(Self, FitReport), StoreError> {
        Self::fit_transformed(path, clients, config, if_exists, None)
    }

    /// As [`Self::fit`], for data that `transform` mapped into the
    /// model's coordinates (the clients' points are the mapped ones): the
    /// store keeps the map, so that [`Self::predict`] takes points in the
    /// data's own coordinates and [`Self::centroids`] gives them there.
    ///
    /// # Errors
    ///
    /// As [`Self::fit`]; [`StoreError::InvalidTransform`] for a transform
    /// of another dimension than the points'.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    /// use mufc::store::{ClientRecords, IfExists, Store};
    /// use nalgebra::DMatrix;
    /// use seeding::{BoxTransform, Dataset};
    ///
    /// // Data in metres, mapped into the box by (x - 100) / 400.
    /// let t = BoxTransform::new(vec![100.0, 100.0], 1.0 / 400.0)?;
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let dir = tempfile::tempdir()?;
    /// let config = FederationConfig::new(2).gamma(0.1).validate()?;
    /// let (store, _) = Store::fit_transformed(
    ///     dir.path().join("m.mufc"), ClientRecords::numbered(clients), &config, IfExists::Refuse, Some(t.clone()),
    /// )?;
    /// // Centroids in metres; a point in metres is predicted as its
    /// // mapped point would be.
    /// let c = store.centroids();
    /// assert!(c.iter().all(|c| c.coords.iter().all(|x| (0.0..=300.0).contains(x))));
    /// let metres = DMatrix::from_column_slice(2, 1, &c[0].coords);
    /// assert_eq!(store.predict(&metres)?, vec![0]);
    /// assert_eq!(store.transform(), Some(&t));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn fit_transformed(
        path: impl AsRef<Path>,
        clients: Vec<ClientRecords>,
        config: &ValidConfig,
        if_exists: IfExists,
        transform: Option<BoxTransform>,
    ) -> Result<(Self, FitReport), StoreError> {
        let path = path.as_ref();
        let journal = journal_of(path);
        if if_exists == IfExists::Refuse {
            // Checked before training, which may take long; the rename
            // below checks again.
            for p in [path, journal.as_path()] {
                if p.symlink_metadata().is_ok() {
                    return Err(StoreError::Exists {
                        path: p.to_path_buf(),
                    });
                }
            }
        }
        let mut records = HashMap::new();
        let mut data = Vec::with_capacity(clients.len());
        for c in clients {
            let (id, d, recs) = c.into_parts();
            sql_client(id)?;
            for (&point, &r) in d.ids().iter().zip(&recs) {
                r.to_sql().ok_or(StoreError::RecordOutOfRange(r))?;
                if records.insert(r, (id, point)).is_some() {
                    return Err(StoreError::DuplicateRecord(r));
                }
            }
            data.push((id, d));
        }
        let fed = Federation::with_ids(data, config)?;
        let report = fed.fit_report().clone();
        let store = Self::create_new(path, fed, records, transform, if_exists, None)?;
        Ok((store, report))
    }

    /// Writes `fed` (and its `records`, its input `transform`, the
    /// `roster` of a federation run across processes) to a new store at
    /// `path`, atomically: a temporary file next to `path`, renamed to it
    /// once committed.
    pub(super) fn create_new(
        path: &Path,
        fed: Federation,
        records: HashMap<RecordId, (ClientId, PointId)>,
        transform: Option<BoxTransform>,
        if_exists: IfExists,
        roster: Option<&[String]>,
    ) -> Result<Self, StoreError> {
        let journal = journal_of(path);
        if let Some(t) = &transform
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

        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let tmp = tempfile::Builder::new()
            .prefix(".mufc-store-")
            .suffix(".tmp")
            .tempfile_in(dir)
            .map_err(io("create a temporary file in", dir))?;
        {
            let mut conn = connect(tmp.path())?;
            configure(&conn)?;
            write_new(&mut conn, &fed, &records, transform.as_ref(), roster)?;
            conn.close()
                .map_err(|(_, e)| StoreError::db("closing the new store")(e))?;
        }
        match if_exists {
            IfExists::Refuse => tmp.persist_noclobber(path).map_err(|e| {
                if e.error.kind() == std::io::ErrorKind::AlreadyExists {
                    StoreError::Exists {
                        path: path.to_path_buf(),
                    }
                } else {
                    io("rename the new store to", path)(e.error)
                }
            })?,
            IfExists::Replace => {
                // A journal of the replaced store would be rolled back
                // into the new one.
                match std::fs::remove_file(&journal) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        return Err(io("remove the old journal", &journal)(e));
                    }
                    _ => {}
                }
                tmp.persist(path)
                    .map_err(|e| io("rename the new store to", path)(e.error))?
            }
        };
        // The rename is durable once the directory's entries are.
        crate::persist::save::sync_dir(dir).map_err(io("flush the directory", dir))?;
        let conn = connect(path)?;
        configure(&conn)?;
        Ok(Self {
            conn,
            path: path.to_path_buf(),
            fed,
            records,
            model_version: 1,
            transform,
            last_entry: 0,
            fault: None,
            poisoned: false,
        })
    }

    /// Opens the store at `path`: refuses a file that is not a store or
    /// of another schema version, runs SQLite's `quick_check`, checks
    /// every state blob against its SHA-256, rebuilds the federation (as
    /// [`Federation::load`] does: each client's clustering from its
    /// points, the server's from the decoded counts, all checked against
    /// the stored seeds and counts) and checks that the records name every
    /// point once. A crash in a request's transaction is rolled back here
    /// (SQLite's hot journal).
    ///
    /// # Errors
    ///
    /// [`StoreError::Io`] when `path` cannot be read (it is never
    /// created), [`StoreError::NotAStore`], [`StoreError::SchemaVersion`]
    /// (naming the version found), [`StoreError::Corrupt`] for any damage
    /// found, [`StoreError::Database`] for other SQLite errors (a locked
    /// database, ...).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::store::{Store, StoreError};
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
        quick_check(&conn, path)?;
        let Loaded {
            fed,
            records,
            model_version,
            transform,
            last_entry,
        } = load(&conn)?;
        Ok(Self {
            conn,
            path: path.to_path_buf(),
            fed,
            records,
            model_version,
            transform,
            last_entry,
            fault: None,
            poisoned: false,
        })
    }

    /// Reloads the state from the file after a failed write; the store is
    /// poisoned if that fails too.
    pub(super) fn reload(&mut self) {
        match load(&self.conn) {
            Ok(l) => {
                self.fed = l.fed;
                self.records = l.records;
                self.model_version = l.model_version;
                self.transform = l.transform;
                self.last_entry = l.last_entry;
            }
            Err(_) => self.poisoned = true,
        }
    }
}
