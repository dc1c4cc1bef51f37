//! What an open store holds in memory ([`State`]): one consistent
//! snapshot of the file, read by `load.rs` and changed by requests.

use std::collections::{BTreeMap, HashMap};

use seeding::{BoxTransform, PointId};

use super::record::{ClientName, RecordId};
use super::tombstone::Secret;
use crate::{ClientId, Federation};

/// What a store holds in memory: one consistent snapshot of the file.
#[derive(Debug)]
pub(super) struct State {
    pub(super) fed: Federation,
    pub(super) records: HashMap<RecordId, (ClientId, PointId)>,
    /// Every client the store held, by number (those removed too: the
    /// audit and the errors name them).
    pub(super) names: BTreeMap<ClientId, ClientName>,
    pub(super) by_name: HashMap<ClientName, ClientId>,
    pub(super) model_version: u64,
    /// The map from the data's coordinates to the model's, if training
    /// used one.
    pub(super) transform: Option<BoxTransform>,
    /// The last journal entry: another connection's request adds one.
    pub(super) last_entry: i64,
    pub(super) secret: Secret,
    /// How long a model update may wait, in seconds.
    pub(super) max_defer: u64,
}

impl State {
    /// Client `id`'s name (its number, for a store without names).
    pub(super) fn name(&self, id: ClientId) -> ClientName {
        self.names.get(&id).cloned().unwrap_or_else(|| {
            ClientName::new(&id.to_string()).unwrap_or_else(|_| unreachable!("a number is a name"))
        })
    }

    /// The names of `ids`, in their order.
    pub(super) fn names_of(&self, ids: &[ClientId]) -> Vec<ClientName> {
        ids.iter().map(|c| self.name(*c)).collect()
    }
}
