//! The additions the parties' driver serves (issue 29): records for
//! clients of the federation, checked whole, learned at once by the
//! clients they name, then served by the rounds a removal runs (the
//! lone-update policy holds them back the same way).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::{Duration, Instant};

use seeding::PointId;

use super::InProcess;
use crate::remote::client::Staged;
use crate::{
    AdditionRequest, ClientId, ConfigParam, MufcError, MufcResult, PendingAddition, RemovalReport,
};

/// A client an addition names, having learned: its points and
/// clustering after (staged), whether its seeding changed, and its own
/// time.
struct Learned {
    staged: Staged,
    reseeded: bool,
    own: Duration,
}

impl InProcess {
    /// Serves an addition (records that arrive, the counterpart of
    /// [`Self::remove`]) and reports it as a removal is reported: every
    /// client it names learns its records at once (the insertion
    /// counterpart of Algorithm 3 with seeding, an exact update with full
    /// K-means), then every group whose changed clients are enough for the
    /// lone-update policy runs one round, as for a removal: the server
    /// decodes the change of the sum of the updated clients' histograms
    /// (docs/threat-model.md §2.2). The report's `removed_points` counts
    /// the points removals erased in the round (none for this request);
    /// its `reseeded` names the clients whose seeding the records changed.
    ///
    /// # Errors
    ///
    /// With nothing changed: [`MufcError::EmptyRequest`],
    /// [`MufcError::UnknownClient`] (not in the roster, or left whole),
    /// [`MufcError::RepeatedClient`], [`MufcError::AlreadyPending`] (a
    /// client whose whole removal waits, or an id a pending removal
    /// names: it names that point until its round runs),
    /// [`MufcError::HeldPoint`],
    /// [`MufcError::DimensionMismatch`], [`MufcError::OutsideBox`], and
    /// [`MufcError::InvalidConfig`] for
    /// [`ConfigParam::MaxPoints`] when the federation would hold more
    /// points than its sums were sized for at training. A round's errors
    /// come with the request accepted, as for a removal.
    pub fn add(&mut self, request: &AdditionRequest) -> MufcResult<RemovalReport> {
        let wall = Instant::now();
        let learned = self.learned(request)?;
        self.last.clear();
        self.requests += 1;
        let number = self.requests;
        let named: BTreeSet<ClientId> = learned.keys().copied().collect();
        let mut own = BTreeMap::new();
        for (id, l) in learned {
            let w = self.waiting.entry(id).or_default();
            w.reseeded |= l.reseeded;
            own.insert(id, l.own);
            let at = self.at(id)?;
            if let Some(client) = self.clients.get_mut(at) {
                client.take(l.staged);
            }
        }
        let points = (request.entries().iter())
            .map(|(c, d)| (*c, d.ids().to_vec()))
            .collect();
        self.additions.push(PendingAddition { number, points });
        if let Some(w) = &self.withdrawn {
            return Ok(self.serve_withdrawn(number, (w.clone(), false), wall, &own));
        }
        self.run_or_wait(number, &named, wall, &own)
    }

    /// The additions accepted whose rounds wait, oldest first, each
    /// restricted to the clients that still wait.
    pub fn pending_additions(&self) -> &[PendingAddition] {
        &self.additions
    }

    /// The requests of either kind whose rounds wait.
    pub(crate) fn pending_count(&self) -> u64 {
        (self.pending.len() as u64).saturating_add(self.additions.len() as u64)
    }

    /// What each client `request` names would be after learning its
    /// records, once the whole request is checked: no client changes
    /// here.
    fn learned(&self, request: &AdditionRequest) -> MufcResult<BTreeMap<ClientId, Learned>> {
        if request.is_empty() {
            return Err(MufcError::EmptyRequest);
        }
        let mut named = HashSet::new();
        let mut added = 0u128;
        for (c, records) in request.entries() {
            let client = self.client(*c)?;
            if !named.insert(*c) {
                return Err(MufcError::RepeatedClient(*c));
            }
            if client.data().is_empty() {
                // A client that left whole is gone (as for a removal); one
                // whose leave waits is a conflict.
                return Err(match self.waiting.get(c).is_some_and(|w| w.left) {
                    true => MufcError::AlreadyPending {
                        client: *c,
                        id: None,
                    },
                    false => MufcError::UnknownClient(*c),
                });
            }
            // An id a pending removal erased names that point until its
            // round runs (a saved federation checks that it is gone).
            let erased = |id: &PointId| {
                (self.pending.iter())
                    .flat_map(|p| p.request.point_entries())
                    .any(|(x, ids)| x == c && ids.contains(id))
            };
            if let Some(&id) = records.ids().iter().find(|id| erased(id)) {
                return Err(MufcError::AlreadyPending {
                    client: *c,
                    id: Some(id),
                });
            }
            added = added.saturating_add(u128::from(records.total_weight()));
        }
        self.check_room(added)?;
        (request.entries().iter())
            .map(|(c, records)| {
                let start = Instant::now();
                let (staged, reseeded) = self.client(*c)?.learning(records)?;
                let own = start.elapsed();
                Ok((
                    *c,
                    Learned {
                        staged,
                        reseeded,
                        own,
                    },
                ))
            })
            .collect()
    }

    /// Checks that the federation's sums, sized at training for at most
    /// `max_points` points, hold `added` more: a round past it would fail
    /// at the server once every client had learned.
    fn check_room(&self, added: u128) -> MufcResult<()> {
        let Some(max) = self.server.setup().config().max_points() else {
            return Ok(());
        };
        let held = (self.clients.iter()).fold(0u128, |n, c| {
            n.saturating_add(u128::from(c.data().total_weight()))
        });
        let after = held.saturating_add(added);
        if after > u128::from(max) {
            return Err(crate::error::config_error(
                ConfigParam::MaxPoints,
                format!(
                    "the federation would hold {after} points, beyond the bound {max} it was \
                     trained with (train it with a larger max_points to leave room for records \
                     that arrive); nothing changed"
                ),
            ));
        }
        Ok(())
    }
}
