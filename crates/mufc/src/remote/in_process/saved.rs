//! The parties' state as a store keeps it: the server's part in the
//! format of a federation in one process ([`ServerSnapshot`]), the roster,
//! and each client's points and seeds; restored with every check of
//! [`Federation::from_snapshot`](crate::Federation::from_snapshot).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::{InProcess, Waiting, pair_with_a_dealer};
use crate::remote::client::SentRound;
use crate::remote::{RemoteClient, RemoteServer, RemoteSetup};
use crate::state::{RequestBook, Unsent};
use crate::{
    Channel, ClientId, ClientSnapshot, Layout, Masking, MufcResult, PersistError, ServerSnapshot,
};

/// Everything the parties' driver ([`InProcess`]) holds, in the parts a
/// store keeps apart: the server's part in the format of
/// [`Federation::server_snapshot`](crate::Federation::server_snapshot) (the model, the groups, the last
/// report, the pending requests and what the aggregate holds of their
/// clients), the roster the federation was set up for (the clients that
/// left whole included: the groups are drawn from it), each client's
/// points and seeds, and the number of requests accepted.
///
/// [`InProcess::restore`] rebuilds the parties from it with every check
/// of [`Federation::from_snapshot`](crate::Federation::from_snapshot) (the counts against the clients'
/// histograms, the pending requests against the clients, the groups
/// against the roster). What is not kept: the reports but the last (a
/// store's audit log keeps them), the training rounds' costs, the keys
/// the clients share with the dealer (drawn again), and which clients the
/// last sum held beyond the model's (a client's first ring after a
/// restore may so omit a client that left).
///
/// # Example
///
/// ```
/// use mufc::remote::{InProcess, PartiesSnapshot};
/// use mufc::{ClientId, FederationConfig, RemovalRequest};
/// use nalgebra::DMatrix;
/// use seeding::{Dataset, PointId};
///
/// let data: Vec<(ClientId, Dataset)> = (0..3)
///     .map(|l| {
///         let d = DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2);
///         Dataset::new(d).map(|d| (ClientId(l as u64), d))
///     })
///     .collect::<Result<_, _>>()?;
/// let config = FederationConfig::new(2).seed(5).validate()?;
/// let mut parties = InProcess::train(data, &config)?;
/// let saved: PartiesSnapshot = parties.snapshot()?;
/// let mut again = InProcess::restore(saved)?;
/// let request = RemovalRequest::points(ClientId(0), vec![PointId(1)])
///     .with_points(ClientId(2), vec![PointId(3)]);
/// parties.remove(&request)?;
/// again.remove(&request)?;
/// assert_eq!(again.server().server().centroids(), parties.server().server().centroids());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartiesSnapshot {
    server: ServerSnapshot,
    roster: Vec<ClientId>,
    clients: Vec<ClientSnapshot>,
    requests: u64,
    /// The setup's groups ([`RemoteSetup::layout`]): those of a layout
    /// of its own cannot be drawn from the roster again.
    layout: Option<Layout>,
}

impl PartiesSnapshot {
    /// The server's part, in the format of
    /// [`Federation::server_snapshot`](crate::Federation::server_snapshot).
    pub fn server(&self) -> &ServerSnapshot {
        &self.server
    }

    /// Each client's points and seeds, in id order (the clients that
    /// left whole hold none, and are not there).
    pub fn clients(&self) -> &[ClientSnapshot] {
        &self.clients
    }

    /// The roster, in id order.
    pub fn roster(&self) -> &[ClientId] {
        &self.roster
    }

    /// The groups the parties were set up with (`None` when flat).
    pub fn layout(&self) -> Option<&Layout> {
        self.layout.as_ref()
    }
}

impl InProcess {
    /// The parties' state as a store keeps it ([`PartiesSnapshot`]).
    ///
    /// # Errors
    ///
    /// [`MufcError::NoServerModel`](crate::MufcError::NoServerModel)
    /// before the model is trained.
    pub fn snapshot(&self) -> MufcResult<PartiesSnapshot> {
        let setup = self.server.setup();
        let server = self.server.describe(self.book(false))?;
        Ok(PartiesSnapshot {
            server: server.without_members(&self.gone()),
            roster: setup.roster().to_vec(),
            clients: self.client_parts(),
            requests: self.requests,
            layout: setup.layout().cloned(),
        })
    }

    /// The server's part of the parties' state with the training report
    /// `fit_report` ([`Federation::server_snapshot`](crate::Federation::server_snapshot)).
    pub(crate) fn server_part(&self, fit_report: &crate::FitReport) -> ServerSnapshot {
        (self.server.describe_as(self.book(false), fit_report)).without_members(&self.gone())
    }

    /// Each client's points and seeds, in id order (none of a client that
    /// left whole).
    pub(crate) fn client_parts(&self) -> Vec<ClientSnapshot> {
        (self.clients.iter())
            .filter(|c| !c.data().is_empty())
            .map(|c| (c.id(), c.data().clone(), c.seeds().to_vec()))
            .collect()
    }

    /// What the driver keeps of its requests: the number applied, the
    /// last report (every one with `whole_history`), the pending requests,
    /// what the aggregate still holds of the waiting clients, the
    /// withdrawal.
    pub(crate) fn book(&self, whole_history: bool) -> RequestBook {
        let unsent: BTreeMap<ClientId, Unsent> = (self.waiting.iter())
            .filter_map(|(&c, w)| Some((c, self.unsent(c, w)?)))
            .collect();
        let kept = self.history.last().map_or(0, |r| r.requests.len() as u64);
        let history = match whole_history {
            true => self.history.clone(),
            false => self.history.last().cloned().into_iter().collect(),
        };
        RequestBook {
            applied: (self.requests.saturating_sub(self.pending_count())).max(kept),
            history,
            pending: self.pending.clone(),
            unsent,
            withdrawn: self.withdrawn.clone(),
            additions: self.additions.clone(),
        }
    }

    /// Every client that left whole: those whose leave a round applied
    /// ([`Self::gone`]) and those a loaded file named as gone.
    pub(crate) fn left(&self) -> BTreeSet<ClientId> {
        let mut left = self.gone();
        left.extend(&self.retired);
        left
    }

    /// These parties with the clients `left` (a loaded file's) known to
    /// have left whole.
    pub(crate) fn with_left(mut self, left: Vec<ClientId>) -> Self {
        self.retired.extend(left);
        self
    }

    /// The clients whose leave a round applied: a saved state's groups
    /// no longer hold them.
    pub(crate) fn gone(&self) -> BTreeSet<ClientId> {
        (self.clients.iter())
            .filter(|c| c.data().is_empty() && !self.waiting.contains_key(&c.id()))
            .map(RemoteClient::id)
            .collect()
    }

    /// The parties of a [`PartiesSnapshot`], checked as
    /// [`Federation::from_snapshot`](crate::Federation::from_snapshot) checks its parts, and their groups
    /// against the roster's. Each client's clustering is fitted again from
    /// its points and checked against its seeds; with dealt masks the
    /// clients and the dealer share new keys.
    ///
    /// # Errors
    ///
    /// [`MufcError::Persistence`](crate::MufcError::Persistence) with
    /// [`PersistError::Corrupt`] for a roster that is empty, out of order
    /// or without a client of the snapshot, or whose groups are not the
    /// saved ones; the errors of [`Federation::from_snapshot`](crate::Federation::from_snapshot).
    pub fn restore(snapshot: PartiesSnapshot) -> MufcResult<Self> {
        let PartiesSnapshot {
            server,
            roster,
            clients,
            requests,
            layout,
        } = snapshot;
        check_roster(&roster, &clients)?;
        let parts = server.restore(clients, BTreeMap::new())?;
        let setup = RemoteSetup::of_roster(parts.setup.config.clone(), parts.setup.dim, roster);
        let setup = with_saved_layout(setup, layout)?;
        Self::resumed(setup, parts, requests, true)
    }

    /// The parties of `setup` resumed from a stored state's `parts`
    /// (checked as they were restored; their groups against the setup's
    /// here), `requests` accepted so far. Without `clients` the parts are
    /// a server's state alone (a deployment's store): the server party,
    /// and no client's.
    pub(crate) fn resumed(
        setup: RemoteSetup,
        mut parts: crate::persist::Restored,
        requests: u64,
        clients: bool,
    ) -> MufcResult<Self> {
        let mut loaded: BTreeMap<ClientId, crate::Client> = (std::mem::take(&mut parts.clients)
            .into_iter())
        .map(|c| (c.id(), c))
        .collect();
        let book = std::mem::take(&mut parts.book);
        let saved = parts.tree.as_ref().map(|t| t.layout());
        if clients {
            check_groups(&setup, saved, &loaded, &book)?;
        }
        let server = match &book.withdrawn {
            Some(w) => {
                RemoteServer::withdrawn_with(setup.clone(), w.clone(), parts.fit_report.clone())?
            }
            None => RemoteServer::resumed(setup.clone(), parts),
        };
        // A server's state alone holds no client party.
        let held = if clients { setup.roster() } else { &[] };
        let mut parties = Vec::with_capacity(held.len());
        for &id in held {
            let client = RemoteClient::from_loaded(id, loaded.remove(&id), setup.clone())?;
            let sent = sent_of(&server, &book, &client);
            // The plain mode sends no change: nothing to resume.
            let client = match setup.config().channel() == &Channel::Plain {
                true => client,
                false => client.with_sent(sent),
            };
            parties.push(super::as_configured(client, setup.config()));
        }
        let dealer = match setup
            .config()
            .channel()
            .as_scma()
            .map(|s| s.masks().masking())
        {
            Some(Masking::Dealer) => Some(pair_with_a_dealer(
                &mut parties,
                setup.config().insecure_deterministic_masks(),
            )?),
            _ => None,
        };
        let waiting = (book.unsent.iter())
            .map(|(&c, u)| {
                let w = Waiting {
                    points: u.points,
                    left: u.left,
                    reseeded: u.reseeded,
                };
                (c, w)
            })
            .collect();
        Ok(Self {
            server,
            clients: parties,
            dealer,
            waiting,
            pending: book.pending,
            additions: book.additions,
            history: book.history,
            training: Vec::new(),
            last: Vec::new(),
            requests,
            withdrawn: book.withdrawn,
            retired: BTreeSet::new(),
            #[cfg(test)]
            injected: super::Injected::default(),
        })
    }

    /// What the aggregate still holds of waiting client `c`: the
    /// histogram of its last committed message.
    fn unsent(&self, c: ClientId, w: &Waiting) -> Option<Unsent> {
        let client = self.client(c).ok()?;
        Some(Unsent {
            sent: client
                .sent()
                .map_or_else(Vec::new, |s| s.histogram().to_vec()),
            points: w.points,
            left: w.left,
            reseeded: w.reseeded,
        })
    }
}

/// What `client` sent in the last sum of its group, as the restored
/// `server` holds it: its histogram then (a waiting client's, as the
/// aggregate holds it), in the group's last committed round; `None` for a
/// client the sum does not hold, or with no round committed.
fn sent_of(server: &RemoteServer, book: &RequestBook, client: &RemoteClient) -> Option<SentRound> {
    let id = client.id();
    let g = (server.groups().iter()).position(|members| members.contains(&id))?;
    if !server.included(g).contains(&id) {
        return None;
    }
    let histogram = match book.unsent.get(&id) {
        Some(u) => u.sent.clone(),
        None => client.histogram().to_vec(),
    };
    Some(SentRound::new(server.committed(g)?, histogram))
}

/// `setup` with the groups a snapshot kept, refused where they are not
/// groups of its roster.
pub(crate) fn with_saved_layout(
    setup: RemoteSetup,
    layout: Option<Layout>,
) -> MufcResult<RemoteSetup> {
    let corrupt = |reason: String| PersistError::Corrupt { reason }.into();
    match layout {
        Some(l) if setup.layout() != Some(&l) => setup
            .with_saved_groups(l)
            .map_err(|e| corrupt(format!("the saved groups: {e}"))),
        None if setup.layout().is_some() => Err(corrupt(
            "the snapshot has no groups where its topology has".into(),
        )),
        _ => Ok(setup),
    }
}

/// Refuses a roster that is empty, out of order, or without a client of
/// the snapshot.
fn check_roster(roster: &[ClientId], clients: &[ClientSnapshot]) -> MufcResult<()> {
    let corrupt = |reason: String| PersistError::Corrupt { reason }.into();
    if roster.is_empty() || roster.windows(2).any(|w| w[0] >= w[1]) {
        return Err(corrupt(format!(
            "the roster {roster:?} is empty or not in strict id order"
        )));
    }
    match clients
        .iter()
        .find(|(c, _, _)| roster.binary_search(c).is_err())
    {
        Some((c, _, _)) => Err(corrupt(format!("client {c} is not in the roster"))),
        None => Ok(()),
    }
}

/// Refuses saved groups other than the roster's, less the clients whose
/// leave a round applied (neither loaded nor waiting).
fn check_groups(
    setup: &RemoteSetup,
    saved: Option<&Layout>,
    loaded: &BTreeMap<ClientId, crate::Client>,
    book: &RequestBook,
) -> MufcResult<()> {
    let gone: Vec<ClientId> = (setup.roster().iter().copied())
        .filter(|c| !loaded.contains_key(c) && !book.unsent.contains_key(c))
        .collect();
    let ours = setup.layout().map(|l| l.without(&gone));
    let same = match (&ours, saved) {
        (Some(a), Some(b)) => a.groups() == b.groups(),
        (None, None) => true,
        // A withdrawn model keeps no groups.
        (Some(_), None) => book.withdrawn.is_some(),
        (None, Some(_)) => false,
    };
    if same {
        return Ok(());
    }
    Err(PersistError::Corrupt {
        reason: format!(
            "the saved groups {:?} are not the roster's {:?}",
            saved.map(Layout::groups),
            ours.as_ref().map(Layout::groups)
        ),
    }
    .into())
}
