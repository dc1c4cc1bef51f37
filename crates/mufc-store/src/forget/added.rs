//! An addition's records (issue 29), resolved against the state before
//! anything changes: each client by the name the store knows, each record
//! new to the store (not held, not forgotten: a forgotten record never
//! comes back silently), numbered on from its client's points.

use std::collections::HashSet;

use nalgebra::DMatrix;
use rusqlite::Connection;
use seeding::{Dataset, PointId};

use super::asked::{Asked, client_named};
use super::job::{Job, empty, plural};
use crate::error::StoreError;
use crate::handle::Store;
use crate::record::{ClientName, RecordId};
use crate::reports::ForgetReport;
use crate::state::State;
use crate::tombstone::lookup;
use crate::types::{ClientRecords, OnForgotten};
use mufc::{AdditionRequest, ClientId};

impl Store {
    /// Adds records to clients of the store (records that arrive, issue
    /// 29) in one request, committed in one transaction before this
    /// returns: each client learns its records at once (its points,
    /// seeding and histogram are rewritten with them), and the model
    /// update follows unless the privacy policy defers it, exactly as for
    /// [`Self::forget`] (the round is a removal's: the server decodes the
    /// change of the sum of the updated clients' histograms,
    /// docs/threat-model.md §2.2; the deadline applies, from the
    /// addition's time). After any sequence of additions and removals,
    /// the model equals training on the records the store holds, which
    /// [`Self::verify`] checks.
    ///
    /// Each [`ClientRecords`] names a client the store holds and gives its
    /// new records with their ids, in the model's coordinates (those
    /// [`Self::fit`] took; a store that keeps a map of the data's
    /// coordinates, [`Self::transform`], expects them mapped). The store
    /// numbers the new points on from the client's own. What training
    /// fixed stays: the grid's box, the dimension, and the bound on
    /// points ([`FederationConfig::max_points`](mufc::FederationConfig::max_points)).
    ///
    /// # Errors
    ///
    /// With nothing changed: [`StoreError::RecordHeld`] for a record id
    /// the store holds, [`StoreError::Forgotten`] for records it forgot
    /// (with [`OnForgotten::Refuse`], or when every record is one),
    /// [`StoreError::DuplicateRecord`], [`StoreError::DuplicateClient`],
    /// [`StoreError::UnknownClient`], [`StoreError::ClientForgotten`],
    /// and [`StoreError::Mufc`] for what the federation refuses (a point
    /// outside the box, of another dimension, past the bound on points,
    /// no record at all).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    /// use mufc_store::{ClientName, ClientRecords, FitOptions, OnForgotten, RecordId, Store, StoreError};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let clients: Vec<Dataset> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)))
    ///     .collect::<Result<_, _>>()?;
    /// let dir = tempfile::tempdir()?;
    /// // Room for records that arrive: the sums are sized at training.
    /// let config = FederationConfig::new(2).gamma(0.1).max_points(200).validate()?;
    /// let (mut store, _) = Store::fit(dir.path().join("m.mufc"), ClientRecords::numbered(clients), &config, &FitOptions::new())?;
    /// let new = |client: &str, id: &str, x: f64| -> Result<ClientRecords, Box<dyn std::error::Error>> {
    ///     let d = Dataset::new(DMatrix::from_column_slice(2, 1, &[x, 0.1]))?;
    ///     Ok(ClientRecords::new(ClientName::new(client)?, d, vec![RecordId::parse(id)?])?)
    /// };
    /// // A lone client's records wait for another client's, as a removal does.
    /// let r = store.add(&[new("0", "P-1", 0.2)?], OnForgotten::Refuse)?;
    /// assert!(r.outcome.is_deferred());
    /// assert_eq!((r.added_points, store.num_points()), (1, 91));
    /// let r = store.add(&[new("1", "P-2", -0.1)?], OnForgotten::Refuse)?;
    /// assert_eq!(r.applied_requests, vec![1, 2]);
    /// assert!(store.verify()?.differences.is_empty());
    /// // A record the store holds keeps its id.
    /// let again = store.add(&[new("2", "P-1", 0.0)?], OnForgotten::Refuse).unwrap_err();
    /// assert!(matches!(again, StoreError::RecordHeld { .. }));
    /// // A forgotten record does not come back.
    /// store.forget(&[RecordId::parse("P-2")?])?;
    /// let back = store.add(&[new("1", "P-2", -0.1)?], OnForgotten::Refuse).unwrap_err();
    /// assert!(matches!(back, StoreError::Forgotten { .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add(
        &mut self,
        clients: &[ClientRecords],
        on_forgotten: OnForgotten,
    ) -> Result<ForgetReport, StoreError> {
        self.serve(Job::Add(clients, on_forgotten, false))
            .and_then(|r| r.ok_or_else(empty))
    }

    /// [`Self::add`], where a name the store does not know is a new
    /// client that joins the federation with its records
    /// ([`AdditionRequest::new_client`]): it trains on them as it would
    /// have at training, and the round that brings it is whole, at a
    /// sketch capacity larger by the clients' `k` (the sums were sized
    /// per client at training). A join is an update like any other for
    /// the privacy policy: a lone join waits (its round would show the
    /// server the new client's whole histogram), and the deadline applies.
    /// The store numbers a new client after every client it ever held, and
    /// a name it held once (a client that left) does not come back:
    /// [`StoreError::ClientForgotten`]. With groups the new client goes to
    /// the group with the fewest clients, and a group grown full splits
    /// ([`mufc::Federation::add`]); [`Self::verify`] retrains in the
    /// store's groups.
    ///
    /// # Errors
    ///
    /// As [`Self::add`] (for a name the store held and that left,
    /// [`StoreError::ClientForgotten`]).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::FederationConfig;
    /// use mufc_store::{ClientName, ClientRecords, FitOptions, OnForgotten, RecordId, Store};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let points = |l: usize, n: usize| Dataset::new(DMatrix::from_fn(2, n, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2));
    /// let clients: Vec<Dataset> = (0..3).map(|l| points(l, 30)).collect::<Result<_, _>>()?;
    /// let dir = tempfile::tempdir()?;
    /// let config = FederationConfig::new(2).gamma(0.1).max_points(200).validate()?;
    /// let (mut store, _) = Store::fit(dir.path().join("m.mufc"), ClientRecords::numbered(clients), &config, &FitOptions::new())?;
    /// // A new site with 20 records, and one more record at site 0: one round.
    /// let ids = |p: &str, n: usize| (0..n).map(|i| RecordId::parse(&format!("{p}-{i}"))).collect::<Result<Vec<_>, _>>();
    /// let site = ClientRecords::new(ClientName::new("north")?, points(3, 20)?, ids("N", 20)?)?;
    /// let more = ClientRecords::new(ClientName::new("0")?, points(4, 1)?, ids("Z", 1)?)?;
    /// let report = store.add_admitting(&[site, more], OnForgotten::Refuse)?;
    /// assert!(!report.outcome.is_deferred());
    /// assert_eq!(store.num_points(), 111);
    /// assert!(store.client_names().iter().any(|n| n.as_str() == "north"));
    /// assert!(store.verify()?.differences.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_admitting(
        &mut self,
        clients: &[ClientRecords],
        on_forgotten: OnForgotten,
    ) -> Result<ForgetReport, StoreError> {
        self.serve(Job::Add(clients, on_forgotten, true))
            .and_then(|r| r.ok_or_else(empty))
    }
}

impl Asked {
    /// The records of `clients`, each added to its client; those the store
    /// forgot are refused, or left out with `OnForgotten::Skip`.
    pub(super) fn addition(
        tx: &Connection,
        state: &State,
        clients: &[ClientRecords],
        (on_forgotten, join): (OnForgotten, bool),
    ) -> Result<Self, StoreError> {
        let mut seen = HashSet::new();
        let mut named = HashSet::new();
        let mut skipped = Vec::new();
        let mut kept = Vec::new();
        let mut joining = Joining::after(state, join);
        for c in clients {
            let id = joining.id_of(tx, state, c)?;
            if !named.insert(id) {
                return Err(StoreError::DuplicateClient(c.name().clone()));
            }
            let keep = kept_records(tx, state, c, &mut seen, &mut skipped)?;
            kept.push((id, c, keep));
        }
        let mut joined = joining.joined;
        if seen.is_empty() {
            return Err(StoreError::Mufc(mufc::MufcError::EmptyRequest));
        }
        // Every record forgotten: nothing to add, skipped or not.
        if !skipped.is_empty()
            && (on_forgotten == OnForgotten::Refuse || seen.len() == skipped.len())
        {
            return Err(StoreError::Forgotten { records: skipped });
        }
        let mut request = AdditionRequest::new();
        let mut added = Vec::new();
        for (id, c, keep) in kept {
            if keep.is_empty() {
                continue;
            }
            let (data, ids) = numbered(state, id, c, &keep)?;
            for (&pos, point) in keep.iter().zip(ids) {
                if let Some(r) = c.records().get(pos) {
                    added.push((r.clone(), id, point));
                }
            }
            request = match joined.iter().any(|(j, _)| *j == id) {
                true => request.with_new_client(id, data),
                false => request.with_records(id, data),
            };
        }
        // A new client whose every record the store forgot brings none.
        joined.retain(|(j, _)| request.new_clients().iter().any(|(c, _)| c == j));
        let n = added.len();
        let clients = plural(request.named().count(), "client");
        Ok(Self {
            kind: "add",
            named: match joined.len() {
                0 => format!("{} of {clients}", plural(n, "record")),
                j => format!("{} of {clients}, {} new", plural(n, "record"), j),
            },
            records: n,
            addition: Some(request),
            added,
            skipped,
            joined,
            ..Self::default()
        })
    }
}

/// The clients an addition brings (with a join allowed): each name the
/// store does not know gets the next number after every client the store
/// ever held (a number names one client for good).
struct Joining {
    join: bool,
    next: u64,
    joined: Vec<(ClientId, ClientName)>,
}

impl Joining {
    fn after(state: &State, join: bool) -> Self {
        let next = (state.names.keys().chain(&state.fed.client_ids()))
            .map(|c| c.0.saturating_add(1))
            .max()
            .unwrap_or(0);
        Self {
            join,
            next,
            joined: Vec::new(),
        }
    }

    /// The client `c` names: one the store holds, or (joining) a new one.
    fn id_of(
        &mut self,
        tx: &Connection,
        state: &State,
        c: &ClientRecords,
    ) -> Result<ClientId, StoreError> {
        if self.joined.iter().any(|(_, n)| n == c.name()) {
            return Err(StoreError::DuplicateClient(c.name().clone()));
        }
        match state.by_name.get(c.name()) {
            None if self.join => {
                let id = ClientId(self.next);
                self.next = self.next.saturating_add(1);
                self.joined.push((id, c.name().clone()));
                Ok(id)
            }
            _ => client_named(tx, state, c.name().as_str()),
        }
    }
}

/// The positions of `c`'s records to add: each new to the request
/// (`seen`) and not held by the store; those it forgot go to `skipped`.
fn kept_records<'a>(
    tx: &Connection,
    state: &State,
    c: &'a ClientRecords,
    seen: &mut HashSet<&'a RecordId>,
    skipped: &mut Vec<crate::reports::Forgotten>,
) -> Result<Vec<usize>, StoreError> {
    let mut keep = Vec::new();
    for (pos, r) in c.records().iter().enumerate() {
        if !seen.insert(r) {
            return Err(StoreError::DuplicateRecord(r.clone()));
        }
        if let Some(&(held, _)) = state.records.get(r) {
            return Err(StoreError::RecordHeld {
                id: r.clone(),
                client: state.name(held),
            });
        }
        match lookup(tx, &state.secret, r, |x| {
            state.names.get(&ClientId(x)).cloned()
        })? {
            Some(f) => skipped.push(f),
            None => keep.push(pos),
        }
    }
    Ok(keep)
}

/// The points of `c` at `keep` as client `id`'s new points, numbered on
/// from the largest id the client holds or a pending removal names (an id
/// a pending removal erased names that point until its round runs), and
/// their ids.
fn numbered(
    state: &State,
    id: ClientId,
    c: &ClientRecords,
    keep: &[usize],
) -> Result<(Dataset, Vec<PointId>), StoreError> {
    let held = state.fed.client(id).map(|k| k.data().ids().to_vec());
    let pending = (state.fed.pending().iter())
        .flat_map(|p| p.request.point_entries())
        .filter(|(x, _)| *x == id)
        .flat_map(|(_, ids)| ids.iter().copied());
    let top = held.into_iter().flatten().chain(pending).map(|p| p.0).max();
    let first = top.map_or(0, |t| t.saturating_add(1));
    let ids: Vec<PointId> = (0u64..)
        .take(keep.len())
        .map(|i| PointId(first.saturating_add(i)))
        .collect();
    let d = c.data();
    let mut coords = Vec::with_capacity(keep.len().saturating_mul(d.dim()));
    for &pos in keep {
        coords.extend_from_slice(d.point(pos));
    }
    let weights = keep.iter().map(|&pos| d.weight(pos)).collect();
    let points = DMatrix::from_column_slice(d.dim(), keep.len(), &coords);
    let data =
        Dataset::with_weights(points, ids.clone(), weights).map_err(mufc::MufcError::from)?;
    Ok((data, ids))
}
