//! Removal requests before any round: each checked against the clients
//! and the pending requests; on loading, the pending requests against
//! what the aggregate still holds of the clients whose messages wait.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use seeding::{Dataset, PointId, SeedingError};

use super::unsent::Unsent;
use crate::{
    Client, ClientId, MufcError, MufcResult, PendingAddition, PendingRequest, RemovalRequest,
};

/// Checks the names of `request` against the clients: every client is
/// known to `data_of` (which gives its points, or `None` for a client with
/// nothing left to look for) and named once, and every point named is the
/// client's, once, or already `erased` (a conflict the caller checks). The
/// first error found.
pub(crate) fn check_names<'a, 'b>(
    request: &RemovalRequest,
    data_of: impl Fn(ClientId) -> MufcResult<Option<&'a Dataset>>,
    erased: impl Fn(ClientId) -> Option<&'b HashSet<PointId>>,
) -> MufcResult<()> {
    if request.is_empty() {
        return Err(MufcError::EmptyRequest);
    }
    let mut named = HashSet::new();
    for &c in request.clients_removed() {
        data_of(c)?;
        if !named.insert(c) {
            return Err(MufcError::RepeatedClient(c));
        }
    }
    for (c, ids) in request.point_entries() {
        let data = data_of(*c)?;
        if !named.insert(*c) {
            return Err(MufcError::RepeatedClient(*c));
        }
        if ids.is_empty() {
            return Err(MufcError::EmptyRequest);
        }
        // A point erased already is a conflict, not an unknown point.
        let earlier = erased(*c);
        let rest: Vec<PointId> = ids
            .iter()
            .copied()
            .filter(|id| !earlier.is_some_and(|s| s.contains(id)))
            .collect();
        if let Some(data) = data {
            data.positions_of(&rest).map_err(|e| match e {
                SeedingError::UnknownId(id) => MufcError::UnknownPoint { client: *c, id },
                SeedingError::RepeatedId(id) => MufcError::RepeatedPoint { client: *c, id },
                other => other.into(),
            })?;
        }
    }
    Ok(())
}

/// The points and whole clients the pending requests name.
#[derive(Default)]
struct PendingNames {
    whole: BTreeSet<ClientId>,
    points: HashMap<ClientId, HashSet<PointId>>,
}

impl PendingNames {
    fn of(pending: &[PendingRequest]) -> Self {
        let mut names = Self::default();
        for p in pending {
            names
                .whole
                .extend(p.request.clients_removed().iter().copied());
            for (c, ids) in p.request.point_entries() {
                names
                    .points
                    .entry(*c)
                    .or_default()
                    .extend(ids.iter().copied());
            }
        }
        names
    }
}

/// Checks `request` against the clients (every client and point named is
/// there, once: [`check_names`] with `data_of`), then against the
/// `pending` requests (nothing named twice; `left_waiting` tells a client
/// that left with a request whose round waits, which has no point to look
/// for and may not be named again); the first error found. The one check
/// of the federation in one process and of the parties' driver.
pub(crate) fn check_request<'a>(
    request: &RemovalRequest,
    pending: &[PendingRequest],
    data_of: impl Fn(ClientId) -> MufcResult<Option<&'a Dataset>>,
    left_waiting: impl Fn(ClientId) -> bool,
) -> MufcResult<()> {
    let names = PendingNames::of(pending);
    check_names(request, data_of, |c| names.points.get(&c))?;
    for &c in request.clients_removed() {
        if names.whole.contains(&c) || left_waiting(c) {
            return Err(MufcError::AlreadyPending {
                client: c,
                id: None,
            });
        }
    }
    for (c, ids) in request.point_entries() {
        if names.whole.contains(c) || left_waiting(*c) {
            return Err(MufcError::AlreadyPending {
                client: *c,
                id: ids.first().copied(),
            });
        }
        if let Some(earlier) = names.points.get(c)
            && let Some(&id) = ids.iter().find(|id| earlier.contains(id))
        {
            return Err(MufcError::AlreadyPending {
                client: *c,
                id: Some(id),
            });
        }
    }
    Ok(())
}

/// Checks, on loading, that the waiting clients and the pending
/// requests agree: every client a pending removal or addition names
/// waits, every waiting client is named, a client that left is gone, no
/// point a pending removal names is still held (it was erased when the
/// request was accepted), and every point a pending addition names is
/// held (learned when it was accepted) unless a pending removal names
/// it.
pub(crate) fn check_unsent(
    (pending, additions): (&[PendingRequest], &[PendingAddition]),
    unsent: &BTreeMap<ClientId, Unsent>,
    clients: &[Client],
) -> Result<(), String> {
    let client = |c: ClientId| {
        (clients.binary_search_by_key(&c, Client::id).ok()).and_then(|p| clients.get(p))
    };
    let named: BTreeSet<ClientId> = (pending.iter().flat_map(|p| p.request.named()))
        .chain(additions.iter().flat_map(PendingAddition::named))
        .collect();
    let waiting: BTreeSet<ClientId> = unsent.keys().copied().collect();
    if named != waiting {
        return Err(format!(
            "the pending requests name clients {named:?}, the waiting messages are of {waiting:?}"
        ));
    }
    for (c, u) in unsent {
        if u.left == client(*c).is_some() {
            return Err(format!(
                "client {c} {} the federation",
                if u.left {
                    "left, yet is still in"
                } else {
                    "waits to send, yet is not in"
                }
            ));
        }
    }
    for p in pending {
        for (c, ids) in p.request.point_entries() {
            if let Some(client) = client(*c)
                && let Some(id) = ids.iter().find(|id| client.data().contains(**id))
            {
                return Err(format!(
                    "request {} named point {id} of client {c}, which is still held",
                    p.number
                ));
            }
        }
    }
    let removed = PendingNames::of(pending);
    for a in additions {
        for (c, ids) in &a.points {
            let erased = |id: &PointId| {
                removed.whole.contains(c) || removed.points.get(c).is_some_and(|s| s.contains(id))
            };
            let held = |id: &PointId| client(*c).is_some_and(|k| k.data().contains(*id));
            if let Some(id) = ids.iter().find(|id| !held(id) && !erased(id)) {
                return Err(format!(
                    "request {} added point {id} to client {c}, which does not hold it",
                    a.number
                ));
            }
        }
    }
    Ok(())
}
