//! Checking the claim "the model equals retraining without the forgotten
//! records" from the store alone ([`Store::verify`]).

use sha2::{Digest, Sha256};

use crate::error::StoreError;
use crate::handle::Store;
use mufc::{Client, Federation, Server};

/// The evidence [`Store::verify`] gives: what was compared and how it
/// came out, with digests that a data-protection officer can file.
///
/// # Example
///
/// See [`Store::verify`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Verification {
    /// The served model's version.
    pub model_version: u64,
    /// The points the store holds (those retraining used).
    pub points: usize,
    /// The clients the store holds.
    pub clients: usize,
    /// The requests whose model update waits, removals and additions: the
    /// served model still counts the records they erased, and not those
    /// they added, so it is not compared; the clients are.
    pub pending_requests: Vec<u64>,
    /// SHA-256 of the served model (the server's counts, centroids and
    /// weights; every node's with groups), hex.
    pub served_digest: String,
    /// SHA-256 of the retrained model, the same way.
    pub retrained_digest: String,
    /// SHA-256 of the clients' state (points' ids, seeds, cluster sizes,
    /// centroids and histograms), served and retrained, hex.
    pub clients_digest: (String, String),
    /// Every difference found, described (empty when equal).
    pub differences: Vec<String>,
    /// Why the store serves no model, if a request withdrew it: the
    /// clients are compared with their fit from scratch, and the server
    /// must hold nothing.
    pub withdrawn: Option<mufc::Withdrawal>,
}

/// What a verification concludes.
///
/// # Example
///
/// ```
/// use mufc_store::VerifyOutcome;
///
/// assert_ne!(VerifyOutcome::Equal, VerifyOutcome::Differs);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyOutcome {
    /// The served model and the clients equal retraining, bit for bit.
    Equal,
    /// The clients equal retraining; the model's update of pending
    /// requests waits, so it still counts their records.
    Pending,
    /// Something differs.
    Differs,
    /// The model was withdrawn (a request would have left fewer clients
    /// than the minimum aggregate): the clients equal their fit from
    /// scratch, and the server holds no counts and no centroids.
    Withdrawn,
}

impl Verification {
    /// The conclusion.
    pub fn outcome(&self) -> VerifyOutcome {
        if !self.differences.is_empty() {
            VerifyOutcome::Differs
        } else if self.withdrawn.is_some() {
            VerifyOutcome::Withdrawn
        } else if self.pending_requests.is_empty() {
            VerifyOutcome::Equal
        } else {
            VerifyOutcome::Pending
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn server_bytes(h: &mut Sha256, s: &Server) {
    for (bin, c) in s.counts() {
        h.update(bin.to_bytes_le());
        h.update([0xff]);
        h.update(c.to_le_bytes());
    }
    h.update(b"|model|");
    if let Some(m) = s.model() {
        for x in m.centroids().iter() {
            h.update(x.to_bits().to_le_bytes());
        }
        for w in m.sizes() {
            h.update(w.to_le_bytes());
        }
    }
}

/// The digest of a federation's model: the root's, then every node's.
fn model_digest(f: &Federation) -> String {
    let mut h = Sha256::new();
    h.update(b"mufc-model\0");
    server_bytes(&mut h, f.server());
    if let Some(layout) = f.layout() {
        for n in 0..layout.nodes() {
            if let Some(s) = f.node(mufc::NodeId(n)) {
                h.update(b"|node|");
                server_bytes(&mut h, s);
            }
        }
    }
    hex(&h.finalize())
}

fn client_bytes(h: &mut Sha256, c: &Client) {
    h.update(c.id().0.to_le_bytes());
    let mut ids: Vec<u64> = c.data().ids().iter().map(|p| p.0).collect();
    ids.sort_unstable();
    for p in ids {
        h.update(p.to_le_bytes());
    }
    h.update(b"|seeds|");
    for s in c.seed_ids() {
        h.update(s.0.to_le_bytes());
    }
    for s in c.sizes() {
        h.update(s.to_le_bytes());
    }
    for x in c.centroids().iter() {
        h.update(x.to_bits().to_le_bytes());
    }
    for (bin, n) in c.histogram() {
        h.update(bin.to_bytes_le());
        h.update([0xff]);
        h.update(n.to_le_bytes());
    }
}

fn clients_digest(clients: &[&Client]) -> String {
    let mut h = Sha256::new();
    h.update(b"mufc-clients\0");
    for c in clients {
        client_bytes(&mut h, c);
    }
    hex(&h.finalize())
}

/// Every difference between the clients `a` and `b`.
fn client_differences(a: &[&Client], b: &[&Client], out: &mut Vec<String>) {
    let ids = |v: &[&Client]| v.iter().map(|c| c.id()).collect::<Vec<_>>();
    if ids(a) != ids(b) {
        out.push(format!(
            "the clients differ: {:?} served, {:?} retrained",
            ids(a),
            ids(b)
        ));
        return;
    }
    for (x, y) in a.iter().zip(b) {
        let id = x.id();
        let mut what = Vec::new();
        if x.data().ids() != y.data().ids() {
            what.push("points");
        }
        if x.seed_ids() != y.seed_ids() {
            what.push("seeds");
        }
        if x.sizes() != y.sizes() {
            what.push("cluster sizes");
        }
        let bits = |c: &Client| {
            c.centroids()
                .iter()
                .map(|v| v.to_bits())
                .collect::<Vec<_>>()
        };
        if bits(x) != bits(y) {
            what.push("centroids");
        }
        if x.histogram() != y.histogram() {
            what.push("histogram");
        }
        if !what.is_empty() {
            out.push(format!("client {id}: {}", what.join(", ")));
        }
    }
}

/// The digest of no model.
fn empty_model_digest() -> String {
    hex(&Sha256::digest(b"mufc-model\0|model|"))
}

/// Every difference between two servers' models.
fn server_differences(what: &str, s: &Server, t: &Server, out: &mut Vec<String>) {
    if s.counts() != t.counts() {
        out.push(format!("{what}: the decoded counts"));
    }
    match (s.model(), t.model()) {
        (Some(m), Some(n)) => {
            let bits = |v: nalgebra::DMatrixView<'_, f64>| {
                v.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            };
            if bits(m.centroids()) != bits(n.centroids()) {
                out.push(format!("{what}: the centroids"));
            }
            if m.sizes() != n.sizes() {
                out.push(format!("{what}: the centroids' weights"));
            }
        }
        (None, None) => {}
        _ => out.push(format!("{what}: one has a model, the other none")),
    }
}

impl Store {
    /// Retrains from the store's remaining records with the store's
    /// configuration (its seed, grid and field: the clients' seeds derive
    /// from them) and compares the result with the served state, bit for
    /// bit: every client's points, seeds, cluster sizes, centroids and
    /// histogram, and the server's counts, centroids and weights (every
    /// node's with groups). While requests are pending the served model
    /// still counts the records they erased, and not those they added
    /// (the store holds what they ask at once, the model update waits):
    /// the clients are compared, the model is not, and the outcome says
    /// [`VerifyOutcome::Pending`].
    ///
    /// # Errors
    ///
    /// [`StoreError::Mufc`] if retraining fails (it should not: the
    /// store trained on the same data and configuration).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    /// use mufc_store::{ClientRecords, FitOptions, RecordId, Store, VerifyOutcome};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let dir = tempfile::tempdir()?;
    /// let config = FederationConfig::new(2).gamma(0.1).validate()?;
    /// let (mut store, _) = Store::fit(dir.path().join("m.mufc"), ClientRecords::numbered(clients), &config, &FitOptions::new())?;
    /// store.forget(&[RecordId::from(3), RecordId::from(40)])?;
    /// let v = store.verify()?;
    /// assert_eq!(v.outcome(), VerifyOutcome::Equal);
    /// assert_eq!(v.served_digest, v.retrained_digest);
    /// // A lone request: the model update waits, the clients are checked.
    /// store.forget(&[RecordId::from(70)])?;
    /// assert_eq!(store.verify()?.outcome(), VerifyOutcome::Pending);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn verify(&self) -> Result<Verification, StoreError> {
        let served = &self.state.fed;
        let data: Vec<_> = served
            .clients()
            .iter()
            .map(|c| (c.id(), c.data().clone()))
            .collect();
        if let Some(w) = served.withdrawal() {
            return self.verify_withdrawn(data, w);
        }
        let retrained = if data.is_empty() {
            None
        } else {
            // In the served groups: joins place new clients and split
            // full groups (docs/architecture.md), so the groups are the
            // federation's history, not the topology's drawing anew.
            Some(match served.layout() {
                Some(layout) => Federation::with_layout(data, served.config(), layout.clone())?,
                None => Federation::with_ids(data, served.config())?,
            })
        };
        let mut differences = Vec::new();
        let removals = served.pending().iter().map(|p| p.number);
        let additions = served.pending_additions().iter().map(|a| a.number);
        let mut pending: Vec<u64> = removals.chain(additions).collect();
        pending.sort_unstable();
        let (retrained_digest, retrained_clients) = match &retrained {
            Some(r) => {
                client_differences(&served.clients(), &r.clients(), &mut differences);
                if pending.is_empty() {
                    server_differences("the model", served.server(), r.server(), &mut differences);
                    if let (Some(la), Some(lb)) = (served.layout(), r.layout()) {
                        if la != lb {
                            differences.push("the groups".to_string());
                        } else {
                            for n in 0..la.nodes() {
                                let node = mufc::NodeId(n);
                                if let (Some(s), Some(t)) = (served.node(node), r.node(node)) {
                                    server_differences(
                                        &format!("the model of {node}"),
                                        s,
                                        t,
                                        &mut differences,
                                    );
                                }
                            }
                        }
                    }
                }
                (model_digest(r), clients_digest(&r.clients()))
            }
            None => {
                // Every client was removed: retraining has no model.
                if pending.is_empty() && served.server().model().is_some() {
                    differences
                        .push("the model: every client was removed, yet it has centroids".into());
                }
                (empty_model_digest(), clients_digest(&served.clients()))
            }
        };
        Ok(Verification {
            model_version: self.state.model_version,
            points: served.num_points(),
            clients: served.clients().len(),
            pending_requests: pending,
            served_digest: model_digest(served),
            retrained_digest,
            clients_digest: (clients_digest(&served.clients()), retrained_clients),
            differences,
            withdrawn: None,
        })
    }

    /// [`Self::verify`] of a store whose model was withdrawn: retraining
    /// would be refused (too few clients for an aggregate), so the
    /// clients are compared with their fit from scratch, and the server
    /// must hold no counts and no centroids.
    fn verify_withdrawn(
        &self,
        data: Vec<(mufc::ClientId, seeding::Dataset)>,
        w: &mufc::Withdrawal,
    ) -> Result<Verification, StoreError> {
        let served = &self.state.fed;
        let fitted = Federation::fit_clients(data, served.config())?;
        let mut differences = Vec::new();
        let fitted: Vec<&Client> = fitted.iter().collect();
        client_differences(&served.clients(), &fitted, &mut differences);
        if served.server().model().is_some() || !served.server().counts().is_empty() {
            differences
                .push("the model: withdrawn, yet the server holds counts or centroids".into());
        }
        Ok(Verification {
            model_version: self.state.model_version,
            points: served.num_points(),
            clients: served.clients().len(),
            pending_requests: Vec::new(),
            served_digest: model_digest(served),
            retrained_digest: empty_model_digest(),
            clients_digest: (clients_digest(&served.clients()), clients_digest(&fitted)),
            differences,
            withdrawn: Some(w.clone()),
        })
    }
}
