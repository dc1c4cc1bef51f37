//! What a request asks for, resolved against the state before anything
//! changes: the records or the client it names (or the refusal), or the
//! pending model updates a flush or the deadlines run.

use std::collections::{BTreeMap, HashSet};

use rusqlite::Connection;
use seeding::PointId;

use super::job::{Job, plural};
use crate::audit::journaled_at;
use crate::error::StoreError;
use crate::record::{ClientName, RecordId};
use crate::state::State;
use crate::tombstone::{self, lookup};
use mufc::{AdditionRequest, ClientId, RemovalRequest};

/// What a job asks the federation for, as the journal and the audit
/// name it.
#[derive(Default)]
pub(super) struct Asked {
    /// The removal request (`None` for a flush or the overdue updates).
    pub(super) request: Option<RemovalRequest>,
    pub(super) kind: &'static str,
    /// What the journal says the request named.
    pub(super) named: String,
    /// How many records the request names.
    pub(super) records: usize,
    /// The records the request erases, with their clients.
    pub(super) erased: Vec<(RecordId, ClientId)>,
    /// The clients whose update is past its deadline (`Job::Overdue`).
    pub(super) overdue_clients: Option<Vec<ClientId>>,
    /// The addition (`Job::Add`; `None` when every record was skipped).
    pub(super) addition: Option<AdditionRequest>,
    /// The records the addition adds, with their clients and points.
    pub(super) added: Vec<(RecordId, ClientId, PointId)>,
    /// The records the addition left out: the store forgot them.
    pub(super) skipped: Vec<crate::reports::Forgotten>,
    /// The clients the addition brings, by the numbers the store gives
    /// them, with their names.
    pub(super) joined: Vec<(ClientId, ClientName)>,
}

impl Asked {
    /// What `job` asks for on `state` at `time`, or the refusal; `None`
    /// when there is nothing to do.
    pub(super) fn of(
        tx: &Connection,
        state: &State,
        job: Job<'_>,
        time: u64,
    ) -> Result<Option<Self>, StoreError> {
        match job {
            Job::Records(ids) => Self::records(tx, state, ids).map(Some),
            Job::Client(name) => Self::client(tx, state, name).map(Some),
            Job::Flush => Ok((!state.fed.pending_clients().is_empty()).then(|| Self {
                kind: "flush",
                ..Self::default()
            })),
            Job::Overdue => Self::overdue(tx, state, time),
            Job::Add(clients, on, join) => Self::addition(tx, state, clients, (on, join)).map(Some),
        }
    }

    /// The records `ids`, each erased from its client.
    fn records(tx: &Connection, state: &State, ids: &[RecordId]) -> Result<Self, StoreError> {
        let per = resolve(tx, state, ids)?;
        let mut erased = Vec::new();
        let mut r = RemovalRequest::new();
        for (c, v) in per {
            erased.extend(v.iter().map(|(id, _)| (id.clone(), c)));
            r = r.with_points(c, v.into_iter().map(|(_, p)| p).collect());
        }
        let n = ids.len();
        Ok(Self {
            request: Some(r),
            kind: "records",
            named: plural(n, "record"),
            records: n,
            erased,
            ..Self::default()
        })
    }

    /// Client `name` whole, with every record it holds.
    fn client(tx: &Connection, state: &State, name: &str) -> Result<Self, StoreError> {
        let id = client_named(tx, state, name)?;
        let mut erased: Vec<(RecordId, ClientId)> = state
            .records
            .iter()
            .filter(|(_, (c, _))| *c == id)
            .map(|(r, _)| (r.clone(), id))
            .collect();
        erased.sort_unstable();
        Ok(Self {
            request: Some(RemovalRequest::clients(vec![id])),
            kind: "client",
            named: state.name(id).to_string(),
            erased,
            ..Self::default()
        })
    }

    /// The pending clients whose records were erased, or added, longer
    /// ago than the deferral limit, at `time`; `None` when none is due.
    fn overdue(tx: &Connection, state: &State, time: u64) -> Result<Option<Self>, StoreError> {
        let due = time.saturating_sub(state.max_defer);
        let mut clients: Vec<ClientId> = tombstone::overdue(tx, due)?
            .into_iter()
            .map(ClientId)
            .filter(|c| state.fed.pending_clients().contains(c))
            .collect();
        for a in state.fed.pending_additions() {
            if journaled_at(tx, a.number)?.is_some_and(|t| t <= due) {
                clients.extend(a.named());
            }
        }
        clients.sort_unstable();
        clients.dedup();
        if clients.is_empty() {
            return Ok(None);
        }
        let names = state.names_of(&clients);
        Ok(Some(Self {
            request: None,
            kind: "overdue",
            named: names
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(","),
            records: 0,
            overdue_clients: Some(clients),
            ..Self::default()
        }))
    }
}

/// The records `ids` by client, or the refusal naming those not held.
fn resolve(
    conn: &Connection,
    state: &State,
    ids: &[RecordId],
) -> Result<BTreeMap<ClientId, Vec<(RecordId, PointId)>>, StoreError> {
    let mut seen = HashSet::new();
    let mut per: BTreeMap<ClientId, Vec<(RecordId, PointId)>> = BTreeMap::new();
    let mut missing = Vec::new();
    for id in ids {
        if !seen.insert(id) {
            return Err(StoreError::DuplicateRecord(id.clone()));
        }
        match state.records.get(id) {
            Some(&(c, p)) => per.entry(c).or_default().push((id.clone(), p)),
            None => missing.push(id.clone()),
        }
    }
    if missing.is_empty() {
        return Ok(per);
    }
    missing.sort_unstable();
    let mut forgotten = Vec::new();
    let mut unknown = Vec::new();
    for id in missing {
        match lookup(conn, &state.secret, &id, |c| {
            state.names.get(&ClientId(c)).cloned()
        })? {
            Some(f) => forgotten.push(f),
            None => unknown.push(id),
        }
    }
    Err(if forgotten.is_empty() {
        StoreError::UnknownRecords { ids: unknown }
    } else {
        StoreError::AlreadyForgotten { forgotten, unknown }
    })
}

/// The request that removed client `name` whole (from the audit log).
fn removed_by(conn: &Connection, name: &ClientName) -> Result<(u64, u64), StoreError> {
    let (request, time): (Option<i64>, Option<i64>) = conn
        .query_row(
            "SELECT request, time FROM audit WHERE client = ?1 AND whole_client = 1 \
             ORDER BY request LIMIT 1",
            [name.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok((None, None)),
            e => Err(e),
        })
        .map_err(StoreError::db("reading the audit log"))?;
    let num = |v: Option<i64>| v.and_then(|r| u64::try_from(r).ok()).unwrap_or(0);
    Ok((num(request), num(time)))
}

/// A client's name as the store knows it, or the refusal.
pub(super) fn client_named(
    conn: &Connection,
    state: &State,
    name: &str,
) -> Result<ClientId, StoreError> {
    let unknown = || StoreError::UnknownClient {
        name: name.to_string(),
        known: {
            let held: Vec<String> = state
                .fed
                .client_ids()
                .iter()
                .take(10)
                .map(|c| state.name(*c).to_string())
                .collect();
            let more = state.fed.clients().len().saturating_sub(10);
            if more > 0 {
                format!("{}, and {more} more", held.join(", "))
            } else {
                held.join(", ")
            }
        },
    };
    let Ok(parsed) = ClientName::new(name) else {
        return Err(unknown());
    };
    let Some(&id) = state.by_name.get(&parsed) else {
        return Err(unknown());
    };
    if state.fed.client(id).is_none() {
        let (request, at) = removed_by(conn, &parsed)?;
        return Err(StoreError::ClientForgotten {
            request,
            at,
            pending: state.fed.pending_clients().contains(&id),
            name: parsed,
        });
    }
    Ok(id)
}
