//! Saving a federation: its bytes ([`Federation::to_bytes`]) and the
//! atomic write of a file ([`Federation::save`], see "Atomic saves" in the
//! `persist` module docs).

use std::fs::File;
use std::io::Write;
use std::path::Path;

use super::body::ReprRef;
use super::format::{bad, seal};
#[cfg(doc)]
use crate::MufcError;
use crate::{Federation, MufcResult};

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, written by `write`, flushed, renamed over `path`, then the
/// directory flushed (on unix; elsewhere best effort: the rename is
/// atomic, its durability up to the platform). On any error `path` is
/// untouched and the temporary file removed.
pub(crate) fn write_atomically(
    path: &Path,
    bytes: &[u8],
    write: impl FnOnce(&mut File, &[u8]) -> std::io::Result<()>,
) -> MufcResult<()> {
    let fail =
        |what: &str, e: std::io::Error| bad(format!("cannot {what} {}: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".mufc-save-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| fail("create a temporary file next to", e))?;
    write(tmp.as_file_mut(), bytes).map_err(|e| fail("write", e))?;
    tmp.as_file().sync_all().map_err(|e| fail("flush", e))?;
    tmp.persist(path).map_err(|e| fail("replace", e.error))?;
    sync_dir(dir).map_err(|e| fail("flush the directory of", e))
}

/// A body as the bytes of a saved federation: postcard, sealed.
pub(super) fn sealed(repr: &ReprRef<'_>) -> MufcResult<Vec<u8>> {
    postcard::to_allocvec(repr)
        .map(|body| seal(&body))
        .map_err(|e| bad(format!("cannot serialize: {e}")))
}

/// Flushes a directory's entries (the rename of a save) to disk.
#[cfg(unix)]
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Best effort: directories cannot be opened for flushing here.
#[cfg(not(unix))]
pub(crate) fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

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

    /// What [`Self::to_bytes`] stores, by reference.
    pub(super) fn repr(&self) -> ReprRef<'_> {
        ReprRef {
            config: self.config(),
            dim: self.dim(),
            clients: self
                .clients()
                .iter()
                .map(|c| (c.id(), c.data(), c.seed_ids()))
                .collect(),
            counts: self
                .server()
                .counts()
                .iter()
                .map(|(b, &c)| (b, c))
                .collect(),
            capacity: self.fit_report().sketch.as_ref().map(|s| s.capacity),
            rounds: self.rounds(),
            fit_report: self.fit_report(),
            history: self.history(),
            pending: self.pending(),
            unsent: self.unsent().iter().map(|(c, u)| (*c, u)).collect(),
            tree: self.saved_tree(),
            withdrawn: self.withdrawal(),
        }
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

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )]

    use std::io::Write;

    use seeding_testkit::mixtures::{Mixture, gaussian_clients};

    use super::write_atomically;
    use crate::{ClientId, Federation, FederationConfig, MufcError, RemovalRequest};

    fn small() -> Federation {
        let data = gaussian_clients("persist-atomic", Mixture::TINY);
        let config = FederationConfig::new(2).gamma(0.1).validate().unwrap();
        Federation::new(data, &config).unwrap()
    }

    /// The names in `dir`.
    fn entries(dir: &std::path::Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_save_that_fails_midway_leaves_the_old_file_whole_and_no_temporary_file() {
        let mut fed = small();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fed.mufc");
        fed.save(&path).unwrap();
        let v1 = fed.to_bytes().unwrap();
        let ids = |c: usize| vec![fed.clients()[c].data().id(2)];
        fed.remove(&RemovalRequest::points(ClientId(0), ids(0)).with_points(ClientId(1), ids(1)))
            .unwrap();
        let v2 = fed.to_bytes().unwrap();
        assert_ne!(v1, v2);
        let n = v2.len();
        for k in [0, 1, 7, 8, 16, 17, n / 2, n - 33, n - 32, n - 1, n] {
            // A writer that stops after k bytes with an error (a full disk,
            // a crash of the writing side).
            let err = write_atomically(&path, &v2, |f, b| {
                f.write_all(&b[..k])?;
                Err(std::io::Error::other(format!(
                    "injected failure after {k} bytes"
                )))
            })
            .unwrap_err();
            assert!(
                matches!(&err, MufcError::Persistence(m) if m.contains("injected failure")),
                "{err}"
            );
            assert_eq!(std::fs::read(&path).unwrap(), v1, "k = {k}");
            assert_eq!(Federation::load(&path).unwrap().to_bytes().unwrap(), v1);
            assert_eq!(entries(dir.path()), ["fed.mufc"], "k = {k}");
        }
        // The same save without the failure replaces the file.
        fed.save(&path).unwrap();
        assert_eq!(Federation::load(&path).unwrap().to_bytes().unwrap(), v2);
        assert_eq!(entries(dir.path()), ["fed.mufc"]);
    }

    #[test]
    fn saving_into_a_missing_directory_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing").join("fed.mufc");
        assert!(matches!(
            small().save(&path),
            Err(MufcError::Persistence(_))
        ));
        assert_eq!(entries(dir.path()), Vec::<String>::new());
    }
}
