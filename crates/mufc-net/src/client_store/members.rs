//! The clients admitted after training (issue 29) that a client checked
//! ([`crate::endorse::FirstMessages::admit`]), kept in its store's `meta`
//! so that a restarted client checks their signed messages as before (its
//! federation file's roster does not name them).

use mufc::ClientId;
use rusqlite::{OptionalExtension, params};

use super::ClientStore;
use crate::NetError;

/// A client admitted after training: its id, name and certificate (DER).
pub type Member = (ClientId, String, Vec<u8>);

impl ClientStore {
    /// The admitted clients this client checked, in the order they joined
    /// (checked again when the client starts).
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if they cannot be read or do not parse.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::ClientId;
    /// use mufc_net::client_store::ClientStore;
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let data = Dataset::new(DMatrix::from_element(2, 3, 0.25))?;
    /// let store = ClientStore::create(dir.path().join("c0.db"), "c0", &data)?;
    /// assert!(store.admitted()?.is_empty());
    /// let north = vec![(ClientId(3), "north".to_string(), vec![1, 2, 3])];
    /// store.save_admitted(&north)?;
    /// assert_eq!(ClientStore::open(store.path())?.admitted()?, north);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn admitted(&self) -> Result<Vec<Member>, NetError> {
        let blob: Option<Vec<u8>> = self
            .db()
            .query_row("SELECT value FROM meta WHERE key = 'admitted'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(|e| self.error("reading the admitted clients", e))?;
        blob.map_or(Ok(Vec::new()), |b| {
            postcard::from_bytes(&b).map_err(|e| self.error("reading the admitted clients", e))
        })
    }

    /// Keeps `members`, every admitted client the client checked.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if writing fails (the old list stays).
    pub fn save_admitted(&self, members: &[Member]) -> Result<(), NetError> {
        let blob = postcard::to_allocvec(members)
            .map_err(|e| self.error("writing the admitted clients", e))?;
        self.db()
            .execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('admitted', ?1)",
                params![blob],
            )
            .map_err(|e| self.error("writing the admitted clients", e))?;
        Ok(())
    }
}
