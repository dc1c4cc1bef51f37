//! Removal requests before any round: each checked against the clients
//! and the pending requests, the clients' side computed on copies
//! ([`Staged`]), the policy's minimum checked, and what the aggregate
//! still holds of the clients whose messages wait.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use seeding::{Dataset, PointId, SeedingError};

use super::Federation;
use super::unsent::Unsent;
use crate::{
    Client, ClientId, MufcError, MufcResult, PendingRequest, RemovalOutcome, RemovalReport,
    RemovalRequest, par,
};

/// One client's side of a request, computed on a copy before anything
/// changes.
pub(super) struct Staged {
    pub(super) id: ClientId,
    /// Its position in the federation's clients.
    pub(super) pos: usize,
    /// The client without the points (`None`: it leaves whole).
    pub(super) next: Option<Client>,
    /// The points it loses.
    pub(super) points: usize,
    /// Whether it reseeded.
    pub(super) reseeded: bool,
    /// Its own unlearning time.
    pub(super) own: Duration,
}

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

impl Federation {
    /// The number the next accepted request gets: one past the last
    /// accepted, which is either pending or the number the last report
    /// answers (a request applied in parts, group by group, is in the
    /// reports of several rounds: a count of them would skip numbers).
    pub(super) fn next_request_number(&self) -> u64 {
        let answered = self.history.last().map_or(0, |r| {
            (r.requests.iter().copied()).fold(r.request, u64::max)
        });
        let pending = self.pending.iter().map(|p| p.number).max().unwrap_or(0);
        // A store that kept no report still counts the requests applied.
        let counted = match self.history.last() {
            Some(_) => 0,
            None => self.applied_requests(),
        };
        answered.max(pending).max(counted).saturating_add(1)
    }

    /// Whether client `c` left with a request whose round waits.
    fn left_unsent(&self, c: ClientId) -> bool {
        self.unsent.get(&c).is_some_and(|u| u.left)
    }

    /// Checks `request` against the clients and the pending requests
    /// ([`check_request`]); the first error found, nothing changed.
    pub(super) fn check_request(&self, request: &RemovalRequest) -> MufcResult<()> {
        check_request(
            request,
            &self.pending,
            |c| {
                if let Some(client) = self.client(c) {
                    Ok(Some(client.data()))
                } else if self.left_unsent(c) {
                    // A client that left with a pending request has no
                    // point to look for: naming it again is a conflict.
                    Ok(None)
                } else {
                    Err(MufcError::UnknownClient(c))
                }
            },
            |c| self.left_unsent(c),
        )
    }

    /// The clients' side of a checked `request`, on copies: each client
    /// named unlearns its points (Algorithm 3 for seeding, the exact
    /// update for full K-means), in parallel; a client named whole, or
    /// all of whose points are named, leaves.
    pub(super) fn stage(&self, request: &RemovalRequest) -> MufcResult<Vec<Staged>> {
        let mut staged = Vec::new();
        let mut jobs: Vec<(usize, &[PointId])> = Vec::new();
        for &c in request.clients_removed() {
            // A client that left already has nothing more to lose.
            if let Ok(pos) = self.position(c) {
                let points = self.clients[pos].data().len();
                staged.push(Staged {
                    id: c,
                    pos,
                    next: None,
                    points,
                    reseeded: false,
                    own: Duration::ZERO,
                });
            }
        }
        for (c, ids) in request.point_entries() {
            let pos = self.position(*c)?;
            if ids.len() == self.clients[pos].data().len() {
                staged.push(Staged {
                    id: *c,
                    pos,
                    next: None,
                    points: ids.len(),
                    reseeded: false,
                    own: Duration::ZERO,
                });
            } else {
                jobs.push((pos, ids.as_slice()));
            }
        }
        let quantizer = self.quantizer.as_ref();
        let clients = &self.clients;
        let unlearned = par::map(self.config.parallel(), &jobs, |_, (pos, ids)| {
            let start = Instant::now();
            let (c, reseeded) = clients[*pos].unlearned(ids, quantizer)?;
            Ok::<_, MufcError>((c, reseeded, start.elapsed()))
        })?;
        for ((pos, ids), (next, reseeded, own)) in jobs.into_iter().zip(unlearned) {
            staged.push(Staged {
                id: self.clients[pos].id(),
                pos,
                next: Some(next),
                points: ids.len(),
                reseeded,
                own,
            });
        }
        staged.sort_unstable_by_key(|s| s.pos);
        Ok(staged)
    }

    /// The clients whose messages would wait after `staged`: the waiting
    /// ones and those `staged` changes (each keeps the histogram of its
    /// last message, the first time it changes).
    pub(super) fn unsent_with(&self, staged: &[Staged]) -> BTreeMap<ClientId, Unsent> {
        let mut unsent = self.unsent.clone();
        for s in staged {
            let u = unsent.entry(s.id).or_insert_with(|| Unsent {
                sent: self.clients[s.pos].histogram().to_vec(),
                points: 0,
                left: false,
                reseeded: false,
            });
            u.points = u.points.saturating_add(s.points as u64);
            u.left |= s.next.is_none();
            u.reseeded |= s.reseeded;
        }
        unsent
    }

    /// Refuses a removal that would leave fewer clients than the policy's
    /// minimum aggregate, but some (docs/threat-model.md P4): the clients
    /// that left while their round waits, and those `staged` removes.
    pub(super) fn check_remaining(&self, staged: &[Staged]) -> MufcResult<()> {
        let leaving: BTreeSet<ClientId> = staged
            .iter()
            .filter(|s| s.next.is_none())
            .map(|s| s.id)
            .collect();
        let gone: BTreeSet<ClientId> = (self.unsent.iter())
            .filter(|(_, u)| u.left)
            .map(|(c, _)| *c)
            .chain(leaving.iter().copied())
            .collect();
        let remaining = self.clients.len().saturating_sub(leaving.len());
        super::minimum::check_remaining(self.layout(), self.config.min_clients(), &gone, remaining)
    }

    /// Commits the clients' side of a request: the unlearned copies
    /// replace the clients, those leaving leave (their points are gone
    /// from the federation; the aggregate's share of them is in
    /// [`Self::unsent`] until a round).
    pub(super) fn commit_staged(&mut self, staged: Vec<Staged>) {
        let mut gone = Vec::new();
        for s in staged {
            match s.next {
                Some(c) => self.clients[s.pos] = c,
                None => gone.push(s.pos),
            }
        }
        gone.sort_unstable();
        for &p in gone.iter().rev() {
            self.clients.remove(p);
        }
    }

    /// The report of a request kept pending: its points are erased from
    /// the clients, the model is unchanged.
    pub(super) fn deferred_report(
        &self,
        number: u64,
        pending_clients: Vec<ClientId>,
        needed: usize,
        wall: Instant,
        own: &[Duration],
    ) -> RemovalReport {
        let outcome = RemovalOutcome::Deferred {
            pending_clients,
            needed,
        };
        RemovalReport {
            nonzero_bins: self.server.nonzero_bins(),
            included: self.last_included().to_vec(),
            ..RemovalReport::without_round(number, outcome, super::request_times(own, wall))
        }
    }
}

/// Checks, on loading, that the waiting clients and the pending
/// requests agree: every client a pending request names waits, every
/// waiting client is named, a client that left is gone, and no point
/// a pending request names is still held (it was erased when the
/// request was accepted).
pub(crate) fn check_unsent(
    pending: &[PendingRequest],
    unsent: &BTreeMap<ClientId, Unsent>,
    clients: &[Client],
) -> Result<(), String> {
    let client = |c: ClientId| {
        (clients.binary_search_by_key(&c, Client::id).ok()).and_then(|p| clients.get(p))
    };
    let named: BTreeSet<ClientId> = pending.iter().flat_map(|p| p.request.named()).collect();
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
    Ok(())
}
