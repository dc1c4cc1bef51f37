//! Distributing a data set over clients (Appendix M.1 of the paper and the
//! `split_data` function of its reference implementation): i.i.d., non-i.i.d.
//! with at most K' clusters per client, or by a client column of the input.
//!
//! The i.i.d. and non-i.i.d. rules work from a labelling of the points: the
//! true labels of synthetic data, or else a centralized K-means labelling
//! ([`crate::central::kmeans_labels`]), as the reference does.

use nalgebra::DMatrix;
use rand::Rng;
use seeding::{Dataset, PointId};

use crate::CliError;
use crate::random::{below, shuffle};

/// How many random non-i.i.d. splits are tried before giving up (see
/// [`Split::non_iid`]).
pub const NON_IID_ATTEMPTS: usize = 100;

/// An assignment of point positions `0..n` to clients: every point to
/// exactly one client, every client at least one point.
///
/// # Example
///
/// ```
/// use mufc_cli::split::Split;
///
/// let labels = [0, 0, 0, 0, 1, 1, 1, 1];
/// let s = Split::iid(&labels, 2, &mut rand::rng())?;
/// assert_eq!(s.sizes(), vec![4, 4]);
/// let client_of = s.client_of(labels.len())?;
/// for client in 0..2 {
///     // Two points of each cluster on each client.
///     let mine = (0..8).filter(|&p| client_of[p] == client && labels[p] == 0);
///     assert_eq!(mine.count(), 2);
/// }
/// # Ok::<(), mufc_cli::CliError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Split {
    clients: Vec<Vec<usize>>,
}

impl Split {
    /// The split named by a client column: point `i` goes to client
    /// `client_of[i]`.
    ///
    /// # Errors
    ///
    /// [`CliError::NoData`] without points, [`CliError::EmptyClient`] when
    /// an index below the largest names no point.
    pub fn by_client(client_of: &[usize]) -> Result<Self, CliError> {
        let count = client_of
            .iter()
            .max()
            .map(|&m| m + 1)
            .ok_or(CliError::NoData("the data has no points"))?;
        let mut clients = vec![Vec::new(); count];
        for (p, &c) in client_of.iter().enumerate() {
            clients[c].push(p);
        }
        Self::checked(clients)
    }

    /// The i.i.d. split: the points of each cluster, in an order shuffled
    /// with `rng`, are dealt out evenly, so that every client gets
    /// `floor(n_c / L)` or `ceil(n_c / L)` points of cluster `c`.
    ///
    /// The reference gives `floor(n_c / L)` points to each of the first
    /// `L - 1` clients and the remainder to the last; we spread the
    /// remainder instead, one point each to the clients next in a rotation
    /// that continues from cluster to cluster (so client sizes differ by at
    /// most one). When `L` divides every cluster size, as for the paper's
    /// Gaussian data (3000 points per cluster, 100 clients), both rules
    /// give the same sizes.
    ///
    /// # Errors
    ///
    /// [`CliError::InvalidParameter`] for zero clients,
    /// [`CliError::ClientsExceedPoints`] for more clients than points,
    /// [`CliError::NoData`] without points.
    pub fn iid<R: Rng + ?Sized>(
        labels: &[usize],
        clients: usize,
        rng: &mut R,
    ) -> Result<Self, CliError> {
        check_counts(labels.len(), clients)?;
        let mut out = vec![Vec::new(); clients];
        let mut next = 0;
        for mut members in by_cluster(labels) {
            shuffle(&mut members, rng);
            let each = members.len() / clients;
            let extra = members.len() % clients;
            let mut it = members.into_iter();
            for (i, client) in out.iter_mut().enumerate() {
                let gets_extra = (i + clients - next) % clients < extra;
                client.extend(it.by_ref().take(each + usize::from(gets_extra)));
            }
            next = (next + extra) % clients;
        }
        Self::checked(out)
    }

    /// The non-i.i.d. split of the reference implementation, in which each
    /// client holds points of at most `k_prime` (K') clusters.
    ///
    /// The exact rule, with `s = floor(n / L)` and the points of every
    /// cluster first shuffled with `rng`:
    ///
    /// 1. Clients `0..L-1` (all but the last) are filled in turn. Client
    ///    `i` draws `min(K', m)` distinct clusters uniformly at random, in
    ///    random order, from the `m` clusters that still have points. For
    ///    each drawn cluster in that order, while the client holds fewer
    ///    than `s` points, it takes the next
    ///    `t = min(r, s - size, left)` points of the cluster, where `r` is
    ///    uniform in `[max(floor(s / K') - 1, 0), s - 1]` and `left` is what
    ///    the cluster still has; a cluster that runs out is no longer drawn.
    /// 2. The last client takes every point left.
    /// 3. The split is accepted when every client has a point and the last
    ///    client's points come from at most K' clusters (the reference
    ///    asserts both and fails otherwise). A rejected split is drawn
    ///    again, with the generator's next values, up to
    ///    [`NON_IID_ATTEMPTS`] times.
    ///
    /// So the first `L - 1` clients hold at most `s` points each (exactly
    /// `s` unless their drawn clusters ran out), all clients respect K',
    /// and the accepted splits follow the reference's distribution
    /// conditioned on its assertions holding (the reference's NumPy draws
    /// are not reproduced bit for bit). The reference's lower bound
    /// `floor(s / K') - 1` is clamped at 0, where it would be -1 (when
    /// `s < K'`) and take a negative number of points.
    ///
    /// # Errors
    ///
    /// [`CliError::InvalidParameter`] for zero clients or `k_prime`;
    /// [`CliError::ClientsExceedPoints`] for more clients than points;
    /// [`CliError::KPrimeExceedsK`] for `k_prime` above K (the number of
    /// labels); [`CliError::NonIidImpossible`] when `clients * k_prime <
    /// K`, so that no split can cover every cluster;
    /// [`CliError::SplitInfeasible`] when no attempt was accepted.
    pub fn non_iid<R: Rng + ?Sized>(
        labels: &[usize],
        clients: usize,
        k_prime: usize,
        rng: &mut R,
    ) -> Result<Self, CliError> {
        check_counts(labels.len(), clients)?;
        let groups = by_cluster(labels);
        let k = groups.len();
        if k_prime == 0 {
            return Err(CliError::InvalidParameter {
                name: "K'",
                value: k_prime.to_string(),
                reason: "must be at least 1",
            });
        }
        if k_prime > k {
            return Err(CliError::KPrimeExceedsK {
                k_prime,
                defaulted: false,
                clusters: k,
                labelled: true,
            });
        }
        // Every cluster is on some client, and a client holds at most K'.
        if clients.saturating_mul(k_prime) < k {
            return Err(CliError::NonIidImpossible {
                clusters: k,
                clients,
                k_prime,
            });
        }
        for _ in 0..NON_IID_ATTEMPTS {
            let mut groups = groups.clone();
            for g in &mut groups {
                shuffle(g, rng);
            }
            if let Some(split) = non_iid_attempt(&groups, labels.len(), clients, k_prime, rng) {
                return Ok(split);
            }
        }
        Err(CliError::SplitInfeasible {
            k_prime,
            clients,
            attempts: NON_IID_ATTEMPTS,
        })
    }

    fn checked(clients: Vec<Vec<usize>>) -> Result<Self, CliError> {
        if let Some(client) = clients.iter().position(Vec::is_empty) {
            return Err(CliError::EmptyClient { client });
        }
        Ok(Self { clients })
    }

    /// The point positions of every client (for this module's tests).
    #[cfg(test)]
    pub(crate) fn clients(&self) -> &[Vec<usize>] {
        &self.clients
    }

    /// The number of clients L.
    pub fn num_clients(&self) -> usize {
        self.clients.len()
    }

    /// The number of points of every client.
    pub fn sizes(&self) -> Vec<usize> {
        self.clients.iter().map(Vec::len).collect()
    }

    /// The client of every point, for `n` points.
    ///
    /// # Errors
    ///
    /// [`CliError::InvalidParameter`] when the split does not cover
    /// `0..n` exactly once.
    pub fn client_of(&self, n: usize) -> Result<Vec<usize>, CliError> {
        let mut of = vec![usize::MAX; n];
        for (c, members) in self.clients.iter().enumerate() {
            for &p in members {
                match of.get_mut(p) {
                    Some(slot) if *slot == usize::MAX => *slot = c,
                    _ => {
                        return Err(CliError::InvalidParameter {
                            name: "split",
                            value: p.to_string(),
                            reason: "a point is out of range or on two clients",
                        });
                    }
                }
            }
        }
        if of.contains(&usize::MAX) {
            return Err(CliError::InvalidParameter {
                name: "split",
                value: n.to_string(),
                reason: "some point is on no client",
            });
        }
        Ok(of)
    }

    /// Every client's points as a [`Dataset`] whose ids are the points'
    /// positions in `points` (so ids are global and stable).
    ///
    /// # Errors
    ///
    /// [`CliError::InvalidParameter`] for a position outside `points`;
    /// [`CliError::Seeding`] for invalid coordinates.
    pub fn client_datasets(&self, points: &DMatrix<f64>) -> Result<Vec<Dataset>, CliError> {
        let d = points.nrows();
        self.clients
            .iter()
            .map(|members| {
                let mut coords = Vec::with_capacity(members.len() * d);
                for &p in members {
                    if p >= points.ncols() {
                        return Err(CliError::InvalidParameter {
                            name: "split",
                            value: p.to_string(),
                            reason: "a point position is outside the data",
                        });
                    }
                    coords.extend(points.column(p).iter());
                }
                let ids = members.iter().map(|&p| PointId(p as u64)).collect();
                Ok(Dataset::with_ids(
                    DMatrix::from_vec(d, members.len(), coords),
                    ids,
                )?)
            })
            .collect()
    }
}

fn check_counts(n: usize, clients: usize) -> Result<(), CliError> {
    if n == 0 {
        return Err(CliError::NoData("the data has no points"));
    }
    if clients == 0 {
        return Err(CliError::InvalidParameter {
            name: "clients",
            value: clients.to_string(),
            reason: "must be at least 1",
        });
    }
    if clients > n {
        return Err(CliError::ClientsExceedPoints { clients, points: n });
    }
    Ok(())
}

/// The positions of each label's points, labels `0..=max` (empty groups
/// for unused labels are dropped).
fn by_cluster(labels: &[usize]) -> Vec<Vec<usize>> {
    let k = labels.iter().max().map_or(0, |&m| m + 1);
    let mut groups = vec![Vec::new(); k];
    for (p, &l) in labels.iter().enumerate() {
        groups[l].push(p);
    }
    groups.retain(|g| !g.is_empty());
    groups
}

fn non_iid_attempt<R: Rng + ?Sized>(
    groups: &[Vec<usize>],
    n: usize,
    clients: usize,
    k_prime: usize,
    rng: &mut R,
) -> Option<Split> {
    let s = n / clients;
    let lo = (s / k_prime).saturating_sub(1);
    let mut used = vec![0usize; groups.len()];
    // Clusters with points left, in ascending order (as the reference's
    // list, from which exhausted clusters are removed).
    let mut valid: Vec<usize> = (0..groups.len()).collect();
    let mut out = Vec::with_capacity(clients);
    for _ in 0..clients - 1 {
        // min(K', m) distinct clusters in random order: a partial
        // Fisher-Yates shuffle of a copy of the valid list.
        let mut pool = valid.clone();
        let m = k_prime.min(pool.len());
        for i in 0..m {
            let j = i + below(rng, pool.len() - i);
            pool.swap(i, j);
        }
        let mut mine = Vec::with_capacity(s);
        for &c in &pool[..m] {
            if mine.len() >= s {
                break;
            }
            let left = groups[c].len() - used[c];
            let r = lo + below(rng, s.max(lo + 1) - lo);
            let t = r.min(s - mine.len()).min(left);
            mine.extend_from_slice(&groups[c][used[c]..used[c] + t]);
            used[c] += t;
            if used[c] == groups[c].len() {
                valid.retain(|&v| v != c);
            }
        }
        if mine.is_empty() {
            return None;
        }
        out.push(mine);
    }
    let mut last = Vec::new();
    let mut last_clusters = 0;
    for (c, g) in groups.iter().enumerate() {
        if used[c] < g.len() {
            last.extend_from_slice(&g[used[c]..]);
            last_clusters += 1;
        }
    }
    if last.is_empty() || last_clusters > k_prime {
        return None;
    }
    out.push(last);
    Some(Split { clients: out })
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    fn labels(sizes: &[usize]) -> Vec<usize> {
        sizes
            .iter()
            .enumerate()
            .flat_map(|(c, &m)| std::iter::repeat_n(c, m))
            .collect()
    }

    fn assert_partition(split: &Split, n: usize) {
        let of = split.client_of(n).unwrap();
        assert_eq!(of.len(), n);
        assert_eq!(split.sizes().iter().sum::<usize>(), n);
        assert!(split.sizes().iter().all(|&s| s > 0));
    }

    fn clusters_of(client: &[usize], labels: &[usize]) -> usize {
        client
            .iter()
            .map(|&p| labels[p])
            .collect::<HashSet<_>>()
            .len()
    }

    #[test]
    fn iid_spreads_each_cluster_evenly() {
        let lab = labels(&[30, 31, 7]);
        let split = Split::iid(&lab, 4, &mut testdata::rng("iid")).unwrap();
        assert_partition(&split, lab.len());
        for c in 0..3 {
            let per: Vec<usize> = split
                .clients()
                .iter()
                .map(|m| m.iter().filter(|&&p| lab[p] == c).count())
                .collect();
            let (lo, hi) = (per.iter().min().unwrap(), per.iter().max().unwrap());
            assert!(hi - lo <= 1, "cluster {c}: {per:?}");
        }
        let sizes = split.sizes();
        assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        // Deterministic with a seed, different with another.
        assert_eq!(
            split,
            Split::iid(&lab, 4, &mut testdata::rng("iid")).unwrap()
        );
        assert_ne!(
            split,
            Split::iid(&lab, 4, &mut testdata::rng("iid2")).unwrap()
        );
    }

    #[test]
    fn non_iid_respects_k_prime_and_sizes_on_the_paper_setting() {
        // The paper's Gaussian setting: 10 clusters of 3000, 100 clients,
        // K' = 3, so s = 300.
        let lab = labels(&[3000; 10]);
        for (seed, k_prime) in [("niid-a", 3), ("niid-b", 3), ("niid-c", 2), ("niid-d", 10)] {
            let split = Split::non_iid(&lab, 100, k_prime, &mut testdata::rng(seed)).unwrap();
            assert_partition(&split, lab.len());
            for (i, client) in split.clients().iter().enumerate() {
                assert!(clusters_of(client, &lab) <= k_prime, "client {i}");
                if i < 99 {
                    assert!(client.len() <= 300, "client {i}: {}", client.len());
                }
            }
            // Clients stop short of s only when their clusters ran out,
            // which happens only near the end of the order.
            let full = split.clients()[..99]
                .iter()
                .filter(|c| c.len() == 300)
                .count();
            println!("{seed}: K' = {k_prime}, {full} of 99 clients full");
            assert!(full >= 90, "{seed}: only {full} clients full");
        }
        assert_eq!(
            Split::non_iid(&lab, 100, 3, &mut testdata::rng("niid-a")).unwrap(),
            Split::non_iid(&lab, 100, 3, &mut testdata::rng("niid-a")).unwrap()
        );
    }

    #[test]
    fn non_iid_first_cluster_takes_at_least_the_lower_bound() {
        // With K' = 2 and s = 40, a client's first drawn cluster gives
        // r in [19, 39] points unless it runs out: a client with a single
        // cluster then has >= 19 points or drained that cluster.
        let lab = labels(&[100, 100, 100, 100]);
        let split = Split::non_iid(&lab, 10, 2, &mut testdata::rng("lower")).unwrap();
        assert_partition(&split, 400);
        for client in &split.clients()[..9] {
            assert!(clusters_of(client, &lab) <= 2);
            assert!(client.len() <= 40);
        }
    }

    #[test]
    fn bad_parameters_are_errors() {
        let lab = labels(&[5, 5]);
        let rng = &mut testdata::rng("bad");
        assert!(Split::iid(&lab, 0, rng).is_err());
        assert!(Split::iid(&lab, 11, rng).is_err());
        assert!(Split::non_iid(&lab, 2, 0, rng).is_err());
        assert!(Split::non_iid(&lab, 2, 3, rng).is_err());
        assert!(Split::iid(&[], 1, rng).is_err());
        assert!(matches!(
            Split::by_client(&[0, 2, 2]),
            Err(CliError::EmptyClient { client: 1 })
        ));
        let by = Split::by_client(&[1, 0, 1]).unwrap();
        assert_eq!(by.clients(), &[vec![1], vec![0, 2]]);
    }

    #[test]
    fn an_impossible_k_prime_is_reported_with_its_numbers() {
        // Two clients, four clusters of 10, K' = 1: two clients cover at
        // most two clusters, so no split is tried.
        let lab = labels(&[10, 10, 10, 10]);
        let err = Split::non_iid(&lab, 2, 1, &mut testdata::rng("infeasible")).unwrap_err();
        assert_eq!(
            err,
            CliError::NonIidImpossible {
                clusters: 4,
                clients: 2,
                k_prime: 1
            }
        );
        assert!(err.to_string().contains("(2 x 1 = 2 < 4)"), "{err}");
        // K' above the clusters of the labels, and more clients than points.
        let err = Split::non_iid(&labels(&[5, 5]), 2, 3, &mut testdata::rng("kp")).unwrap_err();
        assert!(
            err.to_string()
                .contains("K' = 3 exceeds the 2 clusters the labelling found"),
            "{err}"
        );
        let err = Split::iid(&labels(&[5, 5]), 11, &mut testdata::rng("n")).unwrap_err();
        assert_eq!(
            err,
            CliError::ClientsExceedPoints {
                clients: 11,
                points: 10
            }
        );
    }

    #[test]
    fn client_datasets_keep_global_ids() {
        let points = DMatrix::from_fn(2, 6, |r, c| (10 * c + r) as f64);
        let split = Split::by_client(&[0, 1, 0, 1, 0, 1]).unwrap();
        let sets = split.client_datasets(&points).unwrap();
        assert_eq!(sets[1].ids(), &[PointId(1), PointId(3), PointId(5)]);
        assert_eq!(sets[1].point(2), &[50.0, 51.0]);
    }
}
