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
    fn out_of_sums(&self) -> BTreeSet<ClientId> {
        let mut out = self.emptied.clone();
        out.extend(self.departed_ids());
        out
    }

    /// The withdrawal the clients out of the sums call for now, if any
    /// (the model trained, not yet withdrawn).
    pub(super) fn withdrawal_due(&self) -> Option<Withdrawal> {
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
    /// or now (then written to the store with every request waiting, and
    /// told to every client connected), or due but not yet written (the
    /// store refused; tried again after a pause).
    pub(super) fn withdrawn_or_due(&mut self) -> bool {
        if self.remote.as_ref().is_some_and(|r| r.is_withdrawn()) {
            return true;
        }
        let Some(w) = self.withdrawal_due() else {
            return false;
        };
        if !self.may_retry() {
            return true;
        }
        let served: Vec<(ClientId, u64)> =
            (self.queue.iter()).map(|q| (q.client, q.request)).collect();
        if let Err(e) = self.write_withdrawal(&w, &served) {
            self.retry_at = Some(Instant::now() + RETRY);
            let _ = self.report.send(ServerEvent::RoundFailed {
                round: None,
                group: w.group,
                reason: format!("the model must be withdrawn ({w}), but the store refused: {e}"),
            });
            return true;
        }
        self.queue.clear();
        let _ = self.report.send(ServerEvent::Withdrawn(w.clone()));
        let ids: Vec<ClientId> = self.sessions.keys().copied().collect();
        for id in ids {
            self.send(id, withdrawn(&w));
        }
        true
    }

    /// Withdraws the model for `w`, serving the requests `served`: in the
    /// store first, then in memory (a failure changes neither).
    fn write_withdrawal(
        &mut self,
        w: &Withdrawal,
        served: &[(ClientId, u64)],
    ) -> Result<(), String> {
        let remote = self.remote.as_ref().ok_or("no federation")?;
        let mut after = remote.clone();
        let done = after.withdraw_if_too_few(&self.out_of_sums(), w.request);
        if done.as_ref() != Some(w) {
            return Err("the withdrawal changed as it was written".into());
        }
        let snapshot = after.snapshot().map_err(|e| e.to_string())?;
        let store = self.store.as_mut().ok_or("the server has no store yet")?;
        store
            .withdraw_serving(snapshot, served)
            .map_err(|e| e.to_string())?;
        self.remote = Some(after);
        Ok(())
    }

    /// Serves client `client`'s request `request` once the model is
    /// withdrawn: audited in the store, then acknowledged. Returns
    /// whether the model is withdrawn (the request is not queued then;
    /// one the store could not audit is heard again when the client
    /// comes back).
    pub(super) fn served_by_withdrawal(&mut self, client: ClientId, request: u64) -> bool {
        let Some(w) = self.remote.as_ref().and_then(|r| r.withdrawal()).cloned() else {
            return false;
        };
        let written =
            match (&self.remote, &mut self.store) {
                (Some(remote), Some(store)) => (remote.snapshot())
                    .map_err(|e| e.to_string())
                    .and_then(|s| {
                        (store.withdraw_serving(s, &[(client, request)])).map_err(|e| e.to_string())
                    }),
                _ => Err("the server has no store".into()),
            };
        match written {
            Ok(()) => self.send(client, withdrawn(&w)),
            Err(e) => {
                let _ = self.report.send(ServerEvent::Rejected {
                    id: client,
                    reason: format!("its request {request} could not be audited: {e}"),
                });
            }
        }
        true
    }
}

/// The message telling a client the model is withdrawn for `w`.
fn withdrawn(w: &Withdrawal) -> ServerBody {
    ServerBody::Withdrawn(Withdrawn {
        reason: w.to_string(),
    })
}
