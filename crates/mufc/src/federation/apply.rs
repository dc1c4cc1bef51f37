//! The removal pipeline of Algorithm 4 after the request is checked and
//! its clients unlearned (`requests.rs`): the plan (`plan.rs`, pure),
//! one round (a flat federation's, or one per changed group with the
//! update along each path to the root, `tree.rs`), the commit and the
//! report. Nothing is committed before the round and the server's update
//! succeed.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use super::Federation;
use super::exchange::{
    Changes, Exchanged, client_times, empty_plain, exchange, keep_encoded, plain_bytes, plain_of,
};
use super::plan::{Plan, Removed, change_of};
use super::requests::Staged;
use super::tree::{TreeRequest, TreeRound};
use super::unlearn::privacy_warning;
use super::unsent::Unsent;
use crate::aggregation::Aggregation;
use crate::{
    ClientId, DecodeKind, MufcResult, PendingRequest, RemovalOutcome, RemovalReport, ServerUpdate,
    StageTimes,
};

/// What a removal round did at the server.
struct Outcome {
    decode: DecodeKind,
    server: ServerUpdate,
    times: StageTimes,
    bytes_per_client: usize,
    included: Vec<ClientId>,
    dropped: Vec<(ClientId, crate::SecAggStep)>,
    involved: crate::Involvement,
}

impl Federation {
    /// The round of the clients `ready` (Algorithm 4, lines 7-13): the
    /// clients after `staged` (this request's side, not committed yet)
    /// send their messages, the server updates; on success the clients,
    /// the aggregate and `unsent` (less `ready`) are committed and the
    /// report answers request `number`, listing the requests of `pending`
    /// the round applies.
    pub(super) fn serve(
        &mut self,
        ready: &BTreeSet<ClientId>,
        staged: Vec<Staged>,
        mut unsent: BTreeMap<ClientId, Unsent>,
        number: u64,
        pending: &[PendingRequest],
        wall: Instant,
    ) -> MufcResult<RemovalReport> {
        let numbers: Vec<u64> = pending
            .iter()
            .filter(|p| p.request.named().any(|c| ready.contains(&c)))
            .map(|p| p.number)
            .collect();
        let plain = self.aggregation.is_none() && self.tree.is_none();
        let mut plan = Plan::new(&self.clients, &staged, ready, &unsent, plain);
        // With groups the server decodes each group's difference: the
        // policy holds per group, among the members before the round (a
        // member that leaves sends its last change in it).
        let parts: Vec<Vec<ClientId>> = match &self.tree {
            Some(t) => t.by_group(&plan.updated),
            None => vec![plan.updated.clone()],
        };
        let out = if let Some(tree) = self.tree.as_mut() {
            let round = tree_round(tree, &mut self.server, &plan, &unsent, &self.config)?;
            let removed = plan.into_removed();
            self.commit_staged(staged);
            (removed, self.commit_tree(round, wall))
        } else {
            let exchanged = flat_round(
                &mut self.aggregation,
                &mut self.server,
                &plan,
                &unsent,
                (self.dim, self.config.client_k()),
            )?;
            let after: Vec<ClientId> = plan.after.iter().map(|c| c.id()).collect();
            let own = std::mem::take(&mut plan.own);
            let removed = plan.into_removed();
            let done = self.commit_flat(exchanged, &own, after, staged, wall);
            (removed, done)
        };
        unsent.retain(|c, _| !ready.contains(c));
        self.unsent = unsent;
        let (removed, outcome) = out;
        Ok(self.record_applied((number, numbers), &parts, removed, outcome))
    }

    /// Commits a flat federation's round (`exchanged`, or none when no
    /// message changed) with the request's clients (`staged`), and
    /// accounts for it: `own` each remaining client's unlearning time,
    /// `after` their ids.
    fn commit_flat(
        &mut self,
        exchanged: Option<Exchanged>,
        own: &[Duration],
        after: Vec<ClientId>,
        staged: Vec<Staged>,
        wall: Instant,
    ) -> Outcome {
        let mut times = StageTimes::default();
        let no_round_bytes = if self.aggregation.is_some() {
            self.fit_report.bytes_per_client
        } else {
            plain_bytes(self.config.client_k(), self.dim)
        };
        let messages = exchanged.as_ref().map_or(0, Exchanged::client_messages);
        let mut encoded = Vec::new();
        let (decode, server, included, dropped, bytes_per_client) = match exchanged {
            Some(x) => {
                let bytes = x.account(&mut times, own, no_round_bytes);
                let done = x.commit(&mut self.aggregation, &mut self.messages);
                let included = done.included.unwrap_or(after);
                encoded = done.encoded;
                (done.decode, done.update, included, done.dropped, bytes)
            }
            None => {
                client_times(&mut times, own, &[]);
                // No client changed, so no round ran: the aggregate is the
                // last round's, of the clients it included (with dropouts,
                // not necessarily all).
                let included = if self.aggregation.is_some() {
                    self.last_included().to_vec()
                } else {
                    after
                };
                let (decode, update) = (DecodeKind::Skipped, ServerUpdate::Unchanged);
                (decode, update, included, Vec::new(), no_round_bytes)
            }
        };
        self.commit_staged(staged);
        // The clients are now those of the round, in its order.
        keep_encoded(&mut self.clients, encoded);
        times.wall = wall.elapsed();
        let involved = match decode {
            DecodeKind::Skipped => crate::Involvement::default(),
            _ => crate::Involvement {
                clients: self.clients.len(),
                messages,
                groups: Vec::new(),
                nodes: 1,
                bytes: bytes_per_client.saturating_mul(self.clients.len()),
            },
        };
        Outcome {
            decode,
            server,
            times,
            bytes_per_client,
            included,
            dropped,
            involved,
        }
    }

    /// Commits the rounds of a federation with groups (the request's
    /// clients are committed already).
    fn commit_tree(&mut self, mut round: TreeRound, wall: Instant) -> Outcome {
        round.keep_encoded(&mut self.clients);
        if round.messages.is_some() {
            self.messages = round.messages;
        }
        let mut times = round.times;
        times.wall = wall.elapsed();
        Outcome {
            decode: round.decode,
            server: round.update,
            times,
            bytes_per_client: round.bytes_per_client,
            included: round.included,
            dropped: round.dropped,
            involved: round.involved,
        }
    }

    /// Records an applied round: its report enters the history, and who
    /// took part is kept for [`Federation::last_involvement`].
    fn record_applied(
        &mut self,
        (number, numbers): (u64, Vec<u64>),
        parts: &[Vec<ClientId>],
        removed: Removed,
        out: Outcome,
    ) -> RemovalReport {
        let needed = self.config.min_updating_clients();
        // In the plain mode the server sees every client's centroids: no
        // round hides more than another.
        let scma = self.aggregation.is_some() || self.tree.is_some();
        let privacy_warning = scma
            .then(|| parts.iter().find_map(|p| privacy_warning(p, needed)))
            .flatten();
        let lone_update = parts.iter().any(|p| p.len() == 1);
        let report = RemovalReport {
            request: number,
            outcome: RemovalOutcome::Applied,
            requests: numbers,
            removed_points: removed.removed_points,
            removed_clients: removed.gone,
            reseeded: removed.reseeded,
            lone_update,
            updated_clients: removed.updated,
            decode: out.decode,
            server: out.server,
            times: out.times,
            bytes_per_client: out.bytes_per_client,
            nonzero_bins: self.server.nonzero_bins(),
            included: out.included,
            dropped: out.dropped,
            privacy_warning,
        };
        self.involvement = Some(out.involved);
        self.history.push(report.clone());
        report
    }
}

/// A flat federation's round (Algorithm 4, line 7) and the server's
/// update (lines 8-13), uncommitted; `None` when no client's message
/// changed. `shape`: the dimension and the clients' k.
fn flat_round(
    aggregation: &mut Option<Aggregation>,
    server: &mut crate::Server,
    plan: &Plan<'_>,
    unsent: &BTreeMap<ClientId, Unsent>,
    (dim, client_k): (usize, usize),
) -> MufcResult<Option<Exchanged>> {
    if plan.updated.is_empty() {
        return Ok(None);
    }
    let changed_plain = || {
        plan.updated
            .iter()
            .filter_map(|&c| {
                let old = plain_of(plan.previous(c)?);
                let new = plan
                    .current(c)
                    .map_or_else(|| empty_plain(c, dim), plain_of);
                Some((old, new))
            })
            .collect()
    };
    // Without a removed client every change is a client's own: a change
    // round carries them (a removed client would have to send minus its
    // histogram; it sends nothing, so the round is whole).
    let changes = plan.gone.is_empty().then(|| Changes {
        per_client: plan.after.iter().map(|c| change_of(unsent, c)).collect(),
        // Each updated client changes at most its k old bins and its k
        // new ones.
        bound: plan
            .updated
            .len()
            .saturating_mul(client_k.saturating_mul(2)),
    });
    Ok(Some(exchange(
        aggregation,
        server,
        &plan.after,
        changed_plain,
        changes.as_ref(),
    )?))
}

/// One round per group with a changed client, and the updates along the
/// paths to the root (`tree.rs`), uncommitted.
fn tree_round(
    tree: &mut super::tree::Tree,
    root: &mut crate::Server,
    plan: &Plan<'_>,
    unsent: &BTreeMap<ClientId, Unsent>,
    config: &crate::ValidConfig,
) -> MufcResult<TreeRound> {
    let updated: BTreeSet<ClientId> = plan.updated.iter().copied().collect();
    let changes: BTreeMap<ClientId, Vec<(num_bigint::BigUint, i128)>> = plan
        .after
        .iter()
        .filter(|c| updated.contains(&c.id()))
        .map(|c| (c.id(), change_of(unsent, c)))
        .collect();
    let own: BTreeMap<ClientId, Duration> = plan
        .after
        .iter()
        .zip(&plan.own)
        .map(|(c, t)| (c.id(), *t))
        .collect();
    tree.remove(
        root,
        &TreeRequest {
            after: &plan.after,
            updated: &updated,
            gone: &plan.gone,
            changes: &changes,
            own: &own,
            client_k: config.client_k(),
            parallel: config.parallel(),
        },
    )
}
