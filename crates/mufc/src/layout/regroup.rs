//! How the groups change as clients join (issue 29): a new client goes
//! to the group with the fewest clients present, and a group that comes
//! to hold twice the smallest size a group may have splits in two.
//!
//! Why these rules: a group's sum is what the server decodes, so every
//! group must keep at least the minimum aggregate (`min_clients`,
//! docs/threat-model.md P4) and the size the topology asks for; the
//! smallest group takes a newcomer so that the groups stay even, and a
//! split at twice the smallest size gives two halves that each meet it.
//! The rules are deterministic: the layout after any sequence of joins is
//! a function of the layout before and the clients that left, so that a
//! retraining in that layout ([`Federation::with_layout`](crate::Federation::with_layout))
//! is the reference the model equals.

use std::collections::BTreeSet;

use super::Layout;
use crate::{ClientId, MufcError, MufcResult};

impl Layout {
    /// The layout with the clients of `joining` in the group that holds
    /// the fewest clients not in `gone` (the first such group on a tie),
    /// among the groups that hold one. They join together: clients that
    /// join in one request change one group's sum, so that the
    /// lone-update policy counts them together there (spread over groups,
    /// each would be a lone update of its own). The shape stays: no group
    /// is added here (a group that grows too large splits when its next
    /// round runs, if it can safely: `RemoteServer::is_full`).
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidLayout`] for a client of `joining` already in
    /// a group, or named twice.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Layout};
    /// use std::collections::BTreeSet;
    ///
    /// let ids = |r: std::ops::Range<u64>| r.map(ClientId).collect::<Vec<_>>();
    /// let layout = Layout::from_groups(vec![ids(0..4), ids(4..7)], None)?;
    /// let grown = layout.absorbing(&[ClientId(9)], &BTreeSet::new())?;
    /// assert_eq!(grown.groups()[1], [4, 5, 6, 9].map(ClientId));
    /// // Clients that left do not count: the first group holds two now.
    /// let gone = BTreeSet::from([ClientId(0), ClientId(1)]);
    /// assert_eq!(layout.absorbing(&[ClientId(9)], &gone)?.groups()[0], [0, 1, 2, 3, 9].map(ClientId));
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn absorbing(&self, joining: &[ClientId], gone: &BTreeSet<ClientId>) -> MufcResult<Self> {
        let mut joining = joining.to_vec();
        joining.sort_unstable();
        if let Some(w) = joining.windows(2).find(|w| w[0] == w[1]) {
            return Err(MufcError::InvalidLayout(format!(
                "client {} joins twice",
                w[0]
            )));
        }
        if let Some(c) = joining.iter().find(|c| self.group_of(**c).is_some()) {
            return Err(MufcError::InvalidLayout(format!(
                "client {c} is in a group already"
            )));
        }
        let present = |g: &Vec<ClientId>| g.iter().filter(|x| !gone.contains(x)).count();
        // The fewest present, among the groups with some; the first on a
        // tie (`min_by_key` keeps the first minimum).
        let target = (self.groups.iter().enumerate())
            .filter(|(_, g)| present(g) > 0)
            .min_by_key(|(_, g)| present(g))
            .map_or(0, |(i, _)| i);
        let mut groups = self.groups.clone();
        groups[target].extend(joining);
        groups[target].sort_unstable();
        Ok(Self {
            groups,
            parents: self.parents.clone(),
            fan_out: self.fan_out,
        })
    }

    /// Whether group `g` holds at least `2 * smallest` clients not in
    /// `gone`, so that it splits into two groups of at least `smallest`
    /// ([`Self::split`]). `false` out of range.
    #[cfg(test)]
    pub(crate) fn is_full(&self, g: usize, smallest: usize, gone: &BTreeSet<ClientId>) -> bool {
        (self.groups.get(g)).is_some_and(|ids| {
            let present = ids.iter().filter(|c| !gone.contains(c)).count();
            present >= smallest.max(1).saturating_mul(2)
        })
    }

    /// The layout with group `g` split in two by id: of its clients not
    /// in `gone`, in id order, the first half stays (with the clients of
    /// `gone`) and the second half forms a new group, the last one. The
    /// layouts' own tests' rule; a federation splits by who its last sum
    /// held (`RemoteServer::is_full`, [`Self::split_moving`]).
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidLayout`] for a group out of range, or one with
    /// fewer than two clients not in `gone`.
    #[cfg(test)]
    pub(crate) fn split(&self, g: usize, gone: &BTreeSet<ClientId>) -> MufcResult<Self> {
        let ids = (self.groups.get(g))
            .ok_or_else(|| MufcError::InvalidLayout(format!("no group {g}")))?;
        let present: Vec<ClientId> = ids.iter().filter(|c| !gone.contains(c)).copied().collect();
        if present.len() < 2 {
            return Err(MufcError::InvalidLayout(format!(
                "group {g} holds fewer than two clients to split"
            )));
        }
        let moving: BTreeSet<ClientId> = present[present.len() / 2..].iter().copied().collect();
        self.split_moving(g, &moving)
    }

    /// The layout with the clients `moving` of group `g` in a new group,
    /// the last; the nodes above the groups are laid out again for the
    /// new number of groups (the inner nodes are numbered after the
    /// groups, so they are renumbered).
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidLayout`] for a group out of range, `moving`
    /// empty, not all of group `g`, or all of it.
    pub(crate) fn split_moving(&self, g: usize, moving: &BTreeSet<ClientId>) -> MufcResult<Self> {
        let ids = (self.groups.get(g))
            .ok_or_else(|| MufcError::InvalidLayout(format!("no group {g}")))?;
        let all_in = moving.iter().all(|c| ids.binary_search(c).is_ok());
        if moving.is_empty() || !all_in || moving.len() >= ids.len() {
            return Err(MufcError::InvalidLayout(format!(
                "group {g} does not split with clients {moving:?} moving"
            )));
        }
        let mut groups = self.groups.clone();
        groups[g].retain(|c| !moving.contains(c));
        groups.push(moving.iter().copied().collect());
        Ok(Self::shaped(groups, self.fan_out))
    }
}

/// The clients that form a new group when a group splits, of its present
/// clients `summed` (in its last sum, in id order) and `new` (not yet in
/// it): `None` when the group holds fewer than `2 * smallest`, or when
/// no split keeps every sum the server can take apart at least `min`
/// clients (the rule `RemoteServer::split_moving` documents): every new
/// client moves, with none of `summed` when the new are `smallest` or
/// more, otherwise with the last `max(min, smallest - new)` of `summed`,
/// provided `smallest` of them stay.
pub(crate) fn split_moving(
    summed: &[ClientId],
    new: &[ClientId],
    smallest: usize,
    min: usize,
) -> Option<BTreeSet<ClientId>> {
    if summed.len() + new.len() < smallest.saturating_mul(2) {
        return None;
    }
    let k = if new.len() >= smallest {
        0
    } else {
        min.max(smallest - new.len())
    };
    let stays = summed.len().checked_sub(k)?;
    (stays >= smallest).then(|| (new.iter().chain(&summed[stays..])).copied().collect())
}

impl Layout {
    /// The group clients of group `h` move to when fewer than
    /// `min_clients` of its clients are not in `gone`, but some: the group
    /// other than `h` with the fewest such clients among those with at
    /// least `min_clients` (the first on a tie). `None` when `h` is not
    /// below the minimum, or no group can take its clients.
    pub(crate) fn merge_target(
        &self,
        h: usize,
        min_clients: usize,
        gone: &BTreeSet<ClientId>,
    ) -> Option<usize> {
        let present = |g: &Vec<ClientId>| g.iter().filter(|c| !gone.contains(c)).count();
        let left = present(self.groups.get(h)?);
        if left == 0 || left >= min_clients {
            return None;
        }
        (self.groups.iter().enumerate())
            .filter(|(g, ids)| *g != h && present(ids) >= min_clients)
            .min_by_key(|(_, ids)| present(ids))
            .map(|(g, _)| g)
    }

    /// The layout with the clients of group `h` not in `gone` moved to
    /// group `m` (those of `gone`, which send nothing, stay); the shape
    /// stays.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidLayout`] for a group out of range, or `h`
    /// and `m` the same.
    pub(crate) fn merge(&self, h: usize, m: usize, gone: &BTreeSet<ClientId>) -> MufcResult<Self> {
        if h == m || h >= self.groups.len() || m >= self.groups.len() {
            return Err(MufcError::InvalidLayout(format!(
                "group {h} does not merge into group {m}"
            )));
        }
        let mut groups = self.groups.clone();
        let (moving, stay): (Vec<ClientId>, Vec<ClientId>) =
            groups[h].iter().partition(|c| !gone.contains(c));
        groups[h] = stay;
        groups[m].extend(moving);
        groups[m].sort_unstable();
        Ok(Self {
            groups,
            parents: self.parents.clone(),
            fan_out: self.fan_out,
        })
    }

    /// Refuses a layout in which a group would hold fewer than
    /// `min_clients` clients not in `gone`, but some, and could not merge
    /// into another ([`Self::merge_target`]).
    pub(crate) fn check_mergeable(
        &self,
        min_clients: usize,
        gone: &BTreeSet<ClientId>,
    ) -> MufcResult<()> {
        self.check_sizes_but(min_clients, gone, |g| {
            self.merge_target(g, min_clients, gone).is_some()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NodeId, Topology};

    fn ids(r: std::ops::Range<u64>) -> Vec<ClientId> {
        r.map(ClientId).collect()
    }

    #[test]
    fn joins_keep_every_group_between_the_smallest_size_and_twice_it() {
        // From every trained layout of groups of `b`, clients join one by
        // one; a full group splits at once. Every group keeps at least `b`
        // clients and fewer than `2b`, every client is in one group, and
        // the groups above stay a tree.
        for b in 2..5usize {
            for trained in b as u64..(4 * b as u64) {
                let topology = Topology::Tree {
                    group_size: b,
                    fan_out: 2,
                };
                let mut layout = Layout::new(&ids(0..trained), topology);
                let none = BTreeSet::new();
                for c in trained..trained + 3 * b as u64 {
                    layout = layout.absorbing(&[ClientId(c)], &none).unwrap();
                    let g = layout.group_of(ClientId(c)).unwrap();
                    if layout.is_full(g, b, &none) {
                        layout = layout.split(g, &none).unwrap();
                    }
                    assert_eq!(layout.clients(), ids(0..c + 1));
                    for members in layout.groups() {
                        assert!((b..2 * b).contains(&members.len()), "{b} {trained} {c}");
                    }
                    let root = layout.root();
                    for n in 0..root.0 {
                        assert!(layout.parent(NodeId(n)).is_some_and(|p| p.0 > n));
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// Random joins and leaves from a layout of groups of `b` to
        /// `2b - 1`: a newcomer goes to the smallest group, a full group
        /// splits, a group a leave takes below the minimum `b` merges into
        /// one that meets it (when one can). After every step every client
        /// is in one group, and every group holds no present client or at
        /// least `b` (or the one group left below it had nowhere to go,
        /// which the federation answers by withdrawing its model).
        #[test]
        fn joins_and_leaves_keep_every_group_empty_or_of_the_smallest_size(
            b in 2usize..5,
            trained in 4u64..16,
            steps in proptest::collection::vec((proptest::bool::ANY, 0usize..64), 1..40),
        ) {
            let trained = trained.max(b as u64);
            let mut layout = Layout::new(&ids(0..trained), Topology::Groups { size: b });
            let mut gone = BTreeSet::new();
            let mut next = trained;
            for (join, pick) in steps {
                let present: Vec<ClientId> =
                    layout.clients().into_iter().filter(|c| !gone.contains(c)).collect();
                if join || present.len() <= b {
                    layout = layout.absorbing(&[ClientId(next)], &gone).unwrap();
                    let g = layout.group_of(ClientId(next)).unwrap();
                    if layout.is_full(g, b, &gone) {
                        layout = layout.split(g, &gone).unwrap();
                    }
                    next += 1;
                } else {
                    let c = present[pick % present.len()];
                    gone.insert(c);
                    let h = layout.group_of(c).unwrap();
                    if let Some(m) = layout.merge_target(h, b, &gone) {
                        layout = layout.merge(h, m, &gone).unwrap();
                    }
                }
                proptest::prop_assert_eq!(layout.clients(), ids(0..next));
                let small: Vec<usize> = (0..layout.groups().len())
                    .filter(|&g| {
                        let n = layout.groups()[g].iter().filter(|c| !gone.contains(c)).count();
                        n > 0 && n < b
                    })
                    .collect();
                for &g in &small {
                    proptest::prop_assert!(layout.merge_target(g, b, &gone).is_none());
                }
                proptest::prop_assert_eq!(small.is_empty(), layout.check_mergeable(b, &gone).is_ok());
            }
        }
    }

    #[test]
    fn a_newcomer_goes_to_the_smallest_group_counting_only_clients_present() {
        let layout = Layout::from_groups(vec![ids(0..3), ids(3..7), ids(7..9)], None).unwrap();
        let none = BTreeSet::new();
        assert_eq!(
            layout
                .absorbing(&[ClientId(20)], &none)
                .unwrap()
                .group_of(ClientId(20)),
            Some(2)
        );
        // Two leave the first group: it is the smallest now.
        let gone = BTreeSet::from([ClientId(0), ClientId(1)]);
        assert_eq!(
            layout
                .absorbing(&[ClientId(20)], &gone)
                .unwrap()
                .group_of(ClientId(20)),
            Some(0)
        );
        // A group every client of which left takes no one.
        let emptied = BTreeSet::from([ClientId(7), ClientId(8)]);
        assert_eq!(
            layout
                .absorbing(&[ClientId(20)], &emptied)
                .unwrap()
                .group_of(ClientId(20)),
            Some(0)
        );
        // Two newcomers of one request go together to the smallest.
        let two = layout
            .absorbing(&[ClientId(21), ClientId(20)], &none)
            .unwrap();
        assert_eq!(
            (two.group_of(ClientId(20)), two.group_of(ClientId(21))),
            (Some(2), Some(2))
        );
        assert!(layout.absorbing(&[ClientId(1)], &none).is_err());
        assert!(
            layout
                .absorbing(&[ClientId(20), ClientId(20)], &none)
                .is_err()
        );
    }

    #[test]
    fn a_group_below_the_minimum_merges_into_the_smallest_that_meets_it() {
        let layout =
            Layout::from_groups(vec![ids(0..3), ids(3..7), ids(7..10), ids(10..12)], None).unwrap();
        let gone = BTreeSet::from([ClientId(0)]);
        // Group 0 keeps two of three: the smallest group of at least three
        // is group 2 (group 3 holds two, group 1 four).
        assert_eq!(layout.merge_target(0, 3, &gone), Some(2));
        assert_eq!(layout.merge_target(1, 3, &gone), None);
        assert_eq!(layout.merge_target(3, 3, &gone), Some(2));
        let merged = layout.merge(0, 2, &gone).unwrap();
        assert_eq!(merged.groups()[0], [ClientId(0)]);
        assert_eq!(merged.groups()[2], [1, 2, 7, 8, 9].map(ClientId));
        assert_eq!(merged.nodes(), layout.nodes());
        assert!(layout.check_mergeable(3, &gone).is_ok());
        assert!(layout.check_sizes(3, &gone).is_err());
        // Nowhere to go: every other group is below the minimum too.
        let two = Layout::from_groups(vec![ids(0..3), ids(3..6)], None).unwrap();
        let both = BTreeSet::from([ClientId(0), ClientId(3)]);
        assert!(matches!(
            two.check_mergeable(3, &both),
            Err(MufcError::GroupTooSmall {
                group: 0,
                clients: 2,
                ..
            })
        ));
        assert!(layout.merge(1, 1, &gone).is_err());
        assert!(layout.merge(0, 9, &gone).is_err());
    }

    #[test]
    fn a_split_keeps_the_clients_that_left_in_the_half_that_stays() {
        let layout = Layout::from_groups(vec![ids(0..7)], None).unwrap();
        let gone = BTreeSet::from([ClientId(5)]);
        assert!(layout.is_full(0, 3, &gone));
        assert!(!layout.is_full(0, 4, &gone));
        let split = layout.split(0, &gone).unwrap();
        assert_eq!(
            split.groups(),
            [
                vec![0, 1, 2, 5]
                    .into_iter()
                    .map(ClientId)
                    .collect::<Vec<_>>(),
                vec![ClientId(3), ClientId(4), ClientId(6)]
            ]
        );
        assert_eq!(split.root(), NodeId(2));
        assert!(layout.split(1, &gone).is_err());
        let lone = Layout::from_groups(vec![ids(0..2)], None).unwrap();
        assert!(lone.split(0, &BTreeSet::from([ClientId(0)])).is_err());
    }

    /// A curious server that holds a group's last sum and decodes both
    /// halves of its split takes apart: the half that stays, the half
    /// that moved, and the last sum less the half that stays (the moved
    /// clients it held). Over every group of up to ten present clients,
    /// every count of them new, every smallest size and minimum: the rule
    /// never lets one of those be a sum of fewer than `min` clients (but
    /// none), keeps every new client on one side (their sum is the
    /// round's change, as the policy allowed), keeps both halves at least
    /// `smallest`; and it splits whenever any such partition exists
    /// (searched over every subset).
    #[test]
    fn a_split_shows_the_server_no_sum_of_fewer_than_the_minimum() {
        let safe = |summed: &[ClientId],
                    moving: &BTreeSet<ClientId>,
                    smallest: usize,
                    min: usize,
                    n: usize| {
            let moved_summed = summed.iter().filter(|c| moving.contains(c)).count();
            let stay_summed = summed.len() - moved_summed;
            let stays = n - moving.len();
            let at_least = |k: usize| k == 0 || k >= min;
            moving.len() >= smallest
                && stays >= smallest
                && at_least(moved_summed)
                && at_least(stay_summed)
        };
        let mut splits = 0;
        for n in 2..=10usize {
            for new_count in 0..=n {
                let summed: Vec<ClientId> =
                    (0..n - new_count).map(|c| ClientId(c as u64)).collect();
                let new: Vec<ClientId> = (n - new_count..n).map(|c| ClientId(c as u64)).collect();
                for smallest in 1..=5 {
                    for min in 1..=smallest {
                        let got = split_moving(&summed, &new, smallest, min);
                        // Every partition that moves every new client.
                        let exists = (0..1u32 << summed.len()).any(|mask| {
                            let moving: BTreeSet<ClientId> = (summed.iter().enumerate())
                                .filter(|(i, _)| mask >> i & 1 == 1)
                                .map(|(_, c)| *c)
                                .chain(new.iter().copied())
                                .collect();
                            safe(&summed, &moving, smallest, min, n)
                        });
                        let what =
                            format!("n {n}, new {new_count}, smallest {smallest}, min {min}");
                        match got {
                            Some(moving) => {
                                splits += 1;
                                assert!(
                                    safe(&summed, &moving, smallest, min, n),
                                    "{what}: {moving:?}"
                                );
                                assert!(new.iter().all(|c| moving.contains(c)), "{what}");
                            }
                            None => assert!(!exists, "{what}: a safe split exists"),
                        }
                    }
                }
            }
        }
        assert!(splits > 100, "{splits}");
    }
}
