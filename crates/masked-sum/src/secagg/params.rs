//! Protocol parameters (threshold, graph, what the server may do) and the
//! parameter finder of SecAgg+ (Bell et al. 2020).
//!
//! # The bounds the finder uses
//!
//! `n` clients, at most `A = floor(gamma n)` of them colluding with the
//! server and at most `D = floor(delta n)` dropping out; the corrupted and
//! the dropped clients are chosen independently of the random ring (the
//! ring is drawn after corruption). For a Harary graph of even degree `k`
//! on a uniformly random ring (Bell et al. 2020, section 4; the same checks
//! as FCP's `graph_parameter_finder.cc`):
//!
//! 1. **Connectivity** (security): the server must not learn a partial
//!    sum, so the honest surviving clients must stay connected. Removing
//!    nodes disconnects `H(n, k)` only if two disjoint runs of `k / 2`
//!    consecutive ring positions are all removed; there are at most
//!    `n (n - k - 1) / 2` pairs of runs, and `k` given positions are all
//!    among the `B = A + D` bad ones with probability
//!    `(B)_k / (n)_k = B! (n - k)! / ((B - k)! n!)`. The union bound must
//!    be at most `2^-(sigma + 1)`.
//! 2. **Collusion** (security): the number `C` of colluders among an
//!    honest client's `k` neighbours is hypergeometric,
//!    `HG(n - 1, A, k)`; `c` is the least value with
//!    `n Pr[C > c] <= 2^-(sigma + 1)` (a union bound over clients).
//! 3. **Threshold**: against a semi-honest server `t = c + 1` (colluders
//!    alone hold fewer than `t` shares). Against a server that may lie
//!    about who dropped (docs/threat-model.md S1b) it must not collect `t` shares of
//!    both secrets of one client by telling some holders "alive" and
//!    others "dead": with `h = k + 1` holders (the client itself holds one)
//!    of which `c` collude and answer both ways, that needs
//!    `h + c >= 2t`, so `t = floor((h + c) / 2) + 1`, i.e. `2t > h + c`.
//!    Always `t >= 2`.
//! 4. **Correctness** (failure probability): the surviving neighbours,
//!    `k - HG(n - 1, D, k)`, must number at least `t` (the client's own
//!    share is not counted: it may have dropped):
//!    `n Pr[HG(n - 1, D, k) > k - t] <= 2^-eta`.
//!
//! Tails are exact hypergeometric sums in `f64` (log-factorials), not
//! Chernoff bounds. The finder returns the least even `k` that passes; if
//! none below `n - 1` does, the complete graph, whose conditions are
//! deterministic: `c = A`, `t` as in 3 with `h = n`, and `t <= n - D`.

use serde::{Deserialize, Serialize};

use crate::error::{SumResult, invalid};

use super::graph::{GraphKind, Neighbourhoods};

/// What the server may do beyond following the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ServerModel {
    /// Follows the protocol, tries to learn from what it sees: the
    /// threshold need only exceed the colluders among a client's holders.
    SemiHonest,
    /// May also lie about who dropped (the `semi_malicious` policy of
    /// docs/threat-model.md S1b): the threshold must satisfy `2t > h + c`.
    SemiMalicious,
}

/// How the neighbourhood graph is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GraphChoice {
    /// The complete graph.
    Complete,
    /// A Harary graph of this even degree on a random ring.
    Harary {
        /// Neighbours per client.
        degree: usize,
    },
}

/// The parameters of one secure aggregation.
///
/// # Example
///
/// ```
/// use masked_sum::secagg::params::{GraphChoice, SecAggParams, ServerModel};
///
/// // 10 clients, complete graph, one colluder: a lying server needs
/// // 2t > 10 + 1, so t = 6 is the least threshold.
/// let p = SecAggParams::new(GraphChoice::Complete, 6, 1, ServerModel::SemiMalicious);
/// assert!(p.validate(10).is_ok());
/// let weak = SecAggParams::new(GraphChoice::Complete, 5, 1, ServerModel::SemiMalicious);
/// assert!(weak.validate(10).is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecAggParams {
    /// The neighbourhood graph.
    pub graph: GraphChoice,
    /// The Shamir threshold `t`.
    pub threshold: usize,
    /// `c`: the most colluding clients among one client's holders that the
    /// parameters must tolerate.
    pub max_colluders: usize,
    /// What the server may do.
    pub model: ServerModel,
    /// The fewest clients an aggregate may contain (docs/threat-model.md §2.1: with too
    /// few, the output reveals individual inputs). At least the threshold
    /// is always enforced.
    pub min_clients: usize,
}

impl SecAggParams {
    /// Parameters with `min_clients = threshold`.
    pub fn new(
        graph: GraphChoice,
        threshold: usize,
        max_colluders: usize,
        model: ServerModel,
    ) -> Self {
        Self {
            graph,
            threshold,
            max_colluders,
            model,
            min_clients: threshold,
        }
    }

    /// The holders of each secret in a session of `clients` clients.
    pub fn holders(&self, clients: usize) -> usize {
        match self.graph {
            GraphChoice::Complete => clients,
            GraphChoice::Harary { degree } => (degree + 1).min(clients),
        }
    }

    /// Checks the parameters for a session of `clients` clients.
    ///
    /// # Errors
    ///
    /// [`SumError::InvalidParams`](crate::SumError::InvalidParams)
    /// unless `1 <= t <= h` (`h` holders per secret), `c < h`, and, for a
    /// semi-honest server, `t > c`, for a semi-malicious one `2t > h + c`
    /// (docs/threat-model.md S1b); also for an odd Harary degree.
    pub fn validate(&self, clients: usize) -> SumResult<()> {
        if let GraphChoice::Harary { degree } = self.graph
            && (degree == 0 || !degree.is_multiple_of(2))
        {
            return Err(invalid(format!(
                "Harary degree {degree} must be even and positive"
            )));
        }
        let h = self.holders(clients);
        let (t, c) = (self.threshold, self.max_colluders);
        if t == 0 || t > h {
            return Err(invalid(format!(
                "threshold {t} must be in 1..={h} (holders per secret)"
            )));
        }
        if c >= h {
            return Err(invalid(format!(
                "{c} colluders among {h} holders leave no honest one"
            )));
        }
        match self.model {
            ServerModel::SemiHonest if t <= c => Err(invalid(format!(
                "threshold {t} must exceed the {c} colluders among a client's holders"
            ))),
            ServerModel::SemiMalicious if 2 * t <= h + c => Err(invalid(format!(
                "a server that lies about dropouts needs 2t > h + c: t = {t}, h = {h}, c = {c}"
            ))),
            _ => Ok(()),
        }
    }

    /// The neighbourhood graph for `clients` (a random ring for a Harary
    /// graph).
    ///
    /// # Errors
    ///
    /// As [`Neighbourhoods::complete`] and [`Neighbourhoods::harary`].
    pub fn graph_for<R: rand::Rng + ?Sized>(
        &self,
        clients: impl IntoIterator<Item = crate::context::ClientId>,
        rng: &mut R,
    ) -> SumResult<Neighbourhoods> {
        match self.graph {
            GraphChoice::Complete => Neighbourhoods::complete(clients),
            GraphChoice::Harary { degree } => Neighbourhoods::harary(clients, degree, rng),
        }
    }

    /// Whether `graph` has the shape these parameters ask for.
    pub(crate) fn matches(&self, graph: &Neighbourhoods) -> bool {
        match (self.graph, graph.kind()) {
            (GraphChoice::Complete, GraphKind::Complete) => true,
            (GraphChoice::Harary { degree }, GraphKind::Harary { degree: d }) => degree == d,
            // A Harary degree of n - 1 or more is the complete graph.
            (GraphChoice::Harary { degree }, GraphKind::Complete) => degree + 1 >= graph.len(),
            _ => false,
        }
    }
}

/// The inputs of the parameter finder.
///
/// # Example
///
/// ```
/// use masked_sum::secagg::params::{GraphChoice, ServerModel, ThreatModel};
///
/// let p = ThreatModel::new(1000, 0.05, 0.05, ServerModel::SemiMalicious).find()?;
/// let GraphChoice::Harary { degree } = p.graph else { panic!("1000 clients use SecAgg+") };
/// assert!(degree < 999 && 2 * p.threshold > degree + 1 + p.max_colluders);
/// # Ok::<(), masked_sum::SumError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreatModel {
    /// The number of clients `n`.
    pub clients: usize,
    /// The largest fraction `delta` of clients that drop out.
    pub dropout_rate: f64,
    /// The largest fraction `gamma` of clients that collude with the server.
    pub colluding_rate: f64,
    /// What the server may do.
    pub model: ServerModel,
    /// Security: the adversary wins with probability at most `2^-sigma`.
    pub security_bits: f64,
    /// Correctness: the protocol fails with probability at most `2^-eta`.
    pub correctness_bits: f64,
}

/// Bit-exactness margin: rates times `n` are rounded after adding it, so
/// that `0.1 * 200` is 20 and not 19.
const SMALL: f64 = 1e-12;

impl ThreatModel {
    /// A threat model with security `2^-40` and failure probability
    /// `2^-20` (FCP's defaults).
    pub fn new(clients: usize, dropout_rate: f64, colluding_rate: f64, model: ServerModel) -> Self {
        Self {
            clients,
            dropout_rate,
            colluding_rate,
            model,
            security_bits: 40.0,
            correctness_bits: 20.0,
        }
    }

    fn counts(&self) -> SumResult<(usize, usize)> {
        let ok = |r: f64| (0.0..1.0).contains(&r);
        if !ok(self.dropout_rate) || !ok(self.colluding_rate) || self.clients < 2 {
            return Err(invalid(
                "rates must be in [0, 1) and there must be two clients",
            ));
        }
        #[allow(
            clippy::cast_precision_loss,
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss
        )]
        // n <= 2^53 in practice; the products are in [0, n).
        let count = |r: f64| ((r + SMALL) * self.clients as f64).floor() as usize;
        Ok((count(self.colluding_rate), count(self.dropout_rate)))
    }

    /// The parameters for the complete graph, if any work.
    ///
    /// # Errors
    ///
    /// [`SumError::InvalidParams`](crate::SumError::InvalidParams)
    /// if no threshold is both secure and reachable.
    pub fn complete(&self) -> SumResult<SecAggParams> {
        let (a, d) = self.counts()?;
        let n = self.clients;
        let c = a.min(n - 1);
        let t = self.threshold_for(n, c);
        let p = SecAggParams::new(GraphChoice::Complete, t, c, self.model);
        if t > n.saturating_sub(d) {
            return Err(invalid(format!(
                "complete graph: threshold {t} exceeds the {} clients left after {d} dropouts",
                n - d
            )));
        }
        p.validate(n)?;
        Ok(p)
    }

    fn threshold_for(&self, holders: usize, c: usize) -> usize {
        let t = match self.model {
            ServerModel::SemiHonest => c + 1,
            ServerModel::SemiMalicious => (holders + c) / 2 + 1,
        };
        t.max(2)
    }

    /// The parameters of the least even Harary degree that meets the four
    /// conditions of the module docs, or of the complete graph if none
    /// below `n - 1` does.
    ///
    /// # Errors
    ///
    /// [`SumError::InvalidParams`](crate::SumError::InvalidParams)
    /// for rates outside `[0, 1)`, fewer than two clients, or when not even
    /// the complete graph works.
    pub fn find(&self) -> SumResult<SecAggParams> {
        let (a, d) = self.counts()?;
        let n = self.clients;
        let lf = LogFactorials::new(n);
        let ln2 = core::f64::consts::LN_2;
        #[allow(clippy::cast_precision_loss)] // n is far below 2^53
        let ln_n = (n as f64).ln();
        let sec = -(self.security_bits + 1.0) * ln2;
        let cor = -self.correctness_bits * ln2;
        let mut k = 2;
        while k + 1 < n {
            if let Some(p) = self.check_degree(&lf, n, a, d, k, ln_n, sec, cor) {
                return Ok(p);
            }
            k += 2;
        }
        self.complete()
    }

    #[allow(clippy::too_many_arguments)] // the finder's state, passed down
    fn check_degree(
        &self,
        lf: &LogFactorials,
        n: usize,
        a: usize,
        d: usize,
        k: usize,
        ln_n: f64,
        sec: f64,
        cor: f64,
    ) -> Option<SecAggParams> {
        // 1. Connectivity of the honest survivors.
        let bad = a + d;
        if k <= bad {
            #[allow(clippy::cast_precision_loss)]
            let pairs = ((n as f64) * ((n - k - 1) as f64) / 2.0).ln();
            let log_p = pairs + lf.ln(bad) + lf.ln(n - k) - lf.ln(n) - lf.ln(bad - k);
            if log_p > sec {
                return None;
            }
        }
        // 2. Colluders among the k neighbours of an honest client.
        let colluders = Hypergeometric::new(lf, n - 1, a, k);
        let c = (0..=k).find(|&c| ln_n + colluders.ln_upper_tail(c + 1) <= sec)?;
        // 3. The threshold.
        let t = self.threshold_for(k + 1, c);
        if t > k {
            return None;
        }
        // 4. Enough surviving neighbours: dropped neighbours X <= k - t.
        let dropped = Hypergeometric::new(lf, n - 1, d, k);
        if ln_n + dropped.ln_upper_tail(k - t + 1) > cor {
            return None;
        }
        let p = SecAggParams::new(GraphChoice::Harary { degree: k }, t, c, self.model);
        p.validate(n).ok().map(|()| p)
    }
}

/// `ln m!` for `m <= n`.
pub(crate) struct LogFactorials(Vec<f64>);

impl LogFactorials {
    pub(crate) fn new(n: usize) -> Self {
        let mut v = Vec::with_capacity(n + 1);
        let mut acc = 0.0;
        v.push(0.0);
        for i in 1..=n {
            #[allow(clippy::cast_precision_loss)]
            let x = i as f64;
            acc += x.ln();
            v.push(acc);
        }
        Self(v)
    }

    pub(crate) fn ln(&self, m: usize) -> f64 {
        self.0.get(m).copied().unwrap_or(f64::INFINITY)
    }

    fn ln_choose(&self, a: usize, b: usize) -> f64 {
        if b > a {
            f64::NEG_INFINITY
        } else {
            self.ln(a) - self.ln(b) - self.ln(a - b)
        }
    }
}

/// The number of marked items among `draws` drawn without replacement from
/// `population` items of which `marked` are marked.
pub(crate) struct Hypergeometric<'a> {
    lf: &'a LogFactorials,
    population: usize,
    marked: usize,
    draws: usize,
}

impl<'a> Hypergeometric<'a> {
    pub(crate) fn new(
        lf: &'a LogFactorials,
        population: usize,
        marked: usize,
        draws: usize,
    ) -> Self {
        Self {
            lf,
            population,
            marked: marked.min(population),
            draws: draws.min(population),
        }
    }

    fn ln_pmf(&self, x: usize) -> f64 {
        let lf = self.lf;
        if x > self.marked || x > self.draws || self.draws - x > self.population - self.marked {
            return f64::NEG_INFINITY;
        }
        lf.ln_choose(self.marked, x) + lf.ln_choose(self.population - self.marked, self.draws - x)
            - lf.ln_choose(self.population, self.draws)
    }

    /// `ln Pr[X >= from]` (log-sum-exp of the terms, no cancellation).
    pub(crate) fn ln_upper_tail(&self, from: usize) -> f64 {
        let top = self.draws.min(self.marked);
        if from > top {
            return f64::NEG_INFINITY;
        }
        let terms: Vec<f64> = (from..=top).map(|x| self.ln_pmf(x)).collect();
        let m = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if m == f64::NEG_INFINITY {
            return m;
        }
        m + terms.iter().map(|v| (v - m).exp()).sum::<f64>().ln()
    }
}
