//! A request that would leave an aggregate below the policy's minimum
//! (docs/threat-model.md P4): its points are erased at once and the model
//! is withdrawn ([`Withdrawal`]); so are the points of every request after
//! it, with no round.

use std::time::{Duration, Instant};

use super::Federation;
use super::minimum::withdrawal_after;
use super::requests::Staged;
use crate::{MufcError, RemovalOutcome, RemovalReport, ServerUpdate, Withdrawal};

impl Federation {
    /// The withdrawal a refusal of [`Self::check_remaining`] calls for:
    /// `None` for any other error.
    pub(super) fn withdrawal_for(&self, refusal: &MufcError) -> Option<Withdrawal> {
        withdrawal_after(refusal, self.next_request_number(), self.rounds())
    }

    /// Serves a checked request (`staged`) with no round: its points and
    /// those of the pending requests are erased from the clients (they
    /// already are for the pending ones), and the model is withdrawn by
    /// `w`, unless an earlier request did (`w` is then its withdrawal).
    /// Nothing here can fail.
    pub(super) fn serve_withdrawn(
        &mut self,
        staged: Vec<Staged>,
        w: Withdrawal,
        wall: Instant,
    ) -> RemovalReport {
        let number = self.next_request_number();
        let gone = self.unsent_with(&staged);
        let own: Vec<Duration> = staged.iter().map(|s| s.own).collect();
        let mut requests: Vec<u64> = self.pending.iter().map(|p| p.number).collect();
        requests.push(number);
        let removed_points = gone.values().fold(0u64, |n, u| n.saturating_add(u.points));
        let of =
            |f: fn(&super::Unsent) -> bool| gone.iter().filter(move |(_, u)| f(u)).map(|(c, _)| *c);
        let removed_clients = of(|u| u.left).collect();
        let reseeded = of(|u| u.reseeded).collect();
        let updated_clients = of(|u| !u.left).collect();
        self.commit_staged(staged);
        let server = if self.withdrawn.is_some() {
            ServerUpdate::Unchanged
        } else {
            self.withdraw(w.clone());
            ServerUpdate::Cleared
        };
        let times = super::exchange::request_times(&own, wall);
        let report = RemovalReport {
            requests,
            removed_points: usize::try_from(removed_points).unwrap_or(usize::MAX),
            removed_clients,
            reseeded,
            updated_clients,
            server,
            ..RemovalReport::without_round(number, RemovalOutcome::Withdrawn(w), times)
        };
        self.history.push(report.clone());
        report
    }

    /// Withdraws the model (see [`Withdrawal`]): the server forgets its
    /// counts and centroids, and what the aggregation, the groups and the
    /// waiting messages kept of the last sums goes too.
    pub(crate) fn withdraw(&mut self, w: Withdrawal) {
        self.server.clear();
        self.aggregation = None;
        self.tree = None;
        self.pending.clear();
        self.unsent.clear();
        self.messages = None;
        self.involvement = None;
        self.withdrawn = Some(w);
    }
}
