//! A removal with groups (Algorithm 4 inside the affected groups): one
//! masked round in each group with an updated client, each group's
//! difference decoded against its last sum, then the models on the paths
//! to the root (`Tree::update_paths`), then the commit.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use num_bigint::BigUint;
use syndrome_agg::AnySketch;

use super::{Delta, Tree, TreeRequest, TreeRound, delta_of, merge_times};
use crate::aggregation::RoundOutput;
use crate::federation::exchange::{Changes, round_times, run_round};
use crate::server::decode::Decoded;
use crate::server::{InputChange, ServerPlan};
use crate::{Client, ClientId, DecodeKind, MufcResult, SecAggStep, Server, StageTimes};

impl Tree {
    /// Serves a removal (Algorithm 4 inside the affected groups): one
    /// masked round in each group with an updated client, each group's
    /// difference decoded against its last sum, then the models of the
    /// nodes on the paths to the root, updated by the sums of the
    /// differences below them. Every round and every plan is computed
    /// before any model changes; on an error nothing changes but the
    /// groups' round counters.
    pub(in crate::federation) fn remove(
        &mut self,
        root: &mut Server,
        req: &TreeRequest<'_>,
    ) -> MufcResult<TreeRound> {
        let affected: BTreeSet<usize> = req
            .updated
            .iter()
            .filter_map(|c| self.layout.group_of(*c))
            .collect();
        let mut acc = Accounts::default();
        let mut deltas: BTreeMap<usize, Delta> = BTreeMap::new();
        let mut plans: Vec<(usize, ServerPlan)> = Vec::new();
        // Each group's round, with the clients that sent in it.
        let mut rounds: Vec<GroupRound> = Vec::new();
        for &g in &affected {
            let (sent, round, decoded) = self.group_round(g, req, &mut acc)?;
            let leaf = &self.nodes[g];
            let delta = delta_of(leaf, &decoded);
            let start = Instant::now();
            plans.push((g, leaf.plan(InputChange::Counts(decoded))?));
            acc.times.server += start.elapsed();
            deltas.insert(g, delta);
            rounds.push((g, sent, round));
        }
        let start = Instant::now();
        let paths = self.update_paths(root, &affected, deltas, plans, req.parallel)?;
        let mut decode = DecodeKind::Skipped;
        if let Some(nonzeros) = paths.root_nonzeros
            && acc.ran_round
        {
            decode = DecodeKind::Delta { nonzeros };
        }
        acc.involved.groups = affected.iter().copied().collect();
        acc.involved.nodes = paths.nodes;
        acc.times.server += start.elapsed();
        let Committed {
            encoded,
            dropped,
            messages,
        } = self.commit_group_rounds(rounds);
        self.layout = self
            .layout
            .without(&req.gone.iter().copied().collect::<Vec<_>>());
        Ok(TreeRound {
            times: acc.times,
            bytes_per_client: acc.bytes_per_client,
            decode,
            update: paths.update,
            included: self.included(),
            dropped,
            encoded,
            messages,
            involved: acc.involved,
        })
    }

    /// Group `g`'s round of a removal (none when every member left): the
    /// members that sent, the round (uncommitted) and its decoded
    /// difference; its times, bytes and messages go to `acc`.
    fn group_round(
        &mut self,
        g: usize,
        req: &TreeRequest<'_>,
        acc: &mut Accounts,
    ) -> MufcResult<(Vec<ClientId>, Option<RoundOutput>, Decoded)> {
        let ids = &self.layout.groups()[g];
        let after: Vec<&Client> = req
            .after
            .iter()
            .copied()
            .filter(|c| ids.binary_search(&c.id()).is_ok())
            .collect();
        // The flat rule, inside the group: without a removed member, every
        // change is a member's own and a change round carries them.
        let no_gone = !ids.iter().any(|c| req.gone.contains(c));
        let changes = no_gone.then(|| {
            let per_client: Vec<Vec<(BigUint, i128)>> = after
                .iter()
                .map(|c| req.changes.get(&c.id()).cloned().unwrap_or_default())
                .collect();
            let updated = ids.iter().filter(|c| req.updated.contains(c)).count();
            Changes {
                per_client,
                bound: updated.saturating_mul(req.client_k.saturating_mul(2)),
            }
        });
        let leaf = &self.nodes[g];
        let agg = &mut self.groups[g].aggregation;
        let mut round = run_round(agg, leaf.counts(), &after, changes.as_ref())?;
        let decoded = match &mut round {
            Some(r) => {
                let own: Vec<Duration> = after
                    .iter()
                    .map(|c| req.own.get(&c.id()).copied().unwrap_or_default())
                    .collect();
                let mut t = StageTimes::default();
                round_times(&mut t, &own, r);
                merge_times(&mut acc.times, &t);
                acc.bytes_per_client = r.bytes_per_client;
                acc.involved.clients += after.len();
                acc.involved.messages += r.client_messages;
                acc.involved.bytes += r.bytes_per_client.saturating_mul(after.len());
                acc.ran_round = true;
                // Moved out: the commit needs the rest of the round.
                std::mem::replace(&mut r.decoded, Decoded::Full(Vec::new()))
            }
            // Every member left: the group's aggregate is empty.
            None => Decoded::Full(Vec::new()),
        };
        Ok((after.iter().map(|c| c.id()).collect(), round, decoded))
    }

    /// Commits the groups' rounds: each group keeps its sum and included
    /// members; the clients' new sketches, the dropouts (in id order) and
    /// the recorded messages come back.
    fn commit_group_rounds(&mut self, rounds: Vec<GroupRound>) -> Committed {
        let mut encoded = BTreeMap::new();
        let mut dropped = Vec::new();
        let mut messages: Option<Vec<(ClientId, Vec<u8>)>> = None;
        for (g, sent, round) in rounds {
            let group = &mut self.groups[g];
            match round {
                Some(r) => {
                    group.aggregation.commit(r.pending);
                    if let Some(m) = r.messages {
                        messages.get_or_insert_with(Vec::new).extend(m);
                    }
                    for (c, e) in sent.into_iter().zip(r.encoded) {
                        if let Some(e) = e {
                            encoded.insert(c, e);
                        }
                    }
                    group.included = r.included;
                    dropped.extend(r.dropped);
                }
                // An emptied group never runs again.
                None => group.included.clear(),
            }
        }
        dropped.sort_by_key(|(c, _)| *c);
        Committed {
            encoded,
            dropped,
            messages,
        }
    }
}

/// A group's round of a removal: the group, the members that sent, the
/// round (none when every member left).
type GroupRound = (usize, Vec<ClientId>, Option<RoundOutput>);

/// What committing the groups' rounds gives back.
struct Committed {
    /// The new unmasked sketch of each client that sent one.
    encoded: BTreeMap<ClientId, AnySketch>,
    /// The clients that dropped out, in id order.
    dropped: Vec<(ClientId, SecAggStep)>,
    messages: Option<Vec<(ClientId, Vec<u8>)>>,
}

/// What the groups' rounds of a removal add up to, for its report.
#[derive(Default)]
struct Accounts {
    times: StageTimes,
    bytes_per_client: usize,
    involved: crate::Involvement,
    ran_round: bool,
}
