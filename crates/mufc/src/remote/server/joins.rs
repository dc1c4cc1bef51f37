//! Clients admitted to a trained federation (issue 29): the server's
//! roster grows, its aggregation is sized for it, and its round counter
//! and last sum go on.

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
        *self = self.admitting(joining)?;
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
    pub(crate) fn admitting(&self, joining: &[ClientId]) -> MufcResult<Self> {
        if self.fit_report.is_none() || self.withdrawn.is_some() {
            return Err(MufcError::NoServerModel);
        }
        let setup = self.setup.admitting(joining)?;
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
        Ok(Self {
            setup,
            aggregation,
            fit_report,
            ..self.clone()
        })
    }
}
