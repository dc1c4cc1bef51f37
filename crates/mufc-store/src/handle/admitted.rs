//! The records [`Store::fit`](super::Store::fit) starts from: each
//! client's records checked and sorted into the new store's, the records
//! the replaced store had forgotten left out.

use std::collections::{BTreeMap, HashMap, HashSet};

use seeding::{Dataset, PointId};

use crate::error::StoreError;
use crate::record::{ClientName, RecordId};
use crate::reports::Forgotten;
use crate::tombstone::{Buried, Inheritance, Secret};
use crate::types::ClientRecords;
use mufc::ClientId;

/// The clients' records sorted into the new store's: each record's
/// client and point, the clients' names and data, and the records left
/// out because the replaced store had forgotten them.
pub(super) struct Admitted {
    pub(super) records: HashMap<RecordId, (ClientId, PointId)>,
    pub(super) names: BTreeMap<ClientId, ClientName>,
    pub(super) data: Vec<(ClientId, Dataset)>,
    pub(super) skipped: Vec<Forgotten>,
}

impl Admitted {
    /// Sorts `clients`, numbered `0..` in the order given; the records
    /// `inherited`'s tombstones bury are skipped, with what the
    /// tombstones know of them.
    pub(super) fn of(
        clients: Vec<ClientRecords>,
        secret: &Secret,
        inherited: Option<&Inheritance>,
    ) -> Result<Self, StoreError> {
        let buried: HashSet<[u8; 32]> = inherited
            .iter()
            .flat_map(|i| i.tombstones.iter().map(|t| t.tag))
            .collect();
        let mut admitted = Self {
            records: HashMap::new(),
            names: BTreeMap::new(),
            data: Vec::with_capacity(clients.len()),
            skipped: Vec::new(),
        };
        let mut by_name = HashMap::new();
        for (c, l) in clients.into_iter().zip(0u64..) {
            let (name, d, recs) = c.into_parts();
            let id = ClientId(l);
            if by_name.insert(name.clone(), id).is_some() {
                return Err(StoreError::DuplicateClient(name));
            }
            let d = admitted.client(id, d, &recs, secret, &buried)?;
            // A client all of whose records were forgotten holds nothing:
            // it is not in the new store.
            if !d.is_empty() {
                admitted.names.insert(id, name);
                admitted.data.push((id, d));
            }
        }
        if !admitted.skipped.is_empty()
            && let Some(i) = inherited
        {
            admitted.date_skipped(secret, i);
        }
        Ok(admitted)
    }

    /// Client `id`'s records `recs` (one per point of `d`), each kept or,
    /// when buried, skipped; returns `d` without the skipped points.
    fn client(
        &mut self,
        id: ClientId,
        mut d: Dataset,
        recs: &[RecordId],
        secret: &Secret,
        buried: &HashSet<[u8; 32]>,
    ) -> Result<Dataset, StoreError> {
        let mut drop = Vec::new();
        for (&point, r) in d.ids().iter().zip(recs) {
            if buried.contains(&secret.tag(r)) {
                self.skipped.push(Forgotten {
                    id: r.clone(),
                    request: 0,
                    erased_at: 0,
                    client: None,
                    applied: None,
                    inherited: true,
                });
                drop.push(point);
                continue;
            }
            if self.records.insert(r.clone(), (id, point)).is_some() {
                return Err(StoreError::DuplicateRecord(r.clone()));
            }
        }
        if !drop.is_empty() {
            d = d.without(&drop).map_err(mufc::MufcError::from)?;
        }
        Ok(d)
    }

    /// Fills in what the tombstones know of the skipped records.
    fn date_skipped(&mut self, secret: &Secret, inherited: &Inheritance) {
        let by_tag: HashMap<[u8; 32], &Buried> =
            inherited.tombstones.iter().map(|t| (t.tag, t)).collect();
        for f in &mut self.skipped {
            if let Some(b) = by_tag.get(&secret.tag(&f.id)) {
                f.request = u64::try_from(b.request).unwrap_or(0);
                f.erased_at = u64::try_from(b.erased).unwrap_or(0);
            }
        }
    }
}
