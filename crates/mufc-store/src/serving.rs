//! The store of a server run across processes (`mufc::remote`): the same
//! file, with no client rows and no records (the server never holds a
//! client's points), the roster in `meta`, and one journal entry per
//! committed round.

use std::collections::HashMap;
use std::path::Path;

use crate::audit::{begin, joined, write_audit, write_journal};
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
        let fed = Federation::from_snapshot(server, Vec::new())?;
        let time = unix_now();
        let version_before = self.state.model_version;
        let version_after = version_before.saturating_add(1);
        let named = format!(
            "round {}; requests {}; included {}; dropped {}",
            entry.round,
            entry
                .requests
                .iter()
                .map(|(c, r)| format!("{c}:{r}"))
                .collect::<Vec<_>>()
                .join(","),
            ids(&entry.included),
            ids(&entry.dropped)
        );
        let tx = begin(&self.conn, self.state.mark())?;
        let journal = write_journal(&tx, entry.round, time, "round", &named)?;
        write_server_of(
            &tx,
            &fed,
            &self.state,
            version_after,
            self.state.records_digest,
        )?;
        for (client, request) in &entry.requests {
            // A client's points are its own: the server knows only that
            // its request was served (or waits for the next round).
            let applied = entry.included.contains(client);
            write_audit(
                &tx,
                &AuditEntry {
                    request: *request,
                    time,
                    client: self.state.name(*client),
                    points: 0,
                    whole_client: false,
                    reseeded: false,
                    outcome: if applied {
                        AuditOutcome::Applied
                    } else {
                        AuditOutcome::Deferred
                    },
                    applied: if applied { vec![*request] } else { Vec::new() },
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
