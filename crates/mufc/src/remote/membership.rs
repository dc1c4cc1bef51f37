//! Clients that join a trained federation (issue 29): the setup with them
//! on its roster, and the check every party makes that a new setup is an
//! old one with clients admitted and nothing else changed.
//!
//! What a join may change, and what it may not: the grid, the field's
//! bound on the points (`max_points`), the clients' `k` and every other
//! resolved parameter stay those of training (a retraining on the same
//! records with the resolved configuration gives the same model); the
//! roster gains the new clients, and the sketch capacity `client_k` bins
//! for each, so the next sum is a whole one at the new capacity. With
//! groups, the new clients go to a group (`Layout::absorbing`), and in
//! one process a group grown full splits in two (`RemoteSetup::split`);
//! across processes groups do not split (the group grows), and a client
//! with no history checks the groups by the topology with the clients
//! admitted since anywhere (`Agreement::admitted`).

use std::collections::BTreeSet;

use super::RemoteSetup;
use crate::ids::in_order;
use crate::{ClientId, Layout, MufcError, MufcResult};

impl RemoteSetup {
    /// The setup with the clients `joining` on the roster and `client_k`
    /// more bins of sketch capacity for each, and with groups all in the
    /// group with the fewest clients ([`Layout::absorbing`]); every other
    /// part unchanged.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoClients`] for none; [`MufcError::DuplicateClient`]
    /// for a client already on the roster (across processes a client
    /// that left keeps its place there, so an id is never given twice) or
    /// named twice.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{Registration, RemoteSetup};
    /// use mufc::{ClientId, FederationConfig, MufcError};
    ///
    /// let regs: Vec<Registration> = (0..3).map(|i| Registration { id: ClientId(i), points: 50, dim: 2, scale: 1 }).collect();
    /// let setup = RemoteSetup::new(&FederationConfig::new(2).validate()?, &regs)?;
    /// let grown = setup.admitting(&[ClientId(9)])?;
    /// assert_eq!(grown.roster(), [0, 1, 2, 9].map(ClientId));
    /// assert_eq!(grown.capacity(), setup.capacity() + setup.config().client_k());
    /// assert_eq!(grown.config(), setup.config());
    /// assert!(matches!(setup.admitting(&[ClientId(1)]), Err(MufcError::DuplicateClient(_))));
    /// # Ok::<(), MufcError>(())
    /// ```
    pub fn admitting(&self, joining: &[ClientId]) -> MufcResult<Self> {
        self.admitting_with(joining, &BTreeSet::new())
    }

    /// [`Self::admitting`], with groups counting only the clients not in
    /// `gone` (those that left) when it picks a new client's group.
    pub(crate) fn admitting_with(
        &self,
        joining: &[ClientId],
        gone: &BTreeSet<ClientId>,
    ) -> MufcResult<Self> {
        if joining.is_empty() {
            return Err(MufcError::NoClients);
        }
        let mut roster = self.roster.clone();
        for &c in joining {
            match roster.binary_search(&c) {
                Ok(_) => return Err(MufcError::DuplicateClient(c)),
                Err(at) => roster.insert(at, c),
            }
        }
        let more = self.config.client_k().saturating_mul(joining.len());
        let layout = (self.layout.as_ref())
            .map(|l| l.absorbing(joining, gone))
            .transpose()?;
        Ok(Self {
            config: self.config.clone(),
            dim: self.dim,
            roster,
            layout,
            capacity: self.capacity.saturating_add(more),
        })
    }

    /// The setup with the clients `moving` of group `g` in a new group
    /// (`Layout::split_moving`): the roster, the capacity and every other
    /// part unchanged.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidLayout`] without groups, or as
    /// `Layout::split_moving`.
    pub(crate) fn split(&self, g: usize, moving: &BTreeSet<ClientId>) -> MufcResult<Self> {
        self.regrouped(|l| l.split_moving(g, moving))
    }

    /// The setup with the clients of group `h` not in `gone` moved to
    /// group `m` (`Layout::merge`): the roster, the capacity and every
    /// other part unchanged.
    ///
    /// # Errors
    ///
    /// [`MufcError::InvalidLayout`] without groups, or as `Layout::merge`.
    pub(crate) fn merge(&self, h: usize, m: usize, gone: &BTreeSet<ClientId>) -> MufcResult<Self> {
        self.regrouped(|l| l.merge(h, m, gone))
    }

    /// The setup with the groups `change` makes of its own, every other
    /// part unchanged; [`MufcError::InvalidLayout`] without groups.
    fn regrouped(&self, change: impl FnOnce(&Layout) -> MufcResult<Layout>) -> MufcResult<Self> {
        let layout = (self.layout.as_ref())
            .ok_or_else(|| MufcError::InvalidLayout("a federation without groups".into()))?;
        Ok(Self {
            layout: Some(change(layout)?),
            ..self.clone()
        })
    }

    /// How this setup follows from `before`, if it is `before` with
    /// clients admitted ([`Self::admitted_since`]), with one group split
    /// in two (its clients in id order, the second half a new last group)
    /// or with one group's clients moved to another (a merge), and
    /// nothing else changed: the check a client, or the dealer, makes
    /// before it takes a new setup.
    ///
    /// # Errors
    ///
    /// Why it is none of them.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{Registration, RemoteSetup};
    /// use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions, Topology};
    ///
    /// let regs: Vec<Registration> = (0..6).map(|i| Registration { id: ClientId(i), points: 50, dim: 2, scale: 1 }).collect();
    /// let config = FederationConfig::new(2)
    ///     .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
    ///     .min_clients(2)
    ///     .topology(Topology::Groups { size: 3 })
    ///     .validate()?;
    /// let setup = RemoteSetup::new(&config, &regs)?;
    /// assert!(setup.admitting(&[ClientId(6)])?.taken_since(&setup).is_ok());
    /// // Not back: a client of the federation would be missing.
    /// assert!(setup.taken_since(&setup.admitting(&[ClientId(6)])?).is_err());
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn taken_since(&self, before: &Self) -> Result<(), String> {
        self.joined_since(before).map(|_| ())
    }

    /// The clients this setup admitted since `before`, if it follows from
    /// `before` as [`Self::taken_since`] says, or with clients admitted
    /// and then one group split or merged (a member that no round told of
    /// the admission hears both at once: a group grown full by a new
    /// client splits at its first round). Empty for a split or a merge
    /// alone. A member checks each new client before it takes the setup.
    ///
    /// # Errors
    ///
    /// Why it follows in none of these ways.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{Registration, RemoteSetup};
    /// use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions, Topology};
    ///
    /// let regs: Vec<Registration> = (0..4).map(|i| Registration { id: ClientId(i), points: 50, dim: 2, scale: 1 }).collect();
    /// let config = FederationConfig::new(2)
    ///     .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
    ///     .min_clients(2)
    ///     .topology(Topology::Groups { size: 2 })
    ///     .validate()?;
    /// let setup = RemoteSetup::new(&config, &regs)?;
    /// let grown = setup.admitting(&[ClientId(4), ClientId(5)])?;
    /// assert_eq!(grown.joined_since(&setup), Ok(vec![ClientId(4), ClientId(5)]));
    /// assert_eq!(grown.joined_since(&grown), Ok(vec![]));
    /// assert!(setup.joined_since(&grown).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn joined_since(&self, before: &Self) -> Result<Vec<ClientId>, String> {
        if self.split_since(before) || self.merged_since(before) {
            return Ok(Vec::new());
        }
        let why = match self.admitted_since(before) {
            Ok(joined) => return Ok(joined),
            Err(why) => why,
        };
        let theirs = in_order(&before.roster);
        let joined: Vec<ClientId> = (in_order(&self.roster).iter().copied())
            .filter(|c| theirs.binary_search(c).is_err())
            .collect();
        let (Some(after), Some(old)) = (&self.layout, &before.layout) else {
            return Err(why);
        };
        let admitted = (!joined.is_empty())
            .then(|| before.admitting(&joined).ok())
            .flatten();
        if !admitted.is_some_and(|mid| self.same_but_groups(&mid)) {
            return Err(why);
        }
        // The groups without the new clients: the old ones split or merged.
        let stripped: Vec<Vec<ClientId>> = (after.groups().iter())
            .map(|g| g.iter().filter(|c| !joined.contains(c)).copied().collect())
            .collect();
        let split = self.split_fits(after.groups(), split_of(&stripped, old.groups()));
        if split || moved_between(&stripped, old.groups()) {
            Ok(joined)
        } else {
            Err(why)
        }
    }

    /// Whether this setup is `before` but for the groups (the same
    /// configuration, dimension, roster, capacity and fan-out).
    fn same_but_groups(&self, before: &Self) -> bool {
        let fan_out = |s: &Self| s.layout.as_ref().map(Layout::fan_out);
        self.config == before.config
            && self.dim == before.dim
            && self.roster == before.roster
            && self.capacity == before.capacity
            && fan_out(self) == fan_out(before)
    }

    /// Whether this setup is `before` with some clients of one group
    /// moved to one other group, and nothing else changed.
    fn merged_since(&self, before: &Self) -> bool {
        let (Some(after), Some(old)) = (&self.layout, &before.layout) else {
            return false;
        };
        self.same_but_groups(before) && moved_between(after.groups(), old.groups())
    }

    /// Whether this setup is `before` with one group split in two and
    /// nothing else changed.
    fn split_since(&self, before: &Self) -> bool {
        let (Some(after), Some(old)) = (&self.layout, &before.layout) else {
            return false;
        };
        self.same_but_groups(before)
            && self.split_fits(after.groups(), split_of(after.groups(), old.groups()))
    }

    /// Whether the split `split` ([`split_of`]) leaves `groups` (this
    /// setup's) both at least the minimum aggregate: the new group, the
    /// last, and the group that split, where known.
    fn split_fits(&self, groups: &[Vec<ClientId>], split: Option<Option<usize>>) -> bool {
        let min = self.config.min_clients();
        let big = |g: Option<&Vec<ClientId>>| g.is_some_and(|g| g.len() >= min);
        split.is_some_and(|g| big(groups.last()) && g.is_none_or(|g| big(groups.get(g))))
    }

    /// The clients this setup admitted into `before`, if it is `before`
    /// with clients joined and nothing else changed
    /// ([`Self::admitting`]): the check a client, or the dealer, makes
    /// before it takes a new setup. Empty for the same setup.
    ///
    /// # Errors
    ///
    /// Why it is not: another configuration or dimension, a client of
    /// `before` missing, a capacity other than `client_k` bins more for
    /// each new client, or groups other than `before`'s with each new
    /// client in one of them.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{Registration, RemoteSetup};
    /// use mufc::{ClientId, FederationConfig};
    ///
    /// let regs: Vec<Registration> = (0..3).map(|i| Registration { id: ClientId(i), points: 50, dim: 2, scale: 1 }).collect();
    /// let setup = RemoteSetup::new(&FederationConfig::new(2).validate()?, &regs)?;
    /// let grown = setup.admitting(&[ClientId(3)])?;
    /// assert_eq!(grown.admitted_since(&setup), Ok(vec![ClientId(3)]));
    /// assert!(setup.admitted_since(&grown).is_err());
    /// # Ok::<(), mufc::MufcError>(())
    /// ```
    pub fn admitted_since(&self, before: &Self) -> Result<Vec<ClientId>, String> {
        if self.config != before.config || self.dim != before.dim {
            return Err("its configuration or dimension differs from the federation's".into());
        }
        let ours = in_order(&self.roster);
        let theirs = in_order(&before.roster);
        if let Some(c) = crate::ids::first_missing(theirs.iter(), &ours) {
            return Err(format!("its roster leaves out client {c}"));
        }
        let joined: Vec<ClientId> = (ours.iter())
            .filter(|c| theirs.binary_search(c).is_err())
            .copied()
            .collect();
        let more = self.config.client_k().saturating_mul(joined.len());
        if self.capacity != before.capacity.saturating_add(more) {
            return Err(format!(
                "its sketch capacity {} is not {} plus {} bins for each of its {} new clients",
                self.capacity,
                before.capacity,
                self.config.client_k(),
                joined.len()
            ));
        }
        check_absorbed(self.layout.as_ref(), before.layout.as_ref(), &joined)?;
        Ok(joined)
    }
}

/// Whether the groups `after` are `old` with some clients of one group
/// moved to one other group, and nothing else changed.
fn moved_between(after: &[Vec<ClientId>], old: &[Vec<ClientId>]) -> bool {
    if after.len() != old.len() {
        return false;
    }
    let changed: Vec<usize> = (0..old.len()).filter(|&g| after[g] != old[g]).collect();
    let [a, b] = changed[..] else { return false };
    // One group lost clients, the other gained exactly them.
    let moved = |from: &[ClientId], to: &[ClientId], grown: &[ClientId], kept: &[ClientId]| {
        let gone: Vec<ClientId> = (from.iter())
            .filter(|c| kept.binary_search(c).is_err())
            .copied()
            .collect();
        let mut all: Vec<ClientId> = to.iter().chain(&gone).copied().collect();
        all.sort_unstable();
        !gone.is_empty() && kept.iter().all(|c| from.contains(c)) && all == grown
    };
    let (ga, gb) = (&old[a], &old[b]);
    let (na, nb) = (&after[a], &after[b]);
    moved(ga, gb, nb, na) || moved(gb, ga, na, nb)
}

/// Whether the groups `after` are `old` with one group split in two (its
/// clients in id order, the second part a new last group), and nothing
/// else changed: `Some` with the group that split, or `Some(None)` when
/// the new group is empty and no other changed (the groups of a setup
/// stripped of the clients admitted: those that moved were all new).
fn split_of(after: &[Vec<ClientId>], old: &[Vec<ClientId>]) -> Option<Option<usize>> {
    if after.len() != old.len() + 1 {
        return None;
    }
    let (new, kept) = after.split_last()?;
    let changed: Vec<usize> = (0..old.len()).filter(|&g| kept[g] != old[g]).collect();
    match changed[..] {
        [] if new.is_empty() => Some(None),
        [g] => {
            let mut rejoined: Vec<ClientId> = kept[g].iter().chain(new).copied().collect();
            rejoined.sort_unstable();
            (rejoined == old[g]).then_some(Some(g))
        }
        _ => None,
    }
}

/// Checks that the groups `after` are `before`'s with each client of
/// `joined` added to one of them, and nothing else changed.
fn check_absorbed(
    after: Option<&Layout>,
    before: Option<&Layout>,
    joined: &[ClientId],
) -> Result<(), String> {
    let (after, before) = match (after, before) {
        (None, None) => return Ok(()),
        (Some(a), Some(b)) => (a, b),
        _ => return Err("its groups differ from the federation's".into()),
    };
    if after.groups().len() != before.groups().len() || after.fan_out() != before.fan_out() {
        return Err("its groups are not the federation's with new clients".into());
    }
    for (new, old) in after.groups().iter().zip(before.groups()) {
        let kept: Vec<ClientId> = (new.iter())
            .filter(|c| joined.binary_search(c).is_err())
            .copied()
            .collect();
        if kept != *old {
            return Err("its groups move a client of the federation".into());
        }
    }
    match joined.iter().find(|c| after.group_of(**c).is_none()) {
        Some(c) => Err(format!("new client {c} is in no group")),
        None => Ok(()),
    }
}

/// Checks that the groups `after` are `trained`'s (the topology's for the
/// clients trained in the federation) after clients `joined` were added
/// to any of them and groups merged or split: every client of a group of
/// `trained` is in that group still or, if it moved, in the one group
/// the moved clients of its group all went to (a merge moves a group's
/// clients left together, a split part of them to a new group after the
/// others; merges may follow one another), and a group
/// that lost clients so holds no trained client of another group (a
/// group merges away only once too few of its clients hold points, and
/// then takes no other group's). The rule a client with no history of
/// the federation checks its groups by.
pub(super) fn check_merged_or_absorbed(
    after: &Layout,
    trained: &Layout,
    joined: &[ClientId],
) -> Result<(), String> {
    // Splits add groups (each new one after the others); none goes away
    // (a group merged away stays, emptied).
    if after.groups().len() < trained.groups().len() || after.fan_out() != trained.fan_out() {
        return Err("its groups are not the federation's in number or shape".into());
    }
    for (g, old) in trained.groups().iter().enumerate() {
        let moved_to: BTreeSet<usize> = (old.iter())
            .filter_map(|c| after.group_of(*c))
            .filter(|h| *h != g)
            .collect();
        if moved_to.len() > 1 {
            return Err(format!(
                "the clients of group {g} are spread over groups {moved_to:?}"
            ));
        }
        let taken = (after.groups().get(g).into_iter().flatten())
            .find(|c| joined.binary_search(c).is_err() && old.binary_search(c).is_err());
        if let (Some(h), Some(c)) = (moved_to.first(), taken) {
            return Err(format!(
                "group {g} moved clients to group {h} and holds client {c} of another"
            ));
        }
        if let Some(c) = old.iter().find(|c| after.group_of(**c).is_none()) {
            return Err(format!("client {c} is in no group"));
        }
    }
    let trained_clients = trained.clients();
    for (g, new) in after.groups().iter().enumerate() {
        let foreign = (new.iter()).find(|c| {
            joined.binary_search(c).is_err() && trained_clients.binary_search(c).is_err()
        });
        if let Some(c) = foreign {
            return Err(format!(
                "group {g} names client {c}, neither trained nor admitted"
            ));
        }
    }
    match joined.iter().find(|c| after.group_of(**c).is_none()) {
        Some(c) => Err(format!("new client {c} is in no group")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FederationConfig;
    use crate::remote::Registration;

    /// Clients 0 to `n` of 40 points in two dimensions.
    fn regs(n: u64) -> Vec<Registration> {
        (0..n)
            .map(|i| Registration {
                id: ClientId(i),
                points: 40,
                dim: 2,
                scale: 1,
            })
            .collect()
    }

    fn setup(n: u64) -> RemoteSetup {
        let config = FederationConfig::new(2).validate().expect("valid");
        RemoteSetup::new(&config, &regs(n)).expect("setup")
    }

    #[test]
    fn a_setup_admits_new_clients_and_nothing_else() {
        let before = setup(3);
        let after = before
            .admitting(&[ClientId(7), ClientId(5)])
            .expect("admits");
        assert_eq!(after.roster(), [0, 1, 2, 5, 7].map(ClientId));
        assert_eq!(
            after.admitted_since(&before),
            Ok(vec![ClientId(5), ClientId(7)])
        );
        assert_eq!(before.admitted_since(&before), Ok(vec![]));
        // Twice the same new client, or an old one.
        assert!(before.admitting(&[ClientId(5), ClientId(5)]).is_err());
        assert!(before.admitting(&[]).is_err());
        // A setup that drops a client, or lies about its capacity.
        assert!(before.admitted_since(&after).is_err());
        let mut lying = after;
        lying.capacity += 1;
        assert!(lying.admitted_since(&before).is_err());
        let other = setup(4);
        let mut moved = other.clone();
        moved.dim = 3;
        assert!(moved.admitted_since(&other).is_err());
    }

    /// A member that no round told of an admission hears it with the
    /// split (or merge) it led to: it takes that, naming the new clients
    /// to check, and nothing else (a setup that also moves an old
    /// client, or lies about the capacity).
    #[test]
    fn clients_admitted_then_a_split_or_a_merge_are_taken_at_once() {
        let groups = |size: usize, min: usize, n: u64| {
            let config = FederationConfig::new(2)
                .min_clients(min)
                .topology(crate::Topology::Groups { size })
                .validate()
                .expect("valid");
            RemoteSetup::new(&config, &regs(n)).expect("setup")
        };
        let none = BTreeSet::new();
        let before = groups(2, 2, 4);
        let grown = before
            .admitting(&[ClientId(4), ClientId(6)])
            .expect("admits");
        let grown = grown.admitting(&[ClientId(5)]).expect("admits");
        let g = grown
            .layout()
            .expect("groups")
            .group_of(ClientId(4))
            .expect("placed");
        let upper = (grown.layout().expect("groups").split(g, &none)).expect("splits");
        let moving: BTreeSet<ClientId> = (upper.groups().last().expect("new").iter())
            .copied()
            .collect();
        let split = grown.split(g, &moving).expect("splits");
        let joined = Ok([4, 5, 6].map(ClientId).to_vec());
        assert_eq!(split.joined_since(&before), joined);
        assert_eq!(split.joined_since(&grown), Ok(vec![]));
        assert!(before.joined_since(&split).is_err());
        // The same split with an old client swapped between two groups.
        let mut swapped = split.clone();
        let mut layout: Vec<Vec<ClientId>> = swapped.layout().expect("groups").groups().to_vec();
        let other = 1 - g.min(1);
        let (a, b) = (layout[g][0], layout[other][0]);
        layout[g][0] = b;
        layout[other][0] = a;
        for group in &mut layout {
            group.sort_unstable();
        }
        let fan_out = swapped.layout().expect("groups").fan_out();
        swapped.layout = Some(Layout::from_groups(layout, fan_out).expect("layout"));
        assert!(swapped.same_but_groups(&split));
        assert!(swapped.joined_since(&before).is_err());
        let mut lying = split;
        lying.capacity += 1;
        assert!(lying.joined_since(&before).is_err());
        // Admitted, then a group below the minimum merged.
        let before = groups(3, 2, 6);
        let grown = before.admitting(&[ClientId(6)]).expect("admits");
        let gone = BTreeSet::from([ClientId(0), ClientId(1)]);
        let merged = grown.merge(0, 1, &gone).expect("merges");
        assert_eq!(merged.joined_since(&before), Ok(vec![ClientId(6)]));
    }
}
