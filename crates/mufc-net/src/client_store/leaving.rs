//! A client that leaves the federation (issue 29, `mufc client leave`):
//! its store records a removal of every point it holds or a pending
//! addition names, and that it is leaving, in one transaction; once that
//! removal's round committed, the running client sends its signed leave,
//! and once the server took it the store says the client left, and no
//! client runs on it again.

use rusqlite::{OptionalExtension, params};
use seeding::PointId;

use super::ClientStore;
use crate::NetError;

impl ClientStore {
    /// Records that the client leaves: a removal of every point it holds
    /// and of every record a pending addition names (none when it holds
    /// none), and the leave itself, in one write. Returns the removal's
    /// number, if there is one.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if the client left already, or if
    /// writing fails (nothing is recorded then).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc_net::client_store::{Asked, ClientStore};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let dir = tempfile::tempdir()?;
    /// let data = Dataset::new(DMatrix::from_element(2, 3, 0.25))?;
    /// let store = ClientStore::create(dir.path().join("c0.db"), "c0", &data)?;
    /// let request = store.request_leave()?.unwrap();
    /// assert_eq!(store.pending()?, vec![(request, Asked::Forget(vec![PointId(0), PointId(1), PointId(2)]))]);
    /// assert!(store.leaving()? && !store.left()?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn request_leave(&self) -> Result<Option<u64>, NetError> {
        if self.left()? {
            return Err(self.error("recording the leave", "the client left already"));
        }
        let mark = |conn: &rusqlite::Connection| {
            conn.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('leaving', 1)",
                [],
            )
            .map(drop)
            .map_err(|e| e.to_string())
        };
        if self.data()?.is_empty() && self.pending()?.is_empty() {
            mark(&self.db()).map_err(|e| self.error("recording the leave", e))?;
            return Ok(None);
        }
        let (number, _) = self.record(|conn| {
            let mut ids: Vec<PointId> = Self::state_in(conn)?.data.ids().to_vec();
            ids.extend(Self::pending_addition_ids(conn)?);
            mark(conn)?;
            Ok((ids, None))
        })?;
        Ok(Some(number))
    }

    /// Whether the client is leaving (or left).
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if it cannot be read.
    pub fn leaving(&self) -> Result<bool, NetError> {
        self.flag("leaving")
    }

    /// Whether the client left: the server took its leave.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if it cannot be read.
    pub fn left(&self) -> Result<bool, NetError> {
        self.flag("left")
    }

    /// Whether the client is ready to send its leave: leaving, not yet
    /// left, holding no point, and with no request not yet acknowledged.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if the store cannot be read.
    pub fn leave_due(&self) -> Result<bool, NetError> {
        Ok(self.leaving()?
            && !self.left()?
            && self.data()?.is_empty()
            && self.pending()?.is_empty()
            && self.unacknowledged()?.is_empty())
    }

    /// Notes that the server took the client's leave.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if writing fails.
    pub fn set_left(&self) -> Result<(), NetError> {
        self.db()
            .execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('left', 1)",
                params![],
            )
            .map_err(|e| self.error("recording that the client left", e))?;
        Ok(())
    }

    fn flag(&self, key: &str) -> Result<bool, NetError> {
        let value: Option<i64> = self
            .db()
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()
            .map_err(|e| self.error("reading the metadata", e))?;
        Ok(value.is_some_and(|v| v != 0))
    }
}
