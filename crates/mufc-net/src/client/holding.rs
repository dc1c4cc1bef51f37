//! What a client holds between sessions: its store, or, before any
//! server admitted it, its records in memory and the identity reserved
//! for its store ([`crate::client_store::FirstStart`]).

use std::collections::BTreeSet;
use std::path::Path;

use mufc::ClientId;
use mufc::remote::{Registration, RemoteClient};

use crate::NetError;
use crate::client_store::reservation::{Reservation, reservation_file};
use crate::client_store::{ClientStore, FirstStart};
use crate::proto::Hello;
use crate::running::off_runtime;
use crate::server::PROTOCOL_VERSION;

/// A client's store once a server admitted it; before that, its first
/// start (exactly one of the two is set).
#[derive(Debug)]
pub(super) struct Holding {
    store: Option<ClientStore>,
    first: Option<(Reservation, FirstStart)>,
}

impl Holding {
    /// The store at `path`; if there is none, the first start `first`
    /// (with its identity reserved).
    ///
    /// # Errors
    ///
    /// [`NetError::ClientStore`]: the store does not open or is another
    /// client's; there is no store and no first start; the first start's
    /// points lie outside the model's box; the reservation fails.
    pub(super) fn open(path: &Path, first: Option<&FirstStart>) -> Result<Self, NetError> {
        let first = match first {
            Some(f) if !path.exists() => f,
            _ => {
                let store = ClientStore::open(path)?;
                if let Some(f) = first {
                    let stored = store.name()?;
                    if stored != f.name {
                        return Err(NetError::ClientStore {
                            path: path.to_path_buf(),
                            reason: format!("it is the store of client {stored}, not {}", f.name),
                        });
                    }
                }
                // A start stopped after the store was written and before
                // the reservation was removed leaves it: the store holds
                // the identity now.
                let _ = std::fs::remove_file(reservation_file(path));
                return Ok(Self {
                    store: Some(store),
                    first: None,
                });
            }
        };
        ClientStore::check_importable(path, &first.data)?;
        let reservation = Reservation::take(path)?;
        Ok(Self {
            store: None,
            first: Some((reservation, first.clone())),
        })
    }

    /// The store, once a server admitted the client.
    pub(super) fn store(&self) -> Option<&ClientStore> {
        self.store.as_ref()
    }

    /// The store, where a message needs it: every such message comes
    /// after the welcome, which writes it.
    pub(super) fn stored(&self) -> Result<&ClientStore, NetError> {
        self.store.as_ref().ok_or_else(|| {
            NetError::Protocol("the server sent a round's message before its welcome".into())
        })
    }

    /// The client's Hello: what it holds (its state `party` once loaded,
    /// else its store's or its first start's records) and its store's
    /// identity.
    pub(super) fn hello(&self, party: Option<&RemoteClient>) -> Result<Hello, NetError> {
        let (name, identity) = match (&self.store, &self.first) {
            (Some(store), _) => (store.name()?, store.identity()?),
            (None, Some((reservation, first))) => (first.name.clone(), reservation.identity()),
            (None, None) => return Err(gone()),
        };
        let survey = |d: &seeding::Dataset| {
            // The id is the server's to give: the survey needs none.
            let r = Registration::surveying(ClientId(0), d);
            (r.points, r.dim, r.scale)
        };
        let (points, dim, scale) = match (party, &self.store, &self.first) {
            (Some(c), _, _) => {
                let r = c.registration();
                (r.points, r.dim, r.scale)
            }
            (None, Some(store), _) => survey(&store.data()?),
            (None, None, Some((_, first))) => survey(&first.data),
            (None, None, None) => return Err(gone()),
        };
        Ok(Hello {
            protocol: PROTOCOL_VERSION,
            name,
            points,
            dim: dim as u64,
            scale,
            store: identity.to_vec(),
        })
    }

    /// The server welcomed the client as `id`: its state, restored from
    /// its store, or, on the first start, new and written to a store
    /// created now (the reservation removed).
    ///
    /// # Errors
    ///
    /// The store's or the restore's.
    pub(super) async fn welcome(&mut self, id: ClientId) -> Result<RemoteClient, NetError> {
        if let Some(store) = &self.store {
            let client = restore(store, id).await?;
            store.save(&client)?;
            return Ok(client);
        }
        let (reservation, first) = self.first.take().ok_or_else(gone)?;
        // A client no server set up yet waits with its records: nothing
        // to retrain.
        let client = RemoteClient::restore(id, first.data.clone(), None, &[], BTreeSet::new())?;
        self.store = Some(reservation.fulfil(&first, &client)?);
        Ok(client)
    }

    /// The server refused the client for good before it admitted it:
    /// a first start's reservation is removed (the server bound nothing
    /// to it, or released it), leaving no file.
    pub(super) fn refused(&mut self) {
        if let Some((reservation, _)) = self.first.take() {
            reservation.abandon();
        }
    }
}

/// A holding with neither a store nor a first start: one whose store
/// could not be written after the server welcomed the client.
fn gone() -> NetError {
    NetError::Protocol("the client holds no store".into())
}

/// The client as its store keeps it, welcomed as `id`. Restoring
/// retrains: CPU work, off the runtime.
pub(super) async fn restore(store: &ClientStore, id: ClientId) -> Result<RemoteClient, NetError> {
    let path = store.path().to_path_buf();
    let (_, restored) = off_runtime((), move |()| {
        ClientStore::open(&path).and_then(|s| s.client(id))
    })
    .await;
    restored
}
