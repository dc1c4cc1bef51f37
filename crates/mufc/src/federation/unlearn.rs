//! Serving removal requests (Algorithm 4): the clients named unlearn at
//! once, then, when the privacy policy allows, one round of messages, the
//! server's update, the commit and the report.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::Federation;
use crate::{ClientId, MufcResult, PendingRequest, RemovalReport, RemovalRequest};

impl Federation {
    /// Serves a removal request by Algorithm 4, exactly: the clients named
    /// unlearn their points (Algorithm 3 when they run seeding; their
    /// counts always change) and clients removed whole leave, at once;
    /// then a fresh aggregation round runs over the remaining clients, the
    /// server decodes the change of the aggregate and updates its K-means.
    ///
    /// **Lone updates wait; erasure does not** (docs/threat-model.md U3).
    /// The difference of two aggregates is the change of the clients whose
    /// message changed, so a round that changes one client alone tells
    /// the server that client's change (for a removed point that is not a
    /// seed: the bin it counted in). When the request, together with the
    /// requests already pending, names fewer clients than
    /// [`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients)
    /// (default 2), it is checked in full and its points are erased from
    /// the clients at once (each named client's points, seeding and
    /// histogram are already those without them), but the round waits:
    /// the request is kept pending ([`Self::pending`]), the server's model
    /// still counts the points, and the report says so
    /// ([`RemovalOutcome::Deferred`](crate::RemovalOutcome::Deferred)).
    /// Once the pending requests name enough clients, the call that
    /// completes them runs one round for them all: its report lists every
    /// request it covers ([`RemovalReport::requests`]). [`Self::flush`]
    /// runs the round at once. A point named twice is
    /// [`MufcError::AlreadyPending`](crate::MufcError::AlreadyPending).
    /// With groups ([`Topology`](crate::Topology)) the server decodes
    /// each group's difference, so the policy holds per group: a request
    /// is applied once every group it names has enough clients named (by
    /// it and the pending requests); the round then applies the pending
    /// requests' parts in those groups too, and the parts in other groups
    /// keep waiting (a pending request may so be applied in parts, its
    /// number in the [`RemovalReport::requests`] of each round that
    /// applies one). In the plain mode of Algorithm 5 nothing waits: the
    /// server receives every client's centroids in the clear, so a round
    /// changing one client hides nothing that waiting would.
    ///
    /// **Below the minimum aggregate the model is withdrawn.** A request
    /// that would leave fewer clients than
    /// [`FederationConfig::min_clients`](crate::FederationConfig::min_clients)
    /// (in a group, with groups), but some, is served all the same: its
    /// points are erased from the clients at once, and since no aggregate
    /// of the clients left may be decoded (docs/threat-model.md P4) and the
    /// old one counts the erased points, the server drops its counts and
    /// centroids ([`RemovalOutcome::Withdrawn`](crate::RemovalOutcome::Withdrawn),
    /// [`Self::withdrawal`]). The pending requests are covered by it; every
    /// later request is served the same way, with no round.
    ///
    /// Only the clients named recompute; every remaining client sends its
    /// sketch again (the unmasked sketch of its last message, updated by
    /// the bins whose counts changed: one insert per changed bin, none for
    /// a client that did not change) masked with fresh masks: the round draws new
    /// secrets from the operating system (see
    /// [`FederationConfig::insecure_deterministic_masks`](crate::FederationConfig::insecure_deterministic_masks))
    /// and consumes its round number before masking, so that a retry after
    /// a failure, or a reloaded older save, never reuses a mask. A client all of whose
    /// points are named is removed whole. The clients are at once, and
    /// the whole federation once no request is pending, bit for bit the
    /// federation built by [`Self::with_ids`] from the remaining data with
    /// [`Self::config`].
    ///
    /// # Errors
    ///
    /// [`MufcError::EmptyRequest`](crate::MufcError::EmptyRequest),
    /// [`MufcError::UnknownClient`](crate::MufcError::UnknownClient),
    /// [`MufcError::RepeatedClient`](crate::MufcError::RepeatedClient),
    /// [`MufcError::UnknownPoint`](crate::MufcError::UnknownPoint),
    /// [`MufcError::RepeatedPoint`](crate::MufcError::RepeatedPoint),
    /// [`MufcError::AlreadyPending`](crate::MufcError::AlreadyPending) (a
    /// point or client a pending request names),
    /// [`MufcError::TooManyDropouts`](crate::MufcError::TooManyDropouts)
    /// (with [`Masking::SecAgg`](crate::Masking::SecAgg): the round's
    /// dropouts left too few clients),
    /// [`MufcError::InvalidConfig`](crate::MufcError::InvalidConfig) when
    /// no SecAgg parameters suit the remaining clients, and decoding or
    /// server errors of the lower crates. On any error nothing changes
    /// (the request is neither applied nor kept pending, its points stay,
    /// the pending ones stay), but for the round counter once the
    /// aggregation round has started.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, MufcError, RemovalOutcome, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let mut fed = Federation::new(clients, &FederationConfig::new(2).gamma(0.1).validate()?)?;
    /// // A lone client's request waits: the server would learn its change.
    /// let report = fed.remove(&RemovalRequest::points(ClientId(0), vec![PointId(3), PointId(4)]))?;
    /// assert_eq!(report.outcome, RemovalOutcome::Deferred { pending_clients: vec![ClientId(0)], needed: 2 });
    /// // The points are gone from the client at once; the model still counts them.
    /// assert_eq!(fed.client(ClientId(0)).unwrap().data().len(), 28);
    /// assert_eq!(fed.server().total_count(), 90);
    /// // A second client's request: both are applied in one round.
    /// let report = fed.remove(&RemovalRequest::points(ClientId(1), vec![PointId(0)]))?;
    /// assert_eq!(report.outcome, RemovalOutcome::Applied);
    /// assert_eq!(report.requests, vec![1, 2]);
    /// assert_eq!(report.updated_clients, vec![ClientId(0), ClientId(1)]);
    /// assert_eq!(fed.server().total_count(), 87);
    /// // An unknown point: an error, and nothing changes.
    /// let err = fed.remove(&RemovalRequest::points(ClientId(1), vec![PointId(0)])).unwrap_err();
    /// assert_eq!(err, MufcError::UnknownPoint { client: ClientId(1), id: PointId(0) });
    /// assert_eq!(fed.server().total_count(), 87);
    /// assert!(fed.pending().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn remove(&mut self, request: &RemovalRequest) -> MufcResult<RemovalReport> {
        let wall = Instant::now();
        // Check everything before any work, then unlearn on copies.
        self.check_request(request)?;
        let staged = self.stage(request)?;
        // Below the minimum aggregate no model may be served: the points
        // are erased all the same, and the model withdrawn.
        let withdrawal = match &self.withdrawn {
            Some(w) => Some(w.clone()),
            None => match self.check_remaining(&staged) {
                Ok(()) => None,
                Err(e) => Some(self.withdrawal_for(&e).ok_or(e)?),
            },
        };
        if let Some(w) = withdrawal {
            return Ok(self.serve_withdrawn(staged, w, wall));
        }
        let number = self.next_request_number();
        let needed = self.config.min_updating_clients();
        let unsent = self.unsent_with(&staged);
        let named: Vec<ClientId> = unsent.keys().copied().collect();
        let ready: BTreeSet<ClientId> = match &self.tree {
            None if self.aggregation.is_none()
                || (self.config).updates_enough(self.aggregate_clients(), named.len()) =>
            {
                named.iter().copied().collect()
            }
            None => BTreeSet::new(),
            // With groups the server decodes each group's difference: a
            // group changes in a round only with enough clients of its
            // own. The groups that have them run; the others keep waiting.
            Some(tree) => tree
                .by_group_with_size(&named)
                .into_iter()
                .filter(|(members, g)| self.config.updates_enough(*members, g.len()))
                .flat_map(|(_, g)| g)
                .collect(),
        };
        if !request.named().all(|c| ready.contains(&c)) {
            // Erased at once; the round waits.
            let own: Vec<Duration> = staged.iter().map(|s| s.own).collect();
            self.commit_staged(staged);
            self.unsent = unsent;
            self.pending.push(PendingRequest {
                number,
                request: request.clone(),
            });
            return Ok(self.deferred_report(number, named, needed, wall, &own));
        }
        let mut all = self.pending.clone();
        all.push(PendingRequest {
            number,
            request: request.clone(),
        });
        let report = self.serve(&ready, staged, unsent, number, &all, wall)?;
        self.pending = still_pending(all, |c| ready.contains(&c));
        Ok(report)
    }

    /// Applies every pending request now, in one round, however few
    /// clients they name; `None` when nothing is pending. When fewer than
    /// [`FederationConfig::min_updating_clients`](crate::FederationConfig::min_updating_clients)
    /// clients change, the report's
    /// [`privacy_warning`](RemovalReport::privacy_warning) says what the
    /// server learns (docs/threat-model.md U3).
    ///
    /// # Errors
    ///
    /// As [`Self::remove`]; on an error the requests stay pending.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let mut fed = Federation::new(clients, &FederationConfig::new(2).gamma(0.1).validate()?)?;
    /// fed.remove(&RemovalRequest::points(ClientId(2), vec![PointId(5)]))?;
    /// assert_eq!(fed.pending().len(), 1);
    /// let report = fed.flush()?.expect("a request was pending");
    /// assert!(report.lone_update);
    /// assert!(report.privacy_warning.unwrap().contains("client 2"));
    /// assert_eq!(fed.server().total_count(), 89);
    /// assert!(fed.flush()?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flush(&mut self) -> MufcResult<Option<RemovalReport>> {
        let all: BTreeSet<ClientId> = self.unsent.keys().copied().collect();
        self.flush_ready(all)
    }

    /// Applies now the pending requests' parts that name `clients`, in
    /// one round, however few clients they name (as [`Self::flush`] does
    /// all of them); `None` when no pending request names any of them. A
    /// round sends the current message of every client it includes, so
    /// it applies too the pending parts of the other clients it includes:
    /// of every client of a flat federation, of every client of the
    /// groups of `clients` with groups. This is how a deadline is kept:
    /// the requests whose model update waited too long run, the newer
    /// ones of other groups keep waiting.
    ///
    /// # Errors
    ///
    /// As [`Self::flush`].
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::{ClientId, Federation, FederationConfig, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::{Dataset, PointId};
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let mut fed = Federation::new(clients, &FederationConfig::new(2).gamma(0.1).validate()?)?;
    /// fed.remove(&RemovalRequest::points(ClientId(2), vec![PointId(5)]))?;
    /// assert!(fed.flush_clients(&[ClientId(0)])?.is_none());
    /// let report = fed.flush_clients(&[ClientId(2)])?.expect("client 2 was pending");
    /// assert_eq!(report.requests, vec![1]);
    /// assert!(fed.pending().is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flush_clients(&mut self, clients: &[ClientId]) -> MufcResult<Option<RemovalReport>> {
        if !clients.iter().any(|c| self.unsent.contains_key(c)) {
            return Ok(None);
        }
        let ready: BTreeSet<ClientId> = match &self.tree {
            None => self.unsent.keys().copied().collect(),
            Some(tree) => {
                let groups: BTreeSet<usize> = clients
                    .iter()
                    .filter_map(|c| tree.layout().group_of(*c))
                    .collect();
                self.unsent
                    .keys()
                    .copied()
                    .filter(|c| {
                        tree.layout()
                            .group_of(*c)
                            .is_some_and(|g| groups.contains(&g))
                    })
                    .collect()
            }
        };
        self.flush_ready(ready)
    }

    /// One round for the pending parts of the clients `ready`.
    fn flush_ready(&mut self, ready: BTreeSet<ClientId>) -> MufcResult<Option<RemovalReport>> {
        let wall = Instant::now();
        let Some(number) = self
            .pending
            .iter()
            .rev()
            .find(|p| p.request.named().any(|c| ready.contains(&c)))
            .map(|p| p.number)
        else {
            return Ok(None);
        };
        let all = self.pending.clone();
        let unsent = self.unsent.clone();
        let report = self.serve(&ready, Vec::new(), unsent, number, &all, wall)?;
        self.pending = still_pending(all, |c| ready.contains(&c));
        Ok(Some(report))
    }
}

/// The pending requests `all` without their parts that a round of the
/// clients `applied` accepts applied (a request is gone once every part
/// is): the one rule of the federation in one process and of the
/// parties' driver.
pub(crate) fn still_pending(
    all: Vec<PendingRequest>,
    applied: impl Fn(ClientId) -> bool,
) -> Vec<PendingRequest> {
    all.into_iter()
        .filter_map(|p| {
            let rest = p.request.restricted(|c| !applied(c));
            (!rest.is_empty()).then_some(PendingRequest {
                number: p.number,
                request: rest,
            })
        })
        .collect()
}

impl Federation {
    /// The clients of the last aggregate, when flat: those of the
    /// federation, and those that left whole with a request that waits.
    fn aggregate_clients(&self) -> usize {
        let left = self.unsent.values().filter(|u| u.left).count();
        self.clients.len() + left
    }
}

/// What the server learns from a round that changed the messages of
/// `updated` alone, beyond a policy of `needed` (docs/threat-model.md U3);
/// generic over how clients are named, so that a store names them as
/// its data does.
///
/// `None` when no client or at least `needed` clients updated.
///
/// # Example
///
/// ```
/// let w = mufc::privacy_warning(&["site-5"], 2).unwrap();
/// assert!(w.starts_with("only client site-5's message changed"));
/// assert_eq!(mufc::privacy_warning(&["a", "b"], 2), None);
/// ```
pub fn privacy_warning<C: std::fmt::Display>(updated: &[C], needed: usize) -> Option<String> {
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
