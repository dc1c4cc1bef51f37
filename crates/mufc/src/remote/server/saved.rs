//! A server's state as a store keeps it ([`ServerSnapshot`]), taken and
//! taken back.

use std::collections::BTreeMap;

use crate::persist::Restored;
use crate::remote::{RemoteServer, RemoteSetup};
use crate::state::RequestBook;
use crate::state::tree::Tree;
use crate::{ClientId, FitReport, MufcError, MufcResult, ServerSnapshot, StageTimes, Withdrawal};

impl RemoteServer {
    /// The server of a trained federation, resumed from what a store
    /// keeps of it ([`Self::snapshot`]) and the roster it was set up for.
    ///
    /// The snapshot is checked as [`Federation::from_snapshot`](crate::Federation::from_snapshot) checks a
    /// server's part (its counts against its groups' and its round
    /// counter), with no client: the server never holds a client's
    /// points, so its state is a [`ServerSnapshot`] alone.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoClients`](crate::MufcError::NoClients) for an empty roster;
    /// [`MufcError::Remote`](crate::MufcError::Remote) for the snapshot of a federation run in one
    /// process with no aggregate (the plain mode);
    /// the errors of [`Federation::from_snapshot`](crate::Federation::from_snapshot) (among them a
    /// snapshot whose requests wait for clients' points: a server holds
    /// none).
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{RemoteServer, RemoteSetup, Registration};
    /// use mufc::{ClientId, FederationConfig, MufcError};
    ///
    /// let config = FederationConfig::new(2).min_clients(2).validate()?;
    /// let regs: Vec<Registration> = (0..2)
    ///     .map(|i| Registration { id: ClientId(i), points: 10, dim: 2, scale: 1 })
    ///     .collect();
    /// let server = RemoteServer::new(RemoteSetup::new(&config, &regs)?)?;
    /// // Nothing to keep before the first round committed.
    /// assert!(matches!(server.snapshot(), Err(MufcError::NoServerModel)));
    /// # Ok::<(), MufcError>(())
    /// ```
    pub fn from_snapshot(snapshot: ServerSnapshot, roster: Vec<ClientId>) -> MufcResult<Self> {
        if roster.is_empty() {
            return Err(MufcError::NoClients);
        }
        let parts = snapshot.restore(Vec::new(), BTreeMap::new())?;
        let setup = RemoteSetup::of_roster(parts.setup.config.clone(), parts.setup.dim, roster);
        // A withdrawn model stays withdrawn (docs/threat-model.md P4): the
        // server runs no round again.
        if let Some(w) = parts.book.withdrawn {
            return Self::withdrawn_with(setup, w, parts.fit_report);
        }
        // The groups the server held (clients that joined sit in one of
        // the topology's groups), not those the topology gives the roster.
        let layout = parts.tree.as_ref().map(|t| t.layout().clone());
        let setup = crate::remote::in_process::with_saved_layout(setup, layout)?;
        if parts.aggregation.is_none() {
            // Its points are its clients' centroids, which a snapshot
            // rebuilds from the clients (a federation run in one process).
            return Err(MufcError::Remote(
                "the snapshot is of a plain-mode federation, whose model is rebuilt from its \
                 clients: no server's alone"
                    .into(),
            ));
        }
        Ok(Self::resumed(setup, parts))
    }

    /// The server of `setup` resumed from a stored state's parts (checked
    /// as they were restored).
    pub(crate) fn resumed(setup: RemoteSetup, parts: Restored) -> Self {
        Self {
            setup,
            aggregation: parts.aggregation,
            plain_rounds: 0,
            server: parts.server,
            fit_report: Some(parts.fit_report),
            tree: parts.tree,
            training_times: StageTimes::default(),
            withdrawn: None,
        }
    }

    /// The server of `setup` whose model, trained as `fit_report` says,
    /// was withdrawn for `w` (restored: it runs no round again).
    pub(crate) fn withdrawn_with(
        setup: RemoteSetup,
        w: Withdrawal,
        fit_report: FitReport,
    ) -> MufcResult<Self> {
        let mut server = Self::new(setup)?;
        server.withdrawn = Some(w);
        server.fit_report = Some(fit_report);
        Ok(server)
    }

    /// What a store keeps of the server: its configuration, decoded
    /// counts, model, groups and round counter, which
    /// [`Self::from_snapshot`] takes back.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoServerModel`](crate::MufcError::NoServerModel) before the first round committed (with
    /// groups, before every group's).
    pub fn snapshot(&self) -> MufcResult<ServerSnapshot> {
        if let Some(w) = &self.withdrawn {
            // Nothing of an aggregate: the withdrawal and the counter.
            let book = RequestBook {
                withdrawn: Some(w.clone()),
                ..RequestBook::default()
            };
            return self.describe(book);
        }
        let snapshot = self.describe(RequestBook::default())?;
        let fit_report = self.fit_report.clone().ok_or(MufcError::NoServerModel)?;
        Ok(snapshot.carrying(Restored {
            setup: self.setup.parts()?,
            clients: Vec::new(),
            aggregation: self.aggregation.clone(),
            server: self.server.clone(),
            fit_report,
            tree: self.tree.clone(),
            book: RequestBook::default(),
            left: Vec::new(),
        }))
    }

    /// The snapshot of the server's state with the requests' `book` (a
    /// driver's), withdrawn or not, carrying nothing.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoServerModel`](crate::MufcError::NoServerModel) before the model is trained.
    pub(crate) fn describe(&self, book: RequestBook) -> MufcResult<ServerSnapshot> {
        let fit_report = self.fit_report.as_ref().ok_or(MufcError::NoServerModel)?;
        Ok(self.describe_as(book, fit_report))
    }

    /// [`Self::describe`] with the training report `fit_report` (a
    /// driver's, with the other parties' costs).
    /// The report's sketch is the one the server sums with now: clients
    /// that joined since training (issue 29) made it larger.
    pub(crate) fn describe_as(&self, book: RequestBook, fit_report: &FitReport) -> ServerSnapshot {
        let rounds = self.masked_rounds();
        let tree = self.tree.as_ref().map(Tree::saved);
        let shape = (&self.setup.config, self.setup.dim);
        let mut report = fit_report.clone();
        if let Some(a) = &self.aggregation {
            report.sketch = Some(a.info());
        }
        ServerSnapshot::describing(shape, &self.server, &report, (rounds, tree), book)
    }
}
