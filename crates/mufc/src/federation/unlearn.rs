//! Serving merged removal requests (Algorithm 4): the affected clients
//! unlearn on copies, one round of messages, the server's update, then the
//! commit and the report.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::time::{Duration, Instant};

use seeding::PointId;

use super::Federation;
use super::exchange::{
    Changes, Exchanged, client_times, empty_plain, exchange, histogram_change, keep_encoded,
    plain_bytes, plain_of,
};
use super::requests::Loss;
use super::tree::TreeRequest;
use crate::{
    Client, ClientId, DecodeKind, MufcError, MufcResult, RemovalOutcome, RemovalReport,
    ServerUpdate, StageTimes, par,
};

impl Federation {
    /// Applies the merged requests `numbers` in one round (Algorithm 4);
    /// the report answers request `number`.
    pub(super) fn apply(
        &mut self,
        merged: &BTreeMap<ClientId, Loss>,
        number: u64,
        numbers: Vec<u64>,
        wall: Instant,
    ) -> MufcResult<RemovalReport> {
        let mut gone: Vec<usize> = Vec::new();
        let mut jobs: Vec<(usize, &[PointId])> = Vec::new();
        let mut removed_points = 0usize;
        for (c, loss) in merged {
            let pos = self.position(*c)?;
            let len = self.clients[pos].data().len();
            match loss {
                Loss::Whole => {
                    removed_points += len;
                    gone.push(pos);
                }
                Loss::Points(ids) => {
                    removed_points += ids.len();
                    if ids.len() == len {
                        gone.push(pos);
                    } else {
                        jobs.push((pos, ids.as_slice()));
                    }
                }
            }
        }
        gone.sort_unstable();
        jobs.sort_unstable_by_key(|(pos, _)| *pos);

        // The affected clients unlearn, on copies (Algorithm 4, line 3).
        let quantizer = self.quantizer.as_ref();
        let clients = &self.clients;
        let unlearned = par::map(self.config.parallel(), &jobs, |_, (pos, ids)| {
            let start = Instant::now();
            let (c, reseeded) = clients[*pos].unlearned(ids, quantizer)?;
            Ok::<_, MufcError>((c, reseeded, start.elapsed()))
        })?;
        let mut replaced: HashMap<usize, usize> = HashMap::new();
        let mut updated = Vec::new();
        let mut reseeded = Vec::new();
        for (j, ((pos, _), (c, re, _))) in jobs.iter().zip(&unlearned).enumerate() {
            replaced.insert(*pos, j);
            let old = &self.clients[*pos];
            let changed = match self.aggregation {
                Some(_) => old.histogram() != c.histogram(),
                None => old.sizes() != c.sizes() || old.centroids() != c.centroids(),
            };
            if changed {
                updated.push(*pos);
            }
            if *re {
                reseeded.push(old.id());
            }
        }
        updated.extend(gone.iter().copied());
        updated.sort_unstable();

        // The clients after the request, in id order.
        let gone_set: HashSet<usize> = gone.iter().copied().collect();
        let after: Vec<&Client> = (0..self.clients.len())
            .filter(|p| !gone_set.contains(p))
            .map(|p| match replaced.get(&p) {
                Some(&j) => &unlearned[j].0,
                None => &self.clients[p],
            })
            .collect();
        let own: Vec<Duration> = (0..self.clients.len())
            .filter(|p| !gone_set.contains(p))
            .map(|p| replaced.get(&p).map_or(Duration::ZERO, |&j| unlearned[j].2))
            .collect();

        if let Some(tree) = self.tree.as_mut() {
            let updated_set: BTreeSet<ClientId> =
                updated.iter().map(|&p| self.clients[p].id()).collect();
            let gone_ids: BTreeSet<ClientId> = gone.iter().map(|&p| self.clients[p].id()).collect();
            let changes: BTreeMap<ClientId, Vec<(num_bigint::BigUint, i128)>> = jobs
                .iter()
                .zip(&unlearned)
                .map(|((pos, _), (c, _, _))| {
                    let old = &self.clients[*pos];
                    (old.id(), histogram_change(old.histogram(), c.histogram()))
                })
                .collect();
            let own_by_id: BTreeMap<ClientId, Duration> = jobs
                .iter()
                .zip(&unlearned)
                .map(|((pos, _), (_, _, t))| (self.clients[*pos].id(), *t))
                .collect();
            let request = TreeRequest {
                after: &after,
                updated: &updated_set,
                gone: &gone_ids,
                changes: &changes,
                own: &own_by_id,
                client_k: self.config.client_k(),
                parallel: self.config.parallel(),
            };
            let mut round = tree.remove(&mut self.server, &request)?;
            let removed = Removed {
                updated: updated.iter().map(|&p| self.clients[p].id()).collect(),
                gone: gone_ids.into_iter().collect(),
                reseeded,
                removed_points,
            };
            self.commit_clients(&jobs, unlearned, &gone);
            round.keep_encoded(&mut self.clients);
            if round.messages.is_some() {
                self.messages = round.messages;
            }
            let mut times = round.times;
            times.wall = wall.elapsed();
            return Ok(self.record_applied(
                number,
                numbers,
                removed,
                Outcome {
                    decode: round.decode,
                    server: round.update,
                    times,
                    bytes_per_client: round.bytes_per_client,
                    included: round.included,
                    dropped: round.dropped,
                    involved: round.involved,
                },
            ));
        }

        // A new aggregation round (Algorithm 4, line 7), then the server
        // (lines 8-13); no round when no client's message changed.
        let exchanged = if updated.is_empty() {
            None
        } else {
            let changed_plain = || {
                updated
                    .iter()
                    .map(|&p| {
                        let before = plain_of(&self.clients[p]);
                        let after = match replaced.get(&p) {
                            Some(&j) => plain_of(&unlearned[j].0),
                            None => empty_plain(self.clients[p].id(), self.dim),
                        };
                        (before, after)
                    })
                    .collect()
            };
            // Without a removed client every change is a client's own: a
            // change round carries them (a removed client would have to
            // send minus its histogram; it sends nothing, so the round is
            // whole).
            let changes = gone.is_empty().then(|| Changes {
                per_client: (0..self.clients.len())
                    .map(|p| match replaced.get(&p) {
                        Some(&j) => histogram_change(
                            self.clients[p].histogram(),
                            unlearned[j].0.histogram(),
                        ),
                        None => Vec::new(),
                    })
                    .collect(),
                // Each updated client changes at most its k old bins and
                // its k new ones.
                bound: updated
                    .len()
                    .saturating_mul(self.config.client_k().saturating_mul(2)),
            });
            Some(exchange(
                &mut self.aggregation,
                &mut self.server,
                &after,
                changed_plain,
                changes.as_ref(),
            )?)
        };

        // Account and commit.
        let mut times = StageTimes::default();
        let no_round_bytes = if self.aggregation.is_some() {
            self.fit_report.bytes_per_client
        } else {
            plain_bytes(self.config.client_k(), self.dim)
        };
        let mut encoded = Vec::new();
        let messages = exchanged.as_ref().map_or(0, Exchanged::client_messages);
        let (decode, server_update, included, dropped, bytes_per_client) = match exchanged {
            Some(x) => {
                let bytes = x.account(&mut times, &own, no_round_bytes);
                let done = x.commit(&mut self.aggregation, &mut self.messages);
                let included = done
                    .included
                    .unwrap_or_else(|| after.iter().map(|c| c.id()).collect());
                let (decode, update, dropped) = (done.decode, done.update, done.dropped);
                encoded = done.encoded;
                (decode, update, included, dropped, bytes)
            }
            None => {
                client_times(&mut times, &own, &[]);
                // No client changed, so no round ran: the aggregate is the
                // last round's, of the clients it included (with dropouts,
                // not necessarily all).
                let included = if self.aggregation.is_some() {
                    self.last_included().to_vec()
                } else {
                    after.iter().map(|c| c.id()).collect()
                };
                (
                    DecodeKind::Skipped,
                    ServerUpdate::Unchanged,
                    included,
                    Vec::new(),
                    no_round_bytes,
                )
            }
        };
        let removed = Removed {
            updated: updated.iter().map(|&p| self.clients[p].id()).collect(),
            gone: gone.iter().map(|&p| self.clients[p].id()).collect(),
            reseeded,
            removed_points,
        };
        self.commit_clients(&jobs, unlearned, &gone);
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
        Ok(self.record_applied(
            number,
            numbers,
            removed,
            Outcome {
                decode,
                server: server_update,
                times,
                bytes_per_client,
                included,
                dropped,
                involved,
            },
        ))
    }
}

/// The clients a removal round changed.
struct Removed {
    /// Those whose message changed (removed ones included), in id order.
    updated: Vec<ClientId>,
    /// Those removed whole.
    gone: Vec<ClientId>,
    reseeded: Vec<ClientId>,
    removed_points: usize,
}

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
    /// The clients after a committed round: the unlearned copies of those
    /// in `jobs` (positions, in order) replace them, those at positions
    /// `gone` (sorted) leave.
    fn commit_clients<T>(
        &mut self,
        jobs: &[(usize, T)],
        unlearned: Vec<(Client, bool, Duration)>,
        gone: &[usize],
    ) {
        for ((pos, _), (c, _, _)) in jobs.iter().zip(unlearned) {
            self.clients[*pos] = c;
        }
        for &p in gone.iter().rev() {
            self.clients.remove(p);
        }
    }

    /// Records an applied round: its report enters the history, and who
    /// took part is kept for [`Federation::last_involvement`].
    fn record_applied(
        &mut self,
        number: u64,
        numbers: Vec<u64>,
        removed: Removed,
        out: Outcome,
    ) -> RemovalReport {
        // With groups the server decodes each group's difference: the
        // policy holds per group.
        let parts: Vec<Vec<ClientId>> = match &self.tree {
            Some(t) => t.by_group(&removed.updated),
            None => vec![removed.updated.clone()],
        };
        let needed = self.config.min_updating_clients();
        let privacy_warning = parts.iter().find_map(|p| privacy_warning(p, needed));
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

/// What the server learns from a round that changed the messages of
/// `updated` alone, beyond a policy of `needed` (docs/threat-model.md U3).
fn privacy_warning(updated: &[ClientId], needed: usize) -> Option<String> {
    match updated {
        [] => None,
        [c] => Some(format!(
            "only client {c}'s message changed in this round: the difference of this aggregate \
             and the previous one tells the server how client {c}'s histogram changed (for a \
             removed point that is not a seed, the bin it counted in; for a removed client, its \
             whole histogram) (docs/threat-model.md U3)"
        )),
        v if v.len() < needed => Some(format!(
            "only {} clients' messages changed in this round, fewer than the policy's {needed}: \
             the difference of this aggregate and the previous one tells the server the sum of \
             their changes (docs/threat-model.md U3)",
            v.len()
        )),
        _ => None,
    }
}
