//! The minimum aggregate across processes (docs/threat-model.md P4): a
//! client says when it holds no point (a Forget that empties it, a Hello
//! with none), and counts out of every sum from then on, as a client that
//! left does. Once fewer than the minimum aggregate are left with points,
//! but some, the server withdraws its model before any round of theirs
//! runs, rather than decode a sum of fewer clients: kept in the store
//! first, then every client hears it, and every request made so far or
//! later is served by it.
//!
//! Why here and not when the client leaves: the leave is sent only once
//! its removal is served, and serving it by a round would decode the sum
//! of the clients left.

use std::collections::BTreeSet;

use mufc::remote::{Sends, ServerRound};
use mufc::{ClientId, Withdrawal};
use tokio::time::Instant;

use super::Coordinator;
use super::schedule::RETRY;
use crate::proto::Withdrawn;
use crate::proto::server_message::Body as ServerBody;
use crate::server::ServerEvent;

impl Coordinator {
    /// Notes whether client `id` holds no point, as it said (with a
    /// request, or when it connected).
    /// Kept in the store when it changes: a server restarted counts the
    /// client out before it connects again. A failure to write is said,
    /// and the server goes on with what it heard (the client says it
    /// again with its next Hello).
    pub(super) fn note_points(&mut self, id: ClientId, empty: bool) {
        let changed = if empty {
            self.emptied.insert(id)
        } else {
            self.emptied.remove(&id)
        };
        if !changed {
            return;
        }
        let ids: Vec<ClientId> = self.emptied.iter().copied().collect();
        if let Some(Err(e)) = self.store.as_mut().map(|s| s.set_emptied(&ids)) {
            let _ = self.report.send(ServerEvent::Rejected {
                id,
                reason: format!("whether it holds points could not be kept in the store: {e}"),
            });
        }
    }

    /// The clients out of every sum's count: those that hold no point,
    /// and those that left.
    pub(super) fn out_of_sums(&self) -> BTreeSet<ClientId> {
        let mut out = self.emptied.clone();
        out.extend(self.departed_ids());
        out
    }

    /// The withdrawal the clients out of the sums call for now, if any
    /// (the model trained, not yet withdrawn). Nothing to count while no
    /// client is out: the roster and the groups met the minimum at fit
    /// (this runs before every round, and at every event).
    pub(super) fn withdrawal_due(&self) -> Option<Withdrawal> {
        if self.emptied.is_empty() && self.departed.is_empty() {
            return None;
        }
        let remote = self.remote.as_ref().filter(|r| r.is_trained())?;
        // The request that emptied a client last, as its client numbered
        // it (0 when a client said so when it connected).
        let request = (self.queue.iter())
            .filter(|q| self.emptied.contains(&q.client))
            .map(|q| q.request)
            .max()
            .unwrap_or(0);
        remote.withdrawal_for(&self.out_of_sums(), request)
    }

    /// Why round `round` must not go on to unmask its sum
    /// (docs/threat-model.md P4): a withdrawal is due (the next round
    /// withdraws instead); or, in a round of whole histograms, the
    /// clients that answered its step and hold points are fewer than the
    /// minimum aggregate, but some (the others' inputs are empty: the sum
    /// would be theirs alone), as the protocol's own dropout check counts
    /// them.
    pub(super) fn too_few_with_points(&self, round: &ServerRound) -> Option<String> {
        if let Some(w) = self.withdrawal_due() {
            return Some(format!("too few clients with points are left: {w}"));
        }
        if round.spec().sends != Sends::Histograms {
            return None;
        }
        let min = self.remote.as_ref()?.setup().config().min_clients();
        let answered = round.answered();
        let with_points = (answered.iter())
            .filter(|c| !self.emptied.contains(c))
            .count();
        // Only clients that hold no point make this check's: dropouts
        // alone are the protocol's own check, which names them.
        let inflated = with_points < answered.len();
        (inflated && with_points > 0 && with_points < min).then(|| {
            format!(
                "{with_points} of the clients that answered hold points, fewer than the \
                 minimum aggregate of {min} (docs/threat-model.md P4): the sum is not unmasked"
            )
        })
    }

    /// Whether no round may run because the model is withdrawn: already,
    /// or now, or due but not yet written (the store refused; tried again
    /// after a pause). The requests waiting are served by the withdrawal:
    /// audited in the store with it, then told to their clients (at the
    /// withdrawal, to every client connected). Requests go on being
    /// queued as before (one entry a client), and the queue is served at
    /// most once a [`RETRY`]: a member that floods requests makes a few
    /// writes a second, not one a message.
    pub(super) fn withdrawn_or_due(&mut self) -> bool {
        let before = self.remote.as_ref().and_then(|r| r.withdrawal()).cloned();
        if before.is_none() && self.withdrawal_due().is_none() {
            return false;
        }
        if (before.is_some() && self.queue.is_empty()) || !self.may_retry() {
            return true;
        }
        let served: Vec<(ClientId, u64)> =
            (self.queue.iter()).map(|q| (q.client, q.request)).collect();
        let w = match self.write_withdrawal(&served) {
            Ok(w) => w,
            Err(e) => {
                self.retry_at = Some(Instant::now() + RETRY);
                let _ = self.report.send(ServerEvent::RoundFailed {
                    round: None,
                    group: None,
                    reason: format!("the model's withdrawal could not be written: {e}"),
                });
                return true;
            }
        };
        self.retry_at = Some(Instant::now() + RETRY);
        self.queue.clear();
        let told: Vec<ClientId> = match before {
            Some(_) => served.iter().map(|(c, _)| *c).collect(),
            None => {
                let _ = self.report.send(ServerEvent::Withdrawn(w.clone()));
                self.sessions.keys().copied().collect()
            }
        };
        for id in told {
            self.send(id, withdrawn(&w));
        }
        true
    }

    /// Serves the requests `served` by the model's withdrawal, withdrawing
    /// it first if it is not yet: in the store first, then in memory (a
    /// failure changes neither). The withdrawal.
    fn write_withdrawal(&mut self, served: &[(ClientId, u64)]) -> Result<Withdrawal, String> {
        let remote = self.remote.as_ref().ok_or("no federation")?;
        let (after, w) = match remote.withdrawal() {
            Some(w) => (None, w.clone()),
            None => {
                let request = self.withdrawal_due().map_or(0, |w| w.request);
                let mut after = remote.clone();
                let w = (after.withdraw_if_too_few(&self.out_of_sums(), request))
                    .ok_or("no withdrawal is due")?;
                (Some(after), w)
            }
        };
        let snapshot = (after.as_ref().unwrap_or(remote).snapshot()).map_err(|e| e.to_string())?;
        let store = self.store.as_mut().ok_or("the server has no store yet")?;
        (store.withdraw_serving(snapshot, served)).map_err(|e| e.to_string())?;
        if let Some(after) = after {
            self.remote = Some(after);
        }
        Ok(w)
    }
}

impl Coordinator {
    /// Merges a group left with fewer clients holding points than the
    /// minimum aggregate into the smallest group that meets it
    /// ([`RemoteServer::merge_due`](mufc::remote::RemoteServer::merge_due)),
    /// instead of withdrawing the model: once the lone-update policy lets
    /// the group that takes them change by that many clients (the moved
    /// clients enter its sum as new ones do, with its own waiting
    /// requests), or the oldest request of the group below waited the
    /// policy's deadline. Kept in the store before any client hears of
    /// it; the group that takes them then runs a whole round, and the
    /// group below is emptied as it commits.
    pub(super) fn merge_if_due(&mut self) {
        let out = self.out_of_sums();
        let Some(remote) = self.remote.as_ref() else {
            return;
        };
        let Some((h, m)) = remote.merge_due(&out) else {
            return;
        };
        let groups = remote.groups();
        let moved: Vec<ClientId> = (groups[h].iter())
            .filter(|c| !out.contains(c))
            .copied()
            .collect();
        let oldest = (self.queue.iter())
            .filter(|q| groups[h].contains(&q.client))
            .map(|q| q.since)
            .min();
        let waits = |c: &ClientId| self.queue.iter().any(|q| q.client == *c);
        let allowed = remote.merge_allowed(h, m, &out, waits)
            || oldest.is_some_and(|t| t.elapsed() >= self.options.max_defer);
        if !allowed {
            return;
        }
        let doing = format!("the merge of group {h} into group {m}");
        self.keep_regrouped(h, &doing, |after| {
            after.merge(h, m, &out)?;
            let what = format!("group {h} merged into group {m}: clients {moved:?} moved");
            let event = ServerEvent::Merged {
                from: h,
                into: m,
                moved,
            };
            Ok((what, event))
        });
    }
}

/// The message telling a client the model is withdrawn for `w`.
fn withdrawn(w: &Withdrawal) -> ServerBody {
    ServerBody::Withdrawn(Withdrawn {
        reason: w.to_string(),
    })
}
