//! What an open store holds in memory ([`State`]): one consistent
//! snapshot of the file, read by `load.rs` and changed by requests.

use std::collections::{BTreeMap, HashMap};

use seeding::{BoxTransform, PointId};

use crate::digest::RecordsDigest;
use crate::record::{ClientName, RecordId};
use crate::tombstone::Secret;
use mufc::{ClientId, Federation};

/// What a store holds in memory: one consistent snapshot of the file.
#[derive(Debug)]
pub(crate) struct State {
    pub(crate) fed: Federation,
    pub(crate) records: HashMap<RecordId, (ClientId, PointId)>,
    /// Every client the store held, by number (those removed too: the
    /// audit and the errors name them).
    pub(crate) names: BTreeMap<ClientId, ClientName>,
    pub(crate) by_name: HashMap<ClientName, ClientId>,
    pub(crate) model_version: u64,
    /// The map from the data's coordinates to the model's, if training
    /// used one.
    pub(crate) transform: Option<BoxTransform>,
    /// The last journal entry: another connection's request adds one.
    pub(crate) last_entry: i64,
    /// SQLite's schema cookie when the state was read: a `fit` that
    /// replaces the store rewrites every table (and may leave the journal
    /// as empty as it was), which changes it.
    pub(crate) schema: i64,
    pub(crate) secret: Secret,
    /// How long a model update may wait, in seconds.
    pub(crate) max_defer: u64,
    /// The digest of `records` ([`RecordsDigest`]).
    pub(crate) records_digest: RecordsDigest,
}

impl State {
    /// What tells whether another connection wrote since this state was
    /// read ([`crate::load::mark`]).
    pub(crate) fn mark(&self) -> (i64, i64) {
        (self.schema, self.last_entry)
    }

    /// Client `id`'s name (its number, for a store without names).
    pub(crate) fn name(&self, id: ClientId) -> ClientName {
        self.names.get(&id).cloned().unwrap_or_else(|| {
            ClientName::new(&id.to_string()).unwrap_or_else(|_| unreachable!("a number is a name"))
        })
    }

    /// The names of `ids`, in their order.
    pub(crate) fn names_of(&self, ids: &[ClientId]) -> Vec<ClientName> {
        ids.iter().map(|c| self.name(*c)).collect()
    }
}
