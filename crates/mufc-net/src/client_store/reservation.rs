//! A client's first start, before any server admitted it (issue 28,
//! item 10: a client's store, holding its records, was written before the
//! server admitted the client, and stayed behind when it was never
//! admitted).
//!
//! Until the server welcomes the client, its records stay in memory; the
//! only file is a reservation of the store's identity,
//! `<store>.identity` (mode 0600, 32 random bytes and their checksum, no
//! record). The identity is reserved on disk, not drawn again at each
//! start, because the server binds a client's name to the first identity
//! it admits: a client stopped between the welcome and the writing of
//! its store starts again with the same identity and is admitted again.
//! The store is created when the server welcomes the client, and the
//! reservation removed; a server refusing the client for good removes it
//! too, leaving nothing behind.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use mufc::remote::RemoteClient;
use seeding::Dataset;
use sha2::{Digest, Sha256};

use super::ClientStore;
use crate::NetError;

/// What a client starts from when its store does not exist yet: its
/// name and its records, already mapped into the model's box.
///
/// ```
/// use mufc_net::client_store::FirstStart;
/// use seeding::Dataset;
///
/// let rows = nalgebra::DMatrix::from_row_slice(2, 2, &[0.1, -0.2, 0.3, 0.0]);
/// let data = Dataset::new(rows).unwrap();
/// let first = FirstStart::new("hospital-a", data);
/// assert_eq!(first.name, "hospital-a");
/// ```
#[derive(Clone, Debug)]
pub struct FirstStart {
    /// The client's name (its certificate's).
    pub name: String,
    /// Its records.
    pub data: Dataset,
}

impl FirstStart {
    /// Client `name` starting from `data`.
    pub fn new(name: impl Into<String>, data: Dataset) -> Self {
        Self {
            name: name.into(),
            data,
        }
    }
}

/// The identity a client not yet admitted speaks with, reserved on disk
/// next to the store it will have.
#[derive(Debug)]
pub(crate) struct Reservation {
    store: PathBuf,
    file: PathBuf,
    identity: [u8; 32],
}

/// The reservation's file next to the store `store`.
pub(crate) fn reservation_file(store: &Path) -> PathBuf {
    super::sibling(store, ".identity")
}

fn checksum(identity: &[u8; 32]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"mufc-client-identity/");
    h.update(identity);
    h.finalize().into()
}

impl Reservation {
    /// The reservation for the store `store` (which does not exist):
    /// the one an earlier start made, or a new one.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if the file cannot be read or written,
    /// or is damaged.
    pub(crate) fn take(store: &Path) -> Result<Self, NetError> {
        let file = reservation_file(store);
        let fail = |what: &str, e: &dyn std::fmt::Display| NetError::ClientStore {
            path: file.clone(),
            reason: format!("{what}: {e}"),
        };
        let mut open = std::fs::OpenOptions::new();
        open.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            open.mode(0o600);
        }
        let identity = match open.open(&file) {
            Ok(mut f) => {
                let identity: [u8; 32] = rand::random();
                f.write_all(&identity)
                    .and_then(|()| f.write_all(&checksum(&identity)))
                    .and_then(|()| f.sync_all())
                    .map_err(|e| fail("reserving the store's identity", &e))?;
                identity
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let mut bytes = Vec::new();
                std::fs::File::open(&file)
                    .and_then(|mut f| f.read_to_end(&mut bytes))
                    .map_err(|e| fail("reading the store's reserved identity", &e))?;
                let (identity, sum) = bytes.split_at_checked(32).unwrap_or((&[], &[]));
                let identity: [u8; 32] = identity
                    .try_into()
                    .map_err(|_| fail("reading the store's reserved identity", &"it is damaged"))?;
                if sum != checksum(&identity) {
                    return Err(fail(
                        "reading the store's reserved identity",
                        &"it is damaged (it does not match its checksum); remove it to \
                          start over, unless the server admitted the client already (it \
                          would refuse another identity)",
                    ));
                }
                identity
            }
            Err(e) => return Err(fail("reserving the store's identity", &e)),
        };
        Ok(Self {
            store: store.to_path_buf(),
            file,
            identity,
        })
    }

    /// The identity the client speaks with.
    pub(crate) fn identity(&self) -> [u8; 32] {
        self.identity
    }

    /// The server welcomed the client as `client` (built from `first`):
    /// creates its store (records, identity, state) and removes the
    /// reservation. A failure leaves the reservation for the next start.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if the store cannot be written.
    pub(crate) fn fulfil(
        self,
        first: &FirstStart,
        client: &RemoteClient,
    ) -> Result<ClientStore, NetError> {
        let store = ClientStore::create_as(&self.store, &first.name, &first.data, self.identity)?;
        store.save(client)?;
        remove(&self.file);
        Ok(store)
    }

    /// The server refused the client for good: nothing is kept.
    pub(crate) fn abandon(self) {
        remove(&self.file);
    }
}

/// Removes `file`; one already gone is fine, and one that cannot be
/// removed holds no record.
fn remove(file: &Path) {
    let _ = std::fs::remove_file(file);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A second start takes the same identity; a damaged reservation is
    /// refused, never replaced (the server may have admitted it).
    #[test]
    fn a_reservation_is_kept_across_starts_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("a.db");
        let first = Reservation::take(&store).unwrap();
        let again = Reservation::take(&store).unwrap();
        assert_eq!(first.identity(), again.identity());
        let file = reservation_file(&store);
        assert_eq!(std::fs::read(&file).unwrap().len(), 64);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let mut bytes = std::fs::read(&file).unwrap();
        bytes[3] ^= 1;
        std::fs::write(&file, &bytes).unwrap();
        let err = Reservation::take(&store).unwrap_err().to_string();
        assert!(err.contains("damaged"), "{err}");
        std::fs::write(&file, &bytes[..20]).unwrap();
        let err = Reservation::take(&store).unwrap_err().to_string();
        assert!(err.contains("damaged"), "{err}");
        again.abandon();
        assert!(!file.exists());
        let new = Reservation::take(&store).unwrap();
        assert_ne!(new.identity(), first.identity());
    }
}
