//! Saving and loading a federation: the file (`persist`'s format) and a
//! store's parts ([`ServerSnapshot`] and each client's points and seeds),
//! written from the parties and restored into them through every check of
//! `persist::restore`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use crate::persist::{Repr, Restored, bad, corrupt, open, restore, sealed, write_atomically};
use crate::remote::in_process::with_saved_layout;
use crate::remote::{InProcess, RemoteSetup};
use crate::{
    Client, ClientId, ClientSnapshot, Federation, MufcResult, ServerSnapshot, StoredClusters,
};
#[cfg(doc)]
use crate::{MufcError, PersistError};

impl Federation {
    /// The federation as bytes: the file format of the `persist` module
    /// docs (magic, version, length, postcard body, SHA-256), groups
    /// included.
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`] if serialization fails.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let a = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 7 + r) % 10) as f64 / 25.0 - 0.2))?;
    /// let b = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 3 + r) % 11) as f64 / 25.0 - 0.2))?;
    /// // Two clients, and lone updates served at once: both policies
    /// // lowered explicitly (docs/threat-model.md P4, U3).
    /// let config = FederationConfig::new(2).gamma(0.1).min_clients(2).min_updating_clients(1).validate()?;
    /// let mut fed = Federation::new(vec![a, b], &config)?;
    /// let mut loaded = Federation::from_bytes(&fed.to_bytes()?)?;
    /// let req = RemovalRequest::points(ClientId(0), vec![PointId(2)]);
    /// fed.remove(&req)?;
    /// loaded.remove(&req)?;
    /// assert_eq!(fed.server().counts(), loaded.server().counts());
    /// assert_eq!(fed.server().centroids(), loaded.server().centroids());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_bytes(&self) -> MufcResult<Vec<u8>> {
        sealed(&self.repr())
    }

    /// What [`Self::to_bytes`] stores.
    pub(crate) fn repr(&self) -> Repr {
        let history = self.history().to_vec();
        let left = self.parties().left().into_iter().collect();
        (self.server_snapshot()).into_repr(self.parties().client_parts(), history, left)
    }

    /// Saves the federation to a file ([`Self::to_bytes`]), atomically:
    /// the bytes go to a temporary file in the same directory, which is
    /// flushed to disk and renamed over `path`, then the directory is
    /// flushed (on unix; on other platforms that last step is skipped, so
    /// the rename's durability is best effort). On an error, or a crash,
    /// `path` keeps its old contents, whole. The new file is readable and
    /// writable by its owner only (on unix), and a symbolic link at `path`
    /// is replaced, not followed.
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`] for serialization or I/O errors (the
    /// old file, if any, is then intact).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let a = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 7 + r) % 10) as f64 / 25.0 - 0.2))?;
    /// let config = FederationConfig::new(2).gamma(0.1).min_clients(1).min_updating_clients(1).validate()?;
    /// let mut fed = Federation::new(vec![a], &config)?;
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("fed.mufc");
    /// fed.save(&path)?;
    /// fed.remove(&RemovalRequest::points(ClientId(0), vec![PointId(1)]))?;
    /// fed.save(&path)?; // replaces the first save
    /// assert_eq!(Federation::load(&path)?.to_bytes()?, fed.to_bytes()?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn save(&self, path: impl AsRef<Path>) -> MufcResult<()> {
        let bytes = self.to_bytes()?;
        write_atomically(path.as_ref(), &bytes, |f, b| f.write_all(b))
    }
}

impl Federation {
    /// A federation from [`Self::to_bytes`]: the header, length and
    /// checksum are checked first (see the `persist` module docs), then
    /// the clients' clusterings and the server's K-means are rebuilt and
    /// checked against the stored seeds and counts.
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`] for bytes that are not a saved
    /// federation (no magic) or whose stored seeds or counts do not match
    /// the rebuilt state; [`MufcError::Persist`] with
    /// [`PersistError::Truncated`] for bytes cut short,
    /// [`PersistError::Corrupt`] for a checksum mismatch, trailing bytes
    /// or an unparsable body, [`PersistError::UnsupportedVersion`] for
    /// another format version (versions 1 and 2 included); the validation
    /// errors of [`Self::with_ids`] for invalid contents.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{Federation, FederationConfig, MufcError, PersistError};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let a = Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * 7 + r) % 10) as f64 / 25.0 - 0.2))?;
    /// let fed = Federation::new(vec![a], &FederationConfig::new(2).gamma(0.1).min_clients(1).validate()?)?;
    /// let mut bytes = fed.to_bytes()?;
    /// assert_eq!(&bytes[..8], b"MUFCFED\x0c");
    /// // One flipped bit: refused, never another federation.
    /// bytes[40] ^= 4;
    /// assert!(matches!(
    ///     Federation::from_bytes(&bytes),
    ///     Err(MufcError::Persist(PersistError::Corrupt { .. }))
    /// ));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> MufcResult<Self> {
        let body = open(bytes)?;
        let (r, rest): (Repr, &[u8]) = postcard::take_from_bytes(body)
            .map_err(|e| corrupt(format!("the checked contents do not parse: {e}")))?;
        if !rest.is_empty() {
            return Err(corrupt(format!(
                "{} bytes after the checked contents",
                rest.len()
            )));
        }
        Self::from_repr(r, BTreeMap::new())
    }

    /// A federation from its parsed saved state (a saved file's body, or
    /// the rows of a model store): every check and
    /// rebuild of [`Self::from_bytes`] after the body is parsed.
    ///
    /// The clients with `clusters` are built from them without fitting
    /// ([`StoredClusters`]); the others are fitted and checked against
    /// their stored seeds.
    pub(crate) fn from_repr(
        r: Repr,
        clusters: BTreeMap<ClientId, StoredClusters>,
    ) -> MufcResult<Self> {
        restore(r, clusters).and_then(Self::assemble)
    }

    /// The federation of restored parts: its parties resumed with the
    /// roster the parts name (the clients, those whose leave waits, the
    /// groups' members), the sketch capacity it was trained with and its
    /// groups.
    pub(crate) fn assemble(p: Restored) -> MufcResult<Self> {
        let mut roster: Vec<ClientId> = (p.clients.iter().map(Client::id))
            .chain(p.book.unsent.keys().copied())
            .chain(p.tree.iter().flat_map(|t| t.layout().clients()))
            .collect();
        roster.sort_unstable();
        roster.dedup();
        let capacity = p.fit_report.sketch.as_ref().map(|s| s.capacity);
        let (config, dim) = (p.setup.config.clone(), p.setup.dim);
        let mut setup = RemoteSetup::of_roster(config, dim, roster);
        if let Some(c) = capacity {
            setup = setup.with_capacity(c);
        }
        // A withdrawn model keeps no groups: its setup keeps the topology's.
        if let Some(layout) = p.tree.as_ref().map(|t| t.layout()) {
            setup = with_saved_layout(setup, Some(layout.clone()))?;
        }
        let waiting = p.book.pending.len().saturating_add(p.book.additions.len());
        let requests = (p.book.applied).saturating_add(waiting as u64);
        let fit_report = p.fit_report.clone();
        // A server's state alone (a deployment's store) names groups
        // whose clients it does not hold.
        let server_only = p.clients.is_empty()
            && p.book.unsent.is_empty()
            && p.tree
                .as_ref()
                .is_some_and(|t| !t.layout().clients().is_empty());
        let left = p.left.clone();
        let parties = InProcess::resumed(setup, p, requests, !server_only)?.with_left(left);
        Ok(Self::driving(parties, fit_report))
    }

    /// Loads a federation saved by [`Self::save`] (any length field is
    /// checked against the file's size before use).
    ///
    /// # Errors
    ///
    /// As [`Self::from_bytes`], plus [`MufcError::Persistence`] for I/O
    /// errors.
    pub fn load(path: impl AsRef<Path>) -> MufcResult<Self> {
        let bytes = std::fs::read(path.as_ref())
            .map_err(|e| bad(format!("cannot read {}: {e}", path.as_ref().display())))?;
        Self::from_bytes(&bytes)
    }
}

impl Federation {
    /// The server's part of the federation's state (see
    /// [`ServerSnapshot`]); the clients' parts are each client's
    /// [`data`](crate::Client::data) and
    /// [`seed_ids`](crate::Client::seed_ids).
    ///
    /// Only the last removal report is kept (a store's audit log is the
    /// history, and a part that grew with every request would make every
    /// commit slower than the last); the requests of the others still
    /// count in the numbering ([`Self::applied_requests`]).
    pub fn server_snapshot(&self) -> ServerSnapshot {
        self.parties().server_part(self.fit_report())
    }

    /// The federation of a snapshot: the server's part and every client's
    /// (id, points, seeds), rebuilt and checked as
    /// [`Self::from_bytes`] does.
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`](crate::MufcError::Persistence) with
    /// [`PersistError::Corrupt`] when the parts do not make a federation
    /// (a client of another dimension, counts its clients' histograms do
    /// not add up to, fewer requests applied than the last report names,
    /// ...).
    pub fn from_snapshot(server: ServerSnapshot, clients: Vec<ClientSnapshot>) -> MufcResult<Self> {
        Self::from_stored(server, clients, BTreeMap::new())
    }

    /// As [`Self::from_snapshot`], with the clusters each client of
    /// `clusters` sends as it was saved ([`Client::clusters`](crate::Client::clusters)): those
    /// clients are not fitted again (the caller vouches for the clusters,
    /// as a store does with a checksum); each is fitted, and checked
    /// against them, when a removal first changes it. Opening a model
    /// store so takes no client training.
    ///
    /// # Errors
    ///
    /// As [`Self::from_snapshot`], and
    /// [`MufcError::Persistence`](crate::MufcError::Persistence) for
    /// clusters that do not fit their client's points or seeds.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{Federation, FederationConfig};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let client = |s: usize| Dataset::new(DMatrix::from_fn(2, 20, |r, c| ((c * 7 + r + s) % 10) as f64 / 25.0));
    /// let config = FederationConfig::new(2).gamma(0.1).validate()?;
    /// let fed = Federation::new(vec![client(0)?, client(1)?, client(2)?], &config)?;
    ///
    /// let clients = fed.clients().iter().map(|c| (c.id(), c.data().clone(), c.seed_ids().to_vec())).collect();
    /// let clusters = fed.clients().iter().map(|c| (c.id(), c.clusters())).collect();
    /// let again = Federation::from_stored(fed.server_snapshot(), clients, clusters)?;
    /// assert_eq!(again.server().centroids(), fed.server().centroids());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn from_stored(
        server: ServerSnapshot,
        clients: Vec<ClientSnapshot>,
        clusters: BTreeMap<ClientId, StoredClusters>,
    ) -> MufcResult<Self> {
        Self::assemble(server.restore(clients, clusters)?)
    }
}
