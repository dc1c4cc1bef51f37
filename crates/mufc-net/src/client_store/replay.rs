//! What a client run as a new process for every message keeps between
//! them (the Python binding's stateless client, `crates/mufc-py`): the
//! key its round secrets derive from
//! ([`RemoteClient::with_round_key`](mufc::remote::RemoteClient::with_round_key)),
//! and, per session, the digest of every message it answered and of its
//! answer, so that it answers each step of a session once.

use rusqlite::{OptionalExtension, params};

use super::ClientStore;
use crate::NetError;

/// The table of answers, made on first use (a store of an earlier
/// version, or of a client that never ran stateless, has none).
const ANSWERS: &str = "CREATE TABLE IF NOT EXISTS answers (
    session BLOB NOT NULL,
    step INTEGER NOT NULL,
    asked BLOB NOT NULL,
    answered BLOB NOT NULL,
    PRIMARY KEY (session, step)
) STRICT";

impl ClientStore {
    /// The 32-byte secret the client's round secrets derive from: drawn
    /// from the operating system the first time it is asked for, then
    /// kept in the store (as secret as the records beside it).
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if it cannot be read or written.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc_net::client_store::ClientStore;
    /// use seeding::Dataset;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let data = Dataset::new(nalgebra::DMatrix::from_element(2, 3, 0.1))?;
    /// let store = ClientStore::create(dir.path().join("c.db"), "site-a", &data)?;
    /// let key = store.round_key()?;
    /// assert_eq!(ClientStore::open(store.path())?.round_key()?, key);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn round_key(&self) -> Result<[u8; 32], NetError> {
        let conn = self.db();
        let read = |conn: &rusqlite::Connection| {
            conn.query_row("SELECT value FROM meta WHERE key = 'round-key'", [], |r| {
                r.get::<_, Vec<u8>>(0)
            })
            .optional()
        };
        let kept = read(&conn).map_err(|e| self.error("reading the round key", e))?;
        let bytes = match kept {
            Some(b) => b,
            None => {
                let fresh: [u8; 32] = rand::random();
                conn.execute(
                    "INSERT OR IGNORE INTO meta (key, value) VALUES ('round-key', ?1)",
                    params![fresh.as_slice()],
                )
                .map_err(|e| self.error("keeping the round key", e))?;
                read(&conn)
                    .map_err(|e| self.error("reading the round key", e))?
                    .unwrap_or_default()
            }
        };
        bytes
            .try_into()
            .map_err(|_| self.error("reading the round key", "it is not 32 bytes"))
    }

    /// Logs that the client answered step `step` of `session`, asked the
    /// message of digest `asked`, with the answer of digest `answered`; a
    /// step already logged must have been asked and answered the same.
    ///
    /// # Errors
    ///
    /// [`NetError::Protocol`] for a step answered before to another
    /// message, or with another answer (a server asking twice, or a
    /// client whose points changed mid-round); [`NetError::ClientStore`]
    /// if the log cannot be read or written.
    pub fn answer_once(
        &self,
        session: &[u8; 32],
        step: u64,
        asked: &[u8; 32],
        answered: &[u8; 32],
    ) -> Result<(), NetError> {
        let conn = self.db();
        conn.execute(ANSWERS, [])
            .map_err(|e| self.error("making the log of answers", e))?;
        let step_i = i64::try_from(step).unwrap_or(i64::MAX);
        // Logged first, read back after: two processes answering the same
        // step at once both compare with the one row that won.
        conn.execute(
            "INSERT INTO answers (session, step, asked, answered) VALUES (?1, ?2, ?3, ?4) \
             ON CONFLICT (session, step) DO NOTHING",
            params![
                session.as_slice(),
                step_i,
                asked.as_slice(),
                answered.as_slice()
            ],
        )
        .map_err(|e| self.error("logging an answer", e))?;
        let (a, b): (Vec<u8>, Vec<u8>) = conn
            .query_row(
                "SELECT asked, answered FROM answers WHERE session = ?1 AND step = ?2",
                params![session.as_slice(), step_i],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .map_err(|e| self.error("reading the log of answers", e))?;
        if a != asked.as_slice() {
            return Err(NetError::Protocol(format!(
                "step {step} of this session was answered already, to another message: \
                 a step is answered once"
            )));
        }
        if b != answered.as_slice() {
            return Err(NetError::Protocol(format!(
                "step {step} of this session would be answered otherwise than it was (the \
                 client's points changed mid-round): a step is answered once"
            )));
        }
        Ok(())
    }

    /// Drops the log of `session` (its round committed: the session is
    /// among those the client joined, which it never joins again).
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if the log cannot be written.
    pub fn forget_answers(&self, session: &[u8; 32]) -> Result<(), NetError> {
        let conn = self.db();
        conn.execute(ANSWERS, [])
            .map_err(|e| self.error("making the log of answers", e))?;
        conn.execute(
            "DELETE FROM answers WHERE session = ?1",
            params![session.as_slice()],
        )
        .map_err(|e| self.error("dropping a log of answers", e))?;
        Ok(())
    }
}
