//! The roster's changes at the server (issue 29): clients admitted to a
//! trained federation (the roster grows, the aggregation is sized for it,
//! its round counter and last sum go on), and clients that left (no later
//! ring needs them).

use std::collections::BTreeSet;

use super::RemoteServer;
use crate::aggregation::Aggregation;
use crate::{ClientId, MufcError, MufcResult};

impl RemoteServer {
    /// Admits the clients `joining` to the trained federation: its setup
    /// takes them ([`RemoteSetup::admitting`](crate::remote::RemoteSetup::admitting)),
    /// its aggregation is sized for the new capacity with the same round
    /// counter and its last sum the model's counts. Its next round that
    /// names them is whole; each member takes the new setup
    /// ([`RemoteClient::adopt`](crate::remote::RemoteClient::adopt)) once
    /// its operator's checks of the new clients pass. Unchanged on an
    /// error.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoServerModel`] before the model is trained or once
    /// it is withdrawn; those of
    /// [`RemoteSetup::admitting`](crate::remote::RemoteSetup::admitting);
    /// the aggregation's.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{InProcess, RemoteServer};
    /// use mufc::{ClientId, FederationConfig};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let data: Vec<(ClientId, Dataset)> = (0..3)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)).map(|d| (ClientId(l as u64), d)))
    ///     .collect::<Result<_, _>>()?;
    /// let parties = InProcess::train(data, &FederationConfig::new(2).seed(5).validate()?)?;
    /// let mut server: RemoteServer = parties.server().clone();
    /// let before = server.setup().capacity();
    /// server.admit(&[ClientId(3)])?;
    /// assert_eq!(server.setup().roster().len(), 4);
    /// assert_eq!(server.setup().capacity(), before + server.setup().config().client_k());
    /// assert!(server.admit(&[ClientId(3)]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn admit(&mut self, joining: &[ClientId]) -> MufcResult<()> {
        self.admit_placed(joining, &BTreeSet::new())
    }

    /// [`Self::admit`], with groups placing each new client in the group
    /// with the fewest clients not in `gone` (those that left or hold no
    /// point): a group of absent clients does not take the new one.
    ///
    /// # Errors
    ///
    /// As [`Self::admit`].
    ///
    /// # Example
    ///
    /// ```
    /// use std::collections::BTreeSet;
    /// use mufc::remote::{InProcess, RemoteServer};
    /// use mufc::{Channel, ClientId, FederationConfig, Masks, SecAggOptions, Topology};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let data: Vec<(ClientId, Dataset)> = (0..4)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)).map(|d| (ClientId(l as u64), d)))
    ///     .collect::<Result<_, _>>()?;
    /// let config = FederationConfig::new(2)
    ///     .seed(5)
    ///     .channel(Channel::scma(Masks::SecAgg(SecAggOptions::new())))
    ///     .min_clients(1)
    ///     .topology(Topology::Groups { size: 2 })
    ///     .validate()?;
    /// let mut server: RemoteServer = InProcess::train(data, &config)?.server().clone();
    /// assert_eq!(server.groups(), [[0, 1].map(ClientId), [2, 3].map(ClientId)]);
    /// // Client 0 left: its group is the smaller one.
    /// server.admit_placed(&[ClientId(4)], &BTreeSet::from([ClientId(0)]))?;
    /// assert_eq!(server.groups()[0], [0, 1, 4].map(ClientId));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn admit_placed(
        &mut self,
        joining: &[ClientId],
        gone: &BTreeSet<ClientId>,
    ) -> MufcResult<()> {
        let (setup, aggregation, fit_report) = self.admitted(joining, gone)?;
        let tree = self.tree_for(&setup, |tree, parts, layout, capacity| {
            tree.admitting(parts, layout, capacity)
        })?;
        self.setup = setup;
        self.aggregation = aggregation;
        self.fit_report = fit_report;
        self.tree = tree;
        Ok(())
    }

    /// The server with the clients `joining` on its roster
    /// ([`RemoteSetup::admitting`](crate::remote::RemoteSetup::admitting)):
    /// its aggregation sized for the new capacity, with the same round
    /// counter (no round's secrets are drawn twice) and its last sum the
    /// model's counts. Its model is unchanged until a round includes the
    /// new clients; that round is whole (no change round runs against a
    /// sum of another capacity), so every member sends its histogram.
    /// `self` is unchanged on an error.
    ///
    /// # Errors
    ///
    /// [`MufcError::NoServerModel`] before the model is trained or once
    /// it is withdrawn; those of
    /// [`RemoteSetup::admitting`](crate::remote::RemoteSetup::admitting);
    /// the aggregation's (the parameters for the new capacity).
    pub(crate) fn admitting(
        &self,
        joining: &[ClientId],
        gone: &BTreeSet<ClientId>,
    ) -> MufcResult<Self> {
        let mut admitted = self.clone();
        admitted.admit_placed(joining, gone)?;
        Ok(admitted)
    }

    /// The parts [`Self::admit`] replaces: the setup with `joining`, the
    /// aggregation sized for it (its round counter and last sum this
    /// one's), and the training report naming the new sketch; built
    /// without changing the server.
    fn admitted(
        &self,
        joining: &[ClientId],
        gone: &BTreeSet<ClientId>,
    ) -> MufcResult<(
        crate::remote::RemoteSetup,
        Option<Aggregation>,
        Option<crate::FitReport>,
    )> {
        if self.fit_report.is_none() || self.withdrawn.is_some() {
            return Err(MufcError::NoServerModel);
        }
        let setup = self.setup.admitting_with(joining, gone)?;
        let aggregation = match &self.aggregation {
            Some(before) => {
                let mut fresh = (setup.aggregation(&setup.parts()?)?).ok_or_else(|| {
                    MufcError::Remote("a masked setup with no aggregation".into())
                })?;
                fresh.continuing(before, self.server.counts());
                Some(fresh)
            }
            None => None,
        };
        let mut fit_report = self.fit_report.clone();
        if let Some(r) = &mut fit_report {
            r.sketch = aggregation.as_ref().map(Aggregation::info);
        }
        Ok((setup, aggregation, fit_report))
    }

    /// Notes that the clients `gone` left the federation after their
    /// whole removal's round committed (their last input in the sum was
    /// empty): no later ring needs to name them, and the server's list of
    /// the clients its model includes loses them. They stay on the roster
    /// (an id names one client for good), and the sketch capacity stays.
    ///
    /// With groups, the leaver stays in its group and its group's model
    /// loses it from the clients it holds. The withdrawal of the model when too few clients remain
    /// (docs/threat-model.md P4) is the driver's to decide before the
    /// leaver's round ([`Self::withdraw_if_too_few`]).
    ///
    /// # Errors
    ///
    /// [`MufcError::NoServerModel`] before the model is trained;
    /// [`MufcError::UnknownClient`] for a client not on the roster.
    ///
    /// # Example
    ///
    /// ```
    /// use mufc::remote::{InProcess, RemoteServer};
    /// use mufc::{ClientId, FederationConfig, RemovalRequest};
    /// use nalgebra::DMatrix;
    /// use seeding::Dataset;
    ///
    /// let data: Vec<(ClientId, Dataset)> = (0..4)
    ///     .map(|l| Dataset::new(DMatrix::from_fn(2, 30, |r, c| ((c * (3 + l) + r * 7) % 17) as f64 / 40.0 - 0.2)).map(|d| (ClientId(l as u64), d)))
    ///     .collect::<Result<_, _>>()?;
    /// let config = FederationConfig::new(2).seed(5).min_updating_clients(1).validate()?;
    /// let mut parties = InProcess::train(data, &config)?;
    /// parties.remove(&RemovalRequest::clients(vec![ClientId(3)]))?;
    /// let mut server: RemoteServer = parties.server().clone();
    /// server.leave(&[ClientId(3)])?;
    /// assert_eq!(server.included(0), [0, 1, 2].map(ClientId));
    /// assert!(server.leave(&[ClientId(9)]).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn leave(&mut self, gone: &[ClientId]) -> MufcResult<()> {
        if let Some(c) = gone.iter().find(|c| !self.setup.roster().contains(c)) {
            return Err(MufcError::UnknownClient(*c));
        }
        let report = self.fit_report.as_mut().ok_or(MufcError::NoServerModel)?;
        report.included.retain(|c| !gone.contains(c));
        if let Some(tree) = &mut self.tree {
            tree.left(gone);
        }
        Ok(())
    }
}
