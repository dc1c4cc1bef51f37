//! Which store each client speaks from (issue 28, item 2): a client's
//! store has a random identity from its creation, sent in every Hello;
//! the server keeps the first identity each client name spoke with
//! (`<store>.clients`, sealed) and refuses any other.
//!
//! Why: a client's forgotten records leave its store, not its operator's
//! original files. A client started again from a new store, imported from
//! the same CSV, holds the forgotten records again, and its next round
//! would put them back in the model, silently. A new store under an old
//! name is therefore refused, with a message saying what happened; the
//! original store still joins.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::sealed::{Sealed, suffixed};
use crate::NetError;

const STORES: Sealed = Sealed {
    domain: b"mufc-server-client-stores/",
    version: 1,
    what: "the server's record of its clients' stores",
    advice: "it tells a client's own store from one imported again (which would \
             bring forgotten records back); restore the file",
};

/// The identity of a client's store (random, from its creation).
pub(super) type StoreIdentity = [u8; 32];

/// The stores the clients spoke from, kept next to the server's store.
#[derive(Debug)]
pub(super) struct ClientStores {
    path: PathBuf,
    known: BTreeMap<String, StoreIdentity>,
}

impl ClientStores {
    /// The record kept next to the server's store `store` (empty if there
    /// is no file yet).
    ///
    /// # Errors
    ///
    /// A file that cannot be read or is damaged: the server refuses to
    /// start rather than forget which store each client spoke from.
    pub(super) fn open(store: &Path) -> Result<Self, NetError> {
        let path = suffixed(store, ".clients");
        let known = STORES.read(&path)?.unwrap_or_default();
        Ok(Self { path, known })
    }

    /// Admits client `name` speaking from the store `identity`: the store
    /// it spoke from before, or, for its first session, any store (then
    /// kept, on disk, before this returns).
    ///
    /// # Errors
    ///
    /// Why the session is refused: another store than before, or the
    /// record could not be written. (The identity's length is
    /// `check_hello`'s to check.)
    pub(super) fn admit(&mut self, name: &str, identity: StoreIdentity) -> Result<(), String> {
        match self.known.get(name) {
            Some(known) if *known == identity => Ok(()),
            Some(_) => Err(format!(
                "client {name} speaks from another store than before: a store \
                 imported again holds the records the client forgot, and would \
                 bring them back into the model; run the client from its own store"
            )),
            None => {
                self.known.insert(name.to_string(), identity);
                STORES.write(&self.path, &self.known).map_err(|e| {
                    self.known.remove(name);
                    format!("the server could not record client {name}'s store: {e}")
                })
            }
        }
    }
}

impl ClientStores {
    /// Forgets which store client `name` spoke from: the server refused
    /// its registration before any round, so nothing of that store is in
    /// a model, and a store imported again (say, with the right
    /// dimension) may take its place.
    ///
    /// # Errors
    ///
    /// The record could not be written (the name stays bound).
    pub(super) fn release(&mut self, name: &str) -> Result<(), NetError> {
        if let Some(identity) = self.known.remove(name)
            && let Err(e) = STORES.write(&self.path, &self.known)
        {
            self.known.insert(name.to_string(), identity);
            return Err(e);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;

    #[test]
    fn a_name_keeps_its_first_store_across_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("server.db");
        let mut stores = ClientStores::open(&store).unwrap();
        stores.admit("a", [1; 32]).unwrap();
        stores.admit("b", [2; 32]).unwrap();
        stores.admit("a", [1; 32]).unwrap();
        let err = stores.admit("a", [2; 32]).unwrap_err();
        assert!(err.contains("another store than before"), "{err}");
        // A server started again reads what it kept.
        let mut again = ClientStores::open(&store).unwrap();
        again.admit("b", [2; 32]).unwrap();
        assert!(again.admit("a", [9; 32]).is_err());
        again.admit("c", [3; 32]).unwrap();
        // A released name takes another store, and keeps it.
        again.release("a").unwrap();
        again.admit("a", [9; 32]).unwrap();
        assert!(
            ClientStores::open(&store)
                .unwrap()
                .admit("a", [1; 32])
                .is_err()
        );
    }

    #[test]
    fn a_damaged_record_stops_the_server() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("server.db");
        ClientStores::open(&store)
            .unwrap()
            .admit("a", [1; 32])
            .unwrap();
        let path = suffixed(&store, ".clients");
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[3] ^= 4;
        std::fs::write(&path, &bytes).unwrap();
        let err = ClientStores::open(&store).unwrap_err().to_string();
        assert!(err.contains("clients' stores"), "{err}");
    }
}
