//! Saving and loading a whole federation (postcard: every `f64` round-trips
//! exactly).
//!
//! What is stored: the resolved configuration, each client's id, points
//! and seeds, the decoded counts, the sketch capacity, the round counter,
//! the reports and the removal requests still pending
//! ([`Federation::pending`]). Loading rebuilds every client's clustering from its
//! points and the configuration, and the server's K-means from the counts:
//! by exactness (see the crate docs) that is the saved state, bit for bit,
//! and the stored seeds and counts are checked against it.
//!
//! # File format, version 4
//!
//! | offset       | bytes | contents                                              |
//! |--------------|-------|-------------------------------------------------------|
//! | 0            | 7     | magic `MUFCFED`                                       |
//! | 7            | 1     | format version, `4`                                   |
//! | 8            | 8     | body length `n`, unsigned little endian               |
//! | 16           | `n`   | body: the state, postcard                             |
//! | 16 + `n`     | 32    | SHA-256 of bytes `0 .. 16 + n` (magic to body)        |
//!
//! Loading checks, in order: the magic ([`MufcError::Persistence`] if it is
//! not there: not a saved federation), the version
//! ([`PersistError::UnsupportedVersion`]), the length against the bytes
//! there are ([`PersistError::Truncated`] when they are fewer,
//! [`PersistError::Corrupt`] when there are more), then the checksum
//! ([`PersistError::Corrupt`]), and only then parses the body (nothing is
//! allocated from the length field). So a flipped bit anywhere, a
//! truncation or an extension is refused with a typed error, never loaded
//! as a different federation. The checksum detects damage, not tampering:
//! anyone can write a valid file, so a saved federation is as trusted as
//! the data it holds (the body's parsing is still bounded and its contents
//! still checked).
//!
//! Versions 1 and 2 had no checksum (a test flipped each bit of a version 2
//! file: 3134 of 3472 flips loaded as a *different* federation, so the
//! loader's own checks cannot vouch for such a file). They are refused with
//! [`PersistError::UnsupportedVersion`], whose message says why: rebuild
//! the federation from its data and save it again.
//!
//! # Atomic saves
//!
//! [`Federation::save`] writes a temporary file in the target's directory,
//! flushes it to disk, renames it over the target and flushes the
//! directory: a crash or an error at any point leaves either the old file
//! or the new one, whole. A crash (not an error) may leave the temporary
//! file (`.mufc-save-*.tmp`) behind.

// Saved files come from outside (docs/threat-model.md §8): no panicking
// index, unwrap or expect, and no unchecked arithmetic.
#![deny(
    clippy::indexing_slicing,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::arithmetic_side_effects
)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Write;
use std::path::Path;

use num_bigint::BigUint;
use seeding::{Dataset, PointId};
use serde::{Deserialize, Serialize};

use crate::federation::Setup;
use crate::server::decode::Decoded;
use crate::server::{InputChange, PlainCentroids};
use crate::{
    ClientId, Federation, FitReport, MufcError, MufcResult, PendingRequest, PersistError,
    RemovalReport, ValidConfig,
};

/// The magic that opens every saved federation (then the version byte).
const MAGIC: &[u8; 7] = b"MUFCFED";

/// Version 4: the configuration in three parts (client, server, channel;
/// docs/architecture.md), the body otherwise as version 3. A version 3
/// file is refused: its configuration has the flat shape.
///
/// Version 3: a body length and a SHA-256 checksum around the body (and
/// the configuration's `insecure_deterministic_masks`, the pending removal
/// requests, and the reports' outcome, request numbers and privacy
/// warning). Version 2 had the
/// reports name dropped clients and the protocol's times, the
/// configuration the dropout settings; version 1 had neither. Neither had
/// a checksum.
const VERSION: u8 = 4;

/// Magic, version and body length.
const HEADER_LEN: usize = 16;

/// The SHA-256 checksum.
const CHECKSUM_LEN: usize = 32;

#[derive(Serialize)]
struct ReprRef<'a> {
    config: &'a ValidConfig,
    dim: usize,
    clients: Vec<(ClientId, &'a Dataset, &'a [PointId])>,
    counts: Vec<(&'a BigUint, u64)>,
    capacity: Option<usize>,
    rounds: u64,
    fit_report: &'a FitReport,
    history: &'a [RemovalReport],
    pending: &'a [PendingRequest],
}

#[derive(Deserialize)]
struct Repr {
    config: ValidConfig,
    dim: usize,
    clients: Vec<(ClientId, Dataset, Vec<PointId>)>,
    counts: Vec<(BigUint, u64)>,
    capacity: Option<usize>,
    rounds: u64,
    fit_report: FitReport,
    history: Vec<RemovalReport>,
    pending: Vec<PendingRequest>,
}

fn bad(what: impl Into<String>) -> MufcError {
    MufcError::Persistence(what.into())
}

fn corrupt(reason: impl Into<String>) -> MufcError {
    PersistError::Corrupt {
        reason: reason.into(),
    }
    .into()
}

/// The largest dimension a saved federation without clients may state.
const MAX_DIM_WITHOUT_DATA: usize = 1 << 20;

fn checksum(bytes: &[u8]) -> [u8; CHECKSUM_LEN] {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).into()
}

/// Wraps a body: magic, version, length, body, checksum.
fn seal(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        body.len()
            .saturating_add(HEADER_LEN)
            .saturating_add(CHECKSUM_LEN),
    );
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&(body.len() as u64).to_le_bytes());
    out.extend_from_slice(body);
    let sum = checksum(&out);
    out.extend_from_slice(&sum);
    out
}

/// The body of sealed `bytes`, once the header, the length and the
/// checksum are checked (see the module docs).
fn open(bytes: &[u8]) -> MufcResult<&[u8]> {
    let found = bytes.len() as u64;
    let m = bytes.len().min(MAGIC.len());
    if bytes.get(..m) != MAGIC.get(..m) {
        return Err(bad("not a saved federation (bad header)"));
    }
    let truncated = |expected: u64| PersistError::Truncated { expected, found };
    let Some(&version) = bytes.get(MAGIC.len()) else {
        return Err(truncated(HEADER_LEN as u64).into());
    };
    if version != VERSION {
        return Err(PersistError::UnsupportedVersion {
            found: version,
            supported: VERSION,
        }
        .into());
    }
    let Some(len) = bytes.get(8..HEADER_LEN) else {
        return Err(truncated(HEADER_LEN as u64).into());
    };
    let mut word = [0u8; 8];
    word.copy_from_slice(len);
    let len = u64::from_le_bytes(word);
    let total = len
        .checked_add((HEADER_LEN + CHECKSUM_LEN) as u64)
        .ok_or_else(|| corrupt(format!("impossible body length {len}")))?;
    if found < total {
        return Err(truncated(total).into());
    }
    if found > total {
        return Err(corrupt(format!(
            "{} bytes after the checksum",
            found.saturating_sub(total)
        )));
    }
    // `total` is the length of `bytes`, so the body's end fits a usize.
    let end = bytes.len().saturating_sub(CHECKSUM_LEN);
    let (sealed, sum) = bytes.split_at_checked(end).unwrap_or((bytes, &[]));
    if checksum(sealed) != sum {
        return Err(corrupt("the checksum does not match the contents"));
    }
    sealed
        .get(HEADER_LEN..)
        .ok_or_else(|| corrupt("the body is shorter than its header"))
}

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

/// Flushes a directory's entries (the rename of a save) to disk.
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Best effort: directories cannot be opened for flushing here.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
    Ok(())
}

impl Federation {
    /// The federation as bytes: the file format of the module docs
    /// (version 4: magic, version, length, postcard body, SHA-256).
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
        let repr = ReprRef {
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
        };
        postcard::to_allocvec(&repr)
            .map(|body| seal(&body))
            .map_err(|e| bad(format!("cannot serialize: {e}")))
    }

    /// A federation from [`Self::to_bytes`]: the header, length and
    /// checksum are checked first (see the module docs), then the clients'
    /// clusterings and the server's K-means are rebuilt and checked
    /// against the stored seeds and counts.
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
    /// assert_eq!(&bytes[..8], b"MUFCFED\x04");
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
        // The stored dimension sizes the quantizer's grid before any data
        // is looked at: it must be the data's (a crafted file with a valid
        // checksum may say anything; a huge value aborted the process).
        if let Some((id, d, _)) = r.clients.iter().find(|(_, d, _)| d.dim() != r.dim) {
            return Err(corrupt(format!(
                "client {id}'s data has dimension {}, the file says {}",
                d.dim(),
                r.dim
            )));
        }
        // With no client left there is no data to check it against: a
        // dimension beyond 2^20 (an 8 MiB grid) is refused rather than
        // allocated.
        if r.clients.is_empty() && r.dim > MAX_DIM_WITHOUT_DATA {
            return Err(corrupt(format!(
                "dimension {} with no client to check it against",
                r.dim
            )));
        }
        // Saving writes the capacity of the training report: a file whose
        // two copies disagree would load, then save something else.
        let reported = r.fit_report.sketch.as_ref().map(|s| s.capacity);
        if r.capacity != reported {
            return Err(corrupt(format!(
                "the stored sketch capacity {:?} is not the report's {:?}",
                r.capacity, reported
            )));
        }
        let stored_seeds: BTreeMap<ClientId, Vec<PointId>> = r
            .clients
            .iter()
            .map(|(id, _, s)| (*id, s.clone()))
            .collect();
        let setup = Setup::restore(
            r.clients.into_iter().map(|(id, d, _)| (id, d)).collect(),
            &r.config,
            r.dim,
        )?;
        let fitted = setup.fit_clients()?;
        let clients: Vec<_> = fitted.into_iter().map(|(c, _)| c).collect();
        for c in &clients {
            if stored_seeds.get(&c.id()).map(Vec::as_slice) != Some(c.seed_ids()) {
                return Err(bad(format!(
                    "client {} does not reproduce its stored seeds",
                    c.id()
                )));
            }
        }
        let counts: BTreeMap<BigUint, u64> = r.counts.into_iter().collect();
        let mut server = setup.server()?;
        let mut aggregation = setup.aggregation(r.capacity)?;
        let change = match &mut aggregation {
            Some(agg) => {
                // The decoded aggregate of the last round is the plain sum
                // of the histograms of the clients it included (all of
                // them unless some dropped out).
                let included: BTreeSet<ClientId> = r
                    .history
                    .last()
                    .map_or(&r.fit_report.included, |h| &h.included)
                    .iter()
                    .copied()
                    .collect();
                let mut sum: BTreeMap<BigUint, u64> = BTreeMap::new();
                for c in clients.iter().filter(|c| included.contains(&c.id())) {
                    for (b, n) in c.histogram() {
                        let e = sum.entry(b.clone()).or_insert(0);
                        *e = e.saturating_add(*n);
                    }
                }
                if sum != counts {
                    return Err(bad(
                        "the stored counts are not the sum of the included clients' histograms",
                    ));
                }
                agg.restore_last(&counts)?;
                agg.set_rounds(r.rounds);
                InputChange::Counts(Decoded::Full(counts.into_iter().collect()))
            }
            None => InputChange::Plain(
                clients
                    .iter()
                    .map(|c| {
                        (
                            PlainCentroids {
                                client: c.id(),
                                centroids: nalgebra::DMatrix::zeros(setup.dim, 0),
                                sizes: Vec::new(),
                            },
                            PlainCentroids {
                                client: c.id(),
                                centroids: c.centroid_matrix(),
                                sizes: c.sizes().to_vec(),
                            },
                        )
                    })
                    .collect(),
            ),
        };
        server.apply(server.plan(change)?)?;
        let fed = Self::from_parts(
            setup,
            clients,
            aggregation,
            server,
            r.fit_report,
            r.history,
            r.pending,
        );
        // The pending requests must still name points the clients hold,
        // each once.
        fed.merged(None).map_err(|e| {
            bad(format!(
                "the pending removal requests do not fit the clients: {e}"
            ))
        })?;
        Ok(fed)
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

#[cfg(test)]
mod tests {
    #![allow(
        clippy::unwrap_used,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )]

    use std::io::Write;

    use testkit::mufc::{Mixture, gaussian_clients};

    use super::write_atomically;
    use crate::{ClientId, Federation, FederationConfig, MufcError, RemovalRequest};

    fn small() -> Federation {
        let data = gaussian_clients(
            "persist-atomic",
            Mixture {
                clients: 3,
                per_client: 30,
                dim: 2,
                clusters: 2,
                k_prime: 1,
                spread: 0.2,
                sigma: 0.1,
            },
        );
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
