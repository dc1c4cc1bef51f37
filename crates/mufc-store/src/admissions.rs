//! The roster's changes in the store of a federation served across
//! processes (issue 29): each client admitted after training (its name on
//! the roster, its certificate, which the members check before they take a
//! setup that admits it, and when it joined), and each client that left
//! (its certificate and its signed leave, which the members check before
//! they run rings without it), written with the server's state in one
//! transaction.

use serde::{Deserialize, Serialize};

use crate::audit::{begin, write_audit, write_journal};
use crate::error::StoreError;
use crate::handle::{Store, unix_now, write_server_of};
use crate::record::ClientName;
use crate::reports::{AuditEntry, AuditOutcome};
use mufc::{ClientId, Federation, ServerSnapshot};

/// A client admitted after training: its id (its place on the roster),
/// its name, its certificate (DER, from the federation's authority) and
/// when it joined (Unix seconds).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AdmittedClient {
    /// Its id: the roster's length when it joined.
    pub id: ClientId,
    /// Its name (its certificate's).
    pub name: String,
    /// Its certificate, DER.
    pub certificate: Vec<u8>,
    /// When it was admitted, Unix seconds.
    pub time: u64,
}

/// A client that left after training, with the proof of it the members
/// check: its certificate (DER) and its leave statement as the caller
/// encodes it (opaque here; `mufc-net` keeps the signed statement), and
/// when it left (Unix seconds).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepartedClient {
    /// Its id.
    pub id: ClientId,
    /// Its certificate, DER.
    pub certificate: Vec<u8>,
    /// Its leave statement, signed, as the caller encodes it.
    pub leave: Vec<u8>,
    /// When it left, Unix seconds.
    pub time: u64,
}

impl Store {
    /// Admits `client` to the federation this server's store serves: its
    /// name goes on the roster (at the end: its id is the roster's
    /// length), `server` (the server's state once it admitted it,
    /// [`RemoteServer::admit`](mufc::remote::RemoteServer::admit))
    /// replaces the server row, and the journal and the audit log say it
    /// joined and waits for its first round, in one transaction.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for a store that is not a server's (no
    /// roster), [`StoreError::DuplicateClient`] for a name on the roster,
    /// [`StoreError::Mufc`] for an id that is not the roster's length or a
    /// snapshot that does not load; [`StoreError::Stale`] if another
    /// connection wrote since this store was read; [`StoreError::Database`]
    /// (nothing is written then).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::InProcess;
    /// use mufc::{ClientId, FederationConfig};
    /// use mufc_store::{AdmittedClient, IfExists, Store};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let data: Vec<(ClientId, Dataset)> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)).map(|d| (ClientId(l as u64), d)))
    ///     .collect::<Result<_, _>>()?;
    /// let parties = InProcess::train(data, &FederationConfig::new(2).seed(5).validate()?)?;
    /// let mut server = parties.server().clone();
    /// let dir = tempfile::tempdir()?;
    /// let roster: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    /// let mut store = Store::create_serving(dir.path().join("s.db"), server.snapshot()?, &roster, IfExists::Refuse)?;
    /// server.admit(&[ClientId(3)])?;
    /// let north = AdmittedClient { id: ClientId(3), name: "north".into(), certificate: vec![1, 2], time: 0 };
    /// store.admit_serving(server.snapshot()?, north.clone())?;
    /// assert_eq!(store.roster()?.unwrap(), ["a", "b", "c", "north"]);
    /// assert_eq!(store.admitted()?, [north.clone()]);
    /// // Reopened: the same, and the same name refused.
    /// let mut again = Store::open(dir.path().join("s.db"))?;
    /// assert_eq!((again.roster()?.unwrap().len(), again.admitted()?), (4, vec![north.clone()]));
    /// assert!(again.admit_serving(server.snapshot()?, AdmittedClient { id: ClientId(4), ..north }).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn admit_serving(
        &mut self,
        server: ServerSnapshot,
        client: AdmittedClient,
    ) -> Result<(), StoreError> {
        let mut roster = self
            .roster()?
            .ok_or_else(|| StoreError::corrupt("the store is not a server's: it has no roster"))?;
        let name = ClientName::new(&client.name)?;
        if roster.contains(&client.name) {
            return Err(StoreError::DuplicateClient(name));
        }
        if client.id != ClientId(roster.len() as u64) {
            return Err(StoreError::Mufc(mufc::MufcError::UnknownClient(client.id)));
        }
        let fed = Federation::from_snapshot(server, Vec::new())?;
        roster.push(client.name.clone());
        let mut admitted = self.admitted()?;
        admitted.push(client.clone());
        let time = unix_now();
        // The server row names the new client: the name is in the state
        // while it is written, and taken out again if the write fails.
        self.state.names.insert(client.id, name.clone());
        let metas = [
            ("roster", encode(&roster)?),
            ("admitted", encode(&admitted)?),
        ];
        let change = Change {
            id: client.id,
            kind: "join",
            outcome: AuditOutcome::Deferred,
            time,
        };
        match self.write_change(&fed, &change, &metas) {
            Ok(journal) => {
                self.state.last_entry = journal;
                self.state.by_name.insert(name, client.id);
            }
            Err(e) => {
                self.state.names.remove(&client.id);
                return Err(e);
            }
        }
        self.state.fed = fed;
        Ok(())
    }

    /// Notes that `client` left the federation this server's store serves
    /// (after its whole removal's round committed): `server` (the server's
    /// state once it noted it, [`RemoteServer::leave`](mufc::remote::RemoteServer::leave))
    /// replaces the server row, the leave is kept with its proof
    /// ([`Self::departed`]), and the journal and the audit log say it left,
    /// in one transaction. The client stays on the roster.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for a store that is not a server's;
    /// [`StoreError::Mufc`] for a client not on the roster, or a snapshot
    /// that does not load; [`StoreError::Stale`]; [`StoreError::Database`]
    /// (nothing is written then).
    pub fn leave_serving(
        &mut self,
        server: ServerSnapshot,
        client: DepartedClient,
    ) -> Result<(), StoreError> {
        let roster = self
            .roster()?
            .ok_or_else(|| StoreError::corrupt("the store is not a server's: it has no roster"))?;
        if usize::try_from(client.id.0).map_or(true, |i| i >= roster.len()) {
            return Err(StoreError::Mufc(mufc::MufcError::UnknownClient(client.id)));
        }
        let fed = Federation::from_snapshot(server, Vec::new())?;
        let mut departed = self.departed()?;
        if departed.iter().any(|d| d.id == client.id) {
            return Ok(());
        }
        departed.push(client.clone());
        let change = Change {
            id: client.id,
            kind: "leave",
            outcome: AuditOutcome::Applied,
            time: unix_now(),
        };
        let journal = self.write_change(&fed, &change, &[("departed", encode(&departed)?)])?;
        self.state.last_entry = journal;
        self.state.fed = fed;
        Ok(())
    }

    /// The clients that left after training, in the order they left.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for a list that does not parse.
    pub fn departed(&self) -> Result<Vec<DepartedClient>, StoreError> {
        self.meta_list("departed", "the clients that left")
    }

    /// Keeps the clients of a server's store that said they hold no point
    /// (docs/threat-model.md P4: they count out of the minimum aggregate
    /// until they say otherwise), so that a server restarted knows them
    /// before they connect again.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for a store that is not a server's;
    /// [`StoreError::Database`] if writing fails (nothing is written).
    ///
    /// # Example
    ///
    /// ```no_run
    /// use mufc::ClientId;
    /// use mufc_store::Store;
    ///
    /// let mut store = Store::open("server.db")?;
    /// store.set_emptied(&[ClientId(3)])?;
    /// assert_eq!(store.emptied()?, [ClientId(3)]);
    /// # Ok::<(), mufc_store::StoreError>(())
    /// ```
    pub fn set_emptied(&mut self, ids: &[ClientId]) -> Result<(), StoreError> {
        if self.roster()?.is_none() {
            return Err(StoreError::corrupt(
                "the store is not a server's: it has no roster",
            ));
        }
        let list: Vec<u64> = ids.iter().map(|c| c.0).collect();
        self.conn
            .execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES ('emptied', ?1)",
                rusqlite::params![encode(&list)?],
            )
            .map_err(StoreError::db("writing the metadata"))?;
        Ok(())
    }

    /// The clients of a server's store that said they hold no point
    /// ([`Self::set_emptied`]), in id order.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for a list that does not parse.
    pub fn emptied(&self) -> Result<Vec<ClientId>, StoreError> {
        let list: Vec<u64> = self.meta_list("emptied", "the clients that hold no point")?;
        Ok(list.into_iter().map(ClientId).collect())
    }

    /// Writes a change of the roster in one transaction: the journal
    /// entry, the server row of `fed` (the state names the client), the
    /// `meta` rows `metas`, the client's audit row; returns the journal
    /// entry.
    fn write_change(
        &self,
        fed: &Federation,
        change: &Change,
        metas: &[(&str, Vec<u8>)],
    ) -> Result<i64, StoreError> {
        let name = self.state.name(change.id);
        let version = self.state.model_version;
        let tx = begin(&self.conn, self.state.mark())?;
        let named = format!("client {}", change.id);
        let journal = write_journal(&tx, 0, change.time, change.kind, &named)?;
        write_server_of(&tx, fed, &self.state, version, self.state.records_digest)?;
        for (key, blob) in metas {
            tx.execute(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)",
                rusqlite::params![key, blob],
            )
            .map_err(StoreError::db("writing the metadata"))?;
        }
        write_audit(
            &tx,
            &AuditEntry {
                request: 0,
                time: change.time,
                client: name,
                points: 0,
                whole_client: change.kind == "leave",
                reseeded: false,
                outcome: change.outcome,
                applied: Vec::new(),
                erased_at: change.time,
                removed_at: (change.kind == "leave").then_some(change.time),
                version_before: version,
                version_after: version,
                warning: None,
                added: 0,
            },
        )?;
        tx.commit().map_err(StoreError::db("committing"))?;
        Ok(journal)
    }

    /// The clients admitted after training, in the order they joined
    /// (none for a store of a federation run in one process).
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] for a list that does not parse.
    pub fn admitted(&self) -> Result<Vec<AdmittedClient>, StoreError> {
        self.meta_list("admitted", "the admitted clients")
    }

    /// The list kept under `key` in `meta` (`what`, for errors); empty
    /// when there is none.
    fn meta_list<T: serde::de::DeserializeOwned>(
        &self,
        key: &str,
        what: &str,
    ) -> Result<Vec<T>, StoreError> {
        let blob: Option<Vec<u8>> =
            match self
                .conn
                .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            {
                Ok(b) => Some(b),
                Err(rusqlite::Error::QueryReturnedNoRows) => None,
                Err(e) => return Err(StoreError::db("reading the metadata")(e)),
            };
        blob.map_or(Ok(Vec::new()), |b| {
            postcard::from_bytes(&b)
                .map_err(|e| StoreError::corrupt(format!("{what} do not parse: {e}")))
        })
    }
}

/// A change of the roster, as the journal and the audit log name it.
struct Change {
    id: ClientId,
    /// `join` or `leave`.
    kind: &'static str,
    outcome: AuditOutcome,
    time: u64,
}

/// `value` in `meta`'s encoding (postcard).
fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, StoreError> {
    postcard::to_allocvec(value).map_err(|e| StoreError::Database {
        context: "writing the metadata",
        source: e.to_string().into(),
    })
}
