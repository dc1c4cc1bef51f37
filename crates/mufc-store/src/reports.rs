//! What the store reports: a request ([`ForgetReport`]), an audit row
//! ([`AuditEntry`]), where a record is ([`RecordStatus`]), a forgotten
//! record's tombstone ([`Forgotten`]).

use std::time::Duration;

use crate::record::{ClientName, RecordId};
use mufc::RemovalReport;

/// Whether a request's model update ran.
///
/// # Example
///
/// ```
/// use mufc_store::ForgetOutcome;
///
/// assert!(!ForgetOutcome::Applied.is_deferred());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ForgetOutcome {
    /// The round ran: the model no longer counts the records.
    Applied,
    /// The records are erased from the store, but the privacy policy
    /// keeps the model update waiting for other clients' requests.
    Deferred {
        /// The clients the pending requests name, by name.
        pending_clients: Vec<ClientName>,
        /// How many the policy needs.
        needed: usize,
        /// When the update runs anyway, in seconds since the Unix epoch
        /// (the oldest pending erasure plus the store's deferral limit;
        /// see [`Store::apply_overdue`](crate::Store::apply_overdue)).
        deadline: u64,
    },
    /// The records are erased from the store, and the store serves no
    /// model: the request would have left fewer clients than the minimum
    /// aggregate (docs/threat-model.md P4), or an earlier one did (which
    /// the [`Withdrawal`](mufc::Withdrawal) names). See
    /// [`Federation::withdrawal`](mufc::Federation::withdrawal).
    Withdrawn(mufc::Withdrawal),
}

impl ForgetOutcome {
    /// Whether the model update waits.
    pub fn is_deferred(&self) -> bool {
        matches!(self, Self::Deferred { .. })
    }

    /// Whether the store serves no model after the request.
    pub fn is_withdrawn(&self) -> bool {
        matches!(self, Self::Withdrawn(_))
    }
}

/// What one request did ([`Store::forget`](crate::Store::forget),
/// [`Store::add`](crate::Store::add), a flush): returned only once it is
/// committed.
///
/// # Example
///
/// ```
/// use mufc::FederationConfig;
/// use mufc_store::{ClientRecords, FitOptions, RecordId, Store};
/// use nalgebra::DMatrix;
/// use seeding::Dataset;
///
/// let clients: Vec<Dataset> = (0..3)
///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
///     .collect::<Result<_, _>>()?;
/// let dir = tempfile::tempdir()?;
/// let config = FederationConfig::new(2).gamma(0.1).validate()?;
/// let (mut store, _) = Store::fit(dir.path().join("m.mufc"), ClientRecords::numbered(clients), &config, &FitOptions::new())?;
/// // A lone client's request: its record is erased at once, the model
/// // update waits (docs/threat-model.md U3) ...
/// let r = store.forget(&[RecordId::from(3)])?;
/// assert!(r.outcome.is_deferred());
/// assert_eq!((r.erased_points, r.removed_points), (1, 0));
/// assert_eq!(store.num_points(), 89);
/// assert_eq!((r.version_before, r.version_after), (1, 1));
/// // ... until another client's request applies both.
/// let r = store.forget(&[RecordId::from(40)])?;
/// assert_eq!(r.applied_requests, vec![1, 2]);
/// assert_eq!(r.removed_points, 2);
/// assert_eq!((r.version_before, r.version_after), (1, 2));
/// assert_eq!(r.clients[0].as_str(), "1");
/// assert!(r.centroid_shift.is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ForgetReport {
    /// The request's number (1 for the store's first request; a round
    /// that only applies pending requests has the number of the last one
    /// it applies).
    pub request: u64,
    /// Applied, or the model update deferred by the privacy policy.
    pub outcome: ForgetOutcome,
    /// The records this request named (0 for a whole client; the records
    /// added, for an addition).
    pub records: usize,
    /// The records this request added to the store (an addition's),
    /// at once whatever the outcome.
    pub added_points: usize,
    /// The records an addition left out because the store had forgotten
    /// them ([`OnForgotten::Skip`](crate::OnForgotten::Skip)).
    pub skipped: Vec<Forgotten>,
    /// The points this request erased from the store, at once whatever
    /// the outcome (a whole client's included).
    pub erased_points: usize,
    /// The clients this request named.
    pub clients: Vec<ClientName>,
    /// The requests this round applied (earlier deferred ones and this
    /// one), in order; empty when deferred.
    pub applied_requests: Vec<u64>,
    /// The points the round removed from the model, whole clients
    /// included (0 when deferred).
    pub removed_points: usize,
    /// The clients the round removed whole.
    pub removed_clients: Vec<ClientName>,
    /// The clients that reseeded (Algorithm 3).
    pub reseeded: Vec<ClientName>,
    /// How far the server's centroids moved, in the data's coordinates:
    /// the Hausdorff distance between the centroids before and after (the
    /// largest distance from a centroid of either set to the nearest of
    /// the other, so the order K-means lists them in does not matter);
    /// `None` when there is no model before or after; `Some(0.0)` when
    /// deferred.
    pub centroid_shift: Option<f64>,
    /// The model version before the request (1 after training).
    pub version_before: u64,
    /// The model version after it (one more when applied).
    pub version_after: u64,
    /// When the request was served, in seconds since the Unix epoch.
    pub time: u64,
    /// What the server learns from the round beyond the privacy policy
    /// (a round changing fewer clients than it asks: a flush, or an
    /// update past its deadline), with the clients named.
    pub privacy_warning: Option<String>,
    /// Whether the round ran because a pending update reached its
    /// deadline ([`Store::apply_overdue`](crate::Store::apply_overdue)).
    pub overdue: bool,
    /// The library's work: unlearning, the aggregation round, the server's
    /// update.
    pub apply_time: Duration,
    /// Writing and committing the transaction.
    pub commit_time: Duration,
    /// The library's report of the request (its clients by the
    /// federation's own numbers, [`ClientId`](mufc::ClientId)).
    pub removal: RemovalReport,
}

/// Whether an audited request's model update ran.
///
/// # Example
///
/// ```
/// use mufc_store::AuditOutcome;
///
/// assert_eq!(AuditOutcome::Deferred.name(), "deferred");
/// assert_eq!(AuditOutcome::from_name("applied"), Some(AuditOutcome::Applied));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditOutcome {
    /// The client's points were removed from the model in this round.
    Applied,
    /// The client's points were erased from the store; the model update
    /// waits (the privacy policy waits for other clients' requests).
    Deferred,
    /// The client's points were erased from the store, and no model
    /// counts them: the model is withdrawn (below the minimum aggregate).
    Withdrawn,
}

impl AuditOutcome {
    /// The name stored in the `audit` table.
    pub fn name(self) -> &'static str {
        match self {
            Self::Applied => "applied",
            Self::Deferred => "deferred",
            Self::Withdrawn => "withdrawn",
        }
    }

    /// The outcome named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "applied" => Some(Self::Applied),
            "deferred" => Some(Self::Deferred),
            "withdrawn" => Some(Self::Withdrawn),
            _ => None,
        }
    }
}

/// One row of the audit log ([`Store::history`](crate::Store::history)):
/// what a request, or a round, did to one client. Never coordinates,
/// never record ids: names, numbers and times.
///
/// # Example
///
/// ```
/// use mufc_store::{AuditEntry, AuditOutcome, ClientName};
///
/// let e = AuditEntry {
///     request: 3, time: 1_790_000_000, client: ClientName::new("site-4")?, points: 2,
///     whole_client: false, reseeded: false, outcome: AuditOutcome::Applied, applied: vec![2, 3],
///     erased_at: 1_789_999_000, removed_at: Some(1_790_000_000),
///     version_before: 1, version_after: 2, warning: None, added: 0,
/// };
/// assert_eq!(e.points, 2);
/// # Ok::<(), mufc_store::StoreError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditEntry {
    /// The request's number.
    pub request: u64,
    /// When the row's event happened (the request, or the round), in
    /// seconds since the Unix epoch.
    pub time: u64,
    /// The client.
    pub client: ClientName,
    /// The client's points removed (applied) or erased and waiting
    /// (deferred).
    pub points: usize,
    /// Whether the client was removed whole.
    pub whole_client: bool,
    /// Whether the client reseeded (Algorithm 3).
    pub reseeded: bool,
    /// Applied or deferred.
    pub outcome: AuditOutcome,
    /// The requests whose points of this client the round removed from
    /// the model (an earlier deferred request's points are applied by a
    /// later round); empty when deferred.
    pub applied: Vec<u64>,
    /// When the points were erased from the store (for a round applying
    /// earlier requests, the earliest of their erasures; for a row that
    /// only adds records, when they were added).
    pub erased_at: u64,
    /// When the model stopped counting them (`None` while deferred).
    pub removed_at: Option<u64>,
    /// The model version before.
    pub version_before: u64,
    /// The model version after.
    pub version_after: u64,
    /// Why the round ran despite the privacy policy, and what the server
    /// learned (a flush, a deadline).
    pub warning: Option<String>,
    /// The client's records added (applied: those of the additions the
    /// round applied; deferred: this request's). Records that arrive
    /// change the model as removals do, and wait the same way.
    pub added: usize,
}

/// Where a record is ([`Store::locate`](crate::Store::locate)).
///
/// # Example
///
/// ```
/// use mufc_store::{ClientName, RecordStatus};
///
/// let s = RecordStatus::Held { client: ClientName::new("site-1")? };
/// assert!(matches!(s, RecordStatus::Held { .. }));
/// # Ok::<(), mufc_store::StoreError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RecordStatus {
    /// A client holds it.
    Held {
        /// The client.
        client: ClientName,
    },
    /// It was forgotten (its tombstone).
    Forgotten(Forgotten),
    /// The store never held it (or was given another id).
    Unknown,
}

/// What a store knows of a forgotten record: when and by which request it
/// was erased, and when the model stopped counting it.
///
/// # Example
///
/// ```
/// use mufc_store::{Forgotten, RecordId};
///
/// let f = Forgotten {
///     id: RecordId::from(17), request: 7, erased_at: 1_790_000_000, client: None,
///     applied: Some((12, 1_790_000_100)), inherited: false,
/// };
/// assert_eq!(
///     f.to_string(),
///     "record 17 was already forgotten in request 7 at 2026-09-21 14:13:20 UTC (removed from the model in version 12)"
/// );
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forgotten {
    /// The record.
    pub id: RecordId,
    /// The request that forgot it (numbered by the store that forgot it:
    /// see [`Self::inherited`]).
    pub request: u64,
    /// When its data was erased from the store, in seconds since the Unix
    /// epoch.
    pub erased_at: u64,
    /// The client that held it, when the store still knows its name.
    pub client: Option<ClientName>,
    /// The model version that no longer counts it and when it was made
    /// (`None` while the request's model update waits).
    pub applied: Option<(u64, u64)>,
    /// Whether it was forgotten by the store this one replaced (`mufc fit
    /// --force` carries the tombstones over: a new fit may not bring the
    /// record back).
    pub inherited: bool,
}

impl std::fmt::Display for Forgotten {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "record {} was already forgotten in request {}{} at {} UTC",
            self.id,
            self.request,
            if self.inherited {
                " of the store this one replaced"
            } else {
                ""
            },
            crate::words::utc(self.erased_at)
        )?;
        match self.applied {
            _ if self.inherited => f.write_str(" (never in this store's model)"),
            Some((version, _)) => write!(f, " (removed from the model in version {version})"),
            None => write!(
                f,
                " (erased from the store; its removal from the model is pending)"
            ),
        }
    }
}
