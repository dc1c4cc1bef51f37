//! Saving and loading the groups (persist version 7): what a saved
//! federation keeps of them, and the groups rebuilt and checked from it.

use std::collections::{BTreeMap, BTreeSet};

use num_bigint::BigUint;

use super::super::setup::Setup;
use super::{Group, Tree, fit_inner, group_aggregation};
use crate::layout::Layout;
use crate::persist::body::{SavedGroup, SavedTree};
use crate::server::InputChange;
use crate::server::decode::Decoded;
use crate::{Client, ClientId, MufcError, MufcResult};

impl Tree {
    /// What a saved federation keeps of the groups (persist version 7).
    pub(crate) fn saved(&self) -> SavedTree {
        let groups = self
            .layout
            .groups()
            .iter()
            .zip(&self.groups)
            .zip(&self.nodes)
            .map(|((members, group), leaf)| SavedGroup {
                members: members.clone(),
                rounds: group.aggregation.rounds(),
                included: group.included.clone(),
                counts: leaf.counts().iter().map(|(b, c)| (b.clone(), *c)).collect(),
            })
            .collect();
        SavedTree {
            fan_out: self.layout.fan_out(),
            groups,
        }
    }

    /// The groups of a saved federation: each group's aggregation (its
    /// round counter and last sum) and model from its stored counts,
    /// checked against its included members' histograms when `clients`
    /// (in id order) are there, then the inner nodes' models; with the
    /// counts of the root, which the caller checks against its own.
    /// `capacity` is the training round's sketch capacity.
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`] for groups that are not a layout of the
    /// clients, a group below the minimum, a group including a client
    /// not its own, or counts that are not its members' sum.
    pub(crate) fn restore(
        setup: &Setup,
        saved: SavedTree,
        clients: &[Client],
        unsent: &BTreeMap<ClientId, crate::state::unsent::Unsent>,
        capacity: Option<usize>,
    ) -> MufcResult<(Self, Vec<(BigUint, u64)>)> {
        let bad = |what: String| MufcError::Persistence(format!("the stored groups: {what}"));
        let members = saved.groups.iter().map(|g| g.members.clone()).collect();
        let layout = Layout::from_groups(members, saved.fan_out).map_err(|e| bad(e.to_string()))?;
        // A server's state across processes holds no client to check.
        // The clients that left while their round waits are still in
        // their groups.
        let left: BTreeSet<ClientId> = unsent
            .iter()
            .filter(|(_, u)| u.left)
            .map(|(c, _)| *c)
            .collect();
        if !clients.is_empty() || !left.is_empty() {
            let mut ids: Vec<ClientId> = clients
                .iter()
                .map(Client::id)
                .chain(left.iter().copied())
                .collect();
            ids.sort_unstable();
            layout.check_clients(&ids).map_err(|e| bad(e.to_string()))?;
        }
        // A group below the minimum waits to merge into another (its
        // round is held back by the lone-update policy).
        layout
            .check_mergeable(setup.config.min_clients(), &left)
            .map_err(|e| bad(e.to_string()))?;
        let mut groups = Vec::with_capacity(saved.groups.len());
        let mut nodes = Vec::with_capacity(layout.nodes().saturating_sub(1));
        let mut summed = BTreeSet::new();
        let roster = layout.clients();
        let book = (clients, unsent);
        for (g, (stored, ids)) in saved.groups.into_iter().zip(layout.groups()).enumerate() {
            let counts = check_group(g, &stored, (ids, &roster), &mut summed, book).map_err(bad)?;
            let mut aggregation = group_aggregation(setup, g, ids, capacity)?;
            aggregation.restore_last(&counts)?;
            aggregation.set_rounds(stored.rounds);
            let mut leaf = setup.server()?;
            leaf.apply(leaf.plan(InputChange::Counts(Decoded::Full(stored.counts)))?)?;
            groups.push(Group {
                aggregation,
                included: stored.included,
            });
            nodes.push(leaf);
        }
        let root = fit_inner(setup, &layout, &mut nodes)?;
        let tree = Self {
            layout,
            groups,
            nodes,
        };
        Ok((tree, root))
    }
}

/// Checks saved group `g` (its members `ids`, every client of the layout
/// `roster`) and gives its counts: a group may hold a client of another
/// group in its sum (the group was split or merged, and the round of the
/// other group has not committed yet, `Tree::regrouped`), but no client
/// of no group, and no client is in two sums (`summed` collects them);
/// its counts hold no bin twice and no zero, and when the clients are
/// there (`book`: in id order, with what each has not sent) are the sum
/// of its included clients' histograms.
fn check_group(
    g: usize,
    stored: &SavedGroup,
    (ids, roster): (&[ClientId], &[ClientId]),
    summed: &mut BTreeSet<ClientId>,
    (clients, unsent): (&[Client], &BTreeMap<ClientId, crate::state::unsent::Unsent>),
) -> Result<BTreeMap<BigUint, u64>, String> {
    let of_no_group =
        |c: &&ClientId| ids.binary_search(c).is_err() && roster.binary_search(c).is_err();
    if let Some(c) = stored.included.iter().find(of_no_group) {
        return Err(format!("group {g} includes client {c}, of no group"));
    }
    if let Some(c) = stored.included.iter().find(|c| !summed.insert(**c)) {
        return Err(format!(
            "client {c} is in two groups' sums, or twice in one"
        ));
    }
    let counts: BTreeMap<BigUint, u64> = stored.counts.iter().cloned().collect();
    if counts.len() != stored.counts.len() || counts.values().any(|&c| c == 0) {
        return Err(format!("group {g}'s counts repeat a bin or hold a zero"));
    }
    let included: BTreeSet<ClientId> = stored.included.iter().copied().collect();
    if !clients.is_empty()
        && crate::persist::included_sum(clients, unsent, &included).as_ref() != Some(&counts)
    {
        return Err(format!(
            "group {g}'s counts are not the sum of its included clients' histograms"
        ));
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(members: &[u64], included: &[u64]) -> SavedGroup {
        SavedGroup {
            members: members.iter().copied().map(ClientId).collect(),
            rounds: 1,
            included: included.iter().copied().map(ClientId).collect(),
            counts: vec![(BigUint::from(7u8), 2)],
        }
    }

    /// The saved groups' sums as `Tree::restore` checks them, group by
    /// group: a group's sum may hold a client of another group (a split
    /// or merge whose other round has not committed), never a client of
    /// no group, and no client is in two sums (or twice in one).
    #[test]
    fn a_client_is_in_one_sum_at_the_most() {
        let roster: Vec<ClientId> = (0..6).map(ClientId).collect();
        let check = |groups: &[SavedGroup]| {
            let mut summed = BTreeSet::new();
            groups.iter().enumerate().try_for_each(|(g, stored)| {
                let ids = stored.members.clone();
                check_group(
                    g,
                    stored,
                    (&ids, &roster),
                    &mut summed,
                    (&[], &BTreeMap::new()),
                )
                .map(drop)
            })
        };
        // A split's kept half still holds the moved clients 4 and 5.
        assert!(
            check(&[
                group(&[0, 1, 2, 3], &[0, 1, 2, 3, 4, 5]),
                group(&[4, 5], &[])
            ])
            .is_ok()
        );
        // Once the other half summed them too, they would count twice.
        let twice = check(&[
            group(&[0, 1, 2, 3], &[0, 1, 2, 3, 4, 5]),
            group(&[4, 5], &[4, 5]),
        ]);
        assert!(twice.is_err_and(|e| e.contains("two groups' sums")));
        let repeated = check(&[group(&[0, 1, 2], &[0, 1, 1])]);
        assert!(repeated.is_err_and(|e| e.contains("twice in one")));
        let stranger = check(&[group(&[0, 1, 2], &[0, 1, 9])]);
        assert!(stranger.is_err_and(|e| e.contains("of no group")));
    }
}
