//! Groups of clients, each with its own secure aggregation (Liu et al.,
//! "Guaranteeing Data Privacy in Federated Unlearning with Dynamic User
//! Participation", Algorithms 1 and 2), sized from the collusion, dropout
//! and removal rates, with a budget of removals per group after which the
//! groups are re-formed.
//!
//! # The paper's conditions, and what is wrong with two of them
//!
//! `N` clients are cut by a random permutation into `s = floor(N / k)`
//! groups of `k` (the remainder spread at random); each group runs SecAgg+
//! with threshold `t = xi k` on a Harary graph of degree `m`. At most a
//! fraction `gamma` of all clients collude, `delta` drop out, and at most
//! `q = zeta k` members of a group are removed (unlearned) before the
//! group must be re-formed. The number of colluders `X` (dropouts `Y`) in
//! one group is hypergeometric `HG(N, gamma N, k)` (`HG(N, delta N, k)`),
//! whose tails obey Hoeffding's bound `Pr[X >= (gamma + w) k] <=
//! exp(-2 w^2 k)` (which holds for sampling without replacement too). A
//! union bound over the `N / k` groups gives the three conditions, each
//! `f(k) >= 0`:
//!
//! - **f1, Shamir security** (`X < t` in every group), `w = xi - gamma`:
//!   `f1(k) = 2 (xi - gamma)^2 k + ln k - ln N - sigma ln 2`.
//!   The paper prints `2 (gamma^2 + xi^2 - 2 xi gamma) k + ...`: the same.
//! - **f2, Shamir correctness** (at least `t` members left after `Y`
//!   dropouts and `q` removals, i.e. `Y <= k - t - q`), so
//!   `w = (k - t - q - delta k) / k = 1 - delta - xi - zeta`:
//!   `f2(k) = 2 (1 - delta - xi - zeta)^2 k + ln k - ln N - eta ln 2`,
//!   which needs `xi + zeta < 1 - delta`. The paper's proof sets
//!   `w = (delta k - k - t - q) / k`, the sign of `k - t - q` flipped, and
//!   its printed `f2 = 2 ((1 - delta)^2 + xi^2 - 2 (xi + zeta) delta +
//!   2 xi + 2 zeta) k + ...` expands (with `zeta^2` terms lost) the square
//!   of `1 - delta + xi + zeta`: the margin grows with the threshold, when
//!   a higher threshold must make correctness *harder*.
//! - **f3, connectivity** (the honest survivors of a group stay
//!   connected): disconnecting `H(k, m)` needs `m / 2` consecutive ring
//!   positions among colluders, dropouts and removed members, so
//!   `Pr[fail] <= k rho^(m / 2)` with `rho = gamma + delta + zeta`, and
//!   `f3(k) = -ln k - (m / 2) ln rho - sigma ln 2`. The paper fixes
//!   `m = ln k` and prints `f3(k) = -ln k ln(k rho) + 2 sigma ln 2`, which
//!   holds at `k = 1` (its value is `2 sigma ln 2 > 0`) although a group
//!   of one client with no neighbour has no connectivity guarantee at all
//!   (`k rho^0 = 1`). With `m = ln k` the correct condition
//!   `ln k (2 + ln rho) + 2 sigma ln 2 <= 0` holds for no `k` once
//!   `rho >= e^-2`: the degree must grow with `sigma`, not only with
//!   `ln k`. So we choose `m`: the least even
//!   `m >= 2 (sigma ln 2 + ln k) / ln(1 / rho)`, and f3 holds when that `m`
//!   fits in the group, `m <= k - 1`.
//!
//! ParGen (Algorithm 2) takes `k = max(k1, k2, k3)`, each the least `k`
//! meeting its condition, and we also require `k <= N`. On the paper's own
//! example (`N = 200`, `gamma = delta = 0.1`, `xi = 0.7`, `zeta = 0.1`,
//! `sigma = eta = 40`, where the paper reports `k = 60`) the printed
//! conditions give `k = max(41, 6, 1) = 41`, not 60, and the corrected
//! ones give no group size at all: the correctness margin
//! `1 - delta - xi - zeta = 0.1` needs `k >= 1293 > N` (see the test
//! `paper_example_does_not_reproduce`).
//!
//! The removal budget makes the paper's requirement R4 (at most `q`
//! removed per group) hold by construction instead of with probability
//! `1 - 2^-sigma`: [`Groups`] counts removals per group and re-forms all
//! groups (a fresh random partition of the remaining clients, with
//! parameters recomputed for the new `N`) before a group's count would
//! exceed `q`.

use std::collections::{BTreeMap, BTreeSet};

use rand::seq::SliceRandom;
use rand::{Rng, RngExt};
use serde::{Deserialize, Serialize};

use crate::context::ClientId;
use crate::error::{ProtocolError, SumResult, invalid};

/// The inputs of ParGen (Algorithm 2 of Liu et al.).
///
/// # Example
///
/// ```
/// use masked_sum::secagg::groups::GroupParams;
///
/// let p = GroupParams { clients: 20_000, colluding_rate: 0.05, dropout_rate: 0.05,
///     removal_rate: 0.05, threshold_rate: 0.6, security_bits: 40.0, correctness_bits: 40.0 };
/// let sizing = p.par_gen()?;
/// assert!(sizing.group_size <= 20_000 && sizing.threshold < sizing.group_size);
/// # Ok::<(), masked_sum::SumError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GroupParams {
    /// `N`, the number of clients.
    pub clients: usize,
    /// `gamma`, the largest fraction of colluding clients.
    pub colluding_rate: f64,
    /// `delta`, the largest fraction of clients that drop out.
    pub dropout_rate: f64,
    /// `zeta`, the largest fraction of a group removed before re-forming.
    pub removal_rate: f64,
    /// `xi = t / k`, the Shamir threshold rate.
    pub threshold_rate: f64,
    /// `sigma`, the statistical security parameter.
    pub security_bits: f64,
    /// `eta`, the correctness parameter.
    pub correctness_bits: f64,
}

/// The paper's ParGen with its conditions as printed (for comparison only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrintedParGen {
    /// Least `k` with the printed f1 (correct as printed).
    pub k1: usize,
    /// Least `k` with the printed f2.
    pub k2: usize,
    /// Least `k` with the printed f3.
    pub k3: usize,
    /// `max(k1, k2, k3)`.
    pub group_size: usize,
}

/// What [`GroupParams::par_gen`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupSizing {
    /// `k`, the designed group size (groups get `k` or a few more).
    pub group_size: usize,
    /// `s = floor(N / k)`.
    pub groups: usize,
    /// `t = ceil(xi k)`.
    pub threshold: usize,
    /// `m`, the even Harary degree within a group (at most `k - 1`).
    pub degree: usize,
    /// `q = floor(zeta k)`, removals per group before re-forming.
    pub removal_budget: usize,
}

#[allow(clippy::cast_precision_loss)] // group sizes are far below 2^53
fn fl(x: usize) -> f64 {
    x as f64
}

impl GroupParams {
    fn check(&self) -> SumResult<()> {
        let rate = |r: f64| (0.0..1.0).contains(&r);
        if self.clients < 2
            || !rate(self.colluding_rate)
            || !rate(self.dropout_rate)
            || !rate(self.removal_rate)
            || !rate(self.threshold_rate)
            || self.threshold_rate <= 0.0
            || self.security_bits <= 0.0
            || self.correctness_bits <= 0.0
            || self.security_bits.is_nan()
            || self.correctness_bits.is_nan()
        {
            return Err(invalid("group parameters out of range"));
        }
        Ok(())
    }

    /// f1 (Lemma 1, correct as printed): Shamir security.
    pub fn f1(&self, k: usize) -> f64 {
        let w = self.threshold_rate - self.colluding_rate;
        if w <= 0.0 {
            return f64::NEG_INFINITY;
        }
        2.0 * w * w * fl(k) + fl(k).ln()
            - fl(self.clients).ln()
            - self.security_bits * core::f64::consts::LN_2
    }

    /// f2 (Lemma 2) corrected: Shamir correctness with margin
    /// `1 - delta - xi - zeta`.
    pub fn f2(&self, k: usize) -> f64 {
        let w = 1.0 - self.dropout_rate - self.threshold_rate - self.removal_rate;
        if w <= 0.0 {
            return f64::NEG_INFINITY;
        }
        2.0 * w * w * fl(k) + fl(k).ln()
            - fl(self.clients).ln()
            - self.correctness_bits * core::f64::consts::LN_2
    }

    /// The least even Harary degree `m` with `k rho^(m/2) <= 2^-sigma`
    /// (Lemma 3 corrected; `None` if `rho = 0`, where any degree 2 works,
    /// is reported as `Some(2)`).
    pub fn degree_for(&self, k: usize) -> Option<usize> {
        let rho = self.colluding_rate + self.dropout_rate + self.removal_rate;
        if rho >= 1.0 {
            return None;
        }
        if rho <= 0.0 {
            return Some(2);
        }
        let need =
            2.0 * (self.security_bits * core::f64::consts::LN_2 + fl(k).ln()) / (1.0 / rho).ln();
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        // need is positive and small (a few hundred at most).
        let m = need.ceil().max(2.0) as usize;
        Some(m + m % 2)
    }

    /// f3 (Lemma 3) corrected: `-ln k - (m/2) ln rho - sigma ln 2` with the
    /// least degree `m` that fits in the group, or `-inf` if none fits.
    pub fn f3(&self, k: usize) -> f64 {
        let rho = self.colluding_rate + self.dropout_rate + self.removal_rate;
        match self.degree_for(k) {
            Some(m) if m < k && rho > 0.0 => {
                -fl(k).ln() - fl(m) / 2.0 * rho.ln() - self.security_bits * core::f64::consts::LN_2
            }
            Some(m) if m < k => 0.0,
            _ => f64::NEG_INFINITY,
        }
    }

    /// The printed f2 of the paper (equation 4).
    pub fn f2_printed(&self, k: usize) -> f64 {
        let (d, xi, z) = (self.dropout_rate, self.threshold_rate, self.removal_rate);
        2.0 * ((1.0 - d).powi(2) + xi * xi - 2.0 * (xi + z) * d + 2.0 * xi + 2.0 * z) * fl(k)
            + fl(k).ln()
            - fl(self.clients).ln()
            - self.correctness_bits * core::f64::consts::LN_2
    }

    /// The printed f3 of the paper (equation 5).
    pub fn f3_printed(&self, k: usize) -> f64 {
        let rho = self.colluding_rate + self.dropout_rate + self.removal_rate;
        -fl(k).ln() * (fl(k) * rho).ln() + 2.0 * self.security_bits * core::f64::consts::LN_2
    }

    fn least(&self, f: impl Fn(usize) -> f64, upto: usize) -> Option<usize> {
        (1..=upto).find(|&k| f(k) >= 0.0)
    }

    /// ParGen with the conditions as printed in the paper (searching
    /// `k <= 100 N`, as the printed conditions do not bound `k` by `N`).
    pub fn par_gen_printed(&self) -> Option<PrintedParGen> {
        let upto = self.clients.saturating_mul(100);
        let k1 = self.least(|k| self.f1(k), upto)?;
        let k2 = self.least(|k| self.f2_printed(k), upto)?;
        let k3 = self.least(|k| self.f3_printed(k), upto)?;
        Some(PrintedParGen {
            k1,
            k2,
            k3,
            group_size: k1.max(k2).max(k3),
        })
    }

    /// ParGen (Algorithm 2) with the corrected conditions f1, f2, f3 of the
    /// module docs: the least group size meeting all three, at most `N`.
    ///
    /// # Errors
    ///
    /// [`SumError::InvalidParams`](crate::SumError::InvalidParams)
    /// for rates out of range, or when no `k <= N` meets the conditions.
    pub fn par_gen(&self) -> SumResult<GroupSizing> {
        self.check()?;
        let n = self.clients;
        let k = (2..=n)
            .find(|&k| self.f1(k) >= 0.0 && self.f2(k) >= 0.0 && self.f3(k) >= 0.0)
            .ok_or_else(|| {
                invalid(format!(
                    "no group size up to N = {n} meets the security, correctness and connectivity conditions"
                ))
            })?;
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        // both products are in [0, k].
        let (threshold, removal_budget) = (
            (self.threshold_rate * fl(k)).ceil() as usize,
            (self.removal_rate * fl(k)).floor() as usize,
        );
        let degree = self.degree_for(k).unwrap_or(k - 1).min(k - 1);
        Ok(GroupSizing {
            group_size: k,
            groups: n / k,
            threshold: threshold.max(1),
            degree: degree - degree % 2,
            removal_budget,
        })
    }
}

/// What [`Groups::remove`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Removal {
    /// The client left its group, which may lose `remaining` more.
    Removed {
        /// The group.
        group: usize,
        /// Removals the group can still absorb.
        remaining: usize,
    },
    /// The group's budget was spent: all groups were re-formed.
    Reformed {
        /// The new partition's generation number.
        generation: u64,
    },
}

/// A partition of clients into groups (Algorithm 1 of Liu et al.), with a
/// per-group removal budget.
///
/// # Example
///
/// ```
/// use masked_sum::secagg::groups::{GroupParams, Groups, Removal};
///
/// let p = GroupParams { clients: 20_000, colluding_rate: 0.05, dropout_rate: 0.05,
///     removal_rate: 0.05, threshold_rate: 0.6, security_bits: 40.0, correctness_bits: 40.0 };
/// let mut rng = rand::rng();
/// let mut g = Groups::form((0..20_000).collect(), p, &mut rng)?;
/// let first = g.group_of(0).unwrap();
/// assert!(matches!(g.remove(0, &mut rng)?, Removal::Removed { group, .. } if group == first));
/// assert_eq!(g.group_of(0), None);
/// # Ok::<(), masked_sum::SumError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Groups {
    params: GroupParams,
    sizing: GroupSizing,
    members: Vec<BTreeSet<ClientId>>,
    of: BTreeMap<ClientId, usize>,
    removed: Vec<usize>,
    generation: u64,
}

impl Groups {
    /// Partitions `clients` with ParGen for `N = clients.len()`: a random
    /// permutation cut into `s` groups of `k`, the remainder assigned to
    /// random groups.
    ///
    /// # Errors
    ///
    /// As [`GroupParams::par_gen`]; [`SumError::InvalidParams`](crate::SumError::InvalidParams)
    /// for a repeated id.
    pub fn form<R: Rng + ?Sized>(
        mut clients: Vec<ClientId>,
        params: GroupParams,
        rng: &mut R,
    ) -> SumResult<Self> {
        clients.sort_unstable();
        if clients.windows(2).any(|w| w[0] == w[1]) {
            return Err(invalid("a client is listed twice"));
        }
        let mut p = params;
        p.clients = clients.len();
        let sizing = p.par_gen()?;
        let mut g = Self {
            params: p,
            sizing,
            members: Vec::new(),
            of: BTreeMap::new(),
            removed: Vec::new(),
            generation: 0,
        };
        g.partition(clients, rng);
        Ok(g)
    }

    fn partition<R: Rng + ?Sized>(&mut self, mut clients: Vec<ClientId>, rng: &mut R) {
        clients.shuffle(rng);
        let (k, s) = (self.sizing.group_size, self.sizing.groups.max(1));
        let mut members: Vec<BTreeSet<ClientId>> = vec![BTreeSet::new(); s];
        for (i, c) in clients.iter().enumerate() {
            let g = if i < k * s {
                i / k
            } else {
                rng.random_range(0..s)
            };
            members[g].insert(*c);
        }
        self.of = members
            .iter()
            .enumerate()
            .flat_map(|(g, m)| m.iter().map(move |c| (*c, g)))
            .collect();
        self.removed = vec![0; s];
        self.members = members;
    }

    /// The sizing in force.
    pub fn sizing(&self) -> &GroupSizing {
        &self.sizing
    }

    /// The parameters of one group's aggregation: the paper's
    /// `t`-out-of-`k` sharing among all members, so the complete graph on
    /// the group (which is connected whatever drops, so f3 only matters to
    /// a caller that masks along a Harary graph of degree
    /// [`GroupSizing::degree`] instead), threshold `t = ceil(xi k)` and, by
    /// f1, fewer than `t` colluders in the group. This is the semi-honest
    /// policy; the semi-malicious one needs `2t > |group| + c`, i.e. f1
    /// with `2 xi - 1` in place of `xi`.
    ///
    /// Run each group with [`run_secure_aggregation`](super::run_secure_aggregation)
    /// over its members' vectors.
    pub fn secagg_params(&self) -> super::params::SecAggParams {
        let t = self.sizing.threshold;
        super::params::SecAggParams::new(
            super::params::GraphChoice::Complete,
            t,
            t.saturating_sub(1),
            super::params::ServerModel::SemiHonest,
        )
    }

    /// The groups' members.
    pub fn groups(&self) -> &[BTreeSet<ClientId>] {
        &self.members
    }

    /// The group of a client.
    pub fn group_of(&self, id: ClientId) -> Option<usize> {
        self.of.get(&id).copied()
    }

    /// How many times the groups were re-formed.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Removes (unlearns) a client. If its group has already lost its
    /// budget of `q` members, every group is re-formed from the remaining
    /// clients (new ParGen for the new `N`, new random partition), so that
    /// no group ever runs with more than `q` removed members.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::InvalidPeers`] for
    /// an unknown client; as [`GroupParams::par_gen`] when re-forming.
    pub fn remove<R: Rng + ?Sized>(&mut self, id: ClientId, rng: &mut R) -> SumResult<Removal> {
        let Some(g) = self.of.remove(&id) else {
            return Err(crate::error::SumError::Protocol(
                ProtocolError::InvalidPeers {
                    reason: "not a member of any group",
                },
            ));
        };
        if let Some(m) = self.members.get_mut(g) {
            m.remove(&id);
        }
        let count = self.removed.get(g).copied().unwrap_or(0) + 1;
        if count <= self.sizing.removal_budget {
            if let Some(r) = self.removed.get_mut(g) {
                *r = count;
            }
            return Ok(Removal::Removed {
                group: g,
                remaining: self.sizing.removal_budget - count,
            });
        }
        let clients: Vec<ClientId> = self.of.keys().copied().collect();
        let mut p = self.params;
        p.clients = clients.len();
        self.sizing = p.par_gen()?;
        self.params = p;
        self.partition(clients, rng);
        self.generation += 1;
        Ok(Removal::Reformed {
            generation: self.generation,
        })
    }
}
