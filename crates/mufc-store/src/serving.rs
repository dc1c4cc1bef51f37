//! The store of a server run across processes (`mufc::remote`): the same
//! file, with no client rows and no records (the server never holds a
//! client's points), the roster in `meta`, and one journal entry per
//! committed round.

use std::collections::HashMap;
use std::path::Path;

use crate::audit::{begin, joined, sql, write_audit, write_journal};
use crate::error::StoreError;
use crate::handle::{NewStore, Store, unix_now, write_server_of};
use crate::record::ClientName;
use crate::reports::{AuditEntry, AuditOutcome};
use crate::tombstone::Secret;
use crate::types::{DEFAULT_MAX_DEFER, IfExists};
use mufc::{ClientId, Federation, ServerSnapshot};

/// What the journal and the audit log keep of one committed round across
/// processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RoundEntry {
    /// The round number.
    pub round: u64,
    /// The removal requests the round served: a client and its own
    /// number for a request. A client numbers its requests in order and
    /// a round serves its points as they are when it joins, so a server
    /// names each client once, with its highest number: the round served
    /// every earlier request of that client too.
    pub requests: Vec<(ClientId, u64)>,
    /// The clients whose sketches the sum holds.
    pub included: Vec<ClientId>,
    /// The clients that dropped out of the round.
    pub dropped: Vec<ClientId>,
    /// The requests served by a group emptied as the round committed
    /// (its clients with points moved into the round's group by a merge;
    /// those left hold none): a client and its own number, as
    /// [`Self::requests`].
    pub emptied: Vec<(ClientId, u64)>,
}

fn ids(v: &[ClientId]) -> String {
    joined(&v.iter().map(|c| c.0).collect::<Vec<_>>())
}

impl Store {
    /// A new store for the server of a federation run across processes:
    /// `server` is the server's state
    /// ([`RemoteServer::snapshot`](mufc::remote::RemoteServer::snapshot)),
    /// `roster` names the clients, in id order.
    ///
    /// # Errors
    ///
    /// [`StoreError::Mufc`] for a snapshot that does not load (the checks
    /// of [`Federation::from_snapshot`], run on a snapshot read back; one a
    /// running server just took carries its state and is taken as is);
    /// as [`Store::fit`] otherwise.
    pub fn create_serving(
        path: impl AsRef<Path>,
        server: ServerSnapshot,
        roster: &[String],
        if_exists: IfExists,
    ) -> Result<Self, StoreError> {
        let fed = Federation::from_snapshot(server, Vec::new())?;
        let names = roster
            .iter()
            .zip(0u64..)
            .map(|(n, c)| Ok((ClientId(c), ClientName::new(n)?)))
            .collect::<Result<_, StoreError>>()?;
        let new = NewStore {
            records: HashMap::new(),
            names,
            transform: None,
            if_exists,
            roster: Some(roster),
            max_defer: DEFAULT_MAX_DEFER.as_secs(),
            inheritance: None,
        };
        Self::create_new(path.as_ref(), fed, new, Secret::generate()?, None)
    }

    /// The roster of a server's store (`None` for a store of a federation
    /// run in one process).
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for a roster that does not parse.
    pub fn roster(&self) -> Result<Option<Vec<String>>, StoreError> {
        let blob: Option<Vec<u8>> =
            match self
                .conn
                .query_row("SELECT value FROM meta WHERE key = 'roster'", [], |r| {
                    r.get(0)
                }) {
                Ok(b) => Some(b),
                Err(rusqlite::Error::QueryReturnedNoRows) => None,
                Err(e) => return Err(StoreError::db("reading the roster")(e)),
            };
        blob.map(|b| {
            postcard::from_bytes(&b)
                .map_err(|e| StoreError::corrupt(format!("the roster does not parse: {e}")))
        })
        .transpose()
    }

    /// Commits a round run across processes: `server` (the server's state
    /// after it, [`RemoteServer::snapshot`](mufc::remote::RemoteServer::snapshot))
    /// replaces the server row, with one journal entry and one audit row
    /// per request served, in one transaction; the model version moves on.
    /// [`Store::commit_rounds`] with one round.
    ///
    /// # Errors
    ///
    /// [`StoreError::Mufc`] for a snapshot that does not load (nothing is
    /// written; see [`Store::create_serving`]); [`StoreError::Stale`] if another connection wrote since
    /// this store was read; [`StoreError::Database`] if writing fails
    /// (nothing is written then, and the store keeps its state before the
    /// round).
    pub fn commit_round(
        &mut self,
        server: ServerSnapshot,
        entry: &RoundEntry,
    ) -> Result<(), StoreError> {
        self.commit_rounds(server, std::slice::from_ref(entry))
    }

    /// Commits rounds that must commit together (the two halves of a
    /// group split across processes: either alone would leave the moved
    /// clients in no sum, or in two): `server` replaces the server row
    /// once, with a journal entry per round and an audit row per request
    /// each served, in one transaction; the model version moves on once.
    ///
    /// # Errors
    ///
    /// As [`Store::commit_round`]; [`StoreError::Mufc`] for no round.
    pub fn commit_rounds(
        &mut self,
        server: ServerSnapshot,
        entries: &[RoundEntry],
    ) -> Result<(), StoreError> {
        if entries.is_empty() {
            return Err(StoreError::Mufc(mufc::MufcError::Remote(
                "no round to commit".into(),
            )));
        }
        let fed = Federation::from_snapshot(server, Vec::new())?;
        let journal: Vec<(u64, &str, String)> = (entries.iter())
            .map(|e| (e.round, "round", round_named(e)))
            .collect();
        let served = entries.iter().flat_map(|entry| {
            let served = (entry.requests.iter()).map(|&(c, r)| {
                // Requests of clients the round left out wait for the next.
                let outcome = if entry.included.contains(&c) {
                    AuditOutcome::Applied
                } else {
                    AuditOutcome::Deferred
                };
                (c, r, outcome)
            });
            let emptied = (entry.emptied.iter()).map(|&(c, r)| (c, r, AuditOutcome::Applied));
            served.chain(emptied)
        });
        self.commit_serving(fed, (&journal, true), served)
    }

    /// Commits a server's groups changed without a round across processes
    /// (a group below the minimum aggregate merged into another,
    /// [`RemoteServer::merge`](mufc::remote::RemoteServer::merge)):
    /// `server` replaces the server row, with one journal entry
    /// (`regrouped`, `what` its text); no model changed, so the model
    /// version stays. Kept before any client hears of the new groups: a
    /// server restarted then announces the groups its clients may hold.
    ///
    /// # Errors
    ///
    /// [`StoreError::Mufc`] for a snapshot that does not load (nothing is
    /// written); as [`Store::commit_round`] otherwise.
    pub fn regroup_serving(
        &mut self,
        server: ServerSnapshot,
        what: &str,
    ) -> Result<(), StoreError> {
        let fed = Federation::from_snapshot(server, Vec::new())?;
        self.commit_serving(
            fed,
            (&[(0, "regrouped", what.to_string())], false),
            std::iter::empty(),
        )
    }

    /// Commits the withdrawal of a server's model across processes
    /// (docs/threat-model.md P4: the clients left with points are fewer
    /// than the minimum aggregate): `server` (the withdrawn server's
    /// state, [`RemoteServer::withdraw_if_too_few`](mufc::remote::RemoteServer::withdraw_if_too_few))
    /// replaces the server row, with one journal entry and one audit row
    /// (`withdrawn`) per request it served, `requests` (a client and its
    /// own number), in one transaction; the model version moves on. The
    /// store answers `predict` and `export` with the withdrawal from then on.
    ///
    /// # Errors
    ///
    /// [`StoreError::Mufc`] for a snapshot that does not load or is not
    /// withdrawn (nothing is written); as [`Store::commit_round`]
    /// otherwise.
    pub fn withdraw_serving(
        &mut self,
        server: ServerSnapshot,
        requests_served: &[(ClientId, u64)],
    ) -> Result<(), StoreError> {
        let fed = Federation::from_snapshot(server, Vec::new())?;
        let Some(w) = fed.withdrawal() else {
            return Err(StoreError::Mufc(mufc::MufcError::Remote(
                "the server's state to commit as withdrawn is not withdrawn".into(),
            )));
        };
        let named = format!("{w}; requests {}", requests(requests_served));
        let served = (requests_served.iter()).map(|&(c, r)| (c, r, AuditOutcome::Withdrawn));
        // A request served by a model withdrawn before changes no model.
        let bump = self.state.fed.withdrawal().is_none();
        self.commit_serving(fed, (&[(0, "withdrawn", named)], bump), served)
    }

    /// Writes the server row of `fed`, the journal entries `(round, kind,
    /// named)` (at least one) and one audit row per request `served` (a
    /// client, its own number, the outcome), in one transaction; the
    /// model version moves on when `bump` says the model changed.
    fn commit_serving(
        &mut self,
        fed: Federation,
        (entries, bump): (&[(u64, &str, String)], bool),
        served: impl Iterator<Item = (ClientId, u64, AuditOutcome)>,
    ) -> Result<(), StoreError> {
        let time = unix_now();
        let version_before = self.state.model_version;
        let version_after = version_before.saturating_add(u64::from(bump));
        let tx = begin(&self.conn, self.state.mark())?;
        let mut journal = self.state.last_entry;
        for (round, kind, named) in entries {
            journal = write_journal(&tx, *round, time, kind, named)?;
        }
        write_server_of(
            &tx,
            &fed,
            &self.state,
            version_after,
            self.state.records_digest,
        )?;
        for (client, request, outcome) in served {
            // A client that did not hear its request was served by the
            // withdrawal asks again: told again, audited once.
            if outcome == AuditOutcome::Withdrawn
                && audited(&tx, self.state.name(client).as_str(), request, outcome)?
            {
                continue;
            }
            // A client's points are its own: the server knows only that
            // its request was served (or waits for the next round).
            let applied = outcome != AuditOutcome::Deferred;
            write_audit(
                &tx,
                &AuditEntry {
                    request,
                    time,
                    client: self.state.name(client),
                    points: 0,
                    whole_client: false,
                    reseeded: false,
                    outcome,
                    applied: if applied { vec![request] } else { Vec::new() },
                    // The client erased the points itself when it asked.
                    erased_at: time,
                    removed_at: applied.then_some(time),
                    version_before,
                    version_after,
                    warning: None,
                    // Nor whether its records were added or erased.
                    added: 0,
                },
            )?;
        }
        tx.commit().map_err(StoreError::db("committing"))?;
        self.state.last_entry = journal;
        self.state.model_version = version_after;
        self.state.fed = fed;
        Ok(())
    }
}

/// Whether the audit log holds client `client`'s request `request` with
/// `outcome` already.
fn audited(
    conn: &rusqlite::Connection,
    client: &str,
    request: u64,
    outcome: AuditOutcome,
) -> Result<bool, StoreError> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM audit WHERE client = ?1 AND request = ?2 AND outcome = ?3)",
    )
    .and_then(|mut s| {
        s.query_row(
            rusqlite::params![client, sql(request), outcome.name()],
            |r| r.get(0),
        )
    })
    .map_err(StoreError::db("reading the audit log"))
}

/// A round as the journal names it.
fn round_named(entry: &RoundEntry) -> String {
    let mut named = format!(
        "round {}; requests {}; included {}; dropped {}",
        entry.round,
        requests(&entry.requests),
        ids(&entry.included),
        ids(&entry.dropped)
    );
    if !entry.emptied.is_empty() {
        named.push_str(&format!("; emptied {}", requests(&entry.emptied)));
    }
    named
}

/// Requests as the journal names them: `client:number`, comma-separated.
fn requests(v: &[(ClientId, u64)]) -> String {
    (v.iter().map(|(c, r)| format!("{c}:{r}")))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_listed_in_order() {
        assert_eq!(ids(&[ClientId(2), ClientId(5)]), "2,5");
        assert_eq!(ids(&[]), "");
    }

    /// A snapshot that does not load is refused before any file exists:
    /// here an in-process federation's, whose lone request waits for its
    /// client's points (a server's store holds no client's point).
    #[test]
    fn a_snapshot_that_does_not_load_makes_no_store() {
        let dir = tempfile::tempdir().unwrap();
        let data: Vec<seeding::Dataset> = (0..3)
            .map(|l| {
                seeding::Dataset::new(nalgebra::DMatrix::from_fn(2, 20, |r, c| {
                    ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2
                }))
                .unwrap()
            })
            .collect();
        let config = mufc::FederationConfig::new(2)
            .gamma(0.1)
            .validate()
            .unwrap();
        let mut fed = Federation::new(data, &config).unwrap();
        let lone = mufc::RemovalRequest::points(ClientId(0), vec![seeding::PointId(1)]);
        assert!(fed.remove(&lone).unwrap().outcome.is_deferred());
        let err = Store::create_serving(
            dir.path().join("s.db"),
            fed.server_snapshot(),
            &["a".into()],
            IfExists::Refuse,
        )
        .unwrap_err();
        assert!(matches!(err, StoreError::Mufc(_)), "{err}");
        assert!(!dir.path().join("s.db").exists());
    }
}
