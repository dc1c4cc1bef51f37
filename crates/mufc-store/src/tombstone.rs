//! Tombstones: what a store keeps of a forgotten record. Not its
//! coordinates and not its id: the HMAC-SHA-256 of the id under a secret
//! of the store's own ([`Secret`]), with the request that forgot it, when
//! it was erased, and the model version that no longer holds it. Given an
//! id, the store can answer whether and when it forgot it ([`lookup`]);
//! reading the table tells nobody which ids it held, unless they hold
//! the secret too and guess the id (docs/store.md, "Tombstones").

use hmac::{Hmac, KeyInit, Mac};
use rusqlite::{Connection, OptionalExtension, params};
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::error::StoreError;
use crate::record::{ClientName, RecordId};
use crate::reports::Forgotten;

/// The store's secret key for its tombstones: 32 bytes from the
/// operating system, drawn when the store is created, kept in `meta`.
#[derive(Clone)]
pub(crate) struct Secret(Zeroizing<[u8; 32]>);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// A tombstone's key: the keyed hash of a record id.
pub(crate) type Tag = [u8; 32];

impl Secret {
    /// A new secret from the operating system's generator.
    pub(crate) fn generate() -> Result<Self, StoreError> {
        use rand::TryRng;
        let mut key = Zeroizing::new([0u8; 32]);
        rand::rngs::SysRng
            .try_fill_bytes(key.as_mut())
            .map_err(|e| StoreError::Database {
                context: "drawing the store's secret",
                source: e.to_string().into(),
            })?;
        Ok(Self(key))
    }

    /// The secret stored in `meta`.
    pub(crate) fn read(conn: &Connection) -> Result<Self, StoreError> {
        let blob: Vec<u8> = conn
            .query_row("SELECT value FROM meta WHERE key = 'secret'", [], |r| {
                r.get(0)
            })
            .optional()
            .map_err(StoreError::db("reading the store's secret"))?
            .ok_or_else(|| StoreError::corrupt("the store's secret is missing"))?;
        let key: [u8; 32] = blob
            .as_slice()
            .try_into()
            .map_err(|_| StoreError::corrupt("the store's secret is not 32 bytes"))?;
        Ok(Self(Zeroizing::new(key)))
    }

    /// Writes the secret into `meta` (a new store's).
    pub(crate) fn write(&self, conn: &Connection) -> Result<(), StoreError> {
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('secret', ?1)",
            params![self.0.as_slice()],
        )
        .map_err(StoreError::db("writing the store's secret"))?;
        Ok(())
    }

    /// The tag of record `id`.
    pub(crate) fn tag(&self, id: &RecordId) -> Tag {
        // HMAC takes a key of any length: this cannot fail.
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(self.0.as_slice())
            .unwrap_or_else(|_| unreachable!("HMAC accepts a 32-byte key"));
        mac.update(b"mufc-store-record\0");
        id.tag(|b| mac.update(b));
        mac.finalize().into_bytes().into()
    }
}

/// The tombstone of record `id`, if it has one (the client named through
/// `name_of`).
pub(crate) fn lookup(
    conn: &Connection,
    secret: &Secret,
    id: &RecordId,
    name_of: impl Fn(u64) -> Option<ClientName>,
) -> Result<Option<Forgotten>, StoreError> {
    let db = StoreError::db("reading the tombstones");
    /// Request, client, erasure, model version and time, inherited.
    type Row = (i64, i64, i64, Option<i64>, Option<i64>, bool);
    let row: Option<Row> = conn
        .prepare_cached(
            "SELECT request, client, erased, version, applied, inherited FROM tombstones \
             WHERE tag = ?1",
        )
        .and_then(|mut s| {
            s.query_row(params![secret.tag(id).as_slice()], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })
            .optional()
        })
        .map_err(db)?;
    let Some((request, client, erased, version, applied, inherited)) = row else {
        return Ok(None);
    };
    let u = |v: i64| {
        u64::try_from(v).map_err(|_| StoreError::corrupt(format!("tombstone: negative {v}")))
    };
    let applied = match (version, applied) {
        (Some(v), Some(t)) => Some((u(v)?, u(t)?)),
        (None, None) => None,
        _ => {
            return Err(StoreError::corrupt(
                "a tombstone has half of its model time",
            ));
        }
    };
    Ok(Some(Forgotten {
        id: id.clone(),
        request: u(request)?,
        erased_at: u(erased)?,
        client: if inherited { None } else { name_of(u(client)?) },
        applied,
        inherited,
    }))
}

/// One tombstone (in the caller's transaction).
pub(crate) fn bury(
    conn: &Connection,
    tag: &Tag,
    request: u64,
    client: u64,
    erased: u64,
    applied: Option<(u64, u64)>,
) -> Result<(), StoreError> {
    let sql = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    conn.prepare_cached(
        "INSERT INTO tombstones (tag, request, client, erased, version, applied, inherited) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, 0)",
    )
    .and_then(|mut s| {
        s.execute(params![
            tag.as_slice(),
            sql(request),
            sql(client),
            sql(erased),
            applied.map(|(v, _)| sql(v)),
            applied.map(|(_, t)| sql(t)),
        ])
    })
    .map_err(StoreError::db("writing a tombstone"))?;
    Ok(())
}

/// Marks the waiting tombstones of `client` removed from the model in
/// `version` at `time` (in the caller's transaction); how many there
/// were and the earliest erasure among them, if any.
pub(crate) fn applied(
    conn: &Connection,
    client: u64,
    version: u64,
    time: u64,
) -> Result<Option<(usize, u64)>, StoreError> {
    let sql = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    let db = StoreError::db("updating the tombstones");
    let earliest: Option<i64> = conn
        .query_row(
            "SELECT min(erased) FROM tombstones WHERE client = ?1 AND version IS NULL",
            params![sql(client)],
            |r| r.get(0),
        )
        .map_err(db)?;
    let n = conn
        .execute(
            "UPDATE tombstones SET version = ?2, applied = ?3 WHERE client = ?1 AND version IS NULL",
            params![sql(client), sql(version), sql(time)],
        )
        .map_err(StoreError::db("updating the tombstones"))?;
    Ok(earliest.and_then(|e| u64::try_from(e).ok()).map(|e| (n, e)))
}

/// The clients whose records were erased at or before `due` and whose
/// model update still waits.
pub(crate) fn overdue(conn: &Connection, due: u64) -> Result<Vec<u64>, StoreError> {
    let due = i64::try_from(due).unwrap_or(i64::MAX);
    let mut stmt = conn
        .prepare(
            "SELECT DISTINCT client FROM tombstones WHERE version IS NULL AND erased <= ?1 \
             ORDER BY client",
        )
        .map_err(StoreError::db("reading the tombstones"))?;
    let rows = stmt
        .query_map(params![due], |r| r.get::<_, i64>(0))
        .and_then(Iterator::collect::<Result<Vec<i64>, _>>)
        .map_err(StoreError::db("reading the tombstones"))?;
    rows.into_iter()
        .map(|c| {
            u64::try_from(c)
                .map_err(|_| StoreError::corrupt(format!("tombstone of negative client {c}")))
        })
        .collect()
}

/// When the oldest erasure whose model update waits happened, if any.
pub(crate) fn oldest_waiting(conn: &Connection) -> Result<Option<u64>, StoreError> {
    let t: Option<i64> = conn
        .query_row(
            "SELECT min(erased) FROM tombstones WHERE version IS NULL",
            [],
            |r| r.get(0),
        )
        .map_err(StoreError::db("reading the tombstones"))?;
    Ok(t.and_then(|t| u64::try_from(t).ok()))
}

/// A tombstone as a replaced store kept it.
#[derive(Debug)]
pub(crate) struct Buried {
    pub(crate) tag: Tag,
    pub(crate) request: i64,
    pub(crate) erased: i64,
    /// The model version that stopped counting it, and when.
    pub(crate) applied: Option<(i64, i64)>,
}

/// What a store being replaced leaves to its successor: its secret and
/// its tombstones.
#[derive(Debug)]
pub(crate) struct Inheritance {
    pub(crate) secret: Secret,
    pub(crate) tombstones: Vec<Buried>,
}

impl Inheritance {
    /// The secret and tombstones of the store at `conn`.
    pub(crate) fn read(conn: &Connection) -> Result<Self, StoreError> {
        let secret = Secret::read(conn)?;
        let mut stmt = conn
            .prepare("SELECT tag, request, erased, version, applied FROM tombstones")
            .map_err(StoreError::db("reading the tombstones"))?;
        let tombstones = stmt
            .query_map([], |r| {
                let tag: Vec<u8> = r.get(0)?;
                Ok((tag, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .and_then(Iterator::collect::<Result<Vec<_>, _>>)
            .map_err(StoreError::db("reading the tombstones"))?
            .into_iter()
            .map(
                |(tag, request, erased, version, at): (
                    Vec<u8>,
                    i64,
                    i64,
                    Option<i64>,
                    Option<i64>,
                )| {
                    let tag: Tag = tag
                        .as_slice()
                        .try_into()
                        .map_err(|_| StoreError::corrupt("a tombstone's tag is not 32 bytes"))?;
                    Ok(Buried {
                        tag,
                        request,
                        erased,
                        applied: version.zip(at),
                    })
                },
            )
            .collect::<Result<_, StoreError>>()?;
        Ok(Self { secret, tombstones })
    }

    /// Writes the inherited tombstones into a new store (its client
    /// numbers mean nothing there: -1).
    pub(crate) fn write(&self, conn: &Connection) -> Result<(), StoreError> {
        let mut stmt = conn
            .prepare(
                "INSERT INTO tombstones (tag, request, client, erased, version, applied, \
                 inherited) VALUES (?1, ?2, -1, ?3, ?4, ?5, 1)",
            )
            .map_err(StoreError::db("writing the tombstones"))?;
        for b in &self.tombstones {
            // A record whose model update waited in the old store is out
            // of the new one's model from its start.
            let (version, applied) = b.applied.unwrap_or((0, b.erased));
            stmt.execute(params![
                b.tag.as_slice(),
                b.request,
                b.erased,
                version,
                applied
            ])
            .map_err(StoreError::db("writing the tombstones"))?;
        }
        Ok(())
    }
}
