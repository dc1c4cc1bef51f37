//! The additions the parties' driver serves (issue 29): records for
//! clients of the federation and new clients with theirs, checked whole,
//! learned at once by the clients they name (a new client trains, every
//! member takes the setup that admits it), then served by the rounds a
//! removal runs (the lone-update policy holds them back the same way).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::time::{Duration, Instant};

use seeding::PointId;

use super::{InProcess, Waiting, as_configured, dealer_key};
use crate::remote::client::Staged;
use crate::remote::{RemoteClient, RemoteServer};
use crate::{
    AdditionRequest, ClientId, ConfigParam, MufcError, MufcResult, PendingAddition, RemovalReport,
};

/// The parties once an addition's new clients joined: the server that
/// admits them, each new client trained, and its training time.
struct Joined {
    server: RemoteServer,
    clients: Vec<RemoteClient>,
    trained: Vec<(ClientId, Duration)>,
}

/// A client an addition names, having learned: its points and
/// clustering after (staged), whether its seeding changed, and its own
/// time.
struct Learned {
    staged: Staged,
    reseeded: bool,
    own: Duration,
}

impl InProcess {
    /// Serves an addition (records that arrive, the counterpart of
    /// [`Self::remove`]) and reports it as a removal is reported: every
    /// client it names learns its records at once (the insertion
    /// counterpart of Algorithm 3 with seeding, an exact update with full
    /// K-means), then every group whose changed clients are enough for the
    /// lone-update policy runs one round, as for a removal: the server
    /// decodes the change of the sum of the updated clients' histograms
    /// (docs/threat-model.md §2.2). The report's `removed_points` counts
    /// the points removals erased in the round (none for this request);
    /// its `reseeded` names the clients whose seeding the records changed.
    ///
    /// A new client ([`AdditionRequest::new_client`]) trains on its
    /// records in the setup that admits it
    /// ([`RemoteSetup::admitting`](crate::remote::RemoteSetup::admitting)),
    /// which every member and the dealer take; the server's next round is
    /// whole, at the new capacity (`RemoteServer::admitting`). With
    /// groups the new clients go to the group with the fewest clients
    /// present, and a group grown full splits before its round
    /// (`InProcess::batches`).
    ///
    /// # Errors
    ///
    /// With nothing changed: [`MufcError::EmptyRequest`],
    /// [`MufcError::UnknownClient`] (records for a client not in the
    /// roster, or left whole), [`MufcError::MemberId`] (a new client with
    /// the id of a client on the roster),
    /// [`MufcError::EmptyClient`] (a new client with no records beside
    /// others' records), [`MufcError::Withdrawn`] (a new client for a
    /// withdrawn model), [`MufcError::RepeatedClient`], [`MufcError::AlreadyPending`] (a
    /// client whose whole removal waits, or an id a pending removal
    /// names: it names that point until its round runs),
    /// [`MufcError::HeldPoint`],
    /// [`MufcError::DimensionMismatch`], [`MufcError::OutsideBox`], and
    /// [`MufcError::InvalidConfig`] for
    /// [`ConfigParam::MaxPoints`] when the federation would hold more
    /// points than its sums were sized for at training. A round's errors
    /// come with the request accepted, as for a removal.
    pub fn add(&mut self, request: &AdditionRequest) -> MufcResult<RemovalReport> {
        let wall = Instant::now();
        let learned = self.learned(request)?;
        let joined = self.joined(request)?;
        self.last.clear();
        self.requests += 1;
        let number = self.requests;
        let mut named: BTreeSet<ClientId> = learned.keys().copied().collect();
        let mut own = BTreeMap::new();
        if let Some(joined) = joined {
            for (c, took) in &joined.trained {
                named.insert(*c);
                own.insert(*c, *took);
            }
            self.admit(joined)?;
        }
        for (id, l) in learned {
            let w = self.waiting.entry(id).or_default();
            w.reseeded |= l.reseeded;
            own.insert(id, l.own);
            let at = self.at(id)?;
            if let Some(client) = self.clients.get_mut(at) {
                client.take(l.staged);
            }
        }
        let points = (request.all_entries())
            .map(|(c, d)| (*c, d.ids().to_vec()))
            .collect();
        self.additions.push(PendingAddition { number, points });
        if let Some(w) = &self.withdrawn {
            return Ok(self.serve_withdrawn(number, (w.clone(), false), wall, &own));
        }
        self.run_or_wait(number, &named, wall, &own)
    }

    /// The additions accepted whose rounds wait, oldest first, each
    /// restricted to the clients that still wait.
    pub fn pending_additions(&self) -> &[PendingAddition] {
        &self.additions
    }

    /// The requests of either kind whose rounds wait.
    pub(crate) fn pending_count(&self) -> u64 {
        (self.pending.len() as u64).saturating_add(self.additions.len() as u64)
    }

    /// What each client `request` names would be after learning its
    /// records, once the whole request is checked: no client changes
    /// here.
    fn learned(&self, request: &AdditionRequest) -> MufcResult<BTreeMap<ClientId, Learned>> {
        if request.is_empty() {
            return Err(MufcError::EmptyRequest);
        }
        let mut named = HashSet::new();
        let mut added = 0u128;
        for (c, records) in request.entries() {
            let client = self.client(*c)?;
            if !named.insert(*c) {
                return Err(MufcError::RepeatedClient(*c));
            }
            if client.data().is_empty() {
                // A client that left whole is gone (as for a removal); one
                // whose leave waits is a conflict.
                return Err(match self.waiting.get(c).is_some_and(|w| w.left) {
                    true => MufcError::AlreadyPending {
                        client: *c,
                        id: None,
                    },
                    false => MufcError::UnknownClient(*c),
                });
            }
            // An id a pending removal erased names that point until its
            // round runs (a saved federation checks that it is gone).
            let erased = |id: &PointId| {
                (self.pending.iter())
                    .flat_map(|p| p.request.point_entries())
                    .any(|(x, ids)| x == c && ids.contains(id))
            };
            if let Some(&id) = records.ids().iter().find(|id| erased(id)) {
                return Err(MufcError::AlreadyPending {
                    client: *c,
                    id: Some(id),
                });
            }
            added = added.saturating_add(u128::from(records.total_weight()));
        }
        let joining = request.new_clients().iter();
        let joining = joining.map(|(_, d)| u128::from(d.total_weight()));
        self.check_room(joining.fold(added, u128::saturating_add))?;
        (request.entries().iter())
            .map(|(c, records)| {
                let start = Instant::now();
                let (staged, reseeded) = self.client(*c)?.learning(records)?;
                let own = start.elapsed();
                Ok((
                    *c,
                    Learned {
                        staged,
                        reseeded,
                        own,
                    },
                ))
            })
            .collect()
    }

    /// The server and the new clients once the request's new clients
    /// joined, each trained on its records, with its training time: the
    /// driver's parties unchanged (`None` when none joins).
    fn joined(&self, request: &AdditionRequest) -> MufcResult<Option<Joined>> {
        let joining = request.new_clients();
        if joining.is_empty() {
            return Ok(None);
        }
        if let Some(w) = &self.withdrawn {
            return Err(MufcError::Withdrawn { request: w.request });
        }
        let ids: Vec<ClientId> = joining.iter().map(|(c, _)| *c).collect();
        // An id on the roster (a client that left keeps its place): no
        // new client. (One the request also gives records to is unknown
        // there, refused before.)
        let taken = |c: &ClientId| self.at(*c).is_ok() || self.retired.contains(c);
        if let Some(c) = ids.iter().find(|c| taken(c)) {
            return Err(MufcError::MemberId(*c));
        }
        let mut seen = BTreeSet::new();
        if let Some(c) = ids.iter().find(|c| !seen.insert(**c)) {
            return Err(MufcError::RepeatedClient(*c));
        }
        let server = self.server.admitting(&ids, &self.emptied())?;
        let config = server.setup().config();
        let clients = joining
            .iter()
            .map(|(c, records)| {
                let start = Instant::now();
                let client = RemoteClient::joining(*c, records.clone(), server.setup())?;
                Ok((as_configured(client, config), start.elapsed()))
            })
            .collect::<MufcResult<Vec<_>>>()?;
        // Every member takes the new setup: checked here, so that taking
        // it below cannot fail half-way.
        for c in &self.clients {
            if let Some(setup) = c.setup() {
                (server.setup().admitted_since(setup)).map_err(MufcError::Remote)?;
            }
        }
        let trained = clients.iter().map(|(c, t)| (c.id(), *t)).collect();
        let clients = clients.into_iter().map(|(c, _)| c).collect();
        Ok(Some(Joined {
            server,
            clients,
            trained,
        }))
    }

    /// Admits the clients `joined` names: the dealer shares a key with
    /// each (dealt masks), every member takes the new setup, the server is
    /// the one that admits them, and each new client waits for its first
    /// round (the lone-update policy holds a lone join back: its round
    /// would show the server the new client's histogram).
    fn admit(&mut self, joined: Joined) -> MufcResult<()> {
        let Joined {
            server, clients, ..
        } = joined;
        let setup = server.setup().clone();
        let mut clients = clients;
        if let Some(dealer) = &mut self.dealer {
            for c in &mut clients {
                let key = dealer_key(c.id())?;
                dealer.admit(c.id(), key.clone(), &setup)?;
                c.pair_with_dealer_key(key);
            }
        }
        for c in &mut self.clients {
            c.adopt(&setup)?;
        }
        self.server = server;
        for c in clients {
            self.waiting.insert(c.id(), Waiting::default());
            let at = self.clients.partition_point(|x| x.id() < c.id());
            self.clients.insert(at, c);
        }
        Ok(())
    }

    /// Checks that the federation's sums, sized at training for at most
    /// `max_points` points, hold `added` more: a round past it would fail
    /// at the server once every client had learned.
    fn check_room(&self, added: u128) -> MufcResult<()> {
        let Some(max) = self.server.setup().config().max_points() else {
            return Ok(());
        };
        let held = (self.clients.iter()).fold(0u128, |n, c| {
            n.saturating_add(u128::from(c.data().total_weight()))
        });
        let after = held.saturating_add(added);
        if after > u128::from(max) {
            return Err(crate::error::config_error(
                ConfigParam::MaxPoints,
                format!(
                    "the federation would hold {after} points, beyond the bound {max} it was \
                     trained with (train it with a larger max_points to leave room for records \
                     that arrive); nothing changed"
                ),
            ));
        }
        Ok(())
    }
}
