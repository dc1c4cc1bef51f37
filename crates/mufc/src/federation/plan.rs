//! The first stage of the removal pipeline (Algorithm 4): the plan of a
//! round, worked out before anything changes. Pure: from the clients,
//! the request's unlearned copies and what the aggregate still holds of
//! the clients whose round waited, it says who the clients are after the
//! request, whose message changes, who leaves, and what the report will
//! count. The rounds (`round.rs` for a flat federation, `tree.rs` with
//! groups), the commit and the report follow it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::Duration;

use num_bigint::BigUint;

use super::requests::Staged;
use super::unsent::Unsent;
use crate::aggregation::histogram_change;
use crate::{Client, ClientId};

/// The clients a removal round changed, for its report.
pub(super) struct Removed {
    /// Those whose message changed (removed ones included), in id order.
    pub(super) updated: Vec<ClientId>,
    /// Those removed whole.
    pub(super) gone: Vec<ClientId>,
    pub(super) reseeded: Vec<ClientId>,
    pub(super) removed_points: usize,
}

/// The plan of one removal round.
pub(super) struct Plan<'a> {
    /// The clients before the request, in id order.
    pub(super) before: &'a [Client],
    /// The clients after the request, in id order: the unlearned copies
    /// for those it names, those removed whole left out.
    pub(super) after: Vec<&'a Client>,
    /// Each one's own unlearning time (zero for a client not named).
    pub(super) own: Vec<Duration>,
    /// The clients whose message changes, those removed whole included,
    /// in id order.
    pub(super) updated: Vec<ClientId>,
    /// The clients removed whole.
    pub(super) gone: BTreeSet<ClientId>,
    /// The clients that reseeded.
    reseeded: Vec<ClientId>,
    /// The points the round removes.
    removed_points: usize,
}

impl<'a> Plan<'a> {
    /// The plan of the round of the clients `ready`: `clients` before the
    /// request, `staged` its unlearned copies, `unsent` what the aggregate
    /// holds of the clients whose round waits. `plain`: the clients send
    /// centroids (Algorithm 5), so a message changes with them, not with
    /// the histogram.
    pub(super) fn new(
        clients: &'a [Client],
        staged: &'a [Staged],
        ready: &BTreeSet<ClientId>,
        unsent: &BTreeMap<ClientId, Unsent>,
        plain: bool,
    ) -> Self {
        let (after, own) = after_request(clients, staged);
        let waited: Vec<(ClientId, &Unsent)> = ready
            .iter()
            .filter_map(|c| unsent.get(c).map(|u| (*c, u)))
            .collect();
        let mut plan = Self {
            before: clients,
            after,
            own,
            updated: Vec::new(),
            gone: waited
                .iter()
                .filter(|(_, u)| u.left)
                .map(|(c, _)| *c)
                .collect(),
            reseeded: waited
                .iter()
                .filter(|(_, u)| u.reseeded)
                .map(|(c, _)| *c)
                .collect(),
            removed_points: waited
                .iter()
                .map(|(_, u)| usize::try_from(u.points).unwrap_or(usize::MAX))
                .fold(0usize, usize::saturating_add),
        };
        plan.updated = waited
            .iter()
            .filter(|(c, u)| plan.changes_message(*c, u, plain))
            .map(|(c, _)| *c)
            .collect();
        plan
    }

    /// What the report counts of the round.
    pub(super) fn into_removed(self) -> Removed {
        Removed {
            updated: self.updated,
            gone: self.gone.into_iter().collect(),
            reseeded: self.reseeded,
            removed_points: self.removed_points,
        }
    }

    /// Client `id` after the request (`None`: removed whole).
    pub(super) fn current(&self, id: ClientId) -> Option<&'a Client> {
        self.after
            .binary_search_by_key(&id, |c| c.id())
            .ok()
            .map(|i| self.after[i])
    }

    /// Client `id` before the request.
    pub(super) fn previous(&self, id: ClientId) -> Option<&'a Client> {
        self.before
            .binary_search_by_key(&id, Client::id)
            .ok()
            .map(|p| &self.before[p])
    }

    /// Whether client `c`'s message changes: it left, or its message (the
    /// histogram; the centroids in the plain mode) differs from the last
    /// one sent, `waited` (what the aggregate holds of it). A client
    /// whose round does not wait changed nothing.
    fn changes_message(&self, c: ClientId, waited: &Unsent, plain: bool) -> bool {
        match self.current(c) {
            _ if waited.left => true,
            None => true,
            Some(now) if !plain => waited.sent.as_slice() != now.histogram(),
            Some(now) => self
                .previous(c)
                .is_none_or(|old| old.sizes() != now.sizes() || old.centroids() != now.centroids()),
        }
    }
}

/// The change of client `c`'s histogram since the message the aggregate
/// holds of it (empty for a client whose round does not wait).
pub(super) fn change_of(unsent: &BTreeMap<ClientId, Unsent>, c: &Client) -> Vec<(BigUint, i128)> {
    unsent
        .get(&c.id())
        .map(|u| histogram_change(&u.sent, c.histogram()))
        .unwrap_or_default()
}

/// The clients after the request, in id order, with their own unlearning
/// times: each staged client's copy (none for one removed whole), every
/// other client as it is.
fn after_request<'a>(
    clients: &'a [Client],
    staged: &'a [Staged],
) -> (Vec<&'a Client>, Vec<Duration>) {
    let by_pos: HashMap<usize, &Staged> = staged.iter().map(|s| (s.pos, s)).collect();
    let mut after = Vec::with_capacity(clients.len());
    let mut own = Vec::with_capacity(clients.len());
    for (p, c) in clients.iter().enumerate() {
        match by_pos.get(&p) {
            Some(s) => {
                if let Some(next) = &s.next {
                    after.push(next);
                    own.push(s.own);
                }
            }
            None => {
                after.push(c);
                own.push(Duration::ZERO);
            }
        }
    }
    (after, own)
}
