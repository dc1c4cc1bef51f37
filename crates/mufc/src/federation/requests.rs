//! Removal requests before any work: each checked against the clients,
//! merged per client with the pending ones, the policy's minimum checked,
//! and the report of a request that waits.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use seeding::{PointId, SeedingError};

use super::Federation;
use crate::{
    ClientId, DecodeKind, MufcError, MufcResult, RemovalOutcome, RemovalReport, RemovalRequest,
    ServerUpdate, StageTimes,
};

impl Federation {
    /// The number the next accepted request gets.
    pub(super) fn next_request_number(&self) -> u64 {
        self.applied_requests()
            .saturating_add(self.pending.len() as u64)
            .saturating_add(1)
    }

    /// The pending requests, then `extra`, each checked against the
    /// clients and merged per client.
    pub(crate) fn merged(
        &self,
        extra: Option<&RemovalRequest>,
    ) -> MufcResult<BTreeMap<ClientId, Loss>> {
        let mut merged = BTreeMap::new();
        for p in &self.pending {
            self.merge_into(&mut merged, &p.request)?;
        }
        if let Some(r) = extra {
            self.merge_into(&mut merged, r)?;
        }
        Ok(merged)
    }

    /// Checks `request` on its own, then merges it into `merged` (which is
    /// untouched on an error).
    fn merge_into(
        &self,
        merged: &mut BTreeMap<ClientId, Loss>,
        request: &RemovalRequest,
    ) -> MufcResult<()> {
        if request.is_empty() {
            return Err(MufcError::EmptyRequest);
        }
        let mut named = HashSet::new();
        for &c in request.clients_removed() {
            self.position(c)?;
            if !named.insert(c) {
                return Err(MufcError::RepeatedClient(c));
            }
        }
        for (c, ids) in request.point_entries() {
            let pos = self.position(*c)?;
            if !named.insert(*c) {
                return Err(MufcError::RepeatedClient(*c));
            }
            if ids.is_empty() {
                return Err(MufcError::EmptyRequest);
            }
            self.clients[pos]
                .data()
                .positions_of(ids)
                .map_err(|e| match e {
                    SeedingError::UnknownId(id) => MufcError::UnknownPoint { client: *c, id },
                    SeedingError::RepeatedId(id) => MufcError::RepeatedPoint { client: *c, id },
                    other => other.into(),
                })?;
        }
        // Against the pending requests: every conflict before any change.
        for &c in request.clients_removed() {
            if matches!(merged.get(&c), Some(Loss::Whole)) {
                return Err(MufcError::AlreadyPending {
                    client: c,
                    id: None,
                });
            }
        }
        for (c, ids) in request.point_entries() {
            match merged.get(c) {
                Some(Loss::Whole) => {
                    return Err(MufcError::AlreadyPending {
                        client: *c,
                        id: ids.first().copied(),
                    });
                }
                Some(Loss::Points(prev)) => {
                    let prev: HashSet<PointId> = prev.iter().copied().collect();
                    if let Some(&id) = ids.iter().find(|id| prev.contains(id)) {
                        return Err(MufcError::AlreadyPending {
                            client: *c,
                            id: Some(id),
                        });
                    }
                }
                None => {}
            }
        }
        for &c in request.clients_removed() {
            // A whole removal takes in the client's pending points.
            merged.insert(c, Loss::Whole);
        }
        for (c, ids) in request.point_entries() {
            match merged.entry(*c).or_insert_with(|| Loss::Points(Vec::new())) {
                Loss::Points(prev) => prev.extend_from_slice(ids),
                Loss::Whole => {}
            }
        }
        Ok(())
    }

    /// Refuses a removal that would leave fewer clients than the policy's
    /// minimum aggregate, but some (docs/threat-model.md P4).
    pub(super) fn check_remaining(&self, merged: &BTreeMap<ClientId, Loss>) -> MufcResult<()> {
        let gone: std::collections::BTreeSet<ClientId> = merged
            .iter()
            .filter(|(c, loss)| match loss {
                Loss::Whole => true,
                Loss::Points(ids) => self
                    .client(**c)
                    .is_some_and(|x| ids.len() == x.data().len()),
            })
            .map(|(c, _)| *c)
            .collect();
        if let Some(layout) = self.layout() {
            layout.check_sizes(self.config.min_clients(), &gone)?;
        }
        let left = self.clients.len().saturating_sub(gone.len());
        let min_clients = self.config.min_clients();
        if left > 0 && left < min_clients {
            return Err(MufcError::TooFewClients {
                clients: left,
                min_clients,
            });
        }
        Ok(())
    }

    /// The report of a request kept pending: nothing changed.
    pub(super) fn deferred_report(
        &self,
        number: u64,
        pending_clients: Vec<ClientId>,
        needed: usize,
        wall: Instant,
    ) -> RemovalReport {
        RemovalReport {
            request: number,
            outcome: RemovalOutcome::Deferred {
                pending_clients,
                needed,
            },
            requests: Vec::new(),
            removed_points: 0,
            removed_clients: Vec::new(),
            reseeded: Vec::new(),
            updated_clients: Vec::new(),
            decode: DecodeKind::Skipped,
            server: ServerUpdate::Unchanged,
            times: StageTimes {
                wall: wall.elapsed(),
                ..StageTimes::default()
            },
            bytes_per_client: 0,
            nonzero_bins: self.server.nonzero_bins(),
            included: self.last_included().to_vec(),
            dropped: Vec::new(),
            lone_update: false,
            privacy_warning: None,
        }
    }
}

/// What a client loses in the merged removal requests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Loss {
    /// The whole client.
    Whole,
    /// These points (distinct; all of them removes the client whole).
    Points(Vec<PointId>),
}
