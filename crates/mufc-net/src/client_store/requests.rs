//! The `requests` table of a client's store: the operator's requests
//! (points to forget, records to add), each row with its checksum over
//! every column, rewritten with every change (see the parent module).

use rusqlite::{Connection, TransactionBehavior, params};
use seeding::{Dataset, PointId};
use sha2::{Digest, Sha256};

use super::{ClientStore, RequestStatus, unix_now};
use crate::NetError;
use mufc::remote::RemoteClient;

/// One row of `requests`.
#[derive(Clone, Debug)]
struct RequestRow {
    request: i64,
    time: i64,
    points: String,
    status: String,
    round: Option<i64>,
    detail: String,
    /// The records an addition brings (postcard); `None` for a removal.
    records: Option<Vec<u8>>,
}

/// The columns of `requests` a [`RequestRow`] reads, checksum last.
const REQUEST_COLUMNS: &str = "request, time, points, status, round, detail, records, sha256";

/// What the operator asked for.
#[derive(Clone, Debug, PartialEq)]
pub enum Asked {
    /// Forget these points (`mufc client forget`).
    Forget(Vec<PointId>),
    /// Add these records (`mufc client add`, issue 29).
    Add(Dataset),
}

impl RequestRow {
    /// The row's checksum: every column, each length-prefixed.
    fn checksum(&self) -> Vec<u8> {
        let mut h = Sha256::new();
        h.update(b"mufc-client-request/");
        h.update(self.request.to_le_bytes());
        h.update(self.time.to_le_bytes());
        for text in [&self.points, &self.status, &self.detail] {
            h.update((text.len() as u64).to_le_bytes());
            h.update(text.as_bytes());
        }
        match self.round {
            Some(r) => {
                h.update([1]);
                h.update(r.to_le_bytes());
            }
            None => h.update([0]),
        }
        // Only an addition's rows have records: a removal's checksum is
        // the one stores before additions wrote.
        if let Some(records) = &self.records {
            h.update([2]);
            h.update((records.len() as u64).to_le_bytes());
            h.update(records);
        }
        h.finalize().to_vec()
    }

    /// Reads a row of [`REQUEST_COLUMNS`], with its stored checksum.
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<(Self, Option<Vec<u8>>)> {
        Ok((
            Self {
                request: r.get(0)?,
                time: r.get(1)?,
                points: r.get(2)?,
                status: r.get(3)?,
                round: r.get(4)?,
                detail: r.get(5)?,
                records: r.get(6)?,
            },
            r.get(7)?,
        ))
    }

    /// Writes the row (new or changed) with its checksum.
    fn write(&self, conn: &Connection) -> rusqlite::Result<()> {
        conn.execute(
            "INSERT OR REPLACE INTO requests (request, time, points, status, round, detail, \
             records, sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            params![
                self.request,
                self.time,
                self.points,
                self.status,
                self.round,
                self.detail,
                self.records,
                self.checksum()
            ],
        )?;
        Ok(())
    }

    /// The point ids it names.
    fn ids(&self) -> Result<Vec<PointId>, std::num::ParseIntError> {
        self.points
            .split(',')
            .map(|p| p.parse::<u64>().map(PointId))
            .collect()
    }
}

/// Point ids as the `points` column holds them.
fn joined(ids: &[PointId]) -> String {
    ids.iter()
        .map(|p| p.0.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

impl ClientStore {
    /// Adds the `records` column of `requests` to a store of a version
    /// before additions (every row a removal's: `NULL`). Another process
    /// may add it first: then it is there, which is all that is asked.
    pub(super) fn add_request_records(conn: &Connection) -> rusqlite::Result<()> {
        let has = |c: &Connection| c.prepare("SELECT records FROM requests LIMIT 0").is_ok();
        if has(conn) {
            return Ok(());
        }
        match conn.execute_batch("ALTER TABLE requests ADD COLUMN records BLOB") {
            Err(_) if has(conn) => Ok(()),
            other => other,
        }
    }

    /// Adds the `sha256` column of `requests` to a store of an earlier
    /// version and writes every row's checksum, in one transaction.
    pub(super) fn add_request_checksums(conn: &mut Connection) -> rusqlite::Result<()> {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        tx.execute_batch("ALTER TABLE requests ADD COLUMN sha256 BLOB")?;
        let rows: Vec<RequestRow> = {
            let mut stmt = tx.prepare(&format!("SELECT {REQUEST_COLUMNS} FROM requests"))?;
            stmt.query_map([], RequestRow::read)?
                .map(|r| r.map(|(row, _)| row))
                .collect::<rusqlite::Result<_>>()?
        };
        for row in &rows {
            row.write(&tx)?;
        }
        tx.commit()
    }

    /// Checks every request against its checksum (at open).
    pub(super) fn check_requests(&self) -> Result<(), NetError> {
        self.requests("1 = 1", []).map(drop)
    }

    /// The requests `filter` (an SQL condition over `requests`, with
    /// `params`) selects, in order, each checked against its checksum.
    fn requests(
        &self,
        filter: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<RequestRow>, NetError> {
        let conn = self.db();
        Self::requests_in(&conn, filter, params).map_err(|e| self.error("reading the requests", e))
    }

    fn requests_in(
        conn: &Connection,
        filter: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<RequestRow>, String> {
        let mut stmt = conn
            .prepare(&format!(
                "SELECT {REQUEST_COLUMNS} FROM requests WHERE {filter} ORDER BY request"
            ))
            .map_err(|e| e.to_string())?;
        let rows = stmt
            .query_map(params, RequestRow::read)
            .map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for row in rows {
            let (row, sum) = row.map_err(|e| e.to_string())?;
            if sum.as_deref() != Some(row.checksum().as_slice()) {
                return Err(format!(
                    "request {} does not match its checksum (the store is damaged)",
                    row.request
                ));
            }
            out.push(row);
        }
        Ok(out)
    }

    /// Changes request `request` (checked first) with `change`, and
    /// writes it back with its checksum.
    fn update_request(
        conn: &Connection,
        request: u64,
        change: impl FnOnce(&mut RequestRow),
    ) -> Result<(), String> {
        let key = i64::try_from(request).unwrap_or(i64::MAX);
        let Some(mut row) = Self::requests_in(conn, "request = ?1", [key])?.pop() else {
            return Ok(());
        };
        change(&mut row);
        row.write(conn).map_err(|e| e.to_string())
    }

    /// Records the operator's request to forget the points `ids`
    /// (pending until the running client applies it). Returns its number.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] for no id, or if writing fails.
    pub fn request(&self, ids: &[PointId]) -> Result<u64, NetError> {
        if ids.is_empty() {
            return Err(self.error("recording a request", "it names no point"));
        }
        let ids = ids.to_vec();
        Ok(self.record(|_| Ok((ids, None)))?.0)
    }

    /// Writes a new pending request: `make` reads the store inside the
    /// write transaction (so that no other writer, another process
    /// included, comes between its checks and the row) and gives the ids
    /// the request names, with an addition's records; returns its number
    /// and the ids.
    pub(super) fn record(
        &self,
        make: impl FnOnce(&Connection) -> Result<(Vec<PointId>, Option<Vec<u8>>), String>,
    ) -> Result<(u64, Vec<PointId>), NetError> {
        let fail = |e: rusqlite::Error| self.error("recording a request", e);
        let conn = self.db();
        let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)
            .map_err(fail)?;
        let (ids, records) = make(&tx).map_err(|e| self.error("recording a request", e))?;
        let mut row = RequestRow {
            request: 0,
            time: unix_now(),
            points: joined(&ids),
            status: "pending".into(),
            round: None,
            detail: String::new(),
            records,
        };
        // The number first (AUTOINCREMENT), then the row with its sum.
        tx.execute(
            "INSERT INTO requests (time, points, status) VALUES (?1, ?2, 'pending')",
            params![row.time, row.points],
        )
        .map_err(fail)?;
        row.request = tx.last_insert_rowid();
        row.write(&tx).map_err(fail)?;
        tx.commit().map_err(fail)?;
        let number =
            u64::try_from(row.request).map_err(|e| self.error("recording a request", e))?;
        Ok((number, ids))
    }

    /// The ids the pending additions name, as `conn` reads them.
    pub(super) fn pending_addition_ids(conn: &Connection) -> Result<Vec<PointId>, String> {
        let mut ids = Vec::new();
        for row in Self::requests_in(conn, "status = 'pending'", [])? {
            if row.records.is_some() {
                ids.extend(row.ids().map_err(|e| e.to_string())?);
            }
        }
        Ok(ids)
    }

    /// Every id the store names as `conn` reads it: its points' and every
    /// request's (forgotten points and pending additions included).
    pub(super) fn named_ids(conn: &Connection) -> Result<Vec<PointId>, String> {
        let mut ids = Self::state_in(conn)?.data.ids().to_vec();
        for row in Self::requests_in(conn, "1 = 1", [])? {
            ids.extend(
                row.ids()
                    .map_err(|e| format!("parsing request {}: {e}", row.request))?,
            );
        }
        Ok(ids)
    }

    /// The requests not yet applied, in order.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if they cannot be read or parsed.
    pub fn pending(&self) -> Result<Vec<(u64, Asked)>, NetError> {
        self.requests("status = 'pending'", [])?
            .into_iter()
            .map(|row| {
                let asked = match &row.records {
                    None => {
                        Asked::Forget(row.ids().map_err(|e| self.error("parsing a request", e))?)
                    }
                    Some(blob) => Asked::Add(
                        postcard::from_bytes(blob)
                            .map_err(|e| self.error("parsing a request", e))?,
                    ),
                };
                Ok((u64::try_from(row.request).unwrap_or(0), asked))
            })
            .collect()
    }

    fn set_status(
        &self,
        request: u64,
        status: &str,
        round: Option<u64>,
        detail: &str,
        client: Option<&RemoteClient>,
    ) -> Result<(), NetError> {
        let fail = |e: rusqlite::Error| self.error("updating a request", e);
        let conn = self.db();
        let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)
            .map_err(fail)?;
        if let Some(c) = client {
            Self::write_state(&tx, c).map_err(fail)?;
        }
        Self::update_request(&tx, request, |row| {
            row.status = status.into();
            row.round = round.and_then(|r| i64::try_from(r).ok());
            row.detail = detail.into();
        })
        .map_err(|e| self.error("updating a request", e))?;
        tx.commit().map_err(fail)
    }

    /// Marks `request` applied, with the client's state after it, in one
    /// transaction.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if writing fails (nothing changes).
    pub fn applied(&self, request: u64, client: &RemoteClient) -> Result<(), NetError> {
        self.set_status(request, "applied", None, "", Some(client))
    }

    /// Applies `request` (forgetting points or adding records) to a
    /// client no server has welcomed yet, which therefore has no id, no
    /// training and no party to apply it: its points leave the store, or
    /// the records join them, and the request is marked applied, in one
    /// transaction. The server hears of it after the
    /// first welcome, as of every request not yet acknowledged.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if the store was welcomed already, or if
    /// reading or writing fails (nothing changes); [`NetError::Mufc`] for
    /// an id the client does not hold or one named twice, or a record
    /// whose id it holds (nothing changes).
    pub fn apply_unwelcomed(&self, request: u64, asked: &Asked) -> Result<(), NetError> {
        let mut state = self.state()?;
        if state.id.is_some() {
            return Err(self.error(
                "applying a request",
                "the client was welcomed; its party applies it",
            ));
        }
        match asked {
            Asked::Forget(ids) => state.data.remove(ids),
            Asked::Add(records) => state.data.append(records),
        }
        .map_err(|e| NetError::Mufc(mufc::MufcError::Seeding(e)))?;
        let fail = |e: rusqlite::Error| self.error("applying a request", e);
        let conn = self.db();
        let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)
            .map_err(fail)?;
        Self::write_blob(&tx, &state).map_err(fail)?;
        Self::update_request(&tx, request, |row| {
            if row.status == "pending" {
                row.status = "applied".into();
            }
        })
        .map_err(|e| self.error("applying a request", e))?;
        tx.commit().map_err(fail)
    }

    /// Marks `request` refused, saying why.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if writing fails.
    pub fn refuse(&self, request: u64, reason: &str) -> Result<(), NetError> {
        self.set_status(request, "refused", None, reason, None)
    }

    /// When request `request` was asked (Unix seconds), if the store
    /// holds it.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if the store cannot be read, or the row
    /// is damaged.
    pub fn asked_at(&self, request: u64) -> Result<Option<u64>, NetError> {
        let id = i64::try_from(request).unwrap_or(i64::MAX);
        Ok(self
            .requests("request = ?1", [id])?
            .first()
            .map(|row| u64::try_from(row.time).unwrap_or(0)))
    }

    /// The requests applied and not yet acknowledged, in order.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if they cannot be read.
    pub fn unacknowledged(&self) -> Result<Vec<u64>, NetError> {
        Ok(self
            .requests("status = 'applied'", [])?
            .into_iter()
            .map(|row| u64::try_from(row.request).unwrap_or(0))
            .collect())
    }

    /// Acknowledges `requests` (committed in `round`) and writes the
    /// client's state, in one transaction.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if writing fails (nothing changes).
    pub fn acknowledge(
        &self,
        requests: &[u64],
        round: u64,
        client: &RemoteClient,
    ) -> Result<(), NetError> {
        let fail = |e: rusqlite::Error| self.error("acknowledging", e);
        let conn = self.db();
        let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)
            .map_err(fail)?;
        Self::write_state(&tx, client).map_err(fail)?;
        for r in requests {
            Self::update_request(&tx, *r, |row| {
                if row.status == "applied" {
                    row.status = "acknowledged".into();
                    row.round = Some(i64::try_from(round).unwrap_or(i64::MAX));
                }
            })
            .map_err(|e| self.error("acknowledging", e))?;
        }
        tx.commit().map_err(fail)
    }

    /// Acknowledges every request applied and not yet acknowledged, as
    /// served by the server's withdrawal of its model for `reason`
    /// (docs/threat-model.md P4): no model counts their points, and no
    /// round will. Kept as acknowledged with no round, the reason as the
    /// detail ([`RequestStatus::Withdrawn`]). Returns them, in order.
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if writing fails (nothing changes).
    pub fn acknowledge_withdrawn(&self, reason: &str) -> Result<Vec<u64>, NetError> {
        let fail = |e: rusqlite::Error| self.error("acknowledging", e);
        let conn = self.db();
        let tx = rusqlite::Transaction::new_unchecked(&conn, TransactionBehavior::Immediate)
            .map_err(fail)?;
        let served: Vec<u64> = Self::requests_in(&tx, "status = 'applied'", [])
            .map_err(|e| self.error("reading the requests", e))?
            .into_iter()
            .map(|row| u64::try_from(row.request).unwrap_or(0))
            .collect();
        for r in &served {
            Self::update_request(&tx, *r, |row| {
                row.status = "acknowledged".into();
                row.round = None;
                row.detail = reason.to_string();
            })
            .map_err(|e| self.error("acknowledging", e))?;
        }
        tx.commit().map_err(fail)?;
        Ok(served)
    }

    /// Where `request` stands (`None` for no such request).
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`] if it cannot be read.
    pub fn status(&self, request: u64) -> Result<Option<RequestStatus>, NetError> {
        let key = i64::try_from(request).unwrap_or(i64::MAX);
        let row = self.requests("request = ?1", [key])?.pop();
        Ok(row.map(
            |RequestRow {
                 status,
                 round,
                 detail,
                 ..
             }| match status.as_str() {
                "pending" => RequestStatus::Pending,
                "applied" => RequestStatus::Applied,
                // Served by the model's withdrawal: no round.
                "acknowledged" if round.is_none() => RequestStatus::Withdrawn { reason: detail },
                "acknowledged" => RequestStatus::Acknowledged {
                    round: round.and_then(|r| u64::try_from(r).ok()).unwrap_or(0),
                },
                _ => RequestStatus::Refused { reason: detail },
            },
        ))
    }
}
