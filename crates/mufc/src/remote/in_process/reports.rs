//! The reports of the requests the parties' driver serves: of the rounds
//! that applied some, of a request that waits, of one that finds or makes
//! the model withdrawn, and who took part.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::{InProcess, PartyCosts, Waiting, add_party_costs};
use crate::state::{privacy_warning, request_times};
use crate::{
    Channel, ClientId, DecodeKind, Involvement, NodeId, RemovalOutcome, RemovalReport,
    ServerUpdate, StageTimes, Withdrawal,
};

impl InProcess {
    /// Who took part in the rounds of the last request or flush, as
    /// [`Federation::last_involvement`](crate::Federation::last_involvement)
    /// counts them: the clients that joined a round, the messages and
    /// bytes they sent, the groups that ran one (none when flat), and the
    /// models updated (the root's, and with groups those on the paths from
    /// the groups that ran). `None` when the last request ran no round.
    pub fn last_involvement(&self) -> Option<Involvement> {
        if self.last.is_empty() {
            return None;
        }
        let groups: Vec<usize> = (self.last.iter()).filter_map(|r| r.report.group).collect();
        let nodes = match self.server.setup().layout() {
            Some(layout) => (groups.iter())
                .flat_map(|&g| layout.path(NodeId(g)))
                .collect::<BTreeSet<NodeId>>()
                .len(),
            None => 1,
        };
        let sum = |f: fn(&PartyCosts) -> usize| self.last.iter().map(|r| f(&r.costs)).sum();
        Some(Involvement {
            clients: sum(|c| c.joins.len()),
            messages: sum(|c| c.messages),
            groups,
            nodes,
            bytes: sum(|c| usize::try_from(c.bytes_up).unwrap_or(usize::MAX)),
        })
    }

    /// The report of the rounds [`Self::last_rounds`], which applied the
    /// requests `numbers` (answering `number`) and changed the clients
    /// `done`, in groups `parts`.
    pub(super) fn applied(
        &mut self,
        number: u64,
        numbers: Vec<u64>,
        parts: &[Vec<ClientId>],
        done: &BTreeMap<ClientId, Waiting>,
        (wall, own): (Instant, &BTreeMap<ClientId, Duration>),
    ) -> RemovalReport {
        let config = self.server.setup().config();
        let needed = config.min_updating_clients();
        let plain = config.channel() == &Channel::Plain;
        let mut times = StageTimes::default();
        let mut dropped = Vec::new();
        for r in &self.last {
            times.sum += r.report.protocol;
            times.decode += r.report.decode_time;
            times.server += r.report.server_time;
            dropped.extend(r.report.dropped.iter().copied());
        }
        let own_of = |id: ClientId, _: &PartyCosts| own.get(&id).copied().unwrap_or_default();
        add_party_costs(&mut times, &self.last, own_of);
        times.wall = wall.elapsed();
        dropped.sort_by_key(|(c, _)| *c);
        let last = self.last.last();
        let bytes_per_client = last.map_or(0, |r| r.costs.bytes_per_member());
        let report = RemovalReport {
            request: number,
            outcome: RemovalOutcome::Applied,
            requests: numbers,
            removed_points: points_of(done),
            removed_clients: clients_where(done, |w| w.left),
            reseeded: clients_where(done, |w| w.reseeded),
            updated_clients: done.keys().copied().collect(),
            decode: last.map_or(DecodeKind::Skipped, |r| r.report.decode),
            server: last.map_or(ServerUpdate::Unchanged, |r| r.report.update.clone()),
            times,
            bytes_per_client,
            nonzero_bins: self.server.server().nonzero_bins(),
            included: self.model_clients(),
            dropped,
            lone_update: parts.iter().any(|p| p.len() == 1),
            // The plain mode shows the server every message: no round
            // hides more than another.
            privacy_warning: (!plain)
                .then(|| parts.iter().find_map(|p| privacy_warning(p, needed)))
                .flatten(),
        };
        self.history.push(report.clone());
        report
    }

    /// The report of request `number`, which waits: its points are
    /// forgotten, the model is unchanged.
    pub(super) fn deferred(
        &self,
        number: u64,
        wall: Instant,
        own: &BTreeMap<ClientId, Duration>,
    ) -> RemovalReport {
        let outcome = RemovalOutcome::Deferred {
            pending_clients: self.waiting(),
            needed: self.server.setup().config().min_updating_clients(),
        };
        RemovalReport {
            nonzero_bins: self.server.server().nonzero_bins(),
            included: self.model_clients(),
            ..RemovalReport::without_round(number, outcome, times_of(own, wall))
        }
    }

    /// The report of request `number` once the model is withdrawn (by
    /// this request when `withdrawal` says so): every pending request is
    /// covered, and no round runs again.
    pub(super) fn serve_withdrawn(
        &mut self,
        number: u64,
        (w, now): (Withdrawal, bool),
        wall: Instant,
        own: &BTreeMap<ClientId, Duration>,
    ) -> RemovalReport {
        let waited = std::mem::take(&mut self.waiting);
        let removals = std::mem::take(&mut self.pending).into_iter();
        let additions = std::mem::take(&mut self.additions).into_iter();
        let mut requests: Vec<u64> = (removals.map(|p| p.number))
            .chain(additions.map(|a| a.number))
            .collect();
        requests.sort_unstable();
        let server = if now {
            self.server.withdraw(w.clone());
            self.withdrawn = Some(w.clone());
            ServerUpdate::Cleared
        } else {
            ServerUpdate::Unchanged
        };
        let report = RemovalReport {
            requests,
            removed_points: points_of(&waited),
            removed_clients: clients_where(&waited, |w| w.left),
            reseeded: clients_where(&waited, |w| w.reseeded),
            updated_clients: clients_where(&waited, |w| !w.left),
            server,
            ..RemovalReport::without_round(
                number,
                RemovalOutcome::Withdrawn(w),
                times_of(own, wall),
            )
        };
        self.history.push(report.clone());
        report
    }

    /// The clients whose data the model holds, in id order: those the
    /// last rounds included, but a client whose leave a round applied (it
    /// sent its last change there, and holds nothing more).
    pub(super) fn model_clients(&self) -> Vec<ClientId> {
        let gone = |c: ClientId| !self.waiting.contains_key(&c) && self.has_left(c);
        let included = self.server.fit_report().map(|r| r.included.iter());
        (included.into_iter().flatten().copied())
            .filter(|&c| !gone(c))
            .collect()
    }

    /// Whether client `c` holds no point: it left whole.
    pub(super) fn has_left(&self, c: ClientId) -> bool {
        self.client(c).is_ok_and(|c| c.data().is_empty())
    }
}

/// The points the clients `waited` forgot, in all.
fn points_of(waited: &BTreeMap<ClientId, Waiting>) -> usize {
    let points = waited
        .values()
        .fold(0u64, |n, w| n.saturating_add(w.points));
    usize::try_from(points).unwrap_or(usize::MAX)
}

/// The clients of `waited` that `f` accepts, in id order.
fn clients_where(
    waited: &BTreeMap<ClientId, Waiting>,
    f: impl Fn(&Waiting) -> bool,
) -> Vec<ClientId> {
    (waited.iter().filter(|(_, w)| f(w)))
        .map(|(c, _)| *c)
        .collect()
}

/// The times of a request that ran no round: its clients' own
/// unlearning and the wall time since `wall`.
fn times_of(own: &BTreeMap<ClientId, Duration>, wall: Instant) -> StageTimes {
    request_times(&own.values().copied().collect::<Vec<_>>(), wall)
}
